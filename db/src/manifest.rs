//! `manifest.json`: the rules of a table directory and, per tier, its file, size, checksum
//! and the statistics of its generation.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Component, Path};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::format;
use crate::index::{tier_size, IndexKind};
use crate::position::MAX_SEEDS;
use crate::rules::Rules;

/// The manifest file name inside a table directory.
pub(crate) const MANIFEST_FILE: &str = "manifest.json";

/// The most bytes [`Manifest::load`] reads of a `manifest.json` (16 MiB): a longer file is
/// refused, not read until memory runs out.
pub(crate) const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// The contents of `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The table format version ([`crate::FORMAT_VERSION`]).
    pub format: u32,
    /// The rules of every table in the directory (canonical text form).
    pub rules: String,
    /// The index kind of the tables: `reachable` or `dense`.
    pub index: String,
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
            rules: rules.to_string(),
            index: "reachable".into(),
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
    /// kind is known, and every tier is at most [`MAX_SEEDS`](crate::MAX_SEEDS), has as many
    /// entries as its positions, a blake3 checksum in hex and a plain file name (no directory
    /// part: the tables are files of the manifest's directory).
    ///
    /// ```
    /// use oware_db::{Manifest, Rules};
    /// let m = Manifest::parse(r#"{"format": 1, "rules": "awari", "index": "reachable", "tiers": {}}"#)?;
    /// assert_eq!(m.rules()?, Rules::AWARI);
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
        m.rules()?;
        m.check().map_err(|detail| Error::Manifest {
            path: MANIFEST_FILE.into(),
            detail,
        })?;
        Ok(m)
    }

    /// Checks what the manifest says against what it can be: this format, a known index kind, and per
    /// tier a tier of `0..=48`, as many entries as the tier has positions, a plain file name
    /// and a blake3 checksum in hex. Returns what is wrong first, naming the entry.
    fn check(&self) -> Result<(), String> {
        if self.format != format::VERSION {
            return Err(format!(
                "format {}: this program reads format {}",
                self.format,
                format::VERSION
            ));
        }
        let Some(kind) = IndexKind::from_name(&self.index) else {
            return Err(format!(
                "index `{}`: not `reachable` or `dense`",
                self.index
            ));
        };
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
            if e.checksum.len() != 64 || !e.checksum.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!(
                    "tier {n}: checksum `{}` is not 64 hex digits",
                    e.checksum
                ));
            }
        }
        Ok(())
    }

    /// Writes `dir/manifest.json` atomically: `manifest.json.tmp`, fsync, rename, fsync of
    /// the directory.
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
        {
            let mut f = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
            f.write_all(text.as_bytes())
                .and_then(|()| f.write_all(b"\n"))
                .and_then(|()| f.sync_all())
                .map_err(|e| Error::io(&tmp, e))?;
        }
        fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
        sync_dir(dir)
    }

    /// The rules, parsed.
    ///
    /// # Errors
    /// [`Error::Manifest`] if the rules text does not parse.
    pub fn rules(&self) -> Result<Rules, Error> {
        self.rules.parse().map_err(|e| Error::Manifest {
            path: MANIFEST_FILE.into(),
            detail: format!("rules `{}`: {e}", self.rules),
        })
    }
}

/// Whether `name` names a file of the directory itself: one normal path component (not
/// empty, `.`, `..`, absolute, or with a separator), so that a manifest cannot point the
/// readers at a file outside its directory.
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
            file: format::tier_file_name(n),
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

        let mut index = m.clone();
        index.index = "sparse".into();
        assert!(bad(&index).contains("index `sparse`"));

        let mut rules = m;
        rules.rules = "oware".into();
        let e = bad(&rules);
        assert!(
            e.contains("manifest.json") && e.contains("rules `oware`"),
            "{e}"
        );
    }
}
