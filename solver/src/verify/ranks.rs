//! Deep verification of one tier split over the ranks: the proof of `verify/mod.rs`, on its
//! cells, frontier and propagation, each rank holding its range of places of the tier
//! ([`Partition`](crate::comm::Partition)) and its share of the lower tiers.
//!
//! - The local check reads the children this rank holds (captures' children in its share,
//!   the zeros' in-tier children in its cells) at once, fetched a few positions ahead, and
//!   asks the owners for the others ([`lookup_pass`]); the rest of it is done where the
//!   justification meets the children, as in one process.
//! - At the start of level `k`, a waiting `−k` position counts its in-tier children that
//!   are not justified with a score of at least `k` and notes whether one scores `k`: those
//!   this rank holds read at once, the others asked of their owners.
//! - The positions justified during a level act on their parents as in one process (the
//!   verifier's sweeps and work stacks, `Ctx::propagate`): a parent this rank holds at once,
//!   depth first; one another rank holds queued for it and posted to it as it comes
//!   (`Ranks::until_quiet`, `comm/exchange.rs`), whose receivers act on them the same way as
//!   they arrive, until every rank is quiet with nothing on its way. After the levels, the negative
//!   positions left unjustified send their scores to their parents' owners.
//!
//! The answers a level's start reads do not change while it runs (only `−k` positions
//! change state then, and they count either way), and the justification is the least set
//! of its rules whatever the order of the updates: the verdict is that of one process.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::retro::{ChildRanker, ExitMoves};
use oware_db::{Move, Outcome, Rules};
use rayon::prelude::*;

use super::{
    code, encode_cells, pending_base, score_of, Ctx, RankExchanges, VerifyPhases, Work, WorkLimits,
    J, LISTED,
};
use crate::comm::exchange::{for_each_update, Exchanged, Place, Queued, APPLY_CHUNK};
use crate::comm::{agree_arrays, Comm, PartitionConfig};
use crate::error::{AllocError, IntoIo};
use crate::granule::LEVEL_GRANULE;
use crate::hugepage::try_vec;
use crate::lower::lookup::{lookup_pass, Asks, Layout, LookupStats};
use crate::lower::share::LowerShare;
use crate::prefetch::prefetch;
use crate::progress::{Phase, Progress};

/// Positions per rayon task (a multiple of 64 and of [`LEVEL_GRANULE`]).
const CHUNK: usize = 1 << 14;

/// One rank's part of the verification of a tier.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocalVerdict {
    /// Positions this rank holds.
    pub positions: u64,
    /// Of which nonzero.
    pub nonzero: u64,
    /// Of which failing.
    pub mismatches: u64,
    /// The failing positions of lowest index held here, at most 10, as indices of the tier.
    pub first: Vec<u64>,
    /// Where this rank's seconds went, and what it exchanged.
    pub phases: VerifyPhases,
}

/// The local place of a look-up word of this tier, on the rank whose arrays start at place
/// `start`.
#[inline]
fn local(start: u64, word: u64) -> usize {
    (LowerShare::asked(word).1 - start) as usize
}

/// Positions whose children are generated before the scores of those this rank holds are
/// read: those scores are fetched ahead meanwhile.
const SUB: usize = 32;

/// Where a child's score is held on this rank: a cell of the tier, or its share of a lower
/// tier.
#[derive(Clone, Copy)]
enum Held<'a> {
    Cell(&'a AtomicU8),
    Lower(&'a i8),
}

impl Held<'_> {
    /// Asks for the score's cache line ahead of [`Held::read`].
    #[inline]
    fn fetch(self) {
        match self {
            Held::Cell(c) => prefetch(c),
            Held::Lower(s) => prefetch(s),
        }
    }

    /// The score, as the byte of an `i8` (as a look-up is answered).
    #[inline]
    fn read(self) -> u8 {
        match self {
            Held::Cell(c) => score_of(c.load(Ordering::Relaxed), 0) as i8 as u8,
            Held::Lower(s) => *s as u8,
        }
    }
}

/// A `−k` position at the start of level `k`, counting its in-tier children: its place in
/// the arrays, the children asked of other ranks, its exit flag, and of the children this
/// rank holds, how many count and whether one scores `k`.
struct Waiting {
    at_place: u32,
    asked: u8,
    exit: bool,
    counted: u8,
    at: bool,
}

/// Whether an in-tier child with cell `b` counts at the start of level `k` (it is not
/// justified with a score of at least `k`) and whether it scores `k`.
#[inline]
fn counted(b: u8, k: i16) -> (bool, bool) {
    let v = score_of(b, k);
    (b & J == 0 || v < k, v == k)
}

/// Takes up to about `max` positions (whole words) from the frontier `bits`, from word
/// `*cursor` on, wrapping around; `pending` is the number of marked bits.
fn take_marked(bits: &[AtomicU64], cursor: &mut usize, pending: u64, max: usize) -> Vec<u32> {
    let mut out = Vec::new();
    let words = bits.len();
    let mut left = pending;
    while left > 0 && out.len() < max && words > 0 {
        let w = *cursor;
        *cursor = if w + 1 == words { 0 } else { w + 1 };
        if bits[w].load(Ordering::Relaxed) == 0 {
            continue;
        }
        let mut word = bits[w].swap(0, Ordering::Relaxed);
        left = left.saturating_sub(u64::from(word.count_ones()));
        while word != 0 {
            let b = word.trailing_zeros() as usize;
            word &= word - 1;
            out.push((w * 64 + b) as u32);
        }
    }
    out
}

/// Applies updates received from other ranks at level `k` (each the parent's place shifted
/// left once, the low bit set when the child scores `−k`: parents this rank holds) and acts
/// on the parents of the positions they justify, depth first, as the sweeps do. Returns how
/// many positions they justified.
fn apply_received(ctx: &Ctx<'_>, k: i16, updates: &[u64]) -> u64 {
    updates
        .par_chunks(APPLY_CHUNK)
        .map_init(
            || Work::new(ctx),
            |work, chunk| {
                work.budget = ctx.limits.budget;
                let mut unranker = ctx.index.unranker();
                let mut justified = 0;
                for_each_update(chunk, ctx.start, ctx.cells, |j, child_low| {
                    let vc = if child_low { -k } else { k };
                    if ctx.act(k, j, vc) {
                        justified += 1 + ctx.take::<true>(k, j, -vc, work, &mut unranker);
                    }
                });
                justified += ctx.propagate::<true>(k, work);
                ctx.hand_over(work);
                justified
            },
        )
        .sum()
}

/// Deep-verifies this rank's part of tier `n`: `scores` are the stored scores of its range
/// of places of the tier's [`Partition`](crate::comm::Partition) (from `start`, in split
/// order), and hold them again on return (those out of bounds clamped to `±(n + 1)`);
/// `share` holds this rank's share of every lower tier a capture reaches, verified before. Returns this rank's counts; the tier passes when no
/// rank has a mismatch. A collective: every rank calls it with its own range.
///
/// # Errors
/// [`AllocError`] if this rank's bits cannot be allocated, and on every other rank then,
/// naming that rank (the ranks agree on it before their first exchange).
///
/// # Panics
/// If `scores` is not this rank's range of tier `n`, if `n > 48`, or if a rank holds more
/// than 2^32 positions.
#[allow(clippy::too_many_arguments)]
pub fn verify_tier_local(
    comm: &dyn Comm,
    rules: &Rules,
    n: u8,
    start: u64,
    scores: &mut [i8],
    share: &LowerShare,
    config: &PartitionConfig,
    progress: &dyn Progress,
) -> Result<LocalVerdict, AllocError> {
    verify_with(
        comm,
        rules,
        n,
        start,
        scores,
        share,
        config,
        progress,
        WorkLimits::default(),
    )
}

/// [`verify_tier_local`] with the given limits of the depth-first propagation.
#[allow(clippy::too_many_arguments)]
fn verify_with(
    comm: &dyn Comm,
    rules: &Rules,
    n: u8,
    start: u64,
    scores: &mut [i8],
    share: &LowerShare,
    config: &PartitionConfig,
    progress: &dyn Progress,
    limits: WorkLimits,
) -> Result<LocalVerdict, AllocError> {
    let limits = WorkLimits {
        stack: limits.stack.max(1),
        budget: limits.budget.max(1),
    };
    let t0 = Instant::now();
    let (me, ranks) = (comm.rank(), comm.size());
    let index = TierIndex::new(n, IndexKind::Reachable);
    let place = Place::rank(comm, n, config.batch);
    let range = place.part.range(me);
    assert!(
        range.start == start && range.end - range.start == scores.len() as u64,
        "tier {n}: rank {me} holds {range:?}, {} scores from {start} given",
        scores.len()
    );
    let len = scores.len();
    assert!(len as u64 <= 1 << 32, "{len} positions on one rank");
    let words = len.div_ceil(64);
    let masks = len.div_ceil(LEVEL_GRANULE);
    let alloc = |what: &'static str, count: usize| {
        move |e: std::collections::TryReserveError| {
            AllocError::new::<AtomicU64>(n, what, len as u64, count, e.into_io())
        }
    };
    let arrays = try_vec(words, |_| AtomicU64::new(0))
        .map_err(alloc("frontier", words))
        .and_then(|bits| {
            let failed =
                try_vec(words, |_| AtomicU64::new(0)).map_err(alloc("verification bits", words))?;
            let levels =
                try_vec(masks, |_| AtomicU64::new(0)).map_err(alloc("level masks", masks))?;
            Ok((bits, failed, levels))
        });
    let (bits, failed, levels) = agree_arrays(
        comm,
        arrays,
        n,
        "frontier, verification bits and level masks",
        len as u64,
        ((2 * words + masks) * std::mem::size_of::<AtomicU64>()) as u64,
    )?;
    // SAFETY: `AtomicU8` has the size, alignment and validity of `u8` (and so of `i8`);
    // `scores` is borrowed mutably for as long as `cells` lives.
    let cells: &[AtomicU8] =
        unsafe { std::slice::from_raw_parts(scores.as_mut_ptr().cast::<AtomicU8>(), len) };
    let ctx = Ctx {
        rules,
        n,
        index,
        cells,
        bits: &bits,
        failed: &failed,
        levels: &levels,
        limits,
        start,
        part: &place.part,
        ranked: place.outbox(),
        left: AtomicBool::new(false),
    };
    let Some(exchange) = place.ranked() else {
        unreachable!("a rank's place has its ranks")
    };
    let mut exchanged = Exchanged::default();
    let layout = Layout::new(CHUNK, config.batch, ranks);
    let mut stats = LookupStats::default();
    let chunks: Vec<std::ops::Range<usize>> = (0..len)
        .step_by(CHUNK)
        .map(|s| s..(s + CHUNK).min(len))
        .collect();

    progress.start(Phase::Init, len as u64);
    let nonzero: u64 = chunks
        .par_iter()
        .map(|r| encode_cells(n, cells, &failed, &levels, r.clone(), true))
        .sum();
    // The local check: every move worth at most the score, one worth at least it.
    let seeded = AtomicU64::new(0);
    let answer = |w: u64| -> u8 {
        if LowerShare::asked(w).0 == n {
            score_of(ctx.cells[local(start, w)].load(Ordering::Relaxed), 0) as i8 as u8
        } else {
            share.answer(w) as u8
        }
    };
    lookup_pass(
        comm,
        len,
        layout,
        |range| {
            let first = start + range.start as u64;
            let mut cursor = ctx.part.cursor(first..first + range.len() as u64);
            let mut asks = Asks::new(ranks);
            // Per position: score, a move worth more, an exit worth at least it, an in-tier
            // move worth at least it; per look-up: the slot and the seeds captured.
            let mut st = Vec::with_capacity(range.len());
            let mut moves: Vec<(u16, u8)> = Vec::new();
            let mut exits = ExitMoves::new(rules);
            let mut ranker = ChildRanker::new(ctx.index.kind());
            // The children of the current positions that this rank holds, read once they
            // are all fetched: the slot, the seeds captured, where the score is.
            let mut near: Vec<(usize, u8, Held<'_>)> = Vec::with_capacity(SUB * 6);
            for sub in range.clone().step_by(SUB) {
                near.clear();
                for i in sub..(sub + SUB).min(range.end) {
                    let slot = i - range.start;
                    let p = cursor.next().unwrap_or_default();
                    let s = score_of(ctx.cells[i].load(Ordering::Relaxed), 0);
                    let mut e = (s, false, false, false);
                    let mut ask = |mv: &Move| match mv.outcome {
                        Outcome::Continue { child, captured } => {
                            let (word, owner) = share.request_ranked(&child, &mut ranker, mv.house);
                            // A child this rank holds is read here (its score is the one the
                            // exchange would answer: folds change only the justified bits).
                            if owner == me {
                                let held = if LowerShare::asked(word).0 == n {
                                    Held::Cell(&ctx.cells[local(start, word)])
                                } else {
                                    Held::Lower(share.entry(word))
                                };
                                held.fetch();
                                near.push((slot, captured, held));
                            } else {
                                asks.push(word, owner);
                                moves.push((slot as u16, captured));
                            }
                        }
                        Outcome::End { score } => {
                            let v = i16::from(score);
                            e.1 |= v > s;
                            e.2 |= v >= s;
                        }
                    };
                    // Only a zero asks for its in-tier children (see `verify.rs`).
                    let any = if s == 0 {
                        p.for_each_move(rules, |mv| ask(mv))
                    } else {
                        exits.for_each(&p, ask).is_some()
                    };
                    if !any {
                        let v = i16::from(p.end_score());
                        e.1 |= v > s;
                        e.2 |= v >= s;
                    }
                    st.push(e);
                }
                for &(slot, captured, held) in &near {
                    fold_child(&mut st[slot], captured, held.read());
                }
            }
            ((st, moves), asks)
        },
        &answer,
        |range, (mut st, moves), replies| {
            for (&(slot, captured), v) in moves.iter().zip(replies) {
                fold_child(&mut st[slot as usize], captured, v);
            }
            let mut justified = 0;
            for (i, &(s, gt, exit, inner)) in range.clone().zip(&st) {
                if gt || (s == 0 && !(exit || inner)) {
                    Ctx::set(ctx.failed, i);
                }
                // A positive score is justified; a negative one keeps its exit flag.
                if s != 0 && exit {
                    ctx.cells[i].fetch_or(J, Ordering::Relaxed);
                    justified += u64::from(s > 0);
                }
            }
            seeded.fetch_add(justified, Ordering::Relaxed);
            progress.advance(range.len() as u64);
        },
        &mut stats,
    );

    let mut phases = VerifyPhases {
        check_seconds: t0.elapsed().as_secs_f64(),
        ..VerifyPhases::default()
    };
    progress.start(Phase::Propagate, nonzero);
    progress.advance(seeded.into_inner());
    let take_max = (config.batch / 4).max(1);
    // After the levels: each of the `pending` marked positions `j` (a negative score left
    // unjustified) sends its level `t` to its parents (the parent's place shifted left 7
    // bits, or'ed with `t`); those scoring `0..t` fail. Returns when no rank has a mark left.
    // A collective.
    let fail_parents = |mut pending: u64, exchanged: &mut Exchanged| {
        let Some(outbox) = ctx.ranked else {
            unreachable!("a rank's place has its outbox")
        };
        let mut cursor = 0usize;
        loop {
            let taken = take_marked(ctx.bits, &mut cursor, pending, take_max);
            pending -= taken.len() as u64;
            taken.par_chunks(2048).for_each_init(
                || (Queued::new(ctx.ranked), ctx.index.unranker()),
                |(queued, unranker), chunk| {
                    for &j in chunk {
                        let b = ctx.cells[j as usize].load(Ordering::Relaxed);
                        let t = (-score_of(b, 1)) as u64;
                        let p = unranker.unrank(ctx.part.index_at(start + u64::from(j)));
                        p.unmoves(rules, |q, _house| {
                            if q.is_reachable() {
                                let o = ctx.part.place_of(ctx.index.rank_unchecked(&q));
                                outbox.send_word(queued, o, o << 7 | t);
                            }
                        });
                    }
                    outbox.take_in(queued);
                },
            );
            let more = exchange.exchange(pending > 0, exchanged, |updates| {
                updates.par_chunks(APPLY_CHUNK).for_each(|chunk| {
                    for &u in chunk {
                        let j = ((u >> 7) - start) as usize;
                        let t = (u & 127) as i16;
                        if (0..t).contains(&score_of(ctx.cells[j].load(Ordering::Relaxed), 1)) {
                            Ctx::set(ctx.failed, j);
                        }
                    }
                });
            });
            if !more {
                break;
            }
        }
    };
    for k in (1..=i16::from(n) + 1).rev() {
        let t = Instant::now();
        let own = code(-k);
        let stale = pending_base(k + 1);
        let justified = AtomicU64::new(0);
        // The level's start: every −k position counts its in-tier children that are not
        // justified with a score of at least k, asking their owners.
        lookup_pass(
            comm,
            len,
            layout,
            |range| {
                let mut asks = Asks::new(ranks);
                let mut waiting: Vec<Waiting> = Vec::new();
                let mut unranker = ctx.index.unranker();
                let mut ranker = ChildRanker::new(ctx.index.kind());
                // The children this rank holds of the positions since `first`: the
                // position's slot in `waiting` and the child's cell, read once fetched.
                let mut near: Vec<(usize, &AtomicU8)> = Vec::with_capacity(SUB * 6);
                let mut first = 0;
                let read = |waiting: &mut [Waiting], near: &mut Vec<(usize, &AtomicU8)>| {
                    for &(w, cell) in near.iter() {
                        let (counts, at) = counted(cell.load(Ordering::Relaxed), k);
                        waiting[w].counted += u8::from(counts);
                        waiting[w].at |= at;
                    }
                    near.clear();
                };
                ctx.level_candidates(k, range.clone(), |i| {
                    let b = ctx.cells[i].load(Ordering::Relaxed);
                    if b > stale && b <= stale + 6 {
                        ctx.cells[i].store(code(-k - 1), Ordering::Relaxed);
                    } else if b & !J == own {
                        let p = unranker.unrank(ctx.part.index_at(start + i as u64));
                        let slot = waiting.len();
                        let mut asked = 0u8;
                        p.for_each_move(rules, |mv| {
                            if let Outcome::Continue { child, captured: 0 } = mv.outcome {
                                let (word, owner) =
                                    share.request_ranked(&child, &mut ranker, mv.house);
                                if owner == me {
                                    let cell = &ctx.cells[local(start, word)];
                                    prefetch(cell);
                                    near.push((slot, cell));
                                } else {
                                    asks.push(word, owner);
                                    asked += 1;
                                }
                            }
                        });
                        waiting.push(Waiting {
                            at_place: i as u32,
                            asked,
                            exit: b & J != 0,
                            counted: 0,
                            at: false,
                        });
                        if waiting.len() - first == SUB {
                            read(&mut waiting, &mut near);
                            first = waiting.len();
                        }
                    }
                });
                read(&mut waiting, &mut near);
                (waiting, asks)
            },
            // Bit 0: the child counts; bit 1: it scores `k`.
            &|w| {
                let (counts, at) = counted(ctx.cells[local(start, w)].load(Ordering::Relaxed), k);
                u8::from(counts) | u8::from(at) << 1
            },
            |_, waiting, mut replies| {
                let mut done = 0;
                for w in waiting {
                    let (mut c, mut at) = (w.counted, w.at);
                    for r in (&mut replies).take(usize::from(w.asked)) {
                        c += r & 1;
                        at |= r & 2 != 0;
                    }
                    let i = w.at_place as usize;
                    if !(w.exit || at) {
                        Ctx::set(ctx.failed, i);
                    }
                    if c == 0 {
                        ctx.cells[i].store(own | J, Ordering::Relaxed);
                        Ctx::set(ctx.bits, i);
                        done += 1;
                    } else {
                        ctx.cells[i].store(pending_base(k) + c, Ordering::Relaxed);
                    }
                }
                justified.fetch_add(done, Ordering::Relaxed);
            },
            &mut stats,
        );
        progress.advance(justified.into_inner());
        let swept = Instant::now();
        phases.start_seconds += (swept - t).as_secs_f64();
        // The frontier acts on its parents: those this rank holds at once, depth first, as
        // in one process; the others' posted to their owners and applied there as they
        // arrive, until every rank is quiet with no update on its way.
        phases.sweeps += ctx.sweeps::<true>(k, progress);
        let level = u8::try_from(k).unwrap_or_else(|_| unreachable!("level {k}"));
        exchange.until_quiet(
            level,
            &mut exchanged,
            |u| progress.advance(apply_received(&ctx, k, u)),
            || {
                if !ctx.left.load(Ordering::Relaxed) {
                    return false;
                }
                phases.sweeps += ctx.sweeps::<true>(k, progress);
                true
            },
        );
        phases.sweep_seconds += swept.elapsed().as_secs_f64();
    }
    // The negative scores left unjustified complete the local check of their parents (the
    // justified ones did in their level).
    let unjustified: u64 = chunks
        .par_iter()
        .map(|r| {
            let mut marked = 0;
            for i in r.clone() {
                let b = ctx.cells[i].load(Ordering::Relaxed);
                if b & J == 0 && score_of(b, 1) < 0 {
                    Ctx::set(ctx.bits, i);
                    marked += 1;
                }
            }
            marked
        })
        .sum();
    fail_parents(unjustified, &mut exchanged);

    // Failing positions: counted, the first ones listed; the scores put back.
    let (mismatches, first) = chunks
        .par_iter()
        .map(|r| {
            let (mut count, mut listed) = (0u64, Vec::new());
            for i in r.clone() {
                let b = ctx.cells[i].load(Ordering::Relaxed);
                if b & J == 0 || Ctx::bit(ctx.failed, i) {
                    count += 1;
                    listed.push(ctx.part.index_at(start + i as u64));
                    if listed.len() > LISTED {
                        listed.sort_unstable();
                        listed.pop();
                    }
                }
                ctx.cells[i].store(score_of(b, 1) as i8 as u8, Ordering::Relaxed);
            }
            (count, listed)
        })
        .reduce(
            || (0, Vec::new()),
            |(a, mut la), (b, lb)| {
                la.extend(lb);
                la.sort_unstable();
                la.truncate(LISTED);
                (a + b, la)
            },
        );
    phases.exchanged = Some(RankExchanges {
        ranks,
        rounds: exchanged.rounds,
        exchanges: exchanged.exchanges + stats.exchanges,
        updates: exchanged.updates,
        lookups: stats.remote,
        comm_seconds: exchanged.comm_seconds + stats.comm_seconds,
    });
    Ok(LocalVerdict {
        positions: len as u64,
        nonzero,
        mismatches,
        first,
        phases,
    })
}

/// Folds a child's score `v` (as answered: the byte of an `i8`) into the local check of its
/// parent `e` (score, a move worth more, an exit worth at least it, an in-tier move worth at
/// least it): an in-tier child (`captured == 0`) is worth `−v`, a capture `captured − v`.
#[inline]
fn fold_child(e: &mut (i16, bool, bool, bool), captured: u8, v: u8) {
    let v = i16::from(v as i8);
    if captured == 0 {
        e.1 |= -v > e.0;
        e.3 |= -v >= e.0;
    } else {
        let v = i16::from(captured) - v;
        e.1 |= v > e.0;
        e.2 |= v >= e.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::{Partition, ThreadComm};
    use crate::lower::LowerTiers;
    use crate::progress::NoProgress;
    use crate::solve::solve_tier;
    use crate::verify::verify_tier;
    use std::sync::Arc;

    /// What the ranks find of tier `n` (scores `scores`, lower tiers `lower`) over `ranks`
    /// simulated ranks: nonzero positions, failing ones, the first failing indices.
    fn over_ranks(
        rules: &Rules,
        n: u8,
        scores: &[i8],
        lower: &LowerTiers,
        ranks: usize,
        batch: usize,
        limits: WorkLimits,
    ) -> (u64, u64, Vec<u64>) {
        let config = PartitionConfig {
            batch,
            ..PartitionConfig::default()
        };
        let parts = ThreadComm::run(ranks, |c| {
            let share = LowerShare::from_whole(lower, c.rank(), c.size());
            let part = Partition::of_tier(n, c.size());
            let mut mine = part.share_of(c.rank(), scores);
            let start = part.range(c.rank()).start;
            let v = verify_with(
                c,
                rules,
                n,
                start,
                &mut mine,
                &share,
                &config,
                &NoProgress,
                limits,
            )
            .expect("bits allocate");
            // The scores are put back, clamped out of bounds.
            let bound = i16::from(n) + 1;
            for (a, b) in mine.iter().zip(&part.share_of(c.rank(), scores)) {
                assert_eq!(i16::from(*a), i16::from(*b).clamp(-bound, bound));
            }
            v
        });
        let mut first: Vec<u64> = parts.iter().flat_map(|p| p.first.clone()).collect();
        first.sort_unstable();
        first.truncate(LISTED);
        (
            parts.iter().map(|p| p.nonzero).sum(),
            parts.iter().map(|p| p.mismatches).sum(),
            first,
        )
    }

    /// Cascades cut short on the ranks (work stacks of one or two positions, budgets of one or
    /// five, exchanges of a few words) leave their rest to the frontier and the exchanges: the
    /// verdicts are one process's, on correct tables and on changed ones, under both presets.
    #[test]
    fn tiny_work_stacks_over_ranks_give_one_process_verdicts() {
        let max = 9u8;
        for rules in [Rules::ABAPA, Rules::AWARI] {
            let mut lower = LowerTiers::new();
            for n in 0..=max {
                let (solved, _) = solve_tier(&rules, n, &lower, &NoProgress).expect("tier");
                let good = solved.to_vec();
                let mut bad = good.clone();
                let mut x = 0x2545_F491_4F6C_DD1Du64 ^ u64::from(n);
                for _ in 0..bad.len() / 40 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let i = (x % bad.len() as u64) as usize;
                    bad[i] = match x >> 62 {
                        0 => bad[i].saturating_add(1),
                        1 => bad[i].saturating_sub(1),
                        _ => -bad[i],
                    };
                }
                for (case, scores) in [&good, &bad].into_iter().enumerate() {
                    let whole = verify_tier(&rules, n, scores, &lower, &NoProgress).unwrap();
                    let want = (
                        whole.nonzero,
                        whole.mismatches,
                        whole.first.iter().map(|m| m.index).collect::<Vec<_>>(),
                    );
                    if n >= 6 {
                        assert_eq!(want.1 == 0, case == 0, "{rules} tier {n} case {case}");
                    }
                    for (ranks, batch, stack, budget) in
                        [(2, 64, 1, 1), (3, 1 << 22, 2, 5), (2, 1 << 22, 1, 1 << 20)]
                    {
                        let limits = WorkLimits { stack, budget };
                        let got = over_ranks(&rules, n, scores, &lower, ranks, batch, limits);
                        assert_eq!(
                            got, want,
                            "{rules} tier {n} case {case}, {ranks} ranks, batch {batch}, {limits:?}"
                        );
                    }
                }
                lower.push(Arc::from(good));
            }
        }
    }
}
