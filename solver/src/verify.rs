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
//! The justification relies on [`Position::unmoves`] being exact (it is confirmed by the
//! forward generator where it is not exact by construction); the local check relies only on
//! [`Position::moves`].
//!
//! # Cost
//!
//! The scores of the tier are borrowed (1 byte per position); verification adds 1 byte of
//! state per position (a justified flag, a failure flag and a 3-bit counter of in-tier
//! children still to justify) and one frontier bit per position. Work: one forward
//! generation per position (with every child looked up, in batches whose reads are
//! prefetched) and one un-move generation per nonzero position.

use crate::prefetch::prefetch;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

use bitvec::prelude::*;
use oware_db::retro::rank_of_child;
use oware_db::{IndexKind, Outcome, Position, Rules, TierIndex};
use rayon::prelude::*;

use crate::lower::LowerTiers;
use crate::progress::{Phase, Progress};
use crate::tier::{try_vec, AllocError, IntoIo};

/// Positions handled per parallel work item (a multiple of 64: whole frontier words).
const CHUNK: usize = 1 << 14;
/// Positions whose moves are generated before their children's scores are read.
const SUB: usize = 32;
/// Parent updates buffered before they are applied, so that their prefetches overlap.
const BATCH: usize = 256;
/// How many mismatches a report lists.
const LISTED: usize = 10;

/// State bit: the position is justified (zeros are justified from the start).
const JUSTIFIED: u8 = 0x80;
/// State bit: the local check failed.
const FAILED: u8 = 0x40;
/// State bits: in-tier children of a low position not yet justified.
const COUNT: u8 = 0x07;

/// Value of "no exit" in `i16` arithmetic (below every real value).
const NONE: i16 = i16::MIN;

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
/// threads.
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
}

impl VerifyReport {
    /// Whether every position passed.
    pub fn is_ok(&self) -> bool {
        self.mismatches == 0
    }
}

/// The moves of one position, summarised from the stored scores.
#[derive(Clone, Copy, Debug)]
struct Eval {
    /// Best value over exits (captures and ends, or the end score without moves).
    exit: i16,
    /// Best value over in-tier moves.
    inner: i16,
    /// Number of in-tier moves.
    open: u8,
}

impl Eval {
    fn best(&self) -> i16 {
        self.exit.max(self.inner)
    }
}

struct Ctx<'a> {
    rules: &'a Rules,
    n: u8,
    index: TierIndex,
    scores: &'a [i8],
    lower: &'a LowerTiers,
    state: &'a [AtomicU8],
    /// One bit per position: justified and nonzero, its parents not yet acted on. Marked
    /// through the bit vector, drained a word at a time through its raw words.
    frontier: &'a BitVec<AtomicU64, Lsb0>,
}

impl Ctx<'_> {
    /// The place of a child's score: in this tier or a lower one. The child was just stored
    /// in its move, hence the out-of-line ranks (see `oware_db::retro::rank_of_child`).
    #[inline]
    fn child_score(&self, child: &Position, captured: u8) -> &i8 {
        if captured == 0 {
            &self.scores[rank_of_child(&self.index, child) as usize]
        } else {
            self.lower.entry_of_child(child)
        }
    }

    /// The summary of one position's moves, plainly (used for the report's details).
    fn evaluate(&self, p: &Position) -> Eval {
        let moves = p.moves(self.rules);
        let mut e = Eval {
            exit: NONE,
            inner: NONE,
            open: 0,
        };
        if moves.is_empty() {
            e.exit = i16::from(p.end_score());
        }
        for m in moves.iter() {
            match m.outcome {
                Outcome::Continue { child, captured } => {
                    let v = i16::from(captured) - i16::from(*self.child_score(&child, captured));
                    if captured == 0 {
                        e.open += 1;
                        e.inner = e.inner.max(v);
                    } else {
                        e.exit = e.exit.max(v);
                    }
                }
                Outcome::End { score } => e.exit = e.exit.max(i16::from(score)),
            }
        }
        e
    }

    /// The initial state byte of a position with stored score `s`, and whether it starts
    /// in the frontier.
    #[inline]
    fn initial(&self, s: i8, e: &Eval) -> (u8, bool) {
        let mut st = 0u8;
        if s.unsigned_abs() > self.n || e.best() != i16::from(s) {
            st |= FAILED;
        }
        let justified = match s {
            0 => true,
            s if s > 0 => e.exit >= i16::from(s),
            _ => {
                st |= e.open;
                e.open == 0
            }
        };
        if justified {
            st |= JUSTIFIED;
        }
        (st, justified && s != 0)
    }

    /// Local check of the positions `start..start + out.len()`: writes their state bytes,
    /// marks the justified nonzero ones in the frontier (the chunk owns whole frontier
    /// words) and returns how many are nonzero.
    fn local(&self, start: u64, out: &[AtomicU8]) -> u64 {
        let mut cursor = self.index.cursor(start, start + out.len() as u64);
        // (slot, captured, score of the child), read after all prefetches are issued.
        let mut pending: Vec<(u8, u8, &i8)> = Vec::with_capacity(SUB * 6);
        let mut evals = [Eval {
            exit: NONE,
            inner: NONE,
            open: 0,
        }; SUB];
        let mut nonzero = 0u64;
        let mut word = 0u64;
        let frontier = self.frontier.as_raw_slice();
        for (s_idx, sub) in out.chunks(SUB).enumerate() {
            pending.clear();
            for (slot, e) in evals.iter_mut().enumerate().take(sub.len()) {
                let p = cursor.next().unwrap_or_default();
                *e = Eval {
                    exit: NONE,
                    inner: NONE,
                    open: 0,
                };
                // The moves of `Position::moves`, without building the list.
                let any = p.for_each_move(self.rules, |m| match m.outcome {
                    Outcome::Continue { child, captured } => {
                        let r = self.child_score(&child, captured);
                        prefetch(r);
                        pending.push((slot as u8, captured, r));
                        e.open += u8::from(captured == 0);
                    }
                    Outcome::End { score } => e.exit = e.exit.max(i16::from(score)),
                });
                if !any {
                    e.exit = i16::from(p.end_score());
                }
            }
            for &(slot, captured, r) in &pending {
                let e = &mut evals[slot as usize];
                let v = i16::from(captured) - i16::from(*r);
                if captured == 0 {
                    e.inner = e.inner.max(v);
                } else {
                    e.exit = e.exit.max(v);
                }
            }
            let base = start as usize + s_idx * SUB;
            for (slot, cell) in sub.iter().enumerate() {
                let i = base + slot;
                let s = self.scores[i];
                nonzero += u64::from(s != 0);
                let (st, mark) = self.initial(s, &evals[slot]);
                cell.store(st, Ordering::Relaxed);
                word |= u64::from(mark) << (i % 64);
                if i % 64 == 63 || i + 1 == start as usize + out.len() {
                    frontier[i / 64].store(word, Ordering::Relaxed);
                    word = 0;
                }
            }
        }
        nonzero
    }

    /// Puts `j` in the frontier. Relaxed (as bitvec's writes are): the sweep that takes `j`
    /// reads only the scores, which do not change, and the states of its parents, through
    /// atomic operations of their own; sweeps are ordered by rayon's joins.
    #[inline]
    fn mark(&self, j: u64) {
        self.frontier.set_aliased(j as usize, true);
    }

    /// A justified child scoring `vc` acts on its parent `j`.
    #[inline]
    fn act(&self, j: u64, vc: i8) {
        let sp = i16::from(self.scores[j as usize]);
        let cell = &self.state[j as usize];
        if sp > 0 {
            if i16::from(vc) == -sp && cell.fetch_or(JUSTIFIED, Ordering::Relaxed) & JUSTIFIED == 0
            {
                self.mark(j);
            }
        } else if sp < 0 && i16::from(vc) >= -sp {
            let mut s = cell.load(Ordering::Relaxed);
            loop {
                if s & JUSTIFIED != 0 || s & COUNT == 0 {
                    return;
                }
                let mut new = s - 1;
                if new & COUNT == 0 {
                    new |= JUSTIFIED;
                }
                match cell.compare_exchange_weak(s, new, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => {
                        if new & JUSTIFIED != 0 {
                            self.mark(j);
                        }
                        return;
                    }
                    Err(x) => s = x,
                }
            }
        }
    }

    /// One sweep over the frontier: every marked position acts on its parents. Returns how
    /// many were taken.
    fn sweep(&self) -> u64 {
        const WORDS: usize = CHUNK / 64;
        self.frontier
            .as_raw_slice()
            .par_chunks(WORDS)
            .enumerate()
            .map(|(c, chunk)| {
                let mut taken = 0u64;
                let mut buf: Vec<(u64, i8)> = Vec::with_capacity(BATCH + 64);
                // The marks come in increasing order: the unranker keeps the mover's side.
                let mut unranker = self.index.unranker();
                for (w, word) in chunk.iter().enumerate() {
                    if word.load(Ordering::Relaxed) == 0 {
                        continue;
                    }
                    let mut bits = word.swap(0, Ordering::Relaxed);
                    while bits != 0 {
                        let b = u64::from(bits.trailing_zeros());
                        bits &= bits - 1;
                        let j = ((c * WORDS + w) as u64) * 64 + b;
                        let v = self.scores[j as usize];
                        let p = unranker.unrank(j);
                        p.unmoves(self.rules, |q, _house| {
                            if q.is_reachable() {
                                let r = self.index.rank_unchecked(&q);
                                prefetch(&self.state[r as usize]);
                                prefetch(&self.scores[r as usize]);
                                buf.push((r, v));
                            }
                        });
                        taken += 1;
                        if buf.len() >= BATCH {
                            for &(r, v) in &buf {
                                self.act(r, v);
                            }
                            buf.clear();
                        }
                    }
                }
                for &(r, v) in &buf {
                    self.act(r, v);
                }
                taken
            })
            .sum()
    }

    /// The details of a failing position.
    fn mismatch(&self, i: u64) -> Mismatch {
        let p = self.index.unrank(i);
        let stored = self.scores[i as usize];
        let e = self.evaluate(&p);
        let kind = if stored.unsigned_abs() > self.n {
            MismatchKind::Bound
        } else if e.best() != i16::from(stored) {
            MismatchKind::Recurrence { expected: e.best() }
        } else {
            MismatchKind::Unjustified
        };
        Mismatch {
            index: i,
            position: p,
            stored,
            kind,
        }
    }
}

/// Verifies the stored scores of tier `n` (`scores`, in [`IndexKind::Reachable`] index
/// order) under `rules`, given the scores of every lower tier in `lower` (verified before).
/// Runs on the current rayon thread pool; reports [`Phase::Init`] for the local check
/// (counted in positions) and [`Phase::Propagate`] for the justification (counted in
/// nonzero positions justified).
///
/// Any score values are accepted (corrupt ones are reported, never a panic): arithmetic is
/// done in `i16`.
///
/// # Errors
/// [`AllocError`] when the verification state or the frontier cannot be allocated.
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
) -> Result<VerifyReport, AllocError> {
    let t0 = Instant::now();
    let index = TierIndex::new(n, IndexKind::Reachable);
    let size = index.size() as usize;
    assert_eq!(scores.len(), size, "tier {n}: scores of the wrong size");
    assert!(lower.len() >= n as usize, "tier {n}: lower tiers missing");
    let positions = size as u64;
    let state = try_vec(size, |_| AtomicU8::new(0)).map_err(|e| {
        AllocError::new::<AtomicU8>(n, "verification state", positions, size, e.into_io())
    })?;
    let words = size.div_ceil(64);
    let frontier = try_vec(words, |_| AtomicU64::new(0))
        .map_err(|e| AllocError::new::<AtomicU64>(n, "frontier", positions, words, e.into_io()))?;
    let mut frontier = BitVec::<AtomicU64, Lsb0>::from_vec(frontier);
    frontier.truncate(size);
    let ctx = Ctx {
        rules,
        n,
        index,
        scores,
        lower,
        state: &state,
        frontier: &frontier,
    };

    progress.start(Phase::Init, size as u64);
    let nonzero: u64 = state
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let z = ctx.local((c * CHUNK) as u64, chunk);
            progress.advance(chunk.len() as u64);
            z
        })
        .sum();

    progress.start(Phase::Propagate, nonzero);
    loop {
        let taken = ctx.sweep();
        progress.advance(taken);
        if taken == 0 {
            break;
        }
    }

    // Failing positions: counted, and the first ones listed in index order.
    let (mismatches, first) = state
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut count = 0u64;
            let mut listed = Vec::new();
            for (k, cell) in chunk.iter().enumerate() {
                let st = cell.load(Ordering::Relaxed);
                if st & FAILED != 0 || st & JUSTIFIED == 0 {
                    count += 1;
                    if listed.len() < LISTED {
                        listed.push((c * CHUNK + k) as u64);
                    }
                }
            }
            (count, listed)
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
    Ok(VerifyReport {
        tier: n,
        positions: size as u64,
        nonzero,
        mismatches,
        first: first.into_iter().map(|i| ctx.mismatch(i)).collect(),
        seconds: t0.elapsed().as_secs_f64(),
    })
}
