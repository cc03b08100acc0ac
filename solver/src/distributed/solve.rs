//! Solving one tier split by index range over the ranks of a [`Comm`].
//!
//! Rank `r` of `P` owns the indices `⌊size·r/P⌋ .. ⌊size·(r+1)/P⌋` of the tier
//! ([`Partition`]): their one-byte cells (as in the single-process solver, `cell.rs`),
//! their frontier bits and, at the end, their scores, which the cells become in place.
//! Every rank reads the lower tiers itself (they come from the shared directory), so
//! initialisation — exits and open counts — needs no communication at all.
//!
//! Propagation follows the levels of docs/DESIGN.md (`k = n, n−1, …, 1`). A level starts
//! with a local scan; then it runs in *rounds* until no rank has a frontier left:
//!
//! 1. each rank takes up to a bounded number of positions from its frontier and generates
//!    their parents through un-moves, as updates `(parent index, child is low)`, bucketed by
//!    the parent's owner;
//! 2. the buckets are exchanged all-to-all, in as many sub-rounds as the largest bucket
//!    needs so that no rank sends more than [`PartitionConfig::batch`] updates per sub-round
//!    (this bounds the receive buffers and keeps MPI's 32-bit counts far from overflow);
//! 3. each rank applies the updates it received to its own positions (rayon, with a
//!    compare-and-swap per cell), which may put new positions in its frontier;
//! 4. termination detection rides on the one reduction of each round (the maximum of the
//!    sub-rounds needed, at least one while a rank's frontier is not empty): when it is zero,
//!    no rank has work and no update is in flight, since every update sent in a round is
//!    applied in that round, and the level ends.
//!
//! Whatever is undecided after level 1 scores 0. The scores are game values, so they are the
//! same as those of the single-process solver whatever the number of ranks and the order of
//! the decisions.
//!
//! All communication happens on the calling (main) thread, between rayon phases.

use crate::solve::cell::{far_exit, Change, Codes, FarExits};
use crate::solve::first_pass::first_cells;
use crate::solve::FarRoom;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

use bitvec::prelude::*;
use oware_db::index::{IndexKind, TierIndex};
use oware_db::{Position, Rules};
use rayon::prelude::*;

use super::arrays::agree_arrays;
use super::comm::Comm;
use super::lookup::{first_cells_shared, Layout, LookupStats};
use super::partition::{LocalScores, Partition, PartitionConfig};
use super::share::LowerShare;
use crate::error::{try_vec, AllocError, IntoIo};
use crate::lower::LowerTiers;
use crate::memory::rank_bytes;
use crate::progress::{Phase, Progress};

/// Positions per rayon work item in the scans (a multiple of 64: whole frontier words; at
/// most 2^16, the offsets of the lists of low exits).
const CHUNK: usize = 1 << 14;
/// Frontier positions per rayon work item when generating parents.
const GEN_CHUNK: usize = 2048;
/// Updates per rayon work item when applying.
const APPLY_CHUNK: usize = 1 << 14;

/// Counts and timings of one rank's part of a tier.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PartitionStats {
    /// Positions this rank owns.
    pub positions: u64,
    /// Owned positions decided by finite play.
    pub finite: u64,
    /// Owned positions scored 0 by endless play.
    pub endless: u64,
    /// Propagation rounds with an exchange (the same on every rank).
    pub rounds: u64,
    /// All-to-all exchanges (the same on every rank).
    pub exchanges: u64,
    /// Updates sent to other ranks.
    pub updates_remote: u64,
    /// Updates this rank sent to itself.
    pub updates_local: u64,
    /// Bytes sent to other ranks in exchanges of updates (8 per update).
    pub bytes_sent: u64,
    /// Owned positions whose exit was too low for a code of its own in their cell, kept in
    /// the lists looked up when their open count reaches 0 (see
    /// [`PartitionConfig::exact_exits`]).
    pub far_exits: u64,
    /// Bytes those lists take, counted as the solver counts them against
    /// [`PartitionConfig::far_exit_room`] (a pointer per chunk and the allocator's share).
    pub far_exit_bytes: u64,
    /// Bytes of this rank's cells and frontier bits.
    pub cell_bytes: u64,
    /// Seconds computing exits and open counts.
    pub init_seconds: f64,
    /// Seconds of propagation (levels), communication included.
    pub propagate_seconds: f64,
    /// Seconds inside collective calls during propagation (transfer and waiting).
    pub comm_seconds: f64,
    /// Capture look-ups sent to other ranks (partitioned lower tiers only).
    pub lookups_remote: u64,
    /// Capture look-ups this rank answered for itself (partitioned lower tiers only).
    pub lookups_local: u64,
    /// Bytes sent to other ranks for capture look-ups: 8 per look-up, 1 per answer.
    pub lookup_bytes_sent: u64,
    /// All-to-all exchanges of look-ups and answers (the same on every rank).
    pub lookup_exchanges: u64,
    /// Seconds inside collective calls during the look-ups (part of `init_seconds`).
    pub lookup_comm_seconds: f64,
}

/// The lower tiers a rank reads the captures of its positions from.
#[derive(Clone, Copy)]
pub enum RankLower<'a> {
    /// Every rank holds every lower tier a capture reaches: no look-up is exchanged.
    Whole(&'a LowerTiers),
    /// Each rank holds its share ([`LowerShare`]): captures are asked of their owners.
    Shared(&'a LowerShare),
}

impl<'a> From<&'a LowerTiers> for RankLower<'a> {
    fn from(lower: &'a LowerTiers) -> Self {
        RankLower::Whole(lower)
    }
}

impl<'a> From<&'a LowerShare> for RankLower<'a> {
    fn from(share: &'a LowerShare) -> Self {
        RankLower::Shared(share)
    }
}

struct Ctx<'a> {
    rules: &'a Rules,
    index: TierIndex,
    part: Partition,
    start: u64,
    codes: Codes,
    cells: Vec<AtomicU8>,
    /// The exits too low for a cell code, per `CHUNK` owned positions.
    far: Vec<FarExits>,
    /// One bit per owned position: decided at this level, its parents not yet updated.
    /// Marked through the bit vector, taken a word at a time through its raw words.
    frontier: BitVec<AtomicU64, Lsb0>,
}

impl Ctx<'_> {
    #[inline]
    fn mark(&self, j: usize) {
        self.frontier.set_aliased(j, true);
    }

    /// Level start: decides high the undecided owned positions whose exit is `k` and low
    /// the pending ones scoring `−k`, and puts them in the frontier. Returns how many were
    /// marked.
    fn level_start(&self, k: i8) -> u64 {
        self.cells
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                let mut marked = 0;
                for (i, cell) in chunk.iter().enumerate() {
                    if let Some(v) = self.codes.starts_at(cell.load(Ordering::Relaxed), k) {
                        cell.store(Codes::decided(v), Ordering::Relaxed);
                        self.mark(c * CHUNK + i);
                        marked += 1;
                    }
                }
                marked
            })
            .sum()
    }

    /// Takes up to about `max` positions (whole frontier words) from the frontier, scanning
    /// from word `*cursor` on and wrapping around; `pending` is the number of marked bits.
    fn take(&self, cursor: &mut usize, pending: u64, max: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let frontier = self.frontier.as_raw_slice();
        let words = frontier.len();
        let mut left = pending;
        while left > 0 && out.len() < max {
            let w = *cursor;
            *cursor = if w + 1 == words { 0 } else { w + 1 };
            if frontier[w].load(Ordering::Relaxed) == 0 {
                continue;
            }
            let mut bits = frontier[w].swap(0, Ordering::Relaxed);
            left = left.saturating_sub(u64::from(bits.count_ones()));
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                // Local ranges of one rank fit u32: they are at most 2^32 positions.
                out.push((w * 64 + b) as u32);
            }
        }
        out
    }

    /// The parents of the taken positions as encoded updates `(index << 1) | child_low`,
    /// bucketed by owner.
    fn parents(&self, taken: &[u32], ranks: usize) -> Vec<Vec<u64>> {
        let parts: Vec<Vec<Vec<u64>>> = taken
            .par_chunks(GEN_CHUNK)
            .map(|chunk| {
                let mut buckets = vec![Vec::new(); ranks];
                for &j in chunk {
                    // A frontier position is decided: its cell is its score.
                    let low = u64::from((self.cells[j as usize].load(Ordering::Relaxed) as i8) < 0);
                    let c = self.index.unrank(self.start + u64::from(j));
                    c.unmoves_reachable(self.rules, |p: Position, _| {
                        let g = self.index.rank_unchecked(&p);
                        buckets[self.part.owner(g)].push(g << 1 | low);
                    });
                }
                buckets
            })
            .collect();
        let mut out: Vec<Vec<u64>> = (0..ranks)
            .map(|d| Vec::with_capacity(parts.iter().map(|b| b[d].len()).sum()))
            .collect();
        for buckets in parts {
            for (d, b) in buckets.into_iter().enumerate() {
                out[d].extend(b);
            }
        }
        out
    }

    /// Applies received updates of level `k`; returns how many positions were put in the
    /// frontier.
    fn apply(&self, updates: &[u64], k: i8) -> u64 {
        updates
            .par_chunks(APPLY_CHUNK)
            .map(|chunk| {
                let mut marked = 0;
                for &u in chunk {
                    let j = ((u >> 1) - self.start) as usize;
                    if self.act(j, u & 1 == 1, k) {
                        marked += 1;
                    }
                }
                marked
            })
            .sum()
    }

    /// A child decided at level `k` (low if `child_low`, else high) acts on the owned
    /// parent `j`. Returns whether `j` entered the frontier.
    #[inline]
    fn act(&self, j: usize, child_low: bool, k: i8) -> bool {
        let cell = &self.cells[j];
        let mut c = cell.load(Ordering::Relaxed);
        loop {
            let far = || far_exit(&self.far[j / CHUNK], (j % CHUNK) as u16);
            let Some((new, change)) = self.codes.child_decided(c, child_low, k, far) else {
                return false;
            };
            match cell.compare_exchange_weak(c, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => {
                    let frontier = matches!(change, Change::Decided { .. });
                    if frontier {
                        self.mark(j);
                    }
                    return frontier;
                }
                Err(x) => c = x,
            }
        }
    }
}

/// Solves this rank's part of tier `n` (see the module documentation). Every rank of
/// `comm` must call it with the same arguments; `lower` must hold every tier that a capture
/// of tier `n` reaches: whole on every rank, or each rank its share.
/// `progress` receives this rank's counts. Runs rayon phases on the current thread pool and
/// every collective on the calling thread.
///
/// # Errors
/// [`AllocError`] if this rank's cells or frontier cannot be allocated, and on every other
/// rank then, naming that rank (the ranks agree on it before their first exchange).
///
/// # Panics
/// If `lower` lacks a tier that a capture reaches, if `n > 48`, if a rank would own more
/// than 2^32 positions, or if `config.batch == 0`.
pub fn solve_tier_local<'a>(
    comm: &dyn Comm,
    rules: &Rules,
    n: u8,
    lower: impl Into<RankLower<'a>>,
    progress: &dyn Progress,
    config: &PartitionConfig,
) -> Result<(LocalScores, PartitionStats), AllocError> {
    let lower = lower.into();
    assert!(config.batch > 0, "batch must be positive");
    let ranks = comm.size();
    let me = comm.rank();
    let index = TierIndex::new(n, IndexKind::Reachable);
    let part = Partition::new(index.size(), ranks);
    let range = part.range(me);
    let local = (range.end - range.start) as usize;
    assert!(local as u64 <= 1 << 32, "{local} positions on one rank");
    let positions = local as u64;
    let words = local.div_ceil(64);
    let arrays = try_vec(local, |_| AtomicU8::new(0))
        .map_err(|e| AllocError::new::<AtomicU8>(n, "cells", positions, local, e.into_io()))
        .and_then(|cells| {
            let frontier = try_vec(words, |_| AtomicU64::new(0)).map_err(|e| {
                AllocError::new::<AtomicU64>(n, "frontier", positions, words, e.into_io())
            })?;
            Ok((cells, frontier))
        });
    let (cells, frontier) = agree_arrays(
        comm,
        arrays,
        n,
        "cells and frontier",
        positions,
        rank_bytes(positions),
    )?;
    let mut frontier = BitVec::from_vec(frontier);
    frontier.truncate(local);
    let mut ctx = Ctx {
        rules,
        index,
        part,
        start: range.start,
        codes: Codes::new(n, config.exact_exits),
        cells,
        far: Vec::new(),
        frontier,
    };
    let mut stats = PartitionStats {
        positions: local as u64,
        cell_bytes: rank_bytes(local as u64),
        ..PartitionStats::default()
    };

    let t = Instant::now();
    progress.start(Phase::Init, local as u64);
    let room = FarRoom::with(n, positions, config.far_exit_room);
    ctx.far = match lower {
        RankLower::Whole(lower) => ctx
            .cells
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                if room.outgrown() {
                    return FarExits::default();
                }
                let start = ctx.start + (c * CHUNK) as u64;
                let far = first_cells(rules, &ctx.index, lower, ctx.codes, start, chunk);
                progress.advance(chunk.len() as u64);
                room.take(far)
            })
            .collect(),
        RankLower::Shared(share) => {
            let layout = Layout::new(CHUNK, config.batch, ranks);
            let mut lookups = LookupStats::default();
            let far = first_cells_shared(
                comm,
                rules,
                &ctx.index,
                share,
                ctx.codes,
                ctx.start,
                &ctx.cells,
                layout,
                &room,
                progress,
                &mut lookups,
            );
            stats.lookups_remote = lookups.remote;
            stats.lookups_local = lookups.local;
            stats.lookup_bytes_sent = lookups.bytes_sent;
            stats.lookup_exchanges = lookups.exchanges;
            stats.lookup_comm_seconds = lookups.comm_seconds;
            far
        }
    };
    // Every rank stops the tier once one rank's lists outgrow its room: collectives, the
    // most bytes counted, then the lowest rank that counted them.
    let worst = comm.all_reduce_max(room.outgrown_at());
    let worst_rank = match worst {
        0 => 0,
        _ => super::comm::lowest_rank_where(comm, room.outgrown_at() == worst).unwrap_or(0),
    };
    room.check_ranks(worst, worst_rank)?;
    stats.far_exits = ctx.far.iter().map(|f| f.len() as u64).sum();
    stats.far_exit_bytes = room.taken();
    stats.init_seconds = t.elapsed().as_secs_f64();

    let t = Instant::now();
    progress.start(Phase::Propagate, local as u64);
    let take_max = (config.batch / 4).max(1);
    let per_dest = (config.batch / ranks).max(1);
    for k in (1..=n as i8).rev() {
        let mut pending = ctx.level_start(k);
        let mut cursor = 0usize;
        loop {
            let taken = ctx.take(&mut cursor, pending, take_max);
            pending -= taken.len() as u64;
            progress.advance(taken.len() as u64);
            let buckets = ctx.parents(&taken, ranks);
            drop(taken);
            for (d, b) in buckets.iter().enumerate() {
                if d == me {
                    stats.updates_local += b.len() as u64;
                } else {
                    stats.updates_remote += b.len() as u64;
                }
            }
            // One reduction per round: the sub-rounds the largest bucket needs, at least one
            // while any rank still has a frontier. Zero everywhere means that no rank has
            // work left and no update is in flight: the level is done.
            let longest = buckets.iter().map(Vec::len).max().unwrap_or(0);
            let need = (longest.div_ceil(per_dest) as u64).max(u64::from(pending > 0));
            let tc = Instant::now();
            let subrounds = comm.all_reduce_max(need);
            stats.comm_seconds += tc.elapsed().as_secs_f64();
            if subrounds == 0 {
                break;
            }
            stats.rounds += 1;
            let mut buckets = buckets;
            for s in 0..subrounds as usize {
                let out: Vec<Vec<u64>> = if subrounds == 1 {
                    std::mem::take(&mut buckets)
                } else {
                    buckets
                        .iter()
                        .map(|b| {
                            let lo = (s * per_dest).min(b.len());
                            let hi = (lo + per_dest).min(b.len());
                            b[lo..hi].to_vec()
                        })
                        .collect()
                };
                stats.bytes_sent += out
                    .iter()
                    .enumerate()
                    .filter(|&(d, _)| d != me)
                    .map(|(_, b)| b.len() as u64 * 8)
                    .sum::<u64>();
                let tc = Instant::now();
                let got = comm.exchange(out);
                stats.comm_seconds += tc.elapsed().as_secs_f64();
                stats.exchanges += 1;
                for g in &got {
                    pending += ctx.apply(g, k);
                }
            }
        }
    }
    stats.propagate_seconds = t.elapsed().as_secs_f64();

    // Undecided positions score 0; the cells become the scores in place.
    let codes = ctx.codes;
    stats.endless = ctx
        .cells
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut endless = 0u64;
            for cell in chunk {
                let c = cell.load(Ordering::Relaxed);
                endless += u64::from(codes.is_open(c));
                cell.store(codes.finished(c) as u8, Ordering::Relaxed);
            }
            endless
        })
        .sum();
    // The same size and alignment: the collection reuses the cells' allocation.
    let scores: Vec<i8> = std::mem::take(&mut ctx.cells)
        .into_iter()
        .map(|c| c.into_inner() as i8)
        .collect();
    stats.finite = local as u64 - stats.endless;
    Ok((
        LocalScores {
            start: range.start,
            scores,
        },
        stats,
    ))
}

/// Solves tier `n` over the ranks of `comm` with the default [`PartitionConfig`] and
/// gathers the whole tier's scores on rank 0: `Some(scores)` there (in index order, the
/// same bytes as the single-process solver), `None` on the other ranks. Every rank must call
/// it with the same arguments.
///
/// # Errors
/// As [`solve_tier_local`].
///
/// # Panics
/// As [`solve_tier_local`].
pub fn solve_tier_partitioned<'a>(
    comm: &dyn Comm,
    rules: &Rules,
    n: u8,
    lower: impl Into<RankLower<'a>>,
    progress: &dyn Progress,
) -> Result<Option<Vec<i8>>, AllocError> {
    let (local, _) =
        solve_tier_local(comm, rules, n, lower, progress, &PartitionConfig::default())?;
    Ok(gather_scores(comm, &local))
}

/// Gathers the ranks' [`LocalScores`] of one tier on rank 0, in index order: `Some` there,
/// `None` elsewhere. A collective: every rank calls it.
pub fn gather_scores(comm: &dyn Comm, local: &LocalScores) -> Option<Vec<i8>> {
    let bytes: Vec<u8> = local.scores.iter().map(|&s| s as u8).collect();
    let parts = comm.gather_bytes(&bytes)?;
    Some(parts.into_iter().flatten().map(|b| b as i8).collect())
}

/// Gathers the ranks' [`LocalScores`] of one tier on every rank, in index order. A
/// collective: every rank calls it.
pub fn all_gather_scores(comm: &dyn Comm, local: &LocalScores) -> Vec<i8> {
    let bytes: Vec<u8> = local.scores.iter().map(|&s| s as u8).collect();
    comm.all_gather_bytes(&bytes)
        .into_iter()
        .flatten()
        .map(|b| b as i8)
        .collect()
}
