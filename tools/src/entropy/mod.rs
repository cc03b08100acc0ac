//! Entropies of a tier's scores under models a table format could use: the measurements
//! behind docs/BENCHMARKS.md, "Findings", printed by the `entropy` binary, one subcommand per
//! module.
//!
//! Every figure is in bits per position: what an ideal coder, fitted to the whole tier, would
//! spend on a score knowing its context.

pub mod contexts;
pub mod exit_delta;
pub mod neighbours;
pub mod orders;
pub mod scores;
pub mod signs;

use std::path::Path;

use anyhow::{bail, Context};
use oware_db::format::tier_file_name;
use oware_db::index::IndexKind;
use oware_db::table::Table;
use oware_db::Rules;

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

/// A whole table read into memory.
pub struct Tier {
    /// The rules the table was solved under.
    pub rules: Rules,
    /// Its size on disk, in bits per position.
    pub bits_per_entry: f64,
    /// Every score, in index order.
    pub scores: Vec<i8>,
}

/// Reads the table of tier `n` in `dir` (`tier-NN.owt`).
///
/// # Errors
/// If the table cannot be read, is not of tier `n`, or is not of the reachable index (the
/// index the measurements rank positions with).
pub fn read_tier(dir: &Path, n: u8) -> anyhow::Result<Tier> {
    let path = dir.join(tier_file_name(n));
    let table = Table::open(&path)?;
    if table.tier() != n {
        bail!("{}: holds tier {}, not {n}", path.display(), table.tier());
    }
    if table.kind() != IndexKind::Reachable {
        bail!(
            "{}: a table of the {} index; these measurements need the reachable index",
            path.display(),
            table.kind().name()
        );
    }
    let scores = table
        .read_all()
        .with_context(|| path.display().to_string())?;
    Ok(Tier {
        rules: table.rules(),
        bits_per_entry: table.bits_per_entry(),
        scores,
    })
}

#[cfg(test)]
mod tests {
    use super::bits;

    #[test]
    fn bits_of_counts() {
        assert_eq!(bits(&[]), 0.0);
        assert_eq!(bits(&[0, 7]), 0.0);
        // Two equally likely symbols: one bit each.
        assert!((bits(&[5, 5]) - 10.0).abs() < 1e-12);
        // 1/2, 1/4, 1/4: 1.5 bits per symbol.
        assert!((bits(&[2, 1, 1]) - 6.0).abs() < 1e-12);
    }
}
