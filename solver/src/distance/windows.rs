//! The check of a tier's distances ([`check_distances`](super::check_distances)) when they
//! do not fit in memory beside its scores: read a window of the tier's indices at a time
//! ([`DistanceSource`]). For each window of positions, every window of children is read in
//! turn, and each position's keeping moves into it are folded into one byte per position of
//! the window (the least or greatest step so far); once every window of children has been
//! read, each position's distance is checked against its equation. Memory beside the scores:
//! three windows (the positions', their folded steps, the children's). Time: the moves of the
//! tier are made once per window, and the windows read once per pair.

use std::ops::Range;

use oware_db::Rules;
use rayon::prelude::*;

use super::{
    expected_of, keeping_captures, merge, tier_index, verdict, Captures, DistanceError, Equations,
    Steps, CHUNK,
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
    check_windows(rules, n, scores, Captures::Lower(lower), source, window)
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
    let keeps = keeping_captures(rules, n, scores, source, slice_bytes)?;
    check_windows(
        rules,
        n,
        scores,
        Captures::Marked(&keeps),
        distances,
        window,
    )
}

fn check_windows(
    rules: &Rules,
    n: u8,
    scores: &[i8],
    captures: Captures<'_>,
    source: &dyn DistanceSource,
    window: u64,
) -> Result<(), DistanceError> {
    let index = tier_index(n, scores)?;
    let size = index.size();
    let window = window.max(1);
    let windows: Vec<Range<u64>> = (0..size.div_ceil(window))
        .map(|k| k * window..((k + 1) * window).min(size))
        .collect();
    let eq = Equations {
        rules,
        index: &index,
        scores,
        captures,
    };
    let (mut own, mut children) = (Vec::new(), Vec::new());
    let mut folded: Vec<u8> = Vec::new();
    for wp in &windows {
        source.read(wp.clone(), &mut own)?;
        if own.len() as u64 != wp.end - wp.start {
            return Err(DistanceError::Length {
                tier: n,
                got: own.len(),
                positions: wp.end - wp.start,
            });
        }
        folded.clear();
        folded.resize(own.len(), NO_STEP);
        // The lowest position of the window whose disfavoured score met a keeping child
        // without a distance.
        let mut broken: Option<u64> = None;
        for (k, wc) in windows.iter().enumerate() {
            let dc: &[u8] = if wc == wp {
                &own
            } else {
                source.read(wc.clone(), &mut children)?;
                &children
            };
            let found = fold(&eq, wp, wc, dc, k == 0, &mut folded);
            broken = broken.into_iter().chain(found).min();
        }
        // Each position's equation, with every child's step folded in; a position that met a
        // keeping child without a distance fails whatever its steps.
        let first = own
            .par_chunks(CHUNK)
            .zip(folded.par_chunks(CHUNK))
            .enumerate()
            .find_map_first(|(c, (stored, folded))| {
                let start = wp.start + (c * CHUNK) as u64;
                let cursor = index.cursor(start, start + stored.len() as u64);
                for (k, p) in cursor.enumerate() {
                    let i = start + k as u64;
                    let s = scores[i as usize];
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
            let stored = own[(b - wp.start) as usize];
            verdict(n, b, scores[b as usize], stored, None)
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

/// Folds into `folded` the steps of the positions of window `wp` through their keeping
/// moves into window `wc` (whose distances are `dc`), and their exits when `exits`. Returns
/// the lowest position whose disfavoured score met a keeping child there without a distance.
fn fold(
    eq: &Equations<'_>,
    wp: &Range<u64>,
    wc: &Range<u64>,
    dc: &[u8],
    exits: bool,
    folded: &mut [u8],
) -> Option<u64> {
    folded
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(c, part)| {
            let start = wp.start + (c * CHUNK) as u64;
            let cursor = eq.index.cursor(start, start + part.len() as u64);
            let mut broken = None;
            for (k, p) in cursor.enumerate() {
                let i = start as usize + k;
                let s = eq.scores[i];
                if s == 0 {
                    continue;
                }
                let steps = eq.steps(i, &p, s, exits, |child| {
                    let at = (child as u64).wrapping_sub(wc.start);
                    dc.get(at as usize).copied()
                });
                if steps.broken && s < 0 && broken.is_none() {
                    broken = Some(i as u64);
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
