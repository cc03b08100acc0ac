//! # oware-db
//!
//! The library that reads, probes and writes Oware endgame databases: the rules of
//! `docs/RULES.md` in the repository, with every option ([`Rules`]); positions
//! ([`Position`]); legal moves and their results ([`Position::moves`]); the perfect-hash index
//! of a tier ([`TierIndex`]); one tier table ([`Table`]) and a directory of them
//! ([`Tablebase`], the probe API); the writer of tables ([`write_table`]) and the directory's
//! manifest ([`Manifest`]). What only a retrograde-analysis generator needs (un-moves, the
//! moves that leave a tier, sequential unranking) is in [`retro`].
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
//!
//! Probing a directory of tables (see `examples/probe.rs`):
//!
//! ```no_run
//! use std::path::Path;
//! use oware_db::{Manifest, Position, Rules, Tablebase};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = Path::new("tables");
//! // The rules the tables were built with, from the directory's manifest.
//! let rules = Manifest::load(dir)?.map_or(Ok(Rules::ABAPA), |m| m.rules())?;
//! let tb = Tablebase::open(dir, &rules)?;
//! let p: Position = "1 1 1 1 1 2 4 2 3 0 0 0".parse()?;
//! println!("score {}", tb.score(&p)?);
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

mod check;
mod error;
mod format;
mod huffman;
mod index;
mod manifest;
mod moves;
mod position;
pub mod retro;
mod romein;
mod rules;
mod table;
mod tablebase;
mod write;

pub use check::{
    check_table, check_table_file, check_tier, expected_tiers, tier_path, CheckError, CheckedTable,
    TierCheck,
};
pub use error::{Error, ParseError};
pub use format::{tier_file_name, tier_of_file_name, Compression, UnknownCompression};
pub use index::{binomial, tier_size, IndexKind, TierIndex};
pub use manifest::{Manifest, TierEntry, TierStats};
pub use moves::{Move, MoveList, Outcome};
pub use position::{Position, HOUSES, MAX_SEEDS};
pub use romein::{RomeinOrder, RomeinWalk};
pub use rules::{CaptureSet, GrandSlam, Rules, Starve, PRESETS};
pub use table::Table;
pub use tablebase::{game_outcome, GameOutcome, GameResult, MoveScore, Tablebase};
pub use write::{
    write_table, write_table_with, EncodeScratch, ModelCounts, TableEncoder, WriteOptions,
    WrittenTable,
};

/// The table format version this library writes and reads (recorded in
/// [`Manifest::format`]; `db/FORMAT.md` of the repository describes the format).
pub const FORMAT_VERSION: u32 = format::VERSION;
