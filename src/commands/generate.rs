//! `oware generate`: solve tiers 0..=N into a directory of tables.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use oware_db::{IndexKind, Rules, TierIndex};
use oware_solver::{generate, GenerateObserver, GenerateOptions, Phase, Progress, TierReport};

/// Arguments of `oware generate`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the tables (created if missing).
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// Rules: `abapa`, `awari`, or a preset with options, e.g. `abapa+grand-slam=illegal`.
    #[arg(long, default_value = "abapa")]
    pub rules: Rules,
    /// Highest tier (seeds on the board) to solve.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u8).range(0..=48))]
    pub max_seeds: u8,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// How progress is shown.
enum View {
    Quiet,
    /// One plain line per tier and phase on stderr.
    Log,
    Bars {
        _multi: MultiProgress,
        overall: ProgressBar,
        tier: ProgressBar,
    },
}

struct Observer {
    view: View,
    state: Mutex<(u8, u64, Instant)>,
}

impl Observer {
    fn new(quiet: bool, total: u64) -> Self {
        let view = if quiet {
            View::Quiet
        } else if std::io::stderr().is_terminal() {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            let overall = multi.add(ProgressBar::new(total));
            overall.set_style(
                ProgressStyle::with_template(
                    "all tiers  [{bar:40}] {percent:>3}% {elapsed_precise} eta {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            let tier = multi.add(ProgressBar::new(0));
            tier.set_style(
                ProgressStyle::with_template(
                    "{prefix:>9} {msg:<10} [{bar:40}] {human_pos}/{human_len} {per_sec} eta {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            overall.enable_steady_tick(Duration::from_millis(200));
            View::Bars {
                _multi: multi,
                overall,
                tier,
            }
        } else {
            View::Log
        };
        Observer {
            view,
            state: Mutex::new((0, 0, Instant::now())),
        }
    }
}

impl Progress for Observer {
    fn start(&self, phase: Phase, total: u64) {
        let tier = self.state.lock().map(|s| s.0).unwrap_or(0);
        match &self.view {
            View::Quiet => {}
            View::Log => eprintln!("tier {tier:2}: {} ({total} positions)", phase.name()),
            View::Bars { tier: bar, .. } => {
                bar.set_message(phase.name());
                bar.set_length(total);
                bar.set_position(0);
                bar.reset_eta();
            }
        }
    }

    fn advance(&self, units: u64) {
        if let View::Bars { tier, .. } = &self.view {
            tier.inc(units);
        }
    }
}

impl GenerateObserver for Observer {
    fn tier_start(&self, tier: u8, positions: u64, solve: bool) {
        if let Ok(mut s) = self.state.lock() {
            *s = (tier, positions, Instant::now());
        }
        match &self.view {
            View::Quiet => {}
            View::Log => {
                if !solve {
                    eprintln!("tier {tier:2}: present, checksum verified");
                }
            }
            View::Bars { tier: bar, .. } => {
                bar.set_prefix(format!("tier {tier}"));
                bar.set_message(if solve { "solve" } else { "check" });
            }
        }
    }

    fn tier_done(&self, report: &TierReport) {
        let (_, positions, _) = self
            .state
            .lock()
            .map(|s| *s)
            .unwrap_or((0, 0, Instant::now()));
        let line = match report {
            TierReport::Skipped { tier } => format!("tier {tier:2}: kept ({positions} positions)"),
            TierReport::Solved {
                tier,
                stats,
                seconds,
            } => format!(
                "tier {tier:2}: solved {positions} positions in {seconds:.2} s ({:.2} M/s); {} finite, {} endless; peak memory {}",
                positions as f64 / seconds.max(1e-9) / 1e6,
                stats.finite,
                stats.endless,
                peak_memory().map_or_else(|| "unknown".to_string(), |b| format!("{:.1} MB", b as f64 / 1e6))
            ),
        };
        match &self.view {
            View::Quiet => {}
            View::Log => eprintln!("{line}"),
            View::Bars { overall, tier, .. } => {
                overall.inc(positions);
                tier.println(line);
            }
        }
    }
}

/// The peak resident memory of this process so far (`VmHWM`), where the system reports it.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Runs `oware generate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let total: u64 = (0..=args.max_seeds)
        .map(|n| TierIndex::new(n, IndexKind::Reachable).size())
        .sum();
    let opts = GenerateOptions {
        dir: args.dir.clone(),
        rules: args.rules,
        max_seeds: args.max_seeds,
        memory_limit: None,
    };
    let start = Instant::now();
    #[cfg(feature = "mpi")]
    if launched_by_mpi() {
        return run_mpi(&args, &opts, total, start);
    }
    let observer = Observer::new(args.quiet, total);
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(t) = args.threads {
        builder = builder.num_threads(t.max(1));
    }
    let pool = builder.build().context("cannot start worker threads")?;
    let reports = pool
        .install(|| generate(&opts, &observer))
        .with_context(|| format!("generating into {}", args.dir.display()))?;
    finish(&args, &observer, &reports, start);
    Ok(ExitCode::SUCCESS)
}

/// Whether this process was started by `mpirun` (Open MPI, MPICH or a PMIx launcher).
#[cfg(feature = "mpi")]
fn launched_by_mpi() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// `generate` as one rank of an MPI job: every rank solves its index range of each tier,
/// rank 0 writes the tables and reports progress.
#[cfg(feature = "mpi")]
fn run_mpi(
    args: &Args,
    opts: &GenerateOptions,
    total: u64,
    start: Instant,
) -> anyhow::Result<ExitCode> {
    use oware_solver::distributed::{Comm, MpiComm};
    let comm = MpiComm::init().context("cannot initialise MPI (funneled threading)")?;
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(t) = args.threads {
        builder = builder.num_threads(t.max(1));
    }
    builder
        .build_global()
        .context("cannot start worker threads")?;
    let observer = Observer::new(args.quiet || comm.rank() != 0, total);
    // MPI is called from this (main) thread only: no `install` onto a pool thread.
    let reports = oware_solver::generate_with(&comm, opts, &observer).with_context(|| {
        format!(
            "rank {}: generating into {}",
            comm.rank(),
            args.dir.display()
        )
    })?;
    if comm.rank() == 0 {
        finish(args, &observer, &reports, start);
        if !args.quiet {
            eprintln!("({} MPI ranks)", comm.size());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Clears the bars and prints the summary line.
fn finish(args: &Args, observer: &Observer, reports: &[TierReport], start: Instant) {
    if let View::Bars { overall, tier, .. } = &observer.view {
        tier.finish_and_clear();
        overall.finish_and_clear();
    }
    if !args.quiet {
        let solved = reports
            .iter()
            .filter(|r| matches!(r, TierReport::Solved { .. }))
            .count();
        eprintln!(
            "{} tiers 0..={} under {} in {} ({} solved, {} kept) in {:.2} s",
            reports.len(),
            args.max_seeds,
            args.rules,
            args.dir.display(),
            solved,
            reports.len() - solved,
            start.elapsed().as_secs_f64()
        );
    }
}
