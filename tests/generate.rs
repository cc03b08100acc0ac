//! End-to-end tests of `oware generate`: tables that verify, resume after a kill, refusals.

#[path = "../solver/tests/common/mod.rs"]
mod common;
mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use oware_db::table::Table;
use oware_db::Rules;
use oware_solver::memory::PROCESS_BYTES;
use support::{ok, oware, run};

/// Every table of `dir`, scores (`.owt`) and distances (`.owd`), by name, with its bytes.
fn tier_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "owt" || e == "owd"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn read_tiers(dir: &Path, max: u8) -> Vec<Vec<i8>> {
    (0..=max)
        .map(|n| {
            Table::open(&dir.join(format!("tier-{n:02}.owt")))
                .unwrap()
                .read_all()
                .unwrap()
        })
        .collect()
}

#[test]
fn generated_tiers_satisfy_the_recurrence_and_match_the_brute_force() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for rules in ["abapa", "awari"] {
        let sub = format!("{d}/{rules}");
        ok(&[
            "generate",
            "--quiet",
            "--dir",
            &sub,
            "--rules",
            rules,
            "--max-seeds",
            "10",
        ]);
        let r: Rules = rules.parse().unwrap();
        let tiers = read_tiers(Path::new(&sub), 10);
        let refs: Vec<&[i8]> = tiers.iter().map(|v| v.as_slice()).collect();
        for n in 0..=10u8 {
            let bad = common::check_tier(&r, &refs[..=n as usize], n);
            assert!(bad.is_empty(), "{rules} tier {n}: {bad:?}");
        }
        let brute = common::brute_all(&r, 8);
        for n in 0..=8usize {
            assert!(
                brute[n] == tiers[n],
                "{rules} tier {n} differs from the brute force"
            );
        }
    }
}

#[test]
fn thread_counts_give_identical_tables() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let mut files = Vec::new();
    for t in ["1", "2", "4"] {
        let sub = format!("{d}/t{t}");
        ok(&[
            "generate",
            "--quiet",
            "--dir",
            &sub,
            "--max-seeds",
            "12",
            "--threads",
            t,
        ]);
        files.push(tier_files(Path::new(&sub)));
    }
    assert_eq!(files[0].len(), 26, "13 score tables and 13 distance tables");
    assert!(files[0] == files[1] && files[1] == files[2]);
}

/// The SIMD paths give the portable paths' bytes: tables (scores and distances, both
/// presets) generated with `OWARE_SIMD=off` are identical to the default's; a value other
/// than `auto` or `off` is a one-line error.
#[test]
fn simd_paths_give_the_portable_paths_tables() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for rules in ["abapa", "awari"] {
        let mut files = Vec::new();
        for simd in ["off", "auto"] {
            let sub = format!("{d}/{rules}-{simd}");
            let args = [
                "generate",
                "--quiet",
                "--dir",
                &sub,
                "--rules",
                rules,
                "--max-seeds",
                "14",
            ];
            let out = oware().args(args).env("OWARE_SIMD", simd).output().unwrap();
            assert!(out.status.success(), "{}", support::text(&out.stderr));
            files.push(tier_files(Path::new(&sub)));
        }
        assert_eq!(files[0].len(), 30, "15 score tables and 15 distance tables");
        assert!(files[0] == files[1], "{rules}: the tables differ");
    }
    let out = oware()
        .args(["generate", "--quiet", "--dir", d, "--max-seeds", "3"])
        .env("OWARE_SIMD", "avx9")
        .output()
        .unwrap();
    let err = support::text(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(
        err.trim_end(),
        "error: OWARE_SIMD=avx9: give auto (the default) or off"
    );
}
#[test]
fn killed_generation_resumes_to_identical_tables() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let reference = format!("{d}/ref");
    ok(&[
        "generate",
        "--quiet",
        "--dir",
        &reference,
        "--max-seeds",
        "13",
    ]);
    let expected = tier_files(Path::new(&reference));
    for (attempt, delay_ms) in [150u64, 400, 900, 1600].into_iter().enumerate() {
        let sub = format!("{d}/killed{attempt}");
        let mut child = oware()
            .args(["generate", "--quiet", "--dir", &sub, "--max-seeds", "13"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().ok();
        child.wait().unwrap();
        let out = ok(&["generate", "--dir", &sub, "--max-seeds", "13"]);
        let _ = out;
        assert!(
            tier_files(Path::new(&sub)) == expected,
            "attempt {attempt}: tables differ after resuming"
        );
    }
    // A complete directory is kept as it is.
    let out = run(&["generate", "--dir", &reference, "--max-seeds", "13"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 solved"));
}

#[test]
fn a_corrupt_tier_is_regenerated() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    ok(&["generate", "--quiet", "--dir", d, "--max-seeds", "9"]);
    let expected = tier_files(dir.path());
    let path = dir.path().join("tier-07.owt");
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let out = run(&["generate", "--dir", d, "--max-seeds", "9"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 solved"));
    assert!(tier_files(dir.path()) == expected);
}

#[test]
fn other_rules_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    ok(&["generate", "--quiet", "--dir", d, "--max-seeds", "6"]);
    let before = tier_files(dir.path());
    let out = run(&[
        "generate",
        "--dir",
        d,
        "--rules",
        "awari",
        "--max-seeds",
        "7",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("abapa") && err.contains("awari"), "{err}");
    assert!(tier_files(dir.path()) == before);
}

#[test]
fn a_tier_too_large_for_memory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // Tier 8 needs about 99 kB beside the process's reserve, tier 9 about 215 kB.
    let out = oware()
        .args(["generate", "--quiet", "--dir", d, "--max-seeds", "10"])
        .env("OWARE_MEMORY_LIMIT", (150_000 + PROCESS_BYTES).to_string())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tier 9 needs"), "{err}");
    let files = tier_files(dir.path());
    assert_eq!(files.len(), 9, "tiers 0..=8 are kept");
    // With enough memory the run completes what is missing.
    let out = run(&["generate", "--dir", d, "--max-seeds", "10"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 solved"));
}

#[test]
fn progress_is_logged_per_tier_when_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = run(&["generate", "--dir", d, "--max-seeds", "5"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for n in 0..=5 {
        assert!(err.contains(&format!("tier {n:2}: solved")), "{err}");
    }
    assert!(err.contains("init") && err.contains("propagate"), "{err}");
    let quiet = run(&["generate", "--quiet", "--dir", d, "--max-seeds", "6"]);
    assert!(quiet.status.success());
    assert!(quiet.stderr.is_empty());
}

/// Romein & Bal's published example, end to end through `generate` and `probe`: under
/// `awari`, `1 1 1 1 1 2 4 2 3 0 0 0` scores 0 and its six moves (houses 0..5) score
/// -1 -1 -2 -2 -2 0.
#[test]
fn romein_bal_published_example_under_awari() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    ok(&[
        "generate",
        "--quiet",
        "--dir",
        d,
        "--rules",
        "awari",
        "--max-seeds",
        "16",
    ]);
    let out = ok(&[
        "probe",
        "--dir",
        d,
        "--rules",
        "awari",
        "--json",
        "1 1 1 1 1 2 4 2 3 0 0 0",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["score"], 0, "{out}");
    let mut by_house = [None; 6];
    for m in v["moves"].as_array().unwrap() {
        by_house[m["house"].as_u64().unwrap() as usize] = m["score"].as_i64();
    }
    assert_eq!(
        by_house,
        [Some(-1), Some(-1), Some(-2), Some(-2), Some(-2), Some(0)],
        "{out}"
    );
}
