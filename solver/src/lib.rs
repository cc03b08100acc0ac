//! # oware-solver
//!
//! Generation of Oware endgame databases by retrograde analysis, tier by tier: [`solve_tier`]
//! solves one tier from the scores of the tiers below it ([`LowerTiers`]).

#![warn(missing_docs)]

pub mod distributed;
mod lower;
mod progress;
mod tier;

pub use lower::LowerTiers;
pub use progress::{NoProgress, Phase, Progress};
pub use tier::{solve_tier, tier_memory, SolveStats, TierScores};
