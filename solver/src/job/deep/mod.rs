//! Deep verification of a directory of tables, lowest tier first: every table of the
//! range and below checked ([`check_tiers`]), then read, and every stored score of the range
//! re-proved from the tiers below it ([`verify_deep`]).
//!
//! On one process each tier of the range is planned like a tier of `generate`
//! ([`plan_verify`](crate::memory::plan_verify)): its own 1.25 bytes per position, plus its capture
//! window held whole in memory when both fit, or else read from the tables in slices (beside
//! 1.125 bytes per position: the frontier's bit is allocated after them). The
//! tiers a later tier reads from memory are kept as they are verified; the others are
//! dropped. Once a tier is sliced, the tiers above it are too. Over several ranks each rank
//! holds its share of each tier, as generation splits it.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::time::Instant;

use oware_db::check::TierCheck;
use oware_db::manifest::Manifest;
use oware_db::table::Table;
use oware_db::Rules;
use thiserror::Error;

use crate::comm::Comm;
use crate::dir::check::{check_tiers, CheckObserver};
use crate::dir::{Cancel, DirLock, TableDir};
use crate::job::place::Placement;
use crate::job::rank_error::RankError;
use crate::job::ranks::agree_flags;
use crate::memory::human_bytes;
use crate::progress::Progress;
use crate::verify::VerifyReport;

mod held;

use held::Held;

/// What can stop a deep verification before it starts. Failed checks are not errors: they
/// are in the [`DeepReport`].
#[derive(Debug, Error)]
pub enum VerifyError {
    /// The manifest cannot be read.
    #[error(transparent)]
    Db(#[from] oware_db::Error),
    /// An array of the verifier could not be allocated.
    #[error(transparent)]
    Alloc(#[from] crate::error::AllocError),
    /// The verification needs more memory than is available.
    #[error(
        "deep verification of tier {tier} needs {} of memory ({needed} bytes: {own} for its \
         scores and verification state, of which {beside} beside {lower} for the smallest \
         slice of its lower tiers; {process} for the process and its buffers) but only {} \
         ({available} bytes) are available",
        human_bytes(*needed),
        human_bytes(*available)
    )]
    TooLarge {
        /// The first tier of the range that does not fit.
        tier: u8,
        /// Bytes needed ([`plan_verify`](crate::memory::plan_verify)).
        needed: u64,
        /// Of which the tier's own scores and state ([`verify_memory`](crate::memory::verify_memory)).
        own: u64,
        /// Of `own`, the bytes held beside a slice of the lower tiers (without the frontier;
        /// see [`verify_frontier_bytes`](crate::memory::verify_frontier_bytes)).
        beside: u64,
        /// Of which the smallest slice of its lower tiers.
        lower: u64,
        /// Of which the process itself and its buffers
        /// ([`PROCESS_BYTES`](crate::memory::PROCESS_BYTES)).
        process: u64,
        /// Bytes available.
        available: u64,
    },
    /// Over several ranks, this rank's part of a tier does not fit in its memory, or
    /// another rank failed.
    #[error(transparent)]
    Rank(#[from] RankError),
}

impl From<crate::error::SolveError> for VerifyError {
    fn from(e: crate::error::SolveError) -> Self {
        match e {
            crate::error::SolveError::Alloc(a) => VerifyError::Alloc(a),
            crate::error::SolveError::Lower(d) => VerifyError::Db(d),
            crate::error::SolveError::Scratch { path, source, .. } => {
                VerifyError::Db(oware_db::Error::io(&path, source))
            }
        }
    }
}

/// Options of a deep verification.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// Directory of the tables and the manifest.
    pub dir: PathBuf,
    /// Rules the tables must have been built with.
    pub rules: Rules,
    /// The tiers to re-prove; the tiers below are checked and trusted.
    pub tiers: RangeInclusive<u8>,
    /// Bytes of memory the verification may use; `None` reads the available memory
    /// ([`available_memory`](crate::memory::available_memory)).
    pub memory_limit: Option<u64>,
    /// Read the lower tiers of every tier in slices of at most that many bytes, whatever the
    /// memory (tests, measurements); `None`: slices only when the window does not fit.
    pub slice_bytes: Option<u64>,
    /// Read every tier's distances in windows of at most this many positions (rounded down
    /// to a multiple of [`WINDOW_ALIGN`](crate::tier::WINDOW_ALIGN)), whatever the memory (tests,
    /// measurements); `None`: in windows only where they do not fit beside the scores. One
    /// process only: over several ranks each rank reads its own range's distances whole.
    pub distance_window: Option<u64>,
    /// Re-prove the tiers of the range that the manifest records as verified, too.
    pub again: bool,
    /// Over several ranks ([`verify_deep`](crate::verify_deep)), the most look-ups or updates a rank sends
    /// in one exchange; `None`: the default.
    pub exchange_batch: Option<usize>,
    /// Stops the recording of verified tiers when cancelled ([`Cancel::cancel`]).
    pub cancel: Cancel,
}

impl Default for VerifyOptions {
    /// What `oware verify --deep` does over a default generation: tiers 0..=12 of `tables`
    /// under `abapa`, those recorded as re-proved skipped, planned for the machine's
    /// available memory.
    fn default() -> Self {
        VerifyOptions {
            dir: PathBuf::from("tables"),
            rules: Rules::default(),
            tiers: 0..=12,
            memory_limit: None,
            slice_bytes: None,
            distance_window: None,
            again: false,
            exchange_batch: None,
            cancel: Cancel::new(),
        }
    }
}

/// What became of one tier.
#[derive(Debug)]
pub enum TierVerdict {
    /// The tier failed its plain checks: nothing was re-proved.
    CheckFailed(Box<TierCheck>),
    /// The tier passed its checks but a block of its table cannot be decoded.
    Unreadable {
        /// The tier.
        tier: u8,
        /// What is wrong with the table.
        error: oware_db::Error,
    },
    /// A tier below the range: checksum verified, scores trusted. Its table is decoded only
    /// where a tier of the range holds it; the slices of the others read it themselves.
    Trusted {
        /// The tier.
        tier: u8,
        /// Its positions.
        positions: u64,
        /// Its checksum, recomputed.
        checksum: String,
    },
    /// A tier of the range, re-proved: [`VerifyReport::is_ok`] says whether it passed.
    Verified(VerifyReport),
    /// A tier of the range that the manifest records as re-proved with the checksum it has
    /// now (and every tier below it re-proved too): not re-proved again.
    Recorded {
        /// The tier.
        tier: u8,
        /// Its positions.
        positions: u64,
        /// Its checksum, recomputed, equal to the recorded one.
        checksum: String,
    },
}

impl TierVerdict {
    /// The tier.
    pub fn tier(&self) -> u8 {
        match self {
            TierVerdict::CheckFailed(c) => c.tier,
            TierVerdict::Unreadable { tier, .. }
            | TierVerdict::Trusted { tier, .. }
            | TierVerdict::Recorded { tier, .. } => *tier,
            TierVerdict::Verified(r) => r.tier,
        }
    }

    /// Whether the tier passed: trusted, or re-proved without a mismatch.
    pub fn is_ok(&self) -> bool {
        match self {
            TierVerdict::Trusted { .. } | TierVerdict::Recorded { .. } => true,
            TierVerdict::Verified(r) => r.is_ok(),
            _ => false,
        }
    }
}

/// The result of a deep verification.
#[derive(Debug)]
pub struct DeepReport {
    /// The verdicts, lowest tier first. When a table of tiers `0..=max` fails its checks,
    /// the failed checks alone; otherwise every tier from 0 up to the first that fails, or
    /// to the top of the range.
    pub verdicts: Vec<TierVerdict>,
    /// Positions re-proved.
    pub positions: u64,
    /// The tiers re-proved in this run and recorded as verified in the manifest.
    pub recorded: Vec<u8>,
    /// Why tiers re-proved in this run were not recorded, if some were not.
    pub not_recorded: Option<String>,
    /// Seconds in all (checks and reading included).
    pub seconds: f64,
    /// What became of the distance tables of the tiers re-proved.
    pub distances: Vec<DistanceVerdict>,
}

/// What became of a tier's distance table in a deep verification (after its scores were
/// re-proved).
#[derive(Debug)]
pub enum DistanceVerdict {
    /// Every distance follows from its position's moves ([`check_distances`](crate::tier::check_distances)).
    Proved {
        /// The tier.
        tier: u8,
        /// The longest distance.
        max: u8,
        /// Windows of the tier the distances were read in: 1 when held whole
        /// ([`check_distances_windowed`](crate::tier::check_distances_windowed)).
        windows: u64,
        /// Seconds of the proof, reading the table included.
        seconds: f64,
    },
    /// A distance does not follow, or the table cannot be read.
    Failed {
        /// The tier.
        tier: u8,
        /// What is wrong, in one line.
        error: String,
    },
    /// Not proved, for the reason given (the lower tiers are read in slices or split over
    /// ranks, or the memory does not allow).
    Skipped {
        /// The tier.
        tier: u8,
        /// Why.
        why: String,
    },
}

impl DistanceVerdict {
    /// The tier.
    pub fn tier(&self) -> u8 {
        match self {
            DistanceVerdict::Proved { tier, .. }
            | DistanceVerdict::Failed { tier, .. }
            | DistanceVerdict::Skipped { tier, .. } => *tier,
        }
    }

    /// Whether every distance was proved.
    pub fn is_proved(&self) -> bool {
        matches!(self, DistanceVerdict::Proved { .. })
    }
}

impl DeepReport {
    /// Whether every tier of the range was re-proved and every tier below it trusted, and
    /// no distance table of them failed.
    pub fn is_ok(&self) -> bool {
        !self.verdicts.is_empty()
            && self.verdicts.iter().all(TierVerdict::is_ok)
            && !self
                .distances
                .iter()
                .any(|d| matches!(d, DistanceVerdict::Failed { .. }))
    }

    /// Whether the tiers were re-proved at all: false when a table failed its checks.
    pub fn started(&self) -> bool {
        !self
            .verdicts
            .iter()
            .any(|v| matches!(v, TierVerdict::CheckFailed(_)))
    }
}

/// Receives the events of a deep verification: the table checks ([`CheckObserver`]), the
/// progress inside a tier's verification ([`Progress`]: see [`verify_tier_in_place`](crate::tier::verify_tier_in_place)), and
/// the tiers.
pub trait VerifyObserver: Progress + CheckObserver {
    /// Every table passed its checks; the tiers are read and re-proved next.
    fn checks_passed(&self);
    /// Tier `tier` with `positions` positions begins: its table is read.
    fn tier_start(&self, tier: u8, positions: u64);
    /// The table of tier `tier` (`positions` positions) is read.
    fn tier_read(&self, tier: u8, positions: u64);
    /// Tier `verdict.tier()` is finished.
    fn tier_done(&self, verdict: &TierVerdict);
    /// The distance table of tier `verdict.tier()` is proved, failed or skipped (before
    /// [`VerifyObserver::tier_done`] of the tier).
    fn distances_done(&self, verdict: &DistanceVerdict) {
        let _ = verdict;
    }
}

/// Records in the manifest of the directory that `lock` holds that tier `n`'s table (or,
/// with `distances`, its distance table) was proved with checksum `checksum`; whether it
/// did (not once cancelled, nor where the manifest has no entry with that checksum).
fn record(lock: &DirLock, n: u8, checksum: &str, distances: bool) -> Result<bool, VerifyError> {
    // The manifest's temporary, out of a cancellation's cleanup's way; nothing is recorded
    // once cancelled.
    let _writing = lock.writing();
    if lock.is_cancelled() {
        return Ok(false);
    }
    let dir = lock.dir();
    let Some(mut m) = Manifest::load(dir)? else {
        return Ok(false);
    };
    let entry = m.tiers.get_mut(&n).and_then(|e| {
        if distances {
            e.distance.as_mut().map(|d| (&d.checksum, &mut d.verified))
        } else {
            Some((&e.checksum, &mut e.verified))
        }
    });
    if let Some((sum, verified)) = entry {
        if sum == checksum {
            *verified = Some(checksum.to_string());
            m.save(dir)?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// Deep-verifies tiers `opts.tiers` of `opts.dir` under `opts.rules` over the ranks of
/// `comm` (one process is one rank, [`LocalComm`](crate::distributed::LocalComm)): checks
/// tiers `0..=opts.tiers.end()` (checksums, against the manifest), then reads them lowest
/// first and re-proves every score of those of the range from the tiers below it; the tiers
/// below the range are trusted. Stops at the first tier that fails.
///
/// Every rank calls it with the same options and a directory they all share. Rank 0 checks
/// the tables, takes the lock, records the tiers verified and builds the full report with
/// the details of the failing positions (read from the tables); the other ranks' reports
/// hold the same verdicts without those details and checksums. What differs with the
/// number of ranks is where the tiers are held (`Held`): one process reads each table
/// whole and re-proves it with [`verify_tier_in_place`](crate::tier::verify_tier_in_place), its
/// lower tiers held in memory or read from the tables in slices ([`plan_verify`](crate::memory::plan_verify));
/// each of several ranks reads its own range of each table, keeps its share of the tiers a
/// later tier's captures reach, and re-proves its range with
/// [`verify_tier_local`](crate::distributed::verify_tier_local). Rayon phases run on the
/// current thread pool, collectives on the calling thread.
///
/// # Errors
/// [`VerifyError::TooLarge`] when a tier of the range does not fit in the memory available
/// on one process, even with its lower tiers in the smallest slices (checked before
/// anything is read); over several ranks [`VerifyError::Rank`] with
/// [`RankError::TooLarge`] on each rank whose share does not fit, with its figures, and
/// [`RankError::Failed`] on the others,
/// [`VerifyError::Db`] when the manifest or a slice of a lower tier cannot be read,
/// [`VerifyError::Alloc`] when an array of the verifier cannot be allocated. Tiers that
/// fail are not errors: they are in the report.
pub fn verify_deep(
    comm: &dyn Comm,
    opts: &VerifyOptions,
    observer: &dyn VerifyObserver,
) -> Result<DeepReport, VerifyError> {
    let t0 = Instant::now();
    let root = comm.rank() == 0;
    let (a, b) = (*opts.tiers.start(), *opts.tiers.end());
    let rules = &opts.rules;
    let dir = &opts.dir;
    // On one process, every tier of the range is planned before anything is read.
    let placement = Placement::new(comm, opts.memory_limit, opts.exchange_batch);
    let mut held = Held::new(&placement, opts)?;
    // The manifest records the tiers verified: its writers hold the directory's lock. A
    // directory locked by another process (a generation) is verified all the same, but
    // nothing is recorded.
    let table_dir = TableDir::new(dir, &opts.cancel);
    let (lock, mut not_recorded) = if root {
        match table_dir.lock() {
            Ok(l) => (Some(l), None),
            Err(e) => (None, Some(e.to_string())),
        }
    } else {
        (None, None)
    };
    let manifest = if root { Manifest::load(dir) } else { Ok(None) };
    let mut manifest = agree_db(comm, manifest)?;
    // A directory of the Romein-Bal databases has no tier 47, and no tier reads it.
    let absent_tier = held.absent();
    let absent = |n: u8| absent_tier == Some(n);
    let tiers: Vec<u8> = (0..=b).filter(|&n| !absent(n)).collect();
    let checked = if root {
        check_tiers(dir, manifest.as_ref(), rules, &tiers, observer)
    } else {
        Vec::new()
    };
    let mut report = DeepReport {
        verdicts: Vec::new(),
        positions: 0,
        recorded: Vec::new(),
        not_recorded: None,
        seconds: 0.0,
        distances: Vec::new(),
    };
    let failed = checked.iter().any(|c| !c.is_ok());
    if comm.all_reduce_max(u64::from(failed)) > 0 {
        report.verdicts = checked
            .into_iter()
            .filter(|c| !c.is_ok())
            .map(|c| TierVerdict::CheckFailed(Box::new(c)))
            .collect();
        report.seconds = t0.elapsed().as_secs_f64();
        return Ok(report);
    }
    observer.checks_passed();
    // The Romein-Bal files of the directory get entries in a manifest beside them, where the
    // tiers re-proved are recorded (the files themselves are never written).
    // Once the manifest cannot be written (a full disk), nothing more is recorded, and the
    // tiers are verified all the same: why, for the report.
    let mut unwritable: Option<String> = None;
    if let Some(lock) = &lock {
        if let Some(m) = romein_manifest(rules, &checked, manifest.as_ref()) {
            let _writing = lock.writing();
            match m.save(dir) {
                Ok(()) => manifest = Some(m),
                Err(e) => unwritable = Some(cannot_write(&e)),
            }
        }
    }
    // Rank 0's tables and checksums, and what the manifest records, tier by tier.
    let mut tables: Vec<Option<Table>> = (0..=b).map(|_| None).collect();
    let mut checksums = vec![String::new(); b as usize + 1];
    let mut distance_tables: Vec<Option<(Table, String)>> = (0..=b).map(|_| None).collect();
    for c in checked {
        let n = c.tier as usize;
        distance_tables[n] = c
            .distances
            .and_then(|(_, r)| r.ok())
            .map(|g| (g.table, g.checksum));
        let good = c.result.ok();
        checksums[n] = good
            .as_ref()
            .map(|g| g.checksum.clone())
            .unwrap_or_default();
        tables[n] = good.map(|g| g.table);
    }
    // Rank 0 checked the distance tables: the other ranks open the same files, by the
    // paths rank 0 sends (one per line, empty where a tier has none).
    let paths: Vec<String> = distance_tables
        .iter()
        .map(|d| {
            d.as_ref()
                .map(|(t, _)| t.path().to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let paths = if comm.size() > 1 {
        let all = comm.all_gather_bytes(paths.join("\n").as_bytes());
        let first = all.first().map(|b| String::from_utf8_lossy(b).into_owned());
        first
            .unwrap_or_default()
            .split('\n')
            .map(str::to_string)
            .collect()
    } else {
        paths
    };
    let has_distances: Vec<bool> = (0..=b as usize)
        .map(|n| paths.get(n).is_some_and(|p| !p.is_empty()))
        .collect();
    if !root {
        for (n, path) in paths.iter().enumerate().take(b as usize + 1) {
            if !path.is_empty() {
                distance_tables[n] = Table::open(std::path::Path::new(path))
                    .ok()
                    .map(|t| (t, String::new()));
            }
        }
    }
    let recorded_flags: Vec<bool> = (0..=b)
        .map(|n| {
            root && manifest
                .as_ref()
                .and_then(|m| m.tiers.get(&n))
                .and_then(|e| e.verified.as_deref())
                == Some(checksums[n as usize].as_str())
        })
        .collect();
    let recorded_flags = agree_flags(comm, &recorded_flags);
    // Whether every tier below the current one is re-proved (now or before, recorded).
    let mut proven = true;
    for n in 0..=b {
        if absent(n) {
            continue;
        }
        let size = oware_db::index::TierIndex::new(n, oware_db::index::IndexKind::Reachable).size();
        let recorded = recorded_flags.get(n as usize).copied().unwrap_or(false);
        let checksum = std::mem::take(&mut checksums[n as usize]);
        observer.tier_start(n, size);
        // The tiers no tier from here on reads from what is held are dropped.
        held.drop_unread(n);
        let keep = held.read_from(n, n + 1);
        let skip = n >= a && recorded && proven && !opts.again;
        let recorded_verdict = |checksum: String| TierVerdict::Recorded {
            tier: n,
            positions: size,
            checksum,
        };
        let (verdict, scores) = if n < a && !keep {
            // A trusted tier that no tier of the range holds is not decoded: its checksum
            // was checked, and the tiers that capture into it read it from its table.
            tables[n as usize] = None;
            let verdict = TierVerdict::Trusted {
                tier: n,
                positions: size,
                checksum,
            };
            (verdict, None)
        } else if skip && !keep {
            (recorded_verdict(checksum), None)
        } else {
            held.check_memory(comm, n, n >= a && !skip)?;
            match held.read(comm, n, tables[n as usize].take()) {
                Err(error) => (TierVerdict::Unreadable { tier: n, error }, None),
                Ok(mut scores) => {
                    observer.tier_read(n, size);
                    let verdict = if skip {
                        recorded_verdict(checksum)
                    } else if n >= a {
                        let r = held.verify(comm, n, &mut scores, observer)?;
                        report.positions += r.positions;
                        if r.is_ok() && has_distances[n as usize] {
                            // Every rank takes part, one that could not open the table too.
                            let table = distance_tables[n as usize].take();
                            let (table, sum) = match table {
                                Some((t, sum)) => (Some(t), sum),
                                None => (None, String::new()),
                            };
                            {
                                observer.start(crate::progress::Phase::Distances, size);
                                let v = held.verify_distances(comm, n, &scores, table.as_ref());
                                if v.is_proved() && proven && unwritable.is_none() {
                                    if let Some(lock) = &lock {
                                        if let Err(e) = record(lock, n, &sum, true) {
                                            unwritable = Some(cannot_write(&e));
                                        }
                                    }
                                }
                                observer.distances_done(&v);
                                report.distances.push(v);
                            }
                        }
                        if r.is_ok() && proven && unwritable.is_none() {
                            if let Some(lock) = &lock {
                                match record(lock, n, &checksum, false) {
                                    Ok(true) => report.recorded.push(n),
                                    Ok(false) if report.not_recorded.is_none() => {
                                        report.not_recorded = Some(format!(
                                            "the manifest has no entry for tier {n} with its \
                                             checksum"
                                        ));
                                    }
                                    Ok(false) => {}
                                    Err(e) => unwritable = Some(cannot_write(&e)),
                                }
                            }
                        } else if r.is_ok() && report.not_recorded.is_none() {
                            report.not_recorded = Some(format!(
                                "tiers 0..={} are trusted, not re-proved",
                                a.saturating_sub(1)
                            ));
                        }
                        TierVerdict::Verified(r)
                    } else {
                        TierVerdict::Trusted {
                            tier: n,
                            positions: size,
                            checksum,
                        }
                    };
                    (verdict, Some(scores))
                }
            }
        };
        proven &= match &verdict {
            TierVerdict::Verified(r) => r.is_ok(),
            TierVerdict::Recorded { .. } => true,
            TierVerdict::Trusted { .. } => recorded,
            _ => false,
        };
        if let Some(scores) = scores {
            if verdict.is_ok() && keep {
                held.keep(n, scores)?;
            }
        }
        observer.tier_done(&verdict);
        let ok = verdict.is_ok();
        report.verdicts.push(verdict);
        if !ok {
            break;
        }
    }
    let any_recorded = report
        .verdicts
        .iter()
        .any(|v| matches!(v, TierVerdict::Verified(r) if r.is_ok()));
    if root && lock.is_none() && any_recorded {
        report.not_recorded = not_recorded.take();
    }
    if let Some(why) = unwritable {
        report.not_recorded = Some(why);
    }
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// Why nothing more is recorded once writing the manifest failed with `e`.
fn cannot_write(e: &dyn std::fmt::Display) -> String {
    format!("cannot update the manifest: {e}")
}

/// `manifest` (or a new one) with an entry for every Romein-Bal file (`scores.N`, which
/// needs none to pass its checks) among `checked` that it lacks, with the file's size and
/// checksum; `None` when it lacks none.
fn romein_manifest(
    rules: &Rules,
    checked: &[TierCheck],
    manifest: Option<&Manifest>,
) -> Option<Manifest> {
    let mut m = manifest.cloned().unwrap_or_else(|| Manifest::new(rules));
    let mut added = false;
    for c in checked {
        let Ok(good) = c.result.as_ref() else {
            continue;
        };
        let Some(file) = c.path.file_name().and_then(|f| f.to_str()) else {
            continue;
        };
        if good.table.romein().is_none() || m.tiers.contains_key(&c.tier) {
            continue;
        }
        added = true;
        m.tiers.insert(
            c.tier,
            oware_db::manifest::TierEntry {
                file: file.to_string(),
                entries: good.table.len(),
                file_size: good.table.file_size(),
                checksum: good.checksum.clone(),
                stats: None,
                verified: None,
                distance: None,
                source: None,
            },
        );
    }
    added.then_some(m)
}

/// `result` on every rank if it is `Ok` everywhere; otherwise an error on every rank (its
/// own where it failed). A collective.
pub(super) fn agree_db<T>(
    comm: &dyn Comm,
    result: Result<T, oware_db::Error>,
) -> Result<T, VerifyError> {
    let failed = comm.all_reduce_max(match &result {
        Ok(_) => 0,
        Err(_) => u64::MAX - comm.rank() as u64,
    });
    match result {
        Ok(_) if failed > 0 => Err(VerifyError::Db(oware_db::Error::InvalidState(format!(
            "rank {} failed",
            u64::MAX - failed
        )))),
        r => Ok(r?),
    }
}
