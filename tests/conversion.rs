//! Distances to conversion end to end: the best line converts from every position of tiers
//! 0..=12 under both presets (tables made by `oware generate`), a distance table damaged
//! behind its checksum or in its bytes is caught, and tables without distances degrade to
//! the order of scores and houses with a note.

mod support;

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use oware_db::index::{IndexKind, TierIndex};
use oware_db::manifest::Manifest;
use oware_db::write::{write_distances_with, WriteOptions};
use oware_db::{Error, MoveScore, Position, Rules, Tablebase};
use support::{ok, run, text};

const TOP: u8 = 12;

fn generate(dir: &Path, rules: &str, extra: &[&str]) {
    let d = dir.to_str().unwrap();
    let mut args = vec![
        "generate",
        "--quiet",
        "--dir",
        d,
        "--rules",
        rules,
        "--max-seeds",
        "12",
    ];
    args.extend_from_slice(extra);
    ok(&args);
}

/// What walking the lines found.
#[derive(Debug, Default)]
struct Walks {
    /// Positions walked from.
    starts: u64,
    /// Positions from which the line repeated a position before converting.
    repeated: Vec<Position>,
}

/// Walks the line that `choose` makes from every position of tiers `0..=TOP` (`all`), or
/// from those of tier `TOP` until one repeats (not `all`), until a position of score 0, the
/// end of the game, or a position already known to convert (lines are a function of the
/// position, so a line that reaches one converts with it). Checks on the way that every move
/// chosen keeps the score (so that the captures along the line add up to it) and, with
/// `distances`, that each move that stays in its tier brings the distance one ply nearer.
/// Tiers are walked lowest first, each on two threads (a line leaves its tier only for lower
/// ones, all walked by then).
fn walk_all(
    tb: &Tablebase,
    choose: impl Fn(&Tablebase, &Position) -> MoveScore + Sync,
    distances: bool,
    all: bool,
) -> Walks {
    let converts: Vec<Vec<AtomicBool>> = (0..=TOP)
        .map(|n| {
            (0..TierIndex::new(n, IndexKind::Reachable).size())
                .map(|_| AtomicBool::new(false))
                .collect()
        })
        .collect();
    let known = |p: &Position| {
        let i = TierIndex::new(p.seeds(), IndexKind::Reachable)
            .rank(p)
            .expect("positions of a line are reachable") as usize;
        &converts[p.seeds() as usize][i]
    };
    let walk = |start: Position| -> bool {
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let mut cur = start;
        let good = loop {
            let s = tb.score(&cur).unwrap();
            if s == 0 || known(&cur).load(Ordering::Relaxed) {
                break true;
            }
            if !seen.insert(cur) {
                break false;
            }
            path.push(cur);
            if tb.moves(&cur).unwrap().is_empty() {
                break true;
            }
            let m = choose(tb, &cur);
            assert_eq!(m.score, s, "{cur}: the line's move does not keep the score");
            let Some(child) = m.child else {
                break true;
            };
            if distances && m.captured == 0 {
                let d = tb.distance(&cur).unwrap().unwrap();
                assert_eq!(
                    tb.distance(&child).unwrap(),
                    Some(d - 1),
                    "{cur} (distance {d}) -> {child}"
                );
            }
            cur = child;
        };
        if good {
            for p in &path {
                known(p).store(true, Ordering::Relaxed);
            }
        }
        good
    };
    let mut walks = Walks::default();
    let first = if all { 0 } else { TOP };
    for n in first..=TOP {
        let idx = TierIndex::new(n, IndexKind::Reachable);
        let size = idx.size();
        let found = std::sync::Mutex::new(Vec::new());
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            for part in 0..2u64 {
                let (walk, found, stop) = (&walk, &found, &stop);
                scope.spawn(move || {
                    for i in (part..size).step_by(2) {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let p = idx.unrank(i);
                        if !walk(p) {
                            found.lock().unwrap().push(p);
                            stop.store(!all, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        walks.starts += size;
        walks.repeated.extend(found.into_inner().unwrap());
    }
    walks
}

/// The line of the tables: the first move of `Tablebase::moves`, as `best_line` plays.
fn best(tb: &Tablebase, p: &Position) -> MoveScore {
    tb.moves(p).unwrap()[0]
}

/// The line without distances: the first move of the best score in house order.
fn first_in_house_order(tb: &Tablebase, p: &Position) -> MoveScore {
    let moves = tb.moves(p).unwrap();
    let s = moves[0].score;
    *moves
        .iter()
        .filter(|m| m.score == s)
        .min_by_key(|m| m.house)
        .unwrap()
}

#[test]
fn the_best_line_converts_from_every_position_up_to_tier_12() {
    for rules in ["abapa", "awari"] {
        let tmp = tempfile::tempdir().unwrap();
        generate(tmp.path(), rules, &[]);
        let tb = Tablebase::open(tmp.path()).unwrap();
        let walks = walk_all(&tb, best, true, true);
        assert_eq!(
            walks.starts,
            (0..=TOP)
                .map(|n| TierIndex::new(n, IndexKind::Reachable).size())
                .sum::<u64>()
        );
        assert_eq!(walks.repeated, Vec::<Position>::new(), "{rules}");
        // best_line is that line: from a position far from its capture, it reaches score 0
        // with the captures adding up to the score.
        let p: Position = "0 5 0 0 1 2 1 0 0 0 2 1".parse().unwrap();
        let line = tb.best_line(&p, 1000).unwrap();
        let mut sign = 1i32;
        let mut total = 0i32;
        let mut cur = p;
        for m in &line {
            total += sign * i32::from(m.captured);
            sign = -sign;
            match m.child {
                Some(c) if tb.score(&c).unwrap() == 0 => {
                    cur = c;
                    break;
                }
                Some(c) => cur = c,
                None => break,
            }
        }
        assert_eq!(total, i32::from(tb.score(&p).unwrap()), "{rules}: {line:?}");
        assert!(tb.score(&cur).unwrap() == 0 || tb.moves(&cur).unwrap().is_empty());
        // Without distances the same walk repeats: the test can tell a line that converts.
        let old = walk_all(&tb, first_in_house_order, false, false);
        assert!(
            !old.repeated.is_empty(),
            "{rules}: house order converted everywhere"
        );
    }
}

/// Rewrites the distance table of `tier` in `dir` with `change` applied to its distances (in
/// the code `generate` writes, ctx-huffman in the context of the scores), and the manifest's
/// record of it: a table that passes every plain check.
fn rewrite_distances(dir: &Path, tier: u8, change: impl FnOnce(&mut [u8])) {
    let mut manifest = Manifest::load(dir).unwrap().unwrap();
    let path = dir.join(format!("tier-{tier:02}.owd"));
    let scores = oware_db::table::Table::open(&dir.join(format!("tier-{tier:02}.owt")))
        .unwrap()
        .read_all()
        .unwrap();
    let table = oware_db::table::Table::open(&path).unwrap();
    assert_eq!(table.compression(), oware_db::format::Compression::Huffman);
    let mut bytes = table.read_distances(&scores).unwrap();
    drop(table);
    change(&mut bytes);
    let w = write_distances_with(
        dir,
        &manifest.rules,
        tier,
        IndexKind::Reachable,
        &bytes,
        &scores,
        &WriteOptions::distances(),
    )
    .unwrap();
    let d = manifest
        .tiers
        .get_mut(&tier)
        .unwrap()
        .distance
        .as_mut()
        .unwrap();
    d.file_size = w.file_size;
    d.checksum = w.checksum;
    d.verified = None;
    manifest.save(dir).unwrap();
}

#[test]
fn damaged_distances_are_caught_and_scores_still_answered() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let ds = dir.to_str().unwrap();
    generate(dir, "abapa", &[]);
    ok(&["verify", "--deep", "--dir", ds, "-q"]);

    // A wrong distance behind a valid checksum: the plain checks pass, the deep
    // verification names the tier and the position.
    let idx = TierIndex::new(10, IndexKind::Reachable);
    let tb = Tablebase::open(dir).unwrap();
    let far = (0..idx.size())
        .map(|i| idx.unrank(i))
        .find(|p| tb.distance(p).unwrap().is_some_and(|d| d > 5))
        .unwrap();
    drop(tb);
    let at = idx.rank(&far).unwrap() as usize;
    rewrite_distances(dir, 10, |b| b[at] -= 1);
    ok(&["verify", "--dir", ds]);
    let out = run(&["verify", "--deep", "--again", "--dir", ds]);
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(
        report.contains("tier 10  FAILED  distances: tier 10: position ")
            && report.contains("deep verification of tiers 0..=12 FAILED"),
        "{report}"
    );
    rewrite_distances(dir, 10, |b| b[at] += 1);
    ok(&["verify", "--deep", "--again", "--dir", ds, "-q"]);

    // A damaged byte: caught by the checksum; a probe still answers the score, with the
    // error for the distance.
    let path = dir.join("tier-11.owd");
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    let out = run(&["verify", "--dir", ds]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("FAILED  distance table"),
        "{}",
        text(&out.stdout)
    );
    let out = run(&["verify", "--deep", "--dir", ds]);
    assert_eq!(out.status.code(), Some(1));
    let tb = Tablebase::open(dir).unwrap();
    let t11 = TierIndex::new(11, IndexKind::Reachable);
    let mut damaged = None;
    for i in 0..t11.size() {
        let p = t11.unrank(i);
        match tb.distance(&p) {
            Err(Error::CorruptBlock { .. }) => {
                damaged = Some(p);
                break;
            }
            Err(e) => panic!("{p}: {e}"),
            Ok(_) => {}
        }
    }
    let p = damaged.expect("a position in the damaged block");
    assert!(tb.score(&p).is_ok());
    let out = ok(&["probe", "--dir", ds, &p.to_string()]);
    assert!(out.contains("\nscore     "), "{out}");
    assert!(out.contains("note      distance unavailable: "), "{out}");
    assert!(out.contains("corrupt block"), "{out}");
}

#[test]
fn tables_without_distances_order_moves_by_score_and_house_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let ds = dir.to_str().unwrap();
    generate(dir, "abapa", &["--no-distance"]);
    assert!(!dir.join("tier-12.owd").exists());
    let out = ok(&["probe", "--dir", ds, "--json", "0 5 0 0 1 2 1 0 0 0 2 1"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["score"], 6);
    assert_eq!(v["distance"], serde_json::Value::Null);
    assert!(v["distance_note"]
        .as_str()
        .unwrap()
        .starts_with("tier 12 has no distance table"));
    // The capture is still first (its distance, 1, needs no table); the other moves carry
    // none.
    assert_eq!(v["moves"][0]["distance"], 1);
    assert_eq!(v["moves"][1]["distance"], serde_json::Value::Null);
    let text = ok(&["probe", "--dir", ds, "0 5 0 0 1 2 1 0 0 0 2 1"]);
    assert!(
        text.contains("note      tier 12 has no distance table"),
        "{text}"
    );
    // With distances, the same position's moves carry theirs.
    let with = tempfile::tempdir().unwrap();
    generate(with.path(), "abapa", &[]);
    let out = ok(&[
        "probe",
        "--dir",
        with.path().to_str().unwrap(),
        "--json",
        "0 5 0 0 1 2 1 0 0 0 2 1",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["distance"], 1);
    assert!(v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["distance"].is_u64()));
    let rules: Rules = "abapa".parse().unwrap();
    assert_eq!(Tablebase::open(with.path()).unwrap().rules(), &rules);
}
