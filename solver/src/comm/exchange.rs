//! The exchange of updates between ranks, below the engines that use it: where a tier is
//! solved or verified ([`Place`]: the whole tier in one process, or one rank's range of
//! places), the updates of other ranks' positions queued until the next exchange
//! ([`Outbox`]), and the bounded all-to-all exchanges that send them ([`Ranks::exchange`]).
//! The solver (`solve/ranks.rs`) and the deep verifier (`verify/ranks.rs`) apply what they
//! receive with their own cell transitions. One rank is one process: nothing is queued, and
//! an exchange ends at once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use super::{Comm, Partition};
use crate::error::AllocError;
use crate::prefetch::prefetch;

/// Updates a task queues for one rank before it hands them to the outbox.
const QUEUED: usize = 1024;

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
    /// Rounds with an exchange (the same on every rank).
    pub rounds: u64,
    /// All-to-all exchanges (the same on every rank).
    pub exchanges: u64,
    /// Updates sent to other ranks.
    pub updates: u64,
    /// Updates received and applied.
    pub received: u64,
    /// Seconds inside collective calls (transfer and waiting).
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
