//! The state word of a position while its tier is solved, shared by the single-process and
//! the distributed solvers: low byte = the exit value while undecided, the score once
//! decided; bits 8..11 = the open count (legal moves that stay in the tier, at most 6);
//! bit 11 = decided; bit 12 = decided with a nonzero score that has not yet acted on its
//! parents.

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

/// The initial state word of `p` before its captures are looked up: the best value over the
/// moves that end the game (or, with no legal move, the end score), and the open count, or
/// `DECIDED | PENDING` when no move stays in the tier. `capture(child, captured)` is called
/// for every capturing move; the caller folds `captured − score(child)` into the value.
/// `exits` finds the moves under the tier's rules (see [`ExitMoves`]).
#[inline]
pub(crate) fn initial_word(
    p: &Position,
    exits: &mut ExitMoves,
    mut capture: impl FnMut(&Position, i8),
) -> u16 {
    let mut exit = NO_EXIT;
    let open = exits.for_each(p, |m| match m.outcome {
        Outcome::Continue { child, captured } => capture(&child, captured as i8),
        Outcome::End { score } => exit = exit.max(score),
    });
    let Some(open) = open else {
        return pack(p.end_score(), DECIDED | PENDING);
    };
    let flags = if open == 0 {
        DECIDED | PENDING
    } else {
        u16::from(open) * OPEN_ONE
    };
    pack(exit, flags)
}
