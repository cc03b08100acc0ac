//! The advice in messages can be followed: suggested commands quote their arguments for a
//! shell, and a refusal names what to change, the same way whichever way it is asked.

mod support;

use std::path::Path;
use std::process::Command;

use support::{ok, run, text};

/// Tables of tiers `0..=max` under `rules` in `dir`.
fn generate(dir: &Path, rules: &str, max: u8) {
    let d = dir.to_str().unwrap();
    ok(&[
        "generate",
        "--quiet",
        "--dir",
        d,
        "--rules",
        rules,
        "--max-seeds",
        &max.to_string(),
    ]);
}

/// The one `error:` line of a failed run with exit status `code`.
fn error_line(args: &[&str], code: i32) -> String {
    let out = run(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    lines[0].to_string()
}

/// The text between the first pair of backquotes of `s` that starts `oware `.
fn suggested(s: &str) -> String {
    let start = s.find("`oware ").expect("a suggested command") + 1;
    let end = s[start..].find('`').expect("its end") + start;
    s[start..end].to_string()
}

#[cfg(unix)]
#[test]
fn suggested_commands_quote_their_arguments() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["x; touch PWNED #", "my tables", "it's"] {
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        let d = dir.to_str().unwrap();
        let err = error_line(
            &[
                "probe", "--dir", d, "0", "0", "0", "0", "0", "2", "0", "0", "0", "0", "0", "0",
            ],
            1,
        );
        let command = suggested(&err);
        assert!(command.starts_with("oware generate --dir '"), "{command}");
        // The JSON's command is the same.
        let out = run(&["probe", "--json", "--dir", d, "0,0,0,0,0,2,0,0,0,0,0,0"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["generate"], command.as_str());
        // Pasted into a shell, it generates into the directory and runs nothing else.
        let bin = env!("CARGO_BIN_EXE_oware");
        let line = format!("'{bin}'{}", command.strip_prefix("oware").unwrap());
        let status = Command::new("sh")
            .arg("-c")
            .arg(&line)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert!(status.status.success(), "{line}: {}", text(&status.stderr));
        assert!(dir.join("tier-02.owt").is_file(), "{line}");
        assert!(!tmp.path().join("PWNED").exists(), "{line}");
    }
    // A plain directory stays plain.
    let dir = tmp.path().join("plain");
    std::fs::create_dir(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let err = error_line(&["probe", "--dir", d, "0,0,0,0,0,2,0,0,0,0,0,0"], 1);
    assert!(
        err.ends_with(&format!(
            "`oware generate --dir {d} --rules abapa --max-seeds 2`"
        )),
        "{err}"
    );
}

#[test]
fn a_stray_table_of_other_rules_is_named_and_the_advice_agrees() {
    let tmp = tempfile::tempdir().unwrap();
    let abapa = tmp.path().join("abapa");
    let awari = tmp.path().join("awari");
    generate(&abapa, "abapa", 8);
    generate(&awari, "awari", 9);
    std::fs::copy(awari.join("tier-09.owt"), abapa.join("tier-09.owt")).unwrap();
    let d = abapa.to_str().unwrap();
    let stray = abapa.join("tier-09.owt");
    // The manifest's rules win: without --rules, the stray file is named.
    let err = error_line(&["generate", "-q", "--dir", d, "--max-seeds", "9"], 1);
    assert!(
        err.contains(&format!(
            "{d} holds tables under `abapa` (the rules of its manifest), but {} is built \
             under `awari`",
            stray.display()
        )),
        "{err}"
    );
    assert!(!err.contains("--rules awari"), "{err}");
    // Asked for the stray file's rules, the advice is the manifest's rules: it agrees.
    let err = error_line(
        &[
            "generate",
            "-q",
            "--dir",
            d,
            "--max-seeds",
            "9",
            "--rules",
            "awari",
        ],
        1,
    );
    assert!(
        err.ends_with("use another directory or --rules abapa"),
        "{err}"
    );
    // A probe that meets it names it too.
    let err = error_line(&["probe", "--dir", d, "0,0,0,0,0,9,0,0,0,0,0,0"], 1);
    assert!(
        err.contains(&format!(
            ": {} is built under `awari` in a directory of tables under `abapa`; move it out \
             of {d} or remove it",
            stray.display()
        )),
        "{err}"
    );
    // Plain verification names it too, not only its tier.
    let out = run(&["verify", "--dir", d]);
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(
        report.contains(&format!(
            "tier  9  FAILED  {}: built under `awari`, not `abapa`",
            stray.display()
        )),
        "{report}"
    );
    // Following the advice works.
    std::fs::remove_file(&stray).unwrap();
    ok(&["generate", "-q", "--dir", d, "--max-seeds", "9"]);

    // Without a manifest, the lowest table's rules are the directory's.
    let bare = tmp.path().join("bare");
    std::fs::create_dir(&bare).unwrap();
    for n in 0..=5 {
        let f = format!("tier-{n:02}.owt");
        std::fs::copy(awari.join(&f), bare.join(&f)).unwrap();
    }
    std::fs::copy(abapa.join("tier-06.owt"), bare.join("tier-06.owt")).unwrap();
    let b = bare.to_str().unwrap();
    let err = error_line(&["generate", "-q", "--dir", b, "--max-seeds", "7"], 1);
    assert!(
        err.contains("(the rules of its lowest table), but ")
            && err.contains("tier-06.owt is built under `abapa`"),
        "{err}"
    );
    let err = error_line(
        &[
            "generate",
            "-q",
            "--dir",
            b,
            "--max-seeds",
            "7",
            "--rules",
            "abapa",
        ],
        1,
    );
    assert!(
        err.ends_with("use another directory or --rules awari"),
        "{err}"
    );
}

#[test]
fn a_table_solved_again_is_logged_with_why() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    generate(tmp.path(), "abapa", 9);
    // A flipped byte in tier 8, and tier 9 left out of the manifest.
    let t8 = tmp.path().join("tier-08.owt");
    let mut bytes = std::fs::read(&t8).unwrap();
    bytes[3000] ^= 0x55;
    std::fs::write(&t8, &bytes).unwrap();
    let path = tmp.path().join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    m["tiers"].as_object_mut().unwrap().remove("9");
    std::fs::write(&path, m.to_string()).unwrap();
    let out = run(&["generate", "--dir", d, "--max-seeds", "9"]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("tier  8: tier-08.owt fails its checksum")
            && err.contains("; solving it again"),
        "{err}"
    );
    assert!(
        err.contains("tier  9: tier-09.owt is not recorded in the manifest; solving it again"),
        "{err}"
    );
    // Tiers kept are not said to be solved again.
    assert!(!err.contains("tier  7: tier-07"), "{err}");
}

#[test]
fn a_table_that_changed_is_named_not_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let tables = tmp.path().join("t");
    let other = tmp.path().join("z");
    generate(&tables, "abapa", 6);
    let (t, z) = (tables.to_str().unwrap(), other.to_str().unwrap());
    ok(&[
        "recompress",
        "--dir",
        t,
        "--out",
        z,
        "--tiers",
        "6",
        "--compression",
        "zstd",
    ]);
    // A valid table of another size in place of tier 6: the table changed, not the manifest.
    std::fs::copy(other.join("tier-06.owt"), tables.join("tier-06.owt")).unwrap();
    let err = error_line(&["probe", "--dir", t, "0,0,0,0,0,6,0,0,0,0,0,0"], 1);
    assert!(
        err.contains(&format!(
            "{}: does not match the manifest: the table has 12375 entries in ",
            tables.join("tier-06.owt").display()
        )) && err.contains("the table changed since it was recorded"),
        "{err}"
    );
    assert!(!err.contains("manifest says"), "{err}");
}
