//! The levels decided in rounds, breadth first, so that each position's distance to
//! conversion (docs/RULES.md) is the round that decides it: what [`solve_tier`] does in place
//! of the depth-first propagation when [`Tuning::distances`] asks for distances.
//!
//! At level `k` every position scoring `±k` is decided by the level's scan or by a child of
//! the same level (docs/DESIGN.md, *Levels*), and its distance depends only on those
//! children:
//!
//! - round 0 holds the scan's positions without a legal move (distance 0);
//! - the scan's other positions (a waiting position of exit `k`, whose keeping exit is one
//!   ply; a pending `−k`, every keeping move of which leaves the tier) are at distance 1;
//! - a child taken in round `r` decides its parents in round `r + 1`: a high parent with its
//!   first low child, the nearest, since every child of an earlier round was taken before;
//!   a low parent with its last open child, the farthest, since every other child that keeps
//!   its score was taken in an earlier round or this one.
//!
//! A round's positions are carried with their boards from the round that decided them
//! (lists of at most [`CARRY`] entries in all; the rest go to a frontier bit set, one per
//! round parity, and are unranked when swept), so nothing is unranked twice.
//!
//! Over several ranks (`ranks.rs`) each rank runs the rounds on its range: an update whose
//! parent another rank holds is queued for it, and every round ends with exchanges that
//! apply the updates received, deciding their parents in the next round as if they had been
//! applied in place (those go to the next round's frontier bits). A round also stops for an
//! exchange whenever the outbox is full, leaving the rest of its positions for after it. The
//! ranks make the same rounds, until no rank has a position left to take, so the distances
//! are those of one process.
//!
//! [`solve_tier`]: super::solve_tier
//! [`Tuning::distances`]: super::Tuning::distances

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, Ordering};

use oware_db::rules::GrandSlam;
use oware_db::{Position, Rules};
use rayon::prelude::*;

use super::scan::scan_chunk;
use super::{Ctx, Decided, BATCH, CHILD_LOW, CHUNK};
use crate::comm::exchange::{for_each_update, Exchanged, Queued, Ranks, APPLY_CHUNK};
use crate::granule::DIRTY;
use crate::prefetch::prefetch;

/// Positions carried with their boards from one round to the next per position of a work
/// stack ([`Tuning::stack`](super::Tuning::stack)): 2^18 by default, 32 bytes each; the
/// others are marked in the frontier bits.
pub(super) const CARRY_PER_STACK: usize = 32;

/// Bytes the carried lists take at most with the default tuning: those a round reads and
/// those it makes (16 MiB).
pub(crate) const CARRY_BYTES: u64 =
    2 * (CARRY_PER_STACK * (1 << 13) * std::mem::size_of::<Decided>()) as u64;

/// Positions of a carried list handled per parallel work item.
const CARRY_PIECE: usize = 2048;

/// The state of the rounds beside the solver's [`Ctx`].
pub(super) struct Rounds<'a> {
    /// Each position's distance plus one, 0 where none was found (yet), for the positions
    /// of the window from index `first` on (`spill.rs`); the others' are not kept.
    pub dist: &'a [AtomicU8],
    first: u64,
    /// The frontier bits of the rounds of even and odd number, and their dirty flags.
    pub bits: [&'a [AtomicU64]; 2],
    pub dirty: [&'a [AtomicBool]; 2],
    /// Most entries the lists of one round take.
    carry: i64,
    /// Entries the lists of the round being made may still take.
    room: AtomicI64,
    /// Positions marked in each parity's bits since they were last swept.
    marked: [AtomicU64; 2],
    /// A distance beyond what a byte holds was met.
    pub too_far: AtomicBool,
}

impl<'a> Rounds<'a> {
    /// The rounds' state over these arrays, carrying at most `carry` positions with their
    /// boards from one round to the next, keeping the distances of the positions from index
    /// `first` on in `dist`.
    pub(super) fn new(
        dist: &'a [AtomicU8],
        first: u64,
        bits: [&'a [AtomicU64]; 2],
        dirty: [&'a [AtomicBool]; 2],
        carry: i64,
    ) -> Self {
        Rounds {
            dist,
            first,
            bits,
            dirty,
            carry,
            room: AtomicI64::new(carry),
            marked: [AtomicU64::new(0), AtomicU64::new(0)],
            too_far: AtomicBool::new(false),
        }
    }

    /// Marks `j` in the bits of parity `to` (never those being swept: a round sweeps one
    /// parity and marks the other, and rounds are separated by rayon's joins).
    #[inline]
    fn mark(&self, to: usize, j: u64) {
        self.bits[to][j as usize / 64].fetch_or(1 << (j % 64), Ordering::Relaxed);
        let flag = &self.dirty[to][j as usize / DIRTY];
        if !flag.load(Ordering::Relaxed) {
            flag.store(true, Ordering::Relaxed);
        }
        if self.marked[to].load(Ordering::Relaxed) == 0 {
            self.marked[to].store(1, Ordering::Relaxed);
        }
    }

    /// Takes up to [`ROOM_GRANT`] entries of the lists' room for one work item: how many it
    /// got (0 once the room is spent).
    #[inline]
    fn grant(&self) -> u32 {
        let before = self.room.fetch_sub(ROOM_GRANT, Ordering::Relaxed);
        before.clamp(0, ROOM_GRANT) as u32
    }

    /// Records the distance `d` of the position `j` just decided.
    #[inline(always)]
    fn set(&self, j: u64, d: u64) {
        if d > u64::from(crate::distance::MAX_DISTANCE) {
            self.too_far.store(true, Ordering::Relaxed);
        }
        if let Some(cell) = self.dist.get(j.wrapping_sub(self.first) as usize) {
            cell.store(d.min(254) as u8 + 1, Ordering::Relaxed);
        }
    }

    /// Whether `made`'s list has room for one more position (taking a grant of the lists'
    /// room when its own is spent).
    #[inline(always)]
    fn has_room(&self, made: &mut Made) -> bool {
        if made.room == 0 && !made.spent {
            made.room = self.grant();
            made.spent = made.room == 0;
        }
        made.room > 0
    }

    /// Hands over the position `j` (low if `low`, board `p`) for the round of parity `to`:
    /// onto `made`'s list while the lists have room, otherwise into that round's frontier
    /// bits.
    #[inline(always)]
    fn hand_over(&self, made: &mut Made, to: usize, j: u64, low: bool, p: Position) {
        if self.has_room(made) {
            made.room -= 1;
            made.out.push((j | u64::from(low) << CHILD_LOW, p));
        } else {
            self.mark(to, j);
        }
    }
}

/// Whether `p` has no legal move under `rules`: the game ends there (rule 6).
#[inline]
pub(crate) fn has_no_move(p: &Position, rules: &Rules) -> bool {
    if p.mover_seeds() == 0 {
        return true;
    }
    // With seeds on both sides every house that holds some is a legal move, unless a
    // grand slam is illegal.
    if p.opponent_seeds() > 0 && rules.grand_slam != GrandSlam::Illegal {
        return false;
    }
    !p.for_each_move(rules, |_| {})
}

/// Entries of the lists' room a work item takes at a time (the rest of its last grant is
/// lost to the round: a few thousand entries at most).
const ROOM_GRANT: i64 = 256;

/// What one work item of a round leaves: the positions it decided, carried for the next
/// round, and how many it took and decided.
#[derive(Default)]
struct Made {
    out: Vec<Decided>,
    taken: u64,
    decided: u64,
    /// Entries of its grant of the lists' room left.
    room: u32,
    /// The room was found spent: the rest goes to the bits.
    spent: bool,
}

/// A work item's buffers.
struct Step {
    buf: Vec<(u64, Position)>,
    made: Made,
    /// Over several ranks, the updates of other ranks' parents not yet handed to the outbox.
    queued: Queued,
}

impl Step {
    fn new(ctx: &Ctx<'_>) -> Self {
        Step {
            buf: Vec::with_capacity(BATCH + 64),
            made: Made::default(),
            queued: Queued::new(ctx.ranked),
        }
    }

    /// Propagates the position `j` of round `r` (low if `low`, board `p`) one step: its
    /// parents' updates are buffered and applied in batches. `R`: over several ranks (a
    /// parent may be another rank's, see [`Ctx::apply`]).
    #[inline(always)]
    fn take<const R: bool>(
        &mut self,
        ctx: &Ctx<'_>,
        rounds: &Rounds<'_>,
        k: i8,
        r: u64,
        d: Decided,
    ) {
        let (j, p) = d;
        let low = j >> CHILD_LOW != 0;
        // `Ctx::parents` inlined by hand: a closure of its own gives `unmoves_reachable` an
        // instance of its own here, so that the depth-first propagation's instance keeps its
        // one caller and stays inlined there (sharing it made `--no-distance` 1.1 times
        // slower: callgrind showed the un-moves and the rank called out of line).
        let buf = &mut self.buf;
        let half = ctx.index.opponent_half(&p.flipped());
        p.unmoves_reachable_by_side(ctx.rules, |q, _house, same| {
            let i = if same {
                ctx.index.rank_beside(&q, &half)
            } else {
                ctx.index.rank_unchecked(&q)
            };
            if R {
                let i = ctx.part.place_of(i);
                if let Some(cell) = ctx.cells.get(i.wrapping_sub(ctx.start) as usize) {
                    prefetch(cell);
                }
                buf.push((i | u64::from(low) << CHILD_LOW, q));
            } else {
                prefetch(&ctx.cells[i as usize]);
                buf.push((i | u64::from(low) << CHILD_LOW, q));
            }
        });
        self.made.taken += 1;
        if self.buf.len() >= BATCH {
            self.flush::<R>(ctx, rounds, k, r);
        }
    }

    /// Applies the buffered updates of round `r`: a parent decided by one is at distance
    /// `r + 1`, handed over to the next round; over several ranks, another rank's parent is
    /// queued for it.
    fn flush<const R: bool>(&mut self, ctx: &Ctx<'_>, rounds: &Rounds<'_>, k: i8, r: u64) {
        let to = ((r + 1) % 2) as usize;
        for &(update, p) in &self.buf {
            if let Some((j, low)) = ctx.apply::<R>(update, k, &mut self.queued) {
                rounds.set(j, r + 1);
                rounds.hand_over(&mut self.made, to, j, low, p);
                self.made.decided += 1;
            }
        }
        self.buf.clear();
    }

    fn finish<const R: bool>(mut self, ctx: &Ctx<'_>, rounds: &Rounds<'_>, k: i8, r: u64) -> Made {
        self.flush::<R>(ctx, rounds, k, r);
        if let Some(outbox) = ctx.ranked {
            outbox.take_in(&mut self.queued);
        }
        self.made
    }
}

/// Where the rounds of a level run: in one process, or over the ranks, counting what they
/// exchange.
pub(super) struct Over<'r, 'a> {
    pub ranks: &'r Ranks<'a>,
    pub exchanged: &'r mut Exchanged,
}

/// Decides level `k` in rounds (see the module docs), over the ranks of `over` if some.
/// Returns how many positions it propagated and how many rounds it took.
pub(super) fn level_in_rounds(
    ctx: &Ctx<'_>,
    rounds: &Rounds<'_>,
    k: i8,
    over: Option<&mut Over<'_, '_>>,
) -> (u64, u64) {
    match over {
        Some(over) => level_in::<true>(ctx, rounds, k, Some(over)),
        None => level_in::<false>(ctx, rounds, k, None),
    }
}

/// [`level_in_rounds`] over several ranks (`R`) or in one process.
fn level_in<const R: bool>(
    ctx: &Ctx<'_>,
    rounds: &Rounds<'_>,
    k: i8,
    mut over: Option<&mut Over<'_, '_>>,
) -> (u64, u64) {
    // The scan: positions without a move go to round 0's bits, the others to round 1's list.
    rounds.room.store(rounds.carry, Ordering::Relaxed);
    // A position without a move scores its end score, the seeds of its side less the
    // other's; with seeds on both sides some move is legal unless a grand slam is illegal
    // (`has_no_move`), so otherwise such a position holds every seed on one side and scores
    // `±n`: the scans of lower levels need not look for one.
    let terminals = k == ctx.n as i8 || ctx.rules.grand_slam == GrandSlam::Illegal;
    let scanned: Vec<Made> = ctx
        .cells
        .par_chunks(CHUNK)
        .enumerate()
        .map_init(
            || ctx.index.unranker(),
            |unranker, (c, chunk)| {
                let mut made = Made::default();
                scan_chunk(ctx, k, c, chunk, |j, v| {
                    made.decided += 1;
                    if !terminals && !rounds.has_room(&mut made) {
                        // Unranked when its round sweeps it.
                        rounds.set(j, 1);
                        rounds.mark(1, j);
                        return;
                    }
                    let p = unranker.unrank(ctx.index_of::<R>(j));
                    if terminals && has_no_move(&p, ctx.rules) {
                        rounds.set(j, 0);
                        rounds.mark(0, j);
                    } else {
                        rounds.set(j, 1);
                        rounds.hand_over(&mut made, 1, j, v < 0, p);
                    }
                });
                made
            },
        )
        .filter(|m| m.decided > 0)
        .collect();
    let mut left: u64 = scanned.iter().map(|m| m.decided).sum();
    // Round 0 reads only bits; the scan's lists wait for round 1.
    let mut carried: Vec<Vec<Decided>> = Vec::new();
    let mut waiting: Vec<Vec<Decided>> = scanned.into_iter().map(|m| m.out).collect();
    let mut taken = 0u64;
    let mut r = 0u64;
    // Over several ranks, every rank makes a round while any rank has a position left.
    while match over.as_deref() {
        Some(o) if R => o.ranks.max(left) > 0,
        _ => left > 0,
    } {
        // Round 0's lists share the room with the scan's, which round 1 reads with them.
        if r > 0 {
            rounds.room.store(rounds.carry, Ordering::Relaxed);
        }
        let made = round::<R>(ctx, rounds, k, r, &carried, over.as_deref_mut());
        taken += made.iter().map(|m| m.taken).sum::<u64>();
        let decided: u64 = made.iter().map(|m| m.decided).sum();
        left -= made.iter().map(|m| m.taken).sum::<u64>();
        left += decided;
        carried = std::mem::take(&mut waiting);
        carried.extend(made.into_iter().map(|m| m.out).filter(|v| !v.is_empty()));
        r += 1;
    }
    (taken, r)
}

/// Round `r` of level `k`: takes the positions carried in `carried` and those marked in the
/// round's bits, and propagates each one step. Over several ranks (`R`, `over`), the round
/// stops for an exchange whenever the outbox is full and once its positions are all taken,
/// until no rank has work or updates left; the updates received decide their parents for
/// the next round.
fn round<const R: bool>(
    ctx: &Ctx<'_>,
    rounds: &Rounds<'_>,
    k: i8,
    r: u64,
    carried: &[Vec<Decided>],
    mut over: Option<&mut Over<'_, '_>>,
) -> Vec<Made> {
    let from = (r % 2) as usize;
    let full = || ctx.outbox_full::<R>();
    let mut pieces: Vec<&[Decided]> = carried
        .iter()
        .flat_map(|list| list.chunks(CARRY_PIECE))
        .collect();
    let mut made: Vec<Made> = Vec::new();
    loop {
        // The carried positions, a piece at a time: over several ranks, the pieces met once
        // the outbox is full wait for the next step.
        let stepped: Vec<Result<Made, &[Decided]>> = pieces
            .par_iter()
            .map(|&piece| {
                if full() {
                    return Err(piece);
                }
                let mut step = Step::new(ctx);
                for &d in piece {
                    step.take::<R>(ctx, rounds, k, r, d);
                }
                Ok(step.finish::<R>(ctx, rounds, k, r))
            })
            .collect();
        pieces.clear();
        for s in stepped {
            match s {
                Ok(m) => made.push(m),
                Err(piece) => pieces.push(piece),
            }
        }
        if rounds.marked[from].swap(0, Ordering::Relaxed) != 0 {
            made.extend(sweep_bits::<R>(ctx, rounds, k, r));
        }
        let Some(o) = over.as_deref_mut().filter(|_| R) else {
            return made;
        };
        let more = !pieces.is_empty() || rounds.marked[from].load(Ordering::Relaxed) != 0;
        let mut got = Made::default();
        if !o.ranks.exchange(more, o.exchanged, |updates| {
            got.decided += apply_received(ctx, rounds, k, r, updates);
        }) {
            return made;
        }
        made.push(got);
    }
}

/// The positions marked in the bits of round `r`, by runs of `FLAGS` dirty flags, each
/// flag's positions swept when it is set. Over several ranks (`R`), the flags met once the
/// outbox is full are left set, and the round's bits marked again, for the next step.
fn sweep_bits<const R: bool>(ctx: &Ctx<'_>, rounds: &Rounds<'_>, k: i8, r: u64) -> Vec<Made> {
    const FLAGS: usize = 64;
    const WORDS: usize = DIRTY / 64;
    let from = (r % 2) as usize;
    let (bits, dirty) = (rounds.bits[from], rounds.dirty[from]);
    dirty
        .par_chunks(FLAGS)
        .enumerate()
        .filter(|(_, flags)| flags.iter().any(|f| f.load(Ordering::Relaxed)))
        .map_init(
            || ctx.index.unranker(),
            |unranker, (c, flags)| {
                let mut step = Step::new(ctx);
                for (g, flag) in flags.iter().enumerate() {
                    if ctx.outbox_full::<R>() {
                        if flags[g..].iter().any(|f| f.load(Ordering::Relaxed)) {
                            rounds.marked[from].store(1, Ordering::Relaxed);
                        }
                        break;
                    }
                    if !flag.swap(false, Ordering::Relaxed) {
                        continue;
                    }
                    let first = (c * FLAGS + g) * WORDS;
                    for (w, word) in bits[first..].iter().take(WORDS).enumerate() {
                        let mut x = word.swap(0, Ordering::Relaxed);
                        let base = ((first + w) as u64) * 64;
                        while x != 0 {
                            let j = base + u64::from(x.trailing_zeros());
                            x &= x - 1;
                            let low = ctx.cells[j as usize].load(Ordering::Relaxed)
                                == super::cell::Codes::decided(-k);
                            let p = unranker.unrank(ctx.index_of::<R>(j));
                            step.take::<R>(ctx, rounds, k, r, (j | u64::from(low) << CHILD_LOW, p));
                        }
                    }
                }
                step.finish::<R>(ctx, rounds, k, r)
            },
        )
        .collect()
}

/// Applies updates of round `r` received from other ranks at level `k` (each the parent's
/// place shifted left once, the low bit set when the child is low: parents this rank
/// holds): a parent one decides is at distance `r + 1`, marked in the next round's bits.
/// Returns how many it decided.
fn apply_received(ctx: &Ctx<'_>, rounds: &Rounds<'_>, k: i8, r: u64, updates: &[u64]) -> u64 {
    let to = ((r + 1) % 2) as usize;
    updates
        .par_chunks(APPLY_CHUNK)
        .map(|chunk| {
            let mut decided = 0;
            for_each_update(chunk, ctx.start, ctx.cells, |j, child_low| {
                if ctx.act(j, child_low, k).is_some() {
                    rounds.set(j, r + 1);
                    rounds.mark(to, j);
                    decided += 1;
                }
            });
            decided
        })
        .sum()
}

/// Turns the distances plus one of [`Rounds::dist`] into the bytes of a distance table, in
/// place: `d + 1` into `d`, 0 (none) into [`NO_DISTANCE`](crate::distance::NO_DISTANCE).
pub(crate) fn finish_distances(bytes: &mut [u8]) {
    bytes.par_chunks_mut(CHUNK).for_each(|chunk| {
        for b in chunk {
            *b = b.wrapping_sub(1);
        }
    });
}
