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

#[test]
fn an_empty_directory_is_one_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let err = error_line(&["verify", "--dir", d], 1);
    assert_eq!(
        err,
        format!("error: no tables in {d}: no tier-NN.owt and no manifest.json, nothing to verify")
    );
}

#[test]
fn deep_verification_of_tiers_not_there_names_them() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    generate(tmp.path(), 6);
    // Named before any memory is planned for tier 48 (hundreds of GiB).
    let err = error_line(&["verify", "--deep", "--tiers", "48", "--dir", d], 1);
    assert_eq!(
        err,
        format!(
            "error: missing tiers 7..=48: {d} holds tiers up to 6, and deep verification of \
             tiers 48..=48 needs every tier 0..=48"
        )
    );
    let err = error_line(&["verify", "--deep", "--tiers", "5..=7", "--dir", d], 1);
    assert!(err.starts_with("error: missing tier 7: "), "{err}");
}

#[test]
fn a_negative_count_is_a_usage_error_however_it_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    generate(tmp.path(), 2);
    // As a word of its own, clap refuses it; inside one, the position's parser does: both
    // are usage errors.
    let own = run(&[
        "probe", "--dir", d, "0", "0", "0", "0", "0", "1", "0", "0", "0", "0", "0", "-1",
    ]);
    assert_eq!(own.status.code(), Some(2), "{}", text(&own.stderr));
    let err = error_line(&["probe", "--dir", d, "0,0,0,0,0,1,0,0,0,0,0,-1"], 2);
    assert!(err.contains("`-1`"), "{err}");
    let err = error_line(&["probe", "--dir", d, "0 0 0 0 0 1 0 0 0 0 0 -1"], 2);
    assert!(err.contains("`-1`"), "{err}");
    // So are the other counts.
    for args in [
        &["generate", "--dir", d, "--max-seeds", "-1"][..],
        &["generate", "--dir", d, "--max-seeds=-1"],
        &["verify", "--deep", "--dir", d, "--tiers", "0..=-1"],
        &[
            "probe",
            "--dir",
            d,
            "--captured",
            "5,-1",
            "0,0,0,0,0,1,0,0,0,0,0,0",
        ],
    ] {
        let out = run(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_batch_remembers_a_missing_tier() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    generate(tmp.path(), 6);
    // 200,000 lines of tier 9, which is missing: each looked up once took 26 µs or more.
    let input = "0 0 0 0 0 9 0 0 0 0 0 0\n".repeat(200_000);
    let out = support::run_bounded(
        support::oware().args(["probe", "--dir", d, "-"]),
        input.as_bytes(),
        std::time::Duration::from_secs(3),
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 200_000);
    let want = format!(
        "0 0 0 0 0 9 0 0 0 0 0 0\terror: line 200000: missing tier 9: no table {}",
        tmp.path().join("tier-09.owt").display()
    );
    assert_eq!(stdout.lines().last(), Some(want.as_str()));
    assert!(text(&out.stderr).contains("200000 of 200000 lines failed"));
}

/// Runs `oware ARGS` with its standard output a file of `out` that may not grow past
/// `limit` bytes (`RLIMIT_FSIZE`, its signal ignored: a write past it fails with `EFBIG`),
/// and returns its exit status and standard error.
#[cfg(unix)]
fn with_short_stdout(args: &[&str], out: &Path, limit: u64) -> (Option<i32>, String) {
    use std::os::unix::process::CommandExt;
    let file = std::fs::File::create(out).unwrap();
    let mut cmd = support::oware();
    cmd.args(args).stdout(file);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    (o.status.code(), text(&o.stderr))
}

#[cfg(unix)]
#[test]
fn deep_verification_stops_at_the_first_failed_write() {
    let tmp = tempfile::tempdir().unwrap();
    let tables = tmp.path().join("t");
    generate(&tables, 12);
    let t = tables.to_str().unwrap();
    let (code, err) = with_short_stdout(
        &["verify", "--deep", "--again", "--dir", t],
        &tmp.path().join("out"),
        300,
    );
    assert_eq!(code, Some(1), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].starts_with("error: writing to standard output: "),
        "{err}"
    );
    // It stopped there: no tier after it was read, and the error is the last line.
    assert!(!err.contains("tier 12: read"), "{err}");
    assert_eq!(err.lines().last(), Some(errors[0]), "{err}");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tables.join("manifest.json")).unwrap()).unwrap();
    assert!(m["tiers"]["12"]["verified"].is_null(), "tier 12 recorded");
    assert_eq!(support::leftovers(&tables), Vec::<String>::new());
}
