//! Distributed generation: one tier split by index range over several ranks that exchange
//! predecessor updates by message passing.
//!
//! - [`Comm`]: the collective operations the solver needs (rank, size, all-to-all exchange,
//!   all-reduce, barrier, gathers), with [`LocalComm`] (one process), [`ThreadComm`]
//!   (simulated ranks as threads, used by the tests) and, with the cargo feature `mpi`,
//!   `MpiComm` (MPI processes through rsmpi).
//! - [`solve_tier_local`]: one rank's part of a tier; [`solve_tier_partitioned`]: the same,
//!   gathered on rank 0. The scores are byte-identical to those of [`crate::tier::solve_tier`].

mod arrays;
mod comm;
mod lookup;
#[cfg(feature = "mpi")]
mod mpi;
mod partition;
mod share;
mod solve;
mod verify;
mod write;

pub use comm::{Comm, LocalComm, ThreadComm};
#[cfg(feature = "mpi")]
pub use mpi::MpiComm;
pub use partition::{LocalScores, Partition, PartitionConfig, PARTITION_ALIGN};
pub use share::LowerShare;
pub use solve::{
    all_gather_scores, gather_scores, solve_tier_local, solve_tier_partitioned, PartitionStats,
    RankLower,
};
pub use verify::{verify_tier_local, LocalVerdict};
pub use write::write_table_distributed;

pub(crate) use arrays::agree_arrays;
