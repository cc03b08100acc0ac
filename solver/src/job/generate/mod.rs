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
use oware_db::manifest::{DistanceEntry, Manifest, TierEntry, TierStats};
use oware_db::table::Table;
use oware_db::write::WriteOptions;
use oware_db::Rules;

pub(super) mod error;
mod held;

pub use error::GenerateError;

use super::ranks::{agree, agree_flags, check_disk, gather_histogram, lock_dir};
use crate::comm::Comm;
use crate::dir::disk::{densest, Measured, TierDisk};
use crate::dir::write::{write_distances_parallel, write_distances_spilled, DEFAULT_BATCH_BLOCKS};
use crate::dir::write_ranked::write_distances_distributed;
use crate::dir::{Cancel, DirLock, TableDir};
use crate::job::place::Placement;
use crate::memory::TierPlan;
use crate::progress::Progress;
use crate::solve::partitioned::PartitionStats;
use crate::solve::SolveStats;
use held::{Distances, Held, Solved};

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
    /// machine ([`available_memory`](crate::memory::available_memory)).
    pub memory_limit: Option<u64>,
    /// How the tables' blocks are compressed (default ctx-huffman).
    pub compression: Compression,
    /// Computes the exits of every tier solved in slices of at most this many bytes of
    /// lower-tier scores, whatever the memory (tests, measurements); `None`: slices only where
    /// the lower tiers do not fit ([`plan_tier`](crate::memory::plan_tier)). Single process only.
    pub slice_bytes: Option<u64>,
    /// Keeps every tier's distances out of core in windows of at most this many positions
    /// (rounded down to whole [`WINDOW_ALIGN`](crate::tier::WINDOW_ALIGN)s), whatever the memory
    /// (tests, measurements); `None`: out of core only where they do not fit beside the
    /// tier's cells. Single process only.
    pub distance_window: Option<u64>,
    /// Over several ranks, the most updates or capture look-ups a rank sends in one exchange
    /// ([`PartitionConfig::batch`](crate::distributed::PartitionConfig::batch)); `None`: the
    /// default. Small values force many rounds (tests, measurements).
    pub exchange_batch: Option<usize>,
    /// Stops the generation between writing steps and removes its temporaries when
    /// cancelled ([`Cancel::cancel`]).
    pub cancel: Cancel,
    /// Writes each tier's distance table beside its scores (docs/RULES.md, *The distance to
    /// conversion*) where the tier's lower tiers are held whole in one process and the
    /// distances fit the memory limit; `false`: scores only.
    pub distances: bool,
}

impl Default for GenerateOptions {
    /// What `oware generate` does with no option: tiers 0..=12 under `abapa` into
    /// `tables`, ctx-huffman, with distances, planned for the machine's available memory.
    fn default() -> Self {
        GenerateOptions {
            dir: PathBuf::from("tables"),
            rules: Rules::default(),
            max_seeds: 12,
            memory_limit: None,
            compression: Compression::default(),
            slice_bytes: None,
            distance_window: None,
            exchange_batch: None,
            cancel: Cancel::new(),
            distances: true,
        }
    }
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
        stats: Box<SolvedStats>,
        /// Seconds, solving and writing.
        seconds: f64,
        /// Its distance table.
        distances: TierDistances,
    },
}

/// Whether a tier solved got its distance table.
#[derive(Clone, Debug, PartialEq)]
pub enum TierDistances {
    /// Computed and written.
    Written {
        /// The longest distance, in plies.
        max: u8,
        /// Seconds computing them (with `rounds`, the rounds that decided the scores too).
        seconds: f64,
        /// Rounds over all levels when they were decided with the scores; `None` for a
        /// separate pass.
        rounds: Option<u64>,
        /// Runs of the propagation when they were kept out of core, one per window of the
        /// tier; `None` when they were held whole.
        runs: Option<u64>,
        /// The distance table's size in bytes.
        file_size: u64,
    },
    /// Not computed, for the reason given (one line): the tier's lower tiers are read in
    /// slices or split over ranks, the distances do not fit the memory limit, or one is too
    /// long for a distance table.
    Skipped(String),
    /// Not asked for ([`GenerateOptions::distances`] is `false`).
    Off,
}

/// What the solver counted of a tier that [`generate`] solved: the figures of the
/// single-process solver, or those of the ranks.
#[derive(Clone, Debug, PartialEq)]
pub enum SolvedStats {
    /// Solved in this process alone by [`solve_tier`](crate::tier::solve_tier).
    Single(SolveStats),
    /// Solved over several ranks by [`solve_tier_local`](crate::distributed::solve_tier_local).
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
    /// Tier `tier` has a table, but not a complete one, which is solved again: `why` says
    /// what is wrong with it, naming the file (`tier-12.owt fails its checksum (…)`, `…
    /// is not recorded in the manifest`). Called on the writing rank, before
    /// [`GenerateObserver::tier_start`].
    fn tier_replaced(&self, tier: u8, why: &str) {
        let _ = (tier, why);
    }
}

fn table_path(dir: &Path, tier: u8) -> PathBuf {
    dir.join(format!("tier-{tier:02}.owt"))
}

/// The distance table of tier `tier`, solved whole in this process, from its distances
/// held in memory or kept out of core.
fn write_whole_distances(
    dir: &TableDir,
    rules: &Rules,
    tier: u8,
    scores: &crate::solve::TierScores,
) -> Result<oware_db::write::WrittenTable, oware_db::Error> {
    if let Some(spilled) = scores.spilled() {
        return write_distances_spilled(
            dir,
            rules,
            tier,
            spilled,
            scores.as_slice(),
            DEFAULT_BATCH_BLOCKS,
        );
    }
    let bytes = scores.distances().ok().flatten().unwrap_or_default();
    write_distances_parallel(
        dir,
        rules,
        tier,
        IndexKind::Reachable,
        bytes,
        scores.as_slice(),
        DEFAULT_BATCH_BLOCKS,
    )
}

/// Whether tier `tier` is complete: recorded in the manifest, its table (and distance table,
/// where one is recorded) holding that tier under `rules` with the entries and checksum
/// recorded. `Err` says why not where a table is there to be replaced (a damaged one, or one
/// the manifest does not record), `Err(None)` where there is none.
fn tier_is_complete(
    dir: &Path,
    manifest: &Manifest,
    rules: &Rules,
    tier: u8,
) -> Result<(), Option<String>> {
    let Some(entry) = manifest.tiers.get(&tier) else {
        let path = table_path(dir, tier);
        return Err(path
            .exists()
            .then(|| format!("{} is not recorded in the manifest", file_name(&path))));
    };
    let path = dir.join(&entry.file);
    let table = Table::open(&path).map_err(|e| Some(e.to_string()))?;
    let name = file_name(&path);
    if table.rules() != *rules || table.tier() != tier {
        return Err(Some(format!(
            "{name} holds tier {} under `{}`, not tier {tier} under `{rules}`",
            table.tier(),
            table.rules()
        )));
    }
    if table.len() != entry.entries {
        return Err(Some(format!(
            "{name} holds {} entries, the manifest records {}",
            table.len(),
            entry.entries
        )));
    }
    match table.verify_checksum() {
        Err(_) => {
            return Err(Some(format!(
                "{name} fails its checksum (its bytes do not hash to the one it stores)"
            )))
        }
        Ok(sum) if sum != entry.checksum => {
            return Err(Some(format!(
                "{name} fails its checksum (it has {}…, the manifest records {}…)",
                &sum[..sum.len().min(8)],
                &entry.checksum[..entry.checksum.len().min(8)]
            )))
        }
        Ok(_) => {}
    }
    if let Some(d) = &entry.distance {
        let path = dir.join(&d.file);
        let t = Table::open(&path).map_err(|e| Some(e.to_string()))?;
        let name = file_name(&path);
        if t.values() != oware_db::format::Values::Distances
            || t.tier() != tier
            || t.rules() != *rules
        {
            return Err(Some(format!(
                "{name} is not the distance table of tier {tier} under `{rules}`"
            )));
        }
        match t.verify_checksum() {
            Ok(sum) if sum == d.checksum => {}
            Ok(_) => {
                return Err(Some(format!(
                    "{name} does not match the manifest's checksum"
                )))
            }
            Err(_) => {
                return Err(Some(format!(
                    "{name} fails its checksum (its bytes do not hash to the one it stores)"
                )))
            }
        }
    }
    Ok(())
}

/// The last component of `path`, for the log.
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    )
}

/// Refuses a directory whose manifest or tables were built under other rules: other rules
/// than the directory's (its manifest's, else its lowest table's) are a mismatch naming the
/// directory's, and tables of other rules in a directory of the rules asked for are named,
/// each file with its rules, so that every refusal points the same way.
fn check_rules(
    dir: &Path,
    manifest: Option<&Manifest>,
    rules: &Rules,
) -> Result<(), GenerateError> {
    let mismatch = |found: Rules| GenerateError::RulesMismatch {
        dir: dir.to_path_buf(),
        found,
        asked: *rules,
    };
    if let Some(m) = manifest {
        if m.rules != *rules {
            return Err(mismatch(m.rules));
        }
    }
    let mut files = Vec::new();
    let mut lowest = true;
    for tier in 0..=oware_db::MAX_SEEDS {
        let path = table_path(dir, tier);
        if path.exists() {
            if let Ok(table) = Table::open(&path) {
                if table.rules() != *rules {
                    // Without a manifest, the lowest table's rules are the directory's, as
                    // every reader takes them: other rules asked for are a mismatch.
                    if manifest.is_none() && lowest {
                        return Err(mismatch(table.rules()));
                    }
                    files.push((path, table.rules()));
                }
                lowest = false;
            }
        }
    }
    if files.is_empty() {
        return Ok(());
    }
    Err(GenerateError::StrayTables {
        dir: dir.to_path_buf(),
        rules: *rules,
        manifest: manifest.is_some(),
        files,
    })
}

/// Solves tiers `0..=opts.max_seeds` into `opts.dir` over the ranks of `comm`, skipping the
/// tiers already complete: one process is one rank ([`LocalComm`](crate::distributed::LocalComm)).
///
/// Every rank calls it with the same options and a directory they all share. Rank 0 holds
/// the directory's lock, checks the tables already there, writes the manifest and removes
/// what a failed run leaves; every decision it takes alone reaches the other ranks through
/// a collective, so all take the same path. What differs with the number of ranks is where
/// the lower tiers are kept between tiers (`Held`): one process keeps memory-mapped side
/// copies, or reads slices from the tables when they do not fit ([`plan_tier`](crate::memory::plan_tier)); each of
/// several ranks keeps its share of every tier a capture of a later tier reaches
/// ([`LowerShare`](crate::distributed::LowerShare); read back from the tables on a resumed run), asks captures of the rank
/// that owns their child, and writes its blocks of the table ([`write_table_distributed`](crate::distributed::write_table_distributed)).
/// No rank ever holds a whole tier. MPI is called only from the calling thread, between the
/// parallel phases; the rayon phases run on the current thread pool.
///
/// # Errors
/// [`GenerateError`] when the directory holds other rules, a tier does not fit in memory
/// (by the plan, or because an allocation fails), its disk does not have room for it, or a
/// file cannot be read or written; over several ranks also [`GenerateError::Rank`]: with
/// [`RankError::TooLarge`](crate::RankError::TooLarge) when a rank's share does not fit its
/// memory, and [`RankError::Failed`](crate::RankError::Failed) on the ranks that stop
/// because another failed. Tiers finished before the error stay recorded.
/// An error that one rank meets alone (an allocation, a file that only it reads) leaves the
/// others waiting in their next collective call: the caller ends the job (under MPI,
/// `MPI_Abort`).
pub fn generate(
    comm: &dyn Comm,
    opts: &GenerateOptions,
    observer: &dyn GenerateObserver,
) -> Result<Vec<TierReport>, GenerateError> {
    let dir = &opts.dir;
    let table_dir = TableDir::new(dir, &opts.cancel);
    let (rank, ranks) = (comm.rank(), comm.size());
    let root = rank == 0;
    let created = table_dir
        .create()
        .map_err(|source| GenerateError::CreateDir {
            path: dir.clone(),
            source,
        });
    agree(comm, created)?;
    // Only the writing rank locks. Holding the lock proves any earlier writer dead: what it
    // left is removed before anyone writes (after the barrier below).
    let lock = lock_dir(comm, &table_dir)?;
    if let Some(lock) = &lock {
        lock.remove_temporaries();
    }
    let loaded = table_dir
        .manifest()
        .map_err(GenerateError::from)
        .and_then(|m| check_rules(dir, m.as_ref(), &opts.rules).map(|()| m));
    let loaded = agree(comm, loaded)?;
    let mut manifest = loaded.unwrap_or_else(|| Manifest::new(&opts.rules));
    // Rank 0 checks the tables; every rank learns what it found.
    let checked: Vec<Result<(), Option<String>>> = (0..=opts.max_seeds)
        .map(|t| {
            if root {
                tier_is_complete(dir, &manifest, &opts.rules, t)
            } else {
                Err(None)
            }
        })
        .collect();
    let complete: Vec<bool> = checked.iter().map(Result::is_ok).collect();
    let complete = agree_flags(comm, &complete);
    let placement = Placement::new(comm, opts.memory_limit, opts.exchange_batch);
    let mut held = Held::new(&placement, opts, &table_dir);
    // What is held of a tier goes once the last tier still to solve that reads it is solved.
    let last_reader = last_readers(&opts.rules, opts.max_seeds, &complete, |t| {
        held.reads_held(t)
    });
    // Nobody writes before every rank has read the directory.
    comm.barrier();
    // On an error (or a panic) from here on, this rank's scratch and rank 0's temporaries go.
    let mut cleanup = Cleanup {
        scratch: held.scratch(),
        lock: lock.as_ref(),
    };
    // Each rank creates its own scratch directory: every rank stops if one cannot.
    agree(comm, held.create_scratch())?;
    let mut reports = Vec::new();
    for tier in 0..=opts.max_seeds {
        let positions = written_entries(tier);
        let needed_later = last_reader[tier as usize].is_some();
        let solve = !complete[tier as usize];
        let side_copies = held.side_copies(needed_later);
        let disk = TierDisk {
            positions,
            solve,
            side_copies,
            scores: densest(manifest.tiers.values().map(|e| Measured {
                bytes: e.file_size,
                positions: e.entries,
            })),
            distances: opts.distances,
            distances_measured: densest(manifest.tiers.values().filter_map(|e| {
                e.distance.as_ref().map(|d| Measured {
                    bytes: d.file_size,
                    positions: e.entries,
                })
            })),
            spilled: solve && opts.distances && held.spills_distances(&placement, opts, tier),
        };
        check_disk(comm, &table_dir, tier, disk.bytes())?;
        if !solve {
            observer.tier_start(tier, positions, false);
            held.keep_table(comm, &table_dir, tier, needed_later)?;
            held.drop_read(&last_reader, tier);
            let report = TierReport::Skipped { tier };
            observer.tier_done(&report);
            reports.push(report);
            continue;
        }
        if let Some(Err(Some(why))) = checked.get(tier as usize) {
            observer.tier_replaced(tier, why);
        }
        let (solved, stats, start) = held.solve(&placement, opts, tier, observer)?;
        let distances = if opts.distances {
            Held::distances(comm, &solved, &stats)
        } else {
            Distances::Off
        };
        // The tiers this one was the last to read go before the table is encoded.
        held.drop_read(&last_reader, tier);
        let hist = gather_histogram(comm, solved.scores());
        if root {
            observer.start(crate::progress::Phase::Write, positions);
        }
        // The table's and the manifest's temporaries, out of an interrupt's way.
        let writing = lock.as_ref().map(DirLock::writing);
        let written = agree(comm, held.write(comm, &table_dir, opts, tier, &solved))?;
        // Until the manifest records the tier, its tables in place are not complete tiers: a
        // failure (or an interrupt) before that removes them.
        let mut unrecorded = Unrecorded(Vec::new());
        if let Some(w) = &written {
            unrecorded.0.push(table_dir.path().join(&w.file));
        }
        let distances = match distances {
            Distances::Held {
                max,
                seconds,
                rounds,
                runs,
            } => {
                let file = match &solved {
                    Solved::Share(local, Ok(Some(bytes))) => write_distances_distributed(
                        comm,
                        &table_dir,
                        &opts.rules,
                        tier,
                        local,
                        bytes,
                        DEFAULT_BATCH_BLOCKS,
                    ),
                    Solved::Share(..) => Err(oware_db::Error::InvalidState(format!(
                        "tier {tier}: the distances were lost before they were written"
                    ))),
                    Solved::Whole(scores) => {
                        write_whole_distances(&table_dir, &opts.rules, tier, scores).map(Some)
                    }
                };
                let file = agree(comm, file)?;
                if let Some(file) = &file {
                    unrecorded.0.push(table_dir.path().join(&file.file));
                }
                match file {
                    Some(file) => Distances::Written(DistanceEntry {
                        file: file.file,
                        file_size: file.file_size,
                        checksum: file.checksum,
                        max: u16::from(max),
                        seconds,
                        rounds: Some(rounds),
                        runs,
                        verified: None,
                    }),
                    // Rank 0 records them.
                    None => Distances::Held {
                        max,
                        seconds,
                        rounds,
                        runs,
                    },
                }
            }
            other => other,
        };
        let saved = match (written, hist) {
            (Some(written), Some(hist)) => {
                observer.advance(positions);
                let threads = rayon::current_num_threads() * ranks;
                record(&mut manifest, tier, &written, hist, &stats, start, threads);
                if let (Distances::Written(d), Some(e)) =
                    (&distances, manifest.tiers.get_mut(&tier))
                {
                    e.distance = Some(d.clone());
                }
                manifest.save(dir)
            }
            _ => Ok(()),
        };
        agree(comm, saved)?;
        unrecorded.0.clear();
        drop(writing);
        let seconds = start.elapsed().as_secs_f64();
        held.keep(comm, &table_dir, tier, solved, needed_later)?;
        let report = TierReport::Solved {
            tier,
            stats: Box::new(stats),
            seconds,
            distances: distances.report(),
        };
        observer.tier_done(&report);
        reports.push(report);
    }
    drop(held);
    cleanup.scratch = None;
    cleanup.lock = None;
    comm.barrier();
    // The side copies are only needed while generating; a failure to remove them is harmless.
    if root {
        let _ = std::fs::remove_dir_all(table_dir.scratch());
    }
    Ok(reports)
}

/// The options of the tables written.
pub(super) fn write_options(opts: &GenerateOptions) -> WriteOptions {
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
            distance: None,
            source: None,
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
pub(super) fn written_entries(tier: u8) -> u64 {
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
            (t + 1..=max)
                .rev()
                .find(|&m| !complete[m as usize] && held(m) && rules.capture_window(m).contains(&t))
        })
        .collect()
}

/// Tables renamed into place whose tier the manifest does not record yet: removed when
/// dropped non-empty (the write that follows them failed).
struct Unrecorded(Vec<PathBuf>);

impl Drop for Unrecorded {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Removes, when dropped armed, this rank's scratch and (on the rank holding the lock) the
/// temporaries of the directory: what a failed run would otherwise leave behind.
struct Cleanup<'a> {
    scratch: Option<PathBuf>,
    lock: Option<&'a DirLock>,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        if let Some(scratch) = &self.scratch {
            let _ = std::fs::remove_dir_all(scratch);
            // A rank's scratch is inside the directory's: that goes with the last rank's.
            if let Some(parent) = scratch.parent() {
                if parent.file_name() == Some(std::ffi::OsStr::new(crate::dir::SCRATCH_DIR)) {
                    let _ = std::fs::remove_dir(parent);
                }
            }
        }
        if let Some(lock) = self.lock {
            lock.remove_temporaries();
        }
    }
}
