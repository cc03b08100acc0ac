//! Deep verification of a directory of tables, lowest tier first: every table of the
//! range and below checked ([`check_tiers`]), then read, and every stored score of the range
//! re-proved with [`verify_tier`] from the tiers below it.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use oware_db::{Manifest, Rules, TierCheck};
use thiserror::Error;

use crate::check::{check_tiers, CheckObserver};
use crate::lower::LowerTiers;
use crate::memory::{available_memory, human_bytes, verify_deep_memory};
use crate::progress::Progress;
use crate::verify::{verify_tier, VerifyReport};

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
        "deep verification of tiers up to {max} needs {} of memory ({needed} bytes: the \
         scores of tiers 0..{max} and tier {max}'s scores and verification state) but only {} \
         ({available} bytes) are available",
        human_bytes(*needed),
        human_bytes(*available)
    )]
    TooLarge {
        /// The highest tier of the range.
        max: u8,
        /// Bytes needed ([`verify_deep_memory`]).
        needed: u64,
        /// Bytes available.
        available: u64,
    },
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
}

impl TierVerdict {
    /// The tier.
    pub fn tier(&self) -> u8 {
        match self {
            TierVerdict::CheckFailed(c) => c.tier,
            TierVerdict::Unreadable { tier, .. } | TierVerdict::Trusted { tier, .. } => *tier,
            TierVerdict::Verified(r) => r.tier,
        }
    }

    /// Whether the tier passed: trusted, or re-proved without a mismatch.
    pub fn is_ok(&self) -> bool {
        match self {
            TierVerdict::Trusted { .. } => true,
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
/// progress inside a tier's verification ([`Progress`]: see [`verify_tier`]), and the tiers.
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

/// Deep-verifies tiers `opts.tiers` of `opts.dir` under `opts.rules`: checks tiers
/// `0..=opts.tiers.end()` (checksums, against the manifest), then reads them lowest first
/// and re-proves those of the range with [`verify_tier`]; the tiers below the range are
/// trusted. Stops at the first tier that fails. Runs on the current rayon thread pool.
///
/// # Errors
/// [`VerifyError::TooLarge`] when the verification does not fit in the memory available
/// (checked before anything is read), [`VerifyError::Db`] when the manifest cannot be read,
/// [`VerifyError::Alloc`] when an array of the verifier cannot be allocated.
/// Tiers that fail are not errors: they are in the report.
pub fn verify_deep_with(
    opts: &VerifyOptions,
    observer: &dyn VerifyObserver,
) -> Result<DeepReport, VerifyError> {
    let t0 = Instant::now();
    let (a, b) = (*opts.tiers.start(), *opts.tiers.end());
    let needed = verify_deep_memory(b);
    let available = opts.memory_limit.unwrap_or_else(available_memory);
    if needed > available {
        return Err(VerifyError::TooLarge {
            max: b,
            needed,
            available,
        });
    }
    let dir = &opts.dir;
    let rules = &opts.rules;
    let manifest = Manifest::load(dir)?;
    let tiers: Vec<u8> = (0..=b).collect();
    let checked = check_tiers(dir, manifest.as_ref(), rules, &tiers, observer);
    let mut report = DeepReport {
        verdicts: Vec::new(),
        positions: 0,
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
    let mut lower = LowerTiers::new();
    for c in checked {
        let n = c.tier;
        let Ok(good) = c.result else { continue };
        let size = good.table.len();
        observer.tier_start(n, size);
        let verdict = match crate::read_table(&good.table) {
            Err(error) => TierVerdict::Unreadable { tier: n, error },
            Ok(scores) => {
                observer.tier_read(n, size);
                let verdict = if n >= a {
                    let r = verify_tier(rules, n, &scores, &lower, observer)?;
                    report.positions += r.positions;
                    TierVerdict::Verified(r)
                } else {
                    TierVerdict::Trusted {
                        tier: n,
                        positions: size,
                        checksum: good.checksum,
                    }
                };
                if n < b && verdict.is_ok() {
                    lower.push(Arc::from(scores));
                }
                verdict
            }
        };
        observer.tier_done(&verdict);
        let ok = verdict.is_ok();
        report.verdicts.push(verdict);
        if !ok {
            break;
        }
    }
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}
