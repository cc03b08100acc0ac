//! The check of a tier's distances split over ranks: each rank proves the equations of its
//! own range of places of the tier ([`check_distances`](super::check_distances) explains them), the
//! children it needs asked of their owners ([`lookup_pass`]) as the ranks' verifier asks for
//! them (`verify/ranks.rs`), instead of every rank reading the whole tier in windows.
//!
//! In one pass over the rank's positions, every move of a position with a nonzero score
//! becomes a look-up: a capture's child (a lower tier) is answered with its score by the
//! rank that holds it in its [`LowerShare`]; a child in the tier with its score and its
//! stored distance, two bytes, by the rank that owns it. Then each position's keeping moves
//! give its steps and its equation is checked, as one process checks it.
//!
//! Memory beside the rank's scores and its share: its distances (one byte per position of
//! its range) and the exchange's buffers. Time: the moves of the rank's positions are
//! generated once, whatever the number of ranks.

use std::ops::Range;
use std::sync::Mutex;

use oware_db::retro::ChildRanker;
use oware_db::{Outcome, Rules};

use super::{expected_of, merge, verdict, DistanceError, Steps, NO_DISTANCE};
use crate::comm::Comm;
use crate::lower::lookup::{lookup_pass, Asks, Layout, LookupStats};
use crate::lower::share::LowerShare;

/// Positions per rayon task of the pass (slots are kept in 16 bits).
pub(crate) const CHUNK: usize = 1 << 14;

/// Bytes a rank's look-up pass ([`check_distances_local`]) holds at most beside its arrays,
/// for exchanges of at most `batch` look-ups on `threads` threads, the exchange's own
/// buffers aside: a round takes groups of `2 · threads` chunks until it has `batch / 4`
/// look-ups (its last group may pass that, at most six a position) or `4 · batch` positions;
/// each look-up holds its word twice (asked, then sent), its owner, its move and its answer
/// (32 bytes in all), each position its steps (8).
pub(crate) fn pass_bytes(batch: usize, threads: usize) -> u64 {
    let group = 2 * threads.max(1) * CHUNK;
    let lookups = batch / 4 + 6 * group;
    let positions = 4 * batch + group;
    (32 * lookups + 8 * positions) as u64
}

/// The answer to a look-up of a child in the tier: its score (low byte) and its stored
/// distance (high byte).
#[inline]
fn in_tier(score: i8, distance: u8) -> u16 {
    u16::from(score as u8) | u16::from(distance) << 8
}

/// Checks the stored distances `dist` of this rank's range of places of tier `n` (from
/// `start`, in split order; its re-proved scores `scores`) against their equations, every rank calling it with its
/// own range (a collective; `share` holds the rank's part of the tiers the captures reach).
/// `Ok`: every position of this rank's range agrees. The exchanges are bounded by `layout`.
///
/// # Errors
/// [`DistanceError::Wrong`] naming the lowest failing index of this rank's range.
///
/// # Panics
/// If `dist` is not as long as `scores` (checked before any exchange, so a caller's mistake
/// stops the rank rather than leaving the others waiting in a collective), if `n > 48`, or
/// if a capture's child is of a tier `share` does not hold on its owner.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_distances_local(
    comm: &dyn Comm,
    rules: &Rules,
    n: u8,
    start: u64,
    scores: &[i8],
    dist: &[u8],
    share: &LowerShare,
    layout: Layout,
    stats: &mut LookupStats,
) -> Result<(), DistanceError> {
    assert_eq!(
        dist.len(),
        scores.len(),
        "tier {n}: {} distances for {} scores",
        dist.len(),
        scores.len()
    );
    let part = share.partition(n);
    let index = part.index();
    let ranks = comm.size();
    let lowest: Mutex<Option<DistanceError>> = Mutex::new(None);
    let me = comm.rank();
    let answer = |w: u64| -> u16 {
        match LowerShare::asked(w) {
            (t, g) if t == n => {
                let j = (g - start) as usize;
                in_tier(scores[j], dist[j])
            }
            _ => u16::from(share.answer(w) as u8),
        }
    };
    lookup_pass(
        comm,
        scores.len(),
        layout,
        |range: Range<usize>| {
            let first = start + range.start as u64;
            let mut cursor = part.cursor(first..first + range.len() as u64);
            let mut asks = Asks::new(ranks);
            // Per position its steps so far (its exits); per look-up the position's slot and
            // the seeds the move captures.
            let mut steps = Vec::with_capacity(range.len());
            let mut moves: Vec<(u16, u8)> = Vec::new();
            let mut ranker = ChildRanker::new(index.kind());
            for (slot, i) in range.clone().enumerate() {
                let p = cursor.next().unwrap_or_default();
                let s = scores[i];
                let mut st = Steps::default();
                if s != 0 {
                    st.any = p.for_each_move(rules, |mv| match mv.outcome {
                        Outcome::Continue { child, captured } => {
                            let (word, owner) = share.request_ranked(&child, &mut ranker, mv.house);
                            // A child this rank holds is read at once (nothing changes here).
                            if owner == me {
                                fold_reply(&mut st, s, captured, answer(word));
                            } else {
                                asks.push(word, owner);
                                moves.push((slot as u16, captured));
                            }
                        }
                        Outcome::End { score } if score == s => {
                            st.best = Some(merge(st.best, 0, s));
                        }
                        Outcome::End { .. } => {}
                    });
                }
                steps.push(st);
            }
            ((steps, moves), asks)
        },
        &answer,
        |range, (mut steps, moves), replies| {
            for (&(slot, captured), v) in moves.iter().zip(replies) {
                let s = scores[range.start + slot as usize];
                fold_reply(&mut steps[slot as usize], s, captured, v);
            }
            // The lowest index that fails (a range of places may hold several runs).
            let failed = range
                .clone()
                .zip(&steps)
                .filter_map(|(i, &st)| {
                    let s = scores[i];
                    let expected = if s == 0 { None } else { expected_of(st, s) };
                    verdict(n, start + i as u64, s, dist[i], expected)
                })
                .map(|mut e| {
                    // The place found, named by its index.
                    if let DistanceError::Wrong { index, .. } = &mut e {
                        *index = part.index_at(*index);
                    }
                    e
                })
                .min_by_key(wrong_at);
            if let Some(e) = failed {
                let mut low = lowest.lock().unwrap_or_else(|e| e.into_inner());
                if low.as_ref().is_none_or(|l| wrong_at(l) > wrong_at(&e)) {
                    *low = Some(e);
                }
            }
        },
        stats,
    );
    match lowest.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Folds the answer `v` about a child of a position scored `s` into its steps: a move that
/// captures `captured` seeds (0: it stays in the tier) to a child whose answer is `v` (its
/// score in the low byte, and in the high byte its distance when it is of this tier).
#[inline]
fn fold_reply(st: &mut Steps, s: i8, captured: u8, v: u16) {
    let (s, t) = (i16::from(s), i16::from(v as u8 as i8));
    if captured == 0 {
        // A move that stays in the tier keeps the score when the child's is its opposite;
        // its step is the child's distance, and a keeping child without one breaks a
        // disfavoured position's equation.
        if -t != s {
            return;
        }
        match (v >> 8) as u8 {
            NO_DISTANCE => st.broken = true,
            d => st.best = Some(merge(st.best, u16::from(d), s as i8)),
        }
    } else if i16::from(captured) - t == s {
        st.best = Some(merge(st.best, 0, s as i8));
    }
}

/// The index a [`DistanceError::Wrong`] names (`u64::MAX` for another error).
fn wrong_at(e: &DistanceError) -> u64 {
    match e {
        DistanceError::Wrong { index, .. } => *index,
        _ => u64::MAX,
    }
}
