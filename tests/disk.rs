//! A tier that does not fit is refused before it starts, and a refused run leaves its
//! directory with complete tiers only: no scratch, no partial files. The disk tests run on a
//! small tmpfs that they mount in a mount namespace of their own (Linux only).

mod support;

#[cfg(target_os = "linux")]
use std::process::Command;

#[cfg(target_os = "linux")]
use oware_solver::memory::PROCESS_BYTES;
use support::run;
use support::{leftovers, ok, oware, text};

/// Set in the environment of a test run again inside new namespaces (see [`on_small_disk`]).
#[cfg(target_os = "linux")]
const INSIDE: &str = "OWARE_TEST_INSIDE_NAMESPACE";

/// Set to skip the small-disk tests, knowingly, where no namespace can be made.
#[cfg(target_os = "linux")]
const SKIP: &str = "OWARE_TEST_SKIP_SMALL_DISK";

/// The exit status of a test run inside new namespaces that could not mount its tmpfs.
#[cfg(target_os = "linux")]
const NO_MOUNT: i32 = 77;

/// A small tmpfs mounted on a new directory, unmounted when dropped.
#[cfg(target_os = "linux")]
struct Tmpfs {
    dir: tempfile::TempDir,
}

#[cfg(target_os = "linux")]
impl Tmpfs {
    /// Mounts a tmpfs of `size`; exits the process with [`NO_MOUNT`] if it cannot.
    fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match out {
            Ok(out) if out.status.success() => Tmpfs { dir },
            Ok(out) => {
                eprintln!("mount -t tmpfs: {}", text(&out.stderr).trim());
                std::process::exit(NO_MOUNT)
            }
            Err(e) => {
                eprintln!("mount: {e}");
                std::process::exit(NO_MOUNT)
            }
        }
    }
}

#[cfg(target_os = "linux")]
impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Runs `body` with the mount point of a tmpfs of `size`: a small disk, for the test `test`
/// (the name of the calling test function).
///
/// Mounting needs privileges, so the test runs itself again inside a new mount namespace
/// (`unshare --mount` as root, else `unshare --user --map-root-user --mount`, which needs no
/// privileges where unprivileged user namespaces are allowed), where it mounts the tmpfs,
/// runs `body` and the `oware` processes it starts, and where the mount disappears with the
/// namespace. A failure of `body` fails the test. Where no namespace can be made the test
/// fails too, saying why, unless `OWARE_TEST_SKIP_SMALL_DISK` is set: then it says loudly
/// that it was skipped.
#[cfg(target_os = "linux")]
fn on_small_disk(test: &str, size: &str, body: impl FnOnce(&std::path::Path)) {
    if std::env::var_os(INSIDE).is_some() {
        let fs = Tmpfs::mount(size);
        body(fs.dir.path());
        return;
    }
    let exe = std::env::current_exe().expect("the path of this test binary");
    // SAFETY: `geteuid` only reads the process's credentials.
    let root = unsafe { libc::geteuid() } == 0;
    let mut launchers: Vec<&[&str]> = Vec::new();
    if root {
        launchers.push(&["--mount"]);
    }
    launchers.push(&["--user", "--map-root-user", "--mount"]);
    let mut failures = Vec::new();
    for launcher in launchers {
        let out = Command::new("unshare")
            .args(launcher)
            .arg(&exe)
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .env(INSIDE, "1")
            .output();
        let out = match out {
            Ok(out) => out,
            Err(e) => {
                failures.push(format!("unshare: {e}"));
                continue;
            }
        };
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        if out.status.code() == Some(NO_MOUNT) || !stdout.contains("running 1 test") {
            // The namespace or the mount could not be made: the test did not run.
            failures.push(format!("unshare {}: {}", launcher.join(" "), stderr.trim()));
            continue;
        }
        assert!(
            out.status.success() && stdout.contains("test result: ok. 1 passed"),
            "{test} on a {size} tmpfs failed:\n{stdout}\n{stderr}"
        );
        return;
    }
    let why = format!(
        "cannot simulate a small disk for {test} (a {size} tmpfs in a new mount namespace): {}",
        failures.join("; ")
    );
    if std::env::var_os(SKIP).is_some() {
        eprintln!("SKIPPED, as {SKIP} asks: {why}");
        return;
    }
    panic!(
        "{why}\nAllow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 \
         or kernel.apparmor_restrict_unprivileged_userns=0), run as root, or set {SKIP}=1 to \
         skip this test knowingly."
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_tier_that_does_not_fit_on_disk_is_refused_before_it_starts() {
    on_small_disk(
        "a_tier_that_does_not_fit_on_disk_is_refused_before_it_starts",
        "3m",
        refused_before_it_starts,
    );
}

/// Generating up to tier 14 on a 3 MiB disk at `disk`: scores only, then with distances.
#[cfg(target_os = "linux")]
fn refused_before_it_starts(disk: &std::path::Path) {
    let d = disk.join("t");
    let ds = d.to_str().unwrap();
    let out = run(&[
        "generate",
        "--quiet",
        "--dir",
        ds,
        "--max-seeds",
        "14",
        "--no-distance",
    ]);
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
    ok(&[
        "generate",
        "--quiet",
        "--dir",
        ds,
        "--max-seeds",
        "11",
        "--no-distance",
    ]);
    assert_eq!(leftovers(&d), Vec::<String>::new());

    // With distance tables, each tier needs the room of two tables.
    let d = disk.join("u");
    let ds = d.to_str().unwrap();
    let out = run(&["generate", "--quiet", "--dir", ds, "--max-seeds", "14"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with(&format!("error: generating into {ds}: tier 11 needs "))
            && err.contains(" free; nothing was written for it"),
        "{err}"
    );
    assert_eq!(leftovers(&d), Vec::<String>::new());
    ok(&["verify", "--dir", ds, "-q"]);
}

#[cfg(target_os = "linux")]
#[test]
fn the_disk_check_judges_tables_by_the_recorded_ones() {
    on_small_disk(
        "the_disk_check_judges_tables_by_the_recorded_ones",
        "4m",
        judged_by_the_recorded_tables,
    );
}

/// Generating up to tier 13 on a 4 MiB disk at `disk`, scores only.
#[cfg(target_os = "linux")]
fn judged_by_the_recorded_tables(disk: &std::path::Path) {
    let d = disk.join("t");
    let ds = d.to_str().unwrap();
    // Tier 13 (2464320 positions) would need 2.4 MiB at a byte per position, more than the
    // disk has left beside the lower tiers' tables and side copies; judged by tier 12's
    // table (3.0 bits per position, 1.25 times that), it needs 1.2 MiB, and takes 1.0.
    ok(&[
        "generate",
        "--quiet",
        "--dir",
        ds,
        "--max-seeds",
        "13",
        "--no-distance",
    ]);
    assert_eq!(leftovers(&d), Vec::<String>::new());
    ok(&["verify", "--dir", ds, "-q"]);
}

#[cfg(target_os = "linux")]
#[test]
fn distances_out_of_core_count_their_scratch() {
    on_small_disk(
        "distances_out_of_core_count_their_scratch",
        "5000k",
        scratch_counted,
    );
}

/// Generating up to tier 12 with distances on a disk of 5,000 KiB at `disk`: in memory,
/// then out of core.
#[cfg(target_os = "linux")]
fn scratch_counted(disk: &std::path::Path) {
    let d = disk.join("t");
    let ds = d.to_str().unwrap();
    ok(&["generate", "--quiet", "--dir", ds, "--max-seeds", "12"]);
    std::fs::remove_dir_all(&d).unwrap();
    let d = disk.join("u");
    let ds = d.to_str().unwrap();
    let out = oware()
        .args(["generate", "--quiet", "--dir", ds, "--max-seeds", "12"])
        .env("OWARE_DISTANCE_WINDOW", "65536")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    // Tier 12's two tables (2.88 MiB, as without the window: the disk has room for them)
    // and its windows' scratch at 4 bits per position (0.64 MiB).
    assert!(
        err.starts_with(&format!(
            "error: generating into {ds}: tier 12 needs 3.52 MiB of disk in {ds}, "
        )) && err.contains(" free; nothing was written for it"),
        "{err}"
    );
    assert_eq!(leftovers(&d), Vec::<String>::new());
    ok(&["verify", "--dir", ds, "-q"]);
}

#[test]
fn a_tier_refused_for_memory_leaves_complete_tiers_only() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let out = oware()
        .args([
            "generate",
            "--quiet",
            "--dir",
            d,
            "--max-seeds",
            "13",
            "--no-distance",
        ])
        // Tier 11's cells, frontier and smallest slice fit beside the process's reserve;
        // tier 12's (1.69 MB) do not.
        .env(
            "OWARE_MEMORY_LIMIT",
            (1_000_000 + PROCESS_BYTES).to_string(),
        )
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

#[cfg(target_os = "linux")]
#[test]
fn recompress_refuses_a_tier_that_does_not_fit() {
    on_small_disk(
        "recompress_refuses_a_tier_that_does_not_fit",
        "1m",
        recompress_refused,
    );
}

/// Recompressing tiers 0..=11 onto a 1 MiB disk at `disk`.
#[cfg(target_os = "linux")]
fn recompress_refused(disk: &std::path::Path) {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let s = src.to_str().unwrap();
    ok(&["generate", "--quiet", "--dir", s, "--max-seeds", "11"]);
    let d = disk.join("t");
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

#[cfg(target_os = "linux")]
#[test]
fn verify_deep_on_a_full_disk_verifies_and_leaves_no_temporary() {
    on_small_disk(
        "verify_deep_on_a_full_disk_verifies_and_leaves_no_temporary",
        "2m",
        verified_on_a_full_disk,
    );
}

/// Deep-verifying tiers 0..=9 on a disk at `disk` filled but for two pages (the lock file
/// takes one, the manifest's temporary one and fails on the next), then filled to the last
/// byte (the lock file cannot be written): every tier is re-proved, the output says why
/// nothing was recorded, and no `manifest.json.tmp` stays.
#[cfg(target_os = "linux")]
fn verified_on_a_full_disk(disk: &std::path::Path) {
    use std::io::Write;
    let d = disk.join("t");
    let ds = d.to_str().unwrap();
    ok(&["generate", "--quiet", "--dir", ds, "--max-seeds", "9"]);
    let manifest = std::fs::read(d.join("manifest.json")).unwrap();
    let mut filler = std::fs::File::create(disk.join("filler")).unwrap();
    let fill = |filler: &mut std::fs::File| {
        for chunk in [65536, 4096, 512, 1] {
            while filler.write_all(&vec![0u8; chunk]).is_ok() {}
        }
    };
    fill(&mut filler);
    let len = filler.metadata().unwrap().len();
    filler.set_len(len - 8192).unwrap();
    for why in ["cannot update the manifest: ", "cannot lock "] {
        let out = run(&["verify", "--deep", "--dir", ds]);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
        for n in 0..=9 {
            assert!(
                stdout.contains(&format!("tier {n:2}  OK      deep: ")),
                "tier {n}:\n{stdout}"
            );
        }
        assert!(
            stdout.contains(&format!("not recorded as verified in the manifest: {why}"))
                && stdout.contains("No space left on device"),
            "{stdout}"
        );
        assert!(
            stdout.contains("deep verification of tiers 0..=9 OK"),
            "{stdout}"
        );
        assert_eq!(leftovers(&d), Vec::<String>::new());
        assert_eq!(std::fs::read(d.join("manifest.json")).unwrap(), manifest);
        fill(&mut filler);
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_disk_that_fills_while_distances_spill_stops_the_tier_cleanly() {
    on_small_disk(
        "a_disk_that_fills_while_distances_spill_stops_the_tier_cleanly",
        "24m",
        spill_on_a_disk_that_fills,
    );
}

/// Generating tier 14 with its distances kept out of core (`OWARE_DISTANCE_WINDOW`: 34
/// windows, one run of the propagation each) on a disk at `disk` that another process fills
/// once the first window is written: the tier stops with one error naming the scratch file,
/// the directory keeps its complete tiers and nothing else, and a second run, the disk
/// freed, makes a tier 14 that deep verification proves, distances included.
#[cfg(target_os = "linux")]
fn spill_on_a_disk_that_fills(disk: &std::path::Path) {
    use std::io::Write;
    let d = disk.join("t");
    let ds = d.to_str().unwrap();
    ok(&["generate", "--quiet", "--dir", ds, "--max-seeds", "13"]);
    let window = ("OWARE_DISTANCE_WINDOW", "131072");
    let child = oware()
        .args(["generate", "--quiet", "--dir", ds, "--max-seeds", "14"])
        .env(window.0, window.1)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The first window's distances in the scratch directory: the spill has begun.
    let scratch = d.join(oware_solver::dir::SCRATCH_DIR);
    let spilled = || {
        std::fs::read_dir(&scratch).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("tier-14.distances-")
            })
        })
    };
    let start = std::time::Instant::now();
    while !spilled() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(120),
            "no window was spilled"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let filler = disk.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    for chunk in [65536, 4096, 512, 1] {
        while f.write_all(&vec![0u8; chunk]).is_ok() {}
    }
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with(&format!(
            "error: generating into {ds}: tier 14: scratch file "
        )) && lines[0].contains("No space left on device"),
        "{err}"
    );
    assert_eq!(leftovers(&d), Vec::<String>::new());
    assert!(!d.join("tier-14.owt").exists());
    ok(&["verify", "--dir", ds, "-q"]);
    // The disk freed, the tier is made again, and proved.
    drop(f);
    std::fs::remove_file(&filler).unwrap();
    let out = oware()
        .args(["generate", "--quiet", "--dir", ds, "--max-seeds", "14"])
        .env(window.0, window.1)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(leftovers(&d), Vec::<String>::new());
    ok(&["verify", "--deep", "--dir", ds, "--tiers", "14", "-q"]);
}
