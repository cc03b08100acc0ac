//! A tier that does not fit is refused before it starts, and a refused run leaves its
//! directory with complete tiers only: no scratch, no partial files.

mod support;

use std::process::Command;

use support::{leftovers, ok, oware, run, text};

/// A small tmpfs mounted on a new directory, unmounted when dropped.
#[cfg(unix)]
struct Tmpfs {
    dir: tempfile::TempDir,
}

#[cfg(unix)]
impl Tmpfs {
    /// `None` (with the reason printed) where a filesystem cannot be mounted.
    fn mount(size: &str) -> Option<Tmpfs> {
        // SAFETY: `geteuid` only reads the process's credentials.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: mounting a small tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status();
        if !status.is_ok_and(|s| s.success()) {
            eprintln!("skipped: cannot mount a tmpfs here");
            return None;
        }
        Some(Tmpfs { dir })
    }
}

#[cfg(unix)]
impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[cfg(unix)]
#[test]
fn a_tier_that_does_not_fit_on_disk_is_refused_before_it_starts() {
    let Some(fs) = Tmpfs::mount("3m") else {
        return;
    };
    let d = fs.dir.path().join("t");
    let ds = d.to_str().unwrap();
    let out = run(&["generate", "--quiet", "--dir", ds, "--max-seeds", "14"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    // Tier 12 (1339702 positions) needs its table and its side copy: 2.72 MiB.
    assert!(
        err.starts_with(&format!(
            "error: generating into {ds}: tier 12 needs 2.72 MiB of disk in {ds}, "
        )) && err.contains(" free; nothing was written for it"),
        "{err}"
    );
    assert_eq!(leftovers(&d), Vec::<String>::new());
    // The tiers below are complete.
    ok(&["verify", "--dir", ds, "-q"]);
    // What fits still runs.
    ok(&["generate", "--quiet", "--dir", ds, "--max-seeds", "11"]);
    assert_eq!(leftovers(&d), Vec::<String>::new());
}

#[test]
fn a_tier_refused_for_memory_leaves_complete_tiers_only() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let out = oware()
        .args(["generate", "--quiet", "--dir", d, "--max-seeds", "13"])
        .env("OWARE_MEMORY_LIMIT", "1000000")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("tier 12 needs"));
    // Tiers 0..=11 were written; the side copies of the lower tiers are gone.
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new());
    assert!(tmp.path().join("tier-11.owt").exists());
    ok(&["generate", "--quiet", "--dir", d, "--max-seeds", "13"]);
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new());
    ok(&["verify", "--dir", d, "-q"]);
}

#[cfg(unix)]
#[test]
fn recompress_refuses_a_tier_that_does_not_fit() {
    let Some(fs) = Tmpfs::mount("1m") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let s = src.to_str().unwrap();
    ok(&["generate", "--quiet", "--dir", s, "--max-seeds", "11"]);
    let d = fs.dir.path().join("t");
    let ds = d.to_str().unwrap();
    let out = run(&[
        "recompress",
        "--dir",
        s,
        "--out",
        ds,
        "--compression",
        "zstd",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    // Tier 11 (701064 positions) may take up to 0.72 MiB; the smaller ones were written.
    assert!(
        err.starts_with("error: tier 1")
            && err.contains(&format!("of disk in {ds}, "))
            && err.contains(" free; nothing was written for it"),
        "{err}"
    );
    assert_eq!(leftovers(&d), Vec::<String>::new());
}
