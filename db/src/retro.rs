//! For retrograde-analysis generators (such as `oware-solver`); probers do not need it.
//!
//! A generator walks a tier backwards and forwards at a few nanoseconds a position, so what
//! it needs is built for speed in bulk rather than for one probe:
//!
//! - un-moves: [`Position::unmoves`] (every parent of a position by a non-capturing move)
//!   and [`Position::unmoves_reachable`] (only the parents an index of reachable positions
//!   holds). They are inherent methods of [`Position`], listed here: moving them would
//!   change what the compiler inlines into a solver's innermost loops.
//! - [`ExitMoves`]: the moves of a position that leave its tier (captures, game ends), with
//!   the count of those that stay in it.
//! - sequential unranking: [`Cursor`] ([`TierIndex::cursor`]) over a range of indices, and
//!   [`Unranker`] ([`TierIndex::unranker`]) for increasing, sparse indices.
//! - [`rank_of_child`]: the rank of a position that was just written to memory, as the
//!   child of a move is; [`ChildRanker`]: the ranks of the children of positions visited in
//!   index order, half of each rank kept per house played.
//!
//! [`TierIndex::rank_unchecked`] (the rank of a position known to be in the index) is also
//! what a generator's loops use.

pub use crate::index::{ChildRanker, Cursor, Unranker};
pub use crate::moves::ExitMoves;

use crate::index::TierIndex;
use crate::position::Position;

/// The rank of `p` in `index`, which the caller guarantees holds it (as for
/// [`TierIndex::rank_unchecked`], checked in debug builds only; otherwise the result is
/// meaningless), for a position just stored to memory, such as a move's child.
///
/// It returns the same value as [`TierIndex::rank_unchecked`], from the board loaded as its
/// two 8-byte words: a rank through the reference lets the compiler read the board with
/// narrow loads, and the one of houses 6..=9 spans the two 8-byte stores that wrote it, so
/// it cannot be forwarded from them and waits.
#[inline]
pub fn rank_of_child(index: &TierIndex, p: &Position) -> u64 {
    debug_assert!(p.seeds() == index.tier() && index.kind().holds(p));
    index.rank_whole(p)
}
