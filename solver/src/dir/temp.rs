//! The temporaries of a directory's writers (`tier-NN.owt.tmp`, `tier-NN.owd.tmp`,
//! `manifest.json.tmp`, the scratch directory): how to tell them and how to remove them.

use std::path::Path;

use super::SCRATCH_DIR;

/// Whether `name` is a temporary file of a writer: `tier-NN.owt.tmp`, `tier-NN.owd.tmp`,
/// `manifest.json.tmp`, or `scores.N.tmp` (of `export --format romein`).
pub fn is_temporary(name: &str) -> bool {
    name.strip_suffix(".tmp").is_some_and(|f| {
        f == "manifest.json"
            || oware_db::format::tier_of_file_name(f).is_some()
            || oware_db::format::tier_of_distance_file_name(f).is_some()
            || oware_db::romein::tier_of_file_name(f).is_some()
    })
}

/// Removes the temporaries of writers from `dir`: the scratch directory and every
/// [`is_temporary`] file. Only for a caller that holds the directory's lock (else they may
/// be a live writer's). Failures are ignored: what stays is removed by the next writer.
pub(crate) fn remove_temporaries(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir.join(SCRATCH_DIR));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_str().is_some_and(is_temporary) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dir::LOCK_FILE;

    #[test]
    fn temporaries_are_the_writers_files_only() {
        assert!(is_temporary("tier-07.owt.tmp"));
        assert!(is_temporary("tier-07.owd.tmp"));
        assert!(!is_temporary("tier-07.owd"));
        assert!(is_temporary("manifest.json.tmp"));
        assert!(is_temporary("scores.16.tmp"));
        assert!(!is_temporary("scores.16"));
        assert!(!is_temporary("tier-07.owt"));
        assert!(!is_temporary("notes.tmp"));
        assert!(!is_temporary(LOCK_FILE));
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "tier-03.owt.tmp",
            "manifest.json.tmp",
            "tier-03.owt",
            "notes.tmp",
        ] {
            std::fs::write(dir.path().join(f), b"x").unwrap();
        }
        std::fs::create_dir_all(dir.path().join(SCRATCH_DIR).join("rank-1")).unwrap();
        remove_temporaries(dir.path());
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["notes.tmp", "tier-03.owt"]);
    }
}
