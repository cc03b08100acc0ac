//! The error that stops a rank's job over several ranks ([`RankError`]), the same for
//! generation and deep verification.

use thiserror::Error;

use crate::memory::{human_bytes, PROCESS_BYTES};

/// Over several ranks, why a rank stops its job, the same for generation and deep
/// verification: its part of a tier does not fit in its memory, or another rank failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RankError {
    /// This rank's part of a tier does not fit in its memory: its own arrays and exchange
    /// buffers beside its share of the lower tiers.
    #[error(
        "{job} of tier {tier} needs {} of memory on rank {rank} of {ranks} ({} for this \
         rank's part of the tier, {} for its share of the lower tiers, {} for the process) \
         but only {} are available{}",
        human_bytes(*needed),
        human_bytes(*own),
        human_bytes(*lower),
        human_bytes(PROCESS_BYTES),
        human_bytes(*available),
        if *job == "generation" { "; nothing was written for it" } else { "" }
    )]
    TooLarge {
        /// The job: `generation` or `deep verification`.
        job: &'static str,
        /// The tier.
        tier: u8,
        /// The rank that lacks memory (each rank that does reports itself).
        rank: usize,
        /// The ranks of the job.
        ranks: usize,
        /// Bytes needed on that rank: `own`, `lower` and the process's reserve
        /// ([`PROCESS_BYTES`]).
        needed: u64,
        /// Of which its part of the tier: its cells or scores with their state, far exits'
        /// room and exchange buffers.
        own: u64,
        /// Of which its share of the lower tiers.
        lower: u64,
        /// Bytes available on that rank.
        available: u64,
    },
    /// Another rank failed (it reports its own error); this one stops with it.
    #[error("rank {rank} failed")]
    Failed {
        /// The rank that failed (the lowest, if several did).
        rank: usize,
    },
}
