//! Errors in text given by a user: rules strings and positions ([`ParseError`]).

use thiserror::Error;

/// An error in text given by a user: a rules string or a position.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseError {
    /// The rules string names an unknown preset, option or value.
    #[error("bad rules: {0}")]
    Rules(String),
    /// A position field is wrong; `field` is 1-based (0 when the whole position is at fault).
    #[error("bad position: {message}")]
    Position {
        /// 1-based number of the offending field, 0 if no single field is at fault.
        field: usize,
        /// What is wrong, in words.
        message: String,
    },
}
