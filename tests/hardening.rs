//! Inputs are checked where they enter: the manifest as it is read, command-line values by
//! their parsers; every failure is one `error:` line on stderr and a non-zero exit status
//! that is never a panic's.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::Value;
use support::{run, text};

/// Tables of tiers `0..=max` under `rules` in `dir`.
fn generate(dir: &Path, rules: &str, max: u8) {
    let d = dir.to_str().unwrap();
    let max = max.to_string();
    let o = run(&[
        "generate",
        "--quiet",
        "--dir",
        d,
        "--rules",
        rules,
        "--max-seeds",
        &max,
    ]);
    assert!(o.status.success(), "generate failed: {}", text(&o.stderr));
}

/// Asserts that `o` failed with `code` and printed exactly one line starting `error:`,
/// and returns that line.
fn one_error(o: &Output, code: i32) -> String {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "stderr: {err}");
    assert!(!err.contains("panicked"), "stderr: {err}");
    lines[0].to_string()
}

fn edit_manifest(dir: &Path, f: impl FnOnce(&mut Value)) {
    let path = dir.join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    f(&mut m);
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

fn probe_stdin(args: &[&str], input: &str) -> Output {
    let mut child = support::oware()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_manifest_tier_over_48_is_refused_by_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 6);
    edit_manifest(tmp.path(), |m| {
        let e = m["tiers"]["5"].clone();
        m["tiers"]["99"] = e;
    });
    let before = std::fs::read(tmp.path().join("manifest.json")).unwrap();
    let d = tmp.path().to_str().unwrap();
    let commands: [&[&str]; 6] = [
        &["verify", "--deep", "--dir", d],
        &["verify", "--dir", d],
        &["info", "--dir", d],
        &["generate", "--quiet", "--dir", d, "--max-seeds", "6"],
        &["probe", "--dir", d, "1 0 0 0 0 0 0 0 0 0 0 1"],
        &["recompress", "--dir", d, "--out", &format!("{d}-out")],
    ];
    for args in commands {
        let line = one_error(&run(args), 1);
        assert!(
            line.contains("manifest.json") && line.contains("tier 99: over 48"),
            "{args:?}: {line}"
        );
    }
    // `generate` did not keep (or rewrite) the entry.
    assert_eq!(
        std::fs::read(tmp.path().join("manifest.json")).unwrap(),
        before
    );
}

#[test]
fn a_manifest_entry_of_the_wrong_size_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 4);
    edit_manifest(tmp.path(), |m| m["tiers"]["3"]["entries"] = 7.into());
    let d = tmp.path().to_str().unwrap();
    let line = one_error(&run(&["info", "--dir", d]), 1);
    assert!(
        line.contains("manifest.json") && line.contains("tier 3: 7 entries"),
        "{line}"
    );
}

#[test]
fn a_manifest_of_another_format_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 4);
    edit_manifest(tmp.path(), |m| m["format"] = 99.into());
    let d = tmp.path().to_str().unwrap();
    for cmd in ["info", "verify"] {
        let line = one_error(&run(&[cmd, "--dir", d]), 1);
        assert!(
            line.contains("manifest.json") && line.contains("format 99"),
            "{cmd}: {line}"
        );
    }
}

#[test]
fn threads_out_of_range_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    for t in ["100000", "0", "+2"] {
        for cmd in ["generate", "verify"] {
            let line = one_error(&run(&[cmd, "--dir", d, "--threads", t]), 2);
            assert!(line.contains("1..=1024"), "{cmd} --threads {t}: {line}");
        }
    }
    assert!(!tmp.path().join("manifest.json").exists());
}

#[test]
fn probe_takes_flags_after_the_position() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 4);
    let d = tmp.path().to_str().unwrap();
    let o = run(&[
        "probe", "--dir", d, "1", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "1", "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["position"], "1 0 0 0 0 0 0 0 0 0 0 1");
}

#[test]
fn probe_batch_prints_json_lines_with_json() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 4);
    let d = tmp.path().to_str().unwrap();
    let o = probe_stdin(
        &["probe", "--dir", d, "--json", "-"],
        "1 0 0 0 0 0 0 0 0 0 0 1\nbad\n",
    );
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert_eq!(rows[0]["position"], "1 0 0 0 0 0 0 0 0 0 0 1");
    assert!(rows[0]["score"].is_i64());
    assert_eq!(rows[1]["line"], 2);
    assert!(rows[1]["error"].as_str().unwrap().contains("bad position"));
    // --line and --captured need one position.
    let o = probe_stdin(&["probe", "--dir", d, "--line", "-"], "");
    one_error(&o, 2);
}

#[test]
fn info_fails_when_the_tables_rules_differ_from_the_manifests() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 3);
    edit_manifest(tmp.path(), |m| m["rules"] = "awari".into());
    let d = tmp.path().to_str().unwrap();
    let o = run(&["info", "--dir", d]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains("built under `abapa`, the manifest says `awari`"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn os_errors_print_once_with_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing");
    let m = missing.to_str().unwrap();
    for args in [
        vec!["probe", "--dir", m, "1 0 0 0 0 0 0 0 0 0 0 1"],
        vec!["info", "--dir", m],
        vec![
            "recompress",
            "--dir",
            m,
            "--out",
            tmp.path().to_str().unwrap(),
        ],
    ] {
        let line = one_error(&run(&args), 1);
        assert!(line.contains(m), "{args:?}: {line}");
        assert_eq!(line.matches("os error 2").count(), 1, "{args:?}: {line}");
    }
}

#[test]
fn a_directory_in_place_of_a_tier_file_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 4);
    let tier = tmp.path().join("tier-03.owt");
    std::fs::remove_file(&tier).unwrap();
    std::fs::create_dir(&tier).unwrap();
    let d = tmp.path().to_str().unwrap();
    let o = run(&["verify", "--dir", d]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(
        out.lines()
            .any(|l| l.starts_with("tier  3  FAILED") && l.ends_with("tier-03.owt: is a directory")),
        "{out}"
    );
    let line = one_error(&run(&["probe", "--dir", d, "0 0 0 1 0 0 0 1 1 0 0 0"]), 1);
    assert!(line.ends_with("tier-03.owt: is a directory"), "{line}");
    let o = run(&["verify", "--deep", "--dir", d]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
}

#[test]
fn captured_is_parsed_and_checked_against_the_board() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 4);
    let d = tmp.path().to_str().unwrap();
    let p = "1 0 0 0 0 0 0 0 0 0 0 1";
    let line = one_error(&run(&["probe", "--dir", d, "--captured=-1,5", p]), 2);
    assert!(line.contains("`-1`") && line.contains("0..=48"), "{line}");
    let line = one_error(&run(&["probe", "--dir", d, "--captured", "+1,5", p]), 2);
    assert!(line.contains("`+1`"), "{line}");
    // 2 seeds on the board and 10 + 12 captured: 24 is a whole game of 2 seeds per house.
    assert!(run(&["probe", "--dir", d, "--captured", "10,12", p])
        .status
        .success());
    let line = one_error(&run(&["probe", "--dir", d, "--captured", "10,13", p]), 1);
    assert!(line.contains("make 25") && line.contains("48"), "{line}");
    let line = one_error(&run(&["probe", "--dir", d, "--captured", "30,30", p]), 1);
    assert!(line.contains("make 62"), "{line}");
    let o = run(&["probe", "--dir", d, "--json", "--captured", "20,26", p]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["outcome"]["mover_total"].as_f64().unwrap()
            + v["outcome"]["opponent_total"].as_f64().unwrap(),
        48.0
    );
}

#[test]
fn a_count_with_a_sign_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 2);
    let d = tmp.path().to_str().unwrap();
    let line = one_error(&run(&["probe", "--dir", d, "+1 0 0 0 0 0 0 0 0 0 0 1"]), 2);
    assert!(line.contains("field 1") && line.contains("`+1`"), "{line}");
}

#[test]
fn recompress_block_entries_out_of_range_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 2);
    let d = tmp.path().to_str().unwrap();
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    for b in ["0", "16777217"] {
        let line = one_error(
            &run(&["recompress", "--dir", d, "--out", o, "--block-entries", b]),
            2,
        );
        assert!(line.contains("1..=16777216"), "{line}");
    }
    assert!(!out.exists());
}

#[test]
fn compression_other_than_the_tables_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 3);
    let d = tmp.path().to_str().unwrap();
    let line = one_error(
        &run(&[
            "generate",
            "-q",
            "--dir",
            d,
            "--max-seeds",
            "4",
            "--compression",
            "zstd",
        ]),
        1,
    );
    assert!(
        line.contains("--compression zstd") && line.contains("holds huffman tables"),
        "{line}"
    );
    assert!(!tmp.path().join("tier-04.owt").exists());
    // Without --compression, the directory's own is kept.
    let z = tmp.path().join("z");
    let zd = z.to_str().unwrap();
    let o = run(&[
        "generate",
        "-q",
        "--dir",
        zd,
        "--max-seeds",
        "2",
        "--compression",
        "zstd",
    ]);
    assert!(o.status.success());
    let o = run(&["generate", "-q", "--dir", zd, "--max-seeds", "3"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let info: Value =
        serde_json::from_slice(&run(&["info", "--json", "--dir", zd]).stdout).unwrap();
    let tiers = info["tiers"].as_array().unwrap();
    assert_eq!(tiers.len(), 4);
    assert!(tiers.iter().all(|t| t["compression"] == "zstd"), "{info}");
}

#[test]
fn every_command_defaults_to_the_tables_rules() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "awari", 3);
    let d = tmp.path().to_str().unwrap();
    let p = "1 0 0 0 0 0 0 0 0 0 0 1";
    let v: Value =
        serde_json::from_slice(&run(&["probe", "--dir", d, "--json", p]).stdout).unwrap();
    assert_eq!(v["rules"], "awari");
    let v: Value = serde_json::from_slice(&run(&["verify", "--dir", d, "--json"]).stdout).unwrap();
    assert_eq!(v["rules"], "awari");
    // generate without --rules goes on under the tables' rules.
    let o = run(&["generate", "--dir", d, "--max-seeds", "4"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("under awari"),
        "{}",
        text(&o.stderr)
    );
    // A --rules that differs is refused by every command, naming both.
    for args in [
        vec!["probe", "--dir", d, "--rules", "abapa", p],
        vec!["verify", "--dir", d, "--rules", "abapa"],
        vec![
            "generate",
            "--dir",
            d,
            "--rules",
            "abapa",
            "--max-seeds",
            "4",
        ],
    ] {
        let line = one_error(&run(&args), 1);
        assert!(
            line.contains("awari") && line.contains("abapa"),
            "{args:?}: {line}"
        );
    }
}

#[test]
fn an_mpi_job_without_mpi_is_refused_before_writing() {
    // Each process of such a job would run alone over the same directory.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let d = dir.to_str().unwrap();
    for args in [
        &["generate", "--max-seeds", "3", "--dir", d][..],
        &["verify", "--deep", "--dir", d][..],
    ] {
        let o = support::oware()
            .args(args)
            .env("OMPI_COMM_WORLD_SIZE", "4")
            .output()
            .unwrap();
        let line = one_error(&o, 1);
        assert!(
            line.contains("built without MPI") && line.contains("--features mpi"),
            "{line}"
        );
    }
    assert!(!dir.exists());
}

/// The longest a command of these tests may run: a command that blocks fails the test.
const BOUND: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs `oware ARGS` with `input` on stdin, under [`BOUND`].
fn bounded(args: &[&str], input: &str) -> Output {
    support::run_bounded(support::oware().args(args), input.as_bytes(), BOUND)
}

/// Makes a named pipe at `path`.
#[cfg(unix)]
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

#[cfg(unix)]
#[test]
fn a_named_pipe_in_place_of_a_table_or_the_manifest_blocks_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 6);
    let d = tmp.path().to_str().unwrap();
    let tier = tmp.path().join("tier-05.owt");
    std::fs::remove_file(&tier).unwrap();
    mkfifo(&tier);
    let p = "2 1 1 0 0 0 0 0 0 0 0 1";
    let line = one_error(&bounded(&["probe", "--dir", d, p], ""), 1);
    assert!(
        line.ends_with("tier-05.owt: is a named pipe (FIFO), not a regular file"),
        "{line}"
    );
    let o = bounded(&["probe", "--dir", d, "-"], &format!("{p}\n"));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout).contains("named pipe"),
        "{}",
        text(&o.stdout)
    );
    for args in [
        &["info", "--dir", d][..],
        &["verify", "--dir", d],
        &["verify", "--deep", "--dir", d],
    ] {
        let o = bounded(args, "");
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o.stderr));
        let all = text(&o.stdout) + &text(&o.stderr);
        assert!(all.contains("named pipe"), "{args:?}: {all}");
    }
    // The manifest.
    std::fs::remove_file(&tier).unwrap();
    generate(tmp.path(), "abapa", 6);
    let manifest = tmp.path().join("manifest.json");
    std::fs::remove_file(&manifest).unwrap();
    mkfifo(&manifest);
    for args in [
        &["probe", "--dir", d, p][..],
        &["probe", "--dir", d, "-"],
        &["info", "--dir", d],
        &["verify", "--dir", d],
        &["verify", "--deep", "--dir", d],
    ] {
        let line = one_error(&bounded(args, ""), 1);
        assert!(
            line.ends_with("manifest.json: is a named pipe (FIFO), not a regular file"),
            "{args:?}: {line}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_manifest_that_is_a_device_or_too_long_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 3);
    let d = tmp.path().to_str().unwrap();
    let manifest = tmp.path().join("manifest.json");
    std::fs::remove_file(&manifest).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &manifest).unwrap();
    let line = one_error(&bounded(&["info", "--dir", d], ""), 1);
    assert!(line.ends_with("is a device, not a regular file"), "{line}");
    // A regular file over the cap: refused without reading it whole.
    std::fs::remove_file(&manifest).unwrap();
    let f = std::fs::File::create(&manifest).unwrap();
    f.set_len(1 << 30).unwrap();
    let line = one_error(&bounded(&["info", "--dir", d], ""), 1);
    assert!(line.contains("over 16777216 bytes"), "{line}");
}

#[cfg(unix)]
#[test]
fn links_that_lead_nowhere_are_named_not_missing() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 4);
    let d = tmp.path().to_str().unwrap();
    let tier = tmp.path().join("tier-03.owt");
    std::fs::remove_file(&tier).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("gone.owt"), &tier).unwrap();
    let p = "1 1 0 0 0 0 0 0 0 0 0 1";
    let line = one_error(&bounded(&["probe", "--dir", d, p], ""), 1);
    assert!(
        line.contains("tier-03.owt: a dangling symbolic link") && !line.contains("missing"),
        "{line}"
    );
    let o = bounded(&["verify", "--dir", d], "");
    assert!(
        text(&o.stdout).contains("dangling symbolic link"),
        "{}",
        text(&o.stdout)
    );
    // A loop.
    std::fs::remove_file(&tier).unwrap();
    std::os::unix::fs::symlink(&tier, &tier).unwrap();
    let line = one_error(&bounded(&["probe", "--dir", d, p], ""), 1);
    assert!(
        line.contains("tier-03.owt") && !line.contains("missing"),
        "{line}"
    );
    let o = bounded(&["verify", "--dir", d], "");
    let out = text(&o.stdout);
    assert!(
        out.contains("tier  3  FAILED") && !out.contains("missing"),
        "{out}"
    );
}

#[test]
fn memory_limits_that_do_not_parse_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("t");
    let d = d.to_str().unwrap();
    for bad in ["garbage", "-1", "1e9", "0", "1.5G", "4x"] {
        for args in [
            &["generate", "-q", "--dir", d, "--max-seeds", "3"][..],
            &["verify", "--start", "--seeds-per-house", "1", "--dir", d],
        ] {
            let o = support::oware()
                .args(args)
                .env("OWARE_MEMORY_LIMIT", bad)
                .output()
                .unwrap();
            let line = one_error(&o, 1);
            assert!(
                line.contains(&format!("OWARE_MEMORY_LIMIT={bad}")) && line.contains("22G"),
                "{bad} {args:?}: {line}"
            );
        }
    }
    assert!(!Path::new(d).join("manifest.json").exists());
    // The usual units: 4k is a limit, too small for tier 3.
    let o = support::oware()
        .args(["generate", "-q", "--dir", d, "--max-seeds", "3"])
        .env("OWARE_MEMORY_LIMIT", "4k")
        .output()
        .unwrap();
    let line = one_error(&o, 1);
    assert!(
        line.contains("only 4096 are available") && !line.contains("OWARE_MEMORY_LIMIT="),
        "{line}"
    );
    for good in ["22G", "22GiB", "22 gb", "1073741824"] {
        let o = support::oware()
            .args(["generate", "-q", "--dir", d, "--max-seeds", "3"])
            .env("OWARE_MEMORY_LIMIT", good)
            .output()
            .unwrap();
        assert!(o.status.success(), "{good}: {}", text(&o.stderr));
    }
}

#[test]
fn rayon_num_threads_is_range_checked_as_threads() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 3);
    let d = tmp.path().to_str().unwrap();
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    for bad in ["100000", "0", "x"] {
        for args in [
            &["generate", "-q", "--dir", d, "--max-seeds", "3"][..],
            &["verify", "--dir", d],
            &["probe", "--dir", d, "-"],
            &["recompress", "--dir", d, "--out", o],
        ] {
            let out = support::run_bounded(
                support::oware().args(args).env("RAYON_NUM_THREADS", bad),
                b"1 0 0 0 0 0 0 0 0 0 0 1\n",
                BOUND,
            );
            let line = one_error(&out, 1);
            assert!(
                line.contains(&format!("RAYON_NUM_THREADS={bad}")) && line.contains("1..=1024"),
                "{args:?}: {line}"
            );
        }
    }
    // --threads takes precedence; a good value is used.
    let o = support::oware()
        .args(["verify", "--dir", d, "--threads", "2"])
        .env("RAYON_NUM_THREADS", "100000")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = support::oware()
        .args(["verify", "--dir", d])
        .env("RAYON_NUM_THREADS", "3")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// `oware ARGS` as a process that may not start threads: its limit of processes is 1 (as an
/// unprivileged user, `nobody`, when the tests run as root, who is exempt from the limit).
#[cfg(unix)]
fn without_threads(args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = support::oware();
    cmd.args(args);
    // SAFETY: only async-signal-safe calls (setrlimit, getuid, setgroups, setgid, setuid)
    // between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::geteuid() == 0 {
                let nobody: libc::uid_t = 65534;
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(nobody) != 0
                    || libc::setuid(nobody) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            let one = libc::rlimit {
                rlim_cur: 1,
                rlim_max: 1,
            };
            if libc::setrlimit(libc::RLIMIT_NPROC, &one) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    support::run_bounded(&mut cmd, b"1 0 0 0 0 0 0 0 0 0 0 1\n", BOUND)
}

#[cfg(unix)]
#[test]
fn no_command_panics_when_threads_cannot_start() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    // Readable and writable by `nobody`.
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let tables = tmp.path().join("t");
    generate(&tables, "awari", 3);
    std::fs::set_permissions(&tables, std::fs::Permissions::from_mode(0o755)).unwrap();
    let d = tables.to_str().unwrap();
    let out = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    let (r, e, i, g) = (out("r"), out("e"), out("i"), out("g"));
    let commands: [&[&str]; 8] = [
        &["probe", "--dir", d, "-"],
        &["recompress", "--dir", d, "--out", &r],
        &["export", "--format", "romein", "--dir", d, "--out", &e],
        &["import", "--format", "romein", "--from", d, "--dir", &i],
        &["generate", "-q", "--dir", &g, "--max-seeds", "2"],
        &["verify", "--dir", d],
        &["verify", "--deep", "--dir", d],
        &["serve", "--dir", d, "--addr", "127.0.0.1:0"],
    ];
    for args in commands {
        let o = without_threads(args);
        let line = one_error(&o, 1);
        assert!(line.contains("cannot start"), "{args:?}: {line}");
    }
}

#[test]
fn generate_into_a_file_names_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let f = file.to_str().unwrap();
    let line = one_error(&run(&["generate", "-q", "--dir", f, "--max-seeds", "2"]), 1);
    assert!(
        line.contains(&format!("{f}: ")) && !line.contains("manifest.json"),
        "{line}"
    );
}

#[test]
fn probe_usage_errors_exit_2_and_json_errors_are_json() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 4);
    let d = tmp.path().to_str().unwrap();
    for args in [
        &["probe", "--dir", d, "--line", "-"][..],
        &["probe", "--dir", d, "--captured", "1,1", "-"],
        &["probe", "--dir", d, "-", "1"],
        &[
            "probe",
            "--dir",
            d,
            "--line",
            "--max-plies",
            "1001",
            "1 0 0 0 0 0 0 0 0 0 0 1",
        ],
        &[
            "probe",
            "--dir",
            d,
            "--line",
            "--max-plies",
            "18446744073709551615",
            "1 0 0 0 0 0 0 0 0 0 0 1",
        ],
    ] {
        one_error(&bounded(args, ""), 2);
    }
    // A missing tier: a JSON object on stdout, with the command that generates it.
    let o = run(&["probe", "--dir", d, "--json", "1 1 1 1 1 1 0 0 0 0 0 0"]);
    let line = one_error(&o, 1);
    assert!(line.contains("generate it with `oware generate"), "{line}");
    let v: Value = serde_json::from_slice(&o.stdout).expect("a JSON error");
    assert_eq!(v["missing_tier"], 6, "{v}");
    assert!(
        v["generate"]
            .as_str()
            .unwrap()
            .ends_with("--rules abapa --max-seeds 6"),
        "{v}"
    );
    assert!(
        v["error"].as_str().unwrap().contains("missing tier 6"),
        "{v}"
    );
    // Any other error too.
    let o = run(&["probe", "--dir", d, "--json", "1 x"]);
    one_error(&o, 2);
    let v: Value = serde_json::from_slice(&o.stdout).expect("a JSON error");
    assert!(v["error"].as_str().unwrap().contains("bad position"), "{v}");
}

#[test]
fn probe_line_streams_up_to_its_cap() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 6);
    let d = tmp.path().to_str().unwrap();
    // A line that cycles forever: it runs to the cap, 1000 plies, and no further.
    let p = "0 0 0 0 0 1 0 0 0 0 0 1";
    let o = bounded(
        &["probe", "--dir", d, "--line", "--max-plies", "1000", p],
        "",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let plies = out.lines().filter(|l| l.contains(". house ")).count();
    assert!(plies <= 1000, "{plies}");
    let summary = out
        .lines()
        .find(|l| l.starts_with("best line ("))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        summary.starts_with(&format!("best line ({plies} plies)")),
        "{summary}"
    );
}

#[test]
fn a_mixed_compression_hint_can_be_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    generate(&dir, "abapa", 3);
    let d = dir.to_str().unwrap();
    let line = one_error(
        &run(&[
            "generate",
            "-q",
            "--dir",
            d,
            "--max-seeds",
            "4",
            "--compression",
            "zstd",
        ]),
        1,
    );
    let hint = line
        .split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("no command in {line}"));
    assert!(hint.starts_with("oware recompress "), "{line}");
    let args: Vec<&str> = hint.split_whitespace().skip(1).collect();
    let o = run(&args);
    assert!(o.status.success(), "{hint}: {}", text(&o.stderr));
    let other = format!("{d}-zstd");
    assert!(line.contains(&format!("--dir {other}")), "{line}");
    let o = run(&[
        "generate",
        "-q",
        "--dir",
        &other,
        "--max-seeds",
        "4",
        "--compression",
        "zstd",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// A standard output or error that cannot be written (`/dev/full`: a full disk) is an error
/// of one line, never a panic; a full standard error does not stop a run.
#[cfg(target_os = "linux")]
#[test]
fn a_full_standard_output_is_an_error_and_a_full_standard_error_is_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 6);
    let d = tmp.path().to_str().unwrap();
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for args in [
        vec!["info", "--dir", d],
        vec!["info", "--json", "--dir", d],
        vec!["verify", "--dir", d],
        vec!["verify", "--deep", "--dir", d],
        vec!["verify", "--start", "--seeds-per-house", "1", "--dir", d],
        vec!["probe", "--json", "--dir", d, "1 0 0 0 0 0 0 0 0 0 0 1"],
        vec!["probe", "--dir", d, "1 0 0 0 0 0 0 0 0 0 0 1"],
        vec!["probe", "--dir", d, "--line", "1 0 0 0 0 0 0 0 0 0 0 1"],
        vec!["--help"],
        vec!["--version"],
    ] {
        let o = support::oware()
            .args(&args)
            .stdout(full())
            .output()
            .unwrap();
        let line = one_error(&o, 1);
        assert!(
            line.starts_with("error: writing to standard output: No space left on device"),
            "{args:?}: {line}"
        );
    }
    // A batch the same way; and a failed probe's own error is the one told, even when its
    // JSON cannot be written.
    let mut batch = support::oware()
        .args(["probe", "--dir", d, "-"])
        .stdin(Stdio::piped())
        .stdout(full())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    batch
        .stdin
        .take()
        .unwrap()
        .write_all(b"1 0 0 0 0 0 0 0 0 0 0 1\n")
        .unwrap();
    let line = one_error(&batch.wait_with_output().unwrap(), 1);
    assert!(
        line.starts_with("error: writing to standard output: "),
        "{line}"
    );
    let o = support::oware()
        .args(["probe", "--json", "--dir", d, "1 0 0 x"])
        .stdout(full())
        .output()
        .unwrap();
    let line = one_error(&o, 2);
    assert!(line.starts_with("error: bad position"), "{line}");
    let g = tmp.path().join("g");
    let o = support::oware()
        .args(["generate", "--max-seeds", "6", "--dir", g.to_str().unwrap()])
        .stderr(full())
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", o.status);
    assert!(support::tables(&g) == support::tables(tmp.path()));
}

/// Options that do not go together, or that the others make meaningless, are usage errors
/// (exit status 2) rather than silently ignored, and nothing is written.
#[test]
fn options_that_do_not_go_together_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 4);
    let d = tmp.path().to_str().unwrap();
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    let p = "1 0 0 0 0 0 0 0 0 0 0 1";
    for args in [
        &["verify", "--dir", d, "--start", "--deep", "--generate"][..],
        &["verify", "--dir", d, "--again"],
        &["verify", "--dir", d, "--start", "--again"],
        &["probe", "--dir", d, "--max-plies", "5", p],
        &["recompress", "--dir", d, "--out", o, "--level", "5"],
        &[
            "recompress",
            "--dir",
            d,
            "--out",
            o,
            "--compression",
            "zstd",
            "--level",
            "99",
        ],
    ] {
        let line = one_error(&run(args), 2);
        assert!(!line.is_empty(), "{args:?}");
    }
    assert!(!out.exists());
    // The same options where they apply.
    for args in [
        &["verify", "--dir", d, "--deep", "--again", "-q"][..],
        &["probe", "--dir", d, "--line", "--max-plies", "5", p],
        &[
            "recompress",
            "--dir",
            d,
            "--out",
            o,
            "--compression",
            "zstd",
            "--level",
            "5",
        ],
    ] {
        let r = run(args);
        assert!(r.status.success(), "{args:?}: {}", text(&r.stderr));
    }
}

/// A distance table that the manifest records but whose file is gone is named as missing,
/// not taken for a tier generated without distances; the score is answered all the same.
#[cfg(unix)]
#[test]
fn a_recorded_distance_table_that_is_gone_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), "abapa", 6);
    let gone = tmp.path().join("tier-06.owd");
    std::fs::remove_file(&gone).unwrap();
    let d = tmp.path().to_str().unwrap();
    let o = run(&["probe", "--dir", d, "1 1 1 1 1 1 0 0 0 0 0 0"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains(&format!(
            "note      distance unavailable: {}: No such file or directory (os error 2)",
            gone.display()
        )),
        "{out}"
    );
}
