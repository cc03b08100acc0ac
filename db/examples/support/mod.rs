//! What the design-aid examples share: their `DIR TIER` arguments and reading a whole table.

use oware_db::Table;
use std::path::{Path, PathBuf};

/// The directory and tier given as the first two arguments; panics with `usage` otherwise.
pub fn dir_and_tier(usage: &str) -> (PathBuf, u8) {
    let dir = std::env::args().nth(1).expect(usage);
    let n = std::env::args()
        .nth(2)
        .and_then(|t| t.parse().ok())
        .expect(usage);
    (PathBuf::from(dir), n)
}

/// Every score of the table of tier `n` in `dir`; panics with the error if it cannot be read.
pub fn read_tier(dir: &Path, n: u8) -> Vec<i8> {
    let path = dir.join(format!("tier-{n:02}.owt"));
    Table::open(&path)
        .and_then(|table| table.read_all())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
