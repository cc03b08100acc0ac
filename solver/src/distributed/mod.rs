//! The cluster path's public face: one tier split over several ranks ([`Partition`]) that
//! exchange their updates by message passing. The code lives with what it extends: the
//! communicators and the split in `comm/` (below the engines), each engine's ranked form
//! beside its one-process form (`solve/partitioned.rs`, `verify/ranks.rs`), the share of
//! the lower tiers and its look-ups in `lower/`, the ranks' table writer in `dir/`.
//!
//! - [`Comm`]: the collective operations the solver needs (rank, size, all-to-all exchange,
//!   all-reduce, barrier, gathers), with [`LocalComm`] (one process), [`ThreadComm`]
//!   (simulated ranks as threads, used by the tests) and, with the cargo feature `mpi`,
//!   `MpiComm` (MPI processes through rsmpi).
//! - [`solve_tier_local`]: one rank's part of a tier; [`solve_tier_partitioned`]: the same,
//!   gathered on rank 0. The scores are byte-identical to those of [`crate::tier::solve_tier`].

#[cfg(feature = "mpi")]
pub use crate::comm::MpiComm;
pub use crate::comm::{
    Comm, LocalComm, LocalScores, Partition, PartitionConfig, Piece, PlaceCursor, ThreadComm,
    PARTITION_ALIGN,
};
pub use crate::dir::write_ranked::{write_distances_distributed, write_table_distributed};
pub use crate::lower::share::LowerShare;
pub use crate::solve::partitioned::{
    all_gather_scores, gather_scores, solve_tier_local, solve_tier_partitioned, PartitionStats,
    RankLower,
};
pub use crate::verify::ranks::{verify_tier_local, LocalVerdict};
