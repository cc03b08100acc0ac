//! End-to-end tests of `oware verify`: plain checksums, deep re-verification, the start
//! position, on real generated tables damaged in known ways.

mod support;

use std::path::Path;
use std::process::Output;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::manifest::Manifest;
use oware_db::table::Table;
use oware_db::write::write_table;
use oware_db::{Position, Rules, Tablebase};

#[cfg(unix)]
use support::hold_lock;
use support::{run, text};

fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

fn generate(dir: &str, rules: &str, max: u8) {
    let max = max.to_string();
    let o = run(&[
        "generate",
        "--quiet",
        "--dir",
        dir,
        "--rules",
        rules,
        "--max-seeds",
        &max,
    ]);
    assert!(o.status.success(), "generate failed: {}", stderr(&o));
}

fn tier_path(dir: &Path, n: u8) -> std::path::PathBuf {
    dir.join(format!("tier-{n:02}.owt"))
}

/// Rewrites tier `n` with `scores` through the table writer, and records the new file's
/// checksum and size in the manifest: a table that every checksum accepts.
fn rewrite_tier(dir: &Path, rules: &Rules, n: u8, scores: &[i8]) {
    let written = write_table(dir, rules, n, IndexKind::Reachable, scores).unwrap();
    let mut m = Manifest::load(dir).unwrap().unwrap();
    let e = m.tiers.get_mut(&n).unwrap();
    e.checksum = written.checksum;
    e.file_size = written.file_size;
    m.save(dir).unwrap();
}

#[test]
fn a_wrong_score_with_a_correct_checksum_is_caught_by_deep_verification() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    generate(d, "abapa", 9);
    let o = run(&["verify", "--deep", "--dir", d]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("deep verification of tiers 0..=9 OK"));

    // Change one score of tier 8 by 2 (keeping its parity and bound): the recurrence at
    // that position breaks, since its children are unchanged.
    let n = 8u8;
    let mut scores = Table::open(&tier_path(tmp.path(), n))
        .unwrap()
        .read_all()
        .unwrap();
    let i = scores.len() / 2 + 17;
    let old = scores[i];
    let new = if old + 2 <= n as i8 { old + 2 } else { old - 2 };
    scores[i] = new;
    rewrite_tier(tmp.path(), &Rules::ABAPA, n, &scores);
    let p = TierIndex::new(n, IndexKind::Reachable).unrank(i as u64);

    let plain = run(&["verify", "--dir", d]);
    assert!(
        plain.status.success(),
        "plain verify sees only checksums: {}",
        stdout(&plain)
    );

    let deep = run(&["verify", "--deep", "--dir", d]);
    let out = stdout(&deep);
    println!("{out}");
    assert!(!deep.status.success(), "{out}");
    assert!(out.contains("tier  8  FAILED"), "{out}");
    let named = format!(
        "position {p} (index {i}): stored {new}, the recurrence over its moves gives {old}"
    );
    assert!(out.contains(&named), "expected `{named}` in:\n{out}");
    assert!(out.contains("tiers 9..=9 not verified"), "{out}");
    // Tiers below are fine.
    assert!(out.contains("tier  7  OK"), "{out}");

    // JSON names it too.
    let json = run(&["verify", "--deep", "--json", "--dir", d]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["ok"], false);
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["tier"] == 8)
        .unwrap();
    assert_eq!(row["status"], "failed");
    assert!(row["first"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["position"] == p.to_string() && m["stored"] == new && m["expected"] == old));

    // Re-proving only tier 9 trusts tier 8 (checksum fine) and passes: say so.
    let top = run(&["verify", "--deep", "--tiers", "9..9", "--dir", d]);
    let out = stdout(&top);
    assert!(out.contains("tiers 0..=8 are trusted"), "{out}");
}

#[test]
fn a_flipped_byte_is_caught_by_plain_verification() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    generate(d, "abapa", 8);
    let ok = run(&["verify", "--dir", d]);
    assert!(ok.status.success(), "{}", stdout(&ok));
    let out = stdout(&ok);
    for n in 0..=8 {
        assert!(out.contains(&format!("tier {n:2}  OK")), "{out}");
    }
    assert!(out.contains("all 9 tiers 0..=8 OK"), "{out}");

    let path = tier_path(tmp.path(), 7);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let bad = run(&["verify", "--dir", d]);
    let out = stdout(&bad);
    println!("{out}");
    assert!(!bad.status.success(), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("tier  7"))
        .unwrap_or_else(|| panic!("no line for tier 7:\n{out}"));
    assert!(
        line.contains("FAILED") && line.contains("checksum mismatch"),
        "{line}"
    );
    assert!(line.contains("tier-07.owt"), "{line}");
    assert!(out.contains("1 of 9 tiers FAILED"), "{out}");
    // The others are still OK.
    assert!(
        out.contains("tier  6  OK") && out.contains("tier  8  OK"),
        "{out}"
    );

    // The deep verification refuses to start on a damaged table.
    let deep = run(&["verify", "--deep", "--dir", d]);
    assert!(!deep.status.success());
    assert!(stdout(&deep).contains("not started"), "{}", stdout(&deep));
}

#[test]
fn a_missing_tier_is_reported_with_its_name() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    generate(d, "abapa", 8);
    // Tier 5: the file is gone but the manifest records it. Tier 3: both gone (a gap).
    std::fs::remove_file(tier_path(tmp.path(), 5)).unwrap();
    std::fs::remove_file(tier_path(tmp.path(), 3)).unwrap();
    let mut m = Manifest::load(tmp.path()).unwrap().unwrap();
    m.tiers.remove(&3);
    m.save(tmp.path()).unwrap();
    let o = run(&["verify", "--dir", d]);
    let out = stdout(&o);
    println!("{out}");
    assert!(!o.status.success(), "{out}");
    let expect5 = format!("missing tier 5: {}", tier_path(tmp.path(), 5).display());
    let expect3 = format!("missing tier 3: {}", tier_path(tmp.path(), 3).display());
    assert!(out.contains(&expect5), "{out}");
    assert!(out.contains(&expect3) && out.contains("gap"), "{out}");
    assert!(out.contains("2 of 9 tiers FAILED"), "{out}");

    let json = run(&["verify", "--json", "--dir", d]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["failed"], 2);
    assert_eq!(v["tiers"][5]["status"], "failed");
    assert!(v["tiers"][5]["reason"]
        .as_str()
        .unwrap()
        .contains("tier-05.owt"));
}

#[test]
fn scores_files_without_a_manifest_are_hashed_but_not_called_checked() {
    // Romein and Bal's files as downloaded: no manifest records their hashes.
    let tmp = tempfile::tempdir().unwrap();
    let (tables, files) = (tmp.path().join("t"), tmp.path().join("f"));
    let (t, f) = (tables.to_str().unwrap(), files.to_str().unwrap());
    generate(t, "awari", 5);
    let o = run(&["export", "--format", "romein", "--dir", t, "--out", f]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(files.join("manifest.json")).unwrap();
    let o = run(&["verify", "--dir", f]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains(&format!("FAILED: no manifest.json in {f}")),
        "{out}"
    );
    assert!(
        out.trim_end().ends_with(
            "6 tiers read and hashed, but not checked: no manifest records their hashes \
             (`oware verify --deep` re-proves every score)"
        ),
        "{out}"
    );
    assert!(!out.contains("tiers FAILED"), "{out}");
}

#[test]
fn other_rules_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    generate(d, "abapa", 5);
    let o = run(&["verify", "--rules", "awari", "--dir", d]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("rules mismatch") && err.contains("abapa") && err.contains("awari"),
        "{err}"
    );
    let same = run(&["verify", "--rules", "abapa", "--deep", "--dir", d]);
    assert!(same.status.success(), "{}", stdout(&same));
}

#[test]
fn deep_verification_refuses_what_does_not_fit_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    generate(d, "abapa", 9);
    let o = support::oware()
        .args(["verify", "--deep", "--dir", d])
        .env("OWARE_MEMORY_LIMIT", "100000")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("needs") && err.contains("only") && err.contains("available"),
        "{err}"
    );
}

/// `verify --start --seeds-per-house 1` agrees with the probe API on every first move.
fn check_start(rules: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    // Tiers 0..=9 only: the missing ones are listed with their cost.
    generate(d, rules, 9);
    let o = run(&["verify", "--start", "--seeds-per-house", "1", "--dir", d]);
    let out = stdout(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("missing: 10..=12"), "{out}");
    assert!(
        out.contains("missing tier 10:") && out.contains("tier-10.owt"),
        "{out}"
    );
    assert!(
        out.contains("disk about") && out.contains("generation peaks at"),
        "{out}"
    );

    generate(d, rules, 12);
    let r: Rules = rules.parse().unwrap();
    let tb = Tablebase::open_with_rules(tmp.path(), &r).unwrap();
    let p: Position = "1 1 1 1 1 1 1 1 1 1 1 1".parse().unwrap();
    let score = tb.score(&p).unwrap();
    let mut moves = tb.moves(&p).unwrap();
    moves.sort_by_key(|m| m.house);
    assert_eq!(moves.len(), 6);

    let o = run(&[
        "verify",
        "--start",
        "--seeds-per-house",
        "1",
        "--json",
        "--dir",
        d,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["score"], score);
    assert_eq!(v["rules"], rules);
    let got = v["moves"].as_array().unwrap();
    assert_eq!(got.len(), 6);
    for (g, m) in got.iter().zip(&moves) {
        assert_eq!(g["house"], m.house);
        assert_eq!(g["captures"], m.captured);
        assert_eq!(g["score"], m.score, "{rules}: house {}", m.house);
    }

    // Text, after a deep verification of tiers 0..=12.
    let o = run(&[
        "verify",
        "--start",
        "--seeds-per-house",
        "1",
        "--deep",
        "--dir",
        d,
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("deep verification of tiers 0..=12 OK"),
        "{out}"
    );
    assert!(out.contains(&format!("score {score}: ")), "{out}");
    for m in &moves {
        let row = format!("  {:>5}  {:>8}  {:>5}  ", m.house, m.captured, m.score);
        assert!(out.contains(&row), "missing `{row}` in:\n{out}");
    }

    // The deep verification is recorded: a plain --start counts it, while the tables keep
    // their checksums.
    let start = ["verify", "--start", "--seeds-per-house", "1", "--dir", d];
    let out = stdout(&run(&start));
    assert!(out.contains("(every tier deep-verified)"), "{out}");
    assert!(out.contains("deep-verified before"), "{out}");
    let o = run(&[&start[..], &["--json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["deep_verified"], true);
    assert_eq!(v["deep_verified_before"], true);
    // A table rewritten since (another block size, the same scores) is no longer counted.
    let rc = tmp.path().join("rc");
    let rcs = rc.to_str().unwrap();
    let o = run(&[
        "recompress",
        "--dir",
        d,
        "--out",
        rcs,
        "--tiers",
        "7",
        "--block-entries",
        "512",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::copy(rc.join("tier-07.owt"), tmp.path().join("tier-07.owt")).unwrap();
    let o = run(&[&start[..], &["--json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["deep_verified"], false);
    let out = stdout(&run(&start));
    assert!(
        out.contains("checked by their block checksums only"),
        "{out}"
    );
}

#[test]
fn the_start_with_one_seed_per_house_under_abapa() {
    check_start("abapa");
}

#[test]
fn the_start_with_one_seed_per_house_under_awari() {
    check_start("awari");
}

#[test]
fn start_generate_builds_verifies_and_evaluates() {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("new");
    let d = sub.to_str().unwrap();
    let o = run(&[
        "verify",
        "--start",
        "--seeds-per-house",
        "1",
        "--generate",
        "--quiet",
        "--rules",
        "awari",
        "--dir",
        d,
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(
        out.contains("deep verification of tiers 0..=12 OK"),
        "{out}"
    );
    assert!(out.contains("rules awari"), "{out}");
    let plain = run(&["verify", "--dir", d]);
    assert!(plain.status.success(), "{}", stdout(&plain));
    // Again: nothing to generate, and the tiers verified are not re-proved (unless --again).
    let start = [
        "verify",
        "--start",
        "--seeds-per-house",
        "1",
        "--generate",
        "--dir",
        d,
    ];
    let o = run(&start);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("tier 12  OK      verified before"), "{out}");
    assert!(out.contains("OK: 0 positions re-proved"), "{out}");
    let o = run(&[&start[..], &["--again"]].concat());
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(!out.contains("verified before"), "{out}");
    assert!(out.contains("OK: 2685592 positions re-proved"), "{out}");
}

/// The JSON rows of `verify --deep --again` with `env`, the times removed.
fn deep_rows(d: &str, env: &[(&str, &str)]) -> Vec<serde_json::Value> {
    let mut cmd = support::oware();
    cmd.args(["verify", "--deep", "--again", "--json", "--dir", d]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut rows = v["rows"].as_array().unwrap().clone();
    for r in &mut rows {
        if let Some(o) = r.as_object_mut() {
            o.remove("seconds");
        }
    }
    rows
}

/// The lower tiers read in slices (forced, or because the memory limit is too small to hold
/// tier 10's window while tier 9's fits) give the same report, for good tables and for a
/// tier with wrong scores whose checksum is correct.
#[test]
fn deep_verification_in_slices_reports_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    generate(d, "abapa", 10);
    // Tier 10 needs 446 028 bytes of its own (402 110 beside a slice) and 125 879 for its
    // window, beside the 48 MiB every plan keeps for the process: two slices. Tier 9 fits.
    let limit = (480_000 + oware_solver::memory::PROCESS_BYTES).to_string();
    let slices: [&[(&str, &str)]; 2] = [
        &[("OWARE_SLICE_BYTES", "1")],
        &[("OWARE_MEMORY_LIMIT", &limit)],
    ];
    let whole = deep_rows(d, &[]);
    assert!(whole.iter().all(|r| r["status"] == "ok"), "{whole:?}");
    for env in slices {
        assert_eq!(deep_rows(d, env), whole, "{env:?}");
    }
    let n = 10u8;
    let mut scores = Table::open(&tier_path(tmp.path(), n))
        .unwrap()
        .read_all()
        .unwrap();
    for k in 0..40 {
        let i = (k * 7919 + 5) % scores.len();
        scores[i] = if scores[i] > 0 {
            scores[i] - 1
        } else {
            scores[i] + 1
        };
    }
    rewrite_tier(tmp.path(), &Rules::ABAPA, n, &scores);
    let whole = deep_rows(d, &[]);
    assert_eq!(whole.last().unwrap()["status"], "failed", "{whole:?}");
    for env in slices {
        assert_eq!(deep_rows(d, env), whole, "{env:?}");
    }
}

/// A tier re-proved is recorded in the manifest with its checksum and not re-proved again;
/// `--again` re-proves it; a rewritten tier (a new checksum) is re-proved; tiers re-proved
/// over trusted tiers, or while another process holds the directory's lock, are not
/// recorded (with a note).
#[test]
fn verified_tiers_are_recorded_and_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    generate(d, "abapa", 8);
    let verified = |n: u8| {
        let m = Manifest::load(tmp.path()).unwrap().unwrap();
        let e = m.tiers[&n].clone();
        e.verified.is_some_and(|v| v == e.checksum)
    };
    assert!((0..=8).all(|n| !verified(n)));
    // Re-proving 5..=8 over trusted tiers records nothing.
    let o = run(&["verify", "--deep", "--tiers", "5..8", "--dir", d]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("not recorded as verified in the manifest: tiers 0..=4 are trusted"),
        "{out}"
    );
    assert!((0..=8).all(|n| !verified(n)));

    let o = run(&["verify", "--deep", "--dir", d]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("recorded as verified in the manifest: tiers 0..=8"),
        "{out}"
    );
    assert!((0..=8).all(verified));
    let text = std::fs::read_to_string(tmp.path().join("manifest.json")).unwrap();
    // Each tier's scores and its distance table.
    assert_eq!(text.matches("\"verified\"").count(), 18, "{text}");

    // Nothing left to re-prove.
    let o = run(&["verify", "--deep", "--dir", d]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("OK: 0 positions re-proved"), "{out}");
    assert!(out.contains("tier  8  OK      verified before"), "{out}");

    // A rewritten tier 7 (same scores, another block size: a new checksum) is re-proved,
    // the tiers below are not; tier 8 still has its checksum and stays recorded.
    let scores = Table::open(&tier_path(tmp.path(), 7))
        .unwrap()
        .read_all()
        .unwrap();
    let opts = oware_db::write::WriteOptions {
        block_entries: 512,
        ..Default::default()
    };
    let written = oware_db::write::write_table_with(
        tmp.path(),
        &Rules::ABAPA,
        7,
        IndexKind::Reachable,
        &scores,
        &opts,
    )
    .unwrap();
    let mut m = Manifest::load(tmp.path()).unwrap().unwrap();
    let e = m.tiers.get_mut(&7).unwrap();
    assert_ne!(e.checksum, written.checksum);
    e.checksum = written.checksum;
    e.file_size = written.file_size;
    m.save(tmp.path()).unwrap();
    assert!(!verified(7));
    let json = run(&["verify", "--deep", "--json", "--dir", d]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let status: Vec<String> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap().to_string())
        .collect();
    let mut expect = vec!["recorded"; 9];
    expect[7] = "ok";
    assert_eq!(status, expect);
    assert_eq!(v["recorded"], serde_json::json!([7]));
    assert!(verified(7));

    // --again re-proves everything (and records it again).
    let o = run(&["verify", "--deep", "--again", "--dir", d]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(!out.contains("verified before"), "{out}");
    assert!(
        out.contains("recorded as verified in the manifest: tiers 0..=8"),
        "{out}"
    );

    // Another process holds the lock: verified all the same, not recorded.
    let mut m = Manifest::load(tmp.path()).unwrap().unwrap();
    for e in m.tiers.values_mut() {
        e.verified = None;
    }
    m.save(tmp.path()).unwrap();
    let lock = hold_lock(tmp.path());
    let o = run(&["verify", "--deep", "--dir", d]);
    let out = stdout(&o);
    drop(lock);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("not recorded as verified in the manifest"),
        "{out}"
    );
    assert!(out.contains("being written by"), "{out}");
    assert!((0..=8).all(|n| !verified(n)));
}
