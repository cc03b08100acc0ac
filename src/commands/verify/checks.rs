//! Plain verification: each table's header, whole-file checksum (recomputed), size and
//! entry count against the file's trailer and the manifest, and the tier sequence for gaps.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use oware_db::{tier_file_name, tier_of_file_name, tier_size, IndexKind, Manifest, Rules, Table};
use rayon::prelude::*;
use serde_json::json;

use super::{resolve_rules, Args};
use crate::commands::progress::{solve_phase, Bars};

/// A table that passed every plain check.
pub(super) struct Good {
    /// The open table.
    pub table: Table,
    /// The checksum, recomputed (equal to the trailer's and the manifest's).
    pub checksum: String,
}

/// The plain checks of one tier.
pub(super) struct Checked {
    /// The tier.
    pub tier: u8,
    /// Its file.
    pub path: PathBuf,
    /// The table, or why it failed.
    pub result: Result<Good, String>,
}

/// The tiers a directory should hold: those of the manifest, those with a `tier-NN.owt`
/// file, and every tier below the highest of them (a gap is a missing tier).
///
/// # Errors
/// The directory cannot be read.
pub(super) fn expected_tiers(dir: &Path, manifest: Option<&Manifest>) -> anyhow::Result<Vec<u8>> {
    let mut tiers: BTreeSet<u8> = manifest
        .map(|m| m.tiers.keys().copied().collect())
        .unwrap_or_default();
    for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let name = e?.file_name();
        let name = name.to_string_lossy();
        if let Some(n) = tier_of_file_name(&name) {
            tiers.insert(n);
        }
    }
    Ok(match tiers.last() {
        Some(&max) => (0..=max).collect(),
        None => Vec::new(),
    })
}

/// The file of tier `n`: the manifest's name for it, or `tier-NN.owt`.
fn tier_path(dir: &Path, manifest: Option<&Manifest>, n: u8) -> PathBuf {
    let file = manifest
        .and_then(|m| m.tiers.get(&n))
        .map_or_else(|| tier_file_name(n), |e| e.file.clone());
    dir.join(file)
}

/// Every plain check of tier `n`.
fn check_one(dir: &Path, manifest: Option<&Manifest>, rules: &Rules, n: u8) -> Checked {
    let path = tier_path(dir, manifest, n);
    let result = check_file(&path, manifest, rules, n);
    Checked {
        tier: n,
        path,
        result,
    }
}

fn check_file(
    path: &Path,
    manifest: Option<&Manifest>,
    rules: &Rules,
    n: u8,
) -> Result<Good, String> {
    let entry = manifest.and_then(|m| m.tiers.get(&n));
    if !path.exists() {
        let why = if entry.is_some() {
            "recorded in the manifest"
        } else {
            "a gap in the tier sequence"
        };
        return Err(format!("missing tier {n}: {} ({why})", path.display()));
    }
    let table = Table::open(path).map_err(|e| e.to_string())?;
    if table.tier() != n {
        return Err(format!("the file holds tier {}", table.tier()));
    }
    if table.rules() != *rules {
        return Err(format!("built under `{}`, not `{rules}`", table.rules()));
    }
    if table.kind() != IndexKind::Reachable {
        return Err(format!(
            "index `{}`, expected `reachable`",
            table.kind().name()
        ));
    }
    let size = tier_size(n, IndexKind::Reachable);
    if table.len() != size {
        return Err(format!("{} entries, the tier has {size}", table.len()));
    }
    let checksum = table.verify_checksum().map_err(|e| e.to_string())?;
    let Some(entry) = entry else {
        return Err("not recorded in the manifest".into());
    };
    if entry.checksum != checksum {
        return Err(format!(
            "checksum {checksum} (file, recomputed), the manifest says {}",
            entry.checksum
        ));
    }
    if entry.entries != table.len() || entry.file_size != table.file_size() {
        return Err(format!(
            "{} entries in {} bytes, the manifest says {} in {}",
            table.len(),
            table.file_size(),
            entry.entries,
            entry.file_size
        ));
    }
    Ok(Good { table, checksum })
}

/// Runs the plain checks of `tiers` in parallel (on the current rayon pool), the overall
/// progress bar counting file bytes hashed.
pub(super) fn check_tiers(
    dir: &Path,
    manifest: Option<&Manifest>,
    rules: &Rules,
    tiers: &[u8],
    bars: &Bars,
) -> Vec<Checked> {
    let sizes: Vec<u64> = tiers
        .iter()
        .map(|&n| std::fs::metadata(tier_path(dir, manifest, n)).map_or(0, |m| m.len()))
        .collect();
    let total: u64 = sizes.iter().sum();
    bars.task(
        "tables",
        "checksums",
        total,
        &format!("checksums of {} tables ({total} bytes)", tiers.len()),
    );
    // Largest files first, so that the longest hashes start early.
    let mut order: Vec<usize> = (0..tiers.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    let mut out: Vec<(usize, Checked)> = order
        .par_iter()
        .map(|&i| {
            let c = check_one(dir, manifest, rules, tiers[i]);
            bars.inc(sizes[i]);
            (i, c)
        })
        .collect();
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, c)| c).collect()
}

/// One line of the plain report.
pub(super) fn line(c: &Checked) -> String {
    match &c.result {
        Ok(g) => format!(
            "tier {:2}  OK      {:>14} positions  {:>14} bytes  {}",
            c.tier,
            g.table.len(),
            g.table.file_size(),
            g.checksum
        ),
        Err(why) => format!("tier {:2}  FAILED  {why}", c.tier),
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
    let t0 = Instant::now();
    let bars = Bars::new(args.quiet || args.json, 0, "verify", solve_phase);
    let checked = check_tiers(dir, manifest.as_ref(), &rules, &tiers, &bars);
    bars.finish();
    let failed = checked.iter().filter(|c| c.result.is_err()).count();
    let no_manifest = manifest.is_none();
    let ok = failed == 0 && !no_manifest && !checked.is_empty();
    if args.json {
        let rows: Vec<_> = checked
            .iter()
            .map(|c| match &c.result {
                Ok(g) => json!({
                    "tier": c.tier, "file": c.path.display().to_string(), "status": "ok",
                    "entries": g.table.len(), "file_size": g.table.file_size(),
                    "checksum": g.checksum,
                }),
                Err(why) => json!({
                    "tier": c.tier, "file": c.path.display().to_string(), "status": "failed",
                    "reason": why,
                }),
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
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("directory {}, rules {rules}", dir.display());
        if no_manifest {
            println!("FAILED: no manifest.json in {}", dir.display());
        }
        if checked.is_empty() {
            println!("FAILED: no tables in {}", dir.display());
        }
        for c in &checked {
            println!("{}", line(c));
        }
        let bytes: u64 = checked
            .iter()
            .filter_map(|c| c.result.as_ref().ok())
            .map(|g| g.table.file_size())
            .sum();
        if ok {
            println!(
                "all {} tiers 0..={} OK ({bytes} bytes hashed in {:.2} s)",
                checked.len(),
                checked.len() - 1,
                t0.elapsed().as_secs_f64()
            );
        } else {
            println!("{failed} of {} tiers FAILED", checked.len());
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
