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

/// Where a check reads a window of a tier's children: their scores and stored distances.
pub(crate) trait ChildSource: Sync {
    /// The scores of the indices `range` where they are held (no copy), or `None`.
    fn held_scores(&self, range: Range<u64>) -> Option<&[i8]>;

    /// Reads the scores of the indices `range` into `out`, resized to its length.
    ///
    /// # Errors
    /// [`DistanceError::Lower`] when they cannot be read.
    fn read_scores(&self, range: Range<u64>, out: &mut Vec<i8>) -> Result<(), DistanceError>;

    /// Reads the distances of the indices `range`, whose scores are `scores`, into `out`,
    /// resized to its length.
    ///
    /// # Errors
    /// [`DistanceError::Read`] when they cannot be read.
    fn read_distances(
        &self,
        range: Range<u64>,
        scores: &[i8],
        out: &mut Vec<u8>,
    ) -> Result<(), DistanceError>;
}

/// The children of a tier whose scores are held whole, their distances read from a
/// [`DistanceSource`].
struct HeldScores<'a> {
    scores: &'a [i8],
    source: &'a dyn DistanceSource,
}

impl ChildSource for HeldScores<'_> {
    fn held_scores(&self, range: Range<u64>) -> Option<&[i8]> {
        self.scores.get(range.start as usize..range.end as usize)
    }

    fn read_scores(&self, range: Range<u64>, out: &mut Vec<i8>) -> Result<(), DistanceError> {
        out.clear();
        out.extend_from_slice(&self.scores[range.start as usize..range.end as usize]);
        Ok(())
    }

    fn read_distances(
        &self,
        range: Range<u64>,
        _scores: &[i8],
        out: &mut Vec<u8>,
    ) -> Result<(), DistanceError> {
        self.source.read(range, out)
    }
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
    let size = tier_index(n, scores)?.size();
    let children = HeldScores { scores, source };
    check_range(
        rules,
        n,
        0..size,
        scores,
        Captures::Lower(lower),
        &children,
        window,
    )
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
    let size = tier_index(n, scores)?.size();
    let keeps = keeping_captures(rules, n, 0, scores, source, slice_bytes)?;
    let children = HeldScores {
        scores,
        source: distances,
    };
    check_range(
        rules,
        n,
        0..size,
        scores,
        Captures::Marked(&keeps),
        &children,
        window,
    )
}

/// The distances of the positions `own` of tier `n` (their scores `scores`) checked as
/// [`check_distances_sliced_windowed`] checks a whole tier's, the scores and distances of
/// their children read from `children` a window at a time: what one rank of several checks
/// of its range. Memory beside `scores`: four windows (three where `children` holds the
/// scores), a bit per position and one slice.
///
/// # Errors
/// As [`check_distances_sliced_windowed`], the lowest failing index of `own` named;
/// [`DistanceError::Length`] when `scores` is not as long as `own` or `own` is not within
/// the tier.
///
/// # Panics
/// If `n > 48`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_distances_range(
    rules: &Rules,
    n: u8,
    own: Range<u64>,
    scores: &[i8],
    source: &dyn ScoreSource,
    slice_bytes: u64,
    children: &dyn ChildSource,
    window: u64,
) -> Result<(), DistanceError> {
    let keeps = keeping_captures(rules, n, own.start, scores, source, slice_bytes)?;
    check_range(
        rules,
        n,
        own,
        scores,
        Captures::Marked(&keeps),
        children,
        window,
    )
}

/// The check of the positions `own` (their scores `scores`, their bits in `captures` from
/// `own.start`), by windows of at most `window` of them against every window of the tier's
/// children.
fn check_range(
    rules: &Rules,
    n: u8,
    own: Range<u64>,
    scores: &[i8],
    captures: Captures<'_>,
    children: &dyn ChildSource,
    window: u64,
) -> Result<(), DistanceError> {
    let index = TierIndex::new(n, IndexKind::Reachable);
    let size = index.size();
    if scores.len() as u64 != own.end.saturating_sub(own.start) || own.end > size {
        return Err(DistanceError::Length {
            tier: n,
            got: scores.len(),
            positions: own.end.saturating_sub(own.start),
        });
    }
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
    let (mut own_dist, mut child_scores, mut child_dist) = (Vec::new(), Vec::new(), Vec::new());
    let mut folded: Vec<u8> = Vec::new();
    for wp in cut(own.clone()) {
        let ws = &scores[(wp.start - own.start) as usize..(wp.end - own.start) as usize];
        children.read_distances(wp.clone(), ws, &mut own_dist)?;
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
            let cs = match children.held_scores(wc.clone()) {
                Some(held) => held,
                None => {
                    children.read_scores(wc.clone(), &mut child_scores)?;
                    &child_scores
                }
            };
            children.read_distances(wc.clone(), cs, &mut child_dist)?;
            let window = Window {
                positions: wp.clone(),
                scores: ws,
                bits_from: own.start,
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
    /// The index whose bit is the first of [`Captures::Marked`].
    bits_from: u64,
    /// The children's indices, their scores and distances.
    children: Range<u64>,
    child_scores: &'a [i8],
    child_dist: &'a [u8],
}

/// Folds into `folded` the steps of the positions of `w` through their keeping moves into
/// its children, and their exits when `exits`. Returns the lowest position whose
/// disfavoured score met a keeping child there without a distance.
fn fold(eq: &Equations<'_>, w: &Window<'_>, exits: bool, folded: &mut [u8]) -> Option<u64> {
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
                if s == 0 {
                    continue;
                }
                let bit = (i - w.bits_from) as usize;
                let steps = eq.steps(bit, &p, s, exits, |child| {
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
