//! The command line's writes to its standard streams. Rust's `println!` and `eprintln!`
//! panic when the write fails (a full disk, a file system error); these macros do not:
//! a failed write to standard output is an error the command returns, and one to standard
//! error, where nothing is left to report it, is ignored.

use std::io::{self, Write};

/// Writes a line to standard output, as `println!`: an `io::Result<()>`, to be returned
/// with `?`.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*).map_err($crate::output::stdout_error)
    }};
}

/// A failed write to standard output, saying so.
pub(crate) fn stdout_error(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("writing to standard output: {e}"))
}

/// Standard output, locked, whose write errors say they are standard output's
/// ([`stdout_error`]).
pub(crate) struct Stdout(io::StdoutLock<'static>);

/// [`Stdout`], locked for the caller.
pub(crate) fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(stdout_error)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(stdout_error)
    }
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
