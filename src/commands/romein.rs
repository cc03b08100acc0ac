//! `oware export` and `oware import`: tables to and from the file format of the Romein-Bal
//! Awari databases (`scores.N`, one signed byte per position in their order;
//! [`oware_db::romein::RomeinOrder`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use oware_db::format::tier_file_name;
use oware_db::index::IndexKind;
use oware_db::manifest::{tier_path, Manifest, TierEntry};
use oware_db::romein::{RomeinOrder, ABSENT_TIER};
use oware_db::table::Table;
use oware_db::write::WriteOptions;
use oware_db::{Rules, MAX_SEEDS};
use oware_solver::TableDir;

use super::common::{check_disk, resolve_rules, tiers_present, Format};

/// Arguments of `oware export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// The format to write.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Directory of the tables.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// Directory to write `scores.N` into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Tiers to export: `N`, `A..=B`, `A..`, `..=B`, separated by commas, e.g. `0,16`
    /// (default: every tier present but 47).
    #[arg(long, value_name = "TIERS", value_parser = super::common::parse_tiers)]
    pub tiers: Option<super::common::TierSelection>,
    /// Export tables of other rules than `awari` too (their scores mean something else).
    #[arg(long)]
    pub force: bool,
    /// Worker threads, 1..=1024 (default: one per core).
    #[arg(long, value_parser = super::common::parse_threads)]
    pub threads: Option<usize>,
}

/// Arguments of `oware import`.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// The format to read.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Directory holding `scores.N` files.
    #[arg(long)]
    pub from: PathBuf,
    /// Directory to write the tables into (created if missing). A tier it holds already,
    /// recorded in its manifest with a checksum that verifies, is kept: a rerun after an
    /// interruption resumes.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// Rules the scores were computed under (the files do not say).
    #[arg(long, default_value = "awari")]
    pub rules: Rules,
    /// Worker threads, 1..=1024 (default: one per core).
    #[arg(long, value_parser = super::common::parse_threads)]
    pub threads: Option<usize>,
}

/// The file of tier `n` in the Romein-Bal format.
fn scores_file(dir: &Path, n: u8) -> PathBuf {
    dir.join(format!("scores.{n}"))
}

/// Bits per position of an imported table, for the projection printed before an import:
/// the ctx-huffman tables of the larger tiers take 3.55 to 3.76 (docs/BENCHMARKS.md).
const PROJECTED_BITS: f64 = 3.7;

/// The least range of a tier that `export` or `import` works in: smaller would read the
/// source too many times.
const LEAST_RANGE: u64 = 1 << 20;

/// The positions of tier `n` (`size` of them) that `what` (export, import) converts at a
/// time: all of them when they fit in the memory available (`OWARE_MEMORY_LIMIT`, or the
/// system's) beside `overhead` bytes and the process (an import holds two bytes per position
/// of a range, an export one), or else the most that do; `OWARE_SLICE_BYTES` sets it
/// (tests, measurements). Refused when not even [`LEAST_RANGE`] fits, before anything is
/// written for the tier.
fn ranges(n: u8, size: u64, overhead: u64, what: &str) -> anyhow::Result<u64> {
    if let Some(r) = crate::commands::env::get().slice_bytes()? {
        return Ok(r.clamp(1, size.max(1)));
    }
    // `import` holds a range of scores and its encoded blocks.
    let per_range = match what {
        "import" => 2,
        _ => 1,
    };
    let available = crate::commands::env::get().memory()?;
    let budget = available.saturating_sub(oware_solver::memory::PROCESS_BYTES + overhead);
    let least = LEAST_RANGE.min(size);
    let needed = per_range * least;
    if budget < needed {
        bail!(
            "tier {n} needs at least {} of memory to {what} ({size} positions, in ranges of \
             {} at least, beside {} for the process and its buffers), {} available; \
             nothing was written for it",
            oware_solver::memory::human_bytes(
                needed + overhead + oware_solver::memory::PROCESS_BYTES
            ),
            oware_solver::memory::human_bytes(least),
            oware_solver::memory::human_bytes(overhead + oware_solver::memory::PROCESS_BYTES),
            oware_solver::memory::human_bytes(available)
        );
    }
    Ok((budget / per_range).min(size))
}

/// Says, for a tier read in more than one range, how many.
///
/// # Errors
/// Standard output cannot be written.
fn say_ranges(n: u8, size: u64, range: u64) -> std::io::Result<()> {
    let count = size.div_ceil(range.max(1));
    if count > 1 {
        crate::output::outln!(
            "tier {n}: {count} ranges of {} positions, each from a full read of the source",
            range.max(1)
        )?;
    }
    Ok(())
}

/// Whether tier `n` of `dir` is imported already: the manifest records it, and its table
/// holds tier `n` under `rules` with the reachable index, as many entries as recorded, and
/// the checksum recorded (recomputed over the whole file).
fn tier_is_complete(dir: &Path, manifest: &Manifest, rules: &Rules, n: u8) -> bool {
    let Some(entry) = manifest.tiers.get(&n) else {
        return false;
    };
    let Ok(table) = Table::open(&dir.join(&entry.file)) else {
        return false;
    };
    table.rules() == *rules
        && table.tier() == n
        && table.kind() == IndexKind::Reachable
        && table.len() == entry.entries
        && table
            .verify_checksum()
            .is_ok_and(|sum| sum == entry.checksum)
}

/// Runs `oware export`.
///
/// # Errors
/// The tables cannot be read, are not under `awari` (without `--force`), the files cannot
/// be written (the disk is checked before each tier), `--out` is `--dir`, or standard output
/// cannot be written.
pub fn run_export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let Format::Romein = args.format;
    // Before any thread starts: an interrupt removes the partial file being written.
    crate::signals::clean_up_on_signals();
    crate::commands::common::start_workers(args.threads)?;
    let opening = || format!("opening the tables in {}", args.dir.display());
    crate::commands::common::existing_dir(&args.dir)?;
    let present = tiers_present(&args.dir);
    let tiers: Vec<u8> = match &args.tiers {
        None => present
            .iter()
            .copied()
            .filter(|&n| n != ABSENT_TIER)
            .collect(),
        // An open range ends at the highest tier present.
        Some(t) => t.resolve(present.last().copied().unwrap_or(0)),
    };
    if tiers.is_empty() {
        bail!("no tables to export in {}", args.dir.display());
    }
    let manifest = Manifest::load(&args.dir).with_context(opening)?;
    let rules = resolve_rules(&args.dir, manifest.as_ref(), None).with_context(opening)?;
    if rules != Rules::AWARI && !args.force {
        bail!(
            "{} holds tables under rules `{rules}`; the Romein-Bal databases are under `awari`, \
             and their readers would take these scores for awari scores (--force exports them \
             anyway)",
            args.dir.display()
        );
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    crate::commands::common::refuse_same_dir(&args.dir, &args.out, ("--out", "--dir"))?;
    let lock = TableDir::new(&args.out, crate::signals::cancel()).lock()?;
    lock.remove_temporaries();
    // The files written are recorded in a manifest beside them, each with the checksum of
    // the table it came from, so that a rerun keeps what it would write again (for `awari`
    // only: a manifest there says the files hold awari scores).
    let mut record = match Manifest::load(&args.out)? {
        Some(m) => Some(m),
        None => (rules == Rules::AWARI).then(|| Manifest::new(&Rules::AWARI)),
    }
    .filter(|m| m.rules == rules);
    let mut kept = 0;
    for n in tiers {
        let t0 = Instant::now();
        let path = tier_path(&args.dir, manifest.as_ref(), n);
        if !path.is_file() {
            bail!("missing tier {n}: no table {}", path.display());
        }
        let table = Table::open(&path)?;
        if table.rules() != rules {
            bail!(
                "{}: rules `{}`, the directory's are `{rules}`",
                path.display(),
                table.rules()
            );
        }
        let size = RomeinOrder::new(n).size();
        let source = manifest
            .as_ref()
            .and_then(|m| m.tiers.get(&n))
            .map_or_else(|| table.checksum_hex(), |e| e.checksum.clone());
        let file = scores_file(&args.out, n);
        if record
            .as_ref()
            .and_then(|m| m.tiers.get(&n))
            .is_some_and(|e| exported_before(&file, n, e, &source))
        {
            crate::output::outln!(
                "tier {n}: kept ({} was exported from this table before and is unchanged)",
                file.display()
            )?;
            kept += 1;
            continue;
        }
        check_disk(n, size, &args.out)?;
        // One range of the file and one chunk of decoded scores.
        let overhead = oware_solver::dir::export_overhead(n);
        let range = ranges(n, size, overhead, "export")?;
        say_ranges(n, size, range)?;
        let dir = TableDir::new(&args.out, crate::signals::cancel());
        let checksum = oware_solver::dir::export_romein(&dir, &table, &file, range)
            .with_context(|| format!("writing {}", file.display()))?;
        if let Some(m) = &mut record {
            m.tiers.insert(
                n,
                TierEntry {
                    file: oware_db::romein::file_name(n),
                    entries: size,
                    file_size: size,
                    checksum,
                    stats: None,
                    verified: None,
                    distance: None,
                    source: Some(source),
                },
            );
            let _writing = lock.writing();
            m.save(&args.out)?;
        }
        crate::output::outln!(
            "tier {n}: {} ({size} bytes) in {:.2} s",
            file.display(),
            t0.elapsed().as_secs_f64()
        )?;
    }
    if kept > 0 {
        crate::output::outln!("{kept} tiers kept from before")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether `file` is what exporting tier `n` of the table with checksum `source` writes:
/// the manifest beside it records it (`entry`) as exported from that table, and the file
/// has the recorded length and checksum (recomputed over the whole file).
fn exported_before(file: &Path, n: u8, entry: &TierEntry, source: &str) -> bool {
    entry.source.as_deref() == Some(source)
        && entry.file == oware_db::romein::file_name(n)
        && Table::open_romein(file, n)
            .is_ok_and(|t| t.file_size() == entry.file_size && t.checksum_hex() == entry.checksum)
}

/// Runs `oware import`.
///
/// # Errors
/// A file is missing, of the wrong size or holds a value out of range; the directory holds
/// other rules or another index; a table cannot be written; another process writes the
/// directory; `--dir` is `--from`; standard output cannot be written.
pub fn run_import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let Format::Romein = args.format;
    // Before any thread starts: an interrupt removes the partial files written.
    crate::signals::clean_up_on_signals();
    crate::commands::common::start_workers(args.threads)?;
    let tiers: Vec<u8> = (0..=MAX_SEEDS)
        .filter(|&n| scores_file(&args.from, n).is_file())
        .collect();
    if tiers.is_empty() {
        bail!("no scores.N files in {}", args.from.display());
    }
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("creating {}", args.dir.display()))?;
    crate::commands::common::refuse_same_dir(&args.from, &args.dir, ("--dir", "--from"))?;
    let lock = TableDir::new(&args.dir, crate::signals::cancel()).lock()?;
    lock.remove_temporaries();
    let result = import(&args, &tiers);
    if result.is_err() {
        lock.remove_temporaries();
    }
    result
}

/// The work of [`run_import`], under the directory's lock.
fn import(args: &ImportArgs, tiers: &[u8]) -> anyhow::Result<ExitCode> {
    let rules = args.rules;
    let mut manifest = match Manifest::load(&args.dir)? {
        Some(m) => {
            if m.rules != rules {
                bail!(
                    "{} holds tables under rules `{}`, not `{rules}`",
                    args.dir.display(),
                    m.rules
                );
            }
            if m.index != IndexKind::Reachable {
                bail!(
                    "{} holds tables of the `{}` index; imported tables use the `reachable` one",
                    args.dir.display(),
                    m.index.name()
                );
            }
            m
        }
        None => Manifest::new(&rules),
    };
    // Tables of other rules are never written over, with a manifest or without.
    for n in tiers_present(&args.dir) {
        let path = args.dir.join(tier_file_name(n));
        if let Ok(t) = Table::open(&path) {
            if t.rules() != rules {
                bail!(
                    "{} holds tables under rules `{}` ({}), not `{rules}`",
                    args.dir.display(),
                    t.rules(),
                    path.display()
                );
            }
        }
    }
    // The compression of the tables already there: a directory is never mixed.
    let opts = WriteOptions {
        compression: super::generate::resolve_compression(
            &args.dir,
            Some(&manifest),
            None,
            "--dir",
        )?,
        ..WriteOptions::default()
    };
    let positions: u64 = tiers.iter().map(|&n| RomeinOrder::new(n).size()).sum();
    crate::output::outln!(
        "importing tiers {} of {}: {positions} positions ({} of files); the tables will take \
         about {} at {PROJECTED_BITS} bits per position",
        super::common::tier_ranges(tiers),
        args.from.display(),
        oware_solver::memory::human_bytes(positions),
        oware_solver::memory::human_bytes((positions as f64 * PROJECTED_BITS / 8.0) as u64)
    )?;
    let mut kept = Vec::new();
    for &n in tiers {
        let t0 = Instant::now();
        // Resumed as `generate` resumes: a tier the manifest records, whose table verifies,
        // is kept; any other (never written, or cut short before its manifest entry) is
        // written again.
        if tier_is_complete(&args.dir, &manifest, &rules, n) {
            crate::output::outln!(
                "tier {n}: kept ({} is recorded in the manifest and its checksum verifies)",
                args.dir.join(&manifest.tiers[&n].file).display()
            )?;
            kept.push(n);
            continue;
        }
        let file = scores_file(&args.from, n);
        let order = RomeinOrder::new(n);
        let size = order.size();
        let found = std::fs::metadata(&file)
            .with_context(|| format!("reading {}", file.display()))?
            .len();
        if found != size {
            bail!(
                "{}: {found} bytes; a Romein-Bal file of tier {n} has {size}, one per position",
                file.display()
            );
        }
        let blocks = size.div_ceil(u64::from(opts.block_entries));
        let needed = size + blocks * 80 + (64 << 10);
        check_disk(n, needed, &args.dir)?;
        let source = Table::open_romein(&file, n)?;
        // One range of scores and its encoded blocks (at most as large), in whole blocks: a
        // tier that fits is one range, its last block short.
        let be = u64::from(opts.block_entries.max(1));
        let fits = ranges(n, size, 0, "import")?;
        let range = if fits >= size {
            size.div_ceil(be).max(1) * be
        } else {
            (fits / be).max(1) * be
        };
        say_ranges(n, size, range)?;
        let writing = crate::signals::cancel().writing();
        let w = oware_solver::dir::import_romein(
            &TableDir::new(&args.dir, crate::signals::cancel()),
            &rules,
            &source,
            &opts,
            range,
        )?;
        manifest.tiers.insert(
            n,
            TierEntry {
                verified: None,
                distance: None,
                source: None,
                file: w.file.clone(),
                entries: size,
                file_size: w.file_size,
                checksum: w.checksum.clone(),
                stats: None,
            },
        );
        manifest.save(&args.dir)?;
        drop(writing);
        crate::output::outln!(
            "tier {n}: {} -> {} ({} bytes) in {:.2} s",
            file.display(),
            args.dir.join(&w.file).display(),
            w.file_size,
            t0.elapsed().as_secs_f64()
        )?;
    }
    let before = if kept.is_empty() {
        String::new()
    } else {
        format!(" ({} kept from before)", kept.len())
    };
    crate::output::outln!(
        "imported {} tiers{before} under rules {rules}; `oware verify --deep --dir {}` \
         re-proves them",
        tiers.len(),
        super::common::shell_path(&args.dir)
    )?;
    Ok(ExitCode::SUCCESS)
}
