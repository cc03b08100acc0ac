//! The state word of a position while its tier is solved, shared by the single-process and
//! the distributed solvers: low byte = the exit value while undecided, the score once
//! decided; bits 8..11 = the open count (legal moves that stay in the tier, at most 6);
//! bit 11 = decided; bit 12 = decided with a nonzero score that has not yet acted on its
//! parents.

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
