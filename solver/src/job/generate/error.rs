//! What can stop a generation ([`GenerateError`]): apart from the driver, so that the
//! collectives of `job/ranks.rs` name it without importing the driver.

use std::path::PathBuf;

use oware_db::Rules;
use thiserror::Error;

use crate::dir::LockError;
use crate::error::{AllocError, SolveError};
use crate::job::rank_error::RankError;
use crate::memory::human_bytes;

/// What can stop a generation.
#[derive(Debug, Error)]
pub enum GenerateError {
    /// Reading or writing tables or the manifest failed.
    #[error(transparent)]
    Db(#[from] oware_db::Error),
    /// The directory holds tables of other rules.
    #[error("{} holds tables built under `{found}`, not `{asked}`", dir.display())]
    RulesMismatch {
        /// The directory.
        dir: PathBuf,
        /// The rules found there.
        found: Rules,
        /// The rules asked for.
        asked: Rules,
    },
    /// The directory's rules (those of its manifest, or without one those of its lowest
    /// table) are those asked for, but some of its tables were built under other rules:
    /// stray files, named, which a generation would neither keep nor overwrite silently.
    #[error(
        "{} holds tables under `{rules}` (the rules of its {}), but {}; move {} out of {} or \
         remove {}, or generate into another directory",
        dir.display(),
        if *manifest { "manifest" } else { "lowest table" },
        stray_list(files),
        if files.len() == 1 { "it" } else { "them" },
        dir.display(),
        if files.len() == 1 { "it" } else { "them" }
    )]
    StrayTables {
        /// The directory.
        dir: PathBuf,
        /// The directory's rules, those asked for.
        rules: Rules,
        /// Whether the directory's rules are its manifest's (else its lowest table's).
        manifest: bool,
        /// The tables built under other rules, with their rules.
        files: Vec<(PathBuf, Rules)>,
    },
    /// A tier needs more memory than the machine has available: on one process, its cells,
    /// frontier and far exits, or its cells and far exits beside the smallest slice of its lower tiers while its
    /// exits are computed, whichever is larger ([`plan_tier`](crate::memory::plan_tier)).
    #[error("tier {tier} needs {needed} bytes of memory ({positions} positions: {own} for its cells, frontier and far exits, of which {beside} beside {lower} for the smallest slice of its lower tiers while its exits are computed; {process} for the process and its buffers) but only {available} are available; nothing was written for it")]
    TooLarge {
        /// The tier.
        tier: u8,
        /// Its positions.
        positions: u64,
        /// Bytes needed in all.
        needed: u64,
        /// Of which the tier's own arrays (over several ranks: this rank's part and the
        /// gathered tier).
        own: u64,
        /// Of the tier's own arrays, those held beside a slice of the lower tiers (the cells
        /// without the frontier; see [`frontier_bytes`](crate::memory::frontier_bytes)).
        beside: u64,
        /// Of which the lower tiers' scores (0 over several ranks, which keep side copies).
        lower: u64,
        /// Of which the process itself and its buffers
        /// ([`PROCESS_BYTES`](crate::memory::PROCESS_BYTES)).
        process: u64,
        /// Bytes available.
        available: u64,
    },
    /// An array of the solver could not be allocated.
    #[error(transparent)]
    Alloc(#[from] AllocError),
    /// Another process is writing the directory, or its lock cannot be taken.
    #[error(transparent)]
    Locked(#[from] LockError),
    /// Over several ranks, this rank's part of a tier does not fit in its memory, or
    /// another rank failed.
    #[error(transparent)]
    Rank(#[from] RankError),
    /// A tier needs more disk than its directory's filesystem has free.
    #[error("tier {tier} needs {} of disk in {}, {} free; nothing was written for it", human_bytes(*needed), dir.display(), human_bytes(*free))]
    NoSpace {
        /// The tier.
        tier: u8,
        /// The directory.
        dir: PathBuf,
        /// Bytes needed: the table's bound and the side copies.
        needed: u64,
        /// Bytes free.
        free: u64,
    },
    /// The distances of a tier could not be computed from its scores: the scores are wrong.
    #[error(transparent)]
    Distances(#[from] crate::distance::DistanceError),
    /// Creating the directory failed.
    #[error("cannot create {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A scratch file of a tier's distances kept out of core could not be written or read
    /// (a full disk, for one): the tier stops and its scratch files go.
    #[error("tier {tier}: scratch file {}: {source}", path.display())]
    Scratch {
        /// The tier.
        tier: u8,
        /// The scratch file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl From<SolveError> for GenerateError {
    fn from(e: SolveError) -> Self {
        match e {
            SolveError::Alloc(e) => GenerateError::Alloc(e),
            SolveError::Lower(e) => GenerateError::Db(e),
            SolveError::Scratch { tier, path, source } => {
                GenerateError::Scratch { tier, path, source }
            }
        }
    }
}

/// The stray tables of [`GenerateError::StrayTables`] in words: `d/tier-09.owt is built
/// under `awari``, several joined with commas.
fn stray_list(files: &[(PathBuf, Rules)]) -> String {
    files
        .iter()
        .map(|(path, rules)| format!("{} is built under `{rules}`", path.display()))
        .collect::<Vec<_>>()
        .join(", ")
}
