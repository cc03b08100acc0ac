//! What the entropy design aids (`entropy`, `ctxentropy`, `nbrentropy`, `orderentropy`,
//! `exitdelta`) share: their `DIR TIER` arguments, reading a whole table, and the cost of
//! coding counted symbols.

use oware_db::table::Table;
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

/// Bits to code the symbols counted in `counts` with a code fitted to those counts: the
/// counts' total times their entropy (0 when empty).
pub fn bits(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| -(c as f64 / total as f64).log2() * c as f64)
        .sum()
}

/// Every score of the table of tier `n` in `dir`; panics with the error if it cannot be read.
pub fn read_tier(dir: &Path, n: u8) -> Vec<i8> {
    let path = dir.join(format!("tier-{n:02}.owt"));
    Table::open(&path)
        .and_then(|table| table.read_all())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
