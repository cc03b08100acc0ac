//! The first pass over a tier: what it finds of each position ([`Initial`]: its exit and
//! open count) and the first cells it writes from that ([`first_cells`]), for both the
//! single-process and the distributed solver, and the sweeps of the sliced first pass
//! ([`fold_cells`]) when the lower tiers are read in slices.

use std::sync::atomic::{AtomicU8, Ordering};

use oware_db::index::{ChildRanker, TierIndex};
use oware_db::retro::ExitMoves;
use oware_db::{Outcome, Position, Rules};

use crate::lower::slice::Loaded;
use crate::lower::LowerTiers;
use crate::prefetch::prefetch;
use crate::solve::cell::{Codes, FarExits, NO_EXIT};

/// What the first pass finds of a position before its captures are looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Initial {
    /// The best value over the moves that end the game, or `NO_EXIT`; with no legal move,
    /// the end score.
    pub exit: i8,
    /// Legal moves that stay in the tier; `None` when the position has no legal move.
    pub open: Option<u8>,
}

impl Initial {
    /// Finds the moves of `p` under the tier's rules (see [`ExitMoves`]): `capture(child,
    /// captured, house)` is called for every capturing move; the caller folds `captured −
    /// score(child)` into `exit`.
    #[inline]
    pub(crate) fn of(
        p: &Position,
        exits: &mut ExitMoves,
        mut capture: impl FnMut(&Position, i8, u8),
    ) -> Self {
        let mut exit = NO_EXIT;
        let open = exits.for_each(p, |m| match m.outcome {
            Outcome::Continue { child, captured } => capture(&child, captured as i8, m.house),
            Outcome::End { score } => exit = exit.max(score),
        });
        let exit = if open.is_some() { exit } else { p.end_score() };
        Initial { exit, open }
    }
}

/// Writes the first cells of `positions` of tier `index` (a chunk of at most 2^16, one for
/// each cell of `out`): exit and open count, coded by `codes`. Captures are looked up in
/// `lower` in batches: the children of a batch's captures are gathered first, then ranked by
/// a [`ChildRanker`] (the positions come in index order, or in runs of it, so the half of a
/// child's rank that the mover's side decides is mostly kept) with their scores prefetched,
/// then read. Returns the chunk's exits that are too low for a cell code, by
/// offset in the chunk.
#[inline]
pub(crate) fn first_cells(
    rules: &Rules,
    index: &TierIndex,
    lower: &LowerTiers,
    codes: Codes,
    mut positions: impl Iterator<Item = Position>,
    out: &[AtomicU8],
) -> FarExits {
    const SUB: usize = 32;
    debug_assert!(out.len() <= 1 << 16);
    let mut children: Vec<Capture> = Vec::with_capacity(SUB * 6);
    let mut captures: Vec<(usize, &i8, i8)> = Vec::with_capacity(SUB * 6);
    let mut inits = [Initial {
        exit: NO_EXIT,
        open: None,
    }; SUB];
    let mut exits = ExitMoves::new(rules);
    let mut ranker = ChildRanker::new(index.kind());
    let mut far = Vec::new();
    for (s, sub) in out.chunks(SUB).enumerate() {
        children.clear();
        for (slot, init) in inits.iter_mut().enumerate().take(sub.len()) {
            let p = positions.next().unwrap_or_default();
            *init = Initial::of(&p, &mut exits, |child, captured, house| {
                children.push(Capture {
                    child: *child,
                    slot: slot as u8,
                    house,
                    captured,
                });
            });
        }
        captures.clear();
        for c in &children {
            let (_, _, entry) = lower.entry_ranked(&c.child, &mut ranker, c.house);
            prefetch(entry);
            captures.push((usize::from(c.slot), entry, c.captured));
        }
        for &(slot, entry, captured) in &captures {
            let v = captured - *entry;
            inits[slot].exit = inits[slot].exit.max(v);
        }
        for (slot, (cell, &init)) in sub.iter().zip(&inits).enumerate() {
            let (c, low_exit) = codes.initial(init.exit, init.open);
            if let Some(e) = low_exit {
                far.push(((s * SUB + slot) as u16, e));
            }
            cell.store(c, Ordering::Relaxed);
        }
    }
    far.into_boxed_slice()
}

/// A capture found by the first pass, to be looked up: the child, the slot of its parent in
/// the batch, the house played and the seeds captured.
#[derive(Clone, Copy)]
struct Capture {
    child: Position,
    slot: u8,
    house: u8,
    captured: i8,
}

/// Which sweep of a sliced first pass (see [`fold_cells`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Sweep {
    /// The first of several: the cells receive each position's exit so far (game ends and
    /// the captures into this slice) as an `i8`, `NO_EXIT` for none.
    First,
    /// Neither first nor last: the captures into this slice are folded into the cells.
    Middle,
    /// The last (the only one when the window is one slice, then also folding game ends):
    /// the captures into this slice are folded in, and the cells encoded by `codes`.
    Last {
        /// The tier's codes.
        codes: Codes,
        /// Whether this is also the first sweep.
        first: bool,
    },
}

/// One sweep of the sliced first pass over the positions of indices `start..start +
/// out.len()` of tier `index` (a chunk of at most 2^16 positions): generates their moves,
/// folds `captured − score(child)` into the exit held in the cell for every capture whose
/// child `slice` holds (gathered, ranked and prefetched in batches, as in [`first_cells`]),
/// and on the last sweep encodes the cells as [`first_cells`] does. Between sweeps a cell
/// holds the position's exit so far (game ends included), so after the last sweep every
/// capture of the window has been folded in exactly once. Returns the chunk's exits that are
/// too low for a cell code on the last sweep (empty before).
#[inline]
pub(crate) fn fold_cells(
    rules: &Rules,
    index: &TierIndex,
    slice: &Loaded<'_>,
    sweep: Sweep,
    start: u64,
    out: &[AtomicU8],
) -> FarExits {
    const SUB: usize = 32;
    debug_assert!(out.len() <= 1 << 16);
    let first = matches!(sweep, Sweep::First | Sweep::Last { first: true, .. });
    let mut cursor = index.cursor(start, start + out.len() as u64);
    let mut children: Vec<Capture> = Vec::with_capacity(SUB * 6);
    let mut captures: Vec<(usize, &i8, i8)> = Vec::with_capacity(SUB * 6);
    let mut inits = [Initial {
        exit: NO_EXIT,
        open: None,
    }; SUB];
    let mut exits = ExitMoves::new(rules);
    let mut ranker = ChildRanker::new(index.kind());
    let mut far = Vec::new();
    for (s, sub) in out.chunks(SUB).enumerate() {
        children.clear();
        for (slot, (init, cell)) in inits.iter_mut().zip(sub).enumerate() {
            let p = cursor.next().unwrap_or_default();
            *init = Initial::of(&p, &mut exits, |child, captured, house| {
                children.push(Capture {
                    child: *child,
                    slot: slot as u8,
                    house,
                    captured,
                });
            });
            if !first {
                init.exit = cell.load(Ordering::Relaxed) as i8;
            }
        }
        captures.clear();
        for c in &children {
            if let Some(entry) = slice.entry_ranked(&c.child, &mut ranker, c.house) {
                prefetch(entry);
                captures.push((usize::from(c.slot), entry, c.captured));
            }
        }
        for &(slot, entry, captured) in &captures {
            let v = captured - *entry;
            inits[slot].exit = inits[slot].exit.max(v);
        }
        for (slot, (cell, &init)) in sub.iter().zip(&inits).enumerate() {
            let c = match sweep {
                Sweep::Last { codes, .. } => {
                    let (c, low_exit) = codes.initial(init.exit, init.open);
                    if let Some(e) = low_exit {
                        far.push(((s * SUB + slot) as u16, e));
                    }
                    c
                }
                _ => init.exit as u8,
            };
            cell.store(c, Ordering::Relaxed);
        }
    }
    far.into_boxed_slice()
}
