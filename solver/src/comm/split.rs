//! The split of a tier over ranks by classes of blocks ([`Split`]): the split that keeps most
//! parents on their child's rank (docs/SCALING.md, *Which split keeps parents at home*).
//!
//! The index orders a tier of `n` seeds by the mover's seeds `m` first: a *block* per `m`.
//! A move that sows no seed onto the other side leaves that side as it was, and that side is
//! the child's mover's: the parent lies in block `m`, the child in block `n − m`. A *class*
//! is the pair of blocks `{k, n − k}` (one block when `k = n − k`). The classes, in the order
//! `k = 0, 1, …, n / 2`, are laid end to end and cut into equal ranges, one per rank; a class
//! cut between ranks gives each rank the same fraction of both its blocks ("prorated"). So a
//! rank holds a few runs of the index (*pieces*), one or two per block it touches, every
//! piece whole blocks of [`PARTITION_ALIGN`] positions (the tables' blocks: each rank encodes
//! its own). A rank keeps its positions in *rank order*: its pieces in index order, end to
//! end.

use std::ops::Range;
use std::sync::Arc;

use oware_db::index::{binomial, IndexKind, TierIndex};

use super::partition::PARTITION_ALIGN;

/// A run of a tier's index held by one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// First index.
    pub first: u64,
    /// Positions.
    pub len: u64,
    /// The rank that holds it.
    pub owner: u32,
    /// Where the piece begins in its owner's rank order.
    pub at: u64,
}

/// The split of one tier over ranks by classes of blocks (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    size: u64,
    ranks: usize,
    /// The pieces in index order.
    pieces: Arc<[Piece]>,
    /// Per rank, the indices into `pieces` of its own, in index order.
    owned: Arc<[Box<[u32]>]>,
    /// Per rank, the positions it holds.
    lens: Arc<[u64]>,
    /// Per rank, where its positions begin in split order; the size last.
    starts: Arc<[u64]>,
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

impl Split {
    /// The split of the tier of `index` over `ranks` ranks.
    ///
    /// # Panics
    /// If `ranks == 0`, or if the index's blocks are not those the split assumes.
    pub fn new(index: &TierIndex, ranks: usize) -> Self {
        assert!(ranks > 0, "at least one rank");
        let n = index.tier();
        let size = index.size();
        let block = block_sizes(n, index.kind());
        assert_eq!(
            block.iter().sum::<u64>(),
            size,
            "tier {n}: blocks and index"
        );
        let mut off = vec![0u64; block.len() + 1];
        for (m, &b) in block.iter().enumerate() {
            off[m + 1] = off[m] + b;
        }
        let nn = usize::from(n);
        // The classes end to end: (first place, positions, blocks).
        let mut classes: Vec<(u64, u64, Vec<usize>)> = Vec::new();
        let mut at = 0u64;
        for k in 0..=nn / 2 {
            let blocks = if nn - k == k {
                vec![k]
            } else {
                vec![k, nn - k]
            };
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
            let k = m.min(nn - m);
            let (first, len, _) = &classes[k];
            let v =
                first + (u128::from(g - off[m]) * u128::from(*len) / u128::from(block[m])) as u64;
            // The last rank whose bound is at or below `v`.
            let r = (1..ranks).take_while(|&r| bound(r) <= v).count();
            r as u32
        };
        let mut pieces: Vec<Piece> = Vec::new();
        for w in cuts.windows(2) {
            let (a, b) = (w[0], w[1]);
            if a == b {
                continue;
            }
            let owner = owner_of(a + (b - a - 1) / 2);
            match pieces.last_mut() {
                Some(last) if last.owner == owner => last.len += b - a,
                _ => pieces.push(Piece {
                    first: a,
                    len: b - a,
                    owner,
                    at: 0,
                }),
            }
        }
        let mut owned: Vec<Vec<u32>> = vec![Vec::new(); ranks];
        let mut lens = vec![0u64; ranks];
        for (i, p) in pieces.iter_mut().enumerate() {
            let r = p.owner as usize;
            p.at = lens[r];
            lens[r] += p.len;
            owned[r].push(i as u32);
        }
        let mut starts = vec![0u64; ranks + 1];
        for r in 0..ranks {
            starts[r + 1] = starts[r] + lens[r];
        }
        Split {
            size,
            ranks,
            starts: starts.into(),
            pieces: pieces.into(),
            owned: owned.into_iter().map(Vec::into_boxed_slice).collect(),
            lens: lens.into(),
        }
    }

    /// The positions of the tier.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// The positions rank `r` holds.
    pub fn len(&self, r: usize) -> u64 {
        self.lens[r]
    }

    /// Whether rank `r` holds no position.
    pub fn is_empty(&self, r: usize) -> bool {
        self.lens[r] == 0
    }

    /// The piece holding index `g` (`g < size`).
    #[inline]
    fn piece(&self, g: u64) -> &Piece {
        let i = self.pieces.partition_point(|p| p.first <= g) - 1;
        &self.pieces[i]
    }

    /// The rank holding index `g` (`g < size`).
    #[inline]
    pub fn owner(&self, g: u64) -> usize {
        self.piece(g).owner as usize
    }

    /// The rank holding index `g` (`g < size`) and where `g` is in its rank order.
    #[inline]
    pub fn locate(&self, g: u64) -> (usize, u64) {
        let p = self.piece(g);
        (p.owner as usize, p.at + (g - p.first))
    }

    /// The index at place `j` of rank `r`'s order (`j < len(r)`).
    #[inline]
    pub fn index_of(&self, r: usize, j: u64) -> u64 {
        let owned = &self.owned[r];
        let i = owned.partition_point(|&i| self.pieces[i as usize].at <= j) - 1;
        let p = &self.pieces[owned[i] as usize];
        p.first + (j - p.at)
    }

    /// Where rank `r`'s positions begin when the ranks' orders are laid end to end (the
    /// tier in *split order*: rank 0's, then rank 1's, …; `r == ranks` gives the size).
    pub fn split_start(&self, r: usize) -> u64 {
        self.starts[r]
    }

    /// The place of index `g` in split order (see [`Split::split_start`]).
    #[inline]
    pub fn order_of(&self, g: u64) -> u64 {
        let (r, j) = self.locate(g);
        self.split_start(r) + j
    }

    /// The index at place `o` of split order, the inverse of [`Split::order_of`].
    #[inline]
    pub fn index_at(&self, o: u64) -> u64 {
        // The last rank beginning at or before `o` (empty ranks begin where the next does).
        let r = self.starts[1..self.ranks].partition_point(|&s| s <= o);
        self.index_of(r, o - self.starts[r])
    }

    /// Rank `r`'s pieces, as runs of the index, in its rank order.
    pub fn runs(&self, r: usize) -> impl Iterator<Item = Range<u64>> + '_ {
        self.owned[r].iter().map(|&i| {
            let p = &self.pieces[i as usize];
            p.first..p.first + p.len
        })
    }

    /// The pieces of the tier, in index order.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_db::{Outcome, Rules};

    /// Every index is held by exactly one rank, once, and its place there leads back to it;
    /// pieces are whole aligned blocks; the ranks hold about equal shares.
    #[test]
    fn a_split_is_a_bijection_of_aligned_pieces() {
        for kind in [IndexKind::Reachable, IndexKind::Dense] {
            for n in [0u8, 1, 2, 5, 9, 12, 13] {
                let index = TierIndex::new(n, kind);
                for ranks in 1..=9 {
                    let split = Split::new(&index, ranks);
                    assert_eq!((0..ranks).map(|r| split.len(r)).sum::<u64>(), index.size());
                    for p in split.pieces() {
                        assert_eq!(p.first % PARTITION_ALIGN, 0);
                        assert!(p.len > 0);
                    }
                    let mut seen = vec![0u64; ranks];
                    for g in 0..index.size() {
                        let (r, j) = split.locate(g);
                        assert_eq!(split.owner(g), r);
                        assert!(j < split.len(r));
                        assert_eq!(split.index_of(r, j), g, "n {n} ranks {ranks} g {g}");
                        let o = split.order_of(g);
                        assert_eq!(o, split.split_start(r) + j);
                        assert_eq!(split.index_at(o), g);
                        seen[r] += 1;
                    }
                    for (r, &seen) in seen.iter().enumerate() {
                        assert_eq!(seen, split.len(r));
                        let runs: u64 = split.runs(r).map(|x| x.end - x.start).sum();
                        assert_eq!(runs, split.len(r));
                        // Each bound moves by at most an aligned block per block cut.
                        let even = index.size() / ranks as u64;
                        let slack = 2 * (u64::from(n) + 2) * PARTITION_ALIGN;
                        assert!(split.len(r) <= even + slack, "n {n} ranks {ranks} r {r}");
                    }
                }
            }
        }
    }

    /// At 2 ranks, few in-tier moves of tier 14 join positions of different ranks (19.1 %;
    /// the index ranges send 87.0 % across), and the ranks hold equal shares within a block.
    #[test]
    fn classes_keep_most_parents_home() {
        let index = TierIndex::new(14, IndexKind::Reachable);
        let split = Split::new(&index, 2);
        let rules: Rules = "abapa".parse().unwrap();
        let (mut moves, mut across) = (0u64, 0u64);
        for (g, p) in index.positions().enumerate() {
            p.for_each_move(&rules, |mv| {
                if let Outcome::Continue { child, captured: 0 } = mv.outcome {
                    moves += 1;
                    let c = index.rank_unchecked(&child);
                    across += u64::from(split.owner(g as u64) != split.owner(c));
                }
            });
        }
        assert!(moves > 0);
        assert!(across * 4 < moves, "{across} of {moves} across ranks");
        assert!(split.len(0).abs_diff(split.len(1)) <= PARTITION_ALIGN);
    }
}
