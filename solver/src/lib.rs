//! # oware-solver
//!
//! Generation and deep verification of Oware endgame databases by retrograde analysis, tier
//! by tier, on one process or over the ranks of an MPI job.
//!
//! - The jobs, at the root: [`generate`] solves tiers into a directory of tables,
//!   resumably; [`verify_deep`] re-proves every score of a directory. Each takes a
//!   communicator ([`distributed::Comm`]): one process is one rank
//!   ([`distributed::LocalComm`]).
//! - [`tier`]: one tier on its own. [`tier::solve_tier`] (and its sliced and tuned forms)
//!   solves it from the scores of the tiers below ([`tier::LowerTiers`]);
//!   [`tier::verify_tier`] re-proves a tier's scores independently;
//!   [`tier::tier_distances`] finds the distance of each of its positions to the next
//!   capture or end under play that keeps the score.
//! - [`dir`]: the table directory ([`TableDir`]: paths, the writer's [`dir::DirLock`], the
//!   [`Cancel`] that stops writers and removes their temporaries, free disk), the parallel
//!   table writer and reader ([`dir::write_table_parallel`], [`dir::read_table`]), the checks
//!   ([`dir::check_tiers`]) and the Romein-Bal format.
//! - [`memory`]: the memory plan of every job; [`distributed`]: the communicators and the
//!   partitioned solver and verifier.
//!
//! The source is grouped by stage: `solve/` (first pass, cells, levels, frontier), `verify/`
//! (the independent verifier), `lower/` (the lower tiers, whole or in slices), `dir/` (the
//! table directory), `job/` (the drivers), `comm/` (the communicators and the split of a
//! tier over ranks, below the engines); `distributed` re-exports the cluster path's items.

#![warn(missing_docs)]

mod comm;
pub mod dir;
mod distance;
pub mod distributed;
mod error;
mod granule;
mod hugepage;
mod job;
mod lower;
pub mod memory;
mod prefetch;
mod progress;
pub mod simd;
mod solve;
pub mod tier;
mod verify;

pub use dir::{Cancel, LockError, TableDir};
pub use error::{AllocError, SolveError};
pub use job::deep::{
    verify_deep, DeepReport, DistanceVerdict, TierVerdict, VerifyError, VerifyObserver,
    VerifyOptions,
};
pub use job::generate::{
    generate, DistributedStats, GenerateError, GenerateObserver, GenerateOptions, SolvedStats,
    TierDistances, TierReport,
};
pub use job::rank_error::RankError;
pub use progress::{NoProgress, Phase, Progress};
