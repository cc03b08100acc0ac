//! # oware-solver
//!
//! Generation of Oware endgame databases by retrograde analysis, tier by tier: [`solve_tier`]
//! solves one tier from the scores of the tiers below it ([`LowerTiers`]).

#![warn(missing_docs)]

mod dir;
pub mod distributed;
mod error;
mod granule;
mod job;
mod lower;
mod memory;
mod prefetch;
mod progress;
mod solve;
mod verify;

pub use dir::check::{check_tiers, CheckObserver};
pub use dir::disk::{free_disk, generate_tier_disk, table_disk_bound};
pub use dir::lock::{
    interrupted, is_temporary, remove_held_temporaries, remove_temporaries, writing, DirLock,
    LockError, LOCK_FILE,
};
pub use dir::read::read_table;
pub use dir::write::{write_table_parallel, DEFAULT_BATCH_BLOCKS};
pub use dir::SCRATCH_DIR;
pub use error::{AllocError, SolveError};
pub use job::deep::{
    verify_deep, DeepReport, TierVerdict, VerifyError, VerifyObserver, VerifyOptions,
};
pub use job::generate::{
    generate, DistributedStats, GenerateError, GenerateObserver, GenerateOptions, SolvedStats,
    TierReport,
};
pub use lower::slice::{cut_slices, Piece, ScoreSource, Slice, TableSource, SLICE_ALIGN};
pub use lower::LowerTiers;
pub use memory::{
    available_memory, generate_least_memory, generate_peak_memory, generate_tier_memory,
    human_bytes, partition_memory, plan_tier, plan_verify, tier_memory, verify_deep_least_memory,
    verify_deep_memory, verify_memory, window_bytes, ExitPlan, TierPlan, MAX_SLICES,
    MIN_SLICE_BYTES,
};
pub use progress::{NoProgress, Phase, Progress};
pub use solve::{solve_tier, solve_tier_sliced, solve_tier_tuned, SolveStats, TierScores, Tuning};
pub use verify::{
    verify_tier, verify_tier_in_place, Mismatch, MismatchKind, VerifyLower, VerifyReport,
};
