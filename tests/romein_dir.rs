//! A directory of Romein-Bal files (`scores.N`) is a table directory: probed, described,
//! served and re-proved from the raw files, which are never written.

mod support;

use std::path::{Path, PathBuf};

use oware_db::check::TierCheck;
use oware_db::index::{IndexKind, TierIndex};
use oware_db::romein::RomeinOrder;
use oware_db::{Position, Rules, Tablebase, HOUSES};
use oware_solver::dir::CheckObserver;
use oware_solver::distributed::ThreadComm;
use oware_solver::{verify_deep, Phase, Progress, TierVerdict, VerifyObserver, VerifyOptions};
use support::{ok, run, text};

struct Silent;

impl Progress for Silent {
    fn start(&self, _: Phase, _: u64) {}
    fn advance(&self, _: u64) {}
}

impl CheckObserver for Silent {
    fn checks_start(&self, _: usize, _: u64) {}
    fn table_checked(&self, _: &TierCheck, _: u64) {}
}

impl VerifyObserver for Silent {
    fn checks_passed(&self) {}
    fn tier_start(&self, _: u8, _: u64) {}
    fn tier_read(&self, _: u8, _: u64) {}
    fn tier_done(&self, _: &TierVerdict) {}
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Awari tables of tiers `0..=max` in `tmp/ours` and their export in `tmp/vu`.
fn exported(tmp: &Path, max: u8) -> (PathBuf, PathBuf) {
    let (ours, vu) = (tmp.join("ours"), tmp.join("vu"));
    ok(&[
        "generate",
        "--quiet",
        "--no-distance",
        "--rules",
        "awari",
        "--max-seeds",
        &max.to_string(),
        "--dir",
        s(&ours),
    ]);
    ok(&[
        "export",
        "--format",
        "romein",
        "--dir",
        s(&ours),
        "--out",
        s(&vu),
    ]);
    (ours, vu)
}

/// Every file of `dir`, by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
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

/// Copies the `scores.N` files of tiers `tiers` from `from` into a new directory `to`.
fn copy_scores(from: &Path, to: &Path, tiers: std::ops::RangeInclusive<u8>) {
    std::fs::create_dir_all(to).unwrap();
    for n in tiers {
        let f = format!("scores.{n}");
        std::fs::copy(from.join(&f), to.join(&f)).unwrap();
    }
}

fn deep_options(dir: &Path, max: u8, slice_bytes: Option<u64>) -> VerifyOptions {
    VerifyOptions {
        dir: dir.to_path_buf(),
        rules: Rules::AWARI,
        tiers: 0..=max,
        memory_limit: None,
        slice_bytes,
        distance_window: None,
        again: true,
        exchange_batch: None,
        cancel: oware_solver::Cancel::new(),
    }
}

#[test]
fn a_scores_directory_probes_and_verifies_as_the_tables_it_came_from() {
    let tmp = tempfile::tempdir().unwrap();
    let (ours, vu) = exported(tmp.path(), 16);
    let theirs: Vec<(String, Vec<u8>)> = files(&vu)
        .into_iter()
        .filter(|(n, _)| n.starts_with("scores."))
        .collect();
    let a = Tablebase::open(&ours).unwrap();
    let b = Tablebase::open(&vu).unwrap();
    assert_eq!(*b.rules(), Rules::AWARI);
    // Every position of tiers 0..=12, and random ones above, answered identically.
    for n in 0..=12u8 {
        for p in TierIndex::new(n, IndexKind::Reachable).positions() {
            assert_eq!(a.score(&p).unwrap(), b.score(&p).unwrap(), "{p}");
        }
    }
    let mut rng = fastrand::Rng::with_seed(34);
    for _ in 0..20_000 {
        let n = rng.u8(13..=16);
        let mut h = [0u8; HOUSES];
        for _ in 0..n {
            h[rng.usize(0..HOUSES)] += 1;
        }
        let p = Position::new(h).unwrap();
        assert_eq!(a.moves(&p).unwrap(), b.moves(&p).unwrap(), "{p}");
    }
    let p: Position = "2 1 3 0 2 2 1 0 2 1 1 1".parse().unwrap();
    assert_eq!(a.best_line(&p, 40).unwrap(), b.best_line(&p, 40).unwrap());

    // The published example: byte 588,953 of scores.16, a draw, and its moves' values.
    let sixteen = std::fs::read(vu.join("scores.16")).unwrap();
    assert_eq!(sixteen.len(), 12_685_179);
    assert_eq!(sixteen[588_953], 0);
    let out = ok(&[
        "probe",
        "--json",
        "--dir",
        s(&vu),
        "1 1 1 1 1 2 4 2 3 0 0 0",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["score"], 0, "{out}");
    let mut by_house: Vec<(u64, i64)> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["house"].as_u64().unwrap(), m["score"].as_i64().unwrap()))
        .collect();
    by_house.sort();
    let values: Vec<i64> = by_house.iter().map(|&(_, s)| s).collect();
    assert_eq!(values, [-1, -1, -2, -2, -2, 0], "{out}");
    // No distances in these files: said in one line where one is asked for.
    let won = TierIndex::new(16, IndexKind::Reachable)
        .positions()
        .find(|p| b.score(p).unwrap() > 0)
        .unwrap();
    let out = ok(&["probe", "--dir", s(&vu), &won.to_string()]);
    assert!(
        out.contains("note") && out.contains("no distance table"),
        "{out}"
    );
    let out = ok(&["info", "--dir", s(&vu)]);
    assert!(
        out.contains("rules      awari") && out.contains("Romein-Bal"),
        "{out}"
    );

    // Re-proved from the raw files, recorded in a manifest beside them, resumed.
    let out = ok(&["verify", "--deep", "--quiet", "--dir", s(&vu)]);
    assert!(
        out.contains("deep verification of tiers 0..=16 OK"),
        "{out}"
    );
    let manifest = oware_db::manifest::Manifest::load(&vu).unwrap().unwrap();
    assert_eq!(manifest.tiers[&16].file, "scores.16");
    assert!(manifest.tiers.values().all(|e| e.verified.is_some()));
    let out = ok(&["verify", "--deep", "--dir", s(&vu)]);
    assert!(out.contains("verified before"), "{out}");
    ok(&["verify", "--dir", s(&vu)]);
    let fresh = tmp.path().join("fresh");
    copy_scores(&vu, &fresh, 0..=12);
    let out = ok(&[
        "verify",
        "--start",
        "--seeds-per-house",
        "1",
        "--dir",
        s(&fresh),
    ]);
    assert!(
        out.contains("score 0") && out.contains("Romein-Bal files"),
        "{out}"
    );
    // The 12-seed start evaluated from the files, re-proved as recorded beside them.
    let out = ok(&[
        "verify",
        "--start",
        "--seeds-per-house",
        "1",
        "--dir",
        s(&vu),
    ]);
    assert!(
        out.contains("deep-verified before") && out.contains("score 0: a draw"),
        "{out}"
    );
    let after: Vec<(String, Vec<u8>)> = files(&vu)
        .into_iter()
        .filter(|(n, _)| n.starts_with("scores."))
        .collect();
    assert!(after == theirs, "the scores files were changed");

    // A directory holding both: our tables by default, their files with --format romein.
    let both = tmp.path().join("both");
    copy_scores(&vu, &both, 0..=16);
    for n in 0..=16u8 {
        let f = format!("tier-{n:02}.owt");
        std::fs::copy(ours.join(&f), both.join(&f)).unwrap();
    }
    let p16 = "1 1 1 1 1 2 4 2 3 0 0 0";
    let out = ok(&[
        "probe",
        "--json",
        "--format",
        "romein",
        "--dir",
        s(&both),
        p16,
    ]);
    assert!(out.contains("\"score\": 0"), "{out}");
    let out = ok(&["info", "--quick", "--format", "romein", "--dir", s(&both)]);
    assert!(out.contains("Romein-Bal") && out.contains("raw"), "{out}");
    std::fs::write(both.join("scores.16"), b"short").unwrap();
    let e = text(&run(&["probe", "--format", "romein", "--dir", s(&both), p16]).stderr);
    assert!(e.contains("scores.16: 5 bytes"), "{e}");
    ok(&["probe", "--dir", s(&both), p16]);
    let e = text(
        &run(&[
            "probe",
            "--format",
            "romein",
            "--rules",
            "abapa",
            "--dir",
            s(&both),
            p16,
        ])
        .stderr,
    );
    assert!(e.contains("`awari`, not `abapa`"), "{e}");

    // On simulated ranks, and with the lower tiers read in slices: the same verdicts.
    let part = tmp.path().join("part");
    copy_scores(&vu, &part, 0..=14);
    for ranks in [2, 3] {
        let opts = deep_options(&part, 14, None);
        let reports = ThreadComm::run(ranks, |c| verify_deep(c, &opts, &Silent).unwrap());
        for r in &reports {
            assert!(r.is_ok(), "{ranks} ranks: {:?}", r.verdicts.last());
            assert_eq!(r.verdicts.len(), 15);
        }
    }
    let opts = deep_options(&part, 14, Some(1 << 20));
    let one = verify_deep(&oware_solver::distributed::LocalComm, &opts, &Silent).unwrap();
    assert!(one.is_ok() && one.verdicts.len() == 15);
}

#[test]
fn a_flipped_score_is_located_and_bad_files_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let (ours, vu) = exported(tmp.path(), 12);
    // One score changed: the deep verification names the position and both scores.
    let flipped = tmp.path().join("flipped");
    copy_scores(&vu, &flipped, 0..=12);
    let file = flipped.join("scores.11");
    let mut bytes = std::fs::read(&file).unwrap();
    let g = bytes.iter().position(|&b| (b as i8) > 1).unwrap();
    let was = bytes[g] as i8;
    bytes[g] = (-was) as u8;
    std::fs::write(&file, &bytes).unwrap();
    let p = RomeinOrder::new(11).unrank(g as u64);
    let out = run(&["verify", "--deep", "--dir", s(&flipped)]);
    assert!(!out.status.success());
    let o = text(&out.stdout);
    assert!(o.contains("tier 11") && o.contains("FAILED"), "{o}");
    assert!(o.contains(&p.to_string()), "{p} not named: {o}");
    assert!(o.contains(&format!("{:+}", -was)), "{o}");

    // Re-proved in stages: each stage records its tiers, and the last finds them all.
    let staged = tmp.path().join("staged");
    copy_scores(&vu, &staged, 0..=12);
    let out = ok(&["verify", "--deep", "--tiers", "..=8", "--dir", s(&staged)]);
    assert!(
        out.contains("recorded as verified in the manifest: tiers 0..=8"),
        "{out}"
    );
    let out = ok(&["verify", "--deep", "--tiers", "..=12", "--dir", s(&staged)]);
    assert!(
        out.contains("recorded as verified in the manifest: tiers 9..=12"),
        "{out}"
    );
    let m = oware_db::manifest::Manifest::load(&staged)
        .unwrap()
        .unwrap();
    assert!((0..=12).all(|n| m.tiers[&n].verified.as_ref() == Some(&m.tiers[&n].checksum)));
    let out = ok(&[
        "verify",
        "--start",
        "--seeds-per-house",
        "1",
        "--dir",
        s(&staged),
    ]);
    assert!(out.contains("deep-verified before"), "{out}");

    // A missing tier, a short or long file, a byte out of range, a named pipe: one line
    // naming the file.
    let bad = tmp.path().join("bad");
    copy_scores(&vu, &bad, 0..=12);
    std::fs::remove_file(bad.join("scores.10")).unwrap();
    let ten = "1 1 1 1 1 1 1 1 1 1 0 0";
    let e = text(&run(&["probe", "--dir", s(&bad), ten]).stderr);
    assert!(
        e.contains("missing tier 10") && e.contains("scores.10"),
        "{e}"
    );
    let nine = bad.join("scores.9");
    let mut bytes = std::fs::read(&nine).unwrap();
    let size = bytes.len();
    let probe9 = "1 1 1 1 1 1 1 1 1 0 0 0";
    bytes.pop();
    std::fs::write(&nine, &bytes).unwrap();
    let e = text(&run(&["probe", "--dir", s(&bad), probe9]).stderr);
    assert!(
        e.contains("scores.9") && e.contains(&format!("has {size}, one per position")),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    bytes.extend([0, 0]);
    std::fs::write(&nine, &bytes).unwrap();
    let e = text(&run(&["probe", "--dir", s(&bad), probe9]).stderr);
    assert!(e.contains(&format!("{} bytes", size + 1)), "{e}");
    bytes.truncate(size);
    let p: Position = probe9.parse().unwrap();
    let g = RomeinOrder::new(9).rank(&p).unwrap() as usize;
    bytes[g] = 100;
    std::fs::write(&nine, &bytes).unwrap();
    let e = text(&run(&["probe", "--dir", s(&bad), probe9]).stderr);
    assert!(
        e.contains(&format!("offset {g} holds 100, outside -9..=9")),
        "{e}"
    );
    let out = run(&["verify", "--deep", "--tiers", "9", "--dir", s(&bad)]);
    assert!(!out.status.success());
    // A foreign file under their name: one of our tables.
    let foreign = tmp.path().join("foreign");
    copy_scores(&vu, &foreign, 0..=8);
    std::fs::copy(ours.join("tier-09.owt"), foreign.join("scores.9")).unwrap();
    let e = text(&run(&["probe", "--dir", s(&foreign), probe9]).stderr);
    assert!(
        e.contains("scores.9") && e.contains("a Romein-Bal file of tier 9"),
        "{e}"
    );
    let out = run(&["verify", "--dir", s(&foreign)]);
    assert!(!out.status.success());
    #[cfg(unix)]
    {
        let fifo = tmp.path().join("fifo");
        copy_scores(&vu, &fifo, 0..=2);
        let path = std::ffi::CString::new(s(&fifo.join("scores.3"))).unwrap();
        // SAFETY: `mkfifo` with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
        let e = text(&run(&["probe", "--dir", s(&fifo), "1 1 1 0 0 0 0 0 0 0 0 0"]).stderr);
        assert!(e.contains("scores.3") && e.contains("named pipe"), "{e}");
    }
}
