//! The plain checks of a table directory, file by file: each table's header, its whole-file
//! checksum (recomputed), its size and entry count against its trailer and the manifest
//! ([`check_table_file`], [`check_table`], [`check_tier`]), and the tiers the directory
//! should hold ([`expected_tiers`]: a gap in the sequence is a missing tier).
//!
//! These checks need only the reader: they prove that the files are those the generation
//! wrote, not that their scores are right (that is the deep verification of `oware-solver`).

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::format::{tier_of_file_name, Values};
use crate::index::{tier_size, IndexKind};
use crate::manifest::{distance_path, tier_path, DistanceEntry, Manifest, TierEntry};
use crate::romein;
use crate::rules::Rules;
use crate::table::Table;

/// A table that passed every plain check.
#[derive(Debug)]
pub struct CheckedTable {
    /// The open table.
    pub table: Table,
    /// The whole-file checksum, recomputed (equal to the trailer's and the manifest's).
    pub checksum: String,
}

/// Why a table fails its plain checks. The messages are those `oware verify` prints.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CheckError {
    /// The file is not there.
    #[error("missing tier {tier}: {} ({})", path.display(), if *recorded { "recorded in the manifest" } else { "a gap in the tier sequence" })]
    Missing {
        /// The tier.
        tier: u8,
        /// The file looked for.
        path: PathBuf,
        /// Whether the manifest records the tier (otherwise it is a gap in the sequence).
        recorded: bool,
    },
    /// The file cannot be opened as a table, or its checksum does not match its trailer.
    #[error(transparent)]
    Table(#[from] crate::Error),
    /// The file holds another tier.
    #[error("the file holds tier {found}")]
    WrongTier {
        /// The tier the file holds.
        found: u8,
    },
    /// The table was built under other rules.
    #[error("built under `{found}`, not `{expected}`")]
    WrongRules {
        /// The rules of the table.
        found: Rules,
        /// The rules asked for.
        expected: Rules,
    },
    /// The table uses another index than the reachable one.
    #[error("index `{}`, expected `reachable`", found.name())]
    WrongIndex {
        /// The table's index kind.
        found: IndexKind,
    },
    /// The table holds another number of entries than the tier has positions.
    #[error("{entries} entries, the tier has {positions}")]
    WrongLength {
        /// Entries in the table.
        entries: u64,
        /// Positions of the tier.
        positions: u64,
    },
    /// The file holds other values than expected (distances for scores, or scores for
    /// distances).
    #[error("the file holds {}, expected {}", found.name(), expected.name())]
    WrongValues {
        /// What the file holds.
        found: Values,
        /// What was expected.
        expected: Values,
    },
    /// The file is sound but the manifest does not record it.
    #[error("not recorded in the manifest")]
    NotInManifest,
    /// The recomputed checksum differs from the manifest's.
    #[error("checksum {computed} (file, recomputed), the manifest says {recorded}")]
    ManifestChecksum {
        /// The checksum of the file, recomputed.
        computed: String,
        /// The checksum the manifest records.
        recorded: String,
    },
    /// The entry count or file size differs from the manifest's.
    #[error("{entries} entries in {file_size} bytes, the manifest says {recorded_entries} in {recorded_file_size}")]
    ManifestSize {
        /// Entries in the table.
        entries: u64,
        /// The file's size.
        file_size: u64,
        /// Entries the manifest records.
        recorded_entries: u64,
        /// File size the manifest records.
        recorded_file_size: u64,
    },
}

/// The plain checks of one tier: which tier, its file, and the outcome.
#[derive(Debug)]
pub struct TierCheck {
    /// The tier.
    pub tier: u8,
    /// Its file.
    pub path: PathBuf,
    /// The table, or why it failed.
    pub result: Result<CheckedTable, CheckError>,
    /// The tier's distance table (`tier-NN.owd`, or the manifest's name for it) and its own
    /// checks, if the tier has one (recorded in the manifest, or present).
    pub distances: Option<(PathBuf, Result<CheckedTable, CheckError>)>,
}

impl TierCheck {
    /// Whether the tier's table, and its distance table if it has one, passed.
    pub fn is_ok(&self) -> bool {
        self.result.is_ok() && !matches!(self.distances, Some((_, Err(_))))
    }

    /// Why the tier failed, in one line: its table's failure, or its distance table's, each
    /// naming the file.
    pub fn failure(&self) -> Option<String> {
        match (&self.result, &self.distances) {
            (Err(e), _) => Some(self.table_failure(e)),
            (Ok(_), Some((path, Err(e)))) => {
                Some(format!("distance table {}: {e}", path.display()))
            }
            _ => None,
        }
    }

    /// Why the tier's table failed, `e`, in one line that names its file (a missing one's
    /// message names it already, as do the errors of reading one).
    pub fn table_failure(&self, e: &CheckError) -> String {
        let why = e.to_string();
        let path = self.path.display().to_string();
        if matches!(e, CheckError::Missing { .. }) || why.contains(&path) {
            why
        } else {
            format!("{path}: {why}")
        }
    }
}

/// The tiers a directory should hold: those of the manifest, those with a `tier-NN.owt`
/// file (or a `scores.N` file of the Romein-Bal databases), and every tier below the
/// highest of them (a gap is a missing tier), but for the tier that the Romein-Bal
/// databases leave out ([`romein::ABSENT_TIER`]) in a directory of theirs.
///
/// # Errors
/// The directory cannot be read.
pub fn expected_tiers(dir: &Path, manifest: Option<&Manifest>) -> io::Result<Vec<u8>> {
    let mut tiers: BTreeSet<u8> = manifest
        .map(|m| m.tiers.keys().copied().collect())
        .unwrap_or_default();
    for e in std::fs::read_dir(dir)? {
        let name = e?.file_name();
        let name = name.to_string_lossy();
        if let Some(n) = tier_of_file_name(&name).or_else(|| romein::tier_of_file_name(&name)) {
            tiers.insert(n);
        }
    }
    // A directory of the Romein-Bal databases has no tier 47 ([`romein::ABSENT_TIER`]).
    let absent = crate::manifest::absent_tier(dir, manifest);
    Ok(match tiers.last() {
        Some(&max) => (0..=max)
            .filter(|&n| tiers.contains(&n) || absent != Some(n))
            .collect(),
        None => Vec::new(),
    })
}

/// Every plain check of the table file `path`, expected to hold tier `n` under `rules` with
/// the reachable index, as the manifest's `entry` records it (`None`: not recorded). The
/// checks run in this order and the first that fails is returned: the file exists and opens
/// (header, trailer), holds tier `n`, was built under `rules`, with the reachable index and
/// as many entries as the tier has positions; its checksum, recomputed over the whole file,
/// matches its trailer; the manifest records it, with that checksum, entry count and size.
///
/// # Errors
/// [`CheckError`]: the first check that fails.
pub fn check_table_file(
    path: &Path,
    n: u8,
    rules: &Rules,
    entry: Option<&TierEntry>,
) -> Result<CheckedTable, CheckError> {
    let table = open_values(path, n, Values::Scores, entry.is_some())?;
    check_table(table, n, rules, entry)
}

/// Opens the table file `path` of tier `n`, which must hold `values`: [`CheckError::Missing`]
/// when there is no file (`recorded`: the manifest records it), [`CheckError::WrongValues`].
fn open_values(path: &Path, n: u8, values: Values, recorded: bool) -> Result<Table, CheckError> {
    // A symbolic link that leads nowhere (dangling, or a loop) is not a missing tier:
    // opening it names what is wrong.
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Err(CheckError::Missing {
            tier: n,
            path: path.to_path_buf(),
            recorded,
        });
    }
    let table = Table::open(path)?;
    if table.values() != values {
        return Err(CheckError::WrongValues {
            found: table.values(),
            expected: values,
        });
    }
    Ok(table)
}

/// The plain checks of the distance table `path` of tier `n` under `rules`, as the
/// manifest's `entry` records it: it opens, holds distances of tier `n` under `rules` with
/// the reachable index and one entry per position; its checksum, recomputed, matches its
/// trailer and the manifest's.
///
/// # Errors
/// [`CheckError`]: the first check that fails ([`CheckError::Missing`] when the manifest
/// records a distance table that is not there).
pub fn check_distance_file(
    path: &Path,
    n: u8,
    rules: &Rules,
    entry: Option<&DistanceEntry>,
) -> Result<CheckedTable, CheckError> {
    let table = open_values(path, n, Values::Distances, entry.is_some())?;
    // The checks of a score table, against an entry that says what the manifest records of
    // the distance table.
    let as_tier = entry.map(|d| TierEntry {
        file: d.file.clone(),
        entries: tier_size(n, IndexKind::Reachable),
        file_size: d.file_size,
        checksum: d.checksum.clone(),
        stats: None,
        verified: None,
        distance: None,
        source: None,
    });
    check_table(table, n, rules, as_tier.as_ref())
}

/// The plain checks of [`check_table_file`] that follow the opening of the file, on a table
/// already open (from a file, or from bytes in memory with [`Table::from_bytes`]): it holds
/// tier `n`, was built under `rules`, with the reachable index and as many entries as the
/// tier has positions; its checksum, recomputed over the whole file, matches its trailer; the
/// manifest's `entry` records it, with that checksum, entry count and size.
///
/// # Errors
/// [`CheckError`]: the first check that fails.
pub fn check_table(
    table: Table,
    n: u8,
    rules: &Rules,
    entry: Option<&TierEntry>,
) -> Result<CheckedTable, CheckError> {
    if table.tier() != n {
        return Err(CheckError::WrongTier {
            found: table.tier(),
        });
    }
    if table.rules() != *rules {
        return Err(CheckError::WrongRules {
            found: table.rules(),
            expected: *rules,
        });
    }
    if table.kind() != IndexKind::Reachable {
        return Err(CheckError::WrongIndex {
            found: table.kind(),
        });
    }
    let positions = tier_size(n, IndexKind::Reachable);
    if table.len() != positions {
        return Err(CheckError::WrongLength {
            entries: table.len(),
            positions,
        });
    }
    let checksum = table.verify_checksum()?;
    // The hash read the whole file: its pages leave the resident set until read again.
    table.release_pages();
    let Some(entry) = entry else {
        // A Romein-Bal file is complete without a record: it has a length and no more.
        if table.romein().is_some() {
            return Ok(CheckedTable { table, checksum });
        }
        return Err(CheckError::NotInManifest);
    };
    if entry.checksum != checksum {
        return Err(CheckError::ManifestChecksum {
            computed: checksum,
            recorded: entry.checksum.clone(),
        });
    }
    if entry.entries != table.len() || entry.file_size != table.file_size() {
        return Err(CheckError::ManifestSize {
            entries: table.len(),
            file_size: table.file_size(),
            recorded_entries: entry.entries,
            recorded_file_size: entry.file_size,
        });
    }
    Ok(CheckedTable { table, checksum })
}

/// Every plain check of tier `n` of `dir` ([`check_table_file`] on the tier's file,
/// [`tier_path`], with the manifest's entry for the tier).
pub fn check_tier(dir: &Path, manifest: Option<&Manifest>, rules: &Rules, n: u8) -> TierCheck {
    let path = tier_path(dir, manifest, n);
    let entry = manifest.and_then(|m| m.tiers.get(&n));
    let result = check_table_file(&path, n, rules, entry);
    let recorded = entry.and_then(|e| e.distance.as_ref());
    let dpath = distance_path(dir, manifest, n);
    let distances = (recorded.is_some() || std::fs::symlink_metadata(&dpath).is_ok()).then(|| {
        let r = check_distance_file(&dpath, n, rules, recorded);
        (dpath, r)
    });
    TierCheck {
        tier: n,
        path,
        result,
        distances,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_romein_directory_is_not_expected_to_hold_tier_47() {
        let dir = tempfile::tempdir().unwrap();
        let expected: Vec<u8> = (0..=48).filter(|&n| n != 47).collect();
        for &n in &expected {
            std::fs::write(dir.path().join(romein::file_name(n)), b"").unwrap();
        }
        assert_eq!(expected_tiers(dir.path(), None).unwrap(), expected);
        // Their file, when there is one, is expected like any other.
        std::fs::write(dir.path().join(romein::file_name(47)), b"").unwrap();
        let all: Vec<u8> = (0..=48).collect();
        assert_eq!(expected_tiers(dir.path(), None).unwrap(), all);
        // Tables of this crate's format must have every tier.
        let ours = tempfile::tempdir().unwrap();
        for &n in &expected {
            std::fs::write(ours.path().join(crate::format::tier_file_name(n)), b"").unwrap();
        }
        assert_eq!(expected_tiers(ours.path(), None).unwrap(), all);
    }
}
