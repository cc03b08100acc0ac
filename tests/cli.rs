//! The command line's surface: the subcommands `oware --help` lists, and clear errors for bad
//! arguments.

mod support;

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
