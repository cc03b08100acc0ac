//! Synthetic tables for the tests: a deterministic pseudo-random score in `-n..=n` per entry.

#![allow(
    dead_code,
    reason = "every test crate compiles this module and uses a different subset of it"
)]

use std::path::Path;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::manifest::{Manifest, TierEntry};
use oware_db::write::{write_table_with, WriteOptions};
use oware_db::Rules;

/// A deterministic pseudo-random score in `-n..=n` for entry `i` of tier `n`.
pub fn synth(n: u8, i: u64) -> i8 {
    let mut z = (u64::from(n) << 48) ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z % (2 * u64::from(n) + 1)) as i8 - n as i8
}

/// Every synthetic score of tier `n`.
pub fn synth_tier(n: u8, kind: IndexKind) -> Vec<i8> {
    (0..TierIndex::new(n, kind).size())
        .map(|i| synth(n, i))
        .collect()
}

/// Writes tiers `0..=max` of synthetic scores and a manifest into `dir`.
pub fn build_dir(dir: &Path, rules: &Rules, max: u8, opts: &WriteOptions) {
    let mut m = Manifest::new(rules);
    for n in 0..=max {
        let scores = synth_tier(n, IndexKind::Reachable);
        let w = write_table_with(dir, rules, n, IndexKind::Reachable, &scores, opts).unwrap();
        m.tiers.insert(
            n,
            TierEntry {
                verified: None,
                distance: None,
                source: None,
                file: w.file,
                entries: scores.len() as u64,
                file_size: w.file_size,
                checksum: w.checksum,
                stats: None,
            },
        );
    }
    m.save(dir).unwrap();
}
