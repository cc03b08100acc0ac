//! The granules of the per-tier bookkeeping that the solver, the verifier and the memory
//! planner share.

/// Positions per level mask: one mask says which levels its positions may still act at,
/// so the scan that starts a level skips the granules without it (a divisor of the
/// solver's and the verifier's chunks, and a multiple of 64).
pub(crate) const LEVEL_GRANULE: usize = 1024;

/// Positions per dirty flag of the solver's frontier (a multiple of 64 dividing its chunk).
pub(crate) const DIRTY: usize = 1024;
