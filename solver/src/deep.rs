//! Deep verification of a directory of tables, lowest tier first: every table of the
//! range and below checked ([`check_tiers`]), then read, and every stored score of the range
//! re-proved with [`verify_tier_in_place`] from the tiers below it.
//!
//! Each tier of the range is planned like a tier of `generate` ([`plan_verify`]): its own
//! 1.25 bytes per position, plus its capture window held whole in memory when both fit, or
//! else read from the tables in slices ([`TableSource`]). The tiers a later tier reads from
//! memory are kept as they are verified; the others are dropped. Once a tier is sliced, the
//! tiers above it are too.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Instant;

use oware_db::check::TierCheck;
use oware_db::format::tier_file_name;
use oware_db::manifest::Manifest;
use oware_db::table::Table;
use oware_db::Rules;
use thiserror::Error;

use crate::check::{check_tiers, CheckObserver};
use crate::distributed::{Comm, LowerShare, PartitionConfig};
use crate::lock::DirLock;
use crate::lower::LowerTiers;
use crate::memory::{available_memory, capture_window, human_bytes, plan_verify, ExitPlan};
use crate::progress::Progress;
use crate::slice::{ScoreSource, TableSource};
use crate::verify::{verify_tier_in_place, VerifyLower, VerifyReport};

/// What can stop a deep verification before it starts. Failed checks are not errors: they
/// are in the [`DeepReport`].
#[derive(Debug, Error)]
pub enum VerifyError {
    /// The manifest cannot be read.
    #[error(transparent)]
    Db(#[from] oware_db::Error),
    /// An array of the verifier could not be allocated.
    #[error(transparent)]
    Alloc(#[from] crate::AllocError),
    /// The verification needs more memory than is available.
    #[error(
        "deep verification of tier {tier} needs {} of memory ({needed} bytes: {own} for its \
         scores and verification state, {lower} for the smallest slice of its lower tiers) but \
         only {} ({available} bytes) are available",
        human_bytes(*needed),
        human_bytes(*available)
    )]
    TooLarge {
        /// The first tier of the range that does not fit.
        tier: u8,
        /// Bytes needed ([`plan_verify`]).
        needed: u64,
        /// Of which the tier's own scores and state ([`verify_memory`](crate::verify_memory)).
        own: u64,
        /// Of which the smallest slice of its lower tiers.
        lower: u64,
        /// Bytes available.
        available: u64,
    },
}

impl From<crate::SolveError> for VerifyError {
    fn from(e: crate::SolveError) -> Self {
        match e {
            crate::SolveError::Alloc(a) => VerifyError::Alloc(a),
            crate::SolveError::Lower(d) => VerifyError::Db(d),
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
    /// ([`available_memory`]).
    pub memory_limit: Option<u64>,
    /// Read the lower tiers of every tier in slices of at most that many bytes, whatever the
    /// memory (tests, measurements); `None`: slices only when the window does not fit.
    pub slice_bytes: Option<u64>,
    /// Re-prove the tiers of the range that the manifest records as verified, too.
    pub again: bool,
    /// Over several ranks ([`verify_deep_over`]), the most look-ups or updates a rank sends
    /// in one exchange; `None`: the default.
    pub exchange_batch: Option<usize>,
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
    /// A tier below the range: checksum verified, scores trusted.
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
}

impl DeepReport {
    /// Whether every tier of the range was re-proved and every tier below it trusted.
    pub fn is_ok(&self) -> bool {
        !self.verdicts.is_empty() && self.verdicts.iter().all(TierVerdict::is_ok)
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
/// progress inside a tier's verification ([`Progress`]: see [`verify_tier_in_place`]), and
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
}

/// Records in the manifest of `dir` (whose lock the caller holds) that tier `n` was
/// re-proved with checksum `checksum`.
fn record(dir: &Path, n: u8, checksum: &str) -> Result<(), VerifyError> {
    // The manifest's temporary, out of an interrupt's cleanup's way; nothing is recorded
    // once interrupted.
    let _writing = crate::lock::writing();
    if crate::lock::interrupted() {
        return Ok(());
    }
    let Some(mut m) = Manifest::load(dir)? else {
        return Ok(());
    };
    if let Some(e) = m.tiers.get_mut(&n) {
        if e.checksum == checksum {
            e.verified = Some(checksum.to_string());
            m.save(dir)?;
        }
    }
    Ok(())
}

/// Deep-verifies tiers `opts.tiers` of `opts.dir` under `opts.rules`: checks tiers
/// `0..=opts.tiers.end()` (checksums, against the manifest), then reads them lowest first
/// and re-proves those of the range with [`verify_tier_in_place`]; the tiers below the
/// range are trusted. Stops at the first tier that fails. Runs on the current rayon thread
/// pool.
///
/// # Errors
/// [`VerifyError::TooLarge`] when a tier of the range does not fit in the memory available
/// even with its lower tiers in the smallest slices (checked before anything is read),
/// [`VerifyError::Db`] when the manifest or a slice of a lower tier cannot be read,
/// [`VerifyError::Alloc`] when an array of the verifier cannot be allocated.
/// Tiers that fail are not errors: they are in the report.
pub fn verify_deep_with(
    opts: &VerifyOptions,
    observer: &dyn VerifyObserver,
) -> Result<DeepReport, VerifyError> {
    let t0 = Instant::now();
    let (a, b) = (*opts.tiers.start(), *opts.tiers.end());
    let available = opts.memory_limit.unwrap_or_else(available_memory);
    let rules = &opts.rules;
    // Every tier of the range planned before anything is read; once a tier reads its lower
    // tiers in slices, the tiers above it do too (they hold no lower tier in memory).
    let mut plans = Vec::new();
    let mut sliced = false;
    for n in a..=b {
        let plan = plan_verify(rules, n, available, opts.slice_bytes).map_err(|p| {
            VerifyError::TooLarge {
                tier: n,
                needed: p.needed(),
                own: p.own,
                lower: p.lower,
                available,
            }
        })?;
        let mut exits = plan.exits;
        if sliced {
            if let ExitPlan::Resident = exits {
                exits = ExitPlan::Sliced {
                    slice_bytes: available - plan.own,
                };
            }
        }
        sliced |= matches!(exits, ExitPlan::Sliced { .. });
        plans.push(exits);
    }
    let plan_of = |n: u8| plans[usize::from(n - a)];
    // Whether tier `t`'s scores are read from memory by a tier `m >= from` of the range.
    let needed_from = |t: u8, from: u8| {
        (from.max(a).max(t + 1)..=b)
            .any(|m| plan_of(m) == ExitPlan::Resident && capture_window(rules, m).contains(&t))
    };
    let dir = &opts.dir;
    // The manifest records the tiers verified: its writers hold the directory's lock. A
    // directory locked by another process (a generation) is verified all the same, but
    // nothing is recorded.
    let (lock, mut not_recorded) = match DirLock::acquire(dir) {
        Ok(l) => (Some(l), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let manifest = Manifest::load(dir)?;
    let tiers: Vec<u8> = (0..=b).collect();
    let checked = check_tiers(dir, manifest.as_ref(), rules, &tiers, observer);
    let mut report = DeepReport {
        verdicts: Vec::new(),
        positions: 0,
        recorded: Vec::new(),
        not_recorded: None,
        seconds: 0.0,
    };
    if checked.iter().any(|c| c.result.is_err()) {
        report.verdicts = checked
            .into_iter()
            .filter(|c| c.result.is_err())
            .map(|c| TierVerdict::CheckFailed(Box::new(c)))
            .collect();
        report.seconds = t0.elapsed().as_secs_f64();
        return Ok(report);
    }
    observer.checks_passed();
    let source = TableSource::new(dir);
    let mut lower = LowerTiers::new();
    // Whether every tier below the current one is re-proved (now or before, recorded).
    let mut proven = true;
    for c in checked {
        let n = c.tier;
        let Ok(good) = c.result else { continue };
        let size = good.table.len();
        let recorded = manifest
            .as_ref()
            .and_then(|m| m.tiers.get(&n))
            .and_then(|e| e.verified.as_deref())
            == Some(good.checksum.as_str());
        observer.tier_start(n, size);
        // The tiers no tier from here on reads from memory are dropped.
        for t in 0..n {
            if lower.holds(t) && !needed_from(t, n) {
                lower.set(t, None);
            }
        }
        let keep = needed_from(n, n + 1);
        let skip = n >= a && recorded && proven && !opts.again;
        let (verdict, scores) = if skip && !keep {
            let verdict = TierVerdict::Recorded {
                tier: n,
                positions: size,
                checksum: good.checksum,
            };
            (verdict, None)
        } else {
            match crate::read_table(&good.table) {
                Err(error) => (TierVerdict::Unreadable { tier: n, error }, None),
                Ok(mut scores) => {
                    observer.tier_read(n, size);
                    let verdict = if skip {
                        TierVerdict::Recorded {
                            tier: n,
                            positions: size,
                            checksum: good.checksum,
                        }
                    } else if n >= a {
                        let lower_scores = match plan_of(n) {
                            ExitPlan::Resident => {
                                lower.pad(n);
                                VerifyLower::Resident(&lower)
                            }
                            ExitPlan::Sliced { slice_bytes } => VerifyLower::Sliced {
                                source: &source,
                                slice_bytes,
                            },
                        };
                        let r = verify_tier_in_place(
                            rules,
                            n,
                            &mut scores,
                            lower_scores,
                            Some(&source),
                            observer,
                        )?;
                        report.positions += r.positions;
                        if r.is_ok() && proven {
                            if lock.is_some() {
                                record(dir, n, &good.checksum)?;
                                report.recorded.push(n);
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
                            checksum: good.checksum,
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
                lower.set(n, Some(scores));
            }
        }
        observer.tier_done(&verdict);
        let ok = verdict.is_ok();
        report.verdicts.push(verdict);
        if !ok {
            break;
        }
    }
    if lock.is_none()
        && report
            .verdicts
            .iter()
            .any(|v| matches!(v, TierVerdict::Verified(r) if r.is_ok()))
    {
        report.not_recorded = not_recorded.take();
    }
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// [`verify_deep_with`] over the ranks of `comm` (with one rank, exactly it): every rank
/// calls it with the same options and a directory they all share. Each tier is split over
/// the ranks as generation splits it; a rank reads its own range of each table and keeps
/// its share of the tiers a later tier's captures reach; every score of the range is
/// re-proved by [`verify_tier_local`](crate::distributed::verify_tier_local). Rank 0 checks
/// the tables (checksums, manifest), takes the lock, records the tiers verified, and builds
/// the full report with the details of the failing positions (read from the tables); the
/// other ranks' reports hold the same verdicts without those details and checksums.
///
/// # Errors
/// As [`verify_deep_with`], on every rank together; [`VerifyError::TooLarge`] when a
/// rank's share of a tier of the range does not fit its memory (the figures are that
/// rank's; there are no slices over several ranks).
pub fn verify_deep_over(
    comm: &dyn Comm,
    opts: &VerifyOptions,
    observer: &dyn VerifyObserver,
) -> Result<DeepReport, VerifyError> {
    if comm.size() == 1 {
        return verify_deep_with(opts, observer);
    }
    let t0 = Instant::now();
    let (rank, ranks) = (comm.rank(), comm.size());
    let root = rank == 0;
    let (a, b) = (*opts.tiers.start(), *opts.tiers.end());
    let available = opts.memory_limit.unwrap_or_else(available_memory);
    let rules = &opts.rules;
    let dir = &opts.dir;
    let config = PartitionConfig {
        batch: opts
            .exchange_batch
            .unwrap_or(PartitionConfig::default().batch)
            .max(1),
        ..PartitionConfig::default()
    };
    // Whether tier `t` is read by a tier of the range from `from` on.
    let needed_from = |t: u8, from: u8| {
        (from.max(a).max(t + 1)..=b).any(|m| capture_window(rules, m).contains(&t))
    };
    let (lock, mut not_recorded) = if root {
        match DirLock::acquire(dir) {
            Ok(l) => (Some(l), None),
            Err(e) => (None, Some(e.to_string())),
        }
    } else {
        (None, None)
    };
    let manifest = if root { Manifest::load(dir) } else { Ok(None) };
    let manifest = agree_db(comm, manifest)?;
    let tiers: Vec<u8> = (0..=b).collect();
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
    };
    let failed = checked.iter().any(|c| c.result.is_err());
    if comm.all_reduce_max(u64::from(failed)) > 0 {
        report.verdicts = checked
            .into_iter()
            .filter(|c| c.result.is_err())
            .map(|c| TierVerdict::CheckFailed(Box::new(c)))
            .collect();
        report.seconds = t0.elapsed().as_secs_f64();
        return Ok(report);
    }
    observer.checks_passed();
    // Rank 0's checksums and what the manifest records, tier by tier.
    let mut checksums: Vec<String> = checked
        .into_iter()
        .map(|c| c.result.map(|g| g.checksum).unwrap_or_default())
        .collect();
    checksums.resize(b as usize + 1, String::new());
    let recorded_flags: Vec<bool> = (0..=b)
        .map(|n| {
            root && manifest
                .as_ref()
                .and_then(|m| m.tiers.get(&n))
                .and_then(|e| e.verified.as_deref())
                == Some(checksums[n as usize].as_str())
        })
        .collect();
    let recorded_flags = comm.all_gather_bytes(
        &recorded_flags
            .iter()
            .map(|&f| u8::from(f))
            .collect::<Vec<_>>(),
    );
    let recorded_flags: Vec<bool> = recorded_flags
        .first()
        .map(|f| f.iter().map(|&x| x != 0).collect())
        .unwrap_or_default();
    let source = TableSource::new(dir);
    let mut share = LowerShare::new(rank, ranks);
    let mut proven = true;
    for n in 0..=b {
        let index = oware_db::index::TierIndex::new(n, oware_db::index::IndexKind::Reachable);
        let size = index.size();
        let recorded = recorded_flags.get(n as usize).copied().unwrap_or(false);
        let checksum = checksums[n as usize].clone();
        observer.tier_start(n, size);
        for t in 0..n {
            if share.holds(t) && !needed_from(t, n) {
                share.remove(t);
            }
        }
        let keep = needed_from(n, n + 1);
        let skip = n >= a && recorded && proven && !opts.again;
        let range = share.partition(n).range(rank);
        let config = PartitionConfig {
            batch: crate::generate::tier_batch(config.batch, size, ranks),
            ..config
        };
        let mut verdict = if skip && !keep {
            Some(TierVerdict::Recorded {
                tier: n,
                positions: size,
                checksum: checksum.clone(),
            })
        } else {
            None
        };
        let mut scores = Vec::new();
        if verdict.is_none() {
            // This rank's own range of the tier, and room for its verification.
            let own = if n >= a && !skip {
                crate::memory::verify_memory(range.end - range.start)
                    + crate::memory::exchange_memory(config.batch)
            } else {
                range.end - range.start
            };
            let held = share.bytes();
            let short = own + held > available;
            if comm.all_reduce_max(u64::from(short)) > 0 {
                return Err(VerifyError::TooLarge {
                    tier: n,
                    needed: own + held,
                    own,
                    lower: held,
                    available,
                });
            }
            let read = Table::open(&dir.join(tier_file_name(n))).and_then(|t| {
                let mut s = vec![0i8; (range.end - range.start) as usize];
                crate::read::read_range_parallel(&t, range.start, &mut s)?;
                t.release_pages();
                Ok(s)
            });
            // A range that a rank cannot read makes the tier unreadable on every rank.
            let message = match &read {
                Ok(_) => String::new(),
                Err(e) => format!("rank {rank}: {e}"),
            };
            let messages = comm.all_gather_bytes(message.as_bytes());
            match read {
                Ok(s) if messages.iter().all(Vec::is_empty) => {
                    scores = s;
                    observer.tier_read(n, size);
                }
                _ => {
                    let first = messages
                        .iter()
                        .find(|m| !m.is_empty())
                        .map(|m| String::from_utf8_lossy(m).into_owned())
                        .unwrap_or_default();
                    verdict = Some(TierVerdict::Unreadable {
                        tier: n,
                        error: oware_db::Error::InvalidState(first),
                    });
                }
            }
        }
        let verdict = match verdict {
            Some(v) => v,
            None if skip => TierVerdict::Recorded {
                tier: n,
                positions: size,
                checksum: checksum.clone(),
            },
            None if n >= a => {
                let t = Instant::now();
                let local = crate::distributed::verify_tier_local(
                    comm,
                    rules,
                    n,
                    range.start,
                    &mut scores,
                    &share,
                    &config,
                    observer,
                )?;
                let nonzero = comm.all_reduce_sum(local.nonzero);
                let mismatches = comm.all_reduce_sum(local.mismatches);
                let bytes: Vec<u8> = local.first.iter().flat_map(|i| i.to_le_bytes()).collect();
                let mut first: Vec<u64> = comm
                    .all_gather_bytes(&bytes)
                    .iter()
                    .flat_map(|p| {
                        p.chunks_exact(8)
                            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                first.sort_unstable();
                first.truncate(crate::verify::LISTED);
                let details = if root {
                    let at = |r: u64| -> Result<i8, oware_db::Error> {
                        let mut v = [0i8];
                        source.load(n, r, &mut v)?;
                        Ok(v[0])
                    };
                    let lower = |child: &oware_db::Position| -> Result<i8, oware_db::Error> {
                        let t = child.seeds();
                        let r = oware_db::index::TierIndex::new(
                            t,
                            oware_db::index::IndexKind::Reachable,
                        )
                        .rank_unchecked(child);
                        let mut v = [0i8];
                        source.load(t, r, &mut v)?;
                        Ok(v[0])
                    };
                    first
                        .iter()
                        .map(|&i| crate::verify::mismatch_with(rules, n, &index, i, &at, &lower))
                        .collect::<Result<Vec<_>, _>>()
                } else {
                    Ok(Vec::new())
                };
                let details = agree_db(
                    comm,
                    details.map_err(|e| match e {
                        crate::SolveError::Lower(d) => d,
                        crate::SolveError::Alloc(a) => oware_db::Error::InvalidState(a.to_string()),
                    }),
                )?;
                let r = VerifyReport {
                    tier: n,
                    positions: size,
                    nonzero,
                    mismatches,
                    first: details,
                    seconds: t.elapsed().as_secs_f64(),
                };
                report.positions += r.positions;
                if r.is_ok() && proven {
                    if lock.is_some() {
                        record(dir, n, &checksum)?;
                        report.recorded.push(n);
                    }
                } else if r.is_ok() && report.not_recorded.is_none() {
                    report.not_recorded = Some(format!(
                        "tiers 0..={} are trusted, not re-proved",
                        a.saturating_sub(1)
                    ));
                }
                TierVerdict::Verified(r)
            }
            None => TierVerdict::Trusted {
                tier: n,
                positions: size,
                checksum: checksum.clone(),
            },
        };
        proven &= match &verdict {
            TierVerdict::Verified(r) => r.is_ok(),
            TierVerdict::Recorded { .. } => true,
            TierVerdict::Trusted { .. } => recorded,
            _ => false,
        };
        if verdict.is_ok() && keep {
            share.insert(
                n,
                crate::distributed::LocalScores {
                    start: range.start,
                    scores: std::mem::take(&mut scores),
                },
            )?;
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
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// `result` on every rank if it is `Ok` everywhere; otherwise an error on every rank (its
/// own where it failed). A collective.
fn agree_db<T>(comm: &dyn Comm, result: Result<T, oware_db::Error>) -> Result<T, VerifyError> {
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
