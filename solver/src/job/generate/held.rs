//! Where a generation keeps the lower tiers between tiers ([`Held`]), and how it solves and
//! writes a tier with them: the one part of the driver that differs between one process and
//! several ranks.

use std::path::{Path, PathBuf};
use std::time::Instant;

use oware_db::manifest::DistanceEntry;
use oware_db::table::Table;
use oware_db::write::WrittenTable;

use super::{
    write_options, DistributedStats, GenerateError, GenerateObserver, GenerateOptions, SolvedStats,
    TierDistances,
};
use crate::comm::{Comm, LocalScores, PartitionConfig, PARTITION_ALIGN};
use crate::dir::write::{write_table_parallel, DEFAULT_BATCH_BLOCKS};
use crate::dir::write_ranked::write_table_distributed;
use crate::dir::TableDir;
use crate::distance::NO_DISTANCE;
use crate::job::place::Placement;
use crate::job::ranks::{agree, check_rank_memory, load_share, tier_batch};
use crate::lower::share::LowerShare;
use crate::lower::slice::{cut_slices, TableSource, SLICE_ALIGN};
use crate::lower::LowerTiers;
use crate::memory::{
    distance_bytes, exchange_memory, far_exit_bytes, human_bytes, partition_memory, plan_tier,
    ExitPlan, TierPlan, PROCESS_BYTES,
};
use crate::solve::partitioned::{solve_tier_ranked, RankLower};
use crate::solve::{solve_tier_sliced, solve_tier_tuned, Spill, TierScores, Tuning, WINDOW_ALIGN};

/// The lower tiers a generation keeps between tiers. One process keeps memory-mapped side
/// copies, in the scratch directory, of the tiers that a later tier reads whole; a tier whose
/// lower tiers do not fit reads them in slices decoded from the tables ([`Plans`]). One of
/// several ranks keeps its share of every tier a later tier's captures reach.
pub(super) type Held = crate::job::held::Held<Plans>;

/// One process's plans: where its side copies go, and how each tier reads its lower tiers
/// ([`plan_tier`], made once per tier against the memory limit; `Err`: it does not fit).
pub(super) struct Plans {
    scratch: PathBuf,
    tiers: Vec<Result<TierPlan, TierPlan>>,
}

/// A tier just solved: whole in one process, or this rank's share with its distances:
/// `Ok(Some)` their bytes, `Ok(None)` not asked for, `Err` why they were not computed.
pub(super) enum Solved {
    Whole(TierScores),
    Share(LocalScores, Result<Option<Vec<u8>>, String>),
}

impl Solved {
    /// The scores this rank holds.
    pub(super) fn scores(&self) -> &[i8] {
        match self {
            Solved::Whole(s) => s.as_slice(),
            Solved::Share(l, _) => &l.scores,
        }
    }

    /// The scores as this rank's share (the whole tier, from index 0, when solved whole).
    fn into_local(self) -> LocalScores {
        match self {
            Solved::Whole(s) => LocalScores {
                start: 0,
                scores: s.to_vec(),
            },
            Solved::Share(l, _) => l,
        }
    }
}

/// The distances of a tier just solved, on their way to its distance table.
pub(super) enum Distances {
    /// Decided with the scores, held in the solved tier, not written yet: the longest, the
    /// seconds of the rounds that decided them (and the scores).
    /// With `runs` when they were kept out of core, one run of the propagation per window.
    Held {
        max: u8,
        seconds: f64,
        rounds: u64,
        runs: Option<u64>,
    },
    /// Written, and recorded so in the manifest (on rank 0).
    Written(DistanceEntry),
    /// Not computed, for the reason given.
    Skipped(String),
    /// Not asked for.
    Off,
}

impl Distances {
    /// What the report says of them.
    pub(super) fn report(&self) -> TierDistances {
        match self {
            Distances::Held {
                max,
                seconds,
                rounds,
                runs,
            } => TierDistances::Written {
                max: *max,
                seconds: *seconds,
                rounds: Some(*rounds),
                runs: *runs,
                file_size: 0,
            },
            Distances::Written(d) => TierDistances::Written {
                max: u8::try_from(d.max).unwrap_or(u8::MAX),
                seconds: d.seconds,
                rounds: d.rounds,
                runs: d.runs,
                file_size: d.file_size,
            },
            Distances::Skipped(why) => TierDistances::Skipped(why.clone()),
            Distances::Off => TierDistances::Off,
        }
    }
}

/// Most runs of the propagation a tier's distances are decided in when they are kept out
/// of core, one per window of its indices.
const MAX_DISTANCE_RUNS: u64 = 64;

/// How the solve of a tier decides its distances too, by its plan under `limit`, and the
/// peak of its propagation. The distances take [`distance_bytes`] during the propagation,
/// beside the tier's own arrays; where they do not fit beside the lower tiers' side copies
/// too, those pages are released once the exits are computed. Where they do not fit beside
/// the tier's own arrays either, they are kept out of core ([`Spill`], in `scratch`): the
/// propagation runs once per window of the tier, each window as large as the limit leaves
/// room for, or at most `forced` positions. `Err` gives the reason when that would take more
/// than [`MAX_DISTANCE_RUNS`] runs.
fn distance_tuning<'a>(
    plan: &TierPlan,
    positions: u64,
    limit: u64,
    scratch: &'a Path,
    forced: Option<u64>,
) -> Result<(Tuning<'a>, u64), String> {
    let dist = distance_bytes(positions);
    let beside = plan.own + plan.process;
    let forced = forced.map(|w| (w / WINDOW_ALIGN * WINDOW_ALIGN).max(WINDOW_ALIGN));
    if beside + dist <= limit && forced.is_none_or(|w| w >= positions) {
        let tuning = Tuning {
            distances: true,
            release_lower: plan.exits == ExitPlan::Resident && plan.needed() + dist > limit,
            ..Tuning::default()
        };
        return Ok((tuning, beside + dist));
    }
    // The window's bytes beside the fixed part of the distances' (the second frontier's flags
    // and the carried lists).
    let fixed = beside + (dist - positions);
    let room = limit.saturating_sub(fixed) / WINDOW_ALIGN * WINDOW_ALIGN;
    let window = forced.map_or(room, |w| w.min(room));
    if window == 0 || positions.div_ceil(window) > MAX_DISTANCE_RUNS {
        return Err(format!(
            "they need {} of memory beside the tier's own {}, or {} in windows of at most \
             {MAX_DISTANCE_RUNS} runs; the limit is {}",
            human_bytes(dist),
            human_bytes(beside),
            human_bytes(dist - positions + positions.div_ceil(MAX_DISTANCE_RUNS)),
            human_bytes(limit)
        ));
    }
    let tuning = Tuning {
        distances: true,
        release_lower: plan.exits == ExitPlan::Resident,
        spill: Some(Spill {
            dir: scratch,
            window,
        }),
        ..Tuning::default()
    };
    Ok((tuning, fixed + window))
}

impl Held {
    /// The distances of tier `tier`, just solved: decided with its scores when the plan
    /// let them ([`distance_tuning`]); otherwise skipped, with the reason. Over several
    /// ranks, the longest is every rank's (a collective).
    pub(super) fn distances(comm: &dyn Comm, solved: &Solved, stats: &SolvedStats) -> Distances {
        let (Solved::Whole(scores), SolvedStats::Single(stats)) = (solved, stats) else {
            return match (solved, stats) {
                (Solved::Share(_, Ok(Some(bytes))), SolvedStats::Distributed(d)) => {
                    Distances::Held {
                        max: comm.all_reduce_max(u64::from(longest(bytes))) as u8,
                        seconds: d.local.propagate_seconds,
                        rounds: d.local.distance_rounds,
                        runs: None,
                    }
                }
                (Solved::Share(_, Err(why)), _) => Distances::Skipped(why.clone()),
                _ => Distances::Skipped("not asked for".into()),
            };
        };
        if let Some(spilled) = scores.spilled() {
            return Distances::Held {
                max: spilled.max(),
                seconds: stats.sweep_seconds,
                rounds: stats.distance_rounds,
                runs: Some(spilled.runs()),
            };
        }
        match scores.distances() {
            Ok(Some(bytes)) => Distances::Held {
                max: longest(bytes),
                seconds: stats.sweep_seconds,
                rounds: stats.distance_rounds,
                runs: None,
            },
            Ok(None) => Distances::Skipped(
                stats
                    .distances_skipped
                    .clone()
                    .unwrap_or_else(|| "not asked for".into()),
            ),
            Err(e) => Distances::Skipped(e.to_string()),
        }
    }

    /// Nothing held yet, for a generation with `opts` where `placement` says.
    pub(super) fn new(placement: &Placement<'_>, opts: &GenerateOptions, dir: &TableDir) -> Self {
        let comm = placement.comm();
        match placement.exchange() {
            None => Held::Process {
                lower: LowerTiers::new(),
                plans: Plans {
                    scratch: dir.scratch(),
                    tiers: (0..=opts.max_seeds)
                        .map(|t| plan_tier(&opts.rules, t, placement.limit(), opts.slice_bytes))
                        .collect(),
                },
            },
            // Each rank keeps its share as side copies in a scratch directory of its own.
            Some(config) => Held::Ranks {
                share: LowerShare::with_scratch(
                    comm.rank(),
                    comm.size(),
                    dir.scratch().join(format!("rank-{}", comm.rank())),
                ),
                config,
            },
        }
    }

    /// Whether tier `m`, when solved, reads its lower tiers from what is held (rather than
    /// from slices of the tables).
    pub(super) fn reads_held(&self, m: u8) -> bool {
        match self {
            Held::Process { plans, .. } => {
                plans.tiers[m as usize].is_ok_and(|p| p.exits == ExitPlan::Resident)
            }
            Held::Ranks { .. } => true,
        }
    }

    /// The scratch directory of this rank's side copies, if it keeps any.
    pub(super) fn scratch(&self) -> Option<PathBuf> {
        match self {
            Held::Process { plans, .. } => Some(plans.scratch.clone()),
            Held::Ranks { share, .. } => share.scratch().map(Path::to_path_buf),
        }
    }

    /// Creates the scratch directory of this rank's side copies.
    pub(super) fn create_scratch(&self) -> Result<(), GenerateError> {
        let Some(scratch) = self.scratch() else {
            return Ok(());
        };
        std::fs::create_dir_all(&scratch).map_err(|source| GenerateError::CreateDir {
            path: scratch,
            source,
        })
    }

    /// Side copies a tier adds to the disk: 1 when one process keeps one of it, or the ranks
    /// their shares of it (one tier in all).
    pub(super) fn side_copies(&self, needed_later: bool) -> u64 {
        u64::from(needed_later)
    }

    /// Keeps what a later tier reads of tier `tier`, complete in `dir`, read from its table.
    pub(super) fn keep_table(
        &mut self,
        comm: &dyn Comm,
        dir: &TableDir,
        tier: u8,
        needed_later: bool,
    ) -> Result<(), GenerateError> {
        let path = dir.tier_path(None, tier);
        match self {
            Held::Process { lower, plans } => {
                if needed_later {
                    let table = Table::open(&path)?;
                    let scores = crate::dir::read::read_table(&table)?;
                    side_copy(lower, dir, &plans.scratch, tier, &scores)?;
                } else {
                    lower.push_absent();
                }
                Ok(())
            }
            Held::Ranks { share, .. } => {
                if needed_later {
                    // The side copy is a step an interrupt's cleanup waits for (`side_copy`).
                    let writing = dir.cancel().writing();
                    let loaded = Table::open(&path).and_then(|t| load_share(share, tier, &t));
                    drop(writing);
                    agree(comm, loaded)?;
                }
                Ok(())
            }
        }
    }

    /// Drops what is held of the tiers whose last reader is `done` (or below): a tier no
    /// later tier reads is never held.
    pub(super) fn drop_read(&mut self, last_reader: &[Option<u8>], done: u8) {
        self.drop_tiers(|t| {
            last_reader
                .get(usize::from(t))
                .is_none_or(|last| last.is_none_or(|m| m <= done))
        });
    }

    /// Whether the distances of tier `tier` will be kept out of core when it is solved under
    /// `placement`'s limit ([`distance_tuning`]); never over several ranks.
    pub(super) fn spills_distances(
        &self,
        placement: &Placement<'_>,
        opts: &GenerateOptions,
        tier: u8,
    ) -> bool {
        let Held::Process { plans, .. } = self else {
            return false;
        };
        plans.tiers[tier as usize].is_ok_and(|plan| {
            let positions = super::written_entries(tier);
            distance_tuning(
                &plan,
                positions,
                placement.limit(),
                &plans.scratch,
                opts.distance_window,
            )
            .is_ok_and(|(tuning, _)| tuning.spill.is_some())
        })
    }

    /// Solves tier `tier` (its memory checked first: every rank stops if one lacks it), and
    /// tells `observer` it starts. Returns the scores, the counts and when it started.
    pub(super) fn solve(
        &mut self,
        placement: &Placement<'_>,
        opts: &GenerateOptions,
        tier: u8,
        observer: &dyn GenerateObserver,
    ) -> Result<(Solved, SolvedStats, Instant), GenerateError> {
        let (comm, limit) = (placement.comm(), placement.limit());
        let positions = super::written_entries(tier);
        match self {
            Held::Process { lower, plans } => {
                let plan = plans.tiers[tier as usize].map_err(|p| GenerateError::TooLarge {
                    tier,
                    positions,
                    needed: p.needed(),
                    own: p.own,
                    beside: p.own_beside_slice,
                    lower: p.lower,
                    process: p.process,
                    available: limit,
                })?;
                let slices = match plan.exits {
                    ExitPlan::Resident => None,
                    ExitPlan::Sliced { slice_bytes } => Some(slice_bytes),
                };
                if slices.is_some() {
                    // The side copies kept for a later tier are not read by this one: their
                    // pages leave the resident set, which the plan fills with slices.
                    lower.release_pages();
                }
                observer.tier_start(tier, positions, true);
                observer.tier_plan(
                    tier,
                    &plan,
                    slices.map_or(1, |b| {
                        cut_slices(opts.rules.capture_window(tier), b, SLICE_ALIGN).len() as u64
                    }),
                );
                let start = Instant::now();
                // The far exits' lists stop the tier before they take more than the plan
                // leaves them. With the distances, the peak is the larger of the plan's and
                // the propagation's (the lower tiers' pages released if need be): the lists
                // get what it leaves.
                let ((tuning, propagation), skipped) = if opts.distances {
                    match distance_tuning(
                        &plan,
                        positions,
                        limit,
                        &plans.scratch,
                        opts.distance_window,
                    ) {
                        Ok(t) => (t, None),
                        Err(why) => ((Tuning::default(), 0), Some(why)),
                    }
                } else {
                    ((Tuning::default(), 0), None)
                };
                let peak = plan.needed().max(propagation);
                let tuning = Tuning {
                    far_exit_room: limit.saturating_sub(peak) + plan.far_exits,
                    ..tuning
                };
                let (scores, mut stats) = if let Some(slice_bytes) = slices {
                    // The lower tiers are all written and recorded by now: read them from the
                    // tables.
                    let source = TableSource::new(&opts.dir);
                    solve_tier_sliced(&opts.rules, tier, &source, slice_bytes, observer, tuning)?
                } else {
                    solve_tier_tuned(&opts.rules, tier, lower, observer, tuning)?
                };
                stats.distances_skipped = skipped;
                Ok((Solved::Whole(scores), SolvedStats::Single(stats), start))
            }
            Held::Ranks { share, config } => {
                let ranks = comm.size();
                let config = PartitionConfig {
                    batch: tier_batch(config.batch, positions, ranks),
                    ..*config
                };
                // This rank's share: its cells, frontier, far exits' room and exchange
                // buffers, and the lower tiers it holds. Every rank checks its own; all stop
                // if one does not fit.
                let far_room = far_exit_bytes(tier, positions.div_ceil(ranks as u64));
                let own =
                    partition_memory(positions, ranks) + far_room + exchange_memory(config.batch);
                let held = share.bytes();
                check_rank_memory(comm, "generation", tier, own, held, limit)?;
                // The distances where every rank has room for them beside the rest.
                let dist = distance_bytes(positions.div_ceil(ranks as u64) + PARTITION_ALIGN);
                let short = opts.distances && own + held + dist + PROCESS_BYTES > limit;
                let with = opts.distances && comm.all_reduce_max(u64::from(short)) == 0;
                let skipped = (opts.distances && !with).then(|| {
                    format!(
                        "they need {} of memory on each rank beside its {} of the tier, \
                         the lower tiers and the process; the limit is {}",
                        human_bytes(dist),
                        human_bytes(own + held + PROCESS_BYTES),
                        human_bytes(limit)
                    )
                });
                let own = own + if with { dist } else { 0 };
                // The far exits' lists stop the tier on every rank before the lists of one
                // rank take more than its plan leaves them (the room kept for them and what
                // the limit leaves over).
                let config = PartitionConfig {
                    far_exit_room: limit.saturating_sub(own + held + PROCESS_BYTES) + far_room,
                    ..config
                };
                observer.tier_start(tier, positions, true);
                let start = Instant::now();
                let solved = solve_tier_ranked(
                    comm,
                    &opts.rules,
                    tier,
                    RankLower::Shared(&*share),
                    observer,
                    &config,
                    with,
                )?;
                let (local, p) = (solved.scores, solved.stats);
                let distances = match (skipped, solved.distances) {
                    (Some(why), _) => Err(why),
                    (None, Some(Err(e))) => Err(e.to_string()),
                    (None, d) => Ok(d.and_then(Result::ok)),
                };
                let stats = SolvedStats::Distributed(DistributedStats {
                    ranks,
                    positions,
                    finite: comm.all_reduce_sum(p.finite),
                    endless: comm.all_reduce_sum(p.endless),
                    far_exits: comm.all_reduce_sum(p.far_exits),
                    local: p,
                });
                Ok((Solved::Share(local, distances), stats, start))
            }
        }
    }

    /// Writes the table of tier `tier` from what this rank solved: `Some` on rank 0, which
    /// records it, `None` elsewhere. A collective over several ranks.
    pub(super) fn write(
        &self,
        comm: &dyn Comm,
        dir: &TableDir,
        opts: &GenerateOptions,
        tier: u8,
        solved: &Solved,
    ) -> Result<Option<WrittenTable>, GenerateError> {
        let options = write_options(opts);
        let written = match solved {
            Solved::Whole(scores) => write_table_parallel(
                dir,
                &opts.rules,
                tier,
                oware_db::index::IndexKind::Reachable,
                scores.as_slice(),
                &options,
                DEFAULT_BATCH_BLOCKS,
            )
            .map(Some),
            Solved::Share(local, _) => write_table_distributed(
                comm,
                dir,
                &opts.rules,
                tier,
                local,
                &options,
                DEFAULT_BATCH_BLOCKS,
            ),
        };
        Ok(written?)
    }

    /// Keeps what a later tier reads of tier `tier`, just solved and written.
    pub(super) fn keep(
        &mut self,
        comm: &dyn Comm,
        dir: &TableDir,
        tier: u8,
        solved: Solved,
        needed_later: bool,
    ) -> Result<(), GenerateError> {
        match (self, solved) {
            (Held::Process { lower, plans }, solved) => {
                if needed_later {
                    side_copy(lower, dir, &plans.scratch, tier, solved.scores())
                } else {
                    lower.push_absent();
                    Ok(())
                }
            }
            (Held::Ranks { share, .. }, solved) => {
                if needed_later {
                    // The side copy is a step an interrupt's cleanup waits for (`side_copy`).
                    let writing = dir.cancel().writing();
                    let kept = share.insert(tier, solved.into_local());
                    drop(writing);
                    agree(comm, kept)?;
                }
                Ok(())
            }
        }
    }
}

/// The longest of the distances `bytes` (0 if none).
fn longest(bytes: &[u8]) -> u8 {
    use rayon::prelude::*;
    bytes
        .par_chunks(1 << 20)
        .map(|c| {
            c.iter()
                .copied()
                .filter(|&d| d != NO_DISTANCE)
                .max()
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
}

/// Writes the side copy of tier `tier` into `scratch` and maps it into `lower`.
fn side_copy(
    lower: &mut LowerTiers,
    dir: &TableDir,
    scratch: &std::path::Path,
    tier: u8,
    scores: &[i8],
) -> Result<(), GenerateError> {
    let path = scratch.join(format!("tier-{tier:02}.scores"));
    // A file created in the scratch directory while a cancellation's cleanup removes it
    // would keep the directory: the write is one of the steps that cleanup waits for.
    let _writing = dir.cancel().writing();
    lower
        .push_mapped(&path, scores)
        .map_err(|e| GenerateError::Db(oware_db::Error::io(&path, e)))
}
