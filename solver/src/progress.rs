//! Progress reporting, kept free of any terminal library: the command line implements
//! [`Progress`] with progress bars.

/// A phase of solving one tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Computing every position's exits and open count; counted in positions.
    Init,
    /// Deciding scores level by level; counted in positions decided (positions scored 0 by
    /// endless play are never counted).
    Propagate,
    /// Computing the distances to conversion of a tier just solved; counted in positions
    /// (all at once, when done).
    Distances,
    /// Compressing and writing the table; counted in positions.
    Write,
}

impl Phase {
    /// A short name for logs.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Init => "init",
            Phase::Propagate => "propagate",
            Phase::Distances => "distances",
            Phase::Write => "write",
        }
    }
}

/// Receives progress events. Implementations must be cheap and thread-safe: `advance` is
/// called from worker threads.
pub trait Progress: Sync {
    /// A phase begins with `total` units of work.
    fn start(&self, phase: Phase, total: u64);
    /// `units` more units of the current phase are done.
    fn advance(&self, units: u64);
}

/// Reports nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _phase: Phase, _total: u64) {}
    fn advance(&self, _units: u64) {}
}
