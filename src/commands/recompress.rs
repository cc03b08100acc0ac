//! `oware recompress`: rewrite tables with another block compression or block size (e.g. zstd
//! tables as ctx-huffman), into another directory, with a manifest.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use oware_db::format::Compression;
use oware_db::manifest::{tier_path, DistanceEntry, Manifest, TierEntry};
use oware_db::table::Table;
use oware_db::write::WriteOptions;
use oware_solver::dir::{write_table_parallel, DEFAULT_BATCH_BLOCKS};
use oware_solver::TableDir;

/// Arguments of `oware recompress`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the tables to read.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// Directory to write (created if missing; must differ from --dir).
    #[arg(long)]
    pub out: PathBuf,
    /// Tiers to rewrite: `N`, `A..=B`, `A..`, `..=B`, separated by commas, e.g. `20,24`
    /// (default: every tier of the source manifest).
    #[arg(long, value_name = "TIERS", value_parser = super::common::parse_tiers)]
    pub tiers: Option<super::common::TierSelection>,
    /// Block compression of the new tables: `huffman` or `zstd`.
    #[arg(long, default_value = "huffman")]
    pub compression: Compression,
    /// Entries per block (1..=16777216).
    #[arg(long, default_value_t = WriteOptions::DEFAULT_BLOCK_ENTRIES,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(WriteOptions::MAX_BLOCK_ENTRIES)))]
    pub block_entries: u32,
    /// zstd level, 1..=22 (zstd only; default 9).
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..=22))]
    pub level: Option<i32>,
    /// Worker threads, 1..=1024 (default: one per core).
    #[arg(long, value_parser = super::common::parse_threads)]
    pub threads: Option<usize>,
    /// ctx-huffman: longest code in bits (7..=15).
    #[arg(long, default_value_t = WriteOptions::DEFAULT_CODE_LIMIT, hide = true,
          value_parser = clap::value_parser!(u8).range(
              i64::from(WriteOptions::MIN_CODE_LIMIT)..=i64::from(WriteOptions::MAX_CODE_LIMIT)))]
    pub code_limit: u8,
    /// ctx-huffman: log2 of the entries per sub-block (0..=12).
    #[arg(long, default_value_t = WriteOptions::DEFAULT_SUB_BLOCK_SHIFT, hide = true,
          value_parser = clap::value_parser!(u8).range(
              0..=i64::from(WriteOptions::MAX_SUB_BLOCK_SHIFT)))]
    pub sub_block_shift: u8,
}

/// Runs `oware recompress`.
///
/// # Errors
/// A table cannot be read or written, the directories are the same, or the destination's
/// manifest records other rules; another process writes the destination.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Before any thread starts: an interrupt removes the partial files written.
    crate::signals::clean_up_on_signals();
    crate::commands::common::start_workers(args.threads)?;
    if args.level.is_some() && args.compression != Compression::Zstd {
        return Err(super::common::Usage(
            "--level sets zstd's level: it needs --compression zstd".into(),
        )
        .into());
    }
    // Nothing is created for a source that has nothing to rewrite.
    crate::commands::common::existing_dir(&args.dir)?;
    let source = Manifest::load(&args.dir)?;
    let tiers = tiers_to_rewrite(&args, source.as_ref())?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    crate::commands::common::refuse_same_dir(&args.dir, &args.out, ("--out", "--dir"))?;
    // The destination is written under its lock; what a dead writer left there goes first,
    // and what this run leaves on an error goes too.
    let lock = TableDir::new(&args.out, crate::signals::cancel()).lock()?;
    lock.remove_temporaries();
    let result = rewrite(&args, source.as_ref(), tiers);
    if result.is_err() {
        lock.remove_temporaries();
    }
    result
}

/// The tiers `args` asks to rewrite of the source directory, whose manifest is `source`.
///
/// # Errors
/// There are none: no manifest and no `--tiers`.
fn tiers_to_rewrite(args: &Args, source: Option<&Manifest>) -> anyhow::Result<Vec<u8>> {
    let recorded: Vec<u8> = source
        .map(|m| m.tiers.keys().copied().collect())
        .unwrap_or_default();
    let tiers: Vec<u8> = match &args.tiers {
        None => recorded,
        Some(t) => {
            // An open range ends at the highest tier of the manifest, or of the files.
            let top = recorded
                .last()
                .copied()
                .or_else(|| super::common::tiers_present(&args.dir).last().copied())
                .unwrap_or(0);
            t.resolve(top)
        }
    };
    if tiers.is_empty() {
        bail!(
            "no tiers to rewrite (no manifest in {}; give --tiers)",
            args.dir.display()
        );
    }
    Ok(tiers)
}

/// The work of [`run`], under the destination's lock: rewrites `tiers` of the source
/// directory, whose manifest is `source`.
fn rewrite(args: &Args, source: Option<&Manifest>, tiers: Vec<u8>) -> anyhow::Result<ExitCode> {
    let opts = WriteOptions {
        block_entries: args.block_entries,
        level: args.level.unwrap_or(WriteOptions::DEFAULT_LEVEL),
        compression: args.compression,
        code_limit: args.code_limit,
        sub_block_shift: args.sub_block_shift,
    };
    let mut manifest = Manifest::load(&args.out)?;
    // A directory is never mixed: tables of another compression already there refuse it.
    super::generate::resolve_compression(
        &args.out,
        manifest.as_ref(),
        Some(args.compression),
        "--out",
    )?;
    for n in tiers {
        let path = tier_path(&args.dir, source, n);
        let t0 = Instant::now();
        let table = Table::open(&path)?;
        let rules = table.rules();
        let m = manifest.get_or_insert_with(|| {
            let mut m = Manifest::new(&rules);
            m.index = table.kind();
            m
        });
        if m.rules != rules || m.index != table.kind() {
            bail!(
                "{}: the manifest of {} records other rules or index",
                path.display(),
                args.out.display()
            );
        }
        // The new table may take up to one byte per position, plus its blocks' overhead.
        let blocks = table.len().div_ceil(u64::from(opts.block_entries.max(1)));
        let distance = source
            .and_then(|s| s.tiers.get(&n))
            .and_then(|e| e.distance.clone());
        let needed =
            table.len() + blocks * 80 + (64 << 10) + distance.as_ref().map_or(0, |d| d.file_size);
        super::common::check_disk(n, needed, &args.out)?;
        let scores = oware_solver::dir::read_table(&table)?;
        let read = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        // The table's and the manifest's temporaries, out of an interrupt's way.
        let writing = crate::signals::cancel().writing();
        let w = write_table_parallel(
            &TableDir::new(&args.out, crate::signals::cancel()),
            &rules,
            n,
            table.kind(),
            &scores,
            &opts,
            DEFAULT_BATCH_BLOCKS,
        )?;
        let stats = source
            .and_then(|s| s.tiers.get(&n))
            .and_then(|e| e.stats.clone());
        // The distance table (its code does not follow the scores' compression: ctx-huffman
        // in the context of the scores' values, or zstd as earlier versions wrote it) is
        // copied as it is.
        let distance = match distance {
            Some(d) => Some(copy_distances(&args.dir, &args.out, &d)?),
            None => None,
        };
        m.tiers.insert(
            n,
            TierEntry {
                verified: None,
                distance,
                source: None,
                file: w.file.clone(),
                entries: table.len(),
                file_size: w.file_size,
                checksum: w.checksum.clone(),
                stats,
            },
        );
        m.save(&args.out)?;
        drop(writing);
        crate::output::outln!(
            "tier {n}: {} entries; {} {:.3} -> {} {:.3} bits/position; read {read:.2} s, \
             written {:.2} s",
            table.len(),
            table.compression(),
            table.bits_per_entry(),
            args.compression,
            w.file_size as f64 * 8.0 / table.len().max(1) as f64,
            t1.elapsed().as_secs_f64()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Copies the distance table `d` of `from` into `to` (a temporary file renamed into place,
/// its checksum verified against the manifest's), and returns its entry there, not verified.
///
/// # Errors
/// The file cannot be read or written, or its checksum is not the manifest's.
fn copy_distances(from: &Path, to: &Path, d: &DistanceEntry) -> anyhow::Result<DistanceEntry> {
    let src = from.join(&d.file);
    let dst = to.join(&d.file);
    if src == dst {
        return Ok(d.clone());
    }
    let sum = Table::open(&src)?.verify_checksum()?;
    if sum != d.checksum {
        bail!(
            "{}: checksum {sum}, the manifest says {}",
            src.display(),
            d.checksum
        );
    }
    let tmp = to.join(format!("{}.tmp", d.file));
    std::fs::copy(&src, &tmp).with_context(|| format!("copying {}", src.display()))?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("syncing {}", tmp.display()))?;
    std::fs::rename(&tmp, &dst).with_context(|| format!("renaming {}", tmp.display()))?;
    Ok(DistanceEntry {
        verified: None,
        ..d.clone()
    })
}
