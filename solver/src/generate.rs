//! `generate`: solve tiers `0..=max` into a directory of tables, resumably.
//!
//! Each tier is solved with [`solve_tier`], written by [`write_table_parallel`] (temporary file,
//! fsync, rename) and then recorded in the manifest (also written atomically). A re-run
//! skips every tier the manifest records whose file's checksum verifies, and solves the
//! rest; a directory built under other rules is refused.
//!
//! The writer holds the directory's lock ([`DirLock`]) throughout: it first removes what a
//! dead writer left (temporaries, scratch), and on any error removes its own, so a directory
//! holds only complete tiers between runs.

use std::path::{Path, PathBuf};
use std::time::Instant;

use oware_db::format::Compression;
use oware_db::index::{IndexKind, TierIndex};
use oware_db::manifest::{tier_path, Manifest, TierEntry, TierStats};
use oware_db::table::Table;
use oware_db::write::WriteOptions;
use oware_db::Rules;
use thiserror::Error;

use crate::disk::{free_disk, generate_tier_disk};
use crate::distributed::{
    solve_tier_local, write_table_distributed, Comm, LocalComm, LowerShare, PartitionConfig,
    PartitionStats,
};
use crate::lock::{DirLock, LockError};
use crate::lower::LowerTiers;
use crate::memory::{
    available_memory, capture_window, exchange_memory, human_bytes, partition_memory, plan_tier,
    ExitPlan, TierPlan,
};
use crate::progress::Progress;
use crate::slice::{cut_slices, TableSource, SLICE_ALIGN};
use crate::tier::{solve_tier, solve_tier_sliced, AllocError, SolveError, SolveStats, Tuning};
use crate::write::{write_table_parallel, DEFAULT_BATCH_BLOCKS};

/// What can stop a generation.
#[derive(Debug, Error)]
pub enum GenerateError {
    /// Reading or writing tables or the manifest failed.
    #[error(transparent)]
    Db(#[from] oware_db::Error),
    /// The directory holds tables of other rules.
    #[error("{dir} holds tables built under `{found}`, not `{asked}`; use another directory or --rules {found}")]
    RulesMismatch {
        /// The directory.
        dir: PathBuf,
        /// The rules found there.
        found: String,
        /// The rules asked for.
        asked: String,
    },
    /// A tier needs more memory than the machine has available: on one process, its cells
    /// and frontier and the smallest slice of its lower tiers ([`plan_tier`]).
    #[error("tier {tier} needs {needed} bytes of memory ({positions} positions: {own} for its cells and frontier, {lower} for the smallest slice of its lower tiers) but only {available} are available; nothing was written for it")]
    TooLarge {
        /// The tier.
        tier: u8,
        /// Its positions.
        positions: u64,
        /// Bytes needed in all.
        needed: u64,
        /// Of which the tier's own arrays (over several ranks: this rank's part and the
        /// gathered tier).
        own: u64,
        /// Of which the lower tiers' scores (0 over several ranks, which keep side copies).
        lower: u64,
        /// Bytes available.
        available: u64,
    },
    /// An array of the solver could not be allocated.
    #[error(transparent)]
    Alloc(#[from] AllocError),
    /// Another process is writing the directory, or its lock cannot be taken.
    #[error(transparent)]
    Locked(#[from] LockError),
    /// Over several ranks, a rank's share of a tier does not fit in its memory: its cells,
    /// frontier and exchange buffers, and its share of the lower tiers.
    #[error("tier {tier} needs {} of memory on rank {rank} of {ranks} ({positions} positions in all: {} for this rank's cells, frontier and exchange buffers, {} for its share of the lower tiers) but only {} are available; nothing was written for it", human_bytes(*needed), human_bytes(*own), human_bytes(*lower), human_bytes(*available))]
    RankTooLarge {
        /// The tier.
        tier: u8,
        /// The rank that lacks memory (the lowest such rank).
        rank: usize,
        /// The ranks of the job.
        ranks: usize,
        /// Positions of the tier.
        positions: u64,
        /// Bytes needed on that rank.
        needed: u64,
        /// Of which its cells, frontier and exchange buffers.
        own: u64,
        /// Of which its share of the lower tiers.
        lower: u64,
        /// Bytes available on that rank.
        available: u64,
    },
    /// Over several ranks, another rank failed (it reports its own error); this one stops
    /// with it.
    #[error("rank {rank} failed")]
    RankFailed {
        /// The rank that failed (the lowest, if several did).
        rank: usize,
    },
    /// A tier needs more disk than its directory's filesystem has free.
    #[error("tier {tier} needs {} of disk in {}, {} free; nothing was written for it", human_bytes(*needed), dir.display(), human_bytes(*free))]
    NoSpace {
        /// The tier.
        tier: u8,
        /// The directory.
        dir: PathBuf,
        /// Bytes needed: the table's bound and the side copies.
        needed: u64,
        /// Bytes free.
        free: u64,
    },
    /// Creating the directory failed.
    #[error("cannot create {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Options of a generation.
#[derive(Clone, Debug)]
pub struct GenerateOptions {
    /// Directory of the tables and the manifest (created if missing).
    pub dir: PathBuf,
    /// Rules to solve under.
    pub rules: Rules,
    /// Highest tier to solve (0..=48).
    pub max_seeds: u8,
    /// Bytes of memory the generation may use; `None` reads the available memory of the
    /// machine (`MemAvailable` in `/proc/meminfo`, or the `OWARE_MEMORY_LIMIT` variable).
    pub memory_limit: Option<u64>,
    /// How the tables' blocks are compressed (default ctx-huffman).
    pub compression: Compression,
    /// Computes the exits of every tier solved in slices of at most this many bytes of
    /// lower-tier scores, whatever the memory (tests, measurements); `None`: slices only where
    /// the lower tiers do not fit ([`plan_tier`]). Single process only.
    pub slice_bytes: Option<u64>,
    /// Over several ranks, the most updates or capture look-ups a rank sends in one exchange
    /// ([`PartitionConfig::batch`]); `None`: the default. Small values force many rounds
    /// (tests, measurements).
    pub exchange_batch: Option<usize>,
}

/// What happened to one tier.
#[derive(Clone, Debug)]
pub enum TierReport {
    /// The tier was present, recorded, and its checksum verified.
    Skipped {
        /// The tier.
        tier: u8,
    },
    /// The tier was solved and written.
    Solved {
        /// The tier.
        tier: u8,
        /// What the solver counted.
        stats: SolvedStats,
        /// Seconds, solving and writing.
        seconds: f64,
    },
}

/// What the solver counted of a tier that [`generate_with`] solved: the figures of the
/// single-process solver, or those of the ranks.
#[derive(Clone, Debug, PartialEq)]
pub enum SolvedStats {
    /// Solved in this process alone by [`solve_tier`](crate::solve_tier).
    Single(SolveStats),
    /// Solved over several ranks by [`solve_tier_local`].
    Distributed(DistributedStats),
}

impl SolvedStats {
    /// Positions decided by finite play (any score, 0 included), over all ranks.
    pub fn finite(&self) -> u64 {
        match self {
            SolvedStats::Single(s) => s.finite,
            SolvedStats::Distributed(d) => d.finite,
        }
    }

    /// Positions scored 0 by endless play, over all ranks.
    pub fn endless(&self) -> u64 {
        match self {
            SolvedStats::Single(s) => s.endless,
            SolvedStats::Distributed(d) => d.endless,
        }
    }

    /// Positions whose exit was kept in a list apart, over all ranks.
    pub fn far_exits(&self) -> u64 {
        match self {
            SolvedStats::Single(s) => s.far_exits,
            SolvedStats::Distributed(d) => d.far_exits,
        }
    }

    /// Seconds computing exits and open counts (on this rank).
    pub fn init_seconds(&self) -> f64 {
        match self {
            SolvedStats::Single(s) => s.init_seconds,
            SolvedStats::Distributed(d) => d.local.init_seconds,
        }
    }

    /// Sweeps over the tier that computed the exits (1 when the lower tiers were held whole).
    pub fn exit_sweeps(&self) -> u64 {
        match self {
            SolvedStats::Single(s) => s.exit_sweeps,
            SolvedStats::Distributed(_) => 1,
        }
    }

    /// Bytes of the largest slice of lower-tier scores held at once (0 when held whole).
    pub fn slice_bytes(&self) -> u64 {
        match self {
            SolvedStats::Single(s) => s.slice_bytes,
            SolvedStats::Distributed(_) => 0,
        }
    }

    /// Seconds reading the slices of the lower tiers (part of the init; 0 when held whole).
    pub fn load_seconds(&self) -> f64 {
        match self {
            SolvedStats::Single(s) => s.load_seconds,
            SolvedStats::Distributed(_) => 0.0,
        }
    }

    /// Seconds of propagation, every level (on this rank, communication included).
    pub fn propagate_seconds(&self) -> f64 {
        match self {
            SolvedStats::Single(s) => s.scan_seconds + s.sweep_seconds,
            SolvedStats::Distributed(d) => d.local.propagate_seconds,
        }
    }
}

/// The counts of a tier solved over several ranks: the tier's, summed over the ranks, and
/// this rank's own.
#[derive(Clone, Debug, PartialEq)]
pub struct DistributedStats {
    /// Ranks the tier was split over.
    pub ranks: usize,
    /// Positions of the tier.
    pub positions: u64,
    /// Positions decided by finite play, over all ranks.
    pub finite: u64,
    /// Positions scored 0 by endless play, over all ranks.
    pub endless: u64,
    /// Positions whose exit was kept in a list apart, over all ranks.
    pub far_exits: u64,
    /// This rank's counts and timings (its rounds and exchanges are every rank's).
    pub local: PartitionStats,
}

/// Receives the events of a generation (progress inside tiers comes through [`Progress`]).
pub trait GenerateObserver: Progress {
    /// Tier `tier` with `positions` positions begins (`solve` false: it is being checked).
    fn tier_start(&self, tier: u8, positions: u64, solve: bool);
    /// Tier `tier` is finished.
    fn tier_done(&self, report: &TierReport);
    /// Tier `tier` will be solved under `plan`, its exits in `slices` sweeps (1 when its
    /// lower tiers are held whole). Called after [`GenerateObserver::tier_start`].
    fn tier_plan(&self, tier: u8, plan: &TierPlan, slices: u64) {
        let _ = (tier, plan, slices);
    }
}

/// Count of each score.
fn histogram(scores: &[i8]) -> std::collections::BTreeMap<i8, u64> {
    use rayon::prelude::*;
    let counts = scores
        .par_chunks(1 << 20)
        .map(|chunk| {
            let mut h = [0u64; 256];
            for &s in chunk {
                h[s as u8 as usize] += 1;
            }
            h
        })
        .reduce(
            || [0u64; 256],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                a
            },
        );
    (i8::MIN..=i8::MAX)
        .filter(|&s| counts[s as u8 as usize] > 0)
        .map(|s| (s, counts[s as u8 as usize]))
        .collect()
}

/// The scratch directory, inside the table directory, of the lower tiers' side copies.
pub const SCRATCH_DIR: &str = ".scratch";

/// Whether tier `tier` is recorded in the manifest and its file verifies.
fn tier_is_complete(dir: &Path, manifest: &Manifest, rules: &Rules, tier: u8) -> bool {
    let Some(entry) = manifest.tiers.get(&tier) else {
        return false;
    };
    let Ok(table) = Table::open(&manifest.tier_path(dir, tier)) else {
        return false;
    };
    table.rules() == *rules
        && table.tier() == tier
        && table.len() == entry.entries
        && table
            .verify_checksum()
            .is_ok_and(|sum| sum == entry.checksum)
}

/// Refuses a directory whose manifest or tables were built under other rules.
fn check_rules(
    dir: &Path,
    manifest: Option<&Manifest>,
    rules: &Rules,
) -> Result<(), GenerateError> {
    let mismatch = |found: String| GenerateError::RulesMismatch {
        dir: dir.to_path_buf(),
        found,
        asked: rules.to_string(),
    };
    if let Some(m) = manifest {
        if m.rules != *rules {
            return Err(mismatch(m.rules.to_string()));
        }
    }
    for tier in 0..=oware_db::MAX_SEEDS {
        let path = tier_path(dir, manifest, tier);
        if path.exists() {
            if let Ok(table) = Table::open(&path) {
                if table.rules() != *rules {
                    return Err(mismatch(table.rules().to_string()));
                }
            }
        }
    }
    Ok(())
}

/// Solves tiers `0..=opts.max_seeds` into `opts.dir`, skipping the tiers already complete.
/// Runs on the current rayon thread pool, in this process alone.
///
/// # Errors
/// [`GenerateError`] when the directory holds other rules, a tier does not fit in memory
/// (by the estimate, or because an allocation fails), or a file cannot be read or written. Tiers finished before the error stay recorded.
pub fn generate(
    opts: &GenerateOptions,
    observer: &dyn GenerateObserver,
) -> Result<Vec<TierReport>, GenerateError> {
    generate_with(&LocalComm, opts, observer)
}

/// [`generate`] over the ranks of `comm`: every rank calls it with the same options and a
/// directory they all share. With one rank this is exactly [`generate`]. Over several, each
/// tier is split by index range over the ranks ([`solve_tier_local`]), and stays split: a
/// rank keeps its share of every solved tier that a capture of a tier still to solve reaches
/// ([`LowerShare`]; read back from the tables on a resumed run), captures are asked of the
/// rank that owns their child, and the table is written from the shares
/// ([`write_table_distributed`]) by rank 0, which also writes the manifest. No rank ever holds
/// a whole tier. MPI is called only from the calling thread, between the parallel phases.
///
/// # Errors
/// As [`generate`]; over several ranks also [`GenerateError::RankTooLarge`] when a rank's
/// share does not fit its memory, and [`GenerateError::RankFailed`] on the ranks that stop
/// because another failed. An error that one rank meets alone (an allocation, a file that
/// only it reads) leaves the others waiting in their next collective call: the caller ends
/// the job (under MPI, `MPI_Abort`).
pub fn generate_with(
    comm: &dyn Comm,
    opts: &GenerateOptions,
    observer: &dyn GenerateObserver,
) -> Result<Vec<TierReport>, GenerateError> {
    if comm.size() > 1 {
        return generate_ranks(comm, opts, observer);
    }
    let dir = &opts.dir;
    std::fs::create_dir_all(dir).map_err(|source| GenerateError::CreateDir {
        path: dir.clone(),
        source,
    })?;
    // Holding the lock proves any earlier writer dead: what it left is removed first.
    let lock = DirLock::acquire(dir)?;
    lock.remove_temporaries();
    let loaded = Manifest::load(dir)?;
    check_rules(dir, loaded.as_ref(), &opts.rules)?;
    let mut manifest = loaded.unwrap_or_else(|| Manifest::new(&opts.rules));

    let complete: Vec<bool> = (0..=opts.max_seeds)
        .map(|t| tier_is_complete(dir, &manifest, &opts.rules, t))
        .collect();
    // Each tier's memory plan, made once, against the memory available now: the tiers whose
    // lower tiers fit are solved from side copies, the others from slices decoded from the
    // tables.
    let limit = opts.memory_limit.unwrap_or_else(available_memory);
    let plans: Vec<Result<TierPlan, TierPlan>> = (0..=opts.max_seeds)
        .map(|t| plan_tier(&opts.rules, t, limit, opts.slice_bytes))
        .collect();
    let resident = |t: u8| plans[t as usize].is_ok_and(|p| p.exits == ExitPlan::Resident);
    // A tier gets a side copy when a tier above it, still to solve, reads it from one; the
    // copy is dropped (unmapped, its pages out of the resident set) once the last of them is
    // solved: `last_reader[t]`.
    let last_reader = last_readers(&opts.rules, opts.max_seeds, &complete, resident);
    let side_copied: Vec<bool> = last_reader.iter().map(Option::is_some).collect();

    // Lower tiers are memory-mapped side copies in a scratch directory, rebuilt from the
    // verified tables (or written from fresh scores) on every run, removed at the end.
    let scratch = dir.join(SCRATCH_DIR);
    // On an error (or a panic) from here on, this run's scratch and temporaries go.
    let mut cleanup = Cleanup {
        scratch: Some(scratch.as_path()),
        lock: Some(&lock),
    };
    std::fs::create_dir_all(&scratch).map_err(|source| GenerateError::CreateDir {
        path: scratch.clone(),
        source,
    })?;
    let side_copy = |lower: &mut LowerTiers, tier: u8, scores: &[i8]| {
        let path = scratch.join(format!("tier-{tier:02}.scores"));
        // A file created in the scratch directory while an interrupt's cleanup removes it
        // would keep the directory: the write is one of the steps that cleanup waits for.
        let _writing = crate::lock::writing();
        lower
            .push_mapped(&path, scores)
            .map_err(|e| GenerateError::Db(oware_db::Error::io(&path, e)))
    };
    let mut lower = LowerTiers::new();
    let mut reports = Vec::new();
    for tier in 0..=opts.max_seeds {
        let positions = TierIndex::new(tier, IndexKind::Reachable).size();
        let needed_later = side_copied[tier as usize];
        let solve = !complete[tier as usize];
        check_disk(
            comm,
            dir,
            tier,
            generate_tier_disk(positions, solve, u64::from(needed_later)),
        )?;
        if complete[tier as usize] {
            observer.tier_start(tier, positions, false);
            if needed_later {
                let table = Table::open(&manifest.tier_path(dir, tier))?;
                side_copy(&mut lower, tier, &crate::read_table(&table)?)?;
            } else {
                lower.push_absent();
            }
            drop_side_copies(&mut lower, &last_reader, tier);
            let report = TierReport::Skipped { tier };
            observer.tier_done(&report);
            reports.push(report);
            continue;
        }
        let plan = plans[tier as usize].map_err(|p| GenerateError::TooLarge {
            tier,
            positions,
            needed: p.needed(),
            own: p.own,
            lower: p.lower,
            available: limit,
        })?;
        let slices = match plan.exits {
            ExitPlan::Resident => None,
            ExitPlan::Sliced { slice_bytes } => Some(slice_bytes),
        };
        if slices.is_some() {
            // The side copies kept for a later tier are not read by this one: their pages
            // leave the resident set, which the plan fills with slices.
            lower.release_pages();
        }
        observer.tier_start(tier, positions, true);
        observer.tier_plan(
            tier,
            &plan,
            slices.map_or(1, |b| {
                cut_slices(capture_window(&opts.rules, tier), b, SLICE_ALIGN).len() as u64
            }),
        );
        let start = Instant::now();
        let (scores, stats) = if let Some(slice_bytes) = slices {
            // The lower tiers are all written and recorded by now: read them from the tables.
            let source = TableSource::new(dir);
            solve_tier_sliced(
                &opts.rules,
                tier,
                &source,
                slice_bytes,
                observer,
                Tuning::default(),
            )?
        } else {
            solve_tier(&opts.rules, tier, &lower, observer)?
        };
        let stats = SolvedStats::Single(stats);
        observer.start(crate::Phase::Write, positions);
        // The table's and the manifest's temporaries, out of an interrupt's way.
        let writing = crate::lock::writing();
        let written = write_table_parallel(
            dir,
            &opts.rules,
            tier,
            IndexKind::Reachable,
            scores.as_slice(),
            &write_options(opts),
            DEFAULT_BATCH_BLOCKS,
        )?;
        observer.advance(positions);
        record(
            &mut manifest,
            tier,
            &written,
            histogram(scores.as_slice()),
            &stats,
            start,
            rayon::current_num_threads(),
        );
        manifest.save(dir)?;
        drop(writing);
        let seconds = start.elapsed().as_secs_f64();
        if needed_later {
            side_copy(&mut lower, tier, scores.as_slice())?;
        } else {
            lower.push_absent();
        }
        drop(scores);
        drop_side_copies(&mut lower, &last_reader, tier);
        let report = TierReport::Solved {
            tier,
            stats,
            seconds,
        };
        observer.tier_done(&report);
        reports.push(report);
    }
    drop(lower);
    cleanup.scratch = None;
    cleanup.lock = None;
    // The side copies are only needed while generating; a failure to remove them is harmless.
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(reports)
}

/// The options of the tables written.
fn write_options(opts: &GenerateOptions) -> WriteOptions {
    WriteOptions {
        compression: opts.compression,
        ..WriteOptions::default()
    }
}

/// Records a tier just written in the manifest (not saved yet).
fn record(
    manifest: &mut Manifest,
    tier: u8,
    written: &oware_db::write::WrittenTable,
    histogram: std::collections::BTreeMap<i8, u64>,
    stats: &SolvedStats,
    start: Instant,
    threads: usize,
) {
    manifest.tiers.insert(
        tier,
        TierEntry {
            verified: None,
            file: written.file.clone(),
            entries: written_entries(tier),
            file_size: written.file_size,
            checksum: written.checksum.clone(),
            stats: Some(TierStats {
                histogram,
                finite: stats.finite(),
                endless: stats.endless(),
                seconds: start.elapsed().as_secs_f64(),
                threads,
            }),
        },
    );
}

/// Entries of a tier's table (the reachable index).
fn written_entries(tier: u8) -> u64 {
    TierIndex::new(tier, IndexKind::Reachable).size()
}

/// For each tier `t` up to `max`, the highest tier still to solve that reads `t` from what is
/// held (`held(m)`: tier `m` reads its lower tiers from what is held, not from slices), if
/// any: what is held of `t` can go once that tier is solved.
fn last_readers(
    rules: &Rules,
    max: u8,
    complete: &[bool],
    held: impl Fn(u8) -> bool,
) -> Vec<Option<u8>> {
    (0..=max)
        .map(|t| {
            (t + 1..=max).rev().find(|&m| {
                !complete[m as usize] && held(m) && capture_window(rules, m).contains(&t)
            })
        })
        .collect()
}

/// [`generate_with`] over several ranks (see there): every tier split over the ranks, the
/// lower tiers too.
fn generate_ranks(
    comm: &dyn Comm,
    opts: &GenerateOptions,
    observer: &dyn GenerateObserver,
) -> Result<Vec<TierReport>, GenerateError> {
    let dir = &opts.dir;
    let (rank, ranks) = (comm.rank(), comm.size());
    let root = rank == 0;
    let created = std::fs::create_dir_all(dir).map_err(|source| GenerateError::CreateDir {
        path: dir.clone(),
        source,
    });
    agree(comm, created)?;
    // Only the writing rank locks. Holding the lock proves any earlier writer dead: what it
    // left is removed before anyone writes (after the barrier below).
    let lock = lock_dir(comm, dir)?;
    if let Some(lock) = &lock {
        lock.remove_temporaries();
    }
    let loaded = Manifest::load(dir)
        .map_err(GenerateError::from)
        .and_then(|m| check_rules(dir, m.as_ref(), &opts.rules).map(|()| m));
    let loaded = agree(comm, loaded)?;
    let mut manifest = loaded.unwrap_or_else(|| Manifest::new(&opts.rules));
    // Rank 0 checks the tables; every rank learns what it found.
    let complete: Vec<bool> = (0..=opts.max_seeds)
        .map(|t| root && tier_is_complete(dir, &manifest, &opts.rules, t))
        .collect();
    let complete = agree_flags(comm, &complete);
    let last_reader = last_readers(&opts.rules, opts.max_seeds, &complete, |_| true);
    let limit = opts.memory_limit.unwrap_or_else(available_memory);
    let config = PartitionConfig {
        batch: opts
            .exchange_batch
            .unwrap_or(PartitionConfig::default().batch)
            .max(1),
        ..PartitionConfig::default()
    };
    // Nobody writes before every rank has read the directory.
    comm.barrier();
    // On an error (or a panic) from here on, rank 0 removes the temporaries.
    let mut cleanup = Cleanup {
        scratch: None,
        lock: lock.as_ref(),
    };
    let mut share = LowerShare::new(rank, ranks);
    let mut reports = Vec::new();
    for tier in 0..=opts.max_seeds {
        let positions = written_entries(tier);
        let needed_later = last_reader[tier as usize].is_some();
        let solve = !complete[tier as usize];
        check_disk(comm, dir, tier, generate_tier_disk(positions, solve, 0))?;
        if !solve {
            observer.tier_start(tier, positions, false);
            if needed_later {
                let loaded =
                    Table::open(&manifest.tier_path(dir, tier)).and_then(|t| share.load(tier, &t));
                agree(comm, loaded)?;
            }
            drop_shares(&mut share, &last_reader, tier);
            let report = TierReport::Skipped { tier };
            observer.tier_done(&report);
            reports.push(report);
            continue;
        }
        let config = PartitionConfig {
            batch: tier_batch(config.batch, positions, ranks),
            ..config
        };
        // This rank's share: its cells, frontier and exchange buffers, and the lower tiers
        // it holds. Every rank checks its own; all stop if one does not fit.
        let own = partition_memory(positions, ranks) + exchange_memory(config.batch);
        let held = share.bytes();
        let short = own + held > limit;
        let first_short = comm.all_reduce_max(if short { u64::MAX - rank as u64 } else { 0 });
        if first_short > 0 {
            let short_rank = (u64::MAX - first_short) as usize;
            if short {
                return Err(GenerateError::RankTooLarge {
                    tier,
                    rank,
                    ranks,
                    positions,
                    needed: own + held,
                    own,
                    lower: held,
                    available: limit,
                });
            }
            return Err(GenerateError::RankFailed { rank: short_rank });
        }
        observer.tier_start(tier, positions, true);
        let start = Instant::now();
        let (local, p) = solve_tier_local(comm, &opts.rules, tier, &share, observer, &config)?;
        let stats = SolvedStats::Distributed(DistributedStats {
            ranks,
            positions,
            finite: comm.all_reduce_sum(p.finite),
            endless: comm.all_reduce_sum(p.endless),
            far_exits: comm.all_reduce_sum(p.far_exits),
            local: p,
        });
        // The tiers this one was the last to read go before the table is encoded.
        drop_shares(&mut share, &last_reader, tier);
        let hist = gather_histogram(comm, &local.scores);
        if root {
            observer.start(crate::Phase::Write, positions);
        }
        let writing = root.then(crate::lock::writing);
        let written = write_table_distributed(
            comm,
            dir,
            &opts.rules,
            tier,
            &local,
            &write_options(opts),
            DEFAULT_BATCH_BLOCKS,
        );
        let written = agree(comm, written)?;
        let saved = match (written, hist) {
            (Some(written), Some(hist)) => {
                observer.advance(positions);
                let threads = rayon::current_num_threads() * ranks;
                record(&mut manifest, tier, &written, hist, &stats, start, threads);
                manifest.save(dir)
            }
            _ => Ok(()),
        };
        agree(comm, saved)?;
        drop(writing);
        let seconds = start.elapsed().as_secs_f64();
        if needed_later {
            agree(comm, share.insert(tier, local))?;
        }
        let report = TierReport::Solved {
            tier,
            stats,
            seconds,
        };
        observer.tier_done(&report);
        reports.push(report);
    }
    cleanup.lock = None;
    comm.barrier();
    if root {
        let _ = std::fs::remove_dir_all(dir.join(SCRATCH_DIR));
    }
    Ok(reports)
}

/// The most updates or look-ups a rank sends per exchange for a tier of `positions`
/// positions over `ranks` ranks: `batch`, but at most a 256th of a rank's positions (and not
/// under 2^12), so that the buffers of a small tier stay small beside its cells.
pub(crate) fn tier_batch(batch: usize, positions: u64, ranks: usize) -> usize {
    let cap = (positions / ranks.max(1) as u64 / 256).max(1 << 12);
    batch.min(usize::try_from(cap).unwrap_or(usize::MAX))
}

/// Drops the shares of the tiers whose last reader is `done` (or below).
fn drop_shares(share: &mut LowerShare, last_reader: &[Option<u8>], done: u8) {
    for (t, last) in last_reader.iter().enumerate() {
        if last.is_none_or(|m| m <= done) {
            share.remove(t as u8);
        }
    }
}

/// The histogram of a tier's scores over every rank's share, on rank 0 (`None` elsewhere).
/// A collective.
fn gather_histogram(comm: &dyn Comm, scores: &[i8]) -> Option<std::collections::BTreeMap<i8, u64>> {
    let mine = histogram(scores);
    let bytes: Vec<u8> = mine
        .iter()
        .flat_map(|(&s, &c)| std::iter::once(s as u8).chain(c.to_le_bytes()))
        .collect();
    let parts = comm.gather_bytes(&bytes)?;
    let mut all = std::collections::BTreeMap::new();
    for part in parts {
        for rec in part.chunks_exact(9) {
            let count = u64::from_le_bytes(rec[1..].try_into().unwrap_or_default());
            *all.entry(rec[0] as i8).or_insert(0) += count;
        }
    }
    Some(all)
}

/// Rank 0's flags on every rank. A collective.
fn agree_flags(comm: &dyn Comm, flags: &[bool]) -> Vec<bool> {
    let bytes: Vec<u8> = flags.iter().map(|&f| u8::from(f)).collect();
    let all = comm.all_gather_bytes(&bytes);
    all.first()
        .map(|f| f.iter().map(|&b| b != 0).collect())
        .unwrap_or_default()
}

/// `result` on every rank if it is `Ok` everywhere; otherwise its own error on a rank that
/// failed and [`GenerateError::RankFailed`] on the others. A collective.
fn agree<T, E: Into<GenerateError>>(
    comm: &dyn Comm,
    result: Result<T, E>,
) -> Result<T, GenerateError> {
    let result = result.map_err(Into::into);
    if comm.size() == 1 {
        return result;
    }
    let failed = comm.all_reduce_max(match &result {
        Ok(_) => 0,
        Err(_) => u64::MAX - comm.rank() as u64,
    });
    match result {
        Ok(_) if failed > 0 => Err(GenerateError::RankFailed {
            rank: (u64::MAX - failed) as usize,
        }),
        r => r,
    }
}

/// Drops the side copies of the tiers whose last reader is `done` (or below): no tier still
/// to solve reads them.
fn drop_side_copies(lower: &mut LowerTiers, last_reader: &[Option<u8>], done: u8) {
    for (t, last) in last_reader.iter().enumerate().take(lower.len()) {
        if last.is_some_and(|m| m <= done) && lower.holds(t as u8) {
            lower.set(t as u8, None);
        }
    }
}

impl From<SolveError> for GenerateError {
    fn from(e: SolveError) -> Self {
        match e {
            SolveError::Alloc(e) => GenerateError::Alloc(e),
            SolveError::Lower(e) => GenerateError::Db(e),
        }
    }
}

/// Takes the lock of `dir` on rank 0 (the writer), and tells every rank whether it got it, so
/// that all return the error together.
fn lock_dir(comm: &dyn Comm, dir: &Path) -> Result<Option<DirLock>, GenerateError> {
    let mine = (comm.rank() == 0).then(|| DirLock::acquire(dir));
    if comm.size() == 1 {
        return Ok(mine.transpose()?);
    }
    // 0: locked; p + 1: held by process p; MAX - 1: held by another process; MAX: failed.
    let code = match &mine {
        None | Some(Ok(_)) => 0,
        Some(Err(LockError::Held { pid: Some(p), .. })) => u64::from(*p) + 1,
        Some(Err(LockError::Held { pid: None, .. })) => u64::MAX - 1,
        Some(Err(LockError::Io { .. })) => u64::MAX,
    };
    let code = comm.all_reduce_max(code);
    let dir = dir.to_path_buf();
    match mine {
        Some(lock) => Ok(Some(lock?)),
        None if code == 0 => Ok(None),
        None if code == u64::MAX => Err(LockError::Io {
            path: dir.join(crate::lock::LOCK_FILE),
            source: std::io::Error::other("rank 0 could not lock it"),
        }
        .into()),
        None => Err(LockError::Held {
            dir,
            pid: u32::try_from(code - 1).ok(),
        }
        .into()),
    }
}

/// Refuses tier `tier` when it needs more than the `needed` bytes the filesystem of `dir`
/// has free (as rank 0 measures it, so that every rank decides alike). Where the free space
/// cannot be read, nothing is refused.
fn check_disk(comm: &dyn Comm, dir: &Path, tier: u8, needed: u64) -> Result<(), GenerateError> {
    let free = if comm.rank() == 0 {
        free_disk(dir).unwrap_or(u64::MAX)
    } else {
        0
    };
    let free = if comm.size() > 1 {
        comm.all_reduce_max(free)
    } else {
        free
    };
    if needed > free {
        return Err(GenerateError::NoSpace {
            tier,
            dir: dir.to_path_buf(),
            needed,
            free,
        });
    }
    Ok(())
}

/// Removes, when dropped armed, this rank's scratch and (on the rank holding the lock) the
/// temporaries of the directory: what a failed run would otherwise leave behind.
struct Cleanup<'a> {
    scratch: Option<&'a Path>,
    lock: Option<&'a DirLock>,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        if let Some(scratch) = self.scratch {
            let _ = std::fs::remove_dir_all(scratch);
        }
        if let Some(lock) = self.lock {
            lock.remove_temporaries();
        }
    }
}
