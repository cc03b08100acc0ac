//! `--tiers` reads the same in `export`, `recompress` and `verify --deep`: `N`, `A,B`,
//! `A..=B`, `A..`, `..=B`.

mod support;

use std::path::Path;

use support::{ok, run, text};

/// The tiers of the files named `prefix` + number in `dir`, ascending.
fn numbered(dir: &Path, prefix: &str, suffix: &str) -> Vec<u8> {
    let mut v: Vec<u8> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_prefix(prefix)?
                .strip_suffix(suffix)?
                .parse()
                .ok()
        })
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn one_tier_syntax_in_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("t");
    let ds = d.to_str().unwrap();
    ok(&["generate", "--quiet", "--max-seeds", "8", "--dir", ds]);
    let cases: [(&str, &[u8]); 5] = [
        ("3", &[3]),
        ("3,5", &[3, 5]),
        ("3..=5", &[3, 4, 5]),
        ("..=2", &[0, 1, 2]),
        ("6..", &[6, 7, 8]),
    ];
    for (i, (tiers, want)) in cases.iter().enumerate() {
        let rc = tmp.path().join(format!("rc{i}"));
        ok(&[
            "recompress",
            "--dir",
            ds,
            "--out",
            rc.to_str().unwrap(),
            "--tiers",
            tiers,
        ]);
        assert_eq!(numbered(&rc, "tier-", ".owt"), want.to_vec(), "{tiers}");
        let ex = tmp.path().join(format!("ex{i}"));
        ok(&[
            "export",
            "--format",
            "romein",
            "--force",
            "--dir",
            ds,
            "--out",
            ex.to_str().unwrap(),
            "--tiers",
            tiers,
        ]);
        assert_eq!(numbered(&ex, "scores.", ""), want.to_vec(), "{tiers}");
    }
    for (tiers, range) in [
        ("..=5", "0..=5"),
        ("6..", "6..=8"),
        ("4", "4..=4"),
        ("3..=5", "3..=5"),
    ] {
        let out = ok(&["verify", "--deep", "--quiet", "--dir", ds, "--tiers", tiers]);
        assert!(
            out.contains(&format!("deep verification of tiers {range} OK")),
            "{tiers}: {out}"
        );
    }
    // Deep verification re-proves one range: a list with a gap is refused, in one line, as
    // a usage error.
    let o = run(&["verify", "--deep", "--dir", ds, "--tiers", "3,5"]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(e.contains("one range") && e.contains("3..=5"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    // A bad item is refused by each command with the syntax.
    for cmd in [
        &["verify", "--deep", "--dir", ds][..],
        &["recompress", "--dir", ds, "--out", "x"][..],
        &["export", "--format", "romein", "--dir", ds, "--out", "x"][..],
    ] {
        for bad in ["49", "5..=3", "3,", "x"] {
            let o = run(&[cmd, &["--tiers", bad]].concat());
            assert_eq!(o.status.code(), Some(2), "{cmd:?} {bad}");
            let e = text(&o.stderr);
            assert!(e.contains("--tiers") || e.contains("empty range"), "{e}");
        }
    }
}
