//! The command line's writes to its standard streams. Rust's `println!` and `eprintln!`
//! panic when the write fails (a full disk, a file system error); these macros do not:
//! a failed write to standard output is an error the command returns, and one to standard
//! error, where nothing is left to report it, is ignored.

/// Writes a line to standard output, as `println!`: an `io::Result<()>`, to be returned
/// with `?`.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*).map_err(|e| {
            std::io::Error::new(e.kind(), format!("writing to standard output: {e}"))
        })
    }};
}

/// Writes to standard error, as `eprintln!`, ignoring a failure: there is nowhere left to
/// report it, and a run must not stop for its progress lines.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub(crate) use {errln, outln};
