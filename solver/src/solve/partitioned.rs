//! Solving one tier split over the ranks of a [`Comm`]: rank `r` of `P` owns the places of
//! [`Partition::range`] and runs the one-process solver on them, the
//! updates of other ranks' positions exchanged after each level's local part
//! (`solve/ranks.rs`). Every rank reads the lower tiers itself, whole or its share
//! ([`RankLower`]). The scores are game values, so they are the same as those of the
//! single-process solver whatever the number of ranks and the order of the decisions.
//!
//! All communication happens on the calling (main) thread, between rayon phases.

use oware_db::index::ChildRanker;
use oware_db::Rules;
use rayon::prelude::*;

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use oware_db::retro::ExitMoves;

use super::cell::{Codes, FarExits, NO_EXIT};
use super::first_pass::Initial;
use super::{first_pass_whole, set_level_masks, solve_placed, FarRoom, Tuning, CHUNK};
use crate::comm::exchange::Place;
use crate::comm::{lowest_rank_where, Comm, LocalScores, Partition, PartitionConfig};
use crate::distance::DistanceError;
use crate::error::{AllocError, SolveError};
use crate::lower::lookup::{lookup_pass, Asks, Layout, LookupStats};
use crate::lower::share::LowerShare;
use crate::lower::LowerTiers;
use crate::progress::Progress;

/// Counts and timings of one rank's part of a tier.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PartitionStats {
    /// Positions this rank owns.
    pub positions: u64,
    /// Owned positions decided by finite play.
    pub finite: u64,
    /// Owned positions scored 0 by endless play.
    pub endless: u64,
    /// The waves that found the ends of the levels, and with distances the rounds of
    /// exchanges (the same on every rank).
    pub rounds: u64,
    /// Messages of updates this rank posted, and with distances the all-to-all exchanges.
    pub exchanges: u64,
    /// Updates sent to other ranks.
    pub updates_remote: u64,
    /// Updates received from other ranks and applied here (this rank's own are applied in
    /// place, not counted).
    pub updates_received: u64,
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
    /// Rounds over all levels when the levels were decided in rounds for the distances
    /// (the same on every rank); 0 otherwise.
    pub distance_rounds: u64,
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
    assert!(config.batch > 0, "batch must be positive");
    solve_tier_ranked(comm, rules, n, lower.into(), progress, config, false)
        .map(|r| (r.scores, r.stats))
}

/// What a rank solved of a tier ([`solve_tier_ranked`]).
pub(crate) struct RankSolved {
    /// Its scores.
    pub scores: LocalScores,
    /// The distances of the same positions, one byte each as a distance table stores them,
    /// when asked for; an error on every rank when one rank met a distance too long.
    pub distances: Option<Result<Vec<u8>, DistanceError>>,
    /// Its counts and timings.
    pub stats: PartitionStats,
}

/// This rank's part of tier `n` over the ranks of `comm`
/// ([`solve_tier_local`]): the arrays of its range,
/// the exits from `lower` (whole on every rank, or each rank's share, asked of the others),
/// then the levels, each ended by exchanges; with `distances`, the levels decided in rounds,
/// each ended by exchanges, and the distances of its range kept.
pub(crate) fn solve_tier_ranked(
    comm: &dyn Comm,
    rules: &oware_db::Rules,
    n: u8,
    lower: RankLower<'_>,
    progress: &dyn Progress,
    config: &PartitionConfig,
    distances: bool,
) -> Result<RankSolved, AllocError> {
    let place = Place::rank(comm, n, config.batch);
    assert!(
        place.len as u64 <= 1 << 32,
        "{} positions on one rank",
        place.len
    );
    let tuning = Tuning {
        exact_exits: config.exact_exits,
        distances,
        ..Tuning::default()
    };
    let (start, local) = (place.start, place.len as u64);
    let mut lookups = LookupStats::default();
    let mut far_bytes = 0;
    let solved = solve_placed(rules, n, progress, tuning, &place, |ctx, _| {
        let room = FarRoom::with(n, local, config.far_exit_room);
        let far = match lower {
            RankLower::Whole(lower) => first_pass_whole(ctx, lower, &room, progress),
            RankLower::Shared(share) => {
                let layout = Layout::new(CHUNK, config.batch, comm.size());
                let far = first_cells_shared(
                    comm,
                    rules,
                    &place.part,
                    share,
                    ctx.codes,
                    start,
                    ctx.cells,
                    layout,
                    &room,
                    progress,
                    &mut lookups,
                );
                ctx.cells
                    .par_chunks(CHUNK)
                    .enumerate()
                    .for_each(|(c, chunk)| set_level_masks(ctx, c, chunk));
                // The propagation reads no lower tier: the side copies' pages make room for
                // its frontier and exchanges.
                share.release_pages();
                far
            }
        };
        // Every rank stops the tier once one rank's lists outgrow its room: collectives, the
        // most bytes counted, then the lowest rank that counted them.
        let worst = comm.all_reduce_max(room.outgrown_at());
        let worst_rank = match worst {
            0 => 0,
            _ => lowest_rank_where(comm, room.outgrown_at() == worst).unwrap_or(0),
        };
        room.check_ranks(worst, worst_rank)?;
        far_bytes = room.taken();
        Ok(far)
    });
    let (scores, stats, exchanged) = solved.map_err(|e| match e {
        SolveError::Alloc(a) => a,
        // Neither a lower tier read from the tables nor a scratch file: only allocations fail.
        other => AllocError {
            tier: n,
            what: "tier",
            positions: local,
            bytes: 0,
            cause: std::io::Error::other(other.to_string()),
        },
    })?;
    let stats = PartitionStats {
        positions: local,
        finite: stats.finite,
        endless: stats.endless,
        rounds: exchanged.rounds,
        exchanges: exchanged.exchanges,
        updates_remote: exchanged.updates,
        updates_received: exchanged.received,
        bytes_sent: exchanged.updates * 8,
        far_exits: stats.far_exits,
        far_exit_bytes: far_bytes,
        cell_bytes: crate::memory::tier_memory(local),
        init_seconds: stats.init_seconds,
        propagate_seconds: stats.scan_seconds + stats.sweep_seconds,
        comm_seconds: exchanged.comm_seconds,
        distance_rounds: stats.distance_rounds,
        lookups_remote: lookups.remote,
        lookups_local: lookups.local,
        lookup_bytes_sent: lookups.bytes_sent,
        lookup_exchanges: lookups.exchanges,
        lookup_comm_seconds: lookups.comm_seconds,
    };
    let (scores, distances) = scores.into_parts();
    Ok(RankSolved {
        scores: LocalScores { start, scores },
        distances,
        stats,
    })
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
    Ok(gather_scores(comm, n, &local))
}

/// Gathers the ranks' [`LocalScores`] of tier `n` on rank 0, in index order: `Some` there,
/// `None` elsewhere. A collective: every rank calls it.
///
/// # Panics
/// If the ranks' scores are not their shares of the tier.
pub fn gather_scores(comm: &dyn Comm, n: u8, local: &LocalScores) -> Option<Vec<i8>> {
    let bytes: Vec<u8> = local.scores.iter().map(|&s| s as u8).collect();
    let parts = comm.gather_bytes(&bytes)?;
    Some(in_index_order(n, comm.size(), parts))
}

/// Gathers the ranks' [`LocalScores`] of tier `n` on every rank, in index order. A
/// collective: every rank calls it.
///
/// # Panics
/// As [`gather_scores`].
pub fn all_gather_scores(comm: &dyn Comm, n: u8, local: &LocalScores) -> Vec<i8> {
    let bytes: Vec<u8> = local.scores.iter().map(|&s| s as u8).collect();
    in_index_order(n, comm.size(), comm.all_gather_bytes(&bytes))
}

/// The scores of tier `n` in index order from each of `ranks` ranks' scores in split order.
///
/// # Panics
/// If the parts are not the ranks' shares of the tier.
fn in_index_order(n: u8, ranks: usize, parts: Vec<Vec<u8>>) -> Vec<i8> {
    let part = Partition::of_tier(n, ranks);
    let all: Vec<u8> = parts.concat();
    assert_eq!(all.len() as u64, part.size(), "tier {n}: the ranks' shares");
    let mut out = vec![0u8; all.len()];
    for p in part.pieces() {
        let (first, place, len) = (p.first as usize, p.place as usize, p.len as usize);
        out[first..first + len].copy_from_slice(&all[place..place + len]);
    }
    out.into_iter().map(|b| b as i8).collect()
}

/// What the moves of one chunk of positions found before their captures are answered.
struct ChunkWork {
    inits: Vec<Initial>,
    /// Each capture in order: the position's slot in the chunk, the seeds captured.
    captures: Vec<(u16, i8)>,
}

/// Writes the first cells of the positions at the places `start..start + cells.len()` of
/// the tier split by `part` (this rank's range): a capture whose child this rank owns is read from its share at once,
/// every other one asked of the owner of its child, in the rounds of `lower/lookup.rs`. A
/// collective: every rank calls it. Returns the far exits per `chunk`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn first_cells_shared(
    comm: &dyn Comm,
    rules: &Rules,
    part: &Partition,
    share: &LowerShare,
    codes: Codes,
    start: u64,
    cells: &[AtomicU8],
    layout: Layout,
    room: &FarRoom,
    progress: &dyn Progress,
    stats: &mut LookupStats,
) -> Vec<FarExits> {
    let (me, ranks) = (comm.rank(), comm.size());
    let chunks = cells.len().div_ceil(layout.chunk);
    let far: Vec<std::sync::Mutex<FarExits>> = (0..chunks)
        .map(|_| std::sync::Mutex::new(Box::default()))
        .collect();
    let answered_here = AtomicU64::new(0);
    lookup_pass(
        comm,
        cells.len(),
        layout,
        |range| {
            let first = start + range.start as u64;
            let mut cursor = part.cursor(first..first + range.len() as u64);
            let mut exits = ExitMoves::new(rules);
            let mut ranker = ChildRanker::new(part.index().kind());
            let mut asks = Asks::new(ranks);
            let mut captures = Vec::new();
            let mut local = 0;
            let inits = (0..range.len())
                .map(|slot| {
                    let p = cursor.next().unwrap_or_default();
                    // A capture whose child this rank holds is folded at once; the others
                    // wait for their owners' answers.
                    let mut here = NO_EXIT;
                    let mut init = Initial::of(&p, &mut exits, |child, captured, house| {
                        let (word, owner) = share.request_ranked(child, &mut ranker, house);
                        if owner == me {
                            local += 1;
                            here = here.max(captured - share.answer(word));
                        } else {
                            asks.push(word, owner);
                            captures.push((slot as u16, captured));
                        }
                    });
                    init.exit = init.exit.max(here);
                    init
                })
                .collect();
            answered_here.fetch_add(local, Ordering::Relaxed);
            (ChunkWork { inits, captures }, asks)
        },
        &|w| share.answer(w) as u8,
        |range, work, replies| {
            let mut inits = work.inits;
            for (&(slot, captured), v) in work.captures.iter().zip(replies) {
                let exit = &mut inits[slot as usize].exit;
                *exit = (*exit).max(captured - v as i8);
            }
            let mut list = Vec::new();
            for (slot, (cell, init)) in cells[range.clone()].iter().zip(&inits).enumerate() {
                let (c, low_exit) = codes.initial(init.exit, init.open);
                if let Some(e) = low_exit {
                    list.push((slot as u16, e));
                }
                cell.store(c, Ordering::Relaxed);
            }
            progress.advance(range.len() as u64);
            let c = range.start / layout.chunk;
            // Once the lists outgrow the room they are dropped (the pass goes on: it is a
            // collective), and the caller stops the tier.
            *far[c].lock().unwrap_or_else(|e| e.into_inner()) = room.take(list.into_boxed_slice());
        },
        stats,
    );
    stats.local += answered_here.into_inner();
    far.into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}
