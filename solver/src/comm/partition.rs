//! The split of a tier over the ranks ([`Partition`]), a rank's share of a tier's scores
//! ([`LocalScores`]) and the tuning of the exchanges ([`PartitionConfig`]): the types every
//! part of the distributed backend shares.
//!
//! # The split: classes of blocks
//!
//! The index orders a tier of `n` seeds by the mover's seeds `m` first: a *block* per `m`.
//! A move that sows no seed onto the other side leaves that side as it was, and that side is
//! the child's mover's: the parent lies in block `m`, the child in block `n − m`. Cutting the
//! index into ranges would put most parents on another rank than their child (docs/SCALING.md,
//! *Which split keeps parents at home*). So a *class* is the pair of blocks `{k, n − k}` (one
//! block when `k = n − k`); the classes, in the order `k = 0, 1, …, n / 2`, are laid end to
//! end and cut into equal ranges, one per rank, and a class cut between ranks gives each rank
//! the same fraction of both its blocks ("prorated"). A rank holds a few runs of the index
//! (*pieces*), one or two per block it touches, every piece whole blocks of
//! [`PARTITION_ALIGN`] positions (the tables' blocks: each rank encodes its own).
//!
//! # Places
//!
//! A rank keeps its positions in its pieces' index order, end to end; the ranks' positions
//! laid end to end, rank 0's first, are the tier in *split order*, and a position's *place* is
//! where it stands there ([`Partition::place_of`], [`Partition::index_at`]). Each rank owns a
//! contiguous range of places ([`Partition::range`]): the engines over several ranks index
//! their arrays, route their updates and hold their shares of the lower tiers by place; the
//! tables, the look-ups of a position and the reports speak of indices. One rank's split is
//! the index itself: every place is its index.

use std::ops::Range;
use std::sync::Arc;

use oware_db::index::{binomial, IndexKind, TierIndex, Unranker};
use oware_db::Position;

use super::lookup::RunMap;

/// The entries a [`Partition`] aligns its pieces to: a block of the distance tables
/// ([`WriteOptions::DEFAULT_DISTANCE_BLOCK_ENTRIES`](oware_db::write::WriteOptions::DEFAULT_DISTANCE_BLOCK_ENTRIES)),
/// a whole number of blocks of the score tables
/// ([`WriteOptions::DEFAULT_BLOCK_ENTRIES`](oware_db::write::WriteOptions::DEFAULT_BLOCK_ENTRIES)).
pub const PARTITION_ALIGN: u64 =
    oware_db::write::WriteOptions::DEFAULT_DISTANCE_BLOCK_ENTRIES as u64;

const _: () = assert!(
    PARTITION_ALIGN % oware_db::write::WriteOptions::DEFAULT_BLOCK_ENTRIES as u64 == 0,
    "a rank's pieces are whole blocks of the score tables"
);

/// A run of a tier's index held by one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// First index.
    pub first: u64,
    /// Positions.
    pub len: u64,
    /// The rank that holds it.
    pub owner: u32,
    /// The place of its first position (see the module documentation).
    pub place: u64,
}

/// The split of one tier over the ranks by classes of blocks (see the module documentation).
#[derive(Clone)]
pub struct Partition {
    index: TierIndex,
    size: u64,
    ranks: usize,
    /// The pieces in index order.
    pieces: Arc<[Piece]>,
    /// The pieces' positions in `pieces`, in split order.
    by_place: Arc<[u32]>,
    /// Per rank, where its places begin; the size last.
    starts: Arc<[u64]>,
    /// Index to place: each piece's run of indices shifted to its places.
    to_place: RunMap,
    /// Place to index, its runs those of `by_place`.
    to_index: RunMap,
}

/// Configurations of a side (six houses) holding `seeds` seeds.
fn sides(seeds: u64) -> u64 {
    binomial(seeds as usize + 5, 5)
}

/// The positions of each block of tier `n` in an index of `kind`: the mover's side is any
/// side of `m` seeds, the opponent's any of `n − m`, with an empty house in a reachable
/// index (the side that just moved emptied the house it played).
fn block_sizes(n: u8, kind: IndexKind) -> Vec<u64> {
    let n = u64::from(n);
    (0..=n)
        .map(|m| {
            let opponent = n - m;
            let full = if opponent >= 6 {
                sides(opponent - 6)
            } else {
                0
            };
            let opponents = match kind {
                IndexKind::Reachable => sides(opponent) - full,
                _ => sides(opponent),
            };
            sides(m) * opponents
        })
        .collect()
}

/// The cuts of the split of a tier whose blocks hold `block` positions over `ranks` ranks
/// (every piece boundary, aligned, sorted, the tier's ends included) and each piece's owner.
fn pieces_of(block: &[u64], ranks: usize) -> Vec<(Range<u64>, u32)> {
    let size: u64 = block.iter().sum();
    let mut off = vec![0u64; block.len() + 1];
    for (m, &b) in block.iter().enumerate() {
        off[m + 1] = off[m] + b;
    }
    let n = block.len() - 1;
    // The classes end to end: (first place, positions, blocks).
    let mut classes: Vec<(u64, u64, Vec<usize>)> = Vec::new();
    let mut at = 0u64;
    for k in 0..=n / 2 {
        let blocks = if n - k == k { vec![k] } else { vec![k, n - k] };
        let len: u64 = blocks.iter().map(|&m| block[m]).sum();
        classes.push((at, len, blocks));
        at += len;
    }
    let align = |g: u64| g / PARTITION_ALIGN * PARTITION_ALIGN;
    // The place of rank r's first position in the classes laid end to end.
    let bound = |r: usize| (u128::from(size) * r as u128 / ranks as u128) as u64;
    // Cuts: the tier's ends, every block's start and, for every rank's bound, the same
    // fraction of each block of the class it falls in; all aligned down.
    let mut cuts = vec![0, size];
    cuts.extend(off.iter().map(|&g| align(g)));
    for r in 1..ranks {
        let v = bound(r);
        if let Some((first, len, blocks)) = classes
            .iter()
            .find(|(first, len, _)| *first <= v && v < first + len)
        {
            for &m in blocks {
                let into = u128::from(block[m]) * u128::from(v - first) / u128::from(*len);
                cuts.push(align(off[m] + into as u64));
            }
        }
    }
    cuts.retain(|&g| g <= size);
    cuts.sort_unstable();
    cuts.dedup();
    // The owner of a piece: the rank whose range of places holds its middle position.
    let owner_of = |g: u64| -> u32 {
        let m = off.partition_point(|&o| o <= g) - 1;
        let k = m.min(n - m);
        let (first, len, _) = &classes[k];
        let v = first + (u128::from(g - off[m]) * u128::from(*len) / u128::from(block[m])) as u64;
        // The last rank whose bound is at or below `v`.
        (1..ranks).take_while(|&r| bound(r) <= v).count() as u32
    };
    let mut pieces: Vec<(Range<u64>, u32)> = Vec::new();
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a == b {
            continue;
        }
        let owner = owner_of(a + (b - a - 1) / 2);
        match pieces.last_mut() {
            Some((run, last)) if *last == owner => run.end = b,
            _ => pieces.push((a..b, owner)),
        }
    }
    pieces
}

impl Partition {
    /// The split of the tier of `index` over `ranks` ranks.
    ///
    /// # Panics
    /// If `ranks == 0` or `ranks > 2^32`.
    pub fn new(index: &TierIndex, ranks: usize) -> Self {
        assert!(ranks > 0, "at least one rank");
        assert!(u32::try_from(ranks).is_ok(), "{ranks} ranks");
        let size = index.size();
        let block = block_sizes(index.tier(), index.kind());
        debug_assert_eq!(block.iter().sum::<u64>(), size, "blocks and index");
        let mut lens = vec![0u64; ranks];
        let mut pieces: Vec<Piece> = pieces_of(&block, ranks)
            .into_iter()
            .map(|(run, owner)| {
                let at = lens[owner as usize];
                lens[owner as usize] += run.end - run.start;
                Piece {
                    first: run.start,
                    len: run.end - run.start,
                    owner,
                    place: at,
                }
            })
            .collect();
        let mut starts = vec![0u64; ranks + 1];
        for r in 0..ranks {
            starts[r + 1] = starts[r] + lens[r];
        }
        for p in &mut pieces {
            p.place += starts[p.owner as usize];
        }
        let mut by_place: Vec<u32> = (0..pieces.len() as u32).collect();
        by_place.sort_unstable_by_key(|&i| pieces[i as usize].place);
        let to_place = RunMap::new(
            size,
            pieces
                .iter()
                .map(|p| (p.first, p.place.wrapping_sub(p.first)))
                .collect(),
        );
        let to_index = RunMap::new(
            size,
            by_place
                .iter()
                .map(|&i| &pieces[i as usize])
                .map(|p| (p.place, p.first.wrapping_sub(p.place)))
                .collect(),
        );
        Partition {
            index: *index,
            size,
            ranks,
            pieces: pieces.into(),
            by_place: by_place.into(),
            starts: starts.into(),
            to_place,
            to_index,
        }
    }

    /// The split of tier `n` of the reachable index, the one the solver and the tables use.
    ///
    /// # Panics
    /// As [`Partition::new`], and if `n > 48`.
    pub fn of_tier(n: u8, ranks: usize) -> Self {
        Self::new(&TierIndex::new(n, IndexKind::Reachable), ranks)
    }

    /// The index of the tier split.
    pub fn index(&self) -> &TierIndex {
        &self.index
    }

    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// The positions of the tier.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The first place of rank `r` (`r == ranks` gives the tier's size).
    #[inline]
    pub fn start(&self, r: usize) -> u64 {
        self.starts[r.min(self.ranks)]
    }

    /// The places of rank `r`.
    pub fn range(&self, r: usize) -> Range<u64> {
        self.start(r)..self.start(r + 1)
    }

    /// The rank holding place `o` (`o < size`).
    #[inline]
    pub fn owner(&self, o: u64) -> usize {
        // The last rank beginning at or before `o` (empty ranks begin where the next does).
        self.starts[1..self.ranks].partition_point(|&s| s <= o)
    }

    /// The place of index `g` (`g < size`).
    #[inline]
    pub fn place_of(&self, g: u64) -> u64 {
        self.to_place.map(g)
    }

    /// The index at place `o` (`o < size`), the inverse of [`Partition::place_of`].
    #[inline]
    pub fn index_at(&self, o: u64) -> u64 {
        self.to_index.map(o)
    }

    /// The runs of the index at the places `places`, in split order: a rank's positions in
    /// the order it keeps them are those of `index_runs(range(r))`.
    pub fn index_runs(&self, places: Range<u64>) -> impl Iterator<Item = Range<u64>> + '_ {
        let first = if places.start < self.size {
            self.to_index.run_of(places.start)
        } else {
            self.by_place.len()
        };
        self.by_place[first..]
            .iter()
            .map(|&i| &self.pieces[i as usize])
            .take_while(move |p| p.place < places.end)
            .filter_map(move |p| {
                let (a, b) = (p.place.max(places.start), (p.place + p.len).min(places.end));
                (a < b).then(|| p.first + (a - p.place)..p.first + (b - p.place))
            })
    }

    /// The positions at the places `places`, in split order (as [`TierIndex::cursor`] gives
    /// those of a range of indices).
    ///
    /// # Panics
    /// If `places.end > size`.
    pub fn cursor(&self, places: Range<u64>) -> PlaceCursor {
        assert!(places.end <= self.size, "places {places:?} beyond the tier");
        PlaceCursor {
            unranker: self.index.unranker(),
            runs: self.index_runs(places).collect::<Vec<_>>().into_iter(),
            run: 0..0,
        }
    }

    /// Rank `r`'s share of `whole`, the tier's values in index order: the values of its
    /// places, in split order.
    ///
    /// # Panics
    /// If `whole` is shorter than the tier.
    pub fn share_of<T: Copy>(&self, r: usize, whole: &[T]) -> Vec<T> {
        self.index_runs(self.range(r))
            .flat_map(|run| &whole[run.start as usize..run.end as usize])
            .copied()
            .collect()
    }

    /// The pieces of the tier, in index order.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }
}

/// An iterator over the positions at a range of places: [`Partition::cursor`].
pub struct PlaceCursor {
    unranker: Unranker,
    runs: std::vec::IntoIter<Range<u64>>,
    run: Range<u64>,
}

impl Iterator for PlaceCursor {
    type Item = Position;

    #[inline]
    fn next(&mut self) -> Option<Position> {
        loop {
            if let Some(g) = self.run.next() {
                return Some(self.unranker.unrank(g));
            }
            self.run = self.runs.next()?;
        }
    }
}

impl std::fmt::Debug for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partition")
            .field("tier", &self.index.tier())
            .field("ranks", &self.ranks)
            .field("pieces", &self.pieces)
            .finish()
    }
}

/// Tuning of [`solve_tier_local`](crate::distributed::solve_tier_local) and of the distributed verifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionConfig {
    /// The most updates (8 bytes each) a rank sends in one exchange, over all destinations;
    /// also about the most it receives. Frontier positions are taken `batch / 4` per round.
    pub batch: usize,
    /// As [`Tuning::exact_exits`](crate::tier::Tuning::exact_exits).
    pub exact_exits: u8,
    /// Bytes this rank's far-exit lists may take: once they outgrow it, every rank stops the
    /// tier with an error, as [`Tuning::far_exit_room`](crate::tier::Tuning::far_exit_room) does
    /// for one process. Unlimited by default.
    pub far_exit_room: u64,
}

impl Default for PartitionConfig {
    /// 4 Mi updates (32 MiB) per exchange; as many exits coded in the cells as fit; no
    /// bound on the far-exit lists.
    fn default() -> Self {
        PartitionConfig {
            batch: 1 << 22,
            exact_exits: 48,
            far_exit_room: u64::MAX,
        }
    }
}

/// This rank's scores of a tier: those of the places `start..start + scores.len()` of the
/// tier's [`Partition`], in split order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalScores {
    /// First place owned.
    pub start: u64,
    /// Scores of the owned places, in split order.
    pub scores: Vec<i8>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_db::{Outcome, Rules};

    /// Every index is held by exactly one rank, once, and its place leads back to it; the
    /// ranks' places are contiguous ranges; pieces are whole aligned blocks; the ranks hold
    /// about equal shares; one rank is the identity.
    #[test]
    fn a_split_is_a_bijection_of_aligned_pieces() {
        for kind in [IndexKind::Reachable, IndexKind::Dense] {
            for n in [0u8, 1, 2, 5, 9, 12, 13] {
                let index = TierIndex::new(n, kind);
                for ranks in 1..=9 {
                    let part = Partition::new(&index, ranks);
                    assert_eq!(part.start(0), 0);
                    assert_eq!(part.start(ranks), index.size());
                    for p in part.pieces() {
                        assert_eq!(p.first % PARTITION_ALIGN, 0);
                        assert!(p.len > 0);
                    }
                    let mut seen = vec![0u64; ranks];
                    for g in 0..index.size() {
                        let o = part.place_of(g);
                        let r = part.owner(o);
                        assert!(part.range(r).contains(&o), "n {n} ranks {ranks} g {g}");
                        assert_eq!(part.index_at(o), g, "n {n} ranks {ranks} g {g}");
                        if ranks == 1 {
                            assert_eq!(o, g);
                        }
                        seen[r] += 1;
                    }
                    let mut at = 0;
                    for (r, &seen) in seen.iter().enumerate() {
                        let range = part.range(r);
                        assert_eq!(seen, range.end - range.start);
                        for run in part.index_runs(range.clone()) {
                            for g in run {
                                assert_eq!(part.place_of(g), at);
                                at += 1;
                            }
                        }
                        assert_eq!(at, range.end);
                        // Each bound moves by at most an aligned block per block cut.
                        let even = index.size() / ranks as u64;
                        let slack = 2 * (u64::from(n) + 2) * PARTITION_ALIGN;
                        assert!(seen <= even + slack, "n {n} ranks {ranks} r {r}");
                    }
                    // Runs of any range of places, its ends in pieces' middles.
                    let size = index.size();
                    let (a, b) = (size / 3, size - size / 5);
                    let runs: Vec<u64> = part.index_runs(a..b).flatten().collect();
                    let want: Vec<u64> = (a..b).map(|o| part.index_at(o)).collect();
                    assert_eq!(runs, want, "n {n} ranks {ranks}");
                }
            }
        }
    }

    /// The look-up tables find pieces in a large tier with many ranks.
    #[test]
    fn places_of_a_large_tier() {
        let index = TierIndex::new(40, IndexKind::Reachable);
        for ranks in [1, 2, 7, 144] {
            let part = Partition::new(&index, ranks);
            for p in part.pieces() {
                for g in [p.first, p.first + p.len / 2, p.first + p.len - 1] {
                    let o = part.place_of(g);
                    assert_eq!(o, p.place + (g - p.first));
                    assert_eq!(part.index_at(o), g);
                    assert_eq!(part.owner(o), p.owner as usize);
                }
            }
        }
    }

    /// At 2 ranks, few in-tier moves of tier 14 join positions of different ranks (19.1 %;
    /// the index ranges send 87.0 % across), and the ranks hold equal shares within a block.
    #[test]
    fn classes_keep_most_parents_home() {
        let index = TierIndex::new(14, IndexKind::Reachable);
        let part = Partition::new(&index, 2);
        let rules: Rules = "abapa".parse().unwrap();
        let (mut moves, mut across) = (0u64, 0u64);
        let owner = |g: u64| part.owner(part.place_of(g));
        for (g, p) in index.positions().enumerate() {
            p.for_each_move(&rules, |mv| {
                if let Outcome::Continue { child, captured: 0 } = mv.outcome {
                    moves += 1;
                    let c = index.rank_unchecked(&child);
                    across += u64::from(owner(g as u64) != owner(c));
                }
            });
        }
        assert!(moves > 0);
        assert!(across * 4 < moves, "{across} of {moves} across ranks");
        let lens = [part.range(0), part.range(1)].map(|r| r.end - r.start);
        assert!(lens[0].abs_diff(lens[1]) <= PARTITION_ALIGN);
    }
}
