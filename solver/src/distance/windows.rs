//! The check of a tier's distances ([`check_distances`](super::check_distances)) when they
//! do not fit in memory beside its scores: read a window of the tier's indices at a time
//! ([`DistanceSource`]). For each window of positions, every window of children is read in
//! turn, and each position's keeping moves into it are folded into one byte per position of
//! the window (the least or greatest step so far); once every window of children has been
//! read, each position's distance is checked against its equation. Memory beside the scores:
//! three windows (the positions', their folded steps, the children's). Time: the moves of the
//! tier are made once per window, and the windows read once per pair.

use std::ops::Range;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::Rules;
use rayon::prelude::*;

use super::{
    blocks_within, expected_of, keeping_captures, merge, tier_index, verdict, Captures,
    DistanceError, Equations, Steps, CHUNK,
};
use crate::lower::slice::ScoreSource;
use crate::lower::LowerTiers;
use crate::solve::rounds::has_no_move;

/// Where a check reads the stored distances of a tier, a window at a time: a distance table
/// decoded by ranges, say.
pub trait DistanceSource: Sync {
    /// Reads the distances of the indices `range` into `out`, resized to its length.
    ///
    /// # Errors
    /// [`DistanceError::Read`] when they cannot be read.
    fn read(&self, range: Range<u64>, out: &mut Vec<u8>) -> Result<(), DistanceError>;
}

/// The folded steps of a position not yet given one.
const NO_STEP: u8 = u8::MAX;

/// [`check_distances`](super::check_distances) reading the distances from `source` in
/// windows of at most `window` positions (at least 1), for a tier whose distances do not fit
/// beside its scores: the same verdict, the lowest failing index named. Runs on the current
/// rayon pool.
///
/// # Errors
/// As [`check_distances`](super::check_distances); what `source` returns.
///
/// # Panics
/// As [`check_distances`](super::check_distances).
pub fn check_distances_windowed(
    rules: &Rules,
    n: u8,
    scores: &[i8],
    lower: &LowerTiers,
    source: &dyn DistanceSource,
    window: u64,
) -> Result<(), DistanceError> {
    tier_index(n, scores)?;
    check_range(rules, n, scores, Captures::Lower(lower), source, window)
}

/// [`check_distances_sliced`](super::check_distances_sliced) reading the distances from
/// `distances` in windows of at most `window` positions, as [`check_distances_windowed`]
/// does. Memory beside the scores: three windows, a bit per position and one slice.
///
/// # Errors
/// As [`check_distances_sliced`](super::check_distances_sliced); what `distances` returns.
///
/// # Panics
/// If `n > 48`.
pub fn check_distances_sliced_windowed(
    rules: &Rules,
    n: u8,
    scores: &[i8],
    source: &dyn ScoreSource,
    slice_bytes: u64,
    distances: &dyn DistanceSource,
    window: u64,
) -> Result<(), DistanceError> {
    tier_index(n, scores)?;
    let keeps = keeping_captures(rules, n, 0, scores, source, slice_bytes)?;
    check_range(
        rules,
        n,
        scores,
        Captures::Marked(&keeps),
        distances,
        window,
    )
}

/// The check of the positions of tier `n` (their scores `scores`, held whole), by windows of
/// at most `window` of them against every window of their children, the distances of both
/// read from `source`.
fn check_range(
    rules: &Rules,
    n: u8,
    scores: &[i8],
    captures: Captures<'_>,
    source: &dyn DistanceSource,
    window: u64,
) -> Result<(), DistanceError> {
    let index = TierIndex::new(n, IndexKind::Reachable);
    let size = index.size();
    let window = window.max(1);
    let cut = |r: Range<u64>| -> Vec<Range<u64>> {
        (r.start..r.end)
            .step_by(window as usize)
            .map(|a| a..(a + window).min(r.end))
            .collect()
    };
    let eq = Equations {
        rules,
        index: &index,
        captures,
    };
    let (mut own_dist, mut child_dist) = (Vec::new(), Vec::new());
    let mut folded: Vec<u8> = Vec::new();
    for wp in cut(0..size) {
        let ws = &scores[wp.start as usize..wp.end as usize];
        source.read(wp.clone(), &mut own_dist)?;
        if own_dist.len() as u64 != wp.end - wp.start {
            return Err(DistanceError::Length {
                tier: n,
                got: own_dist.len(),
                positions: wp.end - wp.start,
            });
        }
        folded.clear();
        folded.resize(own_dist.len(), NO_STEP);
        // The lowest position of the window whose disfavoured score met a keeping child
        // without a distance.
        let mut broken: Option<u64> = None;
        for (k, wc) in cut(0..size).into_iter().enumerate() {
            let cs = &scores[wc.start as usize..wc.end as usize];
            source.read(wc.clone(), &mut child_dist)?;
            let window = Window {
                positions: wp.clone(),
                scores: ws,
                blocks: blocks_within(&index, &wc),
                children: wc,
                child_scores: cs,
                child_dist: &child_dist,
            };
            let found = fold(&eq, &window, k == 0, &mut folded);
            broken = broken.into_iter().chain(found).min();
        }
        // Each position's equation, with every child's step folded in; a position that met a
        // keeping child without a distance fails whatever its steps.
        let first = own_dist
            .par_chunks(CHUNK)
            .zip(folded.par_chunks(CHUNK))
            .enumerate()
            .find_map_first(|(c, (stored, folded))| {
                let start = wp.start + (c * CHUNK) as u64;
                let cursor = index.cursor(start, start + stored.len() as u64);
                for (k, p) in cursor.enumerate() {
                    let i = start + k as u64;
                    let s = ws[(i - wp.start) as usize];
                    let expected = (s != 0)
                        .then(|| {
                            let steps = Steps {
                                best: (folded[k] != NO_STEP).then_some(u16::from(folded[k])),
                                any: !has_no_move(&p, rules),
                                broken: false,
                            };
                            expected_of(steps, s)
                        })
                        .flatten();
                    if let Some(e) = verdict(n, i, s, stored[k], expected) {
                        return Some(e);
                    }
                }
                None
            });
        let broken = broken.and_then(|b| {
            let at = (b - wp.start) as usize;
            verdict(n, b, ws[at], own_dist[at], None)
        });
        let lowest = first.into_iter().chain(broken).min_by_key(|e| match e {
            DistanceError::Wrong { index, .. } => *index,
            _ => u64::MAX,
        });
        if let Some(e) = lowest {
            return Err(e);
        }
    }
    Ok(())
}

/// A window of positions and a window of their children, as [`fold`] reads them.
struct Window<'a> {
    /// The positions' indices and their scores.
    positions: Range<u64>,
    scores: &'a [i8],
    /// The children's indices, their scores and distances.
    children: Range<u64>,
    /// The mover seed counts whose blocks meet `children` ([`blocks_within`]).
    blocks: u64,
    child_scores: &'a [i8],
    child_dist: &'a [u8],
}

/// Folds into `folded` the steps of the positions of `w` through their keeping moves into
/// its children, and their exits when `exits`. Returns the lowest position whose
/// disfavoured score met a keeping child there without a distance.
fn fold(eq: &Equations<'_>, w: &Window<'_>, exits: bool, folded: &mut [u8]) -> Option<u64> {
    let n = eq.index.tier();
    folded
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(c, part)| {
            let start = w.positions.start + (c * CHUNK) as u64;
            let cursor = eq.index.cursor(start, start + part.len() as u64);
            let mut broken = None;
            for (k, p) in cursor.enumerate() {
                let i = start + k as u64;
                let s = w.scores[(i - w.positions.start) as usize];
                // A move that stays in the tier leaves the opponent's seeds to the child's
                // mover and may sow more: a child's mover holds at least the parent's
                // opponent's seeds. Without exits to fold, a position none of whose children
                // can be in the window is skipped.
                if s == 0 || (!exits && w.blocks >> (n - p.mover_seeds()) == 0) {
                    continue;
                }
                let bit = i as usize;
                let steps = eq.steps(bit, &p, s, exits, w.blocks, |child| {
                    let at = (child as u64).wrapping_sub(w.children.start) as usize;
                    Some((*w.child_scores.get(at)?, *w.child_dist.get(at)?))
                });
                if steps.broken && s < 0 && broken.is_none() {
                    broken = Some(i);
                }
                if let Some(step) = steps.best {
                    let before = (part[k] != NO_STEP).then_some(u16::from(part[k]));
                    // A step past a byte's range is past any distance stored: kept as the
                    // largest that is not NO_STEP, which no equation then meets.
                    part[k] = merge(before, step, s).min(u16::from(NO_STEP - 1)) as u8;
                }
            }
            broken
        })
        .reduce(|| None, |a, b| a.into_iter().chain(b).min())
}
