//! Plain verification: each table's header, whole-file checksum (recomputed), size and
//! entry count against the file's trailer and the manifest, and the tier sequence for gaps
//! ([`oware_db::check::check_tier`], run over the directory by [`oware_solver::dir::check_tiers`]).

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use oware_db::check::TierCheck;
use oware_db::manifest::Manifest;
use oware_solver::dir::check_tiers;
use serde_json::json;

use super::{resolve_rules, Args};
use crate::commands::progress::{solve_phase, Bars};

/// The tiers `dir` should hold ([`oware_db::check::expected_tiers`]).
///
/// # Errors
/// The directory cannot be read.
pub(super) fn expected_tiers(dir: &Path, manifest: Option<&Manifest>) -> anyhow::Result<Vec<u8>> {
    oware_db::check::expected_tiers(dir, manifest)
        .with_context(|| format!("reading {}", dir.display()))
}

/// One line of the plain report (two for a tier with a distance table).
pub(super) fn line(c: &TierCheck) -> String {
    let scores = match &c.result {
        Ok(g) => format!(
            "tier {:2}  OK      {:>14} positions  {:>14} bytes  {}",
            c.tier,
            g.table.len(),
            g.table.file_size(),
            g.checksum
        ),
        Err(why) => format!("tier {:2}  FAILED  {}", c.tier, c.table_failure(why)),
    };
    match &c.distances {
        None => scores,
        Some((_, Ok(g))) => format!(
            "{scores}\n         OK      distances        {:>14} bytes  {}",
            g.table.file_size(),
            g.checksum
        ),
        Some((path, Err(why))) => format!(
            "{scores}\n         FAILED  distance table {}: {why}",
            path.display()
        ),
    }
}

/// Runs plain `oware verify`.
///
/// # Errors
/// The directory or manifest cannot be read, or the rules differ from the tables'.
pub(super) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let dir = &args.dir;
    let manifest = Manifest::load(dir)?;
    let rules = resolve_rules(dir, manifest.as_ref(), args.rules)?;
    let tiers = expected_tiers(dir, manifest.as_ref())?;
    if tiers.is_empty() {
        anyhow::bail!(
            "no tables in {}: no tier-NN.owt{}, nothing to verify",
            dir.display(),
            if manifest.is_some() {
                " and a manifest that records none"
            } else {
                " and no manifest.json"
            }
        );
    }
    let t0 = Instant::now();
    let bars = Bars::new(args.quiet || args.json, 0, "verify", solve_phase);
    let checked = check_tiers(dir, manifest.as_ref(), &rules, &tiers, &bars);
    bars.finish();
    let failed = checked.iter().filter(|c| !c.is_ok()).count();
    let no_manifest = manifest.is_none();
    let ok = failed == 0 && !no_manifest && !checked.is_empty();
    if args.json {
        let rows: Vec<_> = checked
            .iter()
            .map(|c| {
                let mut row = match &c.result {
                    Ok(g) => json!({
                        "tier": c.tier, "file": c.path.display().to_string(), "status": "ok",
                        "entries": g.table.len(), "file_size": g.table.file_size(),
                        "checksum": g.checksum,
                    }),
                    Err(why) => json!({
                        "tier": c.tier, "file": c.path.display().to_string(), "status": "failed",
                        "reason": why.to_string(),
                    }),
                };
                if let Some((path, r)) = &c.distances {
                    row["distances"] = match r {
                        Ok(g) => json!({
                            "file": path.display().to_string(), "status": "ok",
                            "file_size": g.table.file_size(), "checksum": g.checksum,
                        }),
                        Err(why) => json!({
                            "file": path.display().to_string(), "status": "failed",
                            "reason": why.to_string(),
                        }),
                    };
                    if r.is_err() {
                        row["status"] = json!("failed");
                    }
                }
                row
            })
            .collect();
        let v = json!({
            "dir": dir.display().to_string(),
            "rules": rules.to_string(),
            "manifest": !no_manifest,
            "ok": ok,
            "failed": failed,
            "tiers": rows,
        });
        crate::output::outln!("{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        crate::output::outln!("directory {}, rules {rules}", dir.display())?;
        if no_manifest {
            crate::output::outln!("FAILED: no manifest.json in {}", dir.display())?;
        }
        for c in &checked {
            crate::output::outln!("{}", line(c))?;
        }
        let bytes: u64 = checked
            .iter()
            .filter_map(|c| c.result.as_ref().ok())
            .map(|g| g.table.file_size())
            .sum();
        if ok {
            crate::output::outln!(
                "all {} tiers 0..={} OK ({bytes} bytes hashed in {:.2} s)",
                checked.len(),
                checked.len() - 1,
                t0.elapsed().as_secs_f64()
            )?;
        } else if failed == 0 && no_manifest && !checked.is_empty() {
            crate::output::outln!(
                "{} tiers read and hashed, but not checked: no manifest records their hashes \
                 (`oware verify --deep` re-proves every score)",
                checked.len()
            )?;
        } else {
            crate::output::outln!("{failed} of {} tiers FAILED", checked.len())?;
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
