//! `oware bench`: single-threaded micro-benchmarks, run by `scripts/bench`.
//!
//! Each benchmark is a subcommand of [`Bench`] in its own module under `bench/`; add a
//! variant and a module to add one (probe, generate, ...).

use std::process::ExitCode;

mod index;
mod machine;

/// Arguments of `oware bench`.
#[derive(clap::Args)]
pub struct Args {
    /// The benchmark to run.
    #[command(subcommand)]
    pub bench: Bench,
}

/// The benchmarks.
#[derive(clap::Subcommand)]
pub enum Bench {
    /// Nanoseconds per rank, unrank, legal-move generation and un-move generation, averaged
    /// over every position of one tier.
    Index(index::Args),
}

/// Runs `oware bench`.
///
/// # Errors
/// Whatever the chosen benchmark reports (for example a failed self-check).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.bench {
        Bench::Index(a) => index::run(a),
    }
}
