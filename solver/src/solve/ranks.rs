//! The solver over several ranks: each rank holds the positions of its range of places of
//! the tier ([`Partition`](crate::comm::Partition)) in the arrays of the one-process solver, indexed from its first
//! place, and runs the same levels, scans, work stacks and sweeps on them. An update whose parent
//! this rank holds is applied in place, depth first, as in one process; one whose parent
//! another rank holds is queued for it ([`Outbox`](crate::comm::exchange::Outbox)). Once a
//! level's local part is done, the rank posts its queued updates to their owners as soon
//! as it has them, applies each message it receives as it arrives (which may decide
//! positions, propagated at once, and queue more) and sweeps its frontier in between, until
//! every rank is quiet with nothing on its way ([`Ranks::until_quiet`]: no rounds, the end
//! found by waves of counts). One rank is one process: nothing is queued, and the level
//! ends at once.
//!
//! The updates queued may fill their room (`Outbox::full`): the propagation then leaves
//! the positions it has not taken to the frontier bits, and the sweeps stop, until they are
//! posted.

use std::sync::atomic::Ordering;

use rayon::prelude::*;

use super::{sweeps, Ctx, Work};
use crate::comm::exchange::{for_each_update, Exchanged, Ranks, APPLY_CHUNK};
use crate::progress::Progress;

impl Ranks<'_> {
    /// What ends level `k` once this rank's local part of it is done: the queued updates
    /// posted to their owners as they come, those received applied as they arrive (and the
    /// positions they decide propagated, in place or queued again), the frontier swept,
    /// until every rank is quiet with no update on its way ([`Ranks::until_quiet`]). Every
    /// rank calls it; the counts go to `exchanged` and the sweeps made to `sweeps`.
    pub(super) fn exchange_level(
        &self,
        ctx: &Ctx<'_>,
        k: i8,
        progress: &dyn Progress,
        exchanged: &mut Exchanged,
        sweeps_made: &mut u64,
    ) {
        self.until_quiet(
            k.unsigned_abs(),
            exchanged,
            |updates| progress.advance(apply_received(ctx, k, updates)),
            // Marks left by sweeps that stopped on a full outbox, or by received updates,
            // are work left.
            || {
                if !ctx.marked.load(Ordering::Relaxed) {
                    return false;
                }
                *sweeps_made += sweeps(ctx, k, progress);
                true
            },
        );
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
