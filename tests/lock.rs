//! The writer's lock of a table directory: a second writer is refused at once with exit
//! status 2, readers ignore the lock, and a lock file left by a dead process blocks nobody.

#![cfg(unix)]

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{hold_lock, ok, run, text};

#[test]
fn a_second_writer_is_refused_at_once_while_the_lock_is_held() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("t");
    let ds = d.to_str().unwrap();
    let src = tmp.path().join("src");
    let srcs = src.to_str().unwrap();
    ok(&["generate", "--quiet", "--dir", srcs, "--max-seeds", "5"]);
    let lock = hold_lock(&d);
    let expected = format!(
        "error: {ds} is being written by process {}\n",
        std::process::id()
    );
    let start = Instant::now();
    let out = run(&["generate", "--quiet", "--dir", ds, "--max-seeds", "12"]);
    assert!(start.elapsed() < Duration::from_secs(5), "not at once");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr), expected);
    let out = run(&[
        "recompress",
        "--dir",
        srcs,
        "--out",
        ds,
        "--compression",
        "zstd",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr), expected);
    // `verify --start --generate` writes tables too.
    let out = run(&[
        "verify",
        "--start",
        "--seeds-per-house",
        "1",
        "--generate",
        "--dir",
        ds,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr), expected);
    // Nothing was written.
    let names: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
    assert_eq!(names.len(), 1);
    drop(lock);
    ok(&["generate", "--quiet", "--dir", ds, "--max-seeds", "5"]);
}

#[test]
fn readers_work_while_the_directory_is_locked() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    ok(&["generate", "--quiet", "--dir", d, "--max-seeds", "6"]);
    let _lock = hold_lock(tmp.path());
    let info = ok(&["info", "--dir", d]);
    assert!(!info.contains(".lock"), "{info}");
    ok(&["info", "--dir", d, "--json"]);
    ok(&["verify", "--dir", d, "-q"]);
    ok(&[
        "probe", "--dir", d, "1", "1", "1", "1", "1", "1", "0", "0", "0", "0", "0", "0",
    ]);
}

#[test]
fn a_lock_file_left_by_a_dead_process_does_not_block() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    // Present, naming a process, but locked by nobody.
    std::fs::write(tmp.path().join(".lock"), "4000000\n").unwrap();
    ok(&["generate", "--quiet", "--dir", d, "--max-seeds", "6"]);
    ok(&["verify", "--dir", d, "-q"]);
}

#[test]
fn of_two_writers_started_together_one_is_refused_or_finds_the_work_done() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let spawn = || {
        support::oware()
            .args(["generate", "--quiet", "--dir", d, "--max-seeds", "12"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
    assert!(outs.iter().any(|o| o.status.success()));
    for o in &outs {
        if !o.status.success() {
            assert_eq!(o.status.code(), Some(2));
            let err = text(&o.stderr);
            assert!(
                err.starts_with(&format!("error: {d} is being written by process ")),
                "{err}"
            );
        }
    }
    ok(&["verify", "--dir", d, "-q"]);
}

#[test]
fn a_lock_file_that_is_a_link_or_a_fifo_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, "keep me\n").unwrap();
    let d = tmp.path().join("t");
    std::fs::create_dir(&d).unwrap();
    std::os::unix::fs::symlink(&victim, d.join(".lock")).unwrap();
    let ds = d.to_str().unwrap();
    let out = run(&["generate", "--quiet", "--dir", ds, "--max-seeds", "3"]);
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert!(
        e.contains("/.lock: a symbolic link, not a lock file: remove it") && e.lines().count() == 1,
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    assert!(!d.join("tier-00.owt").exists());

    let f = tmp.path().join("f");
    std::fs::create_dir(&f).unwrap();
    let fifo = std::ffi::CString::new(f.join(".lock").to_str().unwrap()).unwrap();
    // SAFETY: `mkfifo` reads the path only.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let out = run(&[
        "generate",
        "--quiet",
        "--dir",
        f.to_str().unwrap(),
        "--max-seeds",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert!(
        e.contains("/.lock: not a plain file, so not a lock file: remove it"),
        "{e}"
    );

    // A hard link to another file: refused too, the file kept.
    let h = tmp.path().join("h");
    std::fs::create_dir(&h).unwrap();
    std::fs::hard_link(&victim, h.join(".lock")).unwrap();
    let hs = h.to_str().unwrap();
    let out = run(&["generate", "--quiet", "--dir", hs, "--max-seeds", "3"]);
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert!(
        e.contains("/.lock: a file with other links, so not a lock file: remove it"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
}
