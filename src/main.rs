//! `oware`: generate, probe and verify exact endgame databases for Oware.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod commands;
mod output;
mod signals;

/// Exact endgame databases for Oware (Awari, Abapa).
#[derive(Parser)]
#[command(name = "oware", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Solve every tier from 0 up to --max-seeds by retrograde analysis and write the tables.
    Generate(commands::generate::Args),
    /// Print the exact score and every move's score of a position (or a batch on stdin).
    Probe(commands::probe::Args),
    /// Show the tiers present in a directory, their rules, sizes and statistics.
    Info(commands::info::Args),
    /// Check tables: checksums, a deep re-verification, and the start position.
    Verify(commands::verify::Args),
    /// Rewrite tables with another block compression (huffman, zstd) into another directory.
    Recompress(commands::recompress::Args),
    /// Write tables in another database format (the Romein-Bal `scores.N` files).
    Export(commands::romein::ExportArgs),
    /// Read another database format (the Romein-Bal `scores.N` files) into tables.
    Import(commands::romein::ImportArgs),
    /// Serve the oracle: an analysis board in the browser and a JSON API over the tables.
    Serve(commands::serve::Args),
}

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`oware info | head`), like other command-line tools,
    // instead of panicking on the failed write.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `--help`, `--version` (on stdout, status 0) or a usage error (on stderr, status 2),
        // as clap prints them; a help that cannot be written is an error.
        Err(e) => {
            if let Err(w) = e.print() {
                if !e.use_stderr() {
                    output::errln!("error: {}", output::stdout_error(w));
                    return ExitCode::FAILURE;
                }
            }
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let result = match cli.command {
        Command::Generate(a) => commands::generate::run(a),
        Command::Probe(a) => commands::probe::run(a),
        Command::Info(a) => commands::info::run(a),
        Command::Verify(a) => commands::verify::run(a),
        Command::Recompress(a) => commands::recompress::run(a),
        Command::Serve(a) => commands::serve::run(a),
        Command::Export(a) => commands::romein::run_export(a),
        Command::Import(a) => commands::romein::run_import(a),
    };
    match result {
        Ok(code) => code,
        Err(_) if signals::cancel().is_cancelled() => {
            // A write gave up for an interrupt: the signal's thread cleans up and ends the
            // process with the signal's status.
            loop {
                std::thread::park();
            }
        }
        Err(e) => {
            crate::output::errln!("error: {}", commands::common::error_message(&e));
            // Another writer holds the directory: refused, as a usage error is.
            if matches!(
                e.downcast_ref::<oware_solver::LockError>(),
                Some(oware_solver::LockError::Held { .. })
            ) || e.downcast_ref::<commands::common::Usage>().is_some()
            {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
