//! The numbering of the Romein-Bal Awari databases (`scores.N`: one signed byte per position
//! of tier `N`, the byte at offset `g` the score of the position with Goedel number `g`).
//!
//! Their files hold the positions of tier `N` whose opponent side (houses 6..12) has at least
//! one empty house — the same set as this library's reachable index
//! ([`crate::index::IndexKind::Reachable`]) — in increasing lexicographic order of
//! `(h11, h10, ..., h0)`, house 11 most significant. [`RomeinOrder`] ranks, unranks and walks
//! that order; a file of tier `N` is [`RomeinOrder::size`] bytes long, `C(N+11, 11) −
//! C(N+5, 11)`.

use std::sync::OnceLock;

use crate::index::{binomial, TierIndex};
use crate::position::{Position, HOUSES, MAX_SEEDS};

/// The file of tier `n` in a Romein-Bal database: `scores.N`.
pub fn file_name(n: u8) -> String {
    format!("scores.{n}")
}

/// The tier of the Romein-Bal file named `name` (the inverse of [`file_name`]), or `None`
/// for any other name.
pub fn tier_of_file_name(name: &str) -> Option<u8> {
    let n = name.strip_prefix("scores.")?.parse::<u8>().ok()?;
    (n <= MAX_SEEDS && file_name(n) == name).then_some(n)
}

/// The tier the Romein-Bal databases leave out (there is no `scores.47`): no Awari game
/// has 47 seeds on the board, since every capture takes at least 2, and no tier of theirs
/// reads it (the captures from tier 48 reach tiers 30..=46). See
/// [`crate::manifest::absent_tier`].
pub const ABSENT_TIER: u8 = 47;

/// Seeds a digit may hold: 0..=48.
const COUNTS: usize = MAX_SEEDS as usize + 1;

/// The rank's table: at `((k · 2 + zero) · COUNTS + r) · COUNTS + a`, the Goedel numbers
/// that digit `k` holding fewer than `a` seeds skips, with `r` seeds left for digits `k..`
/// and `zero` telling whether an opponent house among the digits before `k` is empty.
fn skipped() -> &'static [u64] {
    static TABLE: OnceLock<Vec<u64>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = vec![0u64; HOUSES * 2 * COUNTS * COUNTS];
        for k in 0..HOUSES {
            for zero in [false, true] {
                for r in 0..COUNTS {
                    let row = ((k * 2 + usize::from(zero)) * COUNTS + r) * COUNTS;
                    let mut sum = 0u64;
                    for a in 0..COUNTS {
                        t[row + a] = sum;
                        if a <= r {
                            sum += completions(k, r - a, zero || (k < 6 && a == 0));
                        }
                    }
                }
            }
        }
        t
    })
}

/// The Romein-Bal order of one tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RomeinOrder {
    n: u8,
}

/// Compositions of `r` seeds into `parts` houses (each 0 or more).
fn compositions(r: usize, parts: usize) -> u64 {
    match parts {
        0 => u64::from(r == 0),
        _ => binomial(r + parts - 1, parts - 1),
    }
}

/// Completions of the houses after digit `k` (digit 0 is house 11, digit 11 house 0) with
/// `r` seeds, where `zero` says whether an opponent house (digits 0..6) among digits 0..=k is
/// already empty: all of them if so, else those leaving one of the remaining opponent houses
/// empty.
fn completions(k: usize, r: usize, zero: bool) -> u64 {
    let after = HOUSES - 1 - k;
    let all = compositions(r, after);
    if zero {
        return all;
    }
    // Opponent houses after digit k: digits k+1..6.
    let m = 5usize.saturating_sub(k);
    if m == 0 {
        return 0;
    }
    let none_empty = if r >= m {
        compositions(r - m, after)
    } else {
        0
    };
    all - none_empty
}

impl RomeinOrder {
    /// The order of tier `n` (0..=48).
    ///
    /// # Panics
    /// If `n > 48`.
    pub fn new(n: u8) -> Self {
        assert!(n <= MAX_SEEDS, "tier {n} is over 48");
        RomeinOrder { n }
    }

    /// The tier.
    pub fn tier(&self) -> u8 {
        self.n
    }

    /// Positions in the order (the size of `scores.N` in bytes): `C(n+11, 11) − C(n+5, 11)`.
    pub fn size(&self) -> u64 {
        let n = usize::from(self.n);
        let none_empty = if n >= 6 { binomial(n + 5, 11) } else { 0 };
        binomial(n + 11, 11) - none_empty
    }

    /// The Goedel number of `p`, or `None` if `p` is not of this tier or has no empty house
    /// among 6..12.
    pub fn rank(&self, p: &Position) -> Option<u64> {
        let h = p.houses();
        if p.seeds() != self.n || h[6..].iter().all(|&c| c > 0) {
            return None;
        }
        Some(Self::rank_houses(&h))
    }

    /// The Goedel number of a position of this tier with an empty house among 6..12 (what
    /// the files hold), by table: twelve look-ups. The result is meaningless for another.
    pub fn rank_unchecked(&self, p: &Position) -> u64 {
        Self::rank_houses(&p.houses())
    }

    fn rank_houses(h: &[u8; HOUSES]) -> u64 {
        let t = skipped();
        let mut g = 0u64;
        let mut rem: usize = h.iter().map(|&c| usize::from(c)).sum();
        let mut zero = false;
        for k in 0..HOUSES {
            let a = usize::from(h[HOUSES - 1 - k]);
            g += t[((k * 2 + usize::from(zero)) * COUNTS + rem) * COUNTS + a];
            rem -= a;
            zero |= k < 6 && a == 0;
        }
        g
    }

    /// The position with Goedel number `g`.
    ///
    /// # Panics
    /// If `g >= self.size()`.
    pub fn unrank(&self, mut g: u64) -> Position {
        assert!(g < self.size(), "{g} is past the end of tier {}", self.n);
        let mut h = [0u8; HOUSES];
        let mut rem = usize::from(self.n);
        let mut zero = false;
        for k in 0..HOUSES {
            let mut v = 0;
            loop {
                let z = zero || (k < 6 && v == 0);
                let c = completions(k, rem - v, z);
                if g < c || v == rem {
                    break;
                }
                g -= c;
                v += 1;
            }
            h[HOUSES - 1 - k] = v as u8;
            rem -= v;
            zero |= k < 6 && v == 0;
        }
        Position::from_houses_unchecked(h)
    }

    /// The positions with Goedel numbers `start..`, in order (until the end of the tier).
    ///
    /// # Panics
    /// If `start > self.size()`.
    pub fn walk(&self, start: u64) -> RomeinWalk {
        assert!(
            start <= self.size(),
            "{start} is past the end of tier {}",
            self.n
        );
        let next = (start < self.size()).then(|| self.unrank(start).packed());
        RomeinWalk { next }
    }
}

/// The positions of a tier in the Romein-Bal order, from [`RomeinOrder::walk`].
///
/// The order of `(h11, ..., h0)` is the numeric order of the packed board (house 0 in the
/// low byte), so the successor is a few operations on it.
#[derive(Clone, Debug)]
pub struct RomeinWalk {
    /// The next position, packed.
    next: Option<u128>,
}

/// The low 6 bytes of a packed board, houses 0..6.
const MOVER_SIDE: u128 = (1 << 48) - 1;

impl RomeinWalk {
    /// The next composition of the same sum in the order, or `None` after the last: the
    /// lowest nonempty house below 11 gives one seed to the house above it and the rest of
    /// its seeds to house 0.
    fn successor(x: u128) -> Option<u128> {
        let h = x.trailing_zeros() / 8;
        if h >= 11 {
            return None;
        }
        let c = (x >> (8 * h)) & 0xff;
        Some(x - (c << (8 * h)) + (1 << (8 * (h + 1))) + (c - 1))
    }

    /// Whether one of houses 6..12 of a packed board is empty.
    fn reachable(x: u128) -> bool {
        (6..12).any(|h| (x >> (8 * h)) & 0xff == 0)
    }
}

impl Iterator for RomeinWalk {
    type Item = Position;

    fn next(&mut self) -> Option<Position> {
        let x = self.next?;
        self.next = Self::after(x);
        Some(Position::from_packed(x))
    }
}

impl RomeinWalk {
    /// The position after `x` (packed) in the order, if any.
    fn after(x: u128) -> Option<u128> {
        // Advance to the next composition with an empty house among 6..12.
        let mut y = x;
        loop {
            let s = Self::successor(y)?;
            if Self::reachable(s) {
                return Some(s);
            }
            // Every composition with these houses 6..12 lacks one: skip to the last of them
            // (all the mover's seeds in house 5), whose successor changes them.
            let mover = s & MOVER_SIDE;
            let seeds: u128 = (0..6).map(|h| (mover >> (8 * h)) & 0xff).sum();
            y = (s & !MOVER_SIDE) | (seeds << 40);
        }
    }
}

/// The mover sides of `m` seeds (packed houses 0..6) in the order of a run of the files
/// (increasing `(h5, ..., h0)`: the numeric order of the packed side).
fn mover_sides(m: u8) -> impl Iterator<Item = u128> {
    let mut next = Some(u128::from(m));
    std::iter::from_fn(move || {
        let a = next?;
        let h = a.trailing_zeros() / 8;
        next = (h < 5).then(|| {
            let c = (a >> (8 * h)) & 0xff;
            a - (c << (8 * h)) + (1 << (8 * (h + 1))) + (c - 1)
        });
        Some(a)
    })
}

/// The `ra` (the index's rank part of the mover side, the same for every tier and kind;
/// [`TierIndex`]) of every mover side of `m` seeds, in the order of a run of the files:
/// built on first use, once per process, and kept (4 bytes per side, [`runs_bytes`]).
fn ra_of_sides(m: u8) -> &'static [u32] {
    static TABLES: [OnceLock<Vec<u32>>; COUNTS] = [const { OnceLock::new() }; COUNTS];
    TABLES[usize::from(m)].get_or_init(|| {
        let index = TierIndex::new(m, crate::index::IndexKind::Reachable);
        mover_sides(m)
            .map(|a| index.rank_parts(a).0 as u32)
            .collect()
    })
}

/// Bytes of the tables a reader of the files of tiers up to `n` builds ([`RomeinRuns`]): 4
/// per mover side of `0..=n` seeds, `4 · C(n+6, 6)`: 1.5 MB at tier 22, 21 MB at tier 36,
/// 103 MB at tier 48.
pub fn runs_bytes(n: u8) -> u64 {
    4 * binomial(usize::from(n) + 6, 6)
}

/// A tier's positions in the Romein-Bal order mapped to the entries of an index of this
/// library, run by run: the files hold, for each opponent side (houses 6..12, a run of the
/// order), every mover side of the remaining seeds in a fixed order, and an index's rank is
/// `base + ra · nb` with `ra` of the mover side and `base`, `nb` of the opponent side
/// ([`TierIndex`]). So each run costs one rank, and each position one look-up of `ra` in a
/// table of every mover side, shared by every tier ([`runs_bytes`]).
#[derive(Clone, Copy, Debug)]
pub struct RomeinRuns {
    order: RomeinOrder,
    index: TierIndex,
}

impl RomeinRuns {
    /// The runs of `order`'s tier, mapped to `index` (of the same tier, and holding every
    /// position of the files: either kind does).
    ///
    /// # Panics
    /// If `index` is of another tier.
    pub fn new(order: RomeinOrder, index: TierIndex) -> Self {
        assert_eq!(order.tier(), index.tier(), "an index of another tier");
        RomeinRuns { order, index }
    }

    /// Calls `f(g, i)` for every Goedel number `g` of `goedel`, in order, with the index
    /// `i` of its position.
    ///
    /// # Panics
    /// If `goedel` ends past the tier.
    pub fn for_each(&self, goedel: std::ops::Range<u64>, mut f: impl FnMut(u64, u64)) {
        if goedel.start >= goedel.end {
            return;
        }
        let n = self.order.tier();
        let mut g = goedel.start;
        let mut x = self.order.unrank(g).packed();
        loop {
            let opponent = x & !MOVER_SIDE;
            let sb: u32 = (6..12).map(|h| ((opponent >> (8 * h)) & 0xff) as u32).sum();
            let m = n - sb as u8;
            // The run's first position: every mover seed in house 0.
            let first = opponent | u128::from(m);
            let start = self.order.rank_unchecked(&Position::from_packed(first));
            let (_, nb, base) = self.index.rank_parts(first);
            let ra = ra_of_sides(m);
            let j0 = (g - start) as usize;
            let j1 = ra.len().min(j0 + (goedel.end - g) as usize);
            for &r in &ra[j0..j1] {
                f(g, base + u64::from(r) * nb);
                g += 1;
            }
            if g >= goedel.end {
                return;
            }
            // The next run begins after this one's last position (every mover seed in
            // house 5).
            let last = opponent | (u128::from(m) << 40);
            x = RomeinWalk::after(last).expect("a run follows while numbers remain");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{IndexKind, TierIndex};

    /// Every position of tier `n` in the Romein-Bal order, by brute force: all placements,
    /// filtered, sorted by (h11, ..., h0).
    fn brute(n: u8) -> Vec<[u8; HOUSES]> {
        let mut out = Vec::new();
        let mut h = [0u8; HOUSES];
        fn place(k: usize, left: u8, h: &mut [u8; HOUSES], out: &mut Vec<[u8; HOUSES]>) {
            if k == HOUSES - 1 {
                h[k] = left;
                if h[6..].contains(&0) {
                    out.push(*h);
                }
                return;
            }
            for v in 0..=left {
                h[k] = v;
                place(k + 1, left - v, h, out);
            }
        }
        place(0, n, &mut h, &mut out);
        out.sort_by_key(|h| {
            let mut key = *h;
            key.reverse();
            key
        });
        out
    }

    #[test]
    fn the_order_is_the_brute_force_order() {
        for n in 0..=9u8 {
            let order = RomeinOrder::new(n);
            let all = brute(n);
            assert_eq!(all.len() as u64, order.size(), "tier {n}");
            assert_eq!(
                order.size(),
                TierIndex::new(n, IndexKind::Reachable).size(),
                "tier {n}"
            );
            let mut used = vec![false; all.len()];
            for (g, h) in all.iter().enumerate() {
                let p = Position::new(*h).unwrap();
                let r = order.rank(&p).unwrap();
                assert_eq!(r, g as u64, "tier {n}: {p}");
                assert!(!used[r as usize]);
                used[r as usize] = true;
                assert_eq!(order.unrank(r), p, "tier {n}");
            }
            assert!(used.iter().all(|&u| u), "tier {n}");
            let walked: Vec<[u8; HOUSES]> = order.walk(0).map(|p| p.houses()).collect();
            assert_eq!(walked, all, "tier {n}");
            // A walk may start anywhere.
            let mid = order.size() / 3;
            assert_eq!(
                order.walk(mid).next().map(|p| p.houses()),
                all.get(mid as usize).copied()
            );
            assert_eq!(order.walk(order.size()).next(), None);
        }
    }

    #[test]
    fn file_names_round_trip() {
        for n in 0..=48 {
            assert_eq!(tier_of_file_name(&file_name(n)), Some(n));
        }
        for bad in [
            "scores.49",
            "scores.07",
            "scores.",
            "scores.7.tmp",
            "score.7",
        ] {
            assert_eq!(tier_of_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_rank_of_large_tiers_inverts_the_unrank() {
        for n in [20u8, 36, 48] {
            let order = RomeinOrder::new(n);
            let size = order.size();
            for k in 0..2000u64 {
                let g = k.wrapping_mul(0x9e37_79b9_7f4a_7c15) % size;
                let p = order.unrank(g);
                assert_eq!(order.rank(&p), Some(g), "tier {n}");
            }
            let last = order.unrank(size - 1);
            assert_eq!(order.rank_unchecked(&last), size - 1);
            assert_eq!(order.walk(size - 1).count(), 1);
            // The walk from anywhere is the unrank of the numbers that follow.
            for k in 0..20u64 {
                let g = k.wrapping_mul(0x2545_f491_4f6c_dd1d) % size;
                for (j, p) in order.walk(g).take(3000).enumerate() {
                    assert_eq!(order.rank(&p), Some(g + j as u64), "tier {n}");
                }
            }
        }
    }

    #[test]
    fn runs_map_every_number_to_the_index_of_its_position() {
        use crate::index::IndexKind;
        for n in [0u8, 1, 5, 9, 14, 20, 36, 48] {
            let order = RomeinOrder::new(n);
            let size = order.size();
            for kind in [IndexKind::Reachable, IndexKind::Dense] {
                let index = TierIndex::new(n, kind);
                let runs = RomeinRuns::new(order, index);
                let mut starts = vec![0, size / 3, size.saturating_sub(5)];
                if n >= 14 {
                    starts.retain(|&s| s > 0);
                }
                if n >= 36 {
                    starts = (1..6).map(|k| k * (size / 7) + 12_345).collect();
                }
                for s in starts {
                    let len = (size - s).min(if n >= 36 { 5_000 } else { 40_000 });
                    let mut expected = order.walk(s).map(|p| index.rank_unchecked(&p));
                    let mut count = 0;
                    runs.for_each(s..s + len, |g, i| {
                        assert_eq!(g, s + count, "tier {n}");
                        assert_eq!(Some(i), expected.next(), "tier {n}, {g}");
                        count += 1;
                    });
                    assert_eq!(count, len, "tier {n}");
                }
            }
        }
    }

    #[test]
    fn positions_outside_the_files_have_no_number() {
        let order = RomeinOrder::new(12);
        let full: Position = "0 0 0 0 0 6 1 1 1 1 1 1".parse().unwrap();
        assert_eq!(order.rank(&full), None);
        let other_tier: Position = "1 0 0 0 0 0 0 0 0 0 0 0".parse().unwrap();
        assert_eq!(order.rank(&other_tier), None);
    }

    #[test]
    fn the_published_example() {
        let order = RomeinOrder::new(16);
        assert_eq!(order.size(), 12_685_179);
        let p: Position = "1 1 1 1 1 2 4 2 3 0 0 0".parse().unwrap();
        assert_eq!(order.rank(&p), Some(588_953));
        assert_eq!(order.unrank(588_953), p);
        assert_eq!(RomeinOrder::new(48).size(), 203_648_015_935);
    }
}
