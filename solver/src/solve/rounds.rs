//! Propagation in rounds, with the parents' updates bucketed by block of cells.
//!
//! The depth-first propagation of [`Ctx::propagate`](super::Ctx) updates each parent where
//! it lies: once a tier's cells outgrow the caches, every update is a random access into
//! memory. In rounds, what a level's scan decides goes to the frontier bits; a round then
//!
//! 1. *gathers*: takes the frontier in index order (split into pieces over the threads),
//!    unranks each position, and appends each parent's update (its offset in its block
//!    and whether the child is low, one `u32`) to the bucket of the parent's block of
//!    `1 << block_bits` cells: sequential writes;
//! 2. *applies*: hands each block to one thread, which applies every bucket of that block
//!    to cells that stay in its cache, with plain loads and stores (the block is its own).
//!    A parent decided at this level goes to the frontier bits, for the next round.
//!
//! A round stops gathering once its buckets hold [`Rounds::updates`] updates, so their
//! memory is bounded; the rest of the frontier waits for the next round. The level ends
//! with the first round that finds the frontier empty. Updates within a level commute
//! (the scores are game values), so rounds give the same scores as depth-first
//! propagation, whatever the blocks, pieces and caps.

use std::sync::atomic::{AtomicUsize, Ordering};

use oware_db::Position;
use rayon::prelude::*;

use super::cell::{far_exit, Change};
use super::{Ctx, CHUNK};
use crate::granule::{DIRTY, LEVEL_GRANULE};

/// How a level propagates in rounds (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rounds {
    /// Cells per block are `1 << block_bits` (6..=30; outside, clamped): the updates of a
    /// block are applied by one thread, so a block should fit in its cache.
    pub block_bits: u8,
    /// Most parent updates a round buffers before it applies them (4 bytes each): the
    /// rest of the frontier waits for the next round. At least 1 (0 is taken as 1).
    pub updates: usize,
}

impl Default for Rounds {
    fn default() -> Self {
        Rounds {
            block_bits: 18,
            updates: 1 << 24,
        }
    }
}

impl Rounds {
    /// Bytes of the buckets at most, beyond the growth of their vectors: the cap on
    /// updates, plus what the last gathered granule of each piece may add.
    pub fn bucket_bytes(&self) -> u64 {
        (self.updates as u64 + (PIECES_PER_THREAD * 64 * DIRTY * 6) as u64) * 4
    }
}

/// Pieces of the frontier per thread in a round's gathering, for balance.
const PIECES_PER_THREAD: usize = 8;

/// The bit of an update that says the child is low.
const LOW: u32 = 1 << 31;

/// The buckets one piece of the frontier filled: one list of updates per block.
struct Buckets {
    lists: Vec<Vec<u32>>,
}

/// Propagates level `k` in rounds until the frontier is empty. Returns the positions
/// propagated and the rounds made (the last finds nothing).
pub(super) fn propagate_in_rounds(ctx: &Ctx<'_>, k: i8, cfg: Rounds) -> (u64, u64) {
    let bits = u32::from(cfg.block_bits.clamp(6, 30));
    let cap = cfg.updates.max(1);
    let size = ctx.cells.len();
    let blocks = size.div_ceil(1 << bits).max(1);
    // Pieces of whole dirty granules: the frontier bits of `DIRTY` positions per flag.
    let granules = size.div_ceil(DIRTY);
    let pieces = (rayon::current_num_threads() * PIECES_PER_THREAD).min(granules.max(1));
    let per_piece = granules.div_ceil(pieces);
    let mut taken = 0u64;
    let mut rounds = 0u64;
    loop {
        rounds += 1;
        let held = AtomicUsize::new(0);
        let gathered: Vec<(Buckets, u64)> = (0..pieces)
            .into_par_iter()
            .map(|p| {
                let from = (p * per_piece).min(granules);
                let to = ((p + 1) * per_piece).min(granules);
                gather(ctx, from..to, bits, blocks, cap, &held)
            })
            .collect();
        let got: u64 = gathered.iter().map(|(_, t)| t).sum();

        if got == 0 {
            return (taken, rounds);
        }
        taken += got;
        let buckets: Vec<Buckets> = gathered.into_iter().map(|(b, _)| b).collect();
        (0..blocks).into_par_iter().for_each(|b| {
            let base = (b as u64) << bits;
            let len = buckets.iter().map(|bk| bk.lists[b].len()).sum::<usize>();
            let cells = &ctx.cells[base as usize..((base as usize) + (1 << bits)).min(size)];
            if len >= cells.len() / 128 {
                // Dense enough that most of the block's lines are hit: read it in order
                // first, at the memory's streaming speed, rather than miss line by line.
                touch(cells);
            }
            for bucket in &buckets {
                for &u in &bucket.lists[b] {
                    let j = base | u64::from(u & !LOW);
                    if let Some(low) = act_owned(ctx, j, u & LOW != 0, k) {
                        mark_between_phases(ctx, j, low);
                    }
                }
            }
        });
    }
}

/// Takes the frontier of the dirty granules `granules` in index order, until `held` (the
/// updates all pieces buffer) reaches `cap`, and buckets their parents' updates. Returns
/// the buckets and how many positions it took.
fn gather(
    ctx: &Ctx<'_>,
    granules: std::ops::Range<usize>,
    bits: u32,
    blocks: usize,
    cap: usize,
    held: &AtomicUsize,
) -> (Buckets, u64) {
    let mut buckets = Buckets {
        lists: (0..blocks).map(|_| Vec::new()).collect(),
    };
    let mut unranker = ctx.index.unranker();
    let mask = (1u64 << bits) - 1;
    let mut taken = 0u64;
    const WORDS: usize = DIRTY / 64;
    for g in granules {
        if held.load(Ordering::Relaxed) >= cap {
            break;
        }
        // Nothing else marks while a round gathers: the flag and the words are this
        // piece's alone.
        if !ctx.dirty[g].swap(false, Ordering::Relaxed) {
            continue;
        }
        let mut added = 0usize;
        for w in g * WORDS..(g + 1) * WORDS {
            for (words, low) in [(ctx.high, false), (ctx.low, true)] {
                let Some(word) = words.get(w) else { continue };
                if word.load(Ordering::Relaxed) == 0 {
                    continue;
                }
                let mut bits_left = word.swap(0, Ordering::Relaxed);
                while bits_left != 0 {
                    let j = (w as u64) * 64 + u64::from(bits_left.trailing_zeros());
                    bits_left &= bits_left - 1;
                    let p: Position = unranker.unrank(j);
                    let flag = if low { LOW } else { 0 };
                    p.unmoves_reachable(ctx.rules, |parent, _house| {
                        let i = ctx.index.rank_unchecked(&parent);
                        buckets.lists[(i >> bits) as usize].push((i & mask) as u32 | flag);
                        added += 1;
                    });
                    taken += 1;
                }
            }
        }
        held.fetch_add(added, Ordering::Relaxed);
    }
    (buckets, taken)
}

/// Reads every cache line of `cells` in order, so that the block's random updates hit the
/// cache.
#[inline(never)]
fn touch(cells: &[std::sync::atomic::AtomicU8]) {
    let mut x = 0u8;
    for c in cells.iter().step_by(64) {
        x ^= c.load(Ordering::Relaxed);
    }
    std::hint::black_box(x);
}

/// Puts `j` in the frontier (`low` or `high`) and flags its range dirty, while the
/// frontier is only written: the round's gathering, which reads it, starts after the
/// applying ends (rayon's join orders the two).
#[inline(always)]
fn mark_between_phases(ctx: &Ctx<'_>, j: u64, low: bool) {
    let bits = if low { ctx.low } else { ctx.high };
    bits[j as usize / 64].fetch_or(1 << (j % 64), Ordering::Relaxed);
    let dirty = &ctx.dirty[j as usize / DIRTY];
    if !dirty.load(Ordering::Relaxed) {
        dirty.store(true, Ordering::Relaxed);
    }
}

/// [`Ctx::act`](super::Ctx) for a parent whose block only this thread touches: the same
/// change, with a plain load and store.
#[inline(always)]
fn act_owned(ctx: &Ctx<'_>, j: u64, child_low: bool, k: i8) -> Option<bool> {
    let cell = &ctx.cells[j as usize];
    let c = cell.load(Ordering::Relaxed);
    let far = || far_exit(&ctx.far[j as usize / CHUNK], (j as usize % CHUNK) as u16);
    let (new, change) = ctx.codes.child_decided(c, child_low, k, far)?;
    if let Change::Pending { level } = change {
        let levels = &ctx.levels[j as usize / LEVEL_GRANULE];
        let bit = 1u64 << level;
        if levels.load(Ordering::Relaxed) & bit == 0 {
            levels.fetch_or(bit, Ordering::Relaxed);
        }
    }
    cell.store(new, Ordering::Relaxed);
    match change {
        Change::Decided { low } => Some(low),
        _ => None,
    }
}
