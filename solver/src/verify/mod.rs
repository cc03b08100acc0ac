//! Deep verification of one tier's stored scores: a proof that they are the game values,
//! independent of the solver's propagation code (it shares only the move generator, the
//! un-move generator and the index with it).
//!
//! # What is checked
//!
//! Given the stored scores `S` of tier `n` and the scores of every lower tier (themselves
//! already verified, so every capture's value is exact):
//!
//! 1. **Local check**, at every position `p` of the tier: `|S(p)| <= n`, and
//!    `S(p) = max over legal moves (captured − S(child))` (a move that ends the game counts
//!    its end score; a position without legal moves must hold `p.end_score()`).
//! 2. **Justification** (a certificate of finite play), for every `p` with `S(p) != 0`.
//!    Call an *exit* a capture or a move that ends the game, and an *in-tier child* the
//!    child of a non-capturing move. The *justified* positions are the least set such that
//!    - `S(p) = s > 0` is justified when some exit is worth `>= s`, or some in-tier child
//!      `c` with `S(c) = −s` is justified;
//!    - `S(p) = −s < 0` is justified when every in-tier child `c` is justified with
//!      `S(c) >= s` (at once when there is none).
//!
//!    Every nonzero position must be justified.
//!
//! # Why this proves that `S` is exact
//!
//! Let `V` be the true value (`RULES.md`: endless play worth 0). For a threshold `k >= 1`,
//! `V(p) >= k` holds exactly on the least set `A_k`, and `V(p) <= −k` exactly on the least
//! set `B_k`, such that `p ∈ A_k` when an exit is worth `>= k` or some in-tier child is in
//! `B_k`, and `p ∈ B_k` when every exit is worth `<= −k` and every in-tier child is in `A_k`
//! (the threshold games are determined; endless play reaches neither).
//!
//! - *`S` is not below the truth.* When the recurrence holds everywhere, the pair
//!   `({S >= k}, {S <= −k})` is closed under those two rules: an exit worth `>= k`, or an
//!   in-tier child with `S(c) <= −k`, gives `S(p) >= k`; exits all `<= −k` and children all
//!   `S(c) >= k` give `S(p) <= −k`. A closed pair contains the least one, so
//!   `V >= k ⇒ S >= k` and `V <= −k ⇒ S <= −k`.
//! - *`S` is not above the truth.* By induction on the order in which positions are
//!   justified: a justified `S(p) = s > 0` has an exit worth `>= s` (exits are exact) or a move
//!   to a justified `c` with `V(c) <= −s`, so the mover can force `>= s` in finite play; a
//!   justified `S(p) = −s` has every move worth `<= −s` (exits by the local check, in-tier
//!   moves because `V(c) >= S(c) >= s`), so the opponent holds the mover to `<= −s`.
//!   Hence `S >= k ⇒ V >= k` and `S <= −k ⇒ V <= −k`.
//!
//! So `S = V` at every position; in particular the zeros are exactly the positions where
//! neither side can force a nonzero result.
//!
//! The justification, and part (a) of the local check for in-tier moves (below), rely on
//! [`Position::unmoves`] being exact (it is confirmed by the forward generator where it is
//! not exact by construction); the rest of the local check relies only on
//! [`Position::moves`].
//!
//! # How it is computed
//!
//! **One byte per position** holds the score and the verifier's state: "score `s`, not
//! justified", "score `s`, justified" and, during level `k` only, "score `−k`, `c` in-tier
//! children still to justify" (`c = 1..=6`). The tier's scores are encoded in place (so
//! they are not held twice) and put back at the end. A score out of bounds is held as
//! `±(n + 1)`: it fails the bound check anyway, and since every real value lies in
//! `−n..=n`, a move to it compares with every in-bound score as the true value does, so the
//! local check of every other position is unchanged; the report's details read the true
//! value back. The justification treats those scores as one level `n + 1`: a `+(n + 1)`
//! position is then justified by any justified child out of bounds below `−n`, not only by
//! one of exactly the opposite score. This can change the verdict only where two corrupt
//! scores out of bounds are a move apart (the positions out of bounds fail anyway; an
//! in-bound parent of theirs may be reported justified or not accordingly).
//!
//! **The local check** `S(p) = max over moves (captured − S(child))` is checked as (a) every
//! move is worth at most `S(p)` and (b) some move is worth at least `S(p)` (the end score,
//! for a position without moves, counts as an exit). For the exits it needs no state: a
//! capture is compared with `S(p)` in the sweep over the slice of lower tiers that holds its
//! child. A flag per position `E` records "an exit is worth at least `S(p)`", set in those
//! sweeps; the last sweep, over the last slice (or the lower tiers held whole), also takes
//! the ends (which need no lower tier) and completes them. `E` is the cell's bit `J`, which
//! means nothing else before that last sweep (the zeros get theirs there, as justified from
//! the start), so the sweeps over slices hold nothing beside the cells but the failure bit
//! per position, `F`. With the lower tiers held whole, the sweeps are one pass; in `k`
//! slices, `k` passes. Most in-tier moves are checked where the justification reads them anyway,
//! so that the local check reads no in-tier child but those of the zeros:
//!
//! - (a) fails exactly when some in-tier child `c` has `S(c) < −S(p)`, which needs
//!   `S(c) < 0`. The un-moves of every negative child `S(c) = −t` reach all its parents:
//!   those of the justified ones in the sweeps of level `t`, those of the others after the
//!   levels. A parent scoring `0..t` fails there; a negative parent `−k` fails at the start
//!   of its level, where it counts its children: a child below `k` is never counted down, so
//!   the parent stays unjustified.
//! - (b), for a zero: the last sweep reads its in-tier children (some move worth `>= 0`),
//!   unless an exit is worth `>= 0` already.
//!   For a positive score it follows from the justification (an exit worth `>= s`, or a move
//!   to a child scoring `−s`). For a negative score `−k` it is checked at the start of level
//!   `k`, from the children read there and the exit bit, which the cell carries as `J` from
//!   the local check until then (no `−k` cell is justified before level `k`).
//!
//! So the failing positions are those of the plain definition, whichever path finds them.
//!
//! **The justification** is computed by levels `k = n + 1, …, 1`. Its rules make the status
//! of a position with `|S| = k` depend only on positions with `|S| = k` (a `+k` on its `−k`
//! children) and on positions with `|S| > k` (a `−k` needs its children justified with
//! `S >= k`). So the least set is reached level by level, highest first, each level's least
//! fixpoint computed once the levels above are final:
//!
//! - before the levels, `S(p) = s > 0` with `E` set is justified (an exit worth `>= s`);
//!   zeros are justified from the start;
//! - at the start of level `k`, each `−k` position counts its in-tier moves whose child is
//!   not already justified with `S >= k` (children with `S > k` are final; `+k` children
//!   justified so far are those with `E`): none, it is justified; otherwise it waits with
//!   the count. A child with `S < k` never counts down, as in the rules;
//! - a position justified during level `k` (it is `±k`) acts on its parents through the
//!   un-moves: a `−k` child justifies its unjustified `+k` parents; a `+k` child counts
//!   down its waiting `−k` parents (to 0: justified). `+k` positions justified by `E` were
//!   counted at the start and do not act again. The positions justified at the start of the
//!   level go to a frontier bit per position (allocated once the local check is done),
//!   which sweeps take once every start is done (a start reads children whose parents are
//!   not yet waiting). From there a justified parent acts at once, depth first: it goes on
//!   the task's work stack with the position its un-move produced, so it is never
//!   unranked; what exceeds the stack or the task's budget goes to the frontier for the
//!   next sweep, and the level ends with a sweep that finds none;
//! - waiting codes left at the end of a level go back to "`−k`, not justified" during the
//!   next level's scan (two sets of waiting codes, one per parity of `k`, tell them apart).
//!
//! Each move of a waiting position is counted once at the start and counted down at most
//! once (its child is justified once), so the result is the least set of the rules, whatever
//! the order of the updates and the number of threads. A position fails when `F` is set or
//! it is not justified.
//!
//! # Cost
//!
//! Memory: the tier's scores, which hold the state (1 byte per position), and the bits `F`
//! and (from the levels on) the frontier: 1.25 bytes per position (and a mask of the levels
//! present per 1024 positions, so that a level's scan skips the granules without its
//! positions), plus the lower tiers held whole; or 1.125 bytes per position beside the
//! largest slice, while the lower tiers are read in slices. Work: per sweep of the local
//! check, one generation of the exits per position (with each capture's child looked up, in
//! batches whose reads are prefetched), and in the last sweep one more generation of the
//! moves of each zero that no exit settles, with its in-tier children looked up; one forward
//! generation per negative position at the start of its level, with its in-tier children
//! looked up; a scan per level (eight cells to a word, the candidates then one by one); one
//! un-move generation per nonzero position (and per failing negative one after the levels).
//! The children are ranked in halves ([`ChildRanker`]: a child's opponent's side is kept
//! per house over a run of positions that share the mover's side).
//! The arrays it allocates, and the scores that the drivers read from the tables, are on
//! transparent huge pages where the kernel allows them (`crate::hugepage`).

pub(crate) mod ranks;

use crate::prefetch::prefetch;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::retro::{rank_of_child, ChildRanker, ExitMoves};
use oware_db::{Outcome, Position, Rules};
use rayon::prelude::*;

use crate::comm::exchange::{Outbox, Queued};
use crate::comm::Partition;
use crate::error::{AllocError, IntoIo, SolveError};
use crate::granule::LEVEL_GRANULE;
use crate::hugepage::try_vec;
use crate::lower::slice::{cut_slices, Loaded, ScoreSource, Slice, SLICE_ALIGN};
use crate::lower::LowerTiers;
use crate::progress::{Phase, Progress};

/// Positions handled per parallel work item (a multiple of 64: whole bit words).
const CHUNK: usize = 1 << 14;
/// Positions whose moves are generated before their children's cells are read.
const SUB: usize = 32;
/// Parent updates buffered before they are applied, so that their prefetches overlap.
const BATCH: usize = 256;
/// Marked positions a sweep gathers before it acts on them.
const START_BATCH: usize = 64;
/// How many mismatches a report lists.
pub(crate) const LISTED: usize = 10;

/// Cell bit: the position is justified.
pub(crate) const J: u8 = 0x80;
/// A score `s` (clamped to `±(n + 1)`, `n <= 48`) is held as `s + BIAS`, from 15 to 113.
const BIAS: i16 = 64;
/// The smallest code of a score; codes below it (but 0) are pending counts.
const SCORE_CODES: u8 = 15;

/// The cell code of score `s`, not justified.
#[inline]
pub(crate) fn code(s: i16) -> u8 {
    (s + BIAS) as u8
}

/// The first pending code of level `k`, less one: the codes `base + 1..=base + 6` mean
/// "score −k, that many in-tier children still to justify". Levels of either parity use
/// their own codes, so that a scan of level `k` can tell the pending codes left by level
/// `k + 1` from its own.
#[inline]
pub(crate) fn pending_base(k: i16) -> u8 {
    if k % 2 == 0 {
        0
    } else {
        8
    }
}

/// The score held by cell value `b` during level `k` (pending codes of level `k` or `k + 1`;
/// outside the levels there are none).
#[inline]
pub(crate) fn score_of(b: u8, k: i16) -> i16 {
    let v = b & !J;
    if v >= SCORE_CODES {
        i16::from(v) - BIAS
    } else if (v > 8) == (pending_base(k) == 8) {
        -k
    } else {
        -(k + 1)
    }
}

/// What a child justified at level `k` did to its parent's cell ([`act_on_cell`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Acted {
    /// The parent is justified now (its score is minus the child's): the caller acts on
    /// its parents. Exactly one caller wins each.
    Justified,
    /// A `−k` child of a parent scoring `0..k`: the move to it is worth more than the
    /// parent's score, which fails.
    Fails,
    /// Nothing changed.
    Nothing,
}

/// The one transition of a parent's cell when a child justified at level `k` with score
/// `vc` (`±k`) acts on it, in one process and on the ranks alike: a `−k` child justifies a
/// `+k` parent not yet justified, and fails a parent scoring `0..k`; a `+k` child counts
/// down a waiting `−k` parent, which its last child justifies.
#[inline(always)]
pub(crate) fn act_on_cell(cell: &AtomicU8, k: i16, vc: i16) -> Acted {
    if vc < 0 {
        // Most parents are not waiting for this child: a plain read sees it first.
        let b = cell.load(Ordering::Relaxed);
        if b == code(k) {
            return if cell
                .compare_exchange(b, b | J, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                Acted::Justified
            } else {
                Acted::Nothing
            };
        } else if (0..k).contains(&score_of(b, k)) {
            return Acted::Fails;
        }
        return Acted::Nothing;
    }
    let base = pending_base(k);
    let mut b = cell.load(Ordering::Relaxed);
    loop {
        if b <= base || b > base + 6 {
            return Acted::Nothing;
        }
        let new = if b == base + 1 { code(-k) | J } else { b - 1 };
        match cell.compare_exchange_weak(b, new, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) if new & J != 0 => return Acted::Justified,
            Ok(_) => return Acted::Nothing,
            Err(x) => b = x,
        }
    }
}

/// Bit 7 of each byte of `w` (eight cells) that may be a pending code (below
/// [`SCORE_CODES`], without `J`) or the code `own`, with or without `J`; clear for every
/// other byte.
#[inline]
fn candidates(w: u64, own: u8) -> u64 {
    const LOW: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let x = w & LOW;
    // A byte of `x` is at most 0x7F, so adding 0x71 (128 − 15) never carries into the next:
    // bit 7 is clear exactly where the byte is below 15.
    let low_codes = !(x + ONES * u64::from(0x80 - SCORE_CODES)) & HIGH;
    let y = x ^ (ONES * u64::from(own));
    // Bit 7 set exactly where the byte of `y` is zero.
    let own_codes = !(((y & LOW) + LOW) | y) & HIGH;
    low_codes | own_codes
}

/// What is wrong with a stored score.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MismatchKind {
    /// `|score| > n`.
    Bound,
    /// The recurrence gives `expected` (computed from the stored scores of the children; in
    /// `i16` because corrupt children can push it out of the `i8` range).
    Recurrence {
        /// `max over moves (captured − score(child))`, or the end score.
        expected: i16,
    },
    /// The local check holds but the nonzero score has no finite line that forces it.
    Unjustified,
}

/// One position whose stored score fails verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mismatch {
    /// Its index in the tier ([`IndexKind::Reachable`]).
    pub index: u64,
    /// The position.
    pub position: Position,
    /// The stored score.
    pub stored: i8,
    /// The first check it fails, in the order bound, recurrence, justification.
    pub kind: MismatchKind,
}

/// The result of verifying one tier. It depends only on the scores, not on the number of
/// threads nor on the slices of the lower tiers.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyReport {
    /// The tier verified.
    pub tier: u8,
    /// Positions in the tier.
    pub positions: u64,
    /// Positions with a nonzero stored score (those that need a justification).
    pub nonzero: u64,
    /// Positions that fail at least one check.
    pub mismatches: u64,
    /// The failing positions of lowest index, at most 10, in index order.
    pub first: Vec<Mismatch>,
    /// Wall-clock seconds spent.
    pub seconds: f64,
    /// Where the seconds went (on the ranks' path, rank 0's).
    pub phases: VerifyPhases,
}

/// The seconds of each phase of one tier's verification ([`verify_tier_in_place`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VerifyPhases {
    /// From the start to the end of the local check: the arrays allocated, the cells
    /// encoded, each slice of the lower tiers read and swept, the last sweep.
    pub check_seconds: f64,
    /// The scans that start each level (the negative positions count their children).
    pub start_seconds: f64,
    /// The frontier sweeps of the levels (the justified positions act on their parents).
    pub sweep_seconds: f64,
    /// Frontier sweeps made over all levels (the last of each level finds nothing).
    pub sweeps: u64,
    /// Over several ranks, what this rank exchanged (`None` in one process).
    pub exchanged: Option<RankExchanges>,
}

/// What one rank of a deep verification over several ranks exchanged
/// ([`VerifyPhases::exchanged`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RankExchanges {
    /// The number of ranks.
    pub ranks: usize,
    /// The waves that found the ends of the justification's levels and the rounds of its
    /// other exchanges (the same on every rank).
    pub rounds: u64,
    /// Messages of updates rank 0 posted, and all-to-all exchanges of updates and of
    /// look-ups.
    pub exchanges: u64,
    /// Updates of other ranks' positions this rank sent.
    pub updates: u64,
    /// Look-ups this rank sent to other ranks.
    pub lookups: u64,
    /// Seconds inside collective calls (transfer and waiting).
    pub comm_seconds: f64,
}

impl VerifyReport {
    /// Whether every position passed.
    pub fn is_ok(&self) -> bool {
        self.mismatches == 0
    }
}

/// Where [`verify_tier_in_place`] reads the scores of the lower tiers.
#[derive(Clone, Copy)]
pub enum VerifyLower<'a> {
    /// Every tier of the capture window held whole: one pass.
    Resident(&'a LowerTiers),
    /// Read from `source` in slices of at most `slice_bytes` scores ([`cut_slices`]), one
    /// sweep over the tier per slice.
    Sliced {
        /// The scores of the lower tiers.
        source: &'a dyn ScoreSource,
        /// The largest slice, in scores (bytes).
        slice_bytes: u64,
    },
}

impl VerifyLower<'_> {
    /// The stored score of a capture's child (for a report's details).
    fn score(&self, child: &Position) -> Result<i8, oware_db::Error> {
        match self {
            VerifyLower::Resident(lower) => Ok(*lower.entry_of_child(child)),
            VerifyLower::Sliced { source, .. } => {
                let t = child.seeds();
                let rank = TierIndex::new(t, IndexKind::Reachable).rank_unchecked(child);
                let mut v = [0i8];
                source.load(t, rank, &mut v)?;
                Ok(v[0])
            }
        }
    }
}

/// Where the last sweep of the local check looks up the captures' children: the lower
/// tiers held whole, or the last slice of them (the earlier slices had their sweeps).
#[derive(Clone, Copy)]
enum Captures<'a> {
    Resident(&'a LowerTiers),
    Slice(&'a Loaded<'a>),
}

/// The cells of `range` (a range that starts on a [`LEVEL_GRANULE`] boundary) encoded
/// from the stored scores of tier `n` they hold: clamped to `±(n + 1)`, zeros justified
/// when `zeros_justified` (else `J` is clear everywhere, free to carry the exit flag through
/// the local check); the scores out of bounds marked in `failed`, the levels of the negative
/// ones in `levels`. Returns how many are nonzero. Shared by one process and the ranks.
pub(crate) fn encode_cells(
    n: u8,
    cells: &[AtomicU8],
    failed: &[AtomicU64],
    levels: &[AtomicU64],
    range: std::ops::Range<usize>,
    zeros_justified: bool,
) -> u64 {
    debug_assert_eq!(range.start % LEVEL_GRANULE, 0);
    let n = i16::from(n);
    let mut nonzero = 0;
    for g in range.clone().step_by(LEVEL_GRANULE) {
        let mut mask = 0u64;
        for i in g..range.end.min(g + LEVEL_GRANULE) {
            let s = i16::from(cells[i].load(Ordering::Relaxed) as i8);
            nonzero += u64::from(s != 0);
            if s.abs() > n {
                failed[i / 64].fetch_or(1 << (i % 64), Ordering::Relaxed);
            }
            let c = s.clamp(-n - 1, n + 1);
            if c < 0 {
                mask |= 1 << -c;
            }
            let j = if s == 0 && zeros_justified { J } else { 0 };
            cells[i].store(code(c) | j, Ordering::Relaxed);
        }
        if mask != 0 {
            levels[g / LEVEL_GRANULE].fetch_or(mask, Ordering::Relaxed);
        }
    }
    nonzero
}

/// A position justified at the current level whose parents are still to be acted on: its
/// index, its score (`±k`) and the position.
type Justified = (u64, i16, Position);

/// A task's work stack, its buffer of parent updates (the parent's place in the arrays, the
/// child's score, the parent), what is left of its budget, and (over several ranks) the
/// updates it queued for other ranks.
pub(crate) struct Work {
    stack: Vec<Justified>,
    buf: Vec<(u64, i16, Position)>,
    budget: u64,
    queued: Queued,
}

impl Work {
    fn new(ctx: &Ctx<'_>) -> Self {
        Work {
            stack: Vec::new(),
            buf: Vec::with_capacity(BATCH + 64),
            budget: ctx.limits.budget,
            queued: Queued::new(ctx.ranked),
        }
    }
}

/// How far a task follows a cascade of justifications depth first before it leaves the
/// rest to the frontier bits (the solver's [`Tuning`](crate::tier::Tuning), for the verifier).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorkLimits {
    /// Most positions a task's work stack holds; further justified ones go to the frontier.
    /// At least 1.
    stack: usize,
    /// Positions a task acts on before it leaves the rest to the frontier. At least 1.
    budget: u64,
}

impl Default for WorkLimits {
    fn default() -> Self {
        WorkLimits {
            stack: 1 << 13,
            budget: 1 << 15,
        }
    }
}

/// The verifier's arrays and what its loops need, in one process or on one rank of several
/// (`ranks.rs`): the arrays then hold the rank's range of places, from `start`, and the
/// justification's updates of other ranks' parents go to `ranked`.
pub(crate) struct Ctx<'a> {
    rules: &'a Rules,
    n: u8,
    index: TierIndex,
    /// One byte per position: the score and the verifier's state (see the codes above).
    cells: &'a [AtomicU8],
    /// One bit per position during the levels: the frontier (justified at this level,
    /// parents not yet acted on). Empty during the local check, which keeps its exit flag
    /// in the cells' `J` instead, so that the slices of the lower tiers get its bytes.
    bits: &'a [AtomicU64],
    /// One bit per position: the position failed the bound or the local check.
    failed: &'a [AtomicU64],
    /// Per [`LEVEL_GRANULE`] positions: bit `k` when some position holds `−k`.
    levels: &'a [AtomicU64],
    limits: WorkLimits,
    /// The first place of the tier the arrays hold: 0 in one process, the first this rank
    /// owns over several ranks.
    start: u64,
    /// The tier's split over the ranks: in one process every place is its index.
    part: &'a Partition,
    /// Over several ranks, where the updates of other ranks' parents go.
    ranked: Option<&'a Outbox>,
    /// Set when a sweep or a cascade left positions in the frontier (its budget spent, or
    /// the updates for other ranks filling their room); after the last sweep of a level's
    /// local part, what the next exchange leaves the sweeps to take.
    left: AtomicBool,
}

impl Ctx<'_> {
    /// The index of the position the arrays hold at `j`. `R`: over several ranks.
    #[inline(always)]
    fn index_of<const R: bool>(&self, j: u64) -> u64 {
        if R {
            self.part.index_at(self.start + j)
        } else {
            j
        }
    }

    /// Whether the updates queued for other ranks fill their room (never in one process).
    #[inline(always)]
    fn outbox_full<const R: bool>(&self) -> bool {
        R && self.ranked.is_some_and(Outbox::full)
    }

    /// Hands the updates `work` queued for other ranks to the outbox (nothing in one
    /// process).
    #[inline]
    fn hand_over(&self, work: &mut Work) {
        if let Some(outbox) = self.ranked {
            outbox.take_in(&mut work.queued);
        }
    }

    /// Leaves position `j` for a later sweep: in the frontier, and (over several ranks)
    /// noted as work left for after the next exchange.
    #[inline]
    fn leave(&self, j: u64) {
        Self::set(self.bits, j as usize);
        if !self.left.load(Ordering::Relaxed) {
            self.left.store(true, Ordering::Relaxed);
        }
    }

    /// Hands over position `j`, justified at level `k` with score `v`, whose parents are
    /// still to be acted on: onto the work stack (acted on every `START_BATCH` positions),
    /// or into the frontier once the task's budget is spent or the updates for other ranks
    /// fill their room. Returns how many positions the acting justified.
    #[inline]
    fn take<const R: bool>(
        &self,
        k: i16,
        j: u64,
        v: i16,
        work: &mut Work,
        unranker: &mut oware_db::index::Unranker,
    ) -> u64 {
        if work.budget == 0 || self.outbox_full::<R>() {
            self.leave(j);
            return 0;
        }
        work.stack
            .push((j, v, unranker.unrank(self.index_of::<R>(j))));
        if work.stack.len() >= START_BATCH.min(self.limits.stack) {
            self.propagate::<R>(k, work)
        } else {
            0
        }
    }

    #[inline]
    fn bit(words: &[AtomicU64], i: usize) -> bool {
        words[i / 64].load(Ordering::Relaxed) >> (i % 64) & 1 != 0
    }

    #[inline]
    fn set(words: &[AtomicU64], i: usize) {
        words[i / 64].fetch_or(1 << (i % 64), Ordering::Relaxed);
    }

    /// Sets `J` in cell `i` during a sweep of the local check, where only the task that
    /// sweeps `i` writes its cell (others may read it, as a zero's child): a load and a
    /// store, no read-modify-write.
    #[inline(always)]
    fn flag_exit(&self, i: usize) {
        let c = &self.cells[i];
        c.store(c.load(Ordering::Relaxed) | J, Ordering::Relaxed);
    }

    /// The cells of `start..start + len` encoded ([`encode_cells`]).
    fn encode(&self, start: usize, len: usize) -> u64 {
        encode_cells(
            self.n,
            self.cells,
            self.failed,
            self.levels,
            start..start + len,
            false,
        )
    }

    /// One sweep of the positions `start..start + len` over a slice of the lower tiers:
    /// every capture whose child the slice holds is compared with the score (no state but
    /// two bits: worth more sets the failure bit, worth at least sets the cell's `J`, the
    /// exit flag until the last sweep).
    fn slice_sweep(&self, loaded: &Loaded<'_>, start: usize, len: usize) {
        let mut cursor = self.index.cursor(start as u64, (start + len) as u64);
        let mut pending: Vec<(u8, u8, &i8)> = Vec::with_capacity(SUB * 6);
        let mut scores = [0i16; SUB];
        let mut exits = ExitMoves::new(self.rules);
        let mut ranker = ChildRanker::new(self.index.kind());
        for base in (start..start + len).step_by(SUB) {
            let m = SUB.min(start + len - base);
            pending.clear();
            for (slot, s) in scores.iter_mut().enumerate().take(m) {
                let p = cursor.next().unwrap_or_default();
                *s = score_of(self.cells[base + slot].load(Ordering::Relaxed), 0);
                exits.for_each(&p, |mv| {
                    if let Outcome::Continue { child, captured } = mv.outcome {
                        if let Some(r) = loaded.entry_ranked(&child, &mut ranker, mv.house) {
                            prefetch(r);
                            pending.push((slot as u8, captured, r));
                        }
                    }
                });
            }
            let (mut ge, mut gt) = (0u64, 0u64);
            for &(slot, captured, r) in &pending {
                let v = i16::from(captured) - i16::from(*r);
                let s = scores[slot as usize];
                ge |= u64::from(v >= s) << slot;
                gt |= u64::from(v > s) << slot;
            }
            let mut left = ge;
            while left != 0 {
                self.flag_exit(base + left.trailing_zeros() as usize);
                left &= left - 1;
            }
            if gt != 0 {
                self.failed[base / 64].fetch_or(gt << (base % 64), Ordering::Relaxed);
            }
        }
    }

    /// The last sweep of the local check over `start..start + len`: the exits (the ends, and
    /// the captures whose child `lower` holds: all of them when the lower tiers are held
    /// whole, those of the last slice otherwise) of every position,
    /// and the in-tier moves of the zeros that no exit worth at least 0 settles (read after
    /// the captures, so only where needed). A position fails when an exit is worth more than
    /// its score, a zero when no move is worth at least 0. A nonzero score with an exit worth
    /// at least it gets `J`: a positive one is justified; a negative one keeps it as its exit
    /// flag until the start of its level ([`Ctx::level_start`]). The in-tier moves worth
    /// more than the score are found from the other end, by the un-moves of the negative
    /// children ([`Ctx::act`], [`Ctx::unjustified_parents`]). The exit flag of the slice
    /// sweeps is read from `J`, which means nothing else before (zeros get theirs here, as
    /// justified from the start). Returns how many positive scores were justified here.
    fn last_sweep(&self, lower: Captures<'_>, start: usize, len: usize) -> u64 {
        let mut cursor = self.index.cursor(start as u64, (start + len) as u64);
        // (slot, captured, child's score) and (slot, child's cell).
        let mut caps: Vec<(u8, u8, &i8)> = Vec::with_capacity(SUB * 6);
        let mut inner: Vec<(u8, &AtomicU8)> = Vec::with_capacity(SUB * 6);
        // The zeros with in-tier moves, whose children are read only when no exit is worth
        // at least 0.
        let mut zeros: Vec<(u8, Position)> = Vec::with_capacity(SUB);
        // Per slot: score, an exit worth more, an exit worth at least it, (zeros) an
        // in-tier move worth at least it.
        let mut st = [(0i16, false, false, false); SUB];
        let mut exits = ExitMoves::new(self.rules);
        let mut ranker = ChildRanker::new(self.index.kind());
        let mut seeded = 0;
        for base in (start..start + len).step_by(SUB) {
            let m = SUB.min(start + len - base);
            caps.clear();
            inner.clear();
            zeros.clear();
            for (slot, e) in st.iter_mut().enumerate().take(m) {
                let p = cursor.next().unwrap_or_default();
                let i = base + slot;
                let b = self.cells[i].load(Ordering::Relaxed);
                let s = score_of(b, 0);
                *e = (s, false, b & J != 0, false);
                let open = exits.for_each(&p, |mv| match mv.outcome {
                    Outcome::Continue { child, captured } => {
                        let r = match lower {
                            Captures::Resident(l) => {
                                Some(l.entry_ranked(&child, &mut ranker, mv.house).2)
                            }
                            Captures::Slice(l) => l.entry_ranked(&child, &mut ranker, mv.house),
                        };
                        if let Some(r) = r {
                            prefetch(r);
                            caps.push((slot as u8, captured, r));
                        }
                    }
                    Outcome::End { score } => {
                        let v = i16::from(score);
                        e.1 |= v > s;
                        e.2 |= v >= s;
                    }
                });
                match open {
                    None => {
                        let v = i16::from(p.end_score());
                        e.1 |= v > s;
                        e.2 |= v >= s;
                    }
                    Some(open) if s == 0 && open > 0 => zeros.push((slot as u8, p)),
                    Some(_) => {}
                }
            }
            for &(slot, captured, r) in &caps {
                let e = &mut st[slot as usize];
                let v = i16::from(captured) - i16::from(*r);
                e.1 |= v > e.0;
                e.2 |= v >= e.0;
            }
            // A zero needs some move worth at least 0: an in-tier child's is read only when
            // no exit is.
            for &(slot, p) in &zeros {
                if st[usize::from(slot)].2 {
                    continue;
                }
                p.for_each_move(self.rules, |mv| {
                    if let Outcome::Continue { child, captured: 0 } = mv.outcome {
                        let r = &self.cells[ranker.rank(&child, mv.house) as usize];
                        prefetch(r);
                        inner.push((slot, r));
                    }
                });
            }
            for &(slot, r) in &inner {
                st[slot as usize].3 |= score_of(r.load(Ordering::Relaxed), 0) <= 0;
            }
            let mut fail = 0u64;
            for (slot, &(s, gt, exit, inner)) in st.iter().enumerate().take(m) {
                fail |= u64::from(gt || (s == 0 && !(exit || inner))) << slot;
                if s == 0 || exit {
                    self.flag_exit(base + slot);
                    seeded += u64::from(s > 0);
                }
            }
            if fail != 0 {
                self.failed[base / 64].fetch_or(fail << (base % 64), Ordering::Relaxed);
            }
        }
        seeded
    }

    /// The start of level `k` over `start..start + len`: the pending codes of level `k + 1`
    /// go back to "−(k + 1), not justified"; every −k position counts its in-tier children
    /// not justified with a score of at least `k`: none, it is justified (and in the
    /// frontier); else it waits with that count. It fails when neither its exit flag is set
    /// nor a child scores `k` (no move is worth its score); a child scoring below `k` (a
    /// move worth more) is never counted down, so the position stays unjustified and fails.
    /// Returns how many were justified.
    fn level_start(&self, k: i16, start: usize, len: usize) -> u64 {
        let own = code(-k);
        let stale = pending_base(k + 1);
        let mut unranker = self.index.unranker();
        let mut ranker = ChildRanker::new(self.index.kind());
        // (index, exit flag) of the −k positions whose children are gathered.
        let mut waiting: Vec<(usize, bool)> = Vec::with_capacity(SUB);
        let mut children: Vec<(u8, &AtomicU8)> = Vec::with_capacity(SUB * 6);
        let mut justified = 0;
        let mut flush = |waiting: &mut Vec<(usize, bool)>, children: &mut Vec<(u8, &AtomicU8)>| {
            // Per slot: children to wait for, a child at `k`.
            let mut st = [(0u8, false); SUB];
            for &(slot, r) in children.iter() {
                let b = r.load(Ordering::Relaxed);
                let v = score_of(b, k);
                let e = &mut st[slot as usize];
                e.0 += u8::from(b & J == 0 || v < k);
                e.1 |= v == k;
            }
            for (&(i, exit), &(c, at)) in waiting.iter().zip(&st) {
                if !(exit || at) {
                    Self::set(self.failed, i);
                }
                if c == 0 {
                    self.cells[i].store(own | J, Ordering::Relaxed);
                    Self::set(self.bits, i);
                    justified += 1;
                } else {
                    self.cells[i].store(pending_base(k) + c, Ordering::Relaxed);
                }
            }
            waiting.clear();
            children.clear();
        };
        self.level_candidates(k, start..start + len, |i| {
            let b = self.cells[i].load(Ordering::Relaxed);
            if b > stale && b <= stale + 6 {
                self.cells[i].store(code(-k - 1), Ordering::Relaxed);
            } else if b & !J == own {
                let slot = waiting.len() as u8;
                let p = unranker.unrank(i as u64);
                p.for_each_move(self.rules, |mv| {
                    if let Outcome::Continue { child, captured: 0 } = mv.outcome {
                        let r = &self.cells[ranker.rank(&child, mv.house) as usize];
                        prefetch(r);
                        children.push((slot, r));
                    }
                });
                waiting.push((i, b & J != 0));
                if waiting.len() == SUB {
                    flush(&mut waiting, &mut children);
                }
            }
        });
        flush(&mut waiting, &mut children);
        justified
    }

    /// Calls `visit(i)`, in order, for the cells `i` of `range` that may hold a pending code
    /// or `−k` at the start of level `k` (with or without `J`), and for no cell of a granule
    /// whose level mask has neither level `k` nor `k + 1`: eight cells at a time, only the
    /// bytes that may be such codes visited one by one. `visit` checks the cell itself (a
    /// byte flagged need not be one); `range` starts at a multiple of [`LEVEL_GRANULE`].
    ///
    /// Only for a task's own range during the level starts (see [`Ctx::word_at`]).
    #[inline]
    fn level_candidates(
        &self,
        k: i16,
        range: std::ops::Range<usize>,
        mut visit: impl FnMut(usize),
    ) {
        debug_assert_eq!(range.start % LEVEL_GRANULE, 0, "{range:?}");
        let own = code(-k);
        let wanted = 3u64 << k;
        for g in range.clone().step_by(LEVEL_GRANULE) {
            if self.levels[g / LEVEL_GRANULE].load(Ordering::Relaxed) & wanted == 0 {
                continue;
            }
            let hi = range.end.min(g + LEVEL_GRANULE);
            let mut i = g;
            while i < hi {
                match self.word_at(i, hi) {
                    Some(w) => {
                        let mut m = candidates(w, own);
                        while m != 0 {
                            visit(i + (m.trailing_zeros() / 8) as usize);
                            m &= m - 1;
                        }
                        i += 8;
                    }
                    None => {
                        visit(i);
                        i += 1;
                    }
                }
            }
        }
    }

    /// The eight cells from `i` as one little-endian word, when they lie before `hi` and
    /// their address is a multiple of 8 (else `None`: the caller reads cell `i` alone).
    ///
    /// Only for a task's own range during the level starts, where no other thread writes
    /// those cells (the others only read them, with byte loads; the caller writes them, in
    /// between, in this thread).
    #[inline]
    fn word_at(&self, i: usize, hi: usize) -> Option<u64> {
        let ptr = self.cells[i..].as_ptr();
        if i + 8 > hi || (ptr as usize) % 8 != 0 {
            return None;
        }
        // SAFETY: `ptr` is aligned to 8 and `i + 8 <= hi <= cells.len()`, so the word lies in
        // `cells`, which outlive this call. The accesses that may race with this load are
        // other threads' byte loads (reads do not conflict, whatever their sizes); the cells
        // of the word are written only by this thread (see above).
        let word = unsafe { AtomicU64::from_ptr(ptr.cast::<u64>().cast_mut()) };
        Some(u64::from_le(word.load(Ordering::Relaxed)))
    }

    /// A child justified at level `k` with score `vc` (`±k`) acts on its parent `j`: a `−k`
    /// child justifies a `+k` parent not yet justified, and fails a parent scoring `0..k`
    /// (its move to the child is worth `k`, more than its score); a `+k` child counts down a
    /// waiting `−k` parent. Returns whether this justified the parent (its score is then
    /// `−vc`, and its parents are the caller's to act on: exactly one caller wins).
    #[inline]
    fn act(&self, k: i16, j: u64, vc: i16) -> bool {
        match act_on_cell(&self.cells[j as usize], k, vc) {
            Acted::Justified => true,
            Acted::Fails => {
                Self::set(self.failed, j as usize);
                false
            }
            Acted::Nothing => false,
        }
    }

    /// Acts, at level `k`, on the parents of the positions of the work stack and, depth
    /// first, on those of the parents this justifies, until the stack is empty or the task's
    /// budget is spent; what is left then goes to the frontier for the next sweep, so that
    /// one task does not keep a long cascade while the other threads are idle. A parent
    /// justified here is pushed with the position its un-move produced, so nothing is
    /// unranked again. Returns how many positions it justified.
    ///
    /// `work.buf` (empty on entry and on return) holds the parent updates of a batch of
    /// positions, applied after all their cells were prefetched.
    ///
    /// `R`: over several ranks, where a parent another rank holds is queued for it instead.
    fn propagate<const R: bool>(&self, k: i16, work: &mut Work) -> u64 {
        let Work {
            stack,
            buf,
            budget,
            queued,
        } = work;
        let mut justified = 0u64;
        while !stack.is_empty() {
            if *budget == 0 || self.outbox_full::<R>() {
                for &(j, _, _) in stack.iter() {
                    self.leave(j);
                }
                stack.clear();
                break;
            }
            while buf.len() < BATCH && *budget > 0 {
                let Some((_, v, p)) = stack.pop() else { break };
                p.unmoves(self.rules, |q, _house| {
                    if q.is_reachable() {
                        let r = self.index.rank_unchecked(&q);
                        let j = if R {
                            let g = self.part.place_of(r);
                            let j = g.wrapping_sub(self.start);
                            if j >= self.cells.len() as u64 {
                                if let Some(outbox) = self.ranked {
                                    outbox.send(queued, g, v < 0);
                                }
                                return;
                            }
                            j
                        } else {
                            r
                        };
                        prefetch(&self.cells[j as usize]);
                        buf.push((j, v, q));
                    }
                });
                *budget -= 1;
            }
            for &(r, v, q) in buf.iter() {
                if self.act(k, r, v) {
                    justified += 1;
                    if stack.len() < self.limits.stack {
                        stack.push((r, -v, q));
                    } else {
                        // Noted as work left too: over several ranks, a quiet rank sweeps
                        // only when some is (`Ranks::until_quiet`).
                        self.leave(r);
                    }
                }
            }
            buf.clear();
        }
        justified
    }

    /// One sweep over the frontier of level `k`: every marked position acts on its parents,
    /// and the positions this justifies on theirs, depth first ([`Ctx::propagate`]).
    /// Returns how many marked positions it took and how many positions it justified.
    ///
    /// Over several ranks (`R`), a sweep that finds the updates for other ranks filling
    /// their room leaves the rest of the frontier for after the next exchange.
    fn sweep<const R: bool>(&self, k: i16) -> (u64, u64) {
        const WORDS: usize = CHUNK / 64;
        self.bits
            .par_chunks(WORDS)
            .enumerate()
            .map(|(c, chunk)| {
                let (mut taken, mut justified) = (0u64, 0u64);
                let mut work = Work::new(self);
                // The marks come in increasing order: the unranker keeps the mover's side.
                let mut unranker = self.index.unranker();
                for (w, word) in chunk.iter().enumerate() {
                    if word.load(Ordering::Relaxed) == 0 {
                        continue;
                    }
                    if self.outbox_full::<R>() {
                        self.left.store(true, Ordering::Relaxed);
                        break;
                    }
                    let mut bits = word.swap(0, Ordering::Relaxed);
                    while bits != 0 {
                        let b = u64::from(bits.trailing_zeros());
                        bits &= bits - 1;
                        let j = ((c * WORDS + w) as u64) * 64 + b;
                        let v = score_of(self.cells[j as usize].load(Ordering::Relaxed), k);
                        if work.budget > 0 && !self.outbox_full::<R>() {
                            taken += 1;
                        }
                        justified += self.take::<R>(k, j, v, &mut work, &mut unranker);
                    }
                }
                justified += self.propagate::<R>(k, &mut work);
                self.hand_over(&mut work);
                (taken, justified)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    }

    /// The sweeps of level `k` until one finds nothing to take (over several ranks, also
    /// when the updates for other ranks fill their room), each sweep's justified positions
    /// counted to `progress`. Returns the sweeps made.
    pub(crate) fn sweeps<const R: bool>(&self, k: i16, progress: &dyn Progress) -> u64 {
        let mut made = 0;
        loop {
            // What a sweep leaves behind is swept by the next one; only the last sweep's
            // stop on a full outbox is work for after the exchange.
            self.left.store(false, Ordering::Relaxed);
            let (taken, justified) = self.sweep::<R>(k);
            made += 1;
            progress.advance(justified);
            if taken == 0 {
                return made;
            }
        }
    }

    /// After the levels, over `start..start + len`: every negative position left
    /// unjustified (it fails) completes the local check of its parents, which its level's
    /// sweeps did only for the justified ones: a parent scoring `0..t` has a move worth
    /// `t`, more than its score, when the child scores `−t`. Nothing to do when every
    /// negative score is justified.
    fn unjustified_parents(&self, start: usize, len: usize) {
        let mut unranker = self.index.unranker();
        for i in start..start + len {
            let b = self.cells[i].load(Ordering::Relaxed);
            let t = -score_of(b, 1);
            if b & J != 0 || t <= 0 {
                continue;
            }
            unranker.unrank(i as u64).unmoves(self.rules, |q, _house| {
                if q.is_reachable() {
                    let j = self.index.rank_unchecked(&q) as usize;
                    if (0..t).contains(&score_of(self.cells[j].load(Ordering::Relaxed), 1)) {
                        Self::set(self.failed, j);
                    }
                }
            });
        }
    }

    /// The end over `start..start + len`: counts the failing positions (failed, or not
    /// justified), lists the first ones, and puts the scores back in the cells.
    fn finish(&self, start: usize, len: usize) -> (u64, Vec<u64>) {
        let (mut count, mut listed) = (0u64, Vec::new());
        for i in start..start + len {
            let b = self.cells[i].load(Ordering::Relaxed);
            if b & J == 0 || Self::bit(self.failed, i) {
                count += 1;
                if listed.len() < LISTED {
                    listed.push(i as u64);
                }
            }
            self.cells[i].store(score_of(b, 1) as i8 as u8, Ordering::Relaxed);
        }
        (count, listed)
    }
}

/// Verifies the stored scores of tier `n` (`scores`, in [`IndexKind::Reachable`] index
/// order) under `rules`, given the scores of every lower tier in `lower` (verified before):
/// [`verify_tier_in_place`] on a copy of `scores`, the lower tiers held whole.
///
/// # Errors
/// [`SolveError::Alloc`] when the copy, the verification bits or the frontier cannot be
/// allocated.
///
/// # Panics
/// If `scores.len()` is not the size of tier `n`, if `lower` holds fewer than `n` tiers, or
/// if `n > 48`.
pub fn verify_tier(
    rules: &Rules,
    n: u8,
    scores: &[i8],
    lower: &LowerTiers,
    progress: &dyn Progress,
) -> Result<VerifyReport, SolveError> {
    assert!(lower.len() >= n as usize, "tier {n}: lower tiers missing");
    let mut copy = try_vec(scores.len(), |i| scores[i]).map_err(|e| {
        AllocError::new::<i8>(n, "scores", scores.len() as u64, scores.len(), e.into_io())
    })?;
    let stored = Stored(n, scores);
    verify_tier_in_place(
        rules,
        n,
        &mut copy,
        VerifyLower::Resident(lower),
        Some(&stored),
        progress,
    )
}

/// Tier `.0`'s scores `.1`, as a source (of that tier only).
struct Stored<'a>(u8, &'a [i8]);

impl ScoreSource for Stored<'_> {
    fn load(&self, tier: u8, start: u64, out: &mut [i8]) -> Result<(), oware_db::Error> {
        let s = usize::try_from(start).unwrap_or(usize::MAX);
        match self.1.get(s..s.saturating_add(out.len())) {
            Some(src) if tier == self.0 => {
                out.copy_from_slice(src);
                Ok(())
            }
            _ => Err(oware_db::Error::InvalidState(format!(
                "tier {tier}: indices {start}..+{} not held",
                out.len()
            ))),
        }
    }
}

/// Verifies the stored scores of tier `n` under `rules` in place: `scores` (in
/// [`IndexKind::Reachable`] index order) becomes the verifier's state, one byte per
/// position, and holds the scores again on return (those out of bounds clamped to
/// `±(n + 1)`). The lower tiers (verified before) are read from `lower`; `stored`, when
/// given, delivers the original stored scores of tier `n` for the report's details of the
/// scores out of bounds (else they are reported clamped). Memory beyond `scores`: two bits
/// per position; while `lower` is read in slices, one bit per position and the largest
/// slice (the frontier's bit is allocated once the slices are done). After an error,
/// `scores` may hold the verifier's state.
///
/// Runs on the current rayon thread pool; reports [`Phase::Init`] for the local check
/// (counted in positions, once per sweep) and [`Phase::Propagate`] for the justification
/// (counted in nonzero positions justified). Any score values are accepted (corrupt ones
/// are reported, never a panic): arithmetic is done in `i16`.
///
/// # Errors
/// [`SolveError::Alloc`] when the bits or the slice buffer cannot be allocated,
/// [`SolveError::Lower`] when a slice of the lower tiers cannot be read.
///
/// # Panics
/// If `scores.len()` is not the size of tier `n`, or if `n > 48`.
pub fn verify_tier_in_place(
    rules: &Rules,
    n: u8,
    scores: &mut [i8],
    lower: VerifyLower<'_>,
    stored: Option<&dyn ScoreSource>,
    progress: &dyn Progress,
) -> Result<VerifyReport, SolveError> {
    verify_with(
        rules,
        n,
        scores,
        lower,
        stored,
        progress,
        WorkLimits::default(),
    )
}

/// [`verify_tier_in_place`] with the given limits of the depth-first propagation.
fn verify_with(
    rules: &Rules,
    n: u8,
    scores: &mut [i8],
    lower: VerifyLower<'_>,
    stored: Option<&dyn ScoreSource>,
    progress: &dyn Progress,
    limits: WorkLimits,
) -> Result<VerifyReport, SolveError> {
    let limits = WorkLimits {
        stack: limits.stack.max(1),
        budget: limits.budget.max(1),
    };
    let t0 = Instant::now();
    assert!(n <= 48, "tier {n}");
    let index = TierIndex::new(n, IndexKind::Reachable);
    let size = index.size() as usize;
    assert_eq!(scores.len(), size, "tier {n}: scores of the wrong size");
    let positions = size as u64;
    let words = size.div_ceil(64);
    let alloc = |what: &'static str, e: std::collections::TryReserveError| {
        AllocError::new::<AtomicU64>(n, what, positions, words, e.into_io())
    };
    let failed =
        try_vec(words, |_| AtomicU64::new(0)).map_err(|e| alloc("verification bits", e))?;
    let levels = try_vec(size.div_ceil(LEVEL_GRANULE), |_| AtomicU64::new(0))
        .map_err(|e| alloc("level masks", e))?;
    let slices = match lower {
        VerifyLower::Resident(_) => Vec::new(),
        VerifyLower::Sliced { slice_bytes, .. } => {
            cut_slices(rules.capture_window(n), slice_bytes, SLICE_ALIGN)
        }
    };
    let empty = Slice::default();
    let largest = slices.iter().map(Slice::len).max().unwrap_or(0) as usize;
    let mut buf: Vec<i8> = Vec::new();
    crate::hugepage::try_reserve(&mut buf, largest)
        .map_err(|e| AllocError::new::<i8>(n, "lower slice", positions, largest, e.into_io()))?;
    buf.resize(largest, 0);
    // SAFETY: `AtomicU8` has the size, alignment and validity of `u8` (and so of `i8`);
    // `scores` is borrowed mutably for as long as `cells` lives.
    let cells: &[AtomicU8] =
        unsafe { std::slice::from_raw_parts(scores.as_mut_ptr().cast::<AtomicU8>(), size) };
    let part = Partition::of_tier(n, 1);
    let ctx = Ctx {
        rules,
        n,
        index,
        cells,
        bits: &[],
        failed: &failed,
        levels: &levels,
        limits,
        start: 0,
        part: &part,
        ranked: None,
        left: AtomicBool::new(false),
    };
    let chunks = size.div_ceil(CHUNK);
    let span = |c: usize| (c * CHUNK, CHUNK.min(size - c * CHUNK));

    let mut phases = VerifyPhases::default();
    // One sweep per slice, the last of them the last sweep; one with the tiers held whole.
    progress.start(Phase::Init, positions * (slices.len().max(1) as u64));
    let nonzero: u64 = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let (s, l) = span(c);
            ctx.encode(s, l)
        })
        .sum();
    // The sweeps over every slice but the last; the last sweep over the last slice (or the
    // lower tiers held whole) then completes the exits.
    let seeded: u64 = {
        let loaded;
        let captures = match lower {
            VerifyLower::Resident(l) => {
                assert!(l.len() >= n as usize, "tier {n}: lower tiers missing");
                Captures::Resident(l)
            }
            VerifyLower::Sliced { source, .. } => {
                let load = |slice: &Slice, buf: &mut [i8]| -> Result<usize, SolveError> {
                    let mut at = 0usize;
                    for piece in &slice.pieces {
                        let len = piece.len() as usize;
                        source.load(piece.tier, piece.ranks.start, &mut buf[at..at + len])?;
                        at += len;
                    }
                    Ok(at)
                };
                let (last, rest) = slices.split_last().unwrap_or((&empty, &[]));
                for slice in rest {
                    let at = load(slice, &mut buf)?;
                    let loaded = Loaded::new(slice, &buf[..at]);
                    (0..chunks).into_par_iter().for_each(|c| {
                        let (s, l) = span(c);
                        ctx.slice_sweep(&loaded, s, l);
                        progress.advance(l as u64);
                    });
                }
                let at = load(last, &mut buf)?;
                loaded = Loaded::new(last, &buf[..at]);
                Captures::Slice(&loaded)
            }
        };
        (0..chunks)
            .into_par_iter()
            .map(|c| {
                let (s, l) = span(c);
                let z = ctx.last_sweep(captures, s, l);
                progress.advance(l as u64);
                z
            })
            .sum()
    };
    drop(buf);
    // The frontier, once the slice's bytes are free.
    let bits = try_vec(words, |_| AtomicU64::new(0)).map_err(|e| alloc("frontier", e))?;
    let ctx = Ctx { bits: &bits, ..ctx };
    phases.check_seconds = t0.elapsed().as_secs_f64();

    progress.start(Phase::Propagate, nonzero);
    progress.advance(seeded);
    for k in (1..=i16::from(n) + 1).rev() {
        let t = Instant::now();
        let justified: u64 = (0..chunks)
            .into_par_iter()
            .map(|c| {
                let (s, l) = span(c);
                ctx.level_start(k, s, l)
            })
            .sum();
        progress.advance(justified);
        let swept = Instant::now();
        phases.start_seconds += (swept - t).as_secs_f64();
        phases.sweeps += ctx.sweeps::<false>(k, progress);
        phases.sweep_seconds += swept.elapsed().as_secs_f64();
    }

    // Part (a) of the local check of the parents of the negative scores left unjustified.
    (0..chunks).into_par_iter().for_each(|c| {
        let (s, l) = span(c);
        ctx.unjustified_parents(s, l);
    });

    // Failing positions: counted, and the first ones listed in index order.
    let (mismatches, first) = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let (s, l) = span(c);
            ctx.finish(s, l)
        })
        .reduce(
            || (0, Vec::new()),
            |(a, mut la), (b, lb)| {
                la.extend(lb);
                la.sort_unstable();
                la.truncate(LISTED);
                (a + b, la)
            },
        );
    // `cells` is not used from here on: the scores are read through `scores` again.
    let first = first
        .into_iter()
        .map(|i| mismatch(rules, n, &index, scores, lower, stored, i))
        .collect::<Result<_, _>>()?;
    Ok(VerifyReport {
        tier: n,
        positions,
        nonzero,
        mismatches,
        first,
        seconds: t0.elapsed().as_secs_f64(),
        phases,
    })
}

/// The details of failing position `i` of tier `n`, from the scores put back in `scores`
/// (those at the clamp `±(n + 1)` read from `stored` when given) and the lower tiers.
fn mismatch(
    rules: &Rules,
    n: u8,
    index: &TierIndex,
    scores: &[i8],
    lower: VerifyLower<'_>,
    stored: Option<&dyn ScoreSource>,
    i: u64,
) -> Result<Mismatch, SolveError> {
    let at = |r: u64| -> Result<i8, oware_db::Error> {
        let s = scores[r as usize];
        if s.unsigned_abs() > n {
            if let Some(src) = stored {
                let mut v = [s];
                if src.load(n, r, &mut v).is_ok() {
                    return Ok(v[0]);
                }
            }
        }
        Ok(s)
    };
    mismatch_with(rules, n, index, i, &at, &|child| lower.score(child))
}

/// The details of failing position `i` of tier `n`: `at(r)` reads the stored score of index
/// `r` of the tier, `lower(child)` that of a capture's child.
pub(crate) fn mismatch_with(
    rules: &Rules,
    n: u8,
    index: &TierIndex,
    i: u64,
    at: &dyn Fn(u64) -> Result<i8, oware_db::Error>,
    lower: &dyn Fn(&Position) -> Result<i8, oware_db::Error>,
) -> Result<Mismatch, SolveError> {
    let p = index.unrank(i);
    let s = at(i)?;
    let moves = p.moves(rules);
    let mut best = if moves.is_empty() {
        i16::from(p.end_score())
    } else {
        i16::MIN
    };
    for m in moves.iter() {
        let v = match m.outcome {
            Outcome::Continue { child, captured: 0 } => {
                -i16::from(at(rank_of_child(index, &child))?)
            }
            Outcome::Continue { child, captured } => {
                i16::from(captured) - i16::from(lower(&child)?)
            }
            Outcome::End { score } => i16::from(score),
        };
        best = best.max(v);
    }
    let kind = if s.unsigned_abs() > n {
        MismatchKind::Bound
    } else if best != i16::from(s) {
        MismatchKind::Recurrence { expected: best }
    } else {
        MismatchKind::Unjustified
    };
    Ok(Mismatch {
        index: i,
        position: p,
        stored: s,
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;
    use crate::solve::solve_tier;
    use std::sync::Arc;

    /// The report of tier `n` (scores `scores`, lower tiers `lower`) under `limits` on
    /// `threads` threads, without its timings, and the sweeps it made.
    fn report(
        rules: &Rules,
        n: u8,
        scores: &[i8],
        lower: &LowerTiers,
        limits: WorkLimits,
        threads: usize,
    ) -> (VerifyReport, u64) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        let mut copy = scores.to_vec();
        let mut r = pool
            .install(|| {
                verify_with(
                    rules,
                    n,
                    &mut copy,
                    VerifyLower::Resident(lower),
                    None,
                    &NoProgress,
                    limits,
                )
            })
            .expect("verifies");
        assert!(copy == scores, "tier {n}: the scores are not put back");
        let sweeps = r.phases.sweeps;
        r.seconds = 0.0;
        r.phases = VerifyPhases::default();
        (r, sweeps)
    }

    /// The word-wise scan of the level starts flags exactly the bytes that are below
    /// [`SCORE_CODES`] or `own` once `J` is cleared: every byte in every place, next to
    /// others of every kind.
    #[test]
    fn candidates_flag_exactly_the_low_and_own_codes() {
        let flagged = |b: u8, own: u8| (b & !J) < SCORE_CODES || b & !J == own;
        let expect = |w: u64, own: u8| {
            (0..8).fold(0u64, |m, i| {
                m | u64::from(flagged((w >> (8 * i)) as u8, own)) << (8 * i + 7)
            })
        };
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for own in (0..=48).map(|k| code(-k - 1)) {
            for b in 0..=255u8 {
                for place in 0..8 {
                    for filler in [0u8, 14, 15, own, own | J, 0x70, 0xF0, 0xFF] {
                        let w = u64::from_le_bytes([filler; 8]) & !(0xFF << (8 * place))
                            | u64::from(b) << (8 * place);
                        assert_eq!(candidates(w, own), expect(w, own), "{w:#x} {own}");
                    }
                }
            }
            for _ in 0..10_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                assert_eq!(candidates(x, own), expect(x, own), "{x:#x} {own}");
            }
        }
    }

    /// Cascades cut short (work stacks of one or two positions; budgets of one, five or
    /// more than the tier) leave their rest to the frontier, whose sweeps take it up: the
    /// reports are those of the default limits, on correct tables and on corrupt ones, on
    /// one and two threads, under both presets; and the cut cascades take more sweeps.
    #[test]
    fn tiny_work_stacks_give_the_same_reports() {
        let max = 12u8;
        for rules in [Rules::ABAPA, Rules::AWARI] {
            let mut lower = LowerTiers::new();
            for n in 0..=max {
                let (solved, _) = solve_tier(&rules, n, &lower, &NoProgress).expect("tier");
                let good = solved.to_vec();
                let mut bad = good.clone();
                let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ u64::from(n);
                for _ in 0..bad.len() / 50 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let i = (x % bad.len() as u64) as usize;
                    let new = match x >> 62 {
                        0 => bad[i].saturating_add(1),
                        1 => bad[i].saturating_sub(1),
                        _ => -bad[i],
                    };
                    // In bounds, so that the scores come back as they were.
                    if new.unsigned_abs() <= n {
                        bad[i] = new;
                    }
                }
                for scores in [&good, &bad] {
                    let (expect, sweeps) =
                        report(&rules, n, scores, &lower, WorkLimits::default(), 2);
                    for (stack, budget) in [(1, 1), (2, 5), (1, 1 << 20)] {
                        if budget == 1 && n > 10 {
                            // A sweep per position: slow, and tiers 0..=10 cut it enough.
                            continue;
                        }
                        let limits = WorkLimits { stack, budget };
                        for threads in [1, 2] {
                            let (r, cut) = report(&rules, n, scores, &lower, limits, threads);
                            assert_eq!(r, expect, "{rules} tier {n} {limits:?} {threads}");
                            if n >= 8 {
                                assert!(cut > sweeps, "{rules} tier {n} {limits:?}: no cut");
                            }
                        }
                    }
                }
                if n >= 8 {
                    let (r, _) = report(&rules, n, &bad, &lower, WorkLimits::default(), 2);
                    assert!(r.mismatches > 0, "{rules} tier {n}: corruption caught");
                }
                let (r, _) = report(&rules, n, &good, &lower, WorkLimits::default(), 2);
                assert!(r.is_ok(), "{rules} tier {n}: {r:?}");
                lower.push(Arc::from(good));
            }
        }
    }
}
