//! `manifest.json`: the rules of a table directory and, per tier, its file, size, checksum
//! and the statistics of its generation.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Component, Path};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::format;
use crate::position::MAX_SEEDS;
use crate::rules::Rules;

/// The manifest file name inside a table directory.
pub(crate) const MANIFEST_FILE: &str = "manifest.json";

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
    /// # Errors
    /// [`Error::Io`] if it cannot be read, [`Error::Manifest`] if it is not a valid manifest.
    pub fn load(dir: &Path) -> Result<Option<Manifest>, Error> {
        let path = dir.join(MANIFEST_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        Manifest::parse(&text).map(Some).map_err(|e| match e {
            Error::Manifest { detail, .. } => Error::Manifest { path, detail },
            other => other,
        })
    }

    /// Parses the text of a `manifest.json` (as [`Manifest::load`] does after reading the
    /// file) and checks it: its rules text parses, every tier is at most
    /// [`MAX_SEEDS`](crate::MAX_SEEDS), and every tier's file is a plain file name (no
    /// directory part: the tables are files of the manifest's directory).
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
        for (&tier, e) in &m.tiers {
            let bad = |detail: String| Error::Manifest {
                path: MANIFEST_FILE.into(),
                detail,
            };
            if tier > MAX_SEEDS {
                return Err(bad(format!("tier {tier} (the tiers are 0..={MAX_SEEDS})")));
            }
            if !is_plain_file_name(&e.file) {
                return Err(bad(format!(
                    "tier {tier}: file `{}` is not a plain file name inside the directory",
                    e.file
                )));
            }
        }
        Ok(m)
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
