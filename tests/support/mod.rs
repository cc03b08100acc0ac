//! Helpers shared by the end-to-end tests: running the `oware` binary built for the tests.

// Each test crate uses a different subset.
#![allow(dead_code)]

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
        "oware {args:?} failed:\n{}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Bytes of output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
