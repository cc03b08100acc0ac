//! # oware-solver
//!
//! Generation of Oware endgame databases by retrograde analysis, tier by tier.
pub mod table_writer;
