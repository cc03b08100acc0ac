//! Exact retrograde analysis of one tier.
//!
//! The algorithm is that of docs/DESIGN.md: every position starts from its *exit* (the best value
//! over moves that leave the tier: captures into lower tiers and ends of the game) and its
//! *open* count (legal moves that stay in the tier). Scores are then decided level by level,
//! `k = n, n−1, …, 1`: at level `k` the positions scoring exactly `+k` ("high") and `−k`
//! ("low") are decided and propagated to their parents through un-moves:
//!
//! - a low child (`−k`) makes every undecided parent high (`+k`);
//! - a high child (`+k`) lowers the open count of every undecided parent; when it reaches 0,
//!   all in-tier children score at least `k`, so the parent scores `max(exit, −k)`: low now if
//!   that is `−k`, otherwise `exit`, which acts later, at level `|exit|`. A parent whose
//!   exit is positive keeps no count: the count could only make it `+exit`, which the scan
//!   of that level decides anyway.
//!
//! Whatever is undecided after level 1 scores 0 (endless play).
//!
//! # Propagation
//!
//! Each level starts with a scan of the cells (skipping the granules of
//! `LEVEL_GRANULE` positions whose level mask lacks `k`) that decides the undecided positions
//! of exit `k` and releases the pending ones of score `−k`. Every position decided at the
//! level goes on the scanning task's *work stack* together with its `Position`, and is
//! propagated depth first from there: the parents' updates are buffered in batches and
//! prefetched, and a parent decided at this level is pushed with the position the un-move
//! produced, so nothing is unranked again. A task's stack is bounded and so is the work it
//! takes on ([`Tuning`]); what exceeds them is marked in the frontier bits, which
//! parallel sweeps then take, so one long cascade cannot leave the other threads idle.
//!
//! # Memory
//!
//! One byte per position, its *cell* (`cell.rs`: the score once decided; while undecided,
//! the exit and open count in one code, with the rare exits too low for a code of their own
//! in a short list per chunk), plus two frontier bits per position (decided high, decided
//! low): 1.25 bytes per position, plus a dirty flag per `DIRTY` and a level mask per
//! `LEVEL_GRANULE` positions, and the far exits' lists, which stop the tier with an error
//! rather than outgrow the room the memory plan leaves them ([`Tuning::far_exit_room`]). The frontier bits are only written when the stacks overflow,
//! so most of their pages are never touched. A decided cell is its score, so the cells
//! become the table in place. [`tier_memory`](crate::memory::tier_memory) adds these up.
//!
//! # Parallelism
//!
//! Initialisation, level scans and frontier sweeps are split by index ranges over rayon's
//! threads; propagation runs inside the scans and sweeps, on the same threads. A decision is
//! a compare-and-swap on the cell, so exactly one thread propagates each decided
//! position; the scores are game values, so they do not depend on the order of decisions or on
//! the number of threads.

use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

use bitvec::prelude::*;
use oware_db::index::{IndexKind, TierIndex};
use oware_db::retro::Unranker;
use oware_db::{Position, Rules};
use rayon::prelude::*;

use crate::comm::{exchange, Partition};
use crate::distance::DistanceError;
use crate::error::{AllocError, IntoIo, SolveError};
use crate::granule::{DIRTY, LEVEL_GRANULE};
use crate::hugepage::try_vec;
use crate::lower::slice::{cut_slices, Loaded, ScoreSource, Slice, SLICE_ALIGN};
use crate::lower::LowerTiers;
use crate::prefetch::prefetch;
use crate::progress::{Phase, Progress};
use buffer::AtomicBuf;
use cell::{far_exit, Change, Codes, FarExits};
use first_pass::{first_cells, fold_cells, Sweep};
use scan::scan_chunk;

pub(crate) mod buffer;
pub(crate) mod cell;
pub(crate) mod first_pass;
pub(crate) mod partitioned;
pub(crate) mod ranks;
pub(crate) mod rounds;
pub(crate) mod scan;
pub(crate) mod spill;

pub use spill::{Spill, SpilledDistances, WINDOW_ALIGN};

/// Positions handled per parallel work item in the sequential phases; one far-exit list
/// each.
pub(crate) const CHUNK: usize = 1 << 14;

/// Counts gathered while solving a tier.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolveStats {
    /// Positions of the tier.
    pub positions: u64,
    /// Positions decided by finite play (any score, 0 included).
    pub finite: u64,
    /// Positions scored 0 because neither side can force a nonzero result (endless play).
    pub endless: u64,
    /// Frontier sweeps made over all levels (the last of each level finds nothing).
    pub sweeps: u64,
    /// Positions whose exit was too low for a code of its own in their cell, kept in the
    /// lists looked up when their open count reaches 0 (see [`Tuning::exact_exits`]).
    pub far_exits: u64,
    /// Bytes those lists take, with a pointer per `CHUNK` positions and the allocator's
    /// share (see [`Tuning::far_exit_room`]).
    pub far_exit_bytes: u64,
    /// Sweeps over the tier that computed the exits: 1 when the lower tiers are held whole,
    /// one per slice when they are read in slices ([`solve_tier_sliced`]).
    pub exit_sweeps: u64,
    /// Scores in the largest slice of the lower tiers held at once (bytes of the slice
    /// buffer); 0 when they are held whole.
    pub slice_bytes: u64,
    /// Seconds spent reading the slices (part of `init_seconds`).
    pub load_seconds: f64,
    /// Seconds spent computing exits and open counts (reading the slices included).
    pub init_seconds: f64,
    /// Seconds spent in the scans that start each level and the propagation they start.
    pub scan_seconds: f64,
    /// Seconds spent in frontier sweeps (the propagation left over by the scans), or, with
    /// distances, in the rounds.
    pub sweep_seconds: f64,
    /// Rounds over all levels, when the levels were decided in rounds for the distances
    /// ([`Tuning::distances`]); 0 otherwise.
    pub distance_rounds: u64,
    /// Runs of the propagation that decided the distances: one, or one per window when
    /// they were kept out of core ([`Tuning::spill`]); 0 without distances.
    pub distance_runs: u64,
    /// Why the distances were not decided with the scores, where the caller that asked for
    /// them found no room for them (set by the caller; the solver leaves it `None`).
    pub distances_skipped: Option<String>,
}

/// The solved scores of a tier: one `i8` per index of [`TierIndex`] (reachable kind).
pub struct TierScores {
    // The cells, each turned into its score.
    cells: AtomicBuf<AtomicU8>,
    // The distances, when asked for ([`Tuning::distances`]).
    distances: Option<TierDistances>,
    tier: u8,
}

/// What the rounds of a solve found of the distances to conversion.
enum TierDistances {
    /// One byte per position, as a distance table stores them.
    Found(AtomicBuf<AtomicU8>),
    /// Kept out of core, one scratch file per window ([`Tuning::spill`]).
    Spilled(SpilledDistances),
    /// Some distance exceeds what a byte holds.
    TooFar,
}

impl TierScores {
    /// The scores, in index order.
    pub fn as_slice(&self) -> &[i8] {
        let bytes = &self.cells.as_bytes()[..self.cells.len()];
        // SAFETY: `i8` and `u8` have the same size and alignment and every byte is a valid
        // `i8`; the slice borrows `self`.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<i8>(), bytes.len()) }
    }

    /// The scores as an owned vector, the cells' pages released as they are copied (so the
    /// peak is the scores and one piece of 2 MiB).
    pub fn into_vec(self) -> Vec<i8> {
        let bytes = self.cells.into_bytes();
        let mut bytes = std::mem::ManuallyDrop::new(bytes);
        // SAFETY: `u8` and `i8` have the same size and alignment; the vector's buffer is
        // handed over whole (pointer, length, capacity) and the original never dropped.
        unsafe {
            Vec::from_raw_parts(
                bytes.as_mut_ptr().cast::<i8>(),
                bytes.len(),
                bytes.capacity(),
            )
        }
    }

    /// The scores as [`TierScores::into_vec`] gives them, and the distances, as
    /// [`TierScores::distances`] does but owned (the pages of each released as they are
    /// copied), when they were held in memory.
    pub(crate) fn into_parts(self) -> (Vec<i8>, Option<Result<Vec<u8>, DistanceError>>) {
        let tier = self.tier;
        let distances = match self.distances {
            None | Some(TierDistances::Spilled(_)) => None,
            Some(TierDistances::Found(d)) => Some(Ok(d.into_bytes())),
            Some(TierDistances::TooFar) => Some(Err(DistanceError::TooFar {
                tier,
                max: crate::tier::MAX_DISTANCE,
            })),
        };
        let scores = TierScores {
            cells: self.cells,
            distances: None,
            tier,
        };
        (scores.into_vec(), distances)
    }

    /// The scores as an owned vector (one copy).
    pub fn to_vec(&self) -> Vec<i8> {
        self.as_slice().to_vec()
    }

    /// The distances to conversion of the tier's positions, one byte each as a distance
    /// table stores them ([`NO_DISTANCE`](crate::tier::NO_DISTANCE) where the score is 0), when
    /// the solve computed them ([`Tuning::distances`]).
    ///
    /// # Errors
    /// [`DistanceError::TooFar`](crate::tier::DistanceError::TooFar) when a distance exceeds
    /// [`MAX_DISTANCE`](crate::tier::MAX_DISTANCE); `Ok(None)` when none were asked for, or they
    /// were kept out of core ([`TierScores::spilled`]).
    pub fn distances(&self) -> Result<Option<&[u8]>, crate::tier::DistanceError> {
        match &self.distances {
            None | Some(TierDistances::Spilled(_)) => Ok(None),
            Some(TierDistances::Found(d)) => Ok(Some(d.as_bytes().get(..d.len()).unwrap_or(&[]))),
            Some(TierDistances::TooFar) => Err(crate::tier::DistanceError::TooFar {
                tier: self.tier,
                max: crate::tier::MAX_DISTANCE,
            }),
        }
    }

    /// The distances kept out of core, one scratch file per window, when the solve was
    /// given a [`Tuning::spill`] smaller than the tier (`None` otherwise).
    pub fn spilled(&self) -> Option<&SpilledDistances> {
        match &self.distances {
            Some(TierDistances::Spilled(s)) => Some(s),
            _ => None,
        }
    }
}

pub(crate) struct Ctx<'a> {
    rules: &'a Rules,
    n: u8,
    pub(crate) index: TierIndex,
    pub(crate) codes: Codes,
    pub(crate) cells: &'a [AtomicU8],
    /// The exits too low for a cell code, per `CHUNK` positions.
    far: &'a [FarExits],
    /// Frontier bits of the positions decided `+k` (`high`) and `−k` (`low`) at the current
    /// level and not yet propagated: the sign is known without reading the cell. Bitsets in
    /// `Lsb0` order (bit `j % 64` of word `j / 64`), marked through bitvec and drained a word
    /// at a time.
    high: &'a [AtomicU64],
    low: &'a [AtomicU64],
    /// One flag per `DIRTY` positions: set when a frontier bit among them may have been
    /// set since they were last swept, so sweeps skip the clean ones.
    dirty: &'a [AtomicBool],
    /// One mask per `LEVEL_GRANULE` positions: bit `k` is set when they may hold an
    /// undecided position with exit `k` or a decided one of score `±k` that has not yet
    /// acted, so the scan that starts level `k` skips the granules without it.
    levels: &'a [AtomicU64],
    tuning: Tuning<'a>,
    /// The first place of the tier the arrays hold: 0 in one process; over several ranks,
    /// the first this rank owns (`ranks.rs`). The arrays are indexed from it.
    start: u64,
    /// The tier's split over the ranks: over several ranks the arrays, the updates and the
    /// frontier are by place; in one process every place is its index.
    part: &'a Partition,
    /// Over several ranks, where the updates of other ranks' positions go (`ranks.rs`).
    ranked: Option<&'a exchange::Outbox>,
    /// Set when a position is marked in the frontier bits, cleared when a sweep starts: a
    /// sweep is made only when there may be something to take.
    marked: AtomicBool,
}

impl Ctx<'_> {
    /// Hands the updates `work` queued for other ranks to the outbox (nothing in one
    /// process).
    #[inline]
    fn hand_over(&self, work: &mut Work) {
        if let Some(outbox) = self.ranked {
            outbox.take_in(&mut work.outbox);
        }
    }

    /// Puts `j` in the frontier (`low` or `high`) and flags its range dirty.
    ///
    /// Sequentially consistent, with the sweep's swap of the flag and read of the word: if
    /// the flag is seen already set here, the sweep that clears it reads the word after this
    /// bit was set; otherwise the flag is set again. Either way no bit is left behind. The
    /// bit is set through bitvec, whose writes are relaxed, hence the fences: the one before
    /// makes the cell's decision visible to the sweep that takes the bit, the one after
    /// orders the bit before the read of the flag.
    #[inline]
    fn mark(&self, j: u64, low: bool) {
        let bits = if low { self.low } else { self.high };
        fence(Ordering::SeqCst);
        bits.view_bits::<Lsb0>().set_aliased(j as usize, true);
        fence(Ordering::SeqCst);
        let dirty = &self.dirty[j as usize / DIRTY];
        if !dirty.load(Ordering::SeqCst) {
            dirty.store(true, Ordering::SeqCst);
        }
        if !self.marked.load(Ordering::Relaxed) {
            self.marked.store(true, Ordering::Relaxed);
        }
    }

    /// Collects the parents of the decided position `c` (low if `low`, else high) into
    /// `out`, each as its place, with bit `CHILD_LOW` set if the child is low, and its
    /// position, prefetching their cells.
    ///
    /// `R`: over several ranks (a parent may be another rank's: its cell is not fetched);
    /// `false` for one process, whose places are indices and whose loops then do nothing
    /// for ranks.
    #[inline]
    fn parents<const R: bool>(&self, c: &Position, low: bool, out: &mut Vec<(u64, Position)>) {
        // Most parents keep `c`'s side to move as their opponent's side: the opponent's half
        // of their ranks is worked out once.
        let half = self.index.opponent_half(&c.flipped());
        c.unmoves_reachable_by_side(self.rules, |p, _house, same| {
            let g = if same {
                self.index.rank_beside(&p, &half)
            } else {
                self.index.rank_unchecked(&p)
            };
            let g = if R { self.part.place_of(g) } else { g };
            let j = if R { g.wrapping_sub(self.start) } else { g };
            if let Some(cell) = self.cells.get(j as usize) {
                prefetch(cell);
            }
            out.push((g | u64::from(low) << CHILD_LOW, p));
        });
    }

    /// Propagates the positions of the work stack at level `k` and, depth first, the
    /// positions their propagation decides, until the stack is empty. Once the task's budget is
    /// spent, the rest go to the frontier bits for the next sweep, so that one task does not
    /// keep a long cascade to itself while other threads are idle. Returns how many it
    /// propagated.
    ///
    /// `work.buf` (empty on entry and on return) holds the parent updates of a batch of
    /// positions, applied after all their cells were prefetched. `R`: over several ranks
    /// (see [`Ctx::parents`]).
    fn propagate<const R: bool>(&self, k: i8, work: &mut Work) -> u64 {
        let Work {
            stack,
            buf,
            budget,
            outbox,
            ..
        } = work;
        let mut taken = 0u64;
        while !stack.is_empty() {
            if *budget == 0 || self.outbox_full::<R>() {
                for &(j, _) in stack.iter() {
                    self.mark(j & !(1 << CHILD_LOW), j >> CHILD_LOW != 0);
                }
                stack.clear();
                break;
            }
            while buf.len() < BATCH && *budget > 0 {
                let Some((j, p)) = stack.pop() else { break };
                let low = j >> CHILD_LOW != 0;
                debug_assert_eq!(
                    self.cells[(j & !(1 << CHILD_LOW)) as usize].load(Ordering::Relaxed),
                    Codes::decided(if low { -k } else { k })
                );
                self.parents::<R>(&p, low, buf);
                taken += 1;
                *budget -= 1;
            }
            for &(update, p) in buf.iter() {
                if let Some((j, low)) = self.apply::<R>(update, k, outbox) {
                    self.push(stack, j, low, p);
                }
            }
            buf.clear();
        }
        taken
    }

    /// Hands over the position of index `j`, decided at level `k` (low or high), that a scan
    /// or a sweep found: onto the work stack, propagated every `START_BATCH` positions, or into
    /// the frontier bits once the task's budget is spent. Returns how many positions it
    /// propagated. `R`: over several ranks (see [`Ctx::parents`]).
    #[inline]
    fn take<const R: bool>(&self, k: i8, j: u64, low: bool, work: &mut Work) -> u64 {
        if work.budget == 0 || self.outbox_full::<R>() {
            self.mark(j, low);
            return 0;
        }
        let p = work.unranker.unrank(self.index_of::<R>(j));
        self.push(&mut work.stack, j, low, p);
        if work.stack.len() >= START_BATCH {
            self.propagate::<R>(k, work)
        } else {
            0
        }
    }

    /// The index of the position the arrays hold at `j`. `R`: over several ranks (see
    /// [`Ctx::parents`]).
    #[inline(always)]
    fn index_of<const R: bool>(&self, j: u64) -> u64 {
        if R {
            self.part.index_at(self.start + j)
        } else {
            j
        }
    }

    /// Puts the position `p` of index `j`, just decided at this level (low or high), on the
    /// work stack, or in the frontier bits when the stack is full.
    #[inline(always)]
    fn push(&self, stack: &mut Vec<Decided>, j: u64, low: bool, p: Position) {
        if stack.len() < self.tuning.stack {
            stack.push((j | u64::from(low) << CHILD_LOW, p));
        } else {
            self.mark(j, low);
        }
    }

    /// Applies a buffered parent update (see `Ctx::parents`) at level `k`: returns
    /// `Some(low)` when it decided the parent at this level, to be propagated.
    #[inline(always)]
    fn act_on(&self, update: u64, k: i8) -> Option<bool> {
        self.act(update & !(1 << CHILD_LOW), update >> CHILD_LOW != 0, k)
    }

    /// [`Ctx::act_on`] for an update whose parent may be another rank's: applied in place
    /// when this rank holds it, returning its index in the arrays and whether it was decided
    /// low; otherwise queued in `outbox` for its owner (`ranks.rs`).
    #[inline(always)]
    fn apply<const R: bool>(
        &self,
        update: u64,
        k: i8,
        outbox: &mut exchange::Queued,
    ) -> Option<(u64, bool)> {
        if !R {
            return self
                .act_on(update, k)
                .map(|low| (update & !(1 << CHILD_LOW), low));
        }
        let g = update & !(1 << CHILD_LOW);
        let j = g.wrapping_sub(self.start);
        let child_low = update >> CHILD_LOW != 0;
        if j >= self.cells.len() as u64 {
            if let Some(ranked) = self.ranked {
                ranked.send(outbox, g, child_low);
            }
            return None;
        }
        self.act(j, child_low, k).map(|low| (j, low))
    }

    /// Whether the updates queued for other ranks fill their room: the propagation then
    /// leaves the rest to the frontier bits until they are exchanged. Never in one process
    /// (`R` false).
    #[inline(always)]
    fn outbox_full<const R: bool>(&self) -> bool {
        R && self.ranked.is_some_and(exchange::Outbox::full)
    }

    /// Applies the decision of a child at level `k` (low or high) to parent `j`. Returns
    /// `Some(low)` when this decided the parent `−k` (low) or `+k` (high): the caller
    /// propagates it (exactly one caller wins each decision).
    #[inline(always)]
    fn act(&self, j: u64, child_low: bool, k: i8) -> Option<bool> {
        let cell = &self.cells[j as usize];
        let mut c = cell.load(Ordering::Relaxed);
        loop {
            let far = || far_exit(&self.far[j as usize / CHUNK], (j as usize % CHUNK) as u16);
            let (new, change) = self.codes.child_decided(c, child_low, k, far)?;
            if let Change::Pending { level } = change {
                let levels = &self.levels[j as usize / LEVEL_GRANULE];
                let bit = 1u64 << level;
                if levels.load(Ordering::Relaxed) & bit == 0 {
                    levels.fetch_or(bit, Ordering::Relaxed);
                }
            }
            match cell.compare_exchange_weak(c, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => {
                    return match change {
                        Change::Decided { low } => Some(low),
                        _ => None,
                    }
                }
                Err(x) => c = x,
            }
        }
    }
}

/// The arrays of a tier of `size` positions: cells, frontier bits, dirty flags, level masks.
struct Arrays {
    cells: AtomicBuf<AtomicU8>,
    high: AtomicBuf<AtomicU64>,
    low: AtomicBuf<AtomicU64>,
    dirty: Vec<AtomicBool>,
    levels: Vec<AtomicU64>,
}

impl Arrays {
    /// Bytes of the arrays of `size` positions (as [`tier_memory`](crate::memory::tier_memory)
    /// counts them).
    fn bytes(size: usize) -> u64 {
        let size = size as u64;
        size + 2 * size.div_ceil(64) * 8
            + size.div_ceil(DIRTY as u64)
            + size.div_ceil(LEVEL_GRANULE as u64) * 8
    }

    /// Allocates every array of tier `n` with `size` positions.
    ///
    /// # Errors
    /// [`AllocError`] naming the first array that cannot be allocated.
    fn new(n: u8, size: usize) -> Result<Self, AllocError> {
        let positions = size as u64;
        let words = size.div_ceil(64);
        let err = |what, len, e| AllocError::new::<AtomicU64>(n, what, positions, len, e);
        let cells = AtomicBuf::<AtomicU8>::zeroed(size)
            .map_err(|e| AllocError::new::<AtomicU8>(n, "cells", positions, size, e))?;
        let high = AtomicBuf::<AtomicU64>::zeroed(words).map_err(|e| err("frontier", words, e))?;
        let low = AtomicBuf::<AtomicU64>::zeroed(words).map_err(|e| err("frontier", words, e))?;
        let flags = size.div_ceil(DIRTY);
        let dirty = try_vec(flags, |_| AtomicBool::new(false)).map_err(|e| {
            AllocError::new::<AtomicBool>(n, "dirty flags", positions, flags, e.into_io())
        })?;
        let masks = size.div_ceil(LEVEL_GRANULE);
        let levels = try_vec(masks, |_| AtomicU64::new(0))
            .map_err(|e| err("level masks", masks, e.into_io()))?;
        Ok(Arrays {
            cells,
            high,
            low,
            dirty,
            levels,
        })
    }
}

/// Solves tier `n` under `rules`, reading captures from `lower` (which must hold every
/// tier below `n`). Runs on the current rayon thread pool.
///
/// # Errors
/// [`AllocError`] if the tier's cells, frontier or flags cannot be allocated.
///
/// # Panics
/// If `lower` lacks a tier below `n` that a capture reaches, or if `n > 48`.
pub fn solve_tier(
    rules: &Rules,
    n: u8,
    lower: &LowerTiers,
    progress: &dyn Progress,
) -> Result<(TierScores, SolveStats), SolveError> {
    solve_tier_tuned(rules, n, lower, progress, Tuning::default())
}

/// Limits of the propagation's work stacks (see the module docs): the defaults are what
/// [`solve_tier`] uses. They change the speed, never the scores; tests shrink them so that
/// most of the propagation overflows into frontier sweeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning<'a> {
    /// Most positions a task's work stack holds; further decisions go to the frontier bits.
    /// At least 1 (0 is taken as 1). With [`Tuning::distances`], 32 times this many
    /// positions are carried with their boards from one round to the next, the others
    /// marked in the frontier bits.
    pub stack: usize,
    /// Positions a task propagates before it leaves the rest to the frontier bits. At least 1
    /// (0 is taken as 1).
    pub budget: u64,
    /// Exits down to minus this have a code of their own in a position's one-byte cell
    /// (fewer where the tier leaves no room); lower ones are kept in a list and looked up.
    /// The default, 48, codes as many as fit.
    pub exact_exits: u8,
    /// Most bytes the lists of those lower exits may take (counted as
    /// [`SolveStats::far_exit_bytes`]): a tier whose lists outgrow them stops with an
    /// [`AllocError`] rather than exceed the memory plan
    /// ([`TierPlan::far_exit_room`](crate::memory::TierPlan::far_exit_room)). The default
    /// is unlimited.
    pub far_exit_room: u64,
    /// Decide each level in rounds, breadth first, and keep the round that decides each
    /// position as its distance to conversion ([`TierScores::distances`]): one more byte
    /// per position during the propagation (`solve/rounds.rs`). The scores are the same.
    pub distances: bool,
    /// Release the pages of the memory-mapped lower tiers once the exits are computed,
    /// before the distances' bytes are allocated, when the memory plan has no room for both
    /// ([`solve_tier_tuned`] only).
    pub release_lower: bool,
    /// With [`Tuning::distances`], keep them out of core when the tier has more positions
    /// than [`Spill::window`]: the propagation is run once per window of that many indices
    /// from the state the exits left (kept in a scratch file), and each window's distances
    /// go to a scratch file ([`TierScores::spilled`]). `None` (the default): in memory.
    pub spill: Option<Spill<'a>>,
}

impl Default for Tuning<'_> {
    fn default() -> Self {
        Tuning {
            stack: 1 << 13,
            budget: 1 << 15,
            exact_exits: 48,
            far_exit_room: u64::MAX,
            distances: false,
            release_lower: false,
            spill: None,
        }
    }
}

/// [`solve_tier`] with the given [`Tuning`].
///
/// # Errors
/// As [`solve_tier`]; [`SolveError::Alloc`] for the far-exit lists when they outgrow
/// [`Tuning::far_exit_room`]; [`SolveError::Scratch`] when a scratch file of
/// [`Tuning::spill`] cannot be written or read.
///
/// # Panics
/// As [`solve_tier`].
pub fn solve_tier_tuned(
    rules: &Rules,
    n: u8,
    lower: &LowerTiers,
    progress: &dyn Progress,
    tuning: Tuning<'_>,
) -> Result<(TierScores, SolveStats), SolveError> {
    solve_with(rules, n, progress, tuning, |ctx, _| {
        let room = FarRoom::new(ctx);
        let far = first_pass_whole(ctx, lower, &room, progress);
        room.check()?;
        if tuning.release_lower {
            lower.release_pages();
        }
        Ok::<_, SolveError>(far)
    })
}

/// The first pass over the positions the arrays of `ctx` hold, from the lower tiers held
/// whole in `lower`: each chunk's cells, level masks and far exits, counted against `room`
/// (no chunk is started once it is outgrown). One process's tier, or one rank's range.
pub(crate) fn first_pass_whole(
    ctx: &Ctx<'_>,
    lower: &LowerTiers,
    room: &FarRoom,
    progress: &dyn Progress,
) -> Vec<FarExits> {
    ctx.cells
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            if room.outgrown() {
                return FarExits::default();
            }
            let at = ctx.start + (c * CHUNK) as u64;
            let positions = ctx.part.cursor(at..at + chunk.len() as u64);
            let far = first_cells(ctx.rules, &ctx.index, lower, ctx.codes, positions, chunk);
            set_level_masks(ctx, c, chunk);
            progress.advance(chunk.len() as u64);
            room.take(far)
        })
        .collect()
}

/// The bytes the far-exit lists of a tier take, counted as each chunk's list is made,
/// against [`Tuning::far_exit_room`]. Once they outgrow it, no list is kept and no chunk is
/// started: the tier is abandoned.
pub(crate) struct FarRoom {
    n: u8,
    positions: u64,
    room: u64,
    taken: AtomicU64,
    /// The bytes counted when the lists first outgrew the room; 0 while they fit.
    outgrown_at: AtomicU64,
}

impl FarRoom {
    /// Nothing taken yet of the room `ctx`'s tuning leaves.
    fn new(ctx: &Ctx<'_>) -> Self {
        Self::with(ctx.n, ctx.cells.len() as u64, ctx.tuning.far_exit_room)
    }

    /// Nothing taken yet of `room` bytes, for the lists of `positions` positions of tier `n`
    /// (a whole tier, or one rank's share of it).
    pub(crate) fn with(n: u8, positions: u64, room: u64) -> Self {
        FarRoom {
            n,
            positions,
            room,
            taken: AtomicU64::new(0),
            outgrown_at: AtomicU64::new(0),
        }
    }

    /// Counts the list `far` of one chunk: returns it while the lists fit in the room, an
    /// empty one (dropping it) once they do not.
    pub(crate) fn take(&self, far: FarExits) -> FarExits {
        let bytes = cell::far_list_bytes(far.len());
        let taken = self.taken.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if taken <= self.room {
            return far;
        }
        let _ = self
            .outgrown_at
            .compare_exchange(0, taken, Ordering::Relaxed, Ordering::Relaxed);
        FarExits::default()
    }

    /// Whether the lists have outgrown the room.
    pub(crate) fn outgrown(&self) -> bool {
        self.outgrown_at.load(Ordering::Relaxed) != 0
    }

    /// The bytes of every list counted so far.
    pub(crate) fn taken(&self) -> u64 {
        self.taken.load(Ordering::Relaxed)
    }

    /// The bytes counted when the lists first outgrew the room; 0 while they fit.
    pub(crate) fn outgrown_at(&self) -> u64 {
        self.outgrown_at.load(Ordering::Relaxed)
    }

    /// # Errors
    /// [`AllocError`] for the far-exit lists when they outgrew the room.
    pub(crate) fn check(&self) -> Result<(), AllocError> {
        match self.outgrown_at() {
            0 => Ok(()),
            taken => Err(self.error(
                taken,
                format!(
                    "more than the {} bytes the memory plan leaves them, and not all listed yet",
                    self.room
                ),
            )),
        }
    }

    /// Over several ranks, once the caller's reductions have given `worst`, the most bytes
    /// counted when a rank's lists outgrew its room (0 when none did), and `worst_rank`, the
    /// lowest rank that counted them: [`FarRoom::check`] on this rank, and where this rank's
    /// lists fit but another's did not, the error that stops this rank with it, naming that
    /// rank ([`AllocError::failed_rank`]).
    ///
    /// # Errors
    /// [`AllocError`] for the far-exit lists of this rank or of another.
    pub(crate) fn check_ranks(&self, worst: u64, worst_rank: usize) -> Result<(), AllocError> {
        self.check()?;
        match worst {
            0 => Ok(()),
            worst => Err(self.error(
                self.taken(),
                crate::error::OtherRankOutgrew {
                    rank: worst_rank,
                    bytes: worst,
                },
            )),
        }
    }

    /// The error that stops the tier, `bytes` of lists counted, for `cause`.
    fn error(
        &self,
        bytes: u64,
        cause: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> AllocError {
        AllocError {
            tier: self.n,
            what: "far-exit lists",
            positions: self.positions,
            bytes,
            cause: std::io::Error::new(std::io::ErrorKind::OutOfMemory, cause),
        }
    }
}

/// [`solve_tier_tuned`] with the exits computed in sweeps over the tier, one per slice of
/// at most `slice_bytes` scores of the lower tiers its captures reach
/// ([`Rules::capture_window`](oware_db::Rules::capture_window), cut by [`cut_slices`]): each slice is read
/// from `source` into one buffer, then a parallel sweep generates every position's moves and
/// folds the captures whose child the slice holds into the exit kept in the position's cell.
/// The last sweep encodes the cells; the propagation that follows is [`solve_tier_tuned`]'s.
/// The scores are the same whatever the slices. Memory: while the exits are computed, the
/// tier's arrays without the frontier beside the largest slice, then, the slice freed, the
/// whole arrays ([`tier_memory`](crate::memory::tier_memory)): the frontier is written only
/// by the propagation, so its zeroed pages are not resident before
/// ([`frontier_bytes`](crate::memory::frontier_bytes)).
///
/// # Errors
/// [`SolveError::Alloc`] if an array or the slice buffer cannot be allocated, or the
/// far-exit lists outgrow [`Tuning::far_exit_room`]; [`SolveError::Lower`] if `source`
/// cannot deliver a slice.
///
/// # Panics
/// If `n > 48`.
pub fn solve_tier_sliced(
    rules: &Rules,
    n: u8,
    source: &dyn ScoreSource,
    slice_bytes: u64,
    progress: &dyn Progress,
    tuning: Tuning<'_>,
) -> Result<(TierScores, SolveStats), SolveError> {
    solve_with(rules, n, progress, tuning, |ctx, stats| {
        sliced_exits(ctx, stats, source, slice_bytes, progress)
    })
}

/// The exits of [`solve_tier_sliced`], one sweep per slice, written into the cells. Writes
/// neither frontier (the memory plan counts on it); the slice's buffer is freed on return.
fn sliced_exits(
    ctx: &Ctx<'_>,
    stats: &mut SolveStats,
    source: &dyn ScoreSource,
    slice_bytes: u64,
    progress: &dyn Progress,
) -> Result<Vec<FarExits>, SolveError> {
    let (rules, n) = (ctx.rules, ctx.n);
    let slices = cut_slices(rules.capture_window(n), slice_bytes, SLICE_ALIGN);
    let largest = slices.iter().map(Slice::len).max().unwrap_or(0);
    let size = ctx.cells.len() as u64;
    let mut buf: Vec<i8> = Vec::new();
    crate::hugepage::try_reserve(&mut buf, largest as usize)
        .map_err(|e| AllocError::new::<i8>(n, "exit slice", size, largest as usize, e.into_io()))?;
    buf.resize(largest as usize, 0);
    stats.exit_sweeps = slices.len() as u64;
    stats.slice_bytes = largest;
    progress.start(Phase::Init, size * slices.len() as u64);
    let last = slices.len() - 1;
    let room = FarRoom::new(ctx);
    let mut far = Vec::new();
    for (k, slice) in slices.iter().enumerate() {
        let t = Instant::now();
        let mut at = 0usize;
        for piece in &slice.pieces {
            let len = piece.len() as usize;
            source.load(piece.tier, piece.ranks.start, &mut buf[at..at + len])?;
            at += len;
        }
        stats.load_seconds += t.elapsed().as_secs_f64();
        let loaded = Loaded::new(slice, &buf[..at]);
        let sweep = match k {
            _ if k == last => Sweep::Last {
                codes: ctx.codes,
                first: k == 0,
            },
            0 => Sweep::First,
            _ => Sweep::Middle,
        };
        let chunks = ctx.cells.par_chunks(CHUNK).enumerate();
        if k == last {
            far = chunks
                .map(|(c, chunk)| {
                    if room.outgrown() {
                        return FarExits::default();
                    }
                    let start = (c * CHUNK) as u64;
                    let far = fold_cells(rules, &ctx.index, &loaded, sweep, start, chunk);
                    set_level_masks(ctx, c, chunk);
                    progress.advance(chunk.len() as u64);
                    room.take(far)
                })
                .collect();
            room.check()?;
        } else {
            chunks.for_each(|(c, chunk)| {
                let start = (c * CHUNK) as u64;
                fold_cells(rules, &ctx.index, &loaded, sweep, start, chunk);
                progress.advance(chunk.len() as u64);
            });
        }
    }
    Ok(far)
}

/// Sets the level masks of chunk `c` of the cells (`chunk`), just written by the first pass.
pub(crate) fn set_level_masks(ctx: &Ctx<'_>, c: usize, chunk: &[AtomicU8]) {
    for (g, granule) in chunk.chunks(LEVEL_GRANULE).enumerate() {
        let mask = granule
            .iter()
            .fold(0, |m, w| m | ctx.codes.level_bit(w.load(Ordering::Relaxed)));
        ctx.levels[c * (CHUNK / LEVEL_GRANULE) + g].store(mask, Ordering::Relaxed);
    }
}

/// Solves tier `n` once `init` has written the first cells (and their level masks) and
/// returned the far exits of every `CHUNK` positions: the propagation and the finish.
fn solve_with(
    rules: &Rules,
    n: u8,
    progress: &dyn Progress,
    tuning: Tuning<'_>,
    init: impl FnOnce(&Ctx<'_>, &mut SolveStats) -> Result<Vec<FarExits>, SolveError>,
) -> Result<(TierScores, SolveStats), SolveError> {
    let place = exchange::Place::process(n);
    solve_placed(rules, n, progress, tuning, &place, init).map(|(s, t, _)| (s, t))
}

/// [`solve_with`] where `place` says: the whole tier in this process, or one rank's share
/// of it, the updates of other ranks' positions exchanged after each level's local part
/// (`ranks.rs`). Returns what was exchanged too.
pub(crate) fn solve_placed(
    rules: &Rules,
    n: u8,
    progress: &dyn Progress,
    tuning: Tuning<'_>,
    place: &exchange::Place<'_>,
    init: impl FnOnce(&Ctx<'_>, &mut SolveStats) -> Result<Vec<FarExits>, SolveError>,
) -> Result<(TierScores, SolveStats, exchange::Exchanged), SolveError> {
    // A sweep must propagate at least one position, or it could end a level with work left.
    let tuning = Tuning {
        stack: tuning.stack.max(1),
        budget: tuning.budget.max(1),
        ..tuning
    };
    let index = TierIndex::new(n, IndexKind::Reachable);
    let size = place.len;
    let arrays = Arrays::new(n, size);
    let bytes = Arrays::bytes(size);
    let Arrays {
        cells,
        high,
        low,
        dirty,
        levels,
    } = place.agree(arrays, n, bytes)?;
    let codes = Codes::new(n, tuning.exact_exits);
    let mut ctx = Ctx {
        rules,
        n,
        index,
        codes,
        cells: &cells,
        far: &[],
        high: &high,
        low: &low,
        dirty: &dirty,
        levels: &levels,
        tuning,
        start: place.start,
        part: &place.part,
        ranked: place.outbox(),
        marked: AtomicBool::new(false),
    };
    let mut exchanged = exchange::Exchanged::default();
    let mut stats = SolveStats {
        positions: size as u64,
        exit_sweeps: 1,
        ..SolveStats::default()
    };

    // Initialisation: exits and open counts.
    let t = Instant::now();
    progress.start(Phase::Init, size as u64);
    let far = init(&ctx, &mut stats)?;
    ctx.far = &far;
    stats.far_exits = far.iter().map(|f| f.len() as u64).sum();
    stats.far_exit_bytes = far.iter().map(|f| cell::far_list_bytes(f.len())).sum();

    stats.init_seconds = t.elapsed().as_secs_f64();

    // Levels.
    progress.start(Phase::Propagate, size as u64);
    if tuning.distances {
        let distances = match tuning.spill {
            // Over several ranks each rank holds its range's distances (no windows).
            Some(spill)
                if place.ranked().is_none() && spill::windows(size as u64, &spill).len() > 1 =>
            {
                solve_in_windows(&ctx, progress, &mut stats, &spill)?
            }
            _ => {
                let over = place.ranked().map(|ranks| rounds::Over {
                    ranks,
                    exchanged: &mut exchanged,
                });
                let found = solve_in_rounds(&ctx, progress, &mut stats, 0..size as u64, over)?;
                stats.distance_runs = 1;
                match found {
                    Some(mut dist) => {
                        rounds::finish_distances(&mut dist.as_mut_bytes()[..size]);
                        TierDistances::Found(dist)
                    }
                    None => TierDistances::TooFar,
                }
            }
        };
        let mut finished = finish(cells, &codes, n);
        finished.scores.distances = Some(distances);
        stats.endless = finished.endless;
        stats.finite = size as u64 - finished.endless;
        return Ok((finished.scores, stats, exchanged));
    }
    for k in (1..=ctx.n as i8).rev() {
        let t = Instant::now();
        let taken = level_start(&ctx, k);
        progress.advance(taken);
        stats.scan_seconds += t.elapsed().as_secs_f64();
        let t = Instant::now();
        stats.sweeps += sweeps(&ctx, k, progress);
        // Over several ranks, the updates of other ranks' positions are exchanged until no
        // rank has any left.
        if let Some(ranked) = place.ranked() {
            ranked.exchange_level(&ctx, k, progress, &mut exchanged, &mut stats.sweeps);
        }
        stats.sweep_seconds += t.elapsed().as_secs_f64();
    }

    // Finish: undecided positions score 0.
    let scores = finish(cells, &codes, n);
    stats.endless = scores.endless;
    stats.finite = size as u64 - scores.endless;
    let scores = scores.scores;
    Ok((scores, stats, exchanged))
}

/// Frontier sweeps at level `k` while positions were marked since the last one and it took
/// some: how many were made.
fn sweeps(ctx: &Ctx<'_>, k: i8, progress: &dyn Progress) -> u64 {
    let mut made = 0;
    // Phases are separated by rayon's joins: every mark of the last one is seen here.
    while ctx.marked.swap(false, Ordering::Relaxed) {
        let taken = sweep(ctx, k);
        made += 1;
        progress.advance(taken);
        if taken == 0 {
            break;
        }
    }
    made
}

/// The levels decided in rounds (`rounds.rs`), keeping the distances plus one of the
/// positions of `window` (`None` if some distance is too long for a byte), with the seconds
/// and rounds in `stats`. Over the ranks of `over`, the window is this rank's range, and
/// every rank learns whether some distance is too long.
fn solve_in_rounds(
    ctx: &Ctx<'_>,
    progress: &dyn Progress,
    stats: &mut SolveStats,
    window: std::ops::Range<u64>,
    mut over: Option<rounds::Over<'_, '_>>,
) -> Result<Option<AtomicBuf<AtomicU8>>, AllocError> {
    let size = ctx.cells.len();
    let n = ctx.n;
    let len = (window.end - window.start) as usize;
    let flags = size.div_ceil(DIRTY);
    let arrays = AtomicBuf::<AtomicU8>::zeroed(len)
        .map_err(|e| AllocError::new::<AtomicU8>(n, "distances", size as u64, len, e))
        .and_then(|dist| {
            let dirty = try_vec(flags, |_| AtomicBool::new(false)).map_err(|e| {
                AllocError::new::<AtomicBool>(n, "dirty flags", size as u64, flags, e.into_io())
            })?;
            Ok((dist, dirty))
        });
    // Over several ranks, every rank fails if one did (before any round's collective).
    let (dist, dirty) = match &over {
        Some(o) => o
            .ranks
            .agree(arrays, n, "distances", len as u64, (len + flags) as u64)?,
        None => arrays?,
    };
    let carry = (ctx.tuning.stack * rounds::CARRY_PER_STACK) as i64;
    let rounds = rounds::Rounds::new(
        &dist,
        window.start,
        [ctx.high, ctx.low],
        [ctx.dirty, &dirty],
        carry,
    );
    let t = Instant::now();
    let mut total = 0;
    for k in (1..=n as i8).rev() {
        let (taken, r) = rounds::level_in_rounds(ctx, &rounds, k, over.as_mut());
        progress.advance(taken);
        total += r;
    }
    stats.distance_rounds = total;
    stats.sweep_seconds += t.elapsed().as_secs_f64();
    let too_far = u64::from(rounds.too_far.load(Ordering::Relaxed));
    if over.map_or(too_far, |o| o.ranks.max(too_far)) > 0 {
        return Ok(None);
    }
    Ok(Some(dist))
}

/// The levels decided once per window of `spill` (`spill.rs`), from the state the exits
/// left, kept in a scratch file in between: the distances, in scratch files. The cells end
/// as the last run leaves them, the same as any run.
fn solve_in_windows(
    ctx: &Ctx<'_>,
    progress: &dyn Progress,
    stats: &mut SolveStats,
    spill: &Spill<'_>,
) -> Result<TierDistances, SolveError> {
    let size = ctx.cells.len() as u64;
    let windows = spill::windows(size, spill);
    let snapshot = spill::Snapshot::save(ctx.n, spill.dir, ctx.cells, ctx.levels)?;
    progress.start(Phase::Propagate, size * windows.len() as u64);
    let mut out = spill::SpillWriter::new(ctx.n, spill.dir);
    for (w, window) in windows.into_iter().enumerate() {
        if w > 0 {
            snapshot.restore(ctx.cells, ctx.levels)?;
        }
        let Some(mut dist) = solve_in_rounds(ctx, progress, stats, window.clone(), None)? else {
            return Ok(TierDistances::TooFar);
        };
        let len = dist.len();
        let bytes = &mut dist.as_mut_bytes()[..len];
        rounds::finish_distances(bytes);
        out.push(window, bytes)?;
    }
    let out = out.finish();
    stats.distance_runs = out.runs();
    Ok(TierDistances::Spilled(out))
}

/// Level start: decides high the undecided positions whose exit is `k`, and propagates them
/// with every pending position scoring `±k` (see [`Ctx::propagate`]). Returns how many
/// positions it propagated.
fn level_start(ctx: &Ctx<'_>, k: i8) -> u64 {
    if ctx.ranked.is_some() {
        level_start_in::<true>(ctx, k)
    } else {
        level_start_in::<false>(ctx, k)
    }
}

/// [`level_start`] over several ranks (`R`) or in one process.
fn level_start_in<const R: bool>(ctx: &Ctx<'_>, k: i8) -> u64 {
    ctx.cells
        .par_chunks(CHUNK)
        .enumerate()
        .map_init(
            || Work::new(ctx),
            |work, (c, chunk)| {
                work.budget = ctx.tuning.budget;
                let mut taken = 0;
                scan_chunk(ctx, k, c, chunk, |j, v| {
                    taken += ctx.take::<R>(k, j, v < 0, work)
                });
                taken += ctx.propagate::<R>(k, work);
                ctx.hand_over(work);
                taken
            },
        )
        .sum()
}

/// A position decided at the current level and not yet propagated: its index, with bit
/// `CHILD_LOW` set when it is low, and the position.
type Decided = (u64, Position);

/// The buffers of a propagation task, reused across the tasks of a thread, and the task's
/// budget.
struct Work {
    stack: Vec<Decided>,
    buf: Vec<(u64, Position)>,
    /// Positions the current task may still propagate (see [`Tuning::budget`]).
    budget: u64,
    unranker: Unranker,
    /// Over several ranks, the updates for other ranks not yet handed to the outbox.
    outbox: exchange::Queued,
}

impl Work {
    fn new(ctx: &Ctx<'_>) -> Self {
        Work {
            stack: Vec::new(),
            buf: Vec::new(),
            budget: ctx.tuning.budget,
            unranker: ctx.index.unranker(),
            outbox: exchange::Queued::new(ctx.ranked),
        }
    }
}

/// Decided positions a scan gathers before it propagates them.
const START_BATCH: usize = 64;

/// The bit of a buffered parent update that says the child is low (indices are below 2^40).
const CHILD_LOW: u32 = 63;

/// Positions per parallel work item of a sweep (a multiple of `DIRTY`): smaller than
/// `CHUNK`, since a sweep's work can sit in a few places of the tier.
const SWEEP_CHUNK: usize = 4096;

/// Parent updates buffered before they are applied, so that their prefetches overlap.
const BATCH: usize = 256;

/// One sweep over the frontier: takes every marked position (score `+k` in `high`, `−k` in
/// `low`) and propagates it (see [`Ctx::propagate`]). Returns how many positions it
/// propagated.
fn sweep(ctx: &Ctx<'_>, k: i8) -> u64 {
    if ctx.ranked.is_some() {
        sweep_in::<true>(ctx, k)
    } else {
        sweep_in::<false>(ctx, k)
    }
}

/// [`sweep`] over several ranks (`R`) or in one process.
fn sweep_in<const R: bool>(ctx: &Ctx<'_>, k: i8) -> u64 {
    const WORDS: usize = SWEEP_CHUNK / 64;
    ctx.high
        .par_chunks(WORDS)
        .zip(ctx.low.par_chunks(WORDS))
        .enumerate()
        .map_init(
            || Work::new(ctx),
            |work, (c, (high, low))| {
                work.budget = ctx.tuning.budget;
                let mut taken = 0u64;
                let dirty = &ctx.dirty[c * (SWEEP_CHUNK / DIRTY)..];
                const GRANULE: usize = DIRTY / 64;
                for (g, (high, low)) in high.chunks(GRANULE).zip(low.chunks(GRANULE)).enumerate() {
                    // Over several ranks, left for after the next exchange when the updates
                    // for other ranks fill their room.
                    if ctx.outbox_full::<R>() {
                        // What is left waits for the next sweep.
                        ctx.marked.store(true, Ordering::Relaxed);
                        break;
                    }
                    // Marks made after this swap set the flag again, so they are swept next
                    // time.
                    if !dirty[g].swap(false, Ordering::SeqCst) {
                        continue;
                    }
                    for (w, words) in high.iter().zip(low).enumerate() {
                        let base = ((c * WORDS + g * GRANULE + w) as u64) * 64;
                        for (word, low) in [(words.0, false), (words.1, true)] {
                            if word.load(Ordering::SeqCst) == 0 {
                                continue;
                            }
                            let mut bits = word.swap(0, Ordering::SeqCst);
                            while bits != 0 {
                                let j = base + u64::from(bits.trailing_zeros());
                                bits &= bits - 1;
                                taken += ctx.take::<R>(k, j, low, work);
                            }
                        }
                    }
                }
                taken += ctx.propagate::<R>(k, work);
                ctx.hand_over(work);
                taken
            },
        )
        .sum()
}

/// The finished table of a tier and how many of its positions score 0 by endless play.
struct Finished {
    scores: TierScores,
    endless: u64,
}

/// Turns every cell into its score in place (undecided ones into 0), in parallel, and
/// counts the undecided ones.
fn finish(cells: AtomicBuf<AtomicU8>, codes: &Codes, tier: u8) -> Finished {
    let codes = *codes;
    let mut cells = cells;
    let endless = cells
        .as_mut_bytes()
        .par_chunks_mut(CHUNK)
        .map(|chunk| {
            let mut endless = 0u32;
            for c in chunk.iter_mut() {
                endless += u32::from(codes.is_open(*c));
                *c = codes.finished(*c) as u8;
            }
            u64::from(endless)
        })
        .sum();
    Finished {
        scores: TierScores {
            cells,
            distances: None,
            tier,
        },
        endless,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An allocation that cannot succeed (4 EiB of cells, more than any address space) is
    /// an error naming the array and its size, not a panic.
    #[test]
    fn a_failed_allocation_is_an_error_with_its_figures() {
        let size = 1usize << 62;
        let Err(e) = Arrays::new(30, size) else {
            panic!("4 EiB allocated");
        };
        assert_eq!(
            (e.tier, e.what, e.positions, e.bytes),
            (30, "cells", 1 << 62, 1 << 62)
        );
        let m = e.to_string();
        assert!(
            m.starts_with(&format!(
                "tier 30: cannot allocate the cells of {size} positions ({size} bytes): "
            )),
            "{m}"
        );
        assert!(!m.contains('\n'), "{m}");
        // A small tier still allocates.
        assert!(Arrays::new(5, 4368).is_ok());
    }

    /// The sliced exits write no page of the frontier, whose room the memory plan gives to
    /// the slices (`memory::frontier_bytes`): none of its pages is resident when they end,
    /// while the cells' are; and the tier's scores are those of the resident path.
    #[cfg(target_os = "linux")]
    #[test]
    fn sliced_exits_leave_the_frontier_untouched() {
        use crate::progress::NoProgress;
        // Small pages only: a transparent huge page at the edge of the cells may back the
        // first bytes of the frontier beside them (at most 2 MiB, within the process's
        // reserve); what is tested is that the exits write none of it.
        // SAFETY: `prctl` with these arguments only sets this process's THP flag.
        assert_eq!(
            unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) },
            0
        );
        let rules = Rules::ABAPA;
        let mut lower = LowerTiers::new();
        for t in 0..16 {
            let (s, _) = solve_tier(&rules, t, &lower, &NoProgress).unwrap();
            lower.push(std::sync::Arc::from(s.as_slice()));
        }
        let n = 16;
        let (whole, _) = solve_tier(&rules, n, &lower, &NoProgress).unwrap();
        let mut resident = (0, 0);
        let (sliced, stats) =
            solve_with(&rules, n, &NoProgress, Tuning::default(), |ctx, stats| {
                let far = sliced_exits(ctx, stats, &lower, 1 << 20, &NoProgress)?;
                let frontier = buffer::resident_bytes(ctx.high).unwrap()
                    + buffer::resident_bytes(ctx.low).unwrap();
                resident = (frontier, buffer::resident_bytes(ctx.cells).unwrap());
                Ok::<_, SolveError>(far)
            })
            .unwrap();
        assert!(stats.exit_sweeps > 2, "{} sweeps", stats.exit_sweeps);
        assert_eq!(resident.0, 0, "frontier bytes resident after the exits");
        assert!(
            resident.1 >= TierIndex::new(n, IndexKind::Reachable).size() / 2,
            "cells resident: {}",
            resident.1
        );
        assert!(sliced.as_slice() == whole.as_slice());
    }
}
