//! The plain checks of a directory's tables ([`oware_db::check::check_tier`]), run in parallel.

use std::path::Path;

use oware_db::check::{check_tier, TierCheck};
use oware_db::manifest::{tier_path, Manifest};
use oware_db::Rules;
use rayon::prelude::*;

use crate::progress::NoProgress;

/// Receives the progress of [`check_tiers`]. Implementations must be cheap and
/// thread-safe: `table_checked` is called from worker threads.
pub trait CheckObserver: Sync {
    /// The checks of `tables` tables, `bytes` bytes of files in all, begin.
    fn checks_start(&self, tables: usize, bytes: u64);
    /// The table of `check` (`bytes` bytes, 0 for a missing file) is checked.
    fn table_checked(&self, check: &TierCheck, bytes: u64);
}

impl CheckObserver for NoProgress {
    fn checks_start(&self, _tables: usize, _bytes: u64) {}
    fn table_checked(&self, _check: &TierCheck, _bytes: u64) {}
}

/// Runs the plain checks of `tiers` of `dir` under `rules` ([`oware_db::check::check_tier`]) in
/// parallel on the current rayon thread pool, largest files first so that the longest
/// hashes start early. Returns one [`TierCheck`] per tier, in the order of `tiers`; a failed
/// check is in its `result`, not an error of this function.
pub fn check_tiers(
    dir: &Path,
    manifest: Option<&Manifest>,
    rules: &Rules,
    tiers: &[u8],
    observer: &dyn CheckObserver,
) -> Vec<TierCheck> {
    let sizes: Vec<u64> = tiers
        .iter()
        .map(|&n| std::fs::metadata(tier_path(dir, manifest, n)).map_or(0, |m| m.len()))
        .collect();
    observer.checks_start(tiers.len(), sizes.iter().sum());
    let mut order: Vec<usize> = (0..tiers.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    let mut out: Vec<(usize, TierCheck)> = order
        .par_iter()
        .map(|&i| {
            let c = check_tier(dir, manifest, rules, tiers[i]);
            observer.table_checked(&c, sizes[i]);
            (i, c)
        })
        .collect();
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, c)| c).collect()
}
