//! The exchange of updates between ranks, below the engines that use it: where a tier is
//! solved or verified ([`Place`]: the whole tier in one process, or one rank's range of
//! places), the updates of other ranks' positions queued until they are sent ([`Outbox`]),
//! and the two ways of sending them: posted to their owners as they come, each level ended
//! when every rank is quiet ([`Ranks::until_quiet`], the levels' propagation), or in
//! bounded all-to-all exchanges ([`Ranks::exchange`], where every rank must take part in
//! step, as the distances' rounds do). The solver (`solve/ranks.rs`) and the deep verifier
//! (`verify/ranks.rs`) apply what they receive with their own cell transitions. One rank is
//! one process: nothing is queued, and a level ends at once.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use super::{Comm, Partition};
use crate::error::AllocError;
use crate::prefetch::prefetch;

/// Updates a task queues for one rank before it hands them to the outbox.
const QUEUED: usize = 1024;

/// Messages posted to one rank and not yet received before [`Ranks::until_quiet`] holds
/// back the next (each at most `per_dest` updates: with the outbox and the message being
/// applied, the four batches that [`exchange_memory`](crate::memory::exchange_memory)
/// counts).
const IN_FLIGHT: usize = 2;

/// Received updates per parallel work item.
pub(crate) const APPLY_CHUNK: usize = 1 << 12;

/// How many received updates ahead a cell is prefetched.
const PREFETCH_AHEAD: usize = 32;

/// Where a tier is solved: the whole of it in this process, or one rank's range of places.
pub(crate) struct Place<'a> {
    /// The first place the arrays hold.
    pub start: u64,
    /// Positions the arrays hold.
    pub len: usize,
    /// The tier's split over the ranks (in one process, the index itself).
    pub part: Partition,
    ranks: Option<Ranks<'a>>,
}

/// The ranks a tier is solved over, from one rank's side.
pub(crate) struct Ranks<'a> {
    comm: &'a dyn Comm,
    outbox: Outbox,
    /// The most updates sent to one rank in one exchange.
    per_dest: usize,
    /// Messages of a later phase ([`Ranks::until_quiet`]) that arrived before this rank
    /// reached it, with their senders, in the order they arrived.
    early: RefCell<VecDeque<(usize, Vec<u64>)>>,
}

impl<'a> Place<'a> {
    /// The whole of tier `n`, in this process.
    pub fn process(n: u8) -> Self {
        let part = Partition::of_tier(n, 1);
        Place {
            start: 0,
            len: part.size() as usize,
            part,
            ranks: None,
        }
    }

    /// This rank's range of places of tier `n` over the ranks of `comm`, at most `batch`
    /// updates sent per exchange and queued at once.
    pub fn rank(comm: &'a dyn Comm, n: u8, batch: usize) -> Self {
        let part = Partition::of_tier(n, comm.size());
        let range = part.range(comm.rank());
        let batch = batch.max(1);
        Place {
            start: range.start,
            len: (range.end - range.start) as usize,
            ranks: Some(Ranks {
                comm,
                outbox: Outbox::new(part.clone(), batch as u64),
                per_dest: (batch / comm.size()).max(1),
                early: RefCell::new(VecDeque::new()),
            }),
            part,
        }
    }

    /// Over several ranks, the outbox of the updates for other ranks.
    pub fn outbox(&self) -> Option<&Outbox> {
        self.ranks.as_ref().map(|r| &r.outbox)
    }

    /// Over several ranks, the ranks.
    pub fn ranked(&self) -> Option<&Ranks<'a>> {
        self.ranks.as_ref()
    }

    /// The arrays of tier `n` just allocated (or not) on this rank, `bytes` of them: over
    /// several ranks, every rank fails if one did, naming it (a collective).
    ///
    /// # Errors
    /// This rank's [`AllocError`], or one naming the rank that failed.
    pub fn agree<T>(
        &self,
        arrays: Result<T, AllocError>,
        n: u8,
        bytes: u64,
    ) -> Result<T, AllocError> {
        match &self.ranks {
            None => arrays,
            Some(r) => crate::comm::agree_arrays(
                r.comm,
                arrays,
                n,
                "cells and frontier",
                self.len as u64,
                bytes,
            ),
        }
    }
}

/// What a rank exchanged while solving a tier.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Exchanged {
    /// Rounds with an exchange ([`Ranks::exchange`]) and waves that ended a phase
    /// ([`Ranks::until_quiet`]): the same on every rank.
    pub rounds: u64,
    /// All-to-all exchanges ([`Ranks::exchange`], the same on every rank) and messages of
    /// updates posted ([`Ranks::until_quiet`], this rank's).
    pub exchanges: u64,
    /// Updates sent to other ranks.
    pub updates: u64,
    /// Updates received and applied.
    pub received: u64,
    /// Seconds inside collective calls (transfer and waiting), and quiet, waiting for
    /// messages or the end of a phase.
    pub comm_seconds: f64,
}

/// The updates of other ranks' positions, queued until the next exchange: one bucket per
/// rank, each update the parent's place shifted left once, the low bit set when the child
/// is low.
pub(crate) struct Outbox {
    part: Partition,
    buckets: Vec<Mutex<Vec<u64>>>,
    /// Updates in the buckets.
    queued: AtomicU64,
    /// Updates the buckets may hold before the propagation waits for an exchange.
    room: u64,
}

/// A task's updates for other ranks, not yet handed to the [`Outbox`]: one short list per
/// rank (none in one process).
pub(crate) struct Queued(Vec<Vec<u64>>);

impl Queued {
    /// The lists of a task, for the ranks of `outbox` (none without one).
    pub fn new(outbox: Option<&Outbox>) -> Self {
        Queued(match outbox {
            Some(o) => vec![Vec::new(); o.part.ranks()],
            None => Vec::new(),
        })
    }
}

impl Outbox {
    fn new(part: Partition, room: u64) -> Self {
        Outbox {
            buckets: (0..part.ranks()).map(|_| Mutex::new(Vec::new())).collect(),
            part,
            queued: AtomicU64::new(0),
            room,
        }
    }

    /// Whether the buckets hold as many updates as their room.
    #[inline]
    pub fn full(&self) -> bool {
        self.queued.load(Ordering::Relaxed) >= self.room
    }

    /// Queues the update of the parent at place `g` by a child decided low or high.
    #[inline]
    pub fn send(&self, queued: &mut Queued, g: u64, child_low: bool) {
        let d = self.part.owner(g);
        let list = &mut queued.0[d];
        list.push(g << 1 | u64::from(child_low));
        if list.len() >= QUEUED {
            self.hand(d, list);
        }
    }

    /// Queues `word`, an update of another form, for the owner of place `g`.
    #[inline]
    pub fn send_word(&self, queued: &mut Queued, g: u64, word: u64) {
        let d = self.part.owner(g);
        let list = &mut queued.0[d];
        list.push(word);
        if list.len() >= QUEUED {
            self.hand(d, list);
        }
    }

    /// Hands every update of `queued` to the buckets.
    pub fn take_in(&self, queued: &mut Queued) {
        for (d, list) in queued.0.iter_mut().enumerate() {
            if !list.is_empty() {
                self.hand(d, list);
            }
        }
    }

    fn hand(&self, d: usize, list: &mut Vec<u64>) {
        let n = list.len() as u64;
        // A bucket is only locked by tasks handing over and by the exchange, between
        // phases: a poisoned lock still holds whole updates.
        let mut bucket = self.buckets[d].lock().unwrap_or_else(|e| e.into_inner());
        bucket.append(list);
        self.queued.fetch_add(n, Ordering::Relaxed);
    }

    /// The updates queued for rank `d`, its bucket left empty.
    fn take(&self, d: usize) -> Vec<u64> {
        let taken = std::mem::take(&mut *self.buckets[d].lock().unwrap_or_else(|e| e.into_inner()));
        self.queued.fetch_sub(taken.len() as u64, Ordering::Relaxed);
        taken
    }

    /// Whether no update is queued.
    fn is_empty(&self) -> bool {
        self.queued.load(Ordering::Relaxed) == 0
    }

    /// Every bucket's updates, the buckets left empty.
    fn drain(&self) -> Vec<Vec<u64>> {
        self.queued.store(0, Ordering::Relaxed);
        self.buckets
            .iter()
            .map(|b| std::mem::take(&mut *b.lock().unwrap_or_else(|e| e.into_inner())))
            .collect()
    }
}

impl Ranks<'_> {
    /// One exchange: the queued updates sent, in as many sub-rounds as the largest bucket
    /// of any rank needs, and those received handed to `apply` as they arrive. Returns
    /// `false`, having exchanged nothing, when no rank had an update queued or, as `more`
    /// says of this one, work left. Every rank calls it; the counts go to `exchanged`.
    pub(crate) fn exchange(
        &self,
        more: bool,
        exchanged: &mut Exchanged,
        mut apply: impl FnMut(&[u64]),
    ) -> bool {
        let me = self.comm.rank();
        let buckets = self.outbox.drain();
        let longest = buckets.iter().map(Vec::len).max().unwrap_or(0);
        let need = (longest.div_ceil(self.per_dest) as u64).max(u64::from(more));
        let t = Instant::now();
        let subrounds = self.comm.all_reduce_max(need);
        exchanged.comm_seconds += t.elapsed().as_secs_f64();
        if subrounds == 0 {
            return false;
        }
        exchanged.rounds += 1;
        exchanged.updates += buckets
            .iter()
            .enumerate()
            .filter(|&(d, _)| d != me)
            .map(|(_, b)| b.len() as u64)
            .sum::<u64>();
        let mut buckets = buckets;
        for s in 0..subrounds as usize {
            let out = crate::comm::sub_round(&mut buckets, s, subrounds, self.per_dest);
            let t = Instant::now();
            let got = self.comm.exchange(out);
            exchanged.comm_seconds += t.elapsed().as_secs_f64();
            exchanged.exchanges += 1;
            for updates in &got {
                exchanged.received += updates.len() as u64;
                apply(updates);
            }
        }
        true
    }

    /// Runs phase `phase` (1..=255, each phase of a tier its own) of the ranks' work to its
    /// end without rounds: this rank posts its queued updates to their owners as soon as it
    /// has them ([`Comm::post`]), applies every message of updates as it arrives
    /// (`apply`, which may queue more), and does its own work in between (`local`, which
    /// returns whether it found any), until every rank is quiet and no message is on its
    /// way. Every rank calls it; the counts go to `exchanged` (`rounds`: the waves of the
    /// detection below; `exchanges`: the messages posted; `comm_seconds`: the time spent
    /// quiet, waiting).
    ///
    /// The end is found as Mattern's four counters find it: rank 0 sends waves; each rank
    /// answers a wave once it is quiet (nothing of its own to do, nothing queued) with the
    /// messages of updates it has posted and received in this phase; when two waves in a
    /// row give the same totals, and as many received as posted, the phase is over (no rank
    /// sent or received anything between its two answers, so at one moment all were quiet
    /// with nothing on its way), and rank 0 tells the others. A message of a later phase
    /// that arrives before this rank reaches that phase waits for it.
    pub(crate) fn until_quiet(
        &self,
        phase: u8,
        exchanged: &mut Exchanged,
        mut apply: impl FnMut(&[u64]),
        mut local: impl FnMut() -> bool,
    ) {
        let comm = self.comm;
        let (me, size) = (comm.rank(), comm.size());
        let phase = u64::from(phase);
        let mut counts = Counts::default();
        let mut waves = (me == 0).then(|| Waves::new(size));
        // The wave this rank owes an answer.
        let mut asked: Option<u64> = None;
        loop {
            let mut busy = self.post_queued(phase, &mut counts, exchanged);
            while let Some((_, words)) = self.next_message(phase) {
                let Some((&head, body)) = words.split_first() else {
                    continue;
                };
                let n = head >> 16;
                match head & 0xFF {
                    DATA => {
                        counts.received += 1;
                        exchanged.received += body.len() as u64;
                        apply(body);
                        busy = true;
                        self.post_queued(phase, &mut counts, exchanged);
                    }
                    WAVE => asked = Some(n),
                    REPLY => {
                        if let Some(w) = waves.as_mut() {
                            w.answer(n, body);
                        }
                    }
                    // DONE, from rank 0: the phase is over.
                    _ => {
                        exchanged.rounds += n;
                        return;
                    }
                }
            }
            busy |= local();
            if busy || !self.outbox.is_empty() {
                continue;
            }
            // Quiet: answer the wave, or (rank 0) go on with the waves.
            let t = Instant::now();
            if let Some(w) = asked.take() {
                comm.post(
                    0,
                    vec![header(REPLY, phase, w), counts.posted, counts.received],
                );
            }
            if let Some(w) = waves.as_mut() {
                match w.quiet(counts) {
                    Wave::Over(n) => {
                        for d in 1..size {
                            comm.post(d, vec![header(DONE, phase, n)]);
                        }
                        exchanged.rounds += n;
                        exchanged.comm_seconds += t.elapsed().as_secs_f64();
                        return;
                    }
                    Wave::Start(n) => {
                        for d in 1..size {
                            comm.post(d, vec![header(WAVE, phase, n)]);
                        }
                    }
                    Wave::Waiting => {}
                }
            }
            std::thread::yield_now();
            exchanged.comm_seconds += t.elapsed().as_secs_f64();
        }
    }

    /// Posts the updates queued for each rank that has fewer than [`IN_FLIGHT`] of this
    /// rank's messages on their way, in messages of at most `per_dest` updates. Returns
    /// whether it posted any.
    fn post_queued(&self, phase: u64, counts: &mut Counts, exchanged: &mut Exchanged) -> bool {
        if self.outbox.is_empty() {
            return false;
        }
        let mut posted = false;
        for d in 0..self.comm.size() {
            if d == self.comm.rank() || self.comm.in_flight(d) >= IN_FLIGHT {
                continue;
            }
            let updates = self.outbox.take(d);
            for part in updates.chunks(self.per_dest) {
                let mut words = Vec::with_capacity(part.len() + 1);
                words.push(header(DATA, phase, 0));
                words.extend_from_slice(part);
                self.comm.post(d, words);
                counts.posted += 1;
                exchanged.exchanges += 1;
                exchanged.updates += part.len() as u64;
                posted = true;
            }
        }
        posted
    }

    /// The next message of phase `phase`: one that arrived early, or one just arrived;
    /// messages of a later phase are kept for it.
    fn next_message(&self, phase: u64) -> Option<(usize, Vec<u64>)> {
        {
            let mut early = self.early.borrow_mut();
            if let Some(i) = early
                .iter()
                .position(|(_, w)| w.first().is_some_and(|&h| h >> 8 & 0xFF == phase))
            {
                return early.remove(i);
            }
        }
        while let Some((src, words)) = self.comm.poll() {
            if words.first().is_some_and(|&h| h >> 8 & 0xFF == phase) {
                return Some((src, words));
            }
            self.early.borrow_mut().push_back((src, words));
        }
        None
    }

    /// The largest of the ranks' `value`s, on every rank. A collective.
    pub(crate) fn max(&self, value: u64) -> u64 {
        self.comm.all_reduce_max(value)
    }

    /// Arrays of tier `n` just allocated (or not) on this rank, `bytes` of them for
    /// `positions`: every rank fails if one did, naming it. A collective.
    ///
    /// # Errors
    /// This rank's [`AllocError`], or one naming the rank that failed.
    pub(crate) fn agree<T>(
        &self,
        arrays: Result<T, AllocError>,
        n: u8,
        what: &'static str,
        positions: u64,
        bytes: u64,
    ) -> Result<T, AllocError> {
        crate::comm::agree_arrays(self.comm, arrays, n, what, positions, bytes)
    }
}

/// The kinds of the messages of [`Ranks::until_quiet`], in the low byte of a message's
/// first word (its header); the phase is in the next byte, and a number (a wave's, or the
/// waves made) above them.
const DATA: u64 = 0;
/// Rank 0 asks for the counts of a wave.
const WAVE: u64 = 1;
/// A rank's counts for a wave: the messages of updates it posted and received.
const REPLY: u64 = 2;
/// The phase is over.
const DONE: u64 = 3;

/// The header of a message of kind `kind` in phase `phase` with the number `n`.
fn header(kind: u64, phase: u64, n: u64) -> u64 {
    kind | phase << 8 | n << 16
}

/// A rank's messages of updates in one phase of [`Ranks::until_quiet`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    posted: u64,
    received: u64,
}

/// What rank 0 does next in the detection of the end of a phase.
#[derive(Debug, PartialEq, Eq)]
enum Wave {
    /// Send the wave of this number.
    Start(u64),
    /// Wait for the answers.
    Waiting,
    /// The phase is over, after this many waves.
    Over(u64),
}

/// Rank 0's waves ([`Ranks::until_quiet`]).
struct Waves {
    size: usize,
    /// The current wave's number (0 before the first).
    wave: u64,
    /// Answers to the current wave, rank 0's own included; `None` when no wave is out.
    answers: Option<usize>,
    /// The totals of the current wave so far.
    totals: Counts,
    /// The totals of the last complete wave.
    last: Option<Counts>,
}

impl Waves {
    fn new(size: usize) -> Self {
        Waves {
            size,
            wave: 0,
            answers: None,
            totals: Counts::default(),
            last: None,
        }
    }

    /// Rank 0 is quiet with `own` counts: a wave to send, the phase over, or nothing to do
    /// but wait for the answers.
    fn quiet(&mut self, own: Counts) -> Wave {
        if let Some(answers) = self.answers {
            if answers < self.size {
                return Wave::Waiting;
            }
            let totals = self.totals;
            if totals.posted == totals.received && self.last == Some(totals) {
                return Wave::Over(self.wave);
            }
            self.last = Some(totals);
        }
        self.wave += 1;
        self.totals = own;
        self.answers = Some(1);
        if self.size == 1 {
            return self.quiet(own);
        }
        Wave::Start(self.wave)
    }

    /// Another rank's answer `body` (posted, received) to wave `n`.
    fn answer(&mut self, n: u64, body: &[u64]) {
        if let (Some(answers), [posted, received]) = (self.answers.as_mut(), body) {
            if n == self.wave {
                *answers += 1;
                self.totals.posted += posted;
                self.totals.received += received;
            }
        }
    }
}

/// Calls `apply(j, low)` for each update of `updates` received by the rank whose arrays hold
/// the places from `start` (`cells`): `j` the parent's place in the arrays, `low` whether the
/// child was decided low. The cells are read at random: each one [`PREFETCH_AHEAD`] updates
/// ahead is fetched while these are applied.
#[inline]
pub(crate) fn for_each_update<T>(
    updates: &[u64],
    start: u64,
    cells: &[T],
    mut apply: impl FnMut(u64, bool),
) {
    for (i, &u) in updates.iter().enumerate() {
        if let Some(&ahead) = updates.get(i + PREFETCH_AHEAD) {
            if let Some(cell) = cells.get((ahead >> 1).wrapping_sub(start) as usize) {
                prefetch(cell);
            }
        }
        let j = (u >> 1).wrapping_sub(start);
        debug_assert!(j < cells.len() as u64, "an update for another rank");
        apply(j, u & 1 == 1);
    }
}
