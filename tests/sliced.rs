//! `generate` under a memory limit that leaves no room for a tier's lower tiers computes its
//! exits in slices, and one that leaves no room for its distances keeps them out of core:
//! the tables are byte-identical to an unlimited run, a run killed in the middle of such a
//! tier resumes to the same tables, and a limit too small even for the tier's own cells is
//! refused with the figures.

#![cfg(unix)]

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::Rules;
use oware_solver::memory::{
    distance_bytes, far_exit_bytes, frontier_bytes, tier_memory, window_bytes, PROCESS_BYTES,
};
use support::{distance_tables, leftovers, ok, oware, tables, text};

/// A limit that fits tier 16's cells beside a third of its lower tiers, its cells and
/// frontier, and every lower tier with all of its own.
fn limit_for_slices() -> u64 {
    let positions = TierIndex::new(16, IndexKind::Reachable).size();
    let own = tier_memory(positions) + far_exit_bytes(16, positions);
    let beside = own - frontier_bytes(positions);
    own.max(beside + window_bytes(&Rules::ABAPA, 16) / 3) + PROCESS_BYTES
}

/// `oware generate` of tiers `0..=max` into `dir`, under the environment `env`.
fn generate_command(dir: &Path, max: &str, env: &[(&str, String)]) -> std::process::Command {
    let mut cmd = oware();
    cmd.args([
        "generate",
        "--dir",
        dir.to_str().unwrap(),
        "--max-seeds",
        max,
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn generate(dir: &Path, max: &str, env: &[(&str, String)]) -> std::process::Output {
    generate_command(dir, max, env).output().unwrap()
}

/// Tiers `0..=max` generated into `parent/clean` with no limit: the reference.
fn clean_run(parent: &Path, max: &str) -> std::path::PathBuf {
    let clean = parent.join("clean");
    ok(&[
        "generate",
        "--quiet",
        "--dir",
        clean.to_str().unwrap(),
        "--max-seeds",
        max,
    ]);
    clean
}

/// Starts `generate` of tiers `0..=max` into `dir` under `env` and kills it (`SIGKILL`)
/// `delay_ms` after its log shows a line holding `marker`: the log up to there.
fn killed_at(dir: &Path, max: &str, env: &[(&str, String)], marker: &str, delay_ms: u64) -> String {
    let mut child = generate_command(dir, max, env)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut seen = String::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains(marker) {
            std::thread::sleep(std::time::Duration::from_millis(delay_ms));
            // SAFETY: `kill` only sends a signal to the child started above.
            assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGKILL) }, 0);
            break;
        }
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "not killed in time:\n{seen}");
    seen
}

#[test]
fn a_memory_limit_that_forces_slices_gives_the_same_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = clean_run(tmp.path(), "16");
    let expected = tables(&clean);
    let limited = tmp.path().join("limited");
    let limit = limit_for_slices();
    let out = generate(&limited, "16", &[("OWARE_MEMORY_LIMIT", limit.to_string())]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Tier 16 is cut into 4 slices (a third of the window, rounded down to whole blocks);
    // tier 15 still fits whole.
    assert!(err.contains("tier 16: exits in 4 slices of ≤ "), "{err}");
    assert!(err.contains("in 4 sweeps (slices of ≤ "), "{err}");
    assert!(!err.contains("tier 15: exits in"), "{err}");
    assert!(tables(&limited) == expected, "tables differ");
    assert_eq!(leftovers(&limited), Vec::<String>::new());
    // Every tier from slices of 5,000 bytes (4 blocks).
    let forced = tmp.path().join("forced");
    let out = generate(&forced, "12", &[("OWARE_SLICE_BYTES", "5000".into())]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("tier 12: exits in "), "{err}");
    let mut want = expected.clone();
    want.truncate(13);
    assert!(tables(&forced) == want, "forced slices: tables differ");
    // Its distances too, and verify --deep proves them from slices.
    let mut want = distance_tables(&clean);
    want.truncate(13);
    assert!(
        distance_tables(&forced) == want,
        "forced slices: distances differ"
    );
    let out = oware()
        .args(["verify", "--deep", "--dir", forced.to_str().unwrap()])
        .env("OWARE_SLICE_BYTES", "5000")
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("tier 12  OK      distances: each follows from its moves"),
        "{stdout}"
    );
    assert!(
        !generate(&forced, "12", &[("OWARE_SLICE_BYTES", "x".into())])
            .status
            .success()
    );
}

/// A limit that leaves tier 16 no room for its distances beside its cells but for a third
/// of them: they are kept out of core, in 4 windows.
fn limit_for_distance_windows() -> u64 {
    let positions = TierIndex::new(16, IndexKind::Reachable).size();
    let own = tier_memory(positions) + far_exit_bytes(16, positions);
    let fixed = distance_bytes(positions) - positions;
    own + PROCESS_BYTES + fixed + positions / 3
}

/// The peak memory of the log line of tier `tier` (`peak memory 23.9 MB`), in bytes, and the
/// rounding of its three figures.
fn logged_peak(log: &str, tier: u8) -> (f64, f64) {
    let line = log
        .lines()
        .find(|l| l.starts_with(&format!("tier {tier:2}: solved")))
        .unwrap_or_else(|| panic!("no line of tier {tier}:\n{log}"));
    let rest = line.split("peak memory ").nth(1).unwrap();
    let mut words = rest.split([' ', ';']);
    let value: f64 = words.next().unwrap().parse().unwrap();
    let unit = match words.next().unwrap() {
        "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        u => panic!("unit {u} in {line}"),
    };
    (value * unit, 0.05 * unit)
}

/// Under a limit that leaves a tier no room for its distances beside its cells, they are
/// kept out of core and decided in windows: the distance tables are byte-identical to an
/// unlimited run's, the peak stays within the limit, `verify --deep` proves them, the
/// manifest says how they were made, and no scratch file is left. Forced windows on every
/// tier give the same tables too.
#[test]
fn distances_kept_out_of_core_are_those_of_an_unlimited_run() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = clean_run(tmp.path(), "16");
    let limited = tmp.path().join("limited");
    let limit = limit_for_distance_windows();
    let out = generate(&limited, "16", &[("OWARE_MEMORY_LIMIT", limit.to_string())]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("out of core in 4 windows"), "{err}");
    assert!(!err.contains("no distance table"), "{err}");
    let (peak, rounding) = logged_peak(&err, 16);
    assert!(
        peak <= limit as f64 + rounding,
        "peak {peak} over the limit {limit}"
    );
    assert!(tables(&limited) == tables(&clean), "scores differ");
    assert!(
        distance_tables(&limited) == distance_tables(&clean),
        "distances differ"
    );
    assert_eq!(leftovers(&limited), Vec::<String>::new());
    let json = text(
        &oware()
            .args(["info", "--json", "--dir", limited.to_str().unwrap()])
            .output()
            .unwrap()
            .stdout,
    );
    assert!(json.contains("\"runs\": 4"), "{json}");
    // verify --deep proves them under the same limit, reading them in windows.
    let out = oware()
        .args(["verify", "--deep", "--dir", limited.to_str().unwrap()])
        .env("OWARE_MEMORY_LIMIT", limit.to_string())
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let line = stdout
        .lines()
        .find(|l| l.starts_with("tier 16  OK      distances: each follows from its moves"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("windows)"), "{line}");
    // Every tier from 2^16 positions up in windows of 2^16.
    let forced = tmp.path().join("forced");
    let out = generate(&forced, "13", &[("OWARE_DISTANCE_WINDOW", "65536".into())]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("out of core in 38 windows"), "{err}");
    let mut want = distance_tables(&clean);
    want.truncate(14);
    assert!(
        distance_tables(&forced) == want,
        "forced windows: distances differ"
    );
    assert_eq!(leftovers(&forced), Vec::<String>::new());
    // And verify --deep reads them in windows as well, whatever the memory.
    let out = oware()
        .args(["verify", "--deep", "--dir", forced.to_str().unwrap()])
        .env("OWARE_DISTANCE_WINDOW", "65536")
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("tier 13  OK      distances: each follows from its moves (longest 102 plies; read in 38 windows)"),
        "{stdout}"
    );
    for bad in ["0", "x"] {
        let out = generate(&forced, "13", &[("OWARE_DISTANCE_WINDOW", bad.into())]);
        assert!(!out.status.success());
        assert!(text(&out.stderr).contains("OWARE_DISTANCE_WINDOW"));
    }
}

/// A run killed while it decides a tier's distances in windows resumes to the same tables,
/// and leaves no scratch file.
#[test]
fn a_run_killed_in_a_distance_window_resumes_to_the_same_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = clean_run(tmp.path(), "13");
    let dir = tmp.path().join("killed");
    // Some windows in.
    let env = [("OWARE_DISTANCE_WINDOW", "65536".to_string())];
    let seen = killed_at(&dir, "13", &env, "tier 13: propagate", 300);
    assert!(!dir.join("tier-13.owd").exists(), "{seen}");
    let out = generate(&dir, "13", &[("OWARE_DISTANCE_WINDOW", "65536".into())]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("1 solved"), "{err}");
    assert!(tables(&dir) == tables(&clean), "scores differ");
    assert!(
        distance_tables(&dir) == distance_tables(&clean),
        "distances differ"
    );
    assert_eq!(leftovers(&dir), Vec::<String>::new());
}

#[test]
fn a_sliced_run_killed_mid_tier_resumes_to_the_same_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = clean_run(tmp.path(), "16");
    let expected = tables(&clean);
    let dir = tmp.path().join("killed");
    let limit = limit_for_slices().to_string();
    // Killed as soon as it starts the slices of tier 16.
    let env = [("OWARE_MEMORY_LIMIT", limit.clone())];
    let seen = killed_at(&dir, "16", &env, "tier 16: exits in", 0);
    assert!(!dir.join("tier-16.owt").exists(), "{seen}");
    let out = generate(&dir, "16", &[("OWARE_MEMORY_LIMIT", limit)]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("1 solved"), "{err}");
    assert!(tables(&dir) == expected, "tables differ");
    assert_eq!(leftovers(&dir), Vec::<String>::new());
}

#[test]
fn a_limit_below_the_cells_of_a_tier_is_refused_with_the_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let positions = TierIndex::new(12, IndexKind::Reachable).size();
    let own = tier_memory(positions) + far_exit_bytes(12, positions);
    let beside = own - frontier_bytes(positions);
    // The cells fit beside the smallest slice, but the cells and frontier do not.
    let limit = own + PROCESS_BYTES - 1;
    let out = generate(
        tmp.path(),
        "13",
        &[("OWARE_MEMORY_LIMIT", limit.to_string())],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    let last = err.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("error: generating into ")
            && last.contains(&format!(
                "tier 12 needs {} bytes of memory (1339702 positions: {own} for its cells, frontier and far exits, of which {beside} beside 65536 for the smallest slice of its lower tiers while its exits are computed; {PROCESS_BYTES} for the process and its buffers) but only {limit} are available; nothing was written for it",
                own + PROCESS_BYTES
            )),
        "{last}"
    );
    assert!(tmp.path().join("tier-11.owt").exists());
}
