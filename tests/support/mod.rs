//! Helpers shared by the end-to-end tests: running the `oware` binary built for the tests.

#![allow(
    dead_code,
    reason = "every test crate compiles this module and uses a different subset of it"
)]

use std::path::Path;
use std::process::{Command, Output};

/// A command for the `oware` binary under test.
pub fn oware() -> Command {
    Command::new(env!("CARGO_BIN_EXE_oware"))
}

/// Runs `oware ARGS` and returns its output, whatever its exit status.
pub fn run(args: &[&str]) -> Output {
    oware().args(args).output().expect("run oware")
}

/// Runs `oware ARGS`, which must succeed, and returns its standard output.
pub fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "oware {args:?} failed:\n{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Bytes of output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The tables of `dir`, by name.
pub fn tables(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_ending(dir, "owt")
}

/// Every distance table (`*.owd`) in `dir`, by name, with its bytes.
#[allow(dead_code)]
pub fn distance_tables(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_ending(dir, "owd")
}

/// Every file of `dir` with the extension `ext`, by name, with its bytes.
fn files_ending(dir: &Path, ext: &str) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// The names in `dir` that are neither a table, the manifest nor the lock file.
pub fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            !(n.ends_with(".owt") || n.ends_with(".owd") || n == "manifest.json" || n == ".lock")
        })
        .collect()
}

/// Takes the lock of `dir` as a writer does: an exclusive `flock` on `dir/.lock`, which
/// holds the holder's process id. The lock lasts as long as the returned file.
#[cfg(unix)]
pub fn hold_lock(dir: &Path) -> std::fs::File {
    use std::io::Write;
    use std::os::unix::io::AsRawFd;
    std::fs::create_dir_all(dir).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join(".lock"))
        .unwrap();
    // SAFETY: `flock` on a file descriptor `f` owns and keeps open.
    let locked = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(locked, 0, "flock");
    f.set_len(0).unwrap();
    writeln!(f, "{}", std::process::id()).unwrap();
    f
}

/// Runs `cmd` with `input` on its stdin and returns its output; the test fails, and the
/// process is killed, if it runs past `limit`.
pub fn run_bounded(cmd: &mut Command, input: &[u8], limit: std::time::Duration) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start oware");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    std::thread::spawn(move || {
        // The command may exit without reading it.
        let _ = stdin.write_all(&input);
    });
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("wait for oware"),
        Err(_) => {
            #[cfg(unix)]
            // SAFETY: signalling the child this function started, which has not been waited.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
            panic!("{cmd:?} ran past {limit:?}");
        }
    }
}
