//! End-to-end tests of `oware probe` and `oware info` on a directory of synthetic tables.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use oware_db::index::{IndexKind, TierIndex};
use oware_db::manifest::{Manifest, TierEntry, TierStats};
use oware_db::write::write_table;
use oware_db::{Position, Rules};
use support::text;

const MAX: u8 = 8;

/// A deterministic pseudo-random score in `-n..=n` for entry `i` of tier `n`.
fn synth(n: u8, i: u64) -> i8 {
    let z = (i ^ (u64::from(n) << 40)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let z = (z ^ (z >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    ((z >> 33) % (2 * u64::from(n) + 1)) as i8 - n as i8
}

fn build(dir: &Path, rules: &Rules) {
    let mut m = Manifest::new(rules);
    for n in 0..=MAX {
        let size = TierIndex::new(n, IndexKind::Reachable).size();
        let scores: Vec<i8> = (0..size).map(|i| synth(n, i)).collect();
        let w = write_table(dir, rules, n, IndexKind::Reachable, &scores).unwrap();
        let mut histogram = std::collections::BTreeMap::new();
        for &s in &scores {
            *histogram.entry(s).or_insert(0u64) += 1;
        }
        m.tiers.insert(
            n,
            TierEntry {
                verified: None,
                distance: None,
                source: None,
                file: w.file,
                entries: size,
                file_size: w.file_size,
                checksum: w.checksum,
                stats: Some(TierStats {
                    histogram,
                    finite: size,
                    endless: 0,
                    seconds: 0.5,
                    threads: 2,
                }),
            },
        );
    }
    m.save(dir).unwrap();
}

fn oware(args: &[&str], stdin: Option<&str>) -> Output {
    let mut c = support::oware();
    c.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(s) = stdin {
        input.write_all(s.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn stored(p: &Position) -> i8 {
    let n = p.seeds();
    synth(n, TierIndex::new(n, IndexKind::Reachable).rank(p).unwrap())
}

const P: &str = "2 1 0 0 3 0 1 0 1 0 0 0"; // 8 seeds, reachable

/// The category of a score, as the probe names it.
fn cat(score: i64) -> &'static str {
    match score.signum() {
        1 => "win",
        0 => "draw",
        _ => "loss",
    }
}

/// A batch's line for position `p` of the synthetic tables (which have no distances).
fn row(p: &str, score: i8) -> String {
    format!("{p}\t{score}\t{}\t-", cat(score.into()))
}

#[test]
fn probe_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), &Rules::ABAPA);
    let d = dir.path().to_str().unwrap();
    let p: Position = P.parse().unwrap();
    let want = stored(&p);

    let out = oware(&["probe", "--dir", d, "--line", P], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains(&format!("score     {want:+}")), "{s}");
    assert!(s.contains("best line"), "{s}");

    // The twelve counts may also come as one argument, with commas.
    let out = oware(&["probe", "--dir", d, "--json", &P.replace(' ', ",")], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["score"], i64::from(want));
    assert_eq!(v["category"], cat(want.into()));
    assert_eq!(v["game_over"], false);
    assert_eq!(v["position"], P);
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), p.moves(&Rules::ABAPA).len());
    let mut prev = i64::MAX;
    for m in moves {
        let s = m["score"].as_i64().unwrap();
        assert!(s <= prev, "moves not best first: {v}");
        prev = s;
        assert!(m["captures"].is_u64() && m["category"].is_string() && m["house"].is_u64());
        let child: Position = m["position"].as_str().unwrap().parse().unwrap();
        let captured = m["captures"].as_i64().unwrap();
        let cs = if child.moves(&Rules::ABAPA).is_empty() {
            child.end_score()
        } else {
            stored(&child)
        };
        assert_eq!(s, captured - i64::from(cs));
    }
    // (Synthetic scores are not consistent, so the best move need not equal the score.)

    // No legal move: the game is over, flagged, its score the end score (seeds on the
    // mover's side minus the opponent's).
    let out = oware(
        &["probe", "--dir", d, "--json", "0 0 0 0 0 0 0 3 0 1 0 0"],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["game_over"], true, "{v}");
    assert_eq!(v["score"], -4, "{v}");
    assert_eq!(v["category"], "loss", "{v}");
    assert_eq!(v["moves"].as_array().map(Vec::len), Some(0), "{v}");
}

#[test]
fn batch_mode_reports_bad_lines_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), &Rules::ABAPA);
    let d = dir.path().to_str().unwrap();
    let good2 = "0 0 0 0 1 1 0 0 0 0 0 1";
    let input = format!("{P}\n1 2 x\n{good2}\n9 0 0 0 0 0 0 0 0 0 0 9\n");
    let out = oware(&["probe", "--dir", d, "-"], Some(&input));
    assert!(!out.status.success());
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 4, "{s}");
    let p: Position = P.parse().unwrap();
    assert_eq!(lines[0], row(P, stored(&p)));
    assert!(lines[1].contains("error: line 2"), "{s}");
    let q: Position = good2.parse().unwrap();
    assert_eq!(lines[2], row(good2, stored(&q)));
    // Tier 18 is missing: an error for that line only.
    assert!(
        lines[3].contains("error: line 4") && lines[3].contains("tier-18.owt"),
        "{s}"
    );
    assert!(text(&out.stderr).contains("2 of 4 lines failed"));

    let out = oware(
        &["probe", "--dir", d, "-"],
        Some(&format!("{P}\n{good2}\n")),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));

    // A line that is not UTF-8 and one of 10 MB are bad lines like any other: reported
    // (the long one echoed in 100 characters), and the lines around them probed.
    let mut c = support::oware();
    c.args(["probe", "--dir", d, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        input
            .write_all(format!("{P}\n\u{fffd}").as_bytes())
            .unwrap();
        input.write_all(b"\xff\xfe\n").unwrap();
        input.write_all(&vec![b'7'; 10 << 20]).unwrap();
        input.write_all(format!("\n{good2}").as_bytes()).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 4, "{}", &s[..s.len().min(500)]);
    assert_eq!(lines[0], row(P, stored(&p)));
    assert!(
        lines[1].ends_with("\terror: line 2: not UTF-8 text"),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2],
        format!(
            "{}…\terror: line 3: longer than 4096 bytes, not a position",
            "7".repeat(100)
        )
    );
    assert_eq!(lines[3], row(good2, stored(&q)));
    assert!(text(&out.stderr).contains("2 of 4 lines failed"));

    // The cap counts the text, not its end of line: 4,096 bytes then `\n` or `\r\n` are
    // read whole (and refused as a position, in a message that quotes 100 characters of
    // them); a line ended by `\r\n` is probed.
    let input = format!("{}\n{}\r\n{good2}\r\n", "1".repeat(4096), "2".repeat(4096));
    let out = oware(&["probe", "--dir", d, "-"], Some(&input));
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 3, "{s}");
    for (k, digit) in ["1", "2"].iter().enumerate() {
        assert_eq!(
            lines[k],
            format!(
                "{}…\terror: line {}: bad position: expected 12 house counts, found 1 in `{}…`",
                digit.repeat(100),
                k + 1,
                digit.repeat(100)
            )
        );
    }
    assert_eq!(lines[2], row(good2, stored(&q)));
}

#[test]
fn missing_tier_and_rules_mismatch_messages() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), &Rules::ABAPA);
    let d = dir.path().to_str().unwrap();
    let out = oware(&["probe", "--dir", d, "1 1 1 1 1 0 1 1 1 0 1 0"], None);
    assert!(!out.status.success());
    let e = text(&out.stderr);
    assert!(
        e.contains("missing tier 9") && e.contains("tier-09.owt"),
        "{e}"
    );

    let out = oware(&["probe", "--dir", d, "--rules", "awari", P], None);
    assert!(!out.status.success());
    let e = text(&out.stderr);
    assert!(e.contains("rules mismatch") && e.contains("awari"), "{e}");
}

#[test]
fn info_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), &Rules::AWARI);
    let d = dir.path().to_str().unwrap();
    let out = oware(&["info", "--dir", d], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.contains("rules      awari") && s.contains("bits/pos"),
        "{s}"
    );
    assert!(s.contains("tier  8: win"), "{s}");

    let out = oware(&["info", "--dir", d, "--json"], None);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tiers = v["tiers"].as_array().unwrap();
    assert_eq!(tiers.len(), usize::from(MAX) + 1);
    assert_eq!(tiers[8]["checksum_state"], "ok");
    assert!(tiers[8]["bits_per_position"].as_f64().unwrap() > 0.0);
    assert_eq!(
        tiers[8]["entries"],
        TierIndex::new(8, IndexKind::Reachable).size()
    );
    assert_eq!(tiers[8]["stats"]["threads"], 2);

    // A damaged file: the checksum state says so and the exit status fails.
    let f = dir.path().join("tier-05.owt");
    let mut bytes = std::fs::read(&f).unwrap();
    let k = bytes.len() / 2;
    bytes[k] ^= 0x10;
    std::fs::write(&f, bytes).unwrap();
    let out = oware(&["info", "--dir", d], None);
    assert!(!out.status.success());
    assert!(text(&out.stdout).contains("BAD"), "{}", text(&out.stdout));
}

/// The batch gives, per line, what the single probe gives: the score, its category and the
/// distance (`-` where there is none), or in JSON the single probe's fields but the moves;
/// blank lines are skipped.
#[test]
fn batch_lines_carry_category_and_distance() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    support::ok(&["generate", "--quiet", "--dir", d, "--max-seeds", "6"]);
    let positions = [
        "2 1 0 0 3 0 0 0 0 0 0 0",
        "0 0 0 0 0 1 1 0 0 0 0 0",
        "1 1 1 1 1 1 0 0 0 0 0 0",
        "0 0 0 0 0 0 0 3 0 1 0 0",
        "1 0 0 0 0 0 0 0 0 0 0 1",
        "0 0 1 0 0 2 0 1 0 0 0 2",
        "4 0 0 0 0 0 0 0 0 0 0 1",
    ];
    let input = format!("\n{}\n  \n\r\n", positions.join("\n\n"));
    let out = oware(&["probe", "--dir", d, "-"], Some(&input));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let batch = text(&out.stdout);
    let out = oware(&["probe", "--dir", d, "--json", "-"], Some(&input));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json = text(&out.stdout);
    let (lines, objects): (Vec<&str>, Vec<&str>) =
        (batch.lines().collect(), json.lines().collect());
    assert_eq!(lines.len(), positions.len(), "{batch}");
    assert_eq!(objects.len(), positions.len(), "{json}");
    let mut distances = 0;
    for (k, p) in positions.iter().enumerate() {
        let out = oware(&["probe", "--dir", d, "--json", p], None);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let mut single: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let distance = match &single["distance"] {
            serde_json::Value::Null => "-".to_string(),
            n => {
                distances += 1;
                n.to_string()
            }
        };
        let want = format!(
            "{}\t{}\t{}\t{distance}",
            single["position"].as_str().unwrap(),
            single["score"],
            single["category"].as_str().unwrap()
        );
        assert_eq!(lines[k], want, "{batch}");
        single.as_object_mut().unwrap().remove("moves");
        let object: serde_json::Value = serde_json::from_str(objects[k]).unwrap();
        assert_eq!(object, single, "{json}");
    }
    assert!(distances > 0, "{batch}");

    // Without distance tables: `-`, and in JSON the note of the single probe.
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), &Rules::ABAPA);
    let d = dir.path().to_str().unwrap();
    let p: Position = P.parse().unwrap();
    let input = format!("{P}\n").repeat(3);
    let out = oware(&["probe", "--dir", d, "--json", "-"], Some(&input));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let single = oware(&["probe", "--dir", d, "--json", P], None);
    let mut single: serde_json::Value = serde_json::from_slice(&single.stdout).unwrap();
    single.as_object_mut().unwrap().remove("moves");
    assert_eq!(
        stored(&p) != 0,
        single.get("distance_note").is_some(),
        "{single}"
    );
    for line in text(&out.stdout).lines() {
        let object: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(object, single);
    }
}

/// Where a move's distance is `-` because its tier has no distance table, the probe says so
/// in its note (`distance_note` in JSON), whatever the position's own score: on a drawn
/// position too.
#[test]
fn a_drawn_position_notes_its_moves_missing_distances() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    support::ok(&[
        "generate",
        "--quiet",
        "--no-distance",
        "--dir",
        d,
        "--max-seeds",
        "6",
    ]);
    // A drawn position with a quiet move of nonzero score: its distance is `-`.
    let tb = oware_db::Tablebase::open(dir.path()).unwrap();
    let p = TierIndex::new(6, IndexKind::Reachable)
        .positions()
        .find(|p| {
            tb.score(p).unwrap() == 0
                && tb
                    .moves(p)
                    .unwrap()
                    .iter()
                    .any(|m| m.captured == 0 && m.child.is_some() && m.score != 0)
        })
        .expect("a drawn position with a quiet move of nonzero score");
    let p = p.to_string();
    let out = oware(&["probe", "--dir", d, "--json", &p], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["score"], 0, "{v}");
    assert_eq!(v["distance"], serde_json::Value::Null, "{v}");
    let note = v["distance_note"].as_str().unwrap_or_default();
    assert!(note.contains("tier 6 has no distance table"), "{v}");
    let out = oware(&["probe", "--dir", d, &p], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains(&format!("note      {note}")), "{s}");

    // With distances, a drawn position has no note.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    support::ok(&["generate", "--quiet", "--dir", d, "--max-seeds", "6"]);
    let out = oware(&["probe", "--dir", d, "--json", &p], None);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("distance_note").is_none(), "{v}");
    assert!(!text(&oware(&["probe", "--dir", d, &p], None).stdout).contains("note"));
}

/// `--start K --moves H,H,...` probes the position reached from the start with K seeds per
/// house by playing those houses in turn (numbered as the probe's moves number them); an
/// illegal move is a one-line usage error naming its place in the list.
#[test]
fn a_position_named_by_the_moves_of_a_game() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    support::ok(&["generate", "--quiet", "--dir", d, "--max-seeds", "10"]);
    // Each house played is the `house` of a move the probe lists, from the side that plays.
    let mut p: Position = "1 1 1 1 1 1 1 1 1 1 1 1".parse().unwrap();
    for house in [5, 2, 3] {
        let m = p.moves(&Rules::ABAPA);
        let m = m.iter().find(|m| m.house == house).unwrap();
        match m.outcome {
            oware_db::Outcome::Continue { child, .. } => p = child,
            oware_db::Outcome::End { .. } => panic!("the game ended"),
        }
    }
    assert!(p.seeds() <= 10, "{p}");
    let want = oware(&["probe", "--dir", d, "--json", &p.to_string()], None);
    assert!(want.status.success(), "{}", text(&want.stderr));
    for moves in ["5,2,3", " 5, 2 ,3 "] {
        let got = oware(
            &[
                "probe", "--dir", d, "--json", "--start", "1", "--moves", moves,
            ],
            None,
        );
        assert!(got.status.success(), "{}", text(&got.stderr));
        assert_eq!(text(&got.stdout), text(&want.stdout));
    }
    let got = oware(&["probe", "--dir", d, "--start", "1", "--moves", "5"], None);
    assert!(
        text(&got.stdout).starts_with("position  0 1 1 1 1 1 1 1 1 1 1 0  (10 seeds"),
        "{}",
        text(&got.stdout)
    );

    // Illegal moves: one line, exit status 2, naming the move's place in the list.
    for (moves, want) in [
        (
            "0,0,0",
            "error: --moves: move 3 (house 0) is illegal in 0 2 1 1 1 1 0 2 1 1 1 1: house 0 \
             is empty",
        ),
        ("5,9", "error: --moves: move 2: `9` is not a house 0..=5"),
        ("5,,3", "error: --moves: move 2: `` is not a house 0..=5"),
        ("x", "error: --moves: move 1: `x` is not a house 0..=5"),
    ] {
        let out = oware(
            &["probe", "--dir", d, "--start", "1", "--moves", moves],
            None,
        );
        assert_eq!(out.status.code(), Some(2), "{moves}");
        assert_eq!(text(&out.stderr), format!("{want}\n"), "{moves}");
        assert!(out.stdout.is_empty());
    }
    // --moves needs --start; --start excludes POSITION; K is 1..=4.
    for args in [
        &["--moves", "5"][..],
        &["--start", "1", "1 1 1 1 1 1 1 1 1 1 1 1"],
        &["--start", "5"],
        &["--start", "0"],
    ] {
        let out = oware(&[&["probe", "--dir", d][..], args].concat(), None);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}
