//! The errors the solver and the verifier share: an array that cannot be allocated, and a
//! lower tier that cannot be read.

use thiserror::Error;

/// An array of the solver that could not be allocated: which, for which tier, and its size.
#[derive(Debug, Error)]
#[error(
    "tier {tier}: cannot allocate the {what} of {positions} positions ({bytes} bytes): {cause}"
)]
pub struct AllocError {
    /// The tier being solved.
    pub tier: u8,
    /// What the array holds (`cells`, `frontier`, ...).
    pub what: &'static str,
    /// Positions the array covers.
    pub positions: u64,
    /// Bytes asked for.
    pub bytes: u64,
    /// Why the allocation failed.
    pub cause: std::io::Error,
}

impl AllocError {
    /// The failure to allocate `len` elements of `T` for `what` of tier `tier`
    /// (`positions` positions).
    pub(crate) fn new<T>(
        tier: u8,
        what: &'static str,
        positions: u64,
        len: usize,
        cause: std::io::Error,
    ) -> Self {
        AllocError {
            tier,
            what,
            positions,
            bytes: (len as u64).saturating_mul(std::mem::size_of::<T>() as u64),
            cause,
        }
    }

    /// Over several ranks, the rank whose allocation failed where this rank's did not: it
    /// stopped this one with it, and reports its own error. `None` for this rank's own
    /// failure.
    pub fn failed_rank(&self) -> Option<usize> {
        let cause = self.cause.get_ref()?;
        cause
            .downcast_ref::<OtherRankFailed>()
            .map(|o| o.rank)
            .or_else(|| cause.downcast_ref::<OtherRankOutgrew>().map(|o| o.rank))
    }
}

/// The cause of an [`AllocError`] on a rank whose own allocation succeeded: another rank's
/// failed.
#[derive(Debug, Error)]
#[error("rank {rank} could not allocate its own ({asked} bytes asked)")]
pub(crate) struct OtherRankFailed {
    /// The rank that failed (the lowest, if several did).
    pub(crate) rank: usize,
    /// The bytes it asked for.
    pub(crate) asked: u64,
}

/// The cause of the far-exit lists' [`AllocError`] on a rank whose own lists fit: another
/// rank's outgrew the room its memory plan leaves them.
#[derive(Debug, Error)]
#[error("rank {rank}'s lists took {bytes} bytes, more than its memory plan leaves them")]
pub(crate) struct OtherRankOutgrew {
    /// The rank whose lists took the most bytes when they outgrew their room (the lowest,
    /// if several took as many).
    pub(crate) rank: usize,
    /// Those bytes.
    pub(crate) bytes: u64,
}

/// A failed reservation as an I/O error (out of memory).
pub(crate) trait IntoIo {
    fn into_io(self) -> std::io::Error;
}

impl IntoIo for std::collections::TryReserveError {
    fn into_io(self) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::OutOfMemory, self.to_string())
    }
}

/// What stops a tier solved (or verified): an allocation, a lower tier that cannot be read
/// (when read in slices), or a scratch file of distances kept out of core.
#[derive(Debug, Error)]
pub enum SolveError {
    /// An array of the solver, or the slice buffer, could not be allocated.
    #[error(transparent)]
    Alloc(#[from] AllocError),
    /// The scores of a lower tier could not be read.
    #[error(transparent)]
    Lower(#[from] oware_db::Error),
    /// A scratch file of the distances kept out of core
    /// ([`Tuning::spill`](crate::tier::Tuning::spill)) could not be written or read.
    #[error("tier {tier}: scratch file {}: {source}", path.display())]
    Scratch {
        /// The tier.
        tier: u8,
        /// The file.
        path: std::path::PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}
