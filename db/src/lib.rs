//! # oware-db
//!
//! The library that reads and probes Oware endgame databases: the rules of `RULES.md` with
//! every option ([`Rules`]), positions ([`Position`]), legal moves and their results
//! ([`Position::moves`]), for retrograde analysis un-moves ([`Position::unmoves`], and
//! [`Position::unmoves_reachable`] for an index of reachable positions) and the moves that
//! leave a tier ([`ExitMoves`]), and the
//! perfect-hash index of a tier ([`TierIndex`]).
//!
//! A *score* is the perfect-play difference between the seeds the mover captures from now on
//! and those the opponent captures, with endless play worth 0:
//! `score(p) = max over moves (captured − score(child))`.
//!
//! ```
//! use oware_db::{Position, Rules};
//! let p: Position = "1 1 1 1 1 2 4 2 3 0 0 0".parse().unwrap();
//! assert_eq!(p.seeds(), 16);
//! assert_eq!(p.moves(&Rules::AWARI).len(), 6);
//! ```

#![warn(missing_docs)]

mod check;
mod error;
pub mod format;
pub mod huffman;
mod index;
pub mod manifest;
mod moves;
mod position;
mod rules;
mod table;
mod tablebase;

pub use check::{
    check_table_file, check_tier, expected_tiers, tier_path, CheckError, CheckedTable, TierCheck,
};
pub use error::{Error, ParseError};
pub use index::{binomial, tier_size, Cursor, IndexKind, TierIndex, Unranker};
pub use manifest::{Manifest, TierEntry, TierStats};
pub use moves::{ExitMoves, Move, MoveList, Outcome};
pub use position::{Position, HOUSES, MAX_SEEDS};
pub use rules::{CaptureSet, GrandSlam, Rules, Starve, PRESETS};
pub use table::Table;
pub use tablebase::{game_outcome, GameOutcome, GameResult, MoveScore, Tablebase};
