//! `oware verify --start`: the start position with K seeds in every house, evaluated from
//! the tables, after generating and deep-verifying them on request (`--generate`); or, when
//! tiers are missing, what generating them costs.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use oware_db::format::tier_file_name;
use oware_db::index::{tier_size, IndexKind};
use oware_db::manifest::{tier_path, Manifest};
use oware_db::table::Table;
use oware_db::{GameResult, Position, Rules, Tablebase};
use oware_solver::memory::{
    far_exit_bytes, generate_least_memory, generate_peak_memory, human_bytes, tier_memory,
    verify_deep_least_memory, verify_deep_memory, verify_memory,
};
use oware_solver::{generate, GenerateOptions};
use serde_json::json;

use super::deep::{verify_deep, verify_phase};
use super::{resolve_rules, tier_ranges, Args};
use crate::commands::common::{shell_path, shell_word};
use crate::commands::progress::{solve_phase, Bars};

/// Bits per position assumed for tables when no large table is present to measure: on the
/// safe side of what real tables take, since the real tier 24 takes 3.67 bits in the default
/// format (ctx-huffman, 1,024-entry blocks) and 4.32 in 1,024-entry zstd blocks
/// (docs/BENCHMARKS.md).
const ASSUMED_BITS: f64 = 4.5;

/// A table is large enough to measure bits per position from if it holds this many.
const MEASURE_MIN: u64 = 1_000_000;

/// Positions of tier `n` (reachable index).
fn size(n: u8) -> u64 {
    tier_size(n, IndexKind::Reachable)
}

/// The bits per position to estimate disk with, and where it comes from.
fn bits_per_position(dir: &Path, present: &[u8]) -> (f64, String) {
    for &n in present.iter().rev() {
        if size(n) < MEASURE_MIN {
            break;
        }
        if let Ok(t) = Table::open(&dir.join(tier_file_name(n))) {
            return (t.bits_per_entry(), format!("as measured on tier {n}"));
        }
    }
    (
        ASSUMED_BITS,
        format!("assumed: no table of {MEASURE_MIN} positions or more to measure"),
    )
}

/// Prints which tiers are missing and what generating them takes.
fn report_missing(
    args: &Args,
    rules: &Rules,
    n: u8,
    missing: &[u8],
    present: &[u8],
) -> anyhow::Result<()> {
    let positions: u64 = missing.iter().map(|&m| size(m)).sum();
    let (bits, source) = bits_per_position(&args.dir, present);
    let disk = (positions as f64 * bits / 8.0) as u64;
    let first = missing.first().copied().unwrap_or(0);
    let (peak_tier, peak) = generate_peak_memory(first, n);
    let (_, generate_least) = generate_least_memory(rules, first, n);
    let (deep_tier, deep) = verify_deep_memory(rules, n);
    let (_, least) = verify_deep_least_memory(rules, n);
    let available = crate::commands::env::get().memory()?;
    let k = args.seeds_per_house;
    let command = format!(
        "oware verify --start --seeds-per-house {k} --generate --dir {} --rules {}",
        shell_path(&args.dir),
        shell_word(&rules.to_string())
    );
    if args.json {
        let v = json!({
            "position": format!("{k} {k} {k} {k} {k} {k} {k} {k} {k} {k} {k} {k}"),
            "seeds": n,
            "rules": rules.to_string(),
            "dir": args.dir.display().to_string(),
            "missing": missing,
            "missing_positions": positions,
            "disk_bytes": disk,
            "bits_per_position": bits,
            "bits_source": source,
            "generate_peak_memory": peak,
            "generate_peak_tier": peak_tier,
            "generate_least_memory": generate_least,
            "deep_verify_memory": deep,
            "deep_verify_peak_tier": deep_tier,
            "deep_verify_least_memory": least,
            "available_memory": available,
            "command": command,
        });
        crate::output::outln!(
            "{}",
            serde_json::to_string_pretty(&v).unwrap_or_else(|e| e.to_string())
        )?;
        return Ok(());
    }
    crate::output::outln!(
        "the start position with {k} seeds per house ({n} seeds) needs tiers 0..={n} in {}; missing: {}",
        args.dir.display(),
        tier_ranges(missing)
    )?;
    for &m in missing.iter().take(3) {
        crate::output::outln!(
            "  missing tier {m}: {}",
            args.dir.join(tier_file_name(m)).display()
        )?;
    }
    if missing.len() > 3 {
        crate::output::outln!("  ... and {} more", missing.len() - 3)?;
    }
    crate::output::outln!(
        "generating them: {positions} positions; disk about {} ({bits:.3} bits/position, {source})",
        human_bytes(disk)
    )?;
    crate::output::outln!(
        "memory: generation peaks at {} (tier {peak_tier}: {:.2} bytes per position of tier \
         {peak_tier}, plus the scores of tiers 0..{peak_tier} as memory-mapped side copies), at least {} \
         with the lower tiers read in slices; the deep verification of tiers 0..={n} \
         needs {} at full speed (tier {deep_tier}: {:.2} bytes per position, plus its lower tiers' \
         window held whole), at least {} with the lower tiers read in slices; available now: {}",
        human_bytes(peak),
        (tier_memory(size(peak_tier)) + far_exit_bytes(peak_tier, size(peak_tier))) as f64
            / size(peak_tier).max(1) as f64,
        human_bytes(generate_least),
        human_bytes(deep),
        verify_memory(size(deep_tier)) as f64 / size(deep_tier).max(1) as f64,
        human_bytes(least),
        human_bytes(available)
    )?;
    crate::output::outln!("to generate, verify and evaluate: {command}")?;
    Ok(())
}

/// Whether the manifest records every tier of `tiers` as deep-verified with the checksum its
/// table has now (recomputed over every file, in parallel, with every plain check).
fn recorded_verified(dir: &Path, manifest: Option<&Manifest>, rules: &Rules, tiers: &[u8]) -> bool {
    let Some(m) = manifest else {
        return false;
    };
    let recorded = tiers.iter().all(|t| {
        m.tiers
            .get(t)
            .is_some_and(|e| e.verified.as_ref() == Some(&e.checksum))
    });
    if !recorded {
        return false;
    }
    oware_solver::dir::check_tiers(dir, manifest, rules, tiers, &oware_solver::NoProgress)
        .iter()
        .all(|c| {
            c.result
                .as_ref()
                .is_ok_and(|g| m.tiers[&c.tier].verified.as_ref() == Some(&g.checksum))
        })
}

/// Runs `oware verify --start`.
///
/// # Errors
/// The directory or manifest cannot be read, the rules differ from the tables', generation
/// or verification does not fit in memory, or a probe fails.
pub(super) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let k = args.seeds_per_house;
    let n = 12 * k;
    let p = Position::new([k; 12])?;
    let dir = &args.dir;
    let manifest = Manifest::load(dir)?;
    let rules = resolve_rules(dir, manifest.as_ref(), args.rules)?;
    let quiet = args.quiet || args.json;

    let mut generate_seconds = None;
    if args.generate {
        let total: u64 = (0..=n).map(size).sum();
        let bars = Bars::new(quiet, total, "generate", solve_phase);
        let t0 = Instant::now();
        let opts = GenerateOptions {
            dir: dir.clone(),
            rules,
            max_seeds: n,
            memory_limit: crate::commands::env::get().memory_limit()?,
            cancel: crate::signals::cancel().clone(),
            distances: !args.no_distance,
            ..GenerateOptions::default()
        };
        generate(&oware_solver::distributed::LocalComm, &opts, &bars)
            .map_err(|e| crate::commands::common::generate_error(e, dir))?;
        bars.finish();
        let s = t0.elapsed().as_secs_f64();
        if !args.json {
            crate::output::outln!(
                "tiers 0..={n} under {rules} generated (or kept) in {}: {s:.1} s",
                dir.display()
            )?;
        }
        generate_seconds = Some(s);
    }
    let manifest = Manifest::load(dir)?;
    let path_of = |m: u8| tier_path(dir, manifest.as_ref(), m);
    // A symbolic link that leads nowhere is present (and fails its check), not missing.
    // A directory of the Romein-Bal databases has no tier 47, which the start never needs.
    let absent = oware_db::manifest::absent_tier(dir, manifest.as_ref());
    let (present, missing): (Vec<u8>, Vec<u8>) = (0..=n)
        .filter(|&m| absent != Some(m))
        .partition(|&m| std::fs::symlink_metadata(path_of(m)).is_ok());
    if !missing.is_empty() {
        report_missing(args, &rules, n, &missing, &present)?;
        return Ok(ExitCode::FAILURE);
    }

    let mut verify_seconds = None;
    let mut verified_before = false;
    if !(args.deep || args.generate) {
        // A deep verification recorded in the manifest counts, as `verify --deep` counts it.
        verified_before = recorded_verified(dir, manifest.as_ref(), &rules, &present);
    }
    if verified_before {
        if !args.json {
            crate::output::outln!(
                "tiers 0..={n}: deep-verified before, recorded in the manifest with the \
                 checksums the tables still have (--deep --again re-proves them)"
            )?;
        }
    } else if args.deep || args.generate {
        let total: u64 = (0..=n).map(size).sum();
        let bars = Bars::new(quiet, total, "verify", verify_phase);
        let r = verify_deep(
            &oware_solver::distributed::LocalComm,
            dir,
            &rules,
            0..=n,
            args.again,
            &bars,
            !args.json,
        )?;
        bars.finish();
        if !r.ok {
            crate::output::outln!(
                "deep verification of tiers 0..={n} FAILED: the start position is not evaluated"
            )?;
            return Ok(ExitCode::FAILURE);
        }
        if !args.json {
            crate::output::outln!(
                "deep verification of tiers 0..={n} OK: {} positions re-proved in {:.1} s",
                r.positions,
                r.seconds
            )?;
        }
        verify_seconds = Some(r.seconds);
    }

    let tb = Tablebase::open_with_rules(dir, &rules)
        .with_context(|| format!("opening the tables in {}", dir.display()))?;
    let score = tb.score(&p)?;
    let mut moves = tb.moves(&p)?;
    moves.sort_by_key(|m| m.house);
    let result = GameResult::of(i32::from(score));
    if args.json {
        let v = json!({
            "position": p.to_string(),
            "seeds": n,
            "rules": rules.to_string(),
            "dir": dir.display().to_string(),
            "score": score,
            "result": result.name(),
            "moves": moves.iter().map(|m| json!({
                "house": m.house, "captures": m.captured, "score": m.score,
                "result": GameResult::of(i32::from(m.score)).name(),
            })).collect::<Vec<_>>(),
            "deep_verified": verified_before || verify_seconds.is_some(),
            "deep_verified_before": verified_before,
            "generate_seconds": generate_seconds,
            "verify_seconds": verify_seconds,
        });
        crate::output::outln!("{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    crate::output::outln!("start position {p} ({n} seeds, {k} per house), rules {rules}")?;
    crate::output::outln!(
        "score {score}: a {} for the first player{}",
        result.name(),
        if verified_before || verify_seconds.is_some() {
            " (every tier deep-verified)"
        } else if oware_db::manifest::holds_romein_files(dir) {
            " (Romein-Bal files, each byte read checked to be a score of its tier; add --deep \
             to re-prove them)"
        } else {
            " (tables checked by their block checksums only; add --deep to re-prove them)"
        }
    )?;
    crate::output::outln!(
        "first moves (score = captures - score of the position after the move):"
    )?;
    crate::output::outln!("  house  captures  score  result")?;
    for m in &moves {
        crate::output::outln!(
            "  {:>5}  {:>8}  {:>5}  {}",
            m.house,
            m.captured,
            m.score,
            GameResult::of(i32::from(m.score)).name()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
