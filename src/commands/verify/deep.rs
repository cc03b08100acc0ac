//! `oware verify --deep`: every stored score re-proved, lowest tier first, each tier's table
//! checksum-verified before its scores are used ([`oware_solver::verify_deep`]); this
//! module shows its progress and prints its report.

use std::ops::RangeInclusive;
use std::path::Path;
use std::process::ExitCode;

use oware_db::check::TierCheck;
use oware_db::index::{tier_size, IndexKind};
use oware_db::manifest::Manifest;
use oware_db::Rules;
use oware_solver::dir::CheckObserver;
use oware_solver::distributed::Comm;
use oware_solver::tier::{Mismatch, MismatchKind, VerifyPhases, VerifyReport};
use oware_solver::{
    DeepReport, DistanceVerdict, Phase, Progress, TierVerdict, VerifyObserver, VerifyOptions,
};
use serde_json::{json, Value};

use super::checks::{expected_tiers, line};
use super::{resolve_rules, Args};
use crate::commands::progress::Bars;

/// The phase names of deep verification: `check` (the local check) and `justify`.
pub(super) fn verify_phase(phase: Phase) -> &'static str {
    match phase {
        Phase::Init => "check",
        Phase::Propagate => "justify",
        Phase::Distances => "distances",
        Phase::Write => "write",
    }
}

/// What a deep verification found, for printing.
pub(super) struct DeepResult {
    /// Every tier of the range passed (and every tier below it passed its plain checks).
    pub ok: bool,
    /// Positions re-proved.
    pub positions: u64,
    /// Seconds in all (reading included).
    pub seconds: f64,
    /// One JSON row per tier.
    pub rows: Vec<Value>,
    /// One JSON row per distance table proved, failed or skipped.
    pub distances: Vec<Value>,
    /// The tiers re-proved and recorded as verified in the manifest.
    pub recorded: Vec<u8>,
    /// Why tiers re-proved were not recorded, if some were not.
    pub not_recorded: Option<String>,
}

/// A mismatch in words.
fn mismatch_line(n: u8, m: &Mismatch) -> String {
    let what = match m.kind {
        MismatchKind::Bound => format!("outside -{n}..={n}"),
        MismatchKind::Recurrence { expected } => {
            format!("the recurrence over its moves gives {expected}")
        }
        MismatchKind::Unjustified => "nonzero but not forced by any finite line of play".into(),
    };
    format!(
        "    position {} (index {}): stored {}, {what}",
        m.position, m.index, m.stored
    )
}

fn mismatch_json(m: &Mismatch) -> Value {
    let (kind, expected) = match m.kind {
        MismatchKind::Bound => ("bound", None),
        MismatchKind::Recurrence { expected } => ("recurrence", Some(expected)),
        MismatchKind::Unjustified => ("unjustified", None),
    };
    json!({
        "position": m.position.to_string(), "index": m.index, "stored": m.stored,
        "kind": kind, "expected": expected,
    })
}

/// Where the seconds of a tier that took one or more went (over several ranks, rank 0's), and
/// over several ranks what rank 0 exchanged: the rounds and exchanges (every rank's), the
/// updates and look-ups it sent and the seconds it spent in collective calls.
fn phases(seconds: f64, p: &VerifyPhases) -> String {
    if p.sweeps == 0 || seconds < 1.0 {
        return String::new();
    }
    let exchanged = p.exchanged.map_or(String::new(), |x| {
        format!(
            "; rank 0 of {}: {} rounds, {} exchanges, {} updates and {} look-ups sent, {:.2} s in collectives",
            x.ranks, x.rounds, x.exchanges, x.updates, x.lookups, x.comm_seconds
        )
    });
    format!(
        "; local check {:.2} s, level starts {:.2} s, {} sweeps {:.2} s{exchanged}",
        p.check_seconds, p.start_seconds, p.sweeps, p.sweep_seconds
    )
}

fn report_line(r: &VerifyReport) -> String {
    if r.is_ok() {
        format!(
            "tier {:2}  OK      deep: {} positions ({} nonzero, each justified) in {:.2} s ({:.2} M/s){}",
            r.tier,
            r.positions,
            r.nonzero,
            r.seconds,
            r.positions as f64 / r.seconds.max(1e-9) / 1e6,
            phases(r.seconds, &r.phases)
        )
    } else {
        format!(
            "tier {:2}  FAILED  deep: {} of {} positions fail; the first:",
            r.tier, r.mismatches, r.positions
        )
    }
}

/// The JSON row of one tier.
fn verdict_json(v: &TierVerdict) -> Value {
    match v {
        TierVerdict::CheckFailed(c) => json!({
            "tier": c.tier, "status": "failed",
            "reason": c.failure(),
        }),
        TierVerdict::Unreadable { tier, error } => {
            json!({ "tier": tier, "status": "failed", "reason": error.to_string() })
        }
        TierVerdict::Trusted { tier, checksum, .. } => {
            json!({ "tier": tier, "status": "trusted", "checksum": checksum })
        }
        TierVerdict::Recorded { tier, checksum, .. } => {
            json!({ "tier": tier, "status": "recorded", "checksum": checksum })
        }
        TierVerdict::Verified(r) => json!({
            "tier": r.tier, "status": if r.is_ok() { "ok" } else { "failed" },
            "positions": r.positions, "nonzero": r.nonzero, "mismatches": r.mismatches,
            "seconds": r.seconds,
            "first": r.first.iter().map(mismatch_json).collect::<Vec<_>>(),
        }),
    }
}

/// The line of a distance table's verdict.
fn distance_line(v: &DistanceVerdict) -> String {
    match v {
        DistanceVerdict::Proved {
            tier,
            max,
            windows,
            seconds,
        } => format!(
            "tier {tier:2}  OK      distances: each follows from its moves (longest {max} plies{}) \
             in {seconds:.2} s",
            if *windows > 1 {
                format!("; read in {windows} windows")
            } else {
                String::new()
            }
        ),
        DistanceVerdict::Failed { tier, error } => {
            format!("tier {tier:2}  FAILED  distances: {error}")
        }
        DistanceVerdict::Skipped { tier, why } => {
            format!("tier {tier:2}  note    distances not proved: {why}")
        }
    }
}

/// The JSON of a distance table's verdict.
fn distance_json(v: &DistanceVerdict) -> Value {
    match v {
        DistanceVerdict::Proved {
            tier,
            max,
            windows,
            seconds,
        } => json!({
            "tier": tier, "status": "ok", "max": max, "windows": windows, "seconds": seconds,
        }),
        DistanceVerdict::Failed { tier, error } => {
            json!({ "tier": tier, "status": "failed", "reason": error })
        }
        DistanceVerdict::Skipped { tier, why } => {
            json!({ "tier": tier, "status": "skipped", "reason": why })
        }
    }
}

/// The display of a deep verification: the bars, and the lines printed on stdout as the
/// tiers finish (unless `print` is false).
struct View<'a> {
    bars: &'a Bars,
    print: bool,
    range: RangeInclusive<u8>,
    /// The line of the current tier's distance table, printed after the tier's.
    pending: std::sync::Mutex<Option<String>>,
}

impl View<'_> {
    /// Prints a line of the report. The first write to standard output that fails (a full
    /// disk, `> /dev/full`) ends the run at once, with one line on stderr and exit status
    /// 1: what it would print next could not be read either. A manifest write in flight
    /// finishes first, and no temporary file stays ([`crate::signals::cancel`]).
    fn out(&self, s: String) {
        if self.print {
            if let Err(e) = self.bars.suspend(|| crate::output::outln!("{s}")) {
                crate::signals::cancel().cancel();
                self.bars.finish();
                crate::output::errln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
}

impl Progress for View<'_> {
    fn start(&self, phase: Phase, total: u64) {
        self.bars.start(phase, total);
    }

    fn advance(&self, units: u64) {
        self.bars.advance(units);
    }
}

impl CheckObserver for View<'_> {
    fn checks_start(&self, tables: usize, bytes: u64) {
        self.bars.checks_start(tables, bytes);
    }

    fn table_checked(&self, check: &TierCheck, bytes: u64) {
        self.bars.table_checked(check, bytes);
    }
}

impl VerifyObserver for View<'_> {
    fn checks_passed(&self) {
        let a = *self.range.start();
        if a > 0 {
            self.out(format!(
                "tiers 0..={} are trusted: their checksums are verified, their scores are not re-proved",
                a - 1
            ));
        }
    }

    fn tier_start(&self, tier: u8, positions: u64) {
        self.bars.tier_start(tier, positions, "read", None);
        self.bars.phase("read", positions);
    }

    fn tier_read(&self, _tier: u8, positions: u64) {
        self.bars.inc(positions);
    }

    fn distances_done(&self, verdict: &DistanceVerdict) {
        // Printed after the tier's own line.
        *self
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(distance_line(verdict));
    }

    fn tier_done(&self, verdict: &TierVerdict) {
        match verdict {
            TierVerdict::Unreadable { tier, error } => {
                self.out(format!("tier {tier:2}  FAILED  {error}"));
            }
            TierVerdict::Verified(r) => {
                self.out(report_line(r));
                for m in &r.first {
                    self.out(mismatch_line(r.tier, m));
                }
                let b = *self.range.end();
                if !r.is_ok() && r.tier < b {
                    self.out(format!(
                        "tiers {}..={b} not verified: they depend on tier {}",
                        r.tier + 1,
                        r.tier
                    ));
                }
            }
            TierVerdict::Recorded {
                tier, positions, ..
            } => {
                self.out(format!(
                    "tier {tier:2}  OK      verified before: {positions} positions, recorded in \
                     the manifest with the checksum the table still has (--again re-proves it)"
                ));
            }
            TierVerdict::CheckFailed(_) | TierVerdict::Trusted { .. } => {}
        }
        let pending = self
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(line) = pending {
            self.out(line);
        }
        if verdict.is_ok() {
            self.bars
                .overall_inc(tier_size(verdict.tier(), IndexKind::Reachable));
        }
    }
}

/// Deep-verifies tiers `range` of `dir` under `rules` ([`oware_solver::verify_deep`] on the
/// ranks of `comm`), showing its progress on `bars` and
/// printing one line per tier on stdout (if `print`).
///
/// # Errors
/// The manifest cannot be read, the verification does not fit in the memory available, or
/// standard output cannot be written.
pub(super) fn verify_deep(
    comm: &dyn Comm,
    dir: &Path,
    rules: &Rules,
    range: RangeInclusive<u8>,
    again: bool,
    bars: &Bars,
    print: bool,
) -> anyhow::Result<DeepResult> {
    let (a, b) = (*range.start(), *range.end());
    let env = crate::commands::env::get();
    let opts = VerifyOptions {
        dir: dir.to_path_buf(),
        rules: *rules,
        tiers: range.clone(),
        memory_limit: env.memory_limit()?,
        slice_bytes: env.slice_bytes()?,
        distance_window: env.distance_window()?,
        again,
        exchange_batch: env.exchange_batch()?,
        cancel: crate::signals::cancel().clone(),
    };
    let view = View {
        bars,
        print,
        range,
        pending: std::sync::Mutex::new(None),
    };
    let report: DeepReport = oware_solver::verify_deep(comm, &opts, &view)?;
    if !report.started() {
        for v in &report.verdicts {
            if let TierVerdict::CheckFailed(c) = v {
                view.out(line(c));
            }
        }
        view.out(format!(
            "deep verification of tiers {a}..={b} not started: it needs every table of tiers \
             0..={b} intact"
        ));
    }
    if !report.recorded.is_empty() {
        view.out(format!(
            "recorded as verified in the manifest: tiers {}",
            super::tier_ranges(&report.recorded)
        ));
    }
    if let Some(why) = &report.not_recorded {
        view.out(format!("not recorded as verified in the manifest: {why}"));
    }
    Ok(DeepResult {
        ok: report.is_ok(),
        recorded: report.recorded.clone(),
        not_recorded: report.not_recorded.clone(),
        positions: report.positions,
        seconds: report.seconds,
        rows: report.verdicts.iter().map(verdict_json).collect(),
        distances: report.distances.iter().map(distance_json).collect(),
    })
}

/// Runs `oware verify --deep` on the ranks of `comm`: every rank re-proves its share of each
/// tier; rank 0 shows the progress and prints the report.
///
/// # Errors
/// The directory or manifest cannot be read, the rules differ from the tables', the
/// verification does not fit in memory, or standard output cannot be written.
pub(super) fn run(comm: &dyn Comm, args: &Args) -> anyhow::Result<ExitCode> {
    let root = comm.rank() == 0;
    let dir = &args.dir;
    let manifest = Manifest::load(dir)?;
    let rules = resolve_rules(dir, manifest.as_ref(), args.rules)?;
    let expected = expected_tiers(dir, manifest.as_ref())?;
    let top = match expected.last() {
        Some(&max) => max,
        None => anyhow::bail!("no tables in {}", dir.display()),
    };
    let range = match &args.tiers {
        Some(t) => one_range(&t.resolve(top), top)?,
        None => 0..=top,
    };
    // Tiers above the highest there are named before any memory is planned for them.
    if *range.end() > top {
        let (first, b) = (top + 1, *range.end());
        anyhow::bail!(
            "missing tier{} {}: {} holds tiers up to {top}, and deep verification of tiers \
             {}..={b} needs every tier 0..={b}",
            if first == b { "" } else { "s" },
            super::tier_ranges(&(first..=b).collect::<Vec<_>>()),
            dir.display(),
            range.start()
        );
    }
    let total: u64 = (0..=*range.end())
        .map(|n| tier_size(n, IndexKind::Reachable))
        .sum();
    let bars = Bars::new(
        args.quiet || args.json || !root,
        total,
        "all tiers",
        verify_phase,
    );
    let r = if root {
        run_report(comm, args, dir, &rules, range, &bars)?
    } else {
        verify_deep(comm, dir, &rules, range, args.again, &bars, false)?
    };
    bars.finish();
    Ok(if r.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The tiers of `--tiers` as the one range deep verification re-proves (the tiers below it
/// are trusted).
///
/// # Errors
/// The tiers are none, or not one range.
fn one_range(tiers: &[u8], top: u8) -> anyhow::Result<RangeInclusive<u8>> {
    match (tiers.first(), tiers.last()) {
        (Some(&a), Some(&b)) if usize::from(b - a) + 1 == tiers.len() => Ok(a..=b),
        // A usage error, as clap's: the flag's value does not fit the command.
        (Some(_), Some(_)) => Err(crate::commands::common::Usage(format!(
            "--tiers {}: deep verification re-proves one range of tiers, the tiers below it \
             trusted; give one range, e.g. {}..={}",
            super::tier_ranges(tiers),
            tiers[0],
            tiers[tiers.len() - 1]
        ))
        .into()),
        _ => anyhow::bail!("--tiers selects no tier of 0..={top}, the tiers there are"),
    }
}

/// Verifies and prints the report (rank 0).
fn run_report(
    comm: &dyn Comm,
    args: &Args,
    dir: &Path,
    rules: &Rules,
    range: RangeInclusive<u8>,
    bars: &Bars,
) -> anyhow::Result<DeepResult> {
    if !args.json {
        crate::output::outln!(
            "directory {}, rules {rules}, deep verification of tiers {}..={}",
            dir.display(),
            range.start(),
            range.end()
        )?;
    }
    let r = verify_deep(
        comm,
        dir,
        rules,
        range.clone(),
        args.again,
        bars,
        !args.json,
    )?;
    bars.finish();
    if args.json {
        let v = json!({
            "dir": dir.display().to_string(),
            "rules": rules.to_string(),
            "tiers": format!("{}..={}", range.start(), range.end()),
            "ok": r.ok,
            "positions": r.positions,
            "seconds": r.seconds,
            "rows": r.rows,
            "distances": r.distances,
            "recorded": r.recorded,
            "not_recorded": r.not_recorded,
        });
        crate::output::outln!("{}", serde_json::to_string_pretty(&v)?)?;
    } else if r.ok {
        crate::output::outln!(
            "deep verification of tiers {}..={} OK: {} positions re-proved in {:.2} s ({:.2} M/s)",
            range.start(),
            range.end(),
            r.positions,
            r.seconds,
            r.positions as f64 / r.seconds.max(1e-9) / 1e6
        )?;
    } else {
        crate::output::outln!(
            "deep verification of tiers {}..={} FAILED",
            range.start(),
            range.end()
        )?;
    }
    Ok(r)
}
