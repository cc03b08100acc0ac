//! `oware info`: the tiers present in a table directory, their rules, sizes, checksums and
//! the statistics the manifest holds.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use oware_db::format::tier_of_file_name;
use oware_db::format::Values;
use oware_db::manifest::{distance_path, holds_romein_files, tier_path, Manifest, TierStats};
use oware_db::romein;
use oware_db::table::Table;
use serde_json::{json, Value};

/// Arguments of `oware info`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the tables.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Skip hashing every file (the checksum state is then `not checked`).
    #[arg(long)]
    pub quick: bool,
    /// Describe the directory's Romein-Bal files (`scores.N`) only, even where it holds
    /// tables of this program too.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<super::common::Format>,
}

/// What `info` found about one tier.
struct TierInfo {
    tier: u8,
    row: Value,
    ok: bool,
}

fn tier_info(args: &Args, manifest: Option<&Manifest>, n: u8) -> TierInfo {
    let entry = manifest.and_then(|m| m.tiers.get(&n));
    let path = match args.format {
        Some(super::common::Format::Romein) => args.dir.join(romein::file_name(n)),
        None => tier_path(&args.dir, manifest, n),
    };
    let file = path
        .file_name()
        .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
    let mut row = json!({ "tier": n, "file": file });
    if let Some(s) = entry.and_then(|e| e.stats.as_ref()) {
        row["stats"] = serde_json::to_value(s).unwrap_or(Value::Null);
    }
    let t = match Table::open(&path) {
        Ok(t) => t,
        Err(e) => {
            row["error"] = json!(e.to_string());
            return TierInfo {
                tier: n,
                row,
                ok: false,
            };
        }
    };
    let (state, mut ok) = checksum_state(args, &t);
    // A Romein-Bal file stores no checksum: its hash is the whole file read, which --quick
    // skips (the manifest's, if any, is shown instead).
    let unhashed = args.quick && t.romein().is_some();
    let checksum = if unhashed {
        entry.map(|e| e.checksum.clone())
    } else {
        Some(t.checksum_hex())
    };
    let state = match entry {
        Some(e) if checksum.as_ref().is_some_and(|c| *c != e.checksum) => {
            ok = false;
            format!("{state}; differs from the manifest ({})", e.checksum)
        }
        Some(e) if e.entries != t.len() || e.file_size != t.file_size() => {
            ok = false;
            format!("{state}; size differs from the manifest")
        }
        None if manifest.is_some() => format!("{state}; not in the manifest"),
        _ => state,
    };
    let state = match manifest {
        Some(m) if m.rules != t.rules() => {
            ok = false;
            format!(
                "{state}; built under `{}`, the manifest says `{}`",
                t.rules(),
                m.rules
            )
        }
        _ => state,
    };
    let state = if t.tier() == n {
        state
    } else {
        ok = false;
        format!("{state}; the file holds tier {}", t.tier())
    };
    row["rules"] = json!(t.rules().to_string());
    row["index"] = json!(t.kind().name());
    row["entries"] = json!(t.len());
    row["file_size"] = json!(t.file_size());
    row["bits_per_position"] = json!(t.bits_per_entry());
    row["block_entries"] = json!(t.block_entries());
    row["compression"] = json!(if t.romein().is_some() {
        "raw"
    } else {
        t.compression().name()
    });
    row["compression_level"] = json!(t.compression_level());
    row["checksum"] = json!(checksum);
    row["checksum_state"] = json!(state);
    if let Some((d, good)) = distance_info(args, manifest, n) {
        row["distances"] = d;
        ok &= good;
    }
    TierInfo { tier: n, row, ok }
}

/// The checksum state of `t`: `not checked` with `--quick`, else `ok` or `BAD: …` after
/// hashing the file; and whether it is sound.
fn checksum_state(args: &Args, t: &Table) -> (String, bool) {
    if args.quick {
        return ("not checked".to_string(), true);
    }
    match t.verify_checksum() {
        // A Romein-Bal file stores no checksum to compare with.
        Ok(_) if t.romein().is_some() => ("computed (the file stores none)".to_string(), true),
        Ok(_) => ("ok".to_string(), true),
        Err(e) => (format!("BAD: {e}"), false),
    }
}

/// The tier's distance table, if it has one (recorded or present): its file, size, bits per
/// position, longest distance and checksum state; and whether it is sound.
fn distance_info(args: &Args, manifest: Option<&Manifest>, n: u8) -> Option<(Value, bool)> {
    let recorded = manifest
        .and_then(|m| m.tiers.get(&n))
        .and_then(|e| e.distance.as_ref());
    let path = distance_path(&args.dir, manifest, n);
    if recorded.is_none() && std::fs::symlink_metadata(&path).is_err() {
        return None;
    }
    let file = path
        .file_name()
        .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
    let mut row = json!({ "file": file });
    if let Some(d) = recorded {
        row["max"] = json!(d.max);
        row["seconds"] = json!(d.seconds);
        if let Some(r) = d.rounds {
            row["rounds"] = json!(r);
        }
        if let Some(r) = d.runs {
            row["runs"] = json!(r);
        }
        row["verified"] = json!(d.verified.is_some());
    }
    let t = match Table::open(&path) {
        Ok(t) if t.values() == Values::Distances && t.tier() == n => t,
        Ok(t) => {
            row["error"] = json!(format!(
                "holds the {} of tier {}, not the distances of tier {n}",
                t.values().name(),
                t.tier()
            ));
            return Some((row, false));
        }
        Err(e) => {
            row["error"] = json!(e.to_string());
            return Some((row, false));
        }
    };
    let (state, mut ok) = checksum_state(args, &t);
    let state = match recorded {
        Some(d) if d.checksum != t.checksum_hex() || d.file_size != t.file_size() => {
            ok = false;
            format!("{state}; differs from the manifest ({})", d.checksum)
        }
        None if manifest.is_some() => format!("{state}; not in the manifest"),
        _ => state,
    };
    row["file_size"] = json!(t.file_size());
    row["bits_per_position"] = json!(t.bits_per_entry());
    row["checksum"] = json!(t.checksum_hex());
    row["checksum_state"] = json!(state);
    Some((row, ok))
}

fn stats_line(s: &TierStats) -> String {
    let (mut win, mut draw, mut loss) = (0u64, 0u64, 0u64);
    for (&v, &c) in &s.histogram {
        match v.signum() {
            1 => win += c,
            0 => draw += c,
            _ => loss += c,
        }
    }
    format!(
        "win {win}, draw {draw}, loss {loss} (mover's side); finite {}, endless {}; {:.2} s on {} threads",
        s.finite, s.endless, s.seconds, s.threads
    )
}

/// Runs `oware info`.
///
/// # Errors
/// The directory cannot be read, its manifest is bad, or standard output cannot be written.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let forced = args.format.is_some();
    // Forced to their files, the manifest (which describes this program's tables) is set
    // aside.
    let manifest = if forced {
        None
    } else {
        Manifest::load(&args.dir)?
    };
    let mut tiers: BTreeSet<u8> = manifest
        .as_ref()
        .map(|m| m.tiers.keys().copied().collect())
        .unwrap_or_default();
    for e in std::fs::read_dir(&args.dir)
        .with_context(|| format!("reading the directory {}", args.dir.display()))?
    {
        let name = e?.file_name();
        let name = name.to_string_lossy();
        let n = if forced {
            romein::tier_of_file_name(&name)
        } else {
            tier_of_file_name(&name).or_else(|| romein::tier_of_file_name(&name))
        };
        if let Some(n) = n {
            tiers.insert(n);
        }
    }
    let romein = forced || holds_romein_files(&args.dir);
    let infos: Vec<TierInfo> = tiers
        .iter()
        .map(|&n| tier_info(&args, manifest.as_ref(), n))
        .collect();
    let all_ok = infos.iter().all(|i| i.ok);
    let rules = manifest.as_ref().map(|m| m.rules.to_string()).or_else(|| {
        infos
            .iter()
            .find_map(|i| i.row["rules"].as_str().map(str::to_string))
    });
    let total_size: u64 = infos
        .iter()
        .filter_map(|i| i.row["file_size"].as_u64())
        .sum();
    let total_entries: u64 = infos.iter().filter_map(|i| i.row["entries"].as_u64()).sum();
    if args.json {
        let v = json!({
            "dir": args.dir.display().to_string(),
            "rules": rules,
            "index": manifest.as_ref().map(|m| m.index.name()),
            "format": manifest.as_ref().map(|m| m.format),
            "manifest": manifest.is_some(),
            "romein": romein,
            "entries": total_entries,
            "file_size": total_size,
            "tiers": infos.iter().map(|i| i.row.clone()).collect::<Vec<_>>(),
        });
        crate::output::outln!("{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        crate::output::outln!("directory  {}", args.dir.display())?;
        crate::output::outln!("rules      {}", rules.as_deref().unwrap_or("(no tables)"))?;
        match &manifest {
            Some(m) => {
                crate::output::outln!("manifest   format {}, index {}", m.format, m.index.name())?
            }
            None if forced && args.dir.join(oware_db::manifest::MANIFEST_FILE).is_file() => {
                crate::output::outln!("manifest   set aside (--format romein reads the files)")?
            }
            None => crate::output::outln!("manifest   none")?,
        }
        if romein {
            crate::output::outln!(
                "files      Romein-Bal scores.N, one byte per position, read as they are"
            )?;
        }
        crate::output::outln!(
            "tiers      {} ({} positions, {} bytes)",
            infos.len(),
            total_entries,
            total_size
        )?;
        crate::output::outln!(
            "{:>4}  {:>14}  {:>14}  {:>8}  {:>6}  {:>7}  {:>5}  checksum",
            "tier",
            "entries",
            "bytes",
            "bits/pos",
            "block",
            "codec",
            "level"
        )?;
        for i in &infos {
            let r = &i.row;
            if let Some(e) = r["error"].as_str() {
                crate::output::outln!("{:>4}  error: {e}", i.tier)?;
                continue;
            }
            crate::output::outln!(
                "{:>4}  {:>14}  {:>14}  {:>8.3}  {:>6}  {:>7}  {:>5}  {}",
                i.tier,
                r["entries"].as_u64().unwrap_or(0),
                r["file_size"].as_u64().unwrap_or(0),
                r["bits_per_position"].as_f64().unwrap_or(0.0),
                r["block_entries"].as_u64().unwrap_or(0),
                r["compression"].as_str().unwrap_or(""),
                r["compression_level"].as_i64().unwrap_or(0),
                r["checksum_state"].as_str().unwrap_or("")
            )?;
        }
        let distances: Vec<(u8, &Value)> = infos
            .iter()
            .filter_map(|i| i.row.get("distances").map(|d| (i.tier, d)))
            .collect();
        if distances.is_empty() && romein {
            crate::output::outln!("distances  none (Romein-Bal files hold scores only)")?;
        } else if distances.is_empty() && infos.is_empty() {
            crate::output::outln!("distances  none")?;
        } else if distances.is_empty() {
            crate::output::outln!("distances  none (generated with --no-distance)")?;
        } else {
            let bytes: u64 = distances
                .iter()
                .filter_map(|(_, d)| d["file_size"].as_u64())
                .sum();
            crate::output::outln!(
                "distances  {} tables ({bytes} bytes): plies to the next capture or end",
                distances.len()
            )?;
            crate::output::outln!(
                "{:>4}  {:>14}  {:>8}  {:>7}  checksum",
                "tier",
                "bytes",
                "bits/pos",
                "longest"
            )?;
            for (n, d) in distances {
                if let Some(e) = d["error"].as_str() {
                    crate::output::outln!("{n:>4}  distance table error: {e}")?;
                    continue;
                }
                crate::output::outln!(
                    "{n:>4}  {:>14}  {:>8.3}  {:>7}  {}",
                    d["file_size"].as_u64().unwrap_or(0),
                    d["bits_per_position"].as_f64().unwrap_or(0.0),
                    d["max"]
                        .as_u64()
                        .map_or_else(|| "-".into(), |m| m.to_string()),
                    d["checksum_state"].as_str().unwrap_or("")
                )?;
            }
        }
        for i in &infos {
            if let Some(s) = manifest
                .as_ref()
                .and_then(|m| m.tiers.get(&i.tier))
                .and_then(|e| e.stats.as_ref())
            {
                crate::output::outln!("tier {:>2}: {}", i.tier, stats_line(s))?;
            }
        }
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
