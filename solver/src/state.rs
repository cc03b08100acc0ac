//! What the first pass finds of a position ([`Initial`]), and the 16-bit state word that the
//! distributed solver keeps of it while it solves the tier (the single-process solver packs
//! the same facts into one byte, see `cell.rs`): low byte = the exit value while undecided,
//! the score once decided; bits 8..11 = the open count (legal moves that stay in the tier, at
//! most 6); bit 11 = decided; bit 12 = decided with a nonzero score that has not yet acted on
//! its parents.

use oware_db::{ExitMoves, Outcome, Position};

/// One in-tier move in the open count.
pub(crate) const OPEN_ONE: u16 = 1 << 8;
/// The open count's bits.
pub(crate) const OPEN_MASK: u16 = 0x7 << 8;
/// The score is decided.
pub(crate) const DECIDED: u16 = 1 << 11;
/// Decided with a nonzero score that has not yet acted on its parents.
pub(crate) const PENDING: u16 = 1 << 12;
/// Exit value of a position without exits.
pub(crate) const NO_EXIT: i8 = i8::MIN;

/// The value byte of a state word.
#[inline]
pub(crate) fn val(s: u16) -> i8 {
    s as u8 as i8
}

/// A state word of value `v` and `flags` (open count and flag bits).
#[inline]
pub(crate) fn pack(v: i8, flags: u16) -> u16 {
    u16::from(v as u8) | flags
}

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
    /// captured)` is called for every capturing move; the caller folds `captured −
    /// score(child)` into `exit`.
    #[inline]
    pub(crate) fn of(
        p: &Position,
        exits: &mut ExitMoves,
        mut capture: impl FnMut(&Position, i8),
    ) -> Self {
        let mut exit = NO_EXIT;
        let open = exits.for_each(p, |m| match m.outcome {
            Outcome::Continue { child, captured } => capture(&child, captured as i8),
            Outcome::End { score } => exit = exit.max(score),
        });
        match open {
            Some(open) => Initial {
                exit,
                open: Some(open),
            },
            None => Initial {
                exit: p.end_score(),
                open: None,
            },
        }
    }

    /// Decided at once: no move stays in the tier.
    #[inline]
    pub(crate) fn closed(&self) -> bool {
        self.open.unwrap_or(0) == 0
    }
}

/// The initial state word of `p` before its captures are looked up: the best value over the
/// moves that end the game (or, with no legal move, the end score), and the open count, or
/// `DECIDED | PENDING` when no move stays in the tier (see [`Initial::of`]).
#[inline]
pub(crate) fn initial_word(
    p: &Position,
    exits: &mut ExitMoves,
    capture: impl FnMut(&Position, i8),
) -> u16 {
    let init = Initial::of(p, exits, capture);
    let flags = if init.closed() {
        DECIDED | PENDING
    } else {
        u16::from(init.open.unwrap_or(0)) * OPEN_ONE
    };
    pack(init.exit, flags)
}
