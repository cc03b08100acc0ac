//! Progress display shared by the long-running commands (`generate`, `verify`): indicatif
//! bars on a terminal, one plain line per tier and phase on stderr otherwise, nothing with
//! `--quiet`.

use std::fmt;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use oware_db::check::TierCheck;
use oware_solver::dir::CheckObserver;
use oware_solver::{GenerateObserver, Phase, Progress, TierDistances, TierReport};

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

/// Names the phases of the solver's [`Progress`] events in the display.
pub type PhaseNames = fn(Phase) -> &'static str;

/// Two bars (all tiers, and the current tier's phase) or plain log lines.
pub struct Bars {
    view: View,
    names: PhaseNames,
    /// The current tier, its positions, and when it began.
    state: Mutex<(u8, u64, Instant)>,
}

impl Bars {
    /// A display whose overall bar counts `total` units (positions, or bytes); `label` names
    /// the overall bar and `names` the phases.
    pub fn new(quiet: bool, total: u64, label: &str, names: PhaseNames) -> Self {
        let view = if quiet {
            View::Quiet
        } else if std::io::stderr().is_terminal() {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            let overall = multi.add(ProgressBar::new(total));
            overall.set_style(
                ProgressStyle::with_template(&format!(
                    "{label:<10} [{{bar:40}}] {{percent:>3}}% {{elapsed_precise}} eta {{eta}}"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            let tier = multi.add(ProgressBar::new(0));
            tier.set_style(
                ProgressStyle::with_template(
                    "{prefix:>9} {msg:<10} [{bar:40}] {human_pos}/{human_len} {rate} eta {eta}",
                )
                .map(|style| {
                    style.with_key("rate", |state: &ProgressState, w: &mut dyn fmt::Write| {
                        let _ = write!(w, "{}", rate(state.per_sec()));
                    })
                })
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
        Bars {
            view,
            names,
            state: Mutex::new((0, 0, Instant::now())),
        }
    }

    /// Tier `tier` with `positions` positions begins; `msg` says what is done to it. In log
    /// mode, `log` (if any) is printed as the tier's first line.
    pub fn tier_start(&self, tier: u8, positions: u64, msg: &str, log: Option<&str>) {
        if let Ok(mut s) = self.state.lock() {
            *s = (tier, positions, Instant::now());
        }
        match &self.view {
            View::Quiet => {}
            View::Log => {
                if let Some(line) = log {
                    crate::output::errln!("tier {tier:2}: {line}");
                }
            }
            View::Bars { tier: bar, .. } => {
                bar.set_prefix(format!("tier {tier}"));
                bar.set_message(msg.to_string());
                bar.set_length(0);
                bar.set_position(0);
            }
        }
    }

    /// The current tier and its positions.
    pub fn current(&self) -> (u8, u64) {
        self.state.lock().map(|s| (s.0, s.1)).unwrap_or((0, 0))
    }

    /// A phase named `name` of the current tier begins, with `total` units of work.
    pub fn phase(&self, name: &str, total: u64) {
        let (tier, _) = self.current();
        match &self.view {
            View::Quiet => {}
            View::Log => crate::output::errln!("tier {tier:2}: {name} ({total} positions)"),
            View::Bars { tier: bar, .. } => {
                bar.set_message(name.to_string());
                bar.set_length(total);
                bar.set_position(0);
                bar.reset_eta();
            }
        }
    }

    /// A task outside the tier-and-phase scheme begins: the lower bar shows `prefix` and
    /// `name` with `total` units; in log mode, `log` is printed.
    pub fn task(&self, prefix: &str, name: &str, total: u64, log: &str) {
        match &self.view {
            View::Quiet => {}
            View::Log => crate::output::errln!("{log}"),
            View::Bars { tier: bar, .. } => {
                bar.set_prefix(prefix.to_string());
                bar.set_message(name.to_string());
                bar.set_length(total);
                bar.set_position(0);
                bar.reset_eta();
            }
        }
    }

    /// `units` more of the current phase are done.
    pub fn inc(&self, units: u64) {
        if let View::Bars { tier, .. } = &self.view {
            tier.inc(units);
        }
    }

    /// `units` more of the whole run are done.
    pub fn overall_inc(&self, units: u64) {
        if let View::Bars { overall, .. } = &self.view {
            overall.inc(units);
        }
    }

    /// Prints a progress line on stderr (above the bars), unless quiet.
    pub fn log(&self, line: &str) {
        match &self.view {
            View::Quiet => {}
            View::Log => crate::output::errln!("{line}"),
            View::Bars { tier, .. } => tier.println(line),
        }
    }

    /// Runs `f` (which prints to stdout) with the bars hidden meanwhile.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.view {
            View::Bars { overall, .. } => overall.suspend(f),
            _ => f(),
        }
    }

    /// Removes the bars.
    pub fn finish(&self) {
        if let View::Bars { overall, tier, .. } = &self.view {
            tier.finish_and_clear();
            overall.finish_and_clear();
        }
    }
}

impl Progress for Bars {
    fn start(&self, phase: Phase, total: u64) {
        self.phase((self.names)(phase), total);
    }

    fn advance(&self, units: u64) {
        self.inc(units);
    }
}

impl CheckObserver for Bars {
    fn checks_start(&self, tables: usize, bytes: u64) {
        self.task(
            "tables",
            "checksums",
            bytes,
            &format!("checksums of {tables} tables ({bytes} bytes)"),
        );
    }

    fn table_checked(&self, _check: &TierCheck, bytes: u64) {
        self.inc(bytes);
    }
}

/// The phase names of generation: `init`, `propagate`, `write`.
pub fn solve_phase(phase: Phase) -> &'static str {
    phase.name()
}

/// The peak resident memory of this process so far (`VmHWM`), where the system reports it.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// What rank 0 of a tier solved over several ranks exchanged, for its log line (nothing for
/// one process): the rounds and exchanges (every rank's), the updates and look-ups it sent
/// and the seconds it spent in collective calls.
fn exchanged(stats: &oware_solver::SolvedStats) -> String {
    let oware_solver::SolvedStats::Distributed(d) = stats else {
        return String::new();
    };
    let l = &d.local;
    format!(
        "; rank 0 of {}: {} rounds, {} exchanges, {} updates and {} look-ups sent, {:.2} s in collectives",
        d.ranks,
        l.rounds,
        l.exchanges + l.lookup_exchanges,
        l.updates_remote,
        l.lookups_remote,
        l.comm_seconds + l.lookup_comm_seconds
    )
}

impl GenerateObserver for Bars {
    fn tier_start(&self, tier: u8, positions: u64, solve: bool) {
        Bars::tier_start(
            self,
            tier,
            positions,
            if solve { "solve" } else { "check" },
            (!solve).then_some("present, checksum verified"),
        );
    }

    fn tier_replaced(&self, tier: u8, why: &str) {
        self.log(&format!("tier {tier:2}: {why}; solving it again"));
    }

    fn tier_plan(&self, tier: u8, plan: &oware_solver::memory::TierPlan, slices: u64) {
        if let oware_solver::memory::ExitPlan::Sliced { slice_bytes } = plan.exits {
            self.log(&format!(
                "tier {tier:2}: exits in {slices} slices of ≤ {} (lower tiers {} of memory beside cells and far exits of {}; {} with the frontier)",
                oware_solver::memory::human_bytes(slice_bytes.min(plan.lower)),
                oware_solver::memory::human_bytes(plan.lower),
                oware_solver::memory::human_bytes(plan.own_beside_slice),
                oware_solver::memory::human_bytes(plan.own),
            ));
        }
    }

    fn tier_done(&self, report: &TierReport) {
        let (_, positions) = self.current();
        let line = match report {
            TierReport::Skipped { tier } => format!("tier {tier:2}: kept ({positions} positions)"),
            TierReport::Solved {
                tier,
                stats,
                seconds,
                distances,
            } => format!(
                "tier {tier:2}: solved {positions} positions in {seconds:.2} s ({:.2} M/s); {} finite, {} endless; peak memory {}; init {:.2} s{}, propagation {:.2} s{}{}{}",
                positions as f64 / seconds.max(1e-9) / 1e6,
                stats.finite(),
                stats.endless(),
                peak_memory().map_or_else(|| "unknown".to_string(), |b| format!("{:.1} MB", b as f64 / 1e6)),
                stats.init_seconds(),
                if stats.exit_sweeps() > 1 {
                    format!(
                        " in {} sweeps (slices of ≤ {}, read in {:.2} s)",
                        stats.exit_sweeps(),
                        oware_solver::memory::human_bytes(stats.slice_bytes()),
                        stats.load_seconds()
                    )
                } else {
                    String::new()
                },
                stats.propagate_seconds(),
                if stats.far_exits() > 0 {
                    format!("; {} exits listed apart", stats.far_exits())
                } else {
                    String::new()
                },
                exchanged(stats),
                match distances {
                    TierDistances::Written {
                        max,
                        seconds,
                        rounds,
                        runs,
                        file_size,
                    } => format!(
                        ", distances {}{} (longest {max} plies, {:.2} bits per position)",
                        match rounds {
                            Some(r) => format!("with the scores in {r} rounds"),
                            None => format!("{seconds:.2} s"),
                        },
                        match runs {
                            Some(r) => format!(", out of core in {r} windows"),
                            None => String::new(),
                        },
                        *file_size as f64 * 8.0 / positions.max(1) as f64
                    ),
                    TierDistances::Skipped(why) => format!("; no distance table: {why}"),
                    TierDistances::Off => String::new(),
                },
            ),
        };
        self.overall_inc(positions);
        self.log(&line);
    }
}

/// A rate of units per second for the bars, with three significant digits: `812/s`,
/// `45.3 K/s`, `6.12 M/s`.
fn rate(per_sec: f64) -> String {
    let (v, unit) = if per_sec >= 1e9 {
        (per_sec / 1e9, " G")
    } else if per_sec >= 1e6 {
        (per_sec / 1e6, " M")
    } else if per_sec >= 1e3 {
        (per_sec / 1e3, " K")
    } else {
        (per_sec, "")
    };
    let decimals = if unit.is_empty() || v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.decimals$}{unit}/s")
}

#[cfg(feature = "mpi")]
/// Every rank's peak resident memory ([`peak_memory`]) on rank 0, as one line: `(R MPI
/// ranks; peak memory per rank: a, b, …)`; `None` on the other ranks. A collective.
pub fn rank_peaks(comm: &dyn oware_solver::distributed::Comm) -> Option<String> {
    let mine = peak_memory().unwrap_or(0).to_le_bytes();
    let parts = comm.gather_bytes(&mine)?;
    let peaks: Vec<String> = parts
        .iter()
        .map(|p| {
            let b = u64::from_le_bytes(p.as_slice().try_into().unwrap_or_default());
            format!("{:.1} MB", b as f64 / 1e6)
        })
        .collect();
    Some(format!(
        "({} MPI ranks; peak memory per rank: {})",
        comm.size(),
        peaks.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::rate;

    #[test]
    fn rates_have_three_significant_digits() {
        assert_eq!(rate(0.0), "0/s");
        assert_eq!(rate(812.4), "812/s");
        assert_eq!(rate(45_321.0), "45.3 K/s");
        assert_eq!(rate(6_123_456.0), "6.12 M/s");
        assert_eq!(rate(123_456_789.0), "123 M/s");
        assert_eq!(rate(2.5e9), "2.50 G/s");
    }
}
