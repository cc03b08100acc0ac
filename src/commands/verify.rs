//! `oware verify`: checks a table directory.
//!
//! - plain: every table's whole-file checksum, recomputed in parallel, against the file's
//!   trailer and the manifest, and the tier sequence for gaps ([`oware_solver::dir::check_tiers`],
//!   printed by [`checks`]);
//! - `--deep`: every stored score re-proved, lowest tier first
//!   ([`oware_solver::verify_deep`], shown by [`deep`]);
//! - `--start`: the start position (or the smaller one with K seeds per house) evaluated
//!   from the tables, optionally generating and deep-verifying what it needs ([`start`]).

mod checks;
mod deep;
mod start;

use std::path::PathBuf;
use std::process::ExitCode;

use oware_db::Rules;

pub(crate) use super::common::resolve_rules;
use super::common::{parse_threads, parse_tiers, start_workers, tier_ranges, TierSelection};

/// Arguments of `oware verify`.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("reproves").args(["deep", "generate"]).multiple(true)))]
pub struct Args {
    /// Directory of the tables.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// Rules the tables must have been built with (default: those of the manifest; `abapa`
    /// for a new directory with `--start --generate`).
    #[arg(long)]
    pub rules: Option<Rules>,
    /// Re-prove every stored score (recurrence and finite-play justification), lowest tier
    /// first.
    #[arg(long)]
    pub deep: bool,
    /// With --deep: the tiers to re-prove, one range: `A..=B`, `A..`, `..=B` or `N` (the
    /// syntax of every `--tiers`); the tiers below A are loaded after their checksum check
    /// and trusted.
    #[arg(long, value_name = "A..=B", value_parser = parse_tiers, requires = "deep")]
    pub tiers: Option<TierSelection>,
    /// With --deep (or --start --generate): re-prove the tiers that the manifest records as
    /// verified too (by default a tier re-proved before, with the checksum it still has, is
    /// not).
    #[arg(long, requires = "reproves")]
    pub again: bool,
    /// Evaluate the start position (4 seeds in every house, or --seeds-per-house) from the
    /// tables and print its score and every first move's score.
    #[arg(long)]
    pub start: bool,
    /// With --start: seeds in every house of the start position (1..=4; the position has
    /// 12 times as many seeds).
    #[arg(long, value_name = "K", default_value_t = 4,
          value_parser = clap::value_parser!(u8).range(1..=4), requires = "start")]
    pub seeds_per_house: u8,
    /// With --start: generate the missing tiers, deep-verify tiers 0..=12K, then evaluate
    /// (not with --deep, which it includes).
    #[arg(long, requires = "start", conflicts_with = "deep")]
    pub generate: bool,
    /// With --generate: write no distance tables (scores only: less time and disk; probes
    /// then choose among moves of equal score in house order).
    #[arg(long, requires = "generate")]
    pub no_distance: bool,
    /// Print JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Worker threads, 1..=1024 (default: one per core).
    #[arg(long, value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Print no progress (results are still printed).
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `oware verify`.
///
/// # Errors
/// The directory or its manifest cannot be read, the rules differ from the tables', worker
/// threads cannot start, or (deep, start) the verification does not fit in memory.
/// Failed checks are not errors: they are reported and the exit status is 1.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    crate::commands::ranks::refuse_mpi_job_without_mpi()?;
    if args.start && args.generate {
        // It writes tables: an interrupt leaves complete tiers only, as `generate`'s does.
        crate::signals::clean_up_on_signals();
    }
    if args.deep && !args.start {
        // One process, or one rank of an MPI job.
        let quiet = args.quiet || args.json;
        return crate::commands::ranks::run_on_ranks(args.threads, quiet, |comm| {
            deep::run(comm, &args)
        });
    }
    start_workers(args.threads)?;
    if args.start {
        start::run(&args)
    } else {
        checks::run(&args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tier_lists_print_as_ranges() {
        assert_eq!(tier_ranges(&[0, 1, 2, 3, 7, 9, 10]), "0..=3, 7, 9..=10");
        assert_eq!(tier_ranges(&[]), "");
    }
}
