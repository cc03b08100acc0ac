//! `oware generate`: solve tiers 0..=N into a directory of tables.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::bail;
use oware_db::format::{tier_file_name, Compression};
use oware_db::index::{IndexKind, TierIndex};
use oware_db::manifest::{tables_rules, Manifest};
use oware_db::table::Table;
use oware_db::{Rules, MAX_SEEDS};
use oware_solver::{GenerateOptions, TierReport};

use super::common::{parse_threads, shell_path, shell_word};
use super::progress::{solve_phase, Bars};
use super::ranks::run_on_ranks;

/// Arguments of `oware generate`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the tables (created if missing).
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// Rules: `abapa`, `awari`, or a preset with options, e.g. `abapa+grand-slam=illegal`
    /// (default: those of the tables already in --dir, `abapa` for a new directory).
    #[arg(long)]
    pub rules: Option<Rules>,
    /// Highest tier (seeds on the board) to solve.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u8).range(0..=48))]
    pub max_seeds: u8,
    /// Worker threads, 1..=1024 (default: one per core).
    #[arg(long, value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Block compression of the tables written: `huffman` (order-1 canonical Huffman, fast
    /// probes) or `zstd` (default: that of the tables already in --dir, `huffman` for a new
    /// directory).
    #[arg(long)]
    pub compression: Option<Compression>,
    /// Write no distance tables (`tier-NN.owd`): scores only, in less time and disk.
    /// Probes, best lines and bots then choose among moves of equal score in house order,
    /// which keeps the score but may not realise it (docs/RULES.md, *The distance to
    /// conversion*).
    #[arg(long)]
    pub no_distance: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `oware generate`, on one process or as one rank of an MPI job
/// ([`run_on_ranks`]): every rank solves its share of each tier, rank 0 writes the tables and
/// shows the progress.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Before any thread starts: an interrupt removes the run's temporaries.
    crate::signals::clean_up_on_signals();
    let env = crate::commands::env::get();
    let total: u64 = (0..=args.max_seeds)
        .map(|n| TierIndex::new(n, IndexKind::Reachable).size())
        .sum();
    let manifest = Manifest::load(&args.dir)?;
    // A --rules that differs from the tables' is refused by `generate`, naming both.
    let rules = match args.rules {
        Some(r) => r,
        None => tables_rules(&args.dir, manifest.as_ref()).unwrap_or_default(),
    };
    let compression = resolve_compression(&args.dir, manifest.as_ref(), args.compression, "--dir")?;
    let opts = GenerateOptions {
        dir: args.dir.clone(),
        rules,
        max_seeds: args.max_seeds,
        memory_limit: env.memory_limit()?,
        compression,
        slice_bytes: env.slice_bytes()?,
        distance_window: env.distance_window()?,
        exchange_batch: env.exchange_batch()?,
        cancel: crate::signals::cancel().clone(),
        distances: !args.no_distance,
    };
    let start = Instant::now();
    run_on_ranks(args.threads, args.quiet, |comm| {
        let root = comm.rank() == 0;
        let observer = Bars::new(args.quiet || !root, total, "all tiers", solve_phase);
        let reports = oware_solver::generate(comm, &opts, &observer).map_err(|e| {
            observer.finish();
            crate::commands::common::generate_error(e, &args.dir)
        })?;
        if root {
            finish(&args, &opts, &observer, &reports, start);
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The compression of the tables to write: `asked`, or that of the tables already in `dir`
/// (`huffman` for a directory without tables). A directory is never mixed: an `asked` that
/// differs from its tables' is refused, naming both; `flag` is the option that named `dir`
/// (`--dir`, or `recompress`'s `--out`).
///
/// # Errors
/// `asked` differs from the compression of a table in `dir`.
pub(crate) fn resolve_compression(
    dir: &Path,
    manifest: Option<&Manifest>,
    asked: Option<Compression>,
    flag: &str,
) -> anyhow::Result<Compression> {
    let files: BTreeSet<String> = manifest
        .iter()
        .flat_map(|m| m.tiers.values().map(|e| e.file.clone()))
        .chain((0..=MAX_SEEDS).map(tier_file_name))
        .collect();
    let found = files.iter().find_map(|f| {
        let path = dir.join(f);
        if !path.is_file() {
            return None;
        }
        Table::open(&path).ok().map(|t| (path, t.compression()))
    });
    match (found, asked) {
        (Some((path, f)), Some(a)) if f != a => {
            let other = shell_word(&format!("{}-{a}", dir.display())).into_owned();
            bail!(
                "--compression {a}: {} holds {f} tables ({}); write into another directory, \
                 or rewrite them into one with `oware recompress --dir {} --out {other} \
                 --compression {a}` and write there (`{flag} {other}`)",
                dir.display(),
                path.display(),
                shell_path(dir)
            )
        }
        (Some((_, f)), None) => Ok(f),
        (_, a) => Ok(a.unwrap_or_default()),
    }
}

/// Clears the bars and prints the summary line.
fn finish(
    args: &Args,
    opts: &GenerateOptions,
    observer: &Bars,
    reports: &[TierReport],
    start: Instant,
) {
    observer.finish();
    if !args.quiet {
        let solved = reports
            .iter()
            .filter(|r| matches!(r, TierReport::Solved { .. }))
            .count();
        crate::output::errln!(
            "{} tiers 0..={} under {} in {} ({} solved, {} kept) in {:.2} s",
            reports.len(),
            args.max_seeds,
            opts.rules,
            args.dir.display(),
            solved,
            reports.len() - solved,
            start.elapsed().as_secs_f64()
        );
    }
}
