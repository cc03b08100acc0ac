//! `oware verify --deep`: every stored score re-proved with
//! [`oware_solver::verify_tier`], lowest tier first, each tier's table checksum-verified
//! before its scores are used.

use std::ops::RangeInclusive;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use oware_db::{tier_size, IndexKind, Manifest, Rules};
use oware_solver::{
    available_memory, verify_deep_memory, verify_tier, LowerTiers, Mismatch, MismatchKind, Phase,
    VerifyReport,
};
use serde_json::{json, Value};

use super::checks::{check_tiers, expected_tiers, line};
use super::{human_bytes, resolve_rules, Args};
use crate::commands::progress::Bars;

/// The phase names of deep verification: `check` (the local check) and `justify`.
pub(super) fn verify_phase(phase: Phase) -> &'static str {
    match phase {
        Phase::Init => "check",
        Phase::Propagate => "justify",
        Phase::Write => "write",
    }
}

/// What a deep verification found.
pub(super) struct DeepResult {
    /// Every tier of the range passed (and every tier below it passed its plain checks).
    pub ok: bool,
    /// Positions re-proved.
    pub positions: u64,
    /// Seconds in all (reading included).
    pub seconds: f64,
    /// One JSON row per tier.
    pub rows: Vec<Value>,
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

fn report_line(r: &VerifyReport) -> String {
    if r.is_ok() {
        format!(
            "tier {:2}  OK      deep: {} positions ({} nonzero, each justified) in {:.2} s ({:.2} M/s)",
            r.tier,
            r.positions,
            r.nonzero,
            r.seconds,
            r.positions as f64 / r.seconds.max(1e-9) / 1e6
        )
    } else {
        format!(
            "tier {:2}  FAILED  deep: {} of {} positions fail; the first:",
            r.tier, r.mismatches, r.positions
        )
    }
}

/// Deep-verifies tiers `range` of `dir` under `rules`: checks tiers `0..=range.end()`
/// (checksums, against the manifest), then loads them lowest first and re-proves those in
/// `range`; tiers below it are trusted. Prints one line per tier on stdout (unless `quiet_out`)
/// and stops at the first tier that fails.
///
/// # Errors
/// The verification does not fit in the memory available.
pub(super) fn verify_deep(
    dir: &Path,
    manifest: Option<&Manifest>,
    rules: &Rules,
    range: RangeInclusive<u8>,
    bars: &Bars,
    print: bool,
) -> anyhow::Result<DeepResult> {
    let t0 = Instant::now();
    let (a, b) = (*range.start(), *range.end());
    let needed = verify_deep_memory(b);
    let available = available_memory();
    if needed > available {
        anyhow::bail!(
            "deep verification of tiers up to {b} needs {} of memory ({needed} bytes: the \
             scores of tiers 0..{b} and tier {b}'s scores and verification state) but only {} \
             ({available} bytes) are available",
            human_bytes(needed),
            human_bytes(available)
        );
    }
    let out = |s: String| {
        if print {
            bars.suspend(|| println!("{s}"));
        }
    };
    let tiers: Vec<u8> = (0..=b).collect();
    let checked = check_tiers(dir, manifest, rules, &tiers, bars);
    let mut rows = Vec::new();
    if checked.iter().any(|c| c.result.is_err()) {
        for c in checked.iter().filter(|c| c.result.is_err()) {
            out(line(c));
            rows.push(json!({
                "tier": c.tier, "status": "failed",
                "reason": c.result.as_ref().err(),
            }));
        }
        out(format!(
            "deep verification of tiers {a}..={b} not started: it needs every table of tiers \
             0..={b} intact"
        ));
        return Ok(DeepResult {
            ok: false,
            positions: 0,
            seconds: t0.elapsed().as_secs_f64(),
            rows,
        });
    }
    if a > 0 {
        out(format!(
            "tiers 0..={} are trusted: their checksums are verified, their scores are not re-proved",
            a - 1
        ));
    }
    let mut lower = LowerTiers::new();
    let mut positions = 0u64;
    for c in &checked {
        let n = c.tier;
        let Ok(good) = &c.result else { continue };
        let size = good.table.len();
        bars.tier_start(n, size, "read", None);
        bars.phase("read", size);
        let scores = match oware_solver::read_table(&good.table) {
            Ok(s) => s,
            Err(e) => {
                out(format!("tier {n:2}  FAILED  {e}"));
                rows.push(json!({ "tier": n, "status": "failed", "reason": e.to_string() }));
                return Ok(DeepResult {
                    ok: false,
                    positions,
                    seconds: t0.elapsed().as_secs_f64(),
                    rows,
                });
            }
        };
        bars.inc(size);
        if n >= a {
            let r = verify_tier(rules, n, &scores, &lower, bars);
            positions += r.positions;
            out(report_line(&r));
            for m in &r.first {
                out(mismatch_line(n, m));
            }
            rows.push(json!({
                "tier": n, "status": if r.is_ok() { "ok" } else { "failed" },
                "positions": r.positions, "nonzero": r.nonzero, "mismatches": r.mismatches,
                "seconds": r.seconds,
                "first": r.first.iter().map(mismatch_json).collect::<Vec<_>>(),
            }));
            if !r.is_ok() {
                if n < b {
                    out(format!(
                        "tiers {}..={b} not verified: they depend on tier {n}",
                        n + 1
                    ));
                }
                return Ok(DeepResult {
                    ok: false,
                    positions,
                    seconds: t0.elapsed().as_secs_f64(),
                    rows,
                });
            }
        } else {
            rows.push(json!({ "tier": n, "status": "trusted", "checksum": good.checksum }));
        }
        bars.overall_inc(size);
        if n < b {
            lower.push(Arc::from(scores));
        }
    }
    Ok(DeepResult {
        ok: true,
        positions,
        seconds: t0.elapsed().as_secs_f64(),
        rows,
    })
}

/// Runs `oware verify --deep`.
///
/// # Errors
/// The directory or manifest cannot be read, the rules differ from the tables', or the
/// verification does not fit in memory.
pub(super) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let dir = &args.dir;
    let manifest = Manifest::load(dir)?;
    let rules = resolve_rules(dir, manifest.as_ref(), args.rules)?;
    let range = match &args.tiers {
        Some(r) => r.clone(),
        None => {
            let tiers = expected_tiers(dir, manifest.as_ref())?;
            match tiers.last() {
                Some(&max) => 0..=max,
                None => anyhow::bail!("no tables in {}", dir.display()),
            }
        }
    };
    let total: u64 = (0..=*range.end())
        .map(|n| tier_size(n, IndexKind::Reachable))
        .sum();
    let bars = Bars::new(args.quiet || args.json, total, "all tiers", verify_phase);
    if !args.json {
        println!(
            "directory {}, rules {rules}, deep verification of tiers {}..={}",
            dir.display(),
            range.start(),
            range.end()
        );
    }
    let r = verify_deep(
        dir,
        manifest.as_ref(),
        &rules,
        range.clone(),
        &bars,
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
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else if r.ok {
        println!(
            "deep verification of tiers {}..={} OK: {} positions re-proved in {:.2} s ({:.2} M/s)",
            range.start(),
            range.end(),
            r.positions,
            r.seconds,
            r.positions as f64 / r.seconds.max(1e-9) / 1e6
        );
    } else {
        println!(
            "deep verification of tiers {}..={} FAILED",
            range.start(),
            range.end()
        );
    }
    Ok(if r.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
