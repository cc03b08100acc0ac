//! `oware export` and `oware import`: tables to and from the file format of the Romein-Bal
//! Awari databases (`scores.N`, one signed byte per position in their order;
//! [`oware_db::romein::RomeinOrder`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use oware_db::format::tier_file_name;
use oware_db::index::{IndexKind, TierIndex};
use oware_db::manifest::{tier_path, Manifest, TierEntry};
use oware_db::romein::RomeinOrder;
use oware_db::table::Table;
use oware_db::write::WriteOptions;
use oware_db::{Rules, MAX_SEEDS};
use oware_solver::{write_table_parallel, DirLock, DEFAULT_BATCH_BLOCKS};
use rayon::prelude::*;

use super::common::{check_disk, resolve_rules};

/// A foreign database format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The Romein-Bal Awari databases: `scores.N`, one signed byte per position.
    Romein,
}

/// The tier the Romein-Bal databases leave out: no game under their rules reaches it.
const ABSENT_TIER: u8 = 47;

/// Positions per parallel chunk of a tier.
const CHUNK: usize = 1 << 20;

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
    /// Tiers to export, e.g. `0,16` (default: every tier present but 47).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u8).range(0..=48))]
    pub tiers: Vec<u8>,
    /// Export tables of other rules than `awari` too (their scores mean something else).
    #[arg(long)]
    pub force: bool,
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
    /// Directory to write the tables into (created if missing; it must not hold the tiers
    /// imported).
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// Rules the scores were computed under (the files do not say).
    #[arg(long, default_value = "awari")]
    pub rules: Rules,
}

/// The tiers with a table in `dir`.
fn tiers_present(dir: &Path) -> Vec<u8> {
    (0..=MAX_SEEDS)
        .filter(|&n| dir.join(tier_file_name(n)).is_file())
        .collect()
}

/// The file of tier `n` in the Romein-Bal format.
fn scores_file(dir: &Path, n: u8) -> PathBuf {
    dir.join(format!("scores.{n}"))
}

/// Refuses to `what` (export, import) tier `n` of `size` positions unless `memory` bytes are
/// available, before anything is written for it.
fn check_memory(n: u8, memory: u64, size: u64, what: &str) -> anyhow::Result<()> {
    let available = oware_solver::available_memory();
    if memory > available {
        bail!(
            "tier {n} needs {} of memory to {what} ({size} positions, two bytes each), {} \
             available; nothing was written for it",
            oware_solver::human_bytes(memory),
            oware_solver::human_bytes(available)
        );
    }
    Ok(())
}

/// Runs `oware export`.
///
/// # Errors
/// The tables cannot be read, are not under `awari` (without `--force`), or the files cannot
/// be written (the disk is checked before each tier).
pub fn run_export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let Format::Romein = args.format;
    let opening = || format!("opening the tables in {}", args.dir.display());
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
    let tiers = if args.tiers.is_empty() {
        let t: Vec<u8> = tiers_present(&args.dir)
            .into_iter()
            .filter(|&n| n != ABSENT_TIER)
            .collect();
        if t.is_empty() {
            bail!("no tables in {}", args.dir.display());
        }
        t
    } else {
        args.tiers.clone()
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
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
        let order = RomeinOrder::new(n);
        let size = order.size();
        check_disk(n, size, &args.out)?;
        // The table's scores and the file's bytes, one byte per position each.
        let memory = table.len() + size;
        check_memory(n, memory, size, "export")?;
        let ours = oware_solver::read_table(&table)?;
        let index = TierIndex::new(n, table.kind());
        let len = usize::try_from(size).context("a tier too large for this machine")?;
        let mut out = vec![0u8; len];
        out.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                let walk = order.walk((c * CHUNK) as u64);
                for (o, p) in chunk.iter_mut().zip(walk) {
                    // Every position of the order is in the table's index (the reachable index
                    // holds exactly these; the dense one more).
                    *o = ours[index.rank_unchecked(&p) as usize] as u8;
                }
            });
        let file = scores_file(&args.out, n);
        let tmp = file.with_extension(format!("{n}.tmp"));
        let written = std::fs::write(&tmp, &out)
            .and_then(|()| std::fs::rename(&tmp, &file))
            .with_context(|| format!("writing {}", file.display()));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written?;
        println!(
            "tier {n}: {} ({size} bytes) in {:.2} s",
            file.display(),
            t0.elapsed().as_secs_f64()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `oware import`.
///
/// # Errors
/// A file is missing, of the wrong size or holds a value out of range; the directory holds
/// other rules or already holds a tier imported; a table cannot be written; another process
/// writes the directory.
pub fn run_import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let Format::Romein = args.format;
    // Before any thread starts: an interrupt removes the partial files written.
    crate::signals::clean_up_on_signals();
    let tiers: Vec<u8> = (0..=MAX_SEEDS)
        .filter(|&n| scores_file(&args.from, n).is_file())
        .collect();
    if tiers.is_empty() {
        bail!("no scores.N files in {}", args.from.display());
    }
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("creating {}", args.dir.display()))?;
    let lock = DirLock::acquire(&args.dir)?;
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
    let present = tiers_present(&args.dir);
    if let Some(n) = tiers.iter().find(|n| present.contains(n)) {
        bail!(
            "{} already holds tier {n}; import into a directory without it",
            args.dir.display()
        );
    }
    let opts = WriteOptions::default();
    for &n in tiers {
        let t0 = Instant::now();
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
        // The file's bytes and the table's scores, one byte per position each.
        let memory = 2 * size;
        check_memory(n, memory, size, "import")?;
        let theirs = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
        if theirs.len() as u64 != size {
            bail!("{}: changed while it was read", file.display());
        }
        if let Some(g) = theirs.iter().position(|&b| (b as i8).unsigned_abs() > n) {
            bail!(
                "{}: the byte at offset {g} (position {}) holds {}, outside -{n}..={n}",
                file.display(),
                order.unrank(g as u64),
                theirs[g] as i8
            );
        }
        let index = TierIndex::new(n, IndexKind::Reachable);
        let mut ours = vec![0i8; theirs.len()];
        ours.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                let start = (c * CHUNK) as u64;
                let cursor = index.cursor(start, start + chunk.len() as u64);
                for (o, p) in chunk.iter_mut().zip(cursor) {
                    // The reachable index holds exactly the positions of the order.
                    let g = order
                        .rank(&p)
                        .expect("a position of the reachable index has a Goedel number");
                    *o = theirs[g as usize] as i8;
                }
            });
        drop(theirs);
        let writing = oware_solver::writing();
        let w = write_table_parallel(
            &args.dir,
            &rules,
            n,
            IndexKind::Reachable,
            &ours,
            &opts,
            DEFAULT_BATCH_BLOCKS,
        )?;
        manifest.tiers.insert(
            n,
            TierEntry {
                verified: None,
                file: w.file.clone(),
                entries: size,
                file_size: w.file_size,
                checksum: w.checksum.clone(),
                stats: None,
            },
        );
        manifest.save(&args.dir)?;
        drop(writing);
        println!(
            "tier {n}: {} -> {} ({} bytes) in {:.2} s",
            file.display(),
            args.dir.join(&w.file).display(),
            w.file_size,
            t0.elapsed().as_secs_f64()
        );
    }
    println!(
        "imported {} tiers under rules {rules}; `oware verify --deep --dir {}` re-proves them",
        tiers.len(),
        args.dir.display()
    );
    Ok(ExitCode::SUCCESS)
}
