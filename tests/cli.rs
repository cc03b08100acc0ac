//! The command line's surface: the subcommands `oware --help` lists, and clear errors for bad
//! arguments.

mod support;

use std::path::Path;

use support::run as oware;

#[test]
fn help_lists_the_subcommands() {
    let out = oware(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for sub in ["generate", "probe", "info", "verify"] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(sub)),
            "{sub} missing from:\n{help}"
        );
    }
}

#[test]
fn bad_rules_and_positions_are_named() {
    let out = oware(&["generate", "--rules", "oware", "--max-seeds", "1"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("abapa") && err.contains("awari"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = oware(&["probe", "--dir", d, "1 2 x 0 0 0 0 0 0 0 0 0"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("field 3"), "{err}");
}

/// Every command that starts workers takes `--threads` in `1..=1024`: `--threads 1` works,
/// `--threads 0` is a usage error (exit status 2) naming the range.
#[test]
fn every_command_with_workers_takes_threads() {
    use std::io::Write;
    use std::process::Stdio;

    let tmp = tempfile::tempdir().unwrap();
    let path = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    let (d, r, e, i) = (path("t"), path("r"), path("e"), path("i"));
    let ok = oware(&[
        "generate",
        "--quiet",
        "--rules",
        "awari",
        "--dir",
        &d,
        "--max-seeds",
        "4",
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let commands: [&[&str]; 4] = [
        &["probe", "--dir", &d, "-"],
        &["recompress", "--dir", &d, "--out", &r],
        &["export", "--format", "romein", "--dir", &d, "--out", &e],
        &["import", "--format", "romein", "--from", &e, "--dir", &i],
    ];
    for args in commands {
        for (threads, code) in [("0", 2), ("1", 0)] {
            let mut child = support::oware()
                .args(args)
                .args(["--threads", threads])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut input = child.stdin.take().unwrap();
            // A usage error may end the command before it reads: the write may fail.
            let _ = input.write_all(b"1 0 0 0 0 0 0 0 0 0 0 1\n");
            drop(input);
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(code), "{args:?} {threads}: {err}");
            if code == 2 {
                assert!(err.contains("1..=1024"), "{args:?}: {err}");
            }
        }
    }
    assert!(Path::new(&i).join("tier-04.owt").is_file());
}
