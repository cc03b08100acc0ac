//! A rank's arrays for a tier, allocated before its first exchange: where one rank cannot
//! have its own, every rank stops with it rather than wait for it in a collective.

use super::{lowest_rank_where, Comm};
use crate::error::{AllocError, OtherRankFailed};

/// `own` (this rank's arrays for tier `tier`, or the error that stopped their allocation) if
/// every rank of `comm` allocated its own; otherwise this rank's error where the allocation
/// failed, and on every other rank an [`AllocError`] for its own `bytes` of `what` (over
/// `positions` positions) that names the first rank that failed and the bytes that rank
/// asked for ([`AllocError::failed_rank`]). A collective: every rank calls it once it has
/// tried its allocations.
///
/// # Errors
/// [`AllocError`] where any rank's allocation failed.
pub(crate) fn agree_arrays<T>(
    comm: &dyn Comm,
    own: Result<T, AllocError>,
    tier: u8,
    what: &'static str,
    positions: u64,
    bytes: u64,
) -> Result<T, AllocError> {
    // The first rank that failed; then it alone adds the bytes it asked for.
    let Some(failed) = lowest_rank_where(comm, own.is_err()) else {
        return own;
    };
    let asked = comm.all_reduce_sum(match &own {
        Err(e) if comm.rank() == failed => e.bytes,
        _ => 0,
    });
    own?;
    Err(AllocError {
        tier,
        what,
        positions,
        bytes,
        cause: std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            OtherRankFailed {
                rank: failed,
                asked,
            },
        ),
    })
}
