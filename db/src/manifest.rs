//! `manifest.json`, the record of a table directory: the rules of its tables, their index
//! kind and, per tier, its file, size, checksum and the statistics of its generation
//! ([`Manifest`]); and what follows from it for the directory: the file of each tier
//! ([`tier_path`]) and the rules of its tables ([`tables_rules`]).

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::format::{self, tier_file_name, tier_of_file_name};
use crate::index::{tier_size, IndexKind};
use crate::position::MAX_SEEDS;
use crate::romein;
use crate::rules::Rules;
use crate::table::Table;

/// The manifest file name inside a table directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The most bytes [`Manifest::load`] reads of a `manifest.json` (16 MiB): a longer file is
/// refused, not read until memory runs out.
pub(crate) const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// The contents of `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The table format version ([`format::VERSION`]).
    pub format: u32,
    /// The rules of every table in the directory (stored in their canonical text form).
    pub rules: Rules,
    /// The index kind of the tables (stored as `reachable` or `dense`).
    pub index: IndexKind,
    /// The tiers written so far.
    pub tiers: BTreeMap<u8, TierEntry>,
}

/// One tier's entry in the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TierEntry {
    /// The file name, e.g. `tier-07.owt`.
    pub file: String,
    /// Number of positions stored.
    pub entries: u64,
    /// The file's size in bytes.
    pub file_size: u64,
    /// The file's whole-file checksum (blake3, hex), as stored in its trailer.
    pub checksum: String,
    /// Statistics of the generation, if the solver recorded them.
    #[serde(default)]
    pub stats: Option<TierStats>,
    /// The checksum the tier had when `oware verify --deep` re-proved every one of its scores
    /// (from tiers below that were themselves re-proved); absent when it has not been.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<String>,
    /// The tier's distance table (docs/RULES.md, *The distance to conversion*), if it has
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<DistanceEntry>,
    /// For a file written by `oware export` (a Romein-Bal `scores.N`), the checksum of the
    /// table it was exported from: a rerun keeps the file only if that table is unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A tier's distance table in the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistanceEntry {
    /// The file name, e.g. `tier-07.owd`.
    pub file: String,
    /// The file's size in bytes.
    pub file_size: u64,
    /// The file's whole-file checksum (blake3, hex), as stored in its trailer.
    pub checksum: String,
    /// The longest distance in the tier, in plies.
    pub max: u16,
    /// Seconds the distances took to compute: with `rounds`, the seconds of the rounds that
    /// decided the scores and the distances together.
    #[serde(default)]
    pub seconds: f64,
    /// How they were made: decided with the scores, each level in rounds (docs/DESIGN.md,
    /// *Distances to conversion*), this many rounds over all levels; absent where they were
    /// computed by a pass of their own after the scores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u64>,
    /// Runs of the propagation that decided them when they did not fit in memory beside the
    /// tier's cells: one per window of the tier's indices, each keeping its window's
    /// distances (docs/DESIGN.md, *Distances out of core*); absent when they were held whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<u64>,
    /// The checksum the distance table had when `oware verify --deep` proved every distance
    /// from its children's; absent when it has not been.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<String>,
}

/// Statistics of one tier's generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TierStats {
    /// How many positions have each score.
    pub histogram: BTreeMap<i8, u64>,
    /// Positions decided by finite play (a nonzero score, or 0 forced by finite play).
    pub finite: u64,
    /// Positions scored 0 because play goes on forever.
    pub endless: u64,
    /// Seconds the tier took to solve.
    pub seconds: f64,
    /// Threads used.
    pub threads: usize,
}

impl Manifest {
    /// An empty manifest for tables of `rules` with the reachable index.
    pub fn new(rules: &Rules) -> Self {
        Manifest {
            format: format::VERSION,
            rules: *rules,
            index: IndexKind::Reachable,
            tiers: BTreeMap::new(),
        }
    }

    /// Reads `dir/manifest.json` and checks it as [`Manifest::parse`] does; `Ok(None)` if there
    /// is none.
    ///
    /// The manifest is checked as it is read: its rules parse, its index kind is known, and
    /// every tier entry names a tier of `0..=48` with as many entries as the tier has
    /// positions, a plain file name and a hex checksum. Only a regular file is read, and
    /// at most 16 MiB of it: a named pipe or a device is refused without
    /// blocking.
    ///
    /// # Errors
    /// [`Error::Io`] if it cannot be read or is not a regular file, [`Error::Manifest`] if it
    /// is not a valid manifest or is over 16 MiB (the message names the file
    /// and the entry at fault).
    pub fn load(dir: &Path) -> Result<Option<Manifest>, Error> {
        let path = dir.join(MANIFEST_FILE);
        let file = match crate::table::open_regular(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            // `dir` is a file: say so of `dir`, not of `dir/manifest.json`.
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
                return Err(Error::io(dir, e))
            }
            Err(e) => return Err(Error::io(path, e)),
        };
        let mut text = String::new();
        file.take(MAX_MANIFEST_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| Error::io(&path, e))?;
        if text.len() as u64 > MAX_MANIFEST_BYTES {
            return Err(Error::Manifest {
                path,
                detail: format!(
                    "over {} bytes, the most a manifest may hold (one of all 49 tiers holds \
                     under 100 kB)",
                    MAX_MANIFEST_BYTES
                ),
            });
        }
        Manifest::parse(&text).map(Some).map_err(|e| match e {
            Error::Manifest { detail, .. } => Error::Manifest { path, detail },
            other => other,
        })
    }

    /// Parses the text of a `manifest.json` (as [`Manifest::load`] does after reading the
    /// file) and checks it: its format is this program's, its rules text parses, its index
    /// kind is known, and every tier is at most [`MAX_SEEDS`], has as many
    /// entries as its positions, a blake3 checksum in hex and a plain file name (no directory
    /// part: the tables are files of the manifest's directory).
    ///
    /// ```
    /// use oware_db::manifest::Manifest;
    /// use oware_db::Rules;
    /// let m = Manifest::parse(r#"{"format": 1, "rules": "awari", "index": "reachable", "tiers": {}}"#)?;
    /// assert_eq!(m.rules, Rules::AWARI);
    /// assert!(Manifest::parse("{}").is_err());
    /// let outside = r#"{"format": 1, "rules": "awari", "index": "reachable",
    ///     "tiers": {"0": {"file": "../x.owt", "entries": 1, "file_size": 1, "checksum": ""}}}"#;
    /// assert!(Manifest::parse(outside).is_err());
    /// # Ok::<(), oware_db::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Manifest`] (its path is `manifest.json`) if the text is not a valid manifest.
    pub fn parse(text: &str) -> Result<Manifest, Error> {
        let m: Manifest = serde_json::from_str(text).map_err(|e| Error::Manifest {
            path: MANIFEST_FILE.into(),
            detail: e.to_string(),
        })?;
        m.check().map_err(|detail| Error::Manifest {
            path: MANIFEST_FILE.into(),
            detail,
        })?;
        Ok(m)
    }

    /// Checks what the manifest says against what it can be: this format, and per tier a
    /// tier of `0..=48`, as many entries as the tier has positions, a plain file name and a
    /// blake3 checksum in hex (the rules and the index kind were checked as they were read).
    /// Returns what is wrong first, naming the entry.
    fn check(&self) -> Result<(), String> {
        if self.format != format::VERSION {
            return Err(format!(
                "format {}: this program reads format {}",
                self.format,
                format::VERSION
            ));
        }
        let kind = self.index;
        for (&n, e) in &self.tiers {
            if n > MAX_SEEDS {
                return Err(format!("tier {n}: over {MAX_SEEDS}, the highest tier"));
            }
            let positions = tier_size(n, kind);
            if e.entries != positions {
                return Err(format!(
                    "tier {n}: {} entries, the tier has {positions} positions",
                    e.entries
                ));
            }
            if !is_plain_file_name(&e.file) {
                return Err(format!("tier {n}: file `{}` is not a file name", e.file));
            }
            if !is_checksum(&e.checksum) {
                return Err(format!(
                    "tier {n}: checksum `{}` is not 64 hex digits",
                    e.checksum
                ));
            }
            if let Some(d) = &e.distance {
                if !is_plain_file_name(&d.file) || d.file == e.file {
                    return Err(format!(
                        "tier {n}: distance file `{}` is not a file name of its own",
                        d.file
                    ));
                }
                if !is_checksum(&d.checksum) {
                    return Err(format!(
                        "tier {n}: distance checksum `{}` is not 64 hex digits",
                        d.checksum
                    ));
                }
            }
        }
        Ok(())
    }

    /// Writes `dir/manifest.json` atomically: `manifest.json.tmp`, fsync, rename, fsync of
    /// the directory. A write that fails (a full disk) removes its `manifest.json.tmp` and
    /// leaves `manifest.json` as it was.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub fn save(&self, dir: &Path) -> Result<(), Error> {
        let path = dir.join(MANIFEST_FILE);
        let tmp = dir.join(format!("{MANIFEST_FILE}.tmp"));
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Manifest {
            path: path.clone(),
            detail: e.to_string(),
        })?;
        let written = File::create(&tmp)
            .and_then(|mut f| {
                f.write_all(text.as_bytes())
                    .and_then(|()| f.write_all(b"\n"))
                    .and_then(|()| f.sync_all())
            })
            .map_err(|e| Error::io(&tmp, e))
            .and_then(|()| fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e)));
        if let Err(e) = written {
            // Nothing of a failed write stays behind (a missing file is no error here).
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        sync_dir(dir)
    }

    /// The file of tier `n` in `dir`: the name this manifest records for it, or
    /// `tier-NN.owt` ([`format::tier_file_name`]) if it records none. [`tier_path`] is the
    /// same for a directory that may have no manifest.
    pub fn tier_path(&self, dir: &Path, n: u8) -> PathBuf {
        tier_path(dir, Some(self), n)
    }
}

/// The distance table of tier `n` in `dir`: the name `manifest` records for it, or
/// `tier-NN.owd` ([`format::distance_file_name`]) if it records none or there is no manifest.
pub fn distance_path(dir: &Path, manifest: Option<&Manifest>, n: u8) -> PathBuf {
    match manifest
        .and_then(|m| m.tiers.get(&n))
        .and_then(|e| e.distance.as_ref())
    {
        Some(d) => dir.join(&d.file),
        None => dir.join(format::distance_file_name(n)),
    }
}

/// The file of tier `n` in `dir`: the name `manifest` records for it, or else `tier-NN.owt`
/// ([`format::tier_file_name`]), or else, in a directory of the Romein-Bal databases (one
/// holding `scores.N` files), `scores.N` ([`romein::file_name`]). Every reader of a
/// directory finds its tables here.
pub fn tier_path(dir: &Path, manifest: Option<&Manifest>, n: u8) -> PathBuf {
    if let Some(e) = manifest.and_then(|m| m.tiers.get(&n)) {
        return dir.join(&e.file);
    }
    let ours = dir.join(tier_file_name(n));
    let present = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    if present(&ours) {
        return ours;
    }
    let theirs = dir.join(romein::file_name(n));
    if present(&theirs) || holds_romein_files(dir) {
        return theirs;
    }
    ours
}

/// The tier a directory of the Romein-Bal databases lacks by design
/// ([`romein::ABSENT_TIER`]): `Some(47)` when `dir` is one of theirs (it holds `scores.N`
/// files and no `tier-NN.owt`, or its manifest names `scores.N` files) and has no file for
/// tier 47; `None` otherwise. Checks and deep verification pass that tier over.
pub fn absent_tier(dir: &Path, manifest: Option<&Manifest>) -> Option<u8> {
    let theirs = holds_romein_files(dir)
        || manifest.is_some_and(|m| {
            m.tiers
                .values()
                .any(|e| romein::tier_of_file_name(&e.file).is_some())
        });
    let n = romein::ABSENT_TIER;
    (theirs && fs::symlink_metadata(tier_path(dir, manifest, n)).is_err()).then_some(n)
}

/// Whether `dir` holds a file of the Romein-Bal databases (`scores.N`) and no table of this
/// crate's format (`tier-NN.owt`).
pub fn holds_romein_files(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut romein = false;
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if tier_of_file_name(&name).is_some() {
            return false;
        }
        romein |= romein::tier_of_file_name(&name).is_some();
    }
    romein
}

/// The rules of the tables in `dir`: the manifest's if there is one, or else those of the
/// lowest tier whose table file ([`tier_path`]: `tier-NN.owt`, or `scores.N`, whose rules
/// are `awari`) opens; `None` for a directory without either.
pub fn tables_rules(dir: &Path, manifest: Option<&Manifest>) -> Option<Rules> {
    match manifest {
        Some(m) => Some(m.rules),
        None => (0..=MAX_SEEDS)
            .map(|n| tier_path(dir, None, n))
            .filter(|p| p.is_file())
            .find_map(|p| Table::open(&p).ok().map(|t| t.rules())),
    }
}

/// Whether `name` names a file of the directory itself: one normal path component (not
/// empty, `.`, `..`, absolute, or with a separator), so that a manifest cannot point the
/// readers at a file outside its directory.
fn is_checksum(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_plain_file_name(name: &str) -> bool {
    let mut parts = Path::new(name).components();
    matches!(parts.next(), Some(Component::Normal(_)))
        && parts.next().is_none()
        && !name.contains(['/', '\\'])
}

/// Fsyncs a directory so that a rename inside it is durable (a no-op where directories
/// cannot be opened, as on Windows).
///
/// # Errors
/// [`Error::Io`].
pub(crate) fn sync_dir(dir: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        let d = File::open(dir).map_err(|e| Error::io(dir, e))?;
        d.sync_all().map_err(|e| Error::io(dir, e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: u8) -> TierEntry {
        TierEntry {
            verified: None,
            distance: None,
            source: None,
            file: tier_file_name(n),
            entries: tier_size(n, IndexKind::Reachable),
            file_size: 136,
            checksum: "0".repeat(64),
            stats: None,
        }
    }

    /// Saves `m` into a new directory and loads it back.
    fn reload(m: &Manifest) -> Result<Option<Manifest>, Error> {
        let dir = tempfile::tempdir().unwrap();
        m.save(dir.path()).unwrap();
        Manifest::load(dir.path())
    }

    fn bad(m: &Manifest) -> String {
        match reload(m) {
            Err(e @ Error::Manifest { .. }) => e.to_string(),
            other => panic!("expected a bad manifest, got {other:?}"),
        }
    }

    #[test]
    fn entries_are_checked_when_read() {
        let mut m = Manifest::new(&Rules::ABAPA);
        m.tiers.insert(3, entry(3));
        assert_eq!(reload(&m).unwrap(), Some(m.clone()));

        let mut over = m.clone();
        over.tiers.insert(99, entry(14));
        let e = bad(&over);
        assert!(
            e.contains("manifest.json") && e.contains("tier 99: over 48"),
            "{e}"
        );

        let mut size = m.clone();
        size.tiers.get_mut(&3).unwrap().entries += 1;
        assert!(bad(&size).contains("tier 3: "), "{}", bad(&size));

        let mut file = m.clone();
        file.tiers.get_mut(&3).unwrap().file = "../tier-03.owt".into();
        assert!(bad(&file).contains("not a file name"));

        let mut sum = m.clone();
        sum.tiers.get_mut(&3).unwrap().checksum = "xyz".into();
        assert!(bad(&sum).contains("not 64 hex digits"));

        let text = |rules: &str, index: &str| {
            format!(r#"{{"format": 1, "rules": "{rules}", "index": "{index}", "tiers": {{}}}}"#)
        };
        let e = Manifest::parse(&text("abapa", "sparse"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("index `sparse`"), "{e}");
        let e = Manifest::parse(&text("oware", "reachable"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("manifest.json") && e.contains("rules `oware`"),
            "{e}"
        );
        let m = Manifest::parse(&text("abapa+capture=2,1", "dense")).unwrap();
        assert_eq!(m.rules.to_string(), "abapa+capture=1,2");
        assert_eq!(m.index, IndexKind::Dense);
    }

    /// A manifest as `oware generate` and `oware verify --deep` wrote it before its fields had
    /// types (rules and index as text): it loads, and saves back byte for byte.
    const WRITTEN: &str = r#"{
  "format": 1,
  "rules": "awari+grand-slam=illegal",
  "index": "reachable",
  "tiers": {
    "0": {
      "file": "tier-00.owt",
      "entries": 1,
      "file_size": 152,
      "checksum": "e22a5cee344d0e365bcd03713fb49d2732e30a7347008b2b63f30d55d5044f7d",
      "stats": {
        "histogram": {
          "0": 1
        },
        "finite": 1,
        "endless": 0,
        "seconds": 0.008398233,
        "threads": 1
      },
      "verified": "e22a5cee344d0e365bcd03713fb49d2732e30a7347008b2b63f30d55d5044f7d"
    },
    "1": {
      "file": "tier-01.owt",
      "entries": 12,
      "file_size": 161,
      "checksum": "eea573846e97e98e6a83d76e42d5f4242c167ff71cd70cfa8e7af6012cf9b0bf",
      "stats": {
        "histogram": {
          "-1": 7,
          "1": 5
        },
        "finite": 12,
        "endless": 0,
        "seconds": 0.007682174,
        "threads": 1
      },
      "verified": "eea573846e97e98e6a83d76e42d5f4242c167ff71cd70cfa8e7af6012cf9b0bf"
    },
    "2": {
      "file": "tier-02.owt",
      "entries": 78,
      "file_size": 189,
      "checksum": "8cc74e2fae4249756d978b52e015856d8dbada6052a8964eb1b04823dc5a4862",
      "stats": {
        "histogram": {
          "-2": 40,
          "0": 14,
          "2": 24
        },
        "finite": 65,
        "endless": 13,
        "seconds": 0.007892899,
        "threads": 1
      },
      "verified": "8cc74e2fae4249756d978b52e015856d8dbada6052a8964eb1b04823dc5a4862"
    }
  }
}
"#;

    #[test]
    fn manifests_written_before_load_and_save_unchanged() {
        let m = Manifest::parse(WRITTEN).unwrap();
        assert_eq!(
            m.rules,
            "awari+grand-slam=illegal".parse::<Rules>().unwrap()
        );
        assert_eq!(m.index, IndexKind::Reachable);
        assert_eq!(m.tiers.len(), 3);
        assert_eq!(m.tiers[&1].stats.as_ref().unwrap().histogram[&-1], 7);
        assert_eq!(m.tiers[&2].verified.as_ref(), Some(&m.tiers[&2].checksum));
        let dir = tempfile::tempdir().unwrap();
        m.save(dir.path()).unwrap();
        let back = fs::read_to_string(dir.path().join(MANIFEST_FILE)).unwrap();
        assert_eq!(back, WRITTEN);
        assert_eq!(Manifest::load(dir.path()).unwrap(), Some(m));
    }

    #[test]
    fn tier_paths_follow_the_manifest() {
        let dir = Path::new("tables");
        let mut m = Manifest::new(&Rules::ABAPA);
        m.tiers.insert(3, entry(3));
        m.tiers.get_mut(&3).unwrap().file = "three.owt".into();
        assert_eq!(m.tier_path(dir, 3), dir.join("three.owt"));
        assert_eq!(tier_path(dir, Some(&m), 4), dir.join("tier-04.owt"));
        assert_eq!(tier_path(dir, None, 3), dir.join("tier-03.owt"));
    }
}
