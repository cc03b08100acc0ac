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

use oware_db::{Manifest, Rules, TierCheck};
use thiserror::Error;

use crate::check::{check_tiers, CheckObserver};
use crate::lock::DirLock;
use crate::lower::LowerTiers;
use crate::memory::{available_memory, capture_window, human_bytes, plan_verify, ExitPlan};
use crate::progress::Progress;
use crate::slice::TableSource;
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
