//! Messages say what is wrong: a damaged table by what was found, a missing tier by its
//! number, an empty directory as empty; and the ways they end agree.

mod support;

use std::path::Path;

use support::{ok, run, text};

/// Tables of tiers `0..=max` (abapa) in `dir`.
fn generate(dir: &Path, max: u8) {
    let d = dir.to_str().unwrap();
    ok(&[
        "generate",
        "--quiet",
        "--dir",
        d,
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
    assert!(!err.contains("panicked"), "{err}");
    lines[0].to_string()
}

#[test]
fn a_table_with_bytes_appended_or_a_bad_end_magic_is_not_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    generate(tmp.path(), 6);
    let path = tmp.path().join("tier-06.owt");
    let good = std::fs::read(&path).unwrap();
    let probe = ["probe", "--dir", d, "0,0,0,0,0,6,0,0,0,0,0,0"];
    let p = path.display();

    let mut appended = good.clone();
    appended.extend_from_slice(b"abc");
    std::fs::write(&path, &appended).unwrap();
    let err = error_line(&probe, 1);
    assert_eq!(
        err,
        format!(
            "error: {p}: trailing bytes: the file has {} bytes, but its index and trailer end \
             the table at byte {} (3 bytes after it); the size does not match its index",
            good.len() + 3,
            good.len()
        )
    );
    // A whole table appended: its end magic is at the end, the index is not before it.
    let mut twice = good.clone();
    twice.extend_from_slice(&good);
    std::fs::write(&path, &twice).unwrap();
    assert!(error_line(&probe, 1).contains(": trailing bytes: "));

    let mut flipped = good.clone();
    let at = good.len() - 56 + 16 + 3;
    flipped[at] ^= 1;
    std::fs::write(&path, &flipped).unwrap();
    let err = error_line(&probe, 1);
    assert_eq!(
        err,
        format!(
            "error: {p}: bad end magic \"OWTC-END\", not \"OWTB-END\": not an oware table end \
             (a damaged trailer)"
        )
    );
    // Plain verify says the same.
    let out = run(&["verify", "--dir", d]);
    assert!(
        text(&out.stdout).contains("bad end magic"),
        "{}",
        text(&out.stdout)
    );

    // A table cut short is still truncated.
    std::fs::write(&path, &good[..good.len() - 10]).unwrap();
    assert!(error_line(&probe, 1).contains(": truncated table ("));
}
