//! Distances to conversion (docs/RULES.md, *Distance*): for every
//! position of a solved tier whose score is nonzero, the plies to the next move that leaves
//! the tier (a capture, or a move that ends the game) under play that keeps the score, the
//! side the score favours taking the shortest way and the other side the longest. A
//! position where the game is over (no legal move) is at distance 0.
//!
//! Computed by a second pass over a solved tier, from its scores and those of the tiers
//! below:
//!
//! 1. a sweep over the tier finds every position's *keeping* moves (worth exactly its
//!    score): a position favoured by its score (`s > 0`) with a keeping exit is at
//!    distance 1; one disfavoured (`s < 0`) counts its keeping moves that stay in the tier,
//!    and is at distance 1 when there is none (its score is then an exit's);
//! 2. then rounds, `r = 0, 1, …`: the parents (by un-moves) of the positions at distance `r`
//!    that keep the score through them are decided: a favoured parent at once, at `r + 1`
//!    (the first child found is the nearest), a disfavoured one when its last keeping
//!    child is decided, at `r + 1` (the farthest).
//!
//! Memory: 2¼ bytes per position of the tier beside its scores and the lower tiers (the
//! distances as bytes, as a distance table stores them, a count of open moves, and the
//! frontiers of two rounds as one bit per position each): [`DISTANCE_BYTES_PER_POSITION`]
//! rounded up.
//!
//! A nonzero score of a correct table is always reached in finite play, so every such
//! position gets a distance; one that does not is an error in the scores.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use oware_db::index::{IndexKind, TierIndex};
use oware_db::retro::ExitMoves;
use oware_db::{Outcome, Position, Rules};
use rayon::prelude::*;

use crate::hugepage::vec_of;
use crate::lower::slice::{cut_slices, Loaded, ScoreSource, Slice, SLICE_ALIGN};
use crate::lower::LowerTiers;
use crate::prefetch::prefetch;

/// The distance of a position that has none (its score is 0): the byte a distance table
/// stores for it.
pub const NO_DISTANCE: u8 = oware_db::format::NO_DISTANCE_BYTE;

/// The longest distance held (a byte, less [`NO_DISTANCE`]).
pub const MAX_DISTANCE: u8 = NO_DISTANCE - 1;

/// Bytes per position that [`tier_distances`] holds beside the scores (2¼, rounded up).
pub const DISTANCE_BYTES_PER_POSITION: u64 = 3;

mod ranks;
mod windows;
pub(crate) use ranks::{check_distances_local, pass_bytes, CHUNK as RANK_CHUNK};
pub use windows::{check_distances_sliced_windowed, check_distances_windowed, DistanceSource};

/// Positions per parallel work item of the first sweep and of the rounds.
const CHUNK: usize = 1 << 14;

/// Positions of the first sweep whose moves' entries are prefetched together.
const SUB: usize = 32;

/// Positions of a round whose parents are gathered (and their entries prefetched) before
/// any is decided.
const BATCH: usize = 16;

/// Why distances could not be computed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DistanceError {
    /// The scores given are not those of the tier's positions.
    #[error("tier {tier}: {got} scores given for {positions} positions")]
    Length {
        /// The tier.
        tier: u8,
        /// Scores given.
        got: usize,
        /// Positions of the tier.
        positions: u64,
    },
    /// A position with a nonzero score that no play keeping the scores leaves the tier from:
    /// the scores are not the game values.
    #[error("tier {tier}: position {index} scores {score} but no play keeping the scores reaches a capture or an end; the scores are wrong")]
    Unreached {
        /// The tier.
        tier: u8,
        /// The position's index.
        index: u64,
        /// Its score.
        score: i8,
    },
    /// A stored distance that does not follow from the position's moves (see
    /// [`check_distances`]).
    #[error("tier {tier}: position {index} (score {score}) holds distance {}, its moves give {}", show(*stored), show_wide(*expected))]
    Wrong {
        /// The tier.
        tier: u8,
        /// The position's index.
        index: u64,
        /// Its score.
        score: i8,
        /// The distance stored.
        stored: u8,
        /// The distance its moves and its children's stored distances give (`None`: none
        /// can be had, a child keeping the score has no distance).
        expected: Option<u16>,
    },
    /// The scores of a lower tier could not be read ([`check_distances_sliced`]).
    #[error("tier {tier}: the lower tiers cannot be read: {error}")]
    Lower {
        /// The tier checked.
        tier: u8,
        /// What the reader said.
        error: String,
    },
    /// The stored distances could not be read ([`DistanceSource`]).
    #[error("tier {tier}: the distances cannot be read: {error}")]
    Read {
        /// The tier checked.
        tier: u8,
        /// What the reader said.
        error: String,
    },
    /// A distance beyond what a byte holds ([`MAX_DISTANCE`]).
    #[error("tier {tier}: distances reach beyond {max} plies, the most a distance table holds")]
    TooFar {
        /// The tier.
        tier: u8,
        /// The largest distance held.
        max: u8,
    },
}

/// The distances of tier `n` (see the module docs), one per index of the tier
/// ([`IndexKind::Reachable`]), [`NO_DISTANCE`] where the score is 0, from the tier's
/// `scores` and the scores of the tiers below in `lower`. Runs on the current rayon pool.
///
/// # Errors
/// [`DistanceError`] when `scores` has the wrong length, when a nonzero score is reached by
/// no finite play (the scores are wrong), or when a distance exceeds [`MAX_DISTANCE`].
///
/// # Panics
/// If `lower` lacks a tier below `n` that a capture reaches, or if `n > 48`.
pub fn tier_distances(
    rules: &Rules,
    n: u8,
    scores: &[i8],
    lower: &LowerTiers,
) -> Result<Vec<u8>, DistanceError> {
    let index = tier_index(n, scores)?;
    // Read and written at random: on huge pages where the kernel allows them.
    let dist = vec_of(scores.len(), |_| AtomicU8::new(NO_DISTANCE));
    // Keeping in-tier moves still to decide, for the disfavoured positions.
    let open = vec_of(scores.len(), |_| AtomicU8::new(0));

    // The frontiers, one bit per position: `current` holds the positions at distance `r`,
    // `next` those found at `r + 1` (the first sweep puts those at 0 and 1 there).
    let words = scores.len().div_ceil(64);
    let mut current = vec_of(words, |_| AtomicU64::new(0));
    let mut next = vec_of(words, |_| AtomicU64::new(0));
    let mark = |set: &[AtomicU64], i: usize| {
        set[i / 64].fetch_or(1 << (i % 64), Ordering::Relaxed);
    };

    // 1. The first sweep: distances 0 and 1, and the open counts. Positions go by groups of
    // `SUB`: the entries their moves read are gathered and prefetched first, then read.
    dist.par_chunks(CHUNK)
        .zip(open.par_chunks(CHUNK))
        .enumerate()
        .for_each_init(
            || (Vec::with_capacity(SUB * 6), Vec::with_capacity(SUB * 6)),
            |(inside, captures), (c, (dist, open))| {
                let start = c * CHUNK;
                let mut cursor = index.cursor(start as u64, (start + dist.len()) as u64);
                for (g, group) in dist.chunks(SUB).enumerate() {
                    let first = g * SUB;
                    let mut slots = [FirstMoves::default(); SUB];
                    inside.clear();
                    captures.clear();
                    for (slot, state) in slots.iter_mut().enumerate().take(group.len()) {
                        let p = cursor.next().unwrap_or_default();
                        let s = scores[start + first + slot];
                        if s == 0 {
                            continue;
                        }
                        state.any = p.for_each_move(rules, |m| match m.outcome {
                            Outcome::Continue { child, captured: 0 } => {
                                let i = index.rank_unchecked(&child) as usize;
                                prefetch(&scores[i]);
                                inside.push((slot, i));
                            }
                            Outcome::Continue { child, captured } => {
                                let entry = lower.entry_of_child(&child);
                                prefetch(entry);
                                captures.push((slot, entry, captured as i8));
                            }
                            Outcome::End { score } => state.keeping_exit |= score == s,
                        });
                    }
                    for &(slot, i) in inside.iter() {
                        if -scores[i] == scores[start + first + slot] {
                            slots[slot].keeping_inside += 1;
                        }
                    }
                    for &(slot, entry, captured) in captures.iter() {
                        if captured - *entry == scores[start + first + slot] {
                            slots[slot].keeping_exit = true;
                        }
                    }
                    for (slot, state) in slots.iter().enumerate().take(group.len()) {
                        let k = first + slot;
                        let s = scores[start + k];
                        if s == 0 {
                            continue;
                        }
                        let (d, count) = state.first_distance(s);
                        open[k].store(count, Ordering::Relaxed);
                        if let Some(d) = d {
                            dist[k].store(d, Ordering::Relaxed);
                            mark(if d == 0 { &current } else { &next }, start + k);
                        }
                    }
                }
            },
        );

    // 2. The rounds.
    let mut r: u8 = 0;
    loop {
        if r == MAX_DISTANCE {
            // A position decided in this round would be at `MAX_DISTANCE + 1`.
            let beyond = current.par_iter().any(|w| w.load(Ordering::Relaxed) != 0);
            if beyond {
                return Err(DistanceError::TooFar {
                    tier: n,
                    max: MAX_DISTANCE,
                });
            }
            break;
        }
        current.par_chunks(CHUNK / 64).enumerate().for_each_init(
            || (index.unranker(), Vec::with_capacity(BATCH * 16)),
            |(unranker, parents), (c, part)| {
                // The parents of a batch of positions are gathered first, their entries
                // prefetched, then decided: the reads of a batch overlap.
                let decide = |parents: &mut Vec<(usize, i8)>| {
                    for &(i, t) in parents.iter() {
                        // The move from the parent keeps its score when it is worth `−t`.
                        if scores[i] != -t {
                            continue;
                        }
                        let decided = if t < 0 {
                            // A favoured parent: the first child decided is the nearest.
                            dist[i]
                                .compare_exchange(
                                    NO_DISTANCE,
                                    r + 1,
                                    Ordering::Relaxed,
                                    Ordering::Relaxed,
                                )
                                .is_ok()
                        } else {
                            // A disfavoured parent: decided with its last keeping child.
                            let left = open[i].fetch_sub(1, Ordering::Relaxed);
                            debug_assert!(left > 0);
                            if left == 1 {
                                dist[i].store(r + 1, Ordering::Relaxed);
                            }
                            left == 1
                        };
                        if decided {
                            mark(&next, i);
                        }
                    }
                    parents.clear();
                };
                let mut in_batch = 0;
                for (w, word) in part.iter().enumerate() {
                    let mut bits = word.load(Ordering::Relaxed);
                    while bits != 0 {
                        let j = (c * (CHUNK / 64) + w) * 64 + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        let p = unranker.unrank(j as u64);
                        let t = scores[j];
                        p.unmoves_reachable(rules, |q, _house| {
                            let i = index.rank_unchecked(&q) as usize;
                            prefetch(&scores[i]);
                            if t < 0 {
                                prefetch(&dist[i]);
                            } else {
                                prefetch(&open[i]);
                            }
                            parents.push((i, t));
                        });
                        in_batch += 1;
                        if in_batch == BATCH {
                            decide(parents);
                            in_batch = 0;
                        }
                    }
                }
                decide(parents);
            },
        );
        if next.par_iter().all(|w| w.load(Ordering::Relaxed) == 0) {
            break;
        }
        std::mem::swap(&mut current, &mut next);
        next.par_iter().for_each(|w| w.store(0, Ordering::Relaxed));
        r += 1;
    }

    let out: Vec<u8> = dist.into_iter().map(AtomicU8::into_inner).collect();
    if let Some(j) = out
        .par_iter()
        .zip(scores.par_iter())
        .position_first(|(&d, &s)| s != 0 && d == NO_DISTANCE)
    {
        return Err(DistanceError::Unreached {
            tier: n,
            index: j as u64,
            score: scores[j],
        });
    }
    Ok(out)
}

/// The index of tier `n`, whose `scores` must be one per position.
///
/// # Errors
/// [`DistanceError::Length`] when they are not.
pub(crate) fn tier_index(n: u8, scores: &[i8]) -> Result<TierIndex, DistanceError> {
    let index = TierIndex::new(n, IndexKind::Reachable);
    if scores.len() as u64 != index.size() {
        return Err(DistanceError::Length {
            tier: n,
            got: scores.len(),
            positions: index.size(),
        });
    }
    Ok(index)
}

/// A stored distance in words.
fn show(d: u8) -> String {
    if d == NO_DISTANCE {
        "none".into()
    } else {
        d.to_string()
    }
}

/// An expected distance in words.
fn show_wide(d: Option<u16>) -> String {
    d.map_or_else(|| "none".into(), |d| d.to_string())
}

/// Checks the distances `dist` of tier `n` (one per index, as [`tier_distances`] gives
/// them) against the tier's `scores` and the lower tiers' in `lower`, one position at a
/// time: [`NO_DISTANCE`] exactly where the score is 0; 0 for a position without a move; for
/// a favoured position (`s > 0`), one more than the least distance over its keeping moves,
/// for a disfavoured one the greatest, where a move that leaves the tier counts 0 and one
/// that stays counts its child's distance. These equations have one solution in finite
/// distances, the distances to conversion (docs/DESIGN.md, *Distances*), so distances that
/// pass are proved from the scores, with no search. Runs on the current rayon pool.
///
/// # Errors
/// [`DistanceError::Length`] for `scores` or `dist` of the wrong length;
/// [`DistanceError::Wrong`] for the lowest index whose distance does not follow.
///
/// # Panics
/// If `lower` lacks a tier below `n` that a capture reaches, or if `n > 48`.
pub fn check_distances(
    rules: &Rules,
    n: u8,
    scores: &[i8],
    lower: &LowerTiers,
    dist: &[u8],
) -> Result<(), DistanceError> {
    check_with(rules, n, scores, Captures::Lower(lower), dist)
}

/// [`check_distances`] for a tier whose lower tiers are read in slices of at most
/// `slice_bytes` scores from `source` (as [`solve_tier_sliced`](crate::tier::solve_tier_sliced)
/// reads them): one sweep over the tier per slice marks the nonzero positions with a capture
/// worth their score (one bit per position), then the equations are checked as
/// [`check_distances`] checks them, a capture keeping the score exactly where the bit is
/// set. Memory beside `scores` and `dist`: the bits and one slice. Runs on the current rayon
/// pool.
///
/// # Errors
/// As [`check_distances`]; [`DistanceError::Lower`] when `source` cannot deliver a slice.
///
/// # Panics
/// If `n > 48`.
pub fn check_distances_sliced(
    rules: &Rules,
    n: u8,
    scores: &[i8],
    source: &dyn ScoreSource,
    slice_bytes: u64,
    dist: &[u8],
) -> Result<(), DistanceError> {
    tier_index(n, scores)?;
    let keeps = keeping_captures(rules, n, 0, scores, source, slice_bytes)?;
    check_with(rules, n, scores, Captures::Marked(&keeps), dist)
}

/// One bit per position of tier `n` from index `first` on (`scores` theirs), set where the
/// position's score is nonzero and some capture keeps it, from the lower tiers read in
/// slices of at most `slice_bytes` scores from `source`: one sweep over the positions per
/// slice.
fn keeping_captures(
    rules: &Rules,
    n: u8,
    first: u64,
    scores: &[i8],
    source: &dyn ScoreSource,
    slice_bytes: u64,
) -> Result<Vec<AtomicU64>, DistanceError> {
    let index = TierIndex::new(n, IndexKind::Reachable);
    let slices = cut_slices(rules.capture_window(n), slice_bytes, SLICE_ALIGN);
    let largest = slices.iter().map(Slice::len).max().unwrap_or(0) as usize;
    let mut buf = vec_of(largest, |_| 0i8);
    let keeps = vec_of(scores.len().div_ceil(64), |_| AtomicU64::new(0));
    for slice in &slices {
        let mut at = 0usize;
        for piece in &slice.pieces {
            let len = piece.len() as usize;
            source
                .load(piece.tier, piece.ranks.start, &mut buf[at..at + len])
                .map_err(|e| DistanceError::Lower {
                    tier: n,
                    error: e.to_string(),
                })?;
            at += len;
        }
        let loaded = Loaded::new(slice, &buf[..at]);
        keeps.par_chunks(CHUNK / 64).enumerate().for_each_init(
            || ExitMoves::new(rules),
            |exits, (c, words)| {
                let start = c * CHUNK;
                let end = (start + CHUNK).min(scores.len());
                let cursor = index.cursor(first + start as u64, first + end as u64);
                for (k, p) in cursor.enumerate() {
                    let s = scores[start + k];
                    if s == 0 {
                        continue;
                    }
                    let mut keeps = false;
                    exits.for_each(&p, |m| {
                        if let Outcome::Continue { child, captured } = m.outcome {
                            if let Some(&e) = loaded.entry(&child) {
                                keeps |= captured as i8 - e == s;
                            }
                        }
                    });
                    if keeps {
                        words[k / 64].fetch_or(1 << (k % 64), Ordering::Relaxed);
                    }
                }
            },
        );
    }
    Ok(keeps)
}

/// Where [`expected_distance`] learns whether a capture keeps a position's score.
#[derive(Clone, Copy)]
pub(crate) enum Captures<'a> {
    /// From the lower tiers held whole.
    Lower(&'a LowerTiers),
    /// From a bit per position, set where some capture keeps the score.
    Marked(&'a [AtomicU64]),
}

/// [`check_distances`] with the captures' verdicts from `captures`.
fn check_with(
    rules: &Rules,
    n: u8,
    scores: &[i8],
    captures: Captures<'_>,
    dist: &[u8],
) -> Result<(), DistanceError> {
    let index = TierIndex::new(n, IndexKind::Reachable);
    let size = index.size();
    for got in [scores.len(), dist.len()] {
        if got as u64 != size {
            return Err(DistanceError::Length {
                tier: n,
                got,
                positions: size,
            });
        }
    }
    let eq = Equations {
        rules,
        index: &index,
        captures,
    };
    let first = dist
        .par_chunks(CHUNK)
        .enumerate()
        .find_map_first(|(c, part)| {
            let start = c * CHUNK;
            let cursor = index.cursor(start as u64, (start + part.len()) as u64);
            for (k, p) in cursor.enumerate() {
                let i = start + k;
                let s = scores[i];
                let expected = expected_distance(&eq, scores, dist, i, &p);
                let stored = part[k];
                if let Some(e) = verdict(n, i as u64, s, stored, expected) {
                    return Some(e);
                }
            }
            None
        });
    first.map_or(Ok(()), Err)
}

/// The error of position `i` (score `s`) whose distance `stored` is not `expected`, if it
/// is not.
#[inline]
pub(crate) fn verdict(
    n: u8,
    i: u64,
    s: i8,
    stored: u8,
    expected: Option<u16>,
) -> Option<DistanceError> {
    let agrees = match expected {
        None => s == 0 && stored == NO_DISTANCE,
        Some(e) => s != 0 && u16::from(stored) == e && stored != NO_DISTANCE,
    };
    (!agrees).then_some(DistanceError::Wrong {
        tier: n,
        index: i,
        score: s,
        stored,
        expected,
    })
}

/// What a check of distances knows beside them: the tier's scores and where captures keep a
/// score.
#[derive(Clone, Copy)]
pub(crate) struct Equations<'a> {
    pub rules: &'a Rules,
    pub index: &'a TierIndex,
    pub captures: Captures<'a>,
}

/// What a position's keeping moves give, among those looked at: the least (favoured) or
/// greatest (disfavoured) step, whether it has a legal move, and whether a keeping child had
/// no distance.
#[derive(Clone, Copy, Default)]
pub(crate) struct Steps {
    pub best: Option<u16>,
    pub any: bool,
    pub broken: bool,
}

impl Equations<'_> {
    /// The steps of `p` (nonzero score `s`; `i` its bit in [`Captures::Marked`]): its exits
    /// when `exits` (a capture or an end worth `s`, step 0), and its keeping moves that stay
    /// in the tier whose child's score and distance `child` gives (by the child's index;
    /// `None`: not looked at now, skipped). A child whose mover holds `m` seeds is looked at
    /// only when bit `m` of `blocks` is set (see [`blocks_within`]): the others are skipped
    /// unranked.
    #[inline]
    pub(crate) fn steps(
        &self,
        i: usize,
        p: &Position,
        s: i8,
        exits: bool,
        blocks: u64,
        child: impl Fn(usize) -> Option<(i8, u8)>,
    ) -> Steps {
        let mut best: Option<u16> = match self.captures {
            Captures::Marked(bits)
                if exits && bits[i / 64].load(Ordering::Relaxed) >> (i % 64) & 1 != 0 =>
            {
                Some(0)
            }
            _ => None,
        };
        let mut broken = false;
        let any = p.for_each_move(self.rules, |m| {
            let step = match m.outcome {
                Outcome::Continue {
                    child: c,
                    captured: 0,
                } => {
                    if blocks >> c.mover_seeds() & 1 == 0 {
                        return;
                    }
                    let c = self.index.rank_unchecked(&c) as usize;
                    match child(c) {
                        Some((t, _)) if -t != s => return,
                        None => return,
                        Some((_, NO_DISTANCE)) => {
                            broken = true;
                            return;
                        }
                        Some((_, d)) => u16::from(d),
                    }
                }
                Outcome::Continue { child, captured } => match self.captures {
                    Captures::Lower(lower)
                        if exits && captured as i8 - *lower.entry_of_child(&child) == s =>
                    {
                        0
                    }
                    // Marked captures are counted once, above.
                    _ => return,
                },
                Outcome::End { score } => {
                    if !exits || score != s {
                        return;
                    }
                    0
                }
            };
            best = Some(merge(best, step, s));
        });
        Steps { best, any, broken }
    }
}

/// The mover seed counts `m` of tier `index` whose block of indices
/// ([`TierIndex::mover_block`]) meets `range`, as bit `m` of a word: the only children a
/// window of distances over `range` can hold.
pub(crate) fn blocks_within(index: &TierIndex, range: &std::ops::Range<u64>) -> u64 {
    (0..=index.tier()).fold(0, |bits, m| {
        let b = index.mover_block(m);
        if b.start < range.end && range.start < b.end {
            bits | 1 << m
        } else {
            bits
        }
    })
}

/// `best` with `step` taken in, for a position of score `s`: the least for a favoured one,
/// the greatest for a disfavoured one.
#[inline]
pub(crate) fn merge(best: Option<u16>, step: u16, s: i8) -> u16 {
    match best {
        None => step,
        Some(b) if s > 0 => b.min(step),
        Some(b) => b.max(step),
    }
}

/// The distance its steps give a position of nonzero score `s`: 0 without a move; none when
/// a disfavoured position's keeping child has none (or nothing keeps the score); otherwise
/// one more than the best step.
#[inline]
pub(crate) fn expected_of(steps: Steps, s: i8) -> Option<u16> {
    if !steps.any {
        return Some(0);
    }
    if steps.broken && s < 0 {
        return None;
    }
    steps.best.map(|b| b + 1)
}

/// The distance of `p` (index `i`, score `s`) by its moves and its children's stored
/// distances: `None` for a score of 0, or when a child keeping a nonzero score has no
/// distance stored.
fn expected_distance(
    eq: &Equations<'_>,
    scores: &[i8],
    dist: &[u8],
    i: usize,
    p: &Position,
) -> Option<u16> {
    let s = scores[i];
    if s == 0 {
        return None;
    }
    expected_of(
        eq.steps(i, p, s, true, u64::MAX, |c| Some((scores[c], dist[c]))),
        s,
    )
}

/// What the first sweep learns of a position's moves.
#[derive(Clone, Copy, Default)]
struct FirstMoves {
    /// It has a legal move.
    any: bool,
    /// A move that leaves the tier keeps its score.
    keeping_exit: bool,
    /// Moves that stay in the tier and keep its score.
    keeping_inside: u8,
}

impl FirstMoves {
    /// A nonzero position's distance when its moves alone decide it (0 with no legal move,
    /// 1 for a favoured position with a keeping exit or a disfavoured one whose keeping
    /// moves all leave the tier), and, for a disfavoured position, how many of its keeping
    /// moves stay in the tier.
    fn first_distance(&self, s: i8) -> (Option<u8>, u8) {
        if !self.any {
            (Some(0), 0)
        } else if s > 0 {
            (self.keeping_exit.then_some(1), 0)
        } else if self.keeping_inside == 0 {
            (Some(1), 0)
        } else {
            (None, self.keeping_inside)
        }
    }
}
