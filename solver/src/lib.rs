//! # oware-solver
//!
//! Generation and deep verification of Oware endgame databases by retrograde analysis, tier
//! by tier, on one process or over the ranks of an MPI job.
//!
//! - The jobs: [`generate`] solves tiers into a directory of tables, resumably;
//!   [`verify_deep`] re-proves every score of a directory. Each takes a communicator
//!   ([`distributed::Comm`]): one process is one rank ([`distributed::LocalComm`]).
//! - One tier: [`solve_tier`] (and its sliced and tuned forms) solves it from the scores of
//!   the tiers below ([`LowerTiers`]); [`verify_tier`] re-proves a tier's scores
//!   independently; [`tier_distances`] finds the distance of each of its positions to the
//!   next capture or end under play that keeps the score.
//! - The table directory: [`TableDir`] (paths, the writer's [`DirLock`], the [`Cancel`]
//!   that stops writers and removes their temporaries, free disk), the parallel table
//!   writer and reader ([`write_table_parallel`], [`read_table`]) and the checks
//!   ([`check_tiers`]).
//! - [`memory`]: the memory plan of every job; [`distributed`]: the communicators and the
//!   partitioned solver and verifier.
//!
//! The source is grouped by stage: `solve/` (first pass, cells, levels, frontier), `verify/`
//! (the independent verifier), `lower/` (the lower tiers, whole or in slices), `dir/` (the
//! table directory), `job/` (the drivers), `distributed/` (the ranks).

#![warn(missing_docs)]

mod dir;
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
mod solve;
mod verify;

pub use dir::check::{check_tiers, CheckObserver};
pub use dir::disk::{free_disk, generate_tier_disk, table_disk_bound};
pub use dir::read::{read_distances, read_table};
pub use dir::romein::{export_overhead, export_romein, import_romein};
pub use dir::temp::is_temporary;
pub use dir::write::{write_distances_parallel, write_table_parallel, DEFAULT_BATCH_BLOCKS};
pub use dir::{Cancel, DirLock, LockError, TableDir, LOCK_FILE, SCRATCH_DIR};
pub use distance::{
    check_distances, check_distances_sliced, check_distances_sliced_windowed,
    check_distances_windowed, tier_distances, DistanceError, DistanceSource,
    DISTANCE_BYTES_PER_POSITION, MAX_DISTANCE, NO_DISTANCE,
};
pub use error::{AllocError, SolveError};
pub use job::deep::{
    verify_deep, DeepReport, DistanceVerdict, TierVerdict, VerifyError, VerifyObserver,
    VerifyOptions,
};
pub use job::generate::{
    generate, DistributedStats, GenerateError, GenerateObserver, GenerateOptions, SolvedStats,
    TierDistances, TierReport,
};
pub use lower::slice::{cut_slices, Piece, ScoreSource, Slice, TableSource, SLICE_ALIGN};
pub use lower::LowerTiers;
pub use progress::{NoProgress, Phase, Progress};
pub use solve::{
    solve_tier, solve_tier_sliced, solve_tier_tuned, SolveStats, Spill, SpilledDistances,
    TierScores, Tuning, WINDOW_ALIGN,
};
pub use verify::{
    verify_tier, verify_tier_in_place, Mismatch, MismatchKind, VerifyLower, VerifyPhases,
    VerifyReport,
};
