//! The solver over several ranks: each rank holds the positions of its range of places of
//! the tier ([`Partition`](crate::comm::Partition)) in the arrays of the one-process solver, indexed from its first
//! place, and runs the same levels, scans, work stacks and sweeps on them. An update whose parent
//! this rank holds is applied in place, depth first, as in one process; one whose parent
//! another rank holds is queued for it ([`Outbox`](crate::comm::exchange::Outbox)). After each level's local part, the
//! ranks exchange the queued updates all-to-all and apply what they receive, which may
//! decide positions, propagated at once, and queue more: until no rank has an update
//! queued or a position in its frontier (one reduction per exchange, the updates of a
//! round all applied within it). One rank is one process: nothing is queued, and the
//! exchange ends at once.
//!
//! The updates queued may fill their room (`Outbox::full`): the propagation then leaves
//! the positions it has not taken to the frontier bits, and the sweeps stop, until the next
//! exchange has sent them.

use std::sync::atomic::Ordering;

use rayon::prelude::*;

use super::{sweeps, Ctx, Work};
use crate::comm::exchange::{for_each_update, Exchanged, Ranks, APPLY_CHUNK};
use crate::progress::Progress;

impl Ranks<'_> {
    /// The exchanges that end level `k` once this rank's local part of it is done: the
    /// queued updates sent, those received applied (and the positions they decide
    /// propagated, in place or queued again), the frontier swept, until no rank has an
    /// update queued or a position in its frontier. Every rank calls it; the counts go to
    /// `exchanged` and the sweeps made to `sweeps`.
    pub(super) fn exchange_level(
        &self,
        ctx: &Ctx<'_>,
        k: i8,
        progress: &dyn Progress,
        exchanged: &mut Exchanged,
        sweeps_made: &mut u64,
    ) {
        // Marks left by sweeps that stopped on a full outbox are work left.
        while self.exchange(ctx.marked.load(Ordering::Relaxed), exchanged, |updates| {
            progress.advance(apply_received(ctx, k, updates));
        }) {
            *sweeps_made += sweeps(ctx, k, progress);
        }
    }
}

/// Applies updates received from other ranks at level `k` (each the parent's place shifted
/// left once, the low bit set when the child is low: parents this rank holds) and
/// propagates the positions they decide. Returns how many positions it propagated.
fn apply_received(ctx: &Ctx<'_>, k: i8, updates: &[u64]) -> u64 {
    updates
        .par_chunks(APPLY_CHUNK)
        .map_init(
            || Work::new(ctx),
            |work, chunk| {
                work.budget = ctx.tuning.budget;
                let mut taken = 0;
                for_each_update(chunk, ctx.start, ctx.cells, |j, child_low| {
                    if let Some(low) = ctx.act(j, child_low, k) {
                        taken += ctx.take::<true>(k, j, low, work);
                    }
                });
                taken += ctx.propagate::<true>(k, work);
                ctx.hand_over(work);
                taken
            },
        )
        .sum()
}
