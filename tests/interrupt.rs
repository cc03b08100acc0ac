//! An interrupted `generate` (Ctrl-C, SIGTERM) removes its scratch and partial files: the
//! directory keeps complete tiers only, and the rerun gives the tables of a clean run.

#![cfg(unix)]

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{leftovers, ok, oware, tables};

#[test]
fn an_interrupt_leaves_complete_tiers_and_the_rerun_matches_a_clean_run() {
    // The interrupted runs aim at tier 18, far beyond where they are stopped; the reruns
    // complete tiers 0..=13 and are compared with a clean run of those.
    let max = "13";
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean");
    ok(&[
        "generate",
        "--quiet",
        "--dir",
        clean.to_str().unwrap(),
        "--max-seeds",
        max,
    ]);
    let expected = tables(&clean);
    for (attempt, (signal, after)) in [(libc::SIGINT, 10u8), (libc::SIGTERM, 12)]
        .into_iter()
        .enumerate()
    {
        let dir = tmp.path().join(format!("t{attempt}"));
        let d = dir.to_str().unwrap();
        let child = oware()
            .args(["generate", "--quiet", "--dir", d, "--max-seeds", "18"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Interrupt it in the middle of the run: once tier `after` is written.
        let start = Instant::now();
        while !dir.join(format!("tier-{after:02}.owt")).exists()
            && start.elapsed() < Duration::from_secs(120)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        // SAFETY: `kill` only sends a signal to the child started above.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(128 + signal), "attempt {attempt}");
        assert_eq!(leftovers(&dir), Vec::<String>::new(), "attempt {attempt}");
        // Whatever table is there is complete.
        for (name, bytes) in tables(&dir) {
            if let Some((_, reference)) = expected.iter().find(|(n, _)| *n == name) {
                assert!(*reference == bytes, "attempt {attempt}: {name} differs");
            }
        }
        ok(&["generate", "--quiet", "--dir", d, "--max-seeds", max]);
        let mut got = tables(&dir);
        got.truncate(expected.len());
        assert!(got == expected, "attempt {attempt}: tables differ");
        assert_eq!(leftovers(&dir), Vec::<String>::new());
    }
}

#[test]
fn an_interrupted_start_evaluation_that_generates_keeps_complete_tiers_only() {
    // `verify --start --generate` writes tables as `generate` does, and is interrupted alike.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("k2");
    let d = dir.to_str().unwrap();
    let child = oware()
        .args(["verify", "--start", "--seeds-per-house", "2", "--generate"])
        .args(["--quiet", "--dir", d])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !dir.join("tier-10.owt").exists() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: `kill` only sends a signal to the child started above.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(128 + libc::SIGINT));
    assert_eq!(leftovers(&dir), Vec::<String>::new());
    ok(&["verify", "--dir", d]);
}
