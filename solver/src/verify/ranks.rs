//! Deep verification of one tier split over the ranks: the proof of `verify.rs` (its local
//! check and its justification by levels, with the same one-byte cells and two bits per
//! position), each rank holding its range of places of the tier ([`Partition`]) and its
//! share of the lower tiers.
//!
//! - The local check asks the owners for the stored scores of every capture's child (the
//!   share of the lower tiers) and of the zeros' in-tier children ([`lookup_pass`]); the
//!   rest of it is done where the justification meets the children, as in `verify.rs`.
//! - At the start of level `k`, a waiting `−k` position asks the owner of each in-tier
//!   child whether it counts (not justified with a score of at least `k`) and whether it
//!   scores `k`.
//! - The positions justified during a level act on their parents through the un-moves, sent
//!   to the parents' owners in bounded all-to-all rounds, as the solver's propagation does;
//!   a level ends when no rank has a frontier and no update is in flight. After the levels,
//!   the negative positions left unjustified send their scores to their parents the same
//!   way.
//!
//! The answers a level's start asks for do not change while it runs (only `−k` positions
//! change state then, and they count either way), and the justification is the least set
//! of its rules whatever the order of the updates: the verdict is that of one process.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use oware_db::index::{IndexKind, TierIndex};
use oware_db::retro::{ChildRanker, ExitMoves};
use oware_db::{Move, Outcome, Rules};
use rayon::prelude::*;

use super::{act_on_cell, code, encode_cells, pending_base, score_of, Acted, J, LISTED};
use crate::comm::{agree_arrays, Comm, Partition, PartitionConfig};
use crate::error::{AllocError, IntoIo};
use crate::granule::LEVEL_GRANULE;
use crate::hugepage::try_vec;
use crate::lower::lookup::{lookup_pass, Asks, Layout, LookupStats};
use crate::lower::share::LowerShare;
use crate::progress::{Phase, Progress};

/// Positions per rayon task (a multiple of 64 and of [`LEVEL_GRANULE`]).
const CHUNK: usize = 1 << 14;

/// One rank's part of the verification of a tier.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalVerdict {
    /// Positions this rank holds.
    pub positions: u64,
    /// Of which nonzero.
    pub nonzero: u64,
    /// Of which failing.
    pub mismatches: u64,
    /// The failing positions of lowest index held here, at most 10, as indices of the tier.
    pub first: Vec<u64>,
}

struct Ctx<'a> {
    n: u8,
    index: TierIndex,
    part: Partition,
    start: u64,
    cells: &'a [AtomicU8],
    /// The frontier during the levels.
    bits: &'a [AtomicU64],
    /// Failed the bound or the local check.
    failed: &'a [AtomicU64],
    /// Per [`LEVEL_GRANULE`] positions: bit `k` when some position holds `−k`.
    levels: &'a [AtomicU64],
}

impl Ctx<'_> {
    #[inline]
    fn set(words: &[AtomicU64], i: usize) {
        words[i / 64].fetch_or(1 << (i % 64), Ordering::Relaxed);
    }

    #[inline]
    fn bit(words: &[AtomicU64], i: usize) -> bool {
        words[i / 64].load(Ordering::Relaxed) >> (i % 64) & 1 != 0
    }

    /// The local place of a look-up word of this tier.
    #[inline]
    fn local(&self, word: u64) -> usize {
        (LowerShare::asked(word).1 - self.start) as usize
    }

    /// The cells of `range` encoded ([`encode_cells`]); returns how many are nonzero.
    fn encode(&self, range: std::ops::Range<usize>) -> u64 {
        encode_cells(self.n, self.cells, self.failed, self.levels, range, true)
    }

    /// A child justified at level `k` with score `vc` (`±k`) acts on the held parent `j`.
    /// Returns whether `j` entered the frontier.
    /// The transition is the one-process verifier's ([`act_on_cell`]).
    #[inline]
    fn act(&self, k: i16, j: usize, vc: i16) -> bool {
        match act_on_cell(&self.cells[j], k, vc) {
            Acted::Justified => {
                Self::set(self.bits, j);
                true
            }
            Acted::Fails => {
                Self::set(self.failed, j);
                false
            }
            Acted::Nothing => false,
        }
    }

    /// A child scoring `−t` fails the held parent `j` when the parent scores `0..t`: the
    /// move to the child is worth more than its score. `k`: the level (1 after the levels).
    #[inline]
    fn fail_below(&self, j: usize, t: i16, k: i16) {
        if (0..t).contains(&score_of(self.cells[j].load(Ordering::Relaxed), k)) {
            Self::set(self.failed, j);
        }
    }

    /// Takes up to about `max` positions (whole words) from the frontier, from word
    /// `*cursor` on, wrapping around; `pending` is the number of marked bits.
    fn take(&self, cursor: &mut usize, pending: u64, max: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let words = self.bits.len();
        let mut left = pending;
        while left > 0 && out.len() < max && words > 0 {
            let w = *cursor;
            *cursor = if w + 1 == words { 0 } else { w + 1 };
            if self.bits[w].load(Ordering::Relaxed) == 0 {
                continue;
            }
            let mut bits = self.bits[w].swap(0, Ordering::Relaxed);
            left = left.saturating_sub(u64::from(bits.count_ones()));
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                out.push((w * 64 + b) as u32);
            }
        }
        out
    }
}

/// Deep-verifies this rank's part of tier `n`: `scores` are the stored scores of its range
/// of places of the tier's [`Partition`] (from `start`, in split order), and hold them again
/// on return (those out of
/// bounds clamped to `±(n + 1)`); `share` holds this rank's share of every lower tier a
/// capture reaches, verified before. Returns this rank's counts; the tier passes when no
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
    let (me, ranks) = (comm.rank(), comm.size());
    let index = TierIndex::new(n, IndexKind::Reachable);
    let part = Partition::new(&index, ranks);
    let range = part.range(me);
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
        n,
        index,
        part,
        start,
        cells,
        bits: &bits,
        failed: &failed,
        levels: &levels,
    };
    let layout = Layout::new(CHUNK, config.batch, ranks);
    let mut stats = LookupStats::default();
    let chunks: Vec<std::ops::Range<usize>> = (0..len)
        .step_by(CHUNK)
        .map(|s| s..(s + CHUNK).min(len))
        .collect();

    progress.start(Phase::Init, len as u64);
    let nonzero: u64 = chunks.par_iter().map(|r| ctx.encode(r.clone())).sum();
    // The local check: every move worth at most the score, one worth at least it.
    let seeded = AtomicU64::new(0);
    let answer = |w: u64| -> u8 {
        if LowerShare::asked(w).0 == n {
            score_of(ctx.cells[ctx.local(w)].load(Ordering::Relaxed), 0) as i8 as u8
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
            for (slot, i) in range.clone().enumerate() {
                let p = cursor.next().unwrap_or_default();
                let s = score_of(ctx.cells[i].load(Ordering::Relaxed), 0);
                let mut e = (s, false, false, false);
                let mut ask = |mv: &Move| match mv.outcome {
                    Outcome::Continue { child, captured } => {
                        let (word, owner) = share.request_ranked(&child, &mut ranker, mv.house);
                        // A child this rank holds is read at once (its score is the one the
                        // exchange would answer: folds change only the justified bits).
                        if owner == me {
                            fold_child(&mut e, captured, answer(word));
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

    progress.start(Phase::Propagate, nonzero);
    progress.advance(seeded.into_inner());
    let take_max = (config.batch / 4).max(1);
    let per_dest = (config.batch / ranks).max(1);
    // Drains the frontier (`pending` marked positions here): each marked position `j` sends
    // `field(j)` (7 bits) to the owners of its parents, which call `apply(parent, field)`;
    // a parent for which it returns true has entered the frontier. Returns when no rank has
    // a frontier and no update is in flight. A collective.
    let drain = |mut pending: u64,
                 field: &(dyn Fn(usize) -> u64 + Sync),
                 apply: &(dyn Fn(usize, u64) -> bool + Sync)| {
        let mut cursor = 0usize;
        loop {
            let taken = ctx.take(&mut cursor, pending, take_max);
            pending -= taken.len() as u64;
            let parts: Vec<Vec<Vec<u64>>> = taken
                .par_chunks(2048)
                .map(|chunk| {
                    let mut buckets = vec![Vec::new(); ranks];
                    let mut unranker = ctx.index.unranker();
                    for &j in chunk {
                        let x = field(j as usize);
                        let p = unranker.unrank(ctx.part.index_at(start + u64::from(j)));
                        p.unmoves(rules, |q, _house| {
                            if q.is_reachable() {
                                let o = ctx.part.place_of(ctx.index.rank_unchecked(&q));
                                buckets[ctx.part.owner(o)].push(o << 7 | x);
                            }
                        });
                    }
                    buckets
                })
                .collect();
            drop(taken);
            let mut buckets: Vec<Vec<u64>> = (0..ranks)
                .map(|d| Vec::with_capacity(parts.iter().map(|b| b[d].len()).sum()))
                .collect();
            for part in parts {
                for (d, b) in part.into_iter().enumerate() {
                    buckets[d].extend(b);
                }
            }
            let longest = buckets.iter().map(Vec::len).max().unwrap_or(0);
            let need = (longest.div_ceil(per_dest) as u64).max(u64::from(pending > 0));
            let subrounds = comm.all_reduce_max(need);
            if subrounds == 0 {
                break;
            }
            for s in 0..subrounds as usize {
                let out: Vec<Vec<u64>> = buckets
                    .iter()
                    .map(|b| {
                        let lo = (s * per_dest).min(b.len());
                        b[lo..(lo + per_dest).min(b.len())].to_vec()
                    })
                    .collect();
                let got = comm.exchange(out);
                let marked: u64 = got
                    .par_iter()
                    .map(|updates| {
                        updates
                            .iter()
                            .filter(|&&u| apply(((u >> 7) - start) as usize, u & 127))
                            .count() as u64
                    })
                    .sum();
                pending += marked;
                progress.advance(marked);
            }
        }
    };
    for k in (1..=i16::from(n) + 1).rev() {
        let own = code(-k);
        let stale = pending_base(k + 1);
        let wanted = 3u64 << k;
        let justified = AtomicU64::new(0);
        // The level's start: every −k position counts its in-tier children that are not
        // justified with a score of at least k, asking their owners.
        lookup_pass(
            comm,
            len,
            layout,
            |range| {
                let mut asks = Asks::new(ranks);
                let mut waiting: Vec<(u32, u8, bool)> = Vec::new();
                let mut unranker = ctx.index.unranker();
                for g in range.clone().step_by(LEVEL_GRANULE) {
                    if ctx.levels[g / LEVEL_GRANULE].load(Ordering::Relaxed) & wanted == 0 {
                        continue;
                    }
                    for i in g..range.end.min(g + LEVEL_GRANULE) {
                        let b = ctx.cells[i].load(Ordering::Relaxed);
                        if b > stale && b <= stale + 6 {
                            ctx.cells[i].store(code(-k - 1), Ordering::Relaxed);
                        } else if b & !J == own {
                            let p = unranker.unrank(ctx.part.index_at(start + i as u64));
                            let mut count = 0u8;
                            p.for_each_move(rules, |mv| {
                                if let Outcome::Continue { child, captured: 0 } = mv.outcome {
                                    let (word, owner) = share.request(&child);
                                    asks.push(word, owner);
                                    count += 1;
                                }
                            });
                            waiting.push((i as u32, count, b & J != 0));
                        }
                    }
                }
                (waiting, asks)
            },
            // Bit 0: the child counts; bit 1: it scores `k`.
            &|w| {
                let b = ctx.cells[ctx.local(w)].load(Ordering::Relaxed);
                let v = score_of(b, k);
                u8::from(b & J == 0 || v < k) | u8::from(v == k) << 1
            },
            |_, waiting, mut replies| {
                let mut done = 0;
                for (i, children, exit) in waiting {
                    let (mut c, mut at) = (0u8, false);
                    for r in (&mut replies).take(children as usize) {
                        c += r & 1;
                        at |= r & 2 != 0;
                    }
                    let i = i as usize;
                    if !(exit || at) {
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
        let pending = justified.into_inner();
        progress.advance(pending);
        // The frontier acts on its parents, wherever they are held.
        drain(
            pending,
            &|j| u64::from(score_of(ctx.cells[j].load(Ordering::Relaxed), k) < 0),
            &|j, low| ctx.act(k, j, if low == 1 { -k } else { k }),
        );
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
    drain(
        unjustified,
        &|j| (-score_of(ctx.cells[j].load(Ordering::Relaxed), 1)) as u64,
        &|j, t| {
            ctx.fail_below(j, t as i16, 1);
            false
        },
    );

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
    Ok(LocalVerdict {
        positions: len as u64,
        nonzero,
        mismatches,
        first,
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
