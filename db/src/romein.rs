//! The numbering of the Romein-Bal Awari databases (`scores.N`: one signed byte per position
//! of tier `N`, the byte at offset `g` the score of the position with Goedel number `g`).
//!
//! Their files hold the positions of tier `N` whose opponent side (houses 6..12) has at least
//! one empty house — the same set as this library's reachable index
//! ([`crate::index::IndexKind::Reachable`]) — in increasing lexicographic order of
//! `(h11, h10, ..., h0)`, house 11 most significant. [`RomeinOrder`] ranks, unranks and walks
//! that order; a file of tier `N` is [`RomeinOrder::size`] bytes long, `C(N+11, 11) −
//! C(N+5, 11)`.

use crate::index::binomial;
use crate::position::{Position, HOUSES, MAX_SEEDS};

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
        let mut g = 0u64;
        let mut rem = usize::from(self.n);
        let mut zero = false;
        for k in 0..HOUSES {
            let a = usize::from(h[HOUSES - 1 - k]);
            for v in 0..a {
                g += completions(k, rem - v, zero || (k < 6 && v == 0));
            }
            rem -= a;
            zero |= k < 6 && a == 0;
        }
        Some(g)
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
        let digits = if start == self.size() {
            None
        } else {
            let h = self.unrank(start).houses();
            let mut d = [0u8; HOUSES];
            for (k, x) in d.iter_mut().enumerate() {
                *x = h[HOUSES - 1 - k];
            }
            Some(d)
        };
        RomeinWalk { digits }
    }
}

/// The positions of a tier in the Romein-Bal order, from [`RomeinOrder::walk`].
#[derive(Clone, Debug)]
pub struct RomeinWalk {
    /// The next position's houses, most significant digit (house 11) first.
    digits: Option<[u8; HOUSES]>,
}

impl RomeinWalk {
    /// The lexicographic successor among the compositions of the same sum, or `None` after
    /// the last.
    fn successor(d: &mut [u8; HOUSES]) -> bool {
        // The last digit holds the rest; the rightmost digit before a nonzero suffix goes up.
        let mut suffix = 0u8;
        for j in (0..HOUSES - 1).rev() {
            suffix += d[j + 1];
            if suffix > 0 {
                d[j] += 1;
                for x in &mut d[j + 1..] {
                    *x = 0;
                }
                d[HOUSES - 1] = suffix - 1;
                return true;
            }
        }
        false
    }
}

impl Iterator for RomeinWalk {
    type Item = Position;

    fn next(&mut self) -> Option<Position> {
        let d = self.digits?;
        let mut h = [0u8; HOUSES];
        for (k, &x) in d.iter().enumerate() {
            h[HOUSES - 1 - k] = x;
        }
        // Advance to the next composition with an empty house among digits 0..6.
        let mut next = d;
        self.digits = loop {
            if !Self::successor(&mut next) {
                break None;
            }
            if next[..6].contains(&0) {
                break Some(next);
            }
        };
        Some(Position::from_houses_unchecked(h))
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
