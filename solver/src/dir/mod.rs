//! The table directory: its tier files read and written in parallel, its checks, the
//! writer's lock and temporaries, and the disk each tier needs.

pub(crate) mod check;
pub(crate) mod disk;
pub(crate) mod lock;
pub(crate) mod read;
pub(crate) mod write;

/// The scratch directory, inside the table directory, of the lower tiers' side copies.
pub const SCRATCH_DIR: &str = ".scratch";
