//! # oware-db
//!
//! The library that reads, probes and writes Oware endgame databases, under the rules of
//! `docs/RULES.md` in the repository with every option.
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
//! Probing a directory of tables (see `examples/probe.rs`), under the rules they were built
//! with:
//!
//! ```no_run
//! use std::path::Path;
//! use oware_db::{Position, Tablebase};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tb = Tablebase::open(Path::new("tables"))?;
//! let p: Position = "1 1 1 1 1 2 4 2 3 0 0 0".parse()?;
//! println!("score {} under {}", tb.score(&p)?, tb.rules());
//! for m in tb.moves(&p)? {
//!     println!("house {}: {:+}", m.house, m.score);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # What is where
//!
//! The crate root holds what a prober needs: [`Tablebase`] (a directory of tables, the probe
//! API, with its answers [`MoveScore`], [`GameOutcome`] and [`GameResult`]), [`Position`]
//! (with [`HOUSES`] and [`MAX_SEEDS`]), [`Rules`], the legal moves of a position
//! ([`Position::moves`]: a [`MoveList`] of [`Move`]s, each with its [`Outcome`]), the
//! position a game reaches ([`Position::from_game`], its error [`GameError`]), and the
//! errors [`Error`] (of tables) and [`ParseError`] (of text given by a user).
//!
//! The rest is in modules named for what they hold:
//!
//! - [`rules`]: the options of a [`Rules`] value ([`rules::GrandSlam`], [`rules::Starve`],
//!   [`rules::CaptureSet`]) and the preset names.
//! - [`table`]: one tier table, [`table::Table`], the reader under [`Tablebase`].
//! - [`manifest`]: a directory's `manifest.json` ([`manifest::Manifest`]), the file of each
//!   tier ([`manifest::tier_path`]) and the rules of a directory's tables
//!   ([`manifest::tables_rules`]).
//! - [`index`]: the perfect-hash index of a tier ([`index::TierIndex`], [`index::IndexKind`]).
//! - [`format`](mod@format): the table file format: its version, file names and block compressions.
//! - [`write`](mod@write): the writer of tables ([`write::write_table`], [`write::TableEncoder`]).
//! - [`check`]: the plain checks of a directory's tables, file by file.
//! - [`romein`]: the numbering of the Romein-Bal Awari databases.
//! - [`retro`]: what only a retrograde-analysis generator needs (un-moves, the moves that
//!   leave a tier, sequential unranking).

#![warn(missing_docs)]

pub mod check;
mod error;
pub mod format;
mod game;
mod huffman;
pub mod index;
pub mod manifest;
mod moves;
mod parse_error;
mod position;
pub mod retro;
pub mod romein;
pub mod rules;
pub mod table;
mod tablebase;
pub mod write;

pub use error::Error;
pub use game::{GameError, MAX_START_SEEDS, MIN_START_SEEDS};
pub use moves::{Move, MoveList, Outcome};
pub use parse_error::{shorten, shorten_quotes, ParseError, QUOTE_CHARS};
pub use position::{Position, HOUSES, MAX_SEEDS};
pub use rules::Rules;
pub use tablebase::{GameOutcome, GameResult, MoveScore, Tablebase};

/// The longest best line the command line (`probe --line --max-plies`), the web API
/// (`/api/v1/line?plies=`) and the Python package (`Tablebase.best_line`) give, in plies: a
/// longer request is refused. [`Tablebase::best_line`] itself takes any length.
pub const MAX_LINE_PLIES: usize = 1000;
