//! Errors of writing, opening and reading tables ([`Error`]).

use std::io;
use std::path::PathBuf;

use thiserror::Error;

use crate::rules::Rules;

/// An error of writing, opening or probing tables, or of the manifest.
///
/// No file content causes a panic: whatever a table file holds, opening and probing it
/// returns either a correct value or one of these errors.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The table of a tier that a probe needs is not in the directory.
    #[error("missing tier {tier}: no table {path}")]
    MissingTier {
        /// The tier (seed count).
        tier: u8,
        /// The file that was looked for.
        path: PathBuf,
    },
    /// The distance table of a tier is not in the directory (generated without distances,
    /// or removed): scores are answered, distances are not.
    #[error("tier {tier} has no distance table: no {path}")]
    MissingDistances {
        /// The tier (seed count).
        tier: u8,
        /// The file that was looked for.
        path: PathBuf,
    },
    /// A stored distance disagrees with the score beside it: a distance where the score is 0,
    /// or none where it is not.
    #[error("{path}: entry {index} holds {stored} for a position scored {score}")]
    BadDistance {
        /// The distance table.
        path: PathBuf,
        /// The entry.
        index: u64,
        /// What the entry holds, in words.
        stored: String,
        /// The position's score.
        score: i8,
    },
    /// The table or manifest was built under other rules than those expected (asked for, or
    /// those of the directory's manifest).
    #[error("rules mismatch: the tables were built with rules `{table}`, expected `{asked}`")]
    RulesMismatch {
        /// The rules the table or manifest records.
        table: Rules,
        /// The rules expected: asked for, or those of the directory's manifest.
        asked: Rules,
    },
    /// The file does not start with the table magic: it is not an oware table.
    #[error("{path}: not an oware table (bad magic)")]
    BadMagic {
        /// The file.
        path: PathBuf,
    },
    /// The table has a format version this reader does not know.
    #[error("{path}: table format version {found}, this reader supports {supported}")]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this reader supports.
        supported: u32,
    },
    /// The file is shorter than its structure requires (or its trailer is missing).
    #[error("{path}: truncated table ({size} bytes): {detail}")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The file's size in bytes.
        size: u64,
        /// What is missing.
        detail: String,
    },
    /// The file holds a whole table followed by more bytes: its size does not match its
    /// index (bytes appended to it).
    #[error(
        "{path}: trailing bytes: the file has {size} bytes, but its index and trailer end the \
         table at byte {end} ({} bytes after it); the size does not match its index",
        size - end
    )]
    TrailingBytes {
        /// The file.
        path: PathBuf,
        /// The file's size in bytes.
        size: u64,
        /// Where the table ends, by its trailer.
        end: u64,
    },
    /// The trailer is in place (its index offset and block count fit the file) but its end
    /// magic is damaged.
    #[error("{path}: bad end magic {found:?}, not {expected:?}: not an oware table end (a damaged trailer)")]
    BadEndMagic {
        /// The file.
        path: PathBuf,
        /// The 8 bytes where the end magic should be, as text (lossy).
        found: String,
        /// The end magic of a table, as text.
        expected: String,
    },
    /// The header is damaged or inconsistent (header checksum, field values, trailer).
    #[error("{path}: bad table header: {detail}")]
    BadHeader {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The whole-file checksum does not match the one stored in the file (or the manifest).
    #[error("{path}: checksum mismatch: stored {stored}, computed {computed}")]
    ChecksumMismatch {
        /// The file.
        path: PathBuf,
        /// The checksum stored (hex).
        stored: String,
        /// The checksum of the bytes as read (hex).
        computed: String,
    },
    /// One compressed block is damaged: its checksum, offsets or decompressed size are wrong.
    #[error("{path}: corrupt block {block}: {detail}")]
    CorruptBlock {
        /// The file.
        path: PathBuf,
        /// The block number.
        block: u64,
        /// What is wrong.
        detail: String,
    },
    /// A stored score is outside `-n..=n` for its tier `n`.
    #[error("{path}: entry {index} holds {value}, outside -{tier}..={tier}")]
    BadValue {
        /// The file.
        path: PathBuf,
        /// The tier.
        tier: u8,
        /// The entry.
        index: u64,
        /// The stored value.
        value: i8,
    },
    /// A Romein-Bal file (`scores.N`) whose length is not one byte per position of its tier.
    #[error(
        "{path}: {size} bytes; a Romein-Bal file of tier {tier} has {expected}, one per position"
    )]
    RomeinSize {
        /// The file.
        path: PathBuf,
        /// Its tier.
        tier: u8,
        /// Its length.
        size: u64,
        /// The positions of the tier.
        expected: u64,
    },
    /// A byte of a Romein-Bal file outside `-n..=n` for its tier `n`.
    #[error("{path}: the byte at offset {offset} holds {value}, outside -{tier}..={tier}")]
    RomeinScore {
        /// The file.
        path: PathBuf,
        /// Its tier.
        tier: u8,
        /// The offset of the byte (the position's Goedel number).
        offset: u64,
        /// The byte, signed.
        value: i8,
    },
    /// An entry number at or past the end of the table.
    #[error("entry {index} is out of range: the table holds {len} entries")]
    IndexOutOfRange {
        /// The entry asked for.
        index: u64,
        /// The number of entries.
        len: u64,
    },
    /// The seeds on the board and those captured make more than the 48 seeds of a game.
    #[error(
        "invalid game state: {board} seeds on the board and {mover_captured} + \
         {opponent_captured} captured: {} > 48",
        u32::from(*board) + u32::from(*mover_captured) + u32::from(*opponent_captured)
    )]
    TooManySeeds {
        /// Seeds on the board.
        board: u8,
        /// Seeds the mover has captured.
        mover_captured: u8,
        /// Seeds the opponent has captured.
        opponent_captured: u8,
    },
    /// A tier number over 48, the highest.
    #[error("tier {0} is over 48, the highest tier")]
    TierOutOfRange(u8),
    /// A request or a value that is impossible in its context (a score out of its tier's
    /// range given to the writer, a range of entries that is not whole blocks, …).
    #[error("invalid game state: {0}")]
    InvalidState(String),
    /// An input/output error on a file or directory.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A table that opens but does not match what the manifest records for it (its size or
    /// entry count): the table changed since it was recorded (rewritten, cut, appended to).
    #[error("{path}: does not match the manifest: {detail}")]
    TableChanged {
        /// The table.
        path: PathBuf,
        /// How it differs, the table's figures first.
        detail: String,
    },
    /// The manifest is unreadable or inconsistent with the tables.
    #[error("{path}: bad manifest: {detail}")]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
}

impl Error {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
