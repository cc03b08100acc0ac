//! Where a deep verification keeps the tiers it has re-proved ([`Held`]), and how it reads
//! and re-proves a tier with them: the one part of the driver that differs between one
//! process and several ranks.

use std::ops::Range;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::table::Table;
use oware_db::Position;

use super::{agree_db, DistanceVerdict, VerifyError, VerifyObserver, VerifyOptions};
use crate::comm::{Comm, LocalScores, PartitionConfig};
use crate::distance::{
    check_distances, check_distances_local, check_distances_sliced,
    check_distances_sliced_windowed, check_distances_windowed, pass_bytes, DistanceError,
    DistanceSource, NO_DISTANCE, RANK_CHUNK,
};
use crate::job::place::Placement;
use crate::job::ranks::{check_rank_memory, tier_batch};
use crate::lower::lookup::{Layout, LookupStats};
use crate::lower::share::LowerShare;
use crate::lower::slice::{ScoreSource, TableSource};
use crate::lower::LowerTiers;
use crate::memory::{
    exchange_memory, human_bytes, least_slice, plan_verify, verify_memory, window_bytes, ExitPlan,
    PROCESS_BYTES,
};
use crate::solve::WINDOW_ALIGN;
use crate::verify::ranks::verify_tier_local;
use crate::verify::{mismatch_with, verify_tier_in_place, VerifyLower, VerifyReport, LISTED};

/// The tiers a rank keeps for the tiers above them, and what every rank knows of the
/// verification.
pub(super) struct Held {
    common: Common,
    kept: Kept,
}

/// One process: whole tiers in memory, for the tiers of the range planned to read their lower
/// tiers from memory (the others read them from the tables in slices), with the plan of each
/// tier of the range, from its first. One of several ranks: its share of every tier a later
/// tier's captures reach.
type Kept = crate::job::held::Held<Vec<ExitPlan>>;

/// What every rank knows of the verification.
pub(super) struct Common {
    opts: VerifyOptions,
    available: u64,
    source: TableSource,
    /// The tier the directory lacks by design, if any
    /// ([`oware_db::manifest::absent_tier`]): neither verified nor a reader of lower tiers.
    absent: Option<u8>,
}

impl Held {
    /// Nothing held yet; on one process, every tier of the range planned.
    ///
    /// # Errors
    /// [`VerifyError::TooLarge`] on one process when a tier of the range does not fit even
    /// with its lower tiers in the smallest slices.
    pub(super) fn new(
        placement: &Placement<'_>,
        opts: &VerifyOptions,
    ) -> Result<Self, VerifyError> {
        let manifest = oware_db::manifest::Manifest::load(&opts.dir).ok().flatten();
        let absent = oware_db::manifest::absent_tier(&opts.dir, manifest.as_ref());
        // Reading Romein-Bal files builds the tables of their runs, kept for the process.
        let runs = if oware_db::manifest::holds_romein_files(&opts.dir) {
            oware_db::romein::runs_bytes(*opts.tiers.end())
        } else {
            0
        };
        let available = placement.limit().saturating_sub(runs);
        let common = Common {
            opts: opts.clone(),
            available,
            source: TableSource::new(&opts.dir),
            absent,
        };
        if let Some(config) = placement.exchange() {
            let comm = placement.comm();
            return Ok(Held {
                common,
                kept: Kept::Ranks {
                    share: LowerShare::new(comm.rank(), comm.size()),
                    config,
                },
            });
        }
        // Once a tier reads its lower tiers in slices, the tiers above it do too (they hold
        // no lower tier in memory).
        let mut plans = Vec::new();
        let mut sliced = false;
        for n in opts.tiers.clone() {
            if absent == Some(n) {
                // Not verified, and no tier reads it: it holds nothing.
                plans.push(ExitPlan::Sliced { slice_bytes: 0 });
                continue;
            }
            let plan = plan_verify(&opts.rules, n, available, opts.slice_bytes).map_err(|p| {
                VerifyError::TooLarge {
                    tier: n,
                    needed: p.needed(),
                    own: p.own,
                    beside: p.own_beside_slice,
                    lower: p.lower,
                    process: p.process,
                    available,
                }
            })?;
            let mut exits = plan.exits;
            if sliced && exits == ExitPlan::Resident {
                exits = ExitPlan::Sliced {
                    slice_bytes: available - plan.own,
                };
            }
            sliced |= matches!(exits, ExitPlan::Sliced { .. });
            plans.push(exits);
        }
        Ok(Held {
            common,
            kept: Kept::Process {
                lower: LowerTiers::new(),
                plans,
            },
        })
    }

    fn common(&self) -> &Common {
        &self.common
    }

    /// The tier the directory lacks by design, if any.
    pub(super) fn absent(&self) -> Option<u8> {
        self.common().absent
    }

    /// Whether tier `t` is read from what is held by a tier `m >= from` of the range.
    pub(super) fn read_from(&self, t: u8, from: u8) -> bool {
        let opts = &self.common().opts;
        let (a, b) = (*opts.tiers.start(), *opts.tiers.end());
        (from.max(a).max(t + 1)..=b).any(|m| {
            if self.common().absent == Some(m) {
                return false;
            }
            let held = match &self.kept {
                Kept::Process { plans, .. } => plans[usize::from(m - a)] == ExitPlan::Resident,
                Kept::Ranks { .. } => true,
            };
            held && opts.rules.capture_window(m).contains(&t)
        })
    }

    /// Drops the tiers that no tier from `n` on reads from what is held.
    pub(super) fn drop_unread(&mut self, n: u8) {
        let unread: Vec<u8> = (0..n).filter(|&t| !self.read_from(t, n)).collect();
        self.kept.drop_tiers(|t| unread.contains(&t));
    }

    /// Over several ranks, refuses tier `n` when a rank's range of it (and, when
    /// `verifying`, its verification state), beside the share it holds, does not fit its
    /// memory: every rank stops. One process planned every tier at the start.
    pub(super) fn check_memory(
        &self,
        comm: &dyn Comm,
        n: u8,
        verifying: bool,
    ) -> Result<(), VerifyError> {
        let Kept::Ranks { share, config } = &self.kept else {
            return Ok(());
        };
        let common = &self.common;
        let range = share.partition(n).range(comm.rank());
        let size = TierIndex::new(n, IndexKind::Reachable).size();
        let batch = tier_batch(config.batch, size, comm.size());
        let own = if verifying {
            verify_memory(range.end - range.start) + exchange_memory(batch)
        } else {
            range.end - range.start
        };
        let held = share.bytes();
        Ok(check_rank_memory(
            comm,
            "deep verification",
            n,
            own,
            held,
            common.available,
        )?)
    }

    /// Reads this rank's scores of tier `n`: one process the whole table that rank 0
    /// checked (`checked`), each of several ranks its own range of places. A range that a rank cannot
    /// read makes the tier unreadable on every rank.
    pub(super) fn read(
        &self,
        comm: &dyn Comm,
        n: u8,
        checked: Option<Table>,
    ) -> Result<Vec<i8>, oware_db::Error> {
        match &self.kept {
            Kept::Process { .. } => match checked {
                Some(table) => crate::dir::read::read_table(&table),
                None => Err(oware_db::Error::InvalidState(format!(
                    "tier {n}: no checked table"
                ))),
            },
            Kept::Ranks { share, .. } => {
                let common = &self.common;
                let rank = comm.rank();
                let part = share.partition(n);
                let range = part.range(rank);
                let path = oware_db::manifest::tier_path(&common.opts.dir, None, n);
                let read = Table::open(&path).and_then(|t| {
                    let mut s =
                        crate::hugepage::vec_of((range.end - range.start) as usize, |_| 0i8);
                    crate::dir::read::read_places_parallel(&t, part, range.clone(), &mut s)?;
                    t.release_pages();
                    Ok(s)
                });
                let message = match &read {
                    Ok(_) => String::new(),
                    Err(e) => format!("rank {rank}: {e}"),
                };
                let messages = comm.all_gather_bytes(message.as_bytes());
                match read {
                    Ok(s) if messages.iter().all(Vec::is_empty) => Ok(s),
                    _ => Err(oware_db::Error::InvalidState(
                        messages
                            .iter()
                            .find(|m| !m.is_empty())
                            .map(|m| String::from_utf8_lossy(m).into_owned())
                            .unwrap_or_default(),
                    )),
                }
            }
        }
    }

    /// Re-proves this rank's `scores` of tier `n` from what is held (one process: or from
    /// slices of the tables). Every rank gets the tier's counts; rank 0 the details of its
    /// first mismatches.
    pub(super) fn verify(
        &mut self,
        comm: &dyn Comm,
        n: u8,
        scores: &mut [i8],
        observer: &dyn VerifyObserver,
    ) -> Result<VerifyReport, VerifyError> {
        let common = &self.common;
        match &mut self.kept {
            Kept::Process { lower, plans } => {
                let a = *common.opts.tiers.start();
                let lower_scores = match plans[usize::from(n - a)] {
                    ExitPlan::Resident => {
                        lower.pad(n);
                        VerifyLower::Resident(lower)
                    }
                    ExitPlan::Sliced { slice_bytes } => VerifyLower::Sliced {
                        source: &common.source,
                        slice_bytes,
                    },
                };
                Ok(verify_tier_in_place(
                    &common.opts.rules,
                    n,
                    scores,
                    lower_scores,
                    Some(&common.source),
                    observer,
                )?)
            }
            Kept::Ranks { share, config } => {
                let t = Instant::now();
                let index = TierIndex::new(n, IndexKind::Reachable);
                let size = index.size();
                let rules = &common.opts.rules;
                let range = share.partition(n).range(comm.rank());
                let config = PartitionConfig {
                    batch: tier_batch(config.batch, size, comm.size()),
                    ..*config
                };
                let local = verify_tier_local(
                    comm,
                    rules,
                    n,
                    range.start,
                    scores,
                    share,
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
                first.truncate(LISTED);
                let details = if comm.rank() == 0 {
                    let source = &common.source;
                    let at = |r: u64| -> Result<i8, oware_db::Error> {
                        let mut v = [0i8];
                        source.load(n, r, &mut v)?;
                        Ok(v[0])
                    };
                    let lower = |child: &Position| -> Result<i8, oware_db::Error> {
                        let t = child.seeds();
                        let r = TierIndex::new(t, IndexKind::Reachable).rank_unchecked(child);
                        let mut v = [0i8];
                        source.load(t, r, &mut v)?;
                        Ok(v[0])
                    };
                    first
                        .iter()
                        .map(|&i| mismatch_with(rules, n, &index, i, &at, &lower))
                        .collect::<Result<Vec<_>, _>>()
                } else {
                    Ok(Vec::new())
                };
                let details = agree_db(
                    comm,
                    details.map_err(|e| match e {
                        crate::error::SolveError::Lower(d) => d,
                        other => oware_db::Error::InvalidState(other.to_string()),
                    }),
                )?;
                Ok(VerifyReport {
                    tier: n,
                    positions: size,
                    nonzero,
                    mismatches,
                    first: details,
                    seconds: t.elapsed().as_secs_f64(),
                    phases: local.phases,
                })
            }
        }
    }

    /// Proves the distance table `table` of tier `n` from the tier's re-proved `scores` and
    /// the lower tiers ([`check_distances`]): on one process, held whole when the tier reads
    /// its lower tiers from memory, otherwise read in slices from the tables
    /// ([`check_distances_sliced`]), where the distances (one byte per position) fit, or in
    /// windows; otherwise skipped, with the reason. Over several ranks, each rank proves its
    /// range ([`verify_distances_ranked`]; a collective). `None`: the table could not be
    /// opened on this rank.
    pub(super) fn verify_distances(
        &mut self,
        comm: &dyn Comm,
        n: u8,
        scores: &[i8],
        table: Option<&Table>,
    ) -> DistanceVerdict {
        let t = Instant::now();
        let skipped = |why: &str| DistanceVerdict::Skipped {
            tier: n,
            why: why.to_string(),
        };
        let common = &self.common;
        let (lower, plans) = match &mut self.kept {
            Kept::Process { lower, plans } => (lower, plans),
            Kept::Ranks { share, config } => {
                return verify_distances_ranked(comm, common, share, config, n, scores, table)
            }
        };
        let Some(table) = table else {
            return DistanceVerdict::Failed {
                tier: n,
                error: "its distance table cannot be opened".into(),
            };
        };
        let a = *common.opts.tiers.start();
        let resident = plans[usize::from(n - a)] == ExitPlan::Resident;
        let positions = scores.len() as u64;
        let rules = common.opts.rules;
        // Beside the scores (held), the distances: with slices, a bit per position and the
        // least slice.
        let beside = if resident {
            positions + lower.bytes() + PROCESS_BYTES
        } else {
            positions
                + positions.div_ceil(64) * 8
                + lower.bytes()
                + PROCESS_BYTES
                + least_slice(window_bytes(&rules, n))
        };
        let forced = common
            .opts
            .distance_window
            .map(|w| (w / WINDOW_ALIGN * WINDOW_ALIGN).max(WINDOW_ALIGN));
        // Whole, or in windows: three of them (the positions', their folded steps, the
        // children's).
        let whole = beside + positions <= common.available && forced.is_none_or(|w| w >= positions);
        let room = common.available.saturating_sub(beside);
        let window = if whole {
            positions
        } else {
            let w = (room / 3 / WINDOW_ALIGN * WINDOW_ALIGN).min(forced.unwrap_or(u64::MAX));
            if w == 0 {
                return skipped(&format!(
                    "they need {} of memory, or {} read in windows; {} are available",
                    human_bytes(beside + positions),
                    human_bytes(beside + 3 * WINDOW_ALIGN),
                    human_bytes(common.available)
                ));
            }
            w
        };
        // The largest slice the memory leaves, or the one asked for. Read in windows, the
        // captures' slices are swept (`keeping_captures`) and dropped before the first window
        // is read: they may take all the room the windows take later, not what those leave
        // (a least slice then, up to 64 sweeps of the tier's moves).
        let in_use = beside + if whole { positions } else { 0 };
        let slice_bytes = (common.available.saturating_sub(in_use)
            + least_slice(window_bytes(&rules, n)))
        .min(common.opts.slice_bytes.unwrap_or(u64::MAX))
        .max(1);
        let windows = positions.div_ceil(window.max(1));
        let source = TableDistances {
            table,
            scores,
            max: AtomicU8::new(0),
        };
        let checked = if whole {
            let bytes = match crate::dir::read::read_distances(table, scores) {
                Ok(b) => b,
                Err(e) => {
                    return DistanceVerdict::Failed {
                        tier: n,
                        error: e.to_string(),
                    }
                }
            };
            table.release_pages();
            let dist = bytes.as_slice();
            source.saw(dist);
            if resident {
                lower.pad(n);
                check_distances(&rules, n, scores, lower, dist)
            } else {
                check_distances_sliced(&rules, n, scores, &common.source, slice_bytes, dist)
            }
        } else if resident {
            lower.pad(n);
            check_distances_windowed(&rules, n, scores, lower, &source, window)
        } else {
            check_distances_sliced_windowed(
                &rules,
                n,
                scores,
                &common.source,
                slice_bytes,
                &source,
                window,
            )
        };
        table.release_pages();
        match checked {
            Ok(()) => DistanceVerdict::Proved {
                tier: n,
                max: source.max.into_inner(),
                windows,
                seconds: t.elapsed().as_secs_f64(),
            },
            Err(e) => DistanceVerdict::Failed {
                tier: n,
                error: e.to_string(),
            },
        }
    }

    /// Keeps this rank's scores of tier `n`, re-proved or trusted, for the tiers above.
    pub(super) fn keep(&mut self, n: u8, scores: Vec<i8>) -> Result<(), VerifyError> {
        match &mut self.kept {
            Kept::Process { lower, .. } => {
                lower.set(n, Some(scores));
                Ok(())
            }
            Kept::Ranks { share, .. } => {
                let start = share.partition(n).range(share.rank()).start;
                Ok(share.insert(n, LocalScores { start, scores })?)
            }
        }
    }
}

/// [`Held::verify_distances`] over several ranks: each rank reads its range's distances from
/// `table` and proves them ([`check_distances_local`]), asking the owners for the scores and
/// distances of its positions' children in the tier and for the scores of their captures'
/// (held in `share`). Memory beside its scores and share: a byte per position of its range
/// and the buffers of the exchange and of the pass ([`pass_bytes`]); every rank skips the
/// tier alike, naming the rank short of the most, when one has no room for them. The
/// verdict is every rank's: the lowest index that fails on any rank, or the longest distance
/// of all. A collective.
fn verify_distances_ranked(
    comm: &dyn Comm,
    common: &Common,
    share: &LowerShare,
    config: &PartitionConfig,
    n: u8,
    scores: &[i8],
    table: Option<&Table>,
) -> DistanceVerdict {
    let t = Instant::now();
    let positions = scores.len() as u64;
    let size = TierIndex::new(n, IndexKind::Reachable).size();
    let range = share.partition(n).range(share.rank());
    let batch = tier_batch(config.batch, size, comm.size());
    // Beside its scores and share: its distances, the exchange's buffers and the pass's.
    let need = 2 * positions
        + share.bytes()
        + PROCESS_BYTES
        + exchange_memory(batch)
        + pass_bytes(batch, rayon::current_num_threads());
    // The largest shortfall and the lowest rank that has it, the same on every rank.
    let (me, ranks) = (comm.rank(), comm.size());
    let short = need.saturating_sub(common.available);
    let key =
        comm.all_reduce_max(short.min(u64::MAX >> 16) << 16 | (0xFFFF - me.min(0xFFFF)) as u64);
    if key >> 16 > 0 {
        return DistanceVerdict::Skipped {
            tier: n,
            why: format!(
                "rank {} of {ranks} needs {} more memory for its range's distances (a byte per \
                 position beside its scores and share, and the look-ups' buffers)",
                0xFFFF - (key & 0xFFFF),
                human_bytes(key >> 16)
            ),
        };
    }
    // This rank's distances, or why it cannot read them; every rank learns whether one
    // could not before the pass (a collective).
    let dist = match table {
        None => Err("its distance table cannot be opened on this rank".to_string()),
        Some(table) => {
            let mut dist = crate::hugepage::vec_of(scores.len(), |_| 0u8);
            let part = share.partition(n);
            let read = crate::dir::read::read_distances_places(
                table,
                part,
                range.clone(),
                scores,
                &mut dist,
            );
            table.release_pages();
            read.map(|()| dist).map_err(|e| e.to_string())
        }
    };
    let unread = comm.all_reduce_max(u64::from(dist.is_err()));
    // Each rank's verdict: the longest distance, or the index that fails (0 for an error
    // that names none) with the error.
    let checked: Result<u8, (u64, String)> = match dist {
        Err(e) => Err((0, e)),
        Ok(_) if unread > 0 => Ok(0),
        Ok(dist) => {
            let layout = Layout::new(RANK_CHUNK, batch, comm.size());
            let mut stats = LookupStats::default();
            let r = check_distances_local(
                comm,
                &common.opts.rules,
                n,
                range.start,
                scores,
                &dist,
                share,
                layout,
                &mut stats,
            );
            match r {
                Ok(()) => Ok(dist
                    .iter()
                    .copied()
                    .filter(|&d| d != NO_DISTANCE)
                    .max()
                    .unwrap_or(0)),
                Err(e @ DistanceError::Wrong { index, .. }) => Err((index, e.to_string())),
                Err(e) => Err((0, e.to_string())),
            }
        }
    };
    let key = checked.as_ref().map_or_else(|(k, _)| *k, |_| u64::MAX);
    let lowest = u64::MAX - comm.all_reduce_max(u64::MAX - key);
    let max = comm.all_reduce_max(checked.as_ref().map_or(0, |&m| u64::from(m)));
    if lowest == u64::MAX {
        return DistanceVerdict::Proved {
            tier: n,
            max: u8::try_from(max).unwrap_or(u8::MAX),
            windows: 1,
            seconds: t.elapsed().as_secs_f64(),
        };
    }
    // The message of the lowest rank that found the lowest index.
    let mine = match &checked {
        Err((k, msg)) => [k.to_le_bytes().as_slice(), msg.as_bytes()].concat(),
        Ok(_) => u64::MAX.to_le_bytes().to_vec(),
    };
    let error = comm
        .all_gather_bytes(&mine)
        .iter()
        .find_map(|m| {
            let (k, msg) = m.split_at_checked(8)?;
            (u64::from_le_bytes(k.try_into().ok()?) == lowest)
                .then(|| String::from_utf8_lossy(msg).into_owned())
        })
        .unwrap_or_else(|| "a rank failed".into());
    DistanceVerdict::Failed { tier: n, error }
}

/// The distances of a distance table read by windows ([`DistanceSource`]), given the tier's
/// scores; the pages of each window leave the resident set once decoded. Keeps the longest
/// distance read.
struct TableDistances<'a> {
    table: &'a Table,
    scores: &'a [i8],
    max: AtomicU8,
}

impl TableDistances<'_> {
    /// Takes the longest of `dist` into the longest read.
    fn saw(&self, dist: &[u8]) {
        let m = dist.iter().copied().filter(|&d| d != NO_DISTANCE).max();
        self.max.fetch_max(m.unwrap_or(0), Ordering::Relaxed);
    }
}

impl DistanceSource for TableDistances<'_> {
    fn read(&self, range: Range<u64>, out: &mut Vec<u8>) -> Result<(), DistanceError> {
        out.clear();
        out.resize((range.end - range.start) as usize, 0);
        crate::dir::read::read_distances_range(self.table, self.scores, range.start, out).map_err(
            |e| DistanceError::Read {
                tier: self.table.tier(),
                error: e.to_string(),
            },
        )?;
        self.saw(out);
        Ok(())
    }
}
