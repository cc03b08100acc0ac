//! The memory the solver and the verifier need, in bytes, and the memory the machine has
//! available: every figure that generation and verification check before they start, and
//! that `oware verify --start` reports.

use oware_db::index::{tier_size, IndexKind};
use oware_db::Rules;

use crate::granule::{DIRTY, LEVEL_GRANULE};

/// Positions of tier `n` (reachable index).
fn positions(n: u8) -> u64 {
    tier_size(n, IndexKind::Reachable)
}

/// Bytes of memory [`solve_tier`](crate::tier::solve_tier) needs for a tier of `positions`
/// positions: its cells (which become the scores), two frontier bits per position, the
/// dirty flags and the level masks; lower tiers not included.
pub fn tier_memory(positions: u64) -> u64 {
    positions
        + positions / 4
        + positions / DIRTY as u64
        + positions / (LEVEL_GRANULE as u64 / 8)
        + 4096
}

/// Bytes a tier's plan keeps for the lists of the exits too low for a code of their own in
/// a position's one-byte cell (the solver's *far exits*, docs/DESIGN.md): a pointer per
/// chunk of 16,384 positions and, at the tiers whose cells cannot code every exit (above 23
/// seeds), room for a share `2^(−(2X − 9)/3)` of the positions to be listed, where exits down
/// to `−X` have a code of their own. The share grows 2^(2/3) ≈ 1.59 times per class fewer,
/// as the lists grew from tier 27 to tier 36 (about 1.7 times): room for 0.049 % of the
/// positions at tier 27 (0.015 % listed there), 0.12 % at tier 30 (0.086 %), 0.78 % at tier
/// 36 (0.42 %), 31 % at tier 48 (extrapolated). A tier whose lists outgrow the room its limit
/// leaves them stops with an error ([`Tuning::far_exit_room`](crate::tier::Tuning::far_exit_room))
/// rather than exceed the limit.
pub fn far_exit_bytes(n: u8, positions: u64) -> u64 {
    use crate::solve::cell::{Codes, FAR_ALLOC_BYTES, FAR_ENTRY_BYTES, FAR_POINTER_BYTES};
    let chunks = positions.div_ceil(crate::solve::CHUNK as u64);
    let exact = Codes::new(n, u8::MAX).exact();
    if exact >= n {
        return chunks * FAR_POINTER_BYTES;
    }
    // 2^(−t/3) of the positions, with t = 2X − 9 thirds of a bit (X ≥ 7 up to tier 48);
    // 2^(−1/3) and 2^(−2/3) in 1024ths, rounded up.
    let thirds = (2 * u32::from(exact)).saturating_sub(9);
    let listed = (positions >> (thirds / 3)) * [1024, 813, 646][(thirds % 3) as usize] / 1024;
    chunks * (FAR_POINTER_BYTES + FAR_ALLOC_BYTES) + listed * FAR_ENTRY_BYTES
}

/// Bytes the distances to conversion take while a tier of `positions` positions is solved
/// with them ([`Tuning::distances`](crate::tier::Tuning::distances)), beside [`tier_memory`]: one
/// byte per position, the dirty flags of the second round's frontier (one byte per
/// 1,024 positions) and the positions carried from one round to
/// the next. Allocated once the exits are computed, so never beside a slice of the lower
/// tiers.
pub fn distance_bytes(positions: u64) -> u64 {
    positions + positions.div_ceil(crate::granule::DIRTY as u64) + crate::solve::rounds::CARRY_BYTES
}

/// Bytes of [`tier_memory`] that the solver touches only once the tier's exits are computed:
/// the two frontier bits per position. They are allocated with the cells, as zeroed
/// anonymous memory, whose pages the kernel backs only when first written; no page of them
/// is written before the propagation, by which time the slice of the lower tiers the exits
/// read is freed. A sliced plan ([`plan_tier`]) gives their bytes to the slice.
pub fn frontier_bytes(positions: u64) -> u64 {
    positions / 4
}

/// Bytes of memory one rank of `ranks` needs for its part of a tier of `positions`
/// positions ([`solve_tier_local`](crate::distributed::solve_tier_local)): the arrays of the
/// one-process solver for its range ([`tier_memory`]); lower tiers and exchange buffers not
/// included.
pub fn partition_memory(positions: u64, ranks: usize) -> u64 {
    tier_memory(positions.div_ceil(ranks.max(1) as u64))
}

/// Bytes of memory [`generate`](crate::generate) needs on one rank to solve a tier
/// of `positions` positions over `ranks` ranks (1: in this process alone): the solver's cells
/// and frontier and, over several ranks, the exchange buffers of the default batch; lower
/// tiers not included (over several ranks, each holds its share of them besides).
pub fn generate_tier_memory(positions: u64, ranks: usize) -> u64 {
    if ranks > 1 {
        partition_memory(positions, ranks)
            + exchange_memory(crate::comm::PartitionConfig::default().batch)
    } else {
        tier_memory(positions)
    }
}

/// Bytes of the buffers one rank holds for the exchanges of a tier solved over several
/// ranks, with at most `batch` updates or look-ups sent per exchange: the words sent and
/// received and the copies of a sub-round (8 bytes each), and for the look-ups the moves of
/// a batch of `batch / 4` positions (up to six captures each, 12 bytes a capture besides its
/// word).
pub fn exchange_memory(batch: usize) -> u64 {
    let batch = batch as u64;
    4 * 8 * batch + (batch / 4) * (2 + 6 * 20)
}

/// Peak memory of generating tiers up to `max` in one process, reached at the first tier
/// `m` at or above `from` that dominates: the solver's memory for tier `m` (its arrays and
/// far exits, [`tier_memory`] and [`far_exit_bytes`]) plus the lower
/// tiers' scores, which generation reads from memory-mapped side copies (page cache, not
/// process memory, but read at random, so they should fit in memory for speed), and the
/// process itself ([`PROCESS_BYTES`]). Returns
/// `(m, bytes)`; `(max, 0)` when `from > max`.
pub fn generate_peak_memory(from: u8, max: u8) -> (u8, u64) {
    (from..=max)
        .map(|m| {
            let lower: u64 = (0..m).map(positions).sum();
            let own = tier_memory(positions(m)) + far_exit_bytes(m, positions(m));
            (m, lower + own + PROCESS_BYTES)
        })
        .max_by_key(|&(_, b)| b)
        .unwrap_or((max, 0))
}

/// The least memory generating tiers `from..=max` can run in: at the tier that dominates,
/// the larger of its own cells, frontier and far exits ([`tier_memory`], [`far_exit_bytes`])
/// and its cells and far exits beside the
/// smallest slice of its capture window that [`plan_tier`] allows ([`frontier_bytes`]).
/// Returns `(tier, bytes)`; `(max, 0)` when `from > max`.
pub fn generate_least_memory(rules: &Rules, from: u8, max: u8) -> (u8, u64) {
    (from..=max)
        .map(|m| (m, least_needed(plan_tier(rules, m, 0, None))))
        .max_by_key(|&(_, b)| b)
        .unwrap_or((max, 0))
}

/// Bytes of the scores of `rules.capture_window(n)`: one per position.
pub fn window_bytes(rules: &Rules, n: u8) -> u64 {
    rules.capture_window(n).map(positions).sum()
}

/// Bytes every plan keeps for the process itself and its working buffers, beside a tier's
/// own arrays and its lower tiers: its code, libraries, heap and worker stacks, the table
/// writer's batch of compressed blocks and the compressed pages of the tables being decoded
/// (28–33 MB in all measured over a limited deep verification of tier 24, 23–27 MB over
/// those of tiers 34..=36 under 22 GiB, docs/BENCHMARKS.md), so that the peak resident set
/// stays within the limit.
pub const PROCESS_BYTES: u64 = 48 << 20;

/// The smallest slice of lower-tier scores [`plan_tier`] plans for: 64 KiB, or a 64th of
/// the window, so that no tier needs more than 64 sweeps.
pub const MIN_SLICE_BYTES: u64 = 64 << 10;

/// The most sweeps [`plan_tier`] lets a tier's exits take (see [`MIN_SLICE_BYTES`]).
pub const MAX_SLICES: u64 = 64;

/// How a tier's exits read the lower tiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitPlan {
    /// In one pass, from lower tiers held whole (in memory or as memory-mapped side
    /// copies).
    Resident,
    /// In sweeps over the tier, one per slice of at most `slice_bytes` bytes of the lower
    /// tiers' scores, each decoded from the tables into memory.
    Sliced {
        /// The largest slice, in bytes (one byte per score).
        slice_bytes: u64,
    },
}

/// What a tier needs: how its exits are computed, and the bytes of memory it needs in
/// all (see [`plan_tier`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TierPlan {
    /// How the exits read the lower tiers.
    pub exits: ExitPlan,
    /// The tier's own arrays at their largest: the solver's cells and frontier
    /// ([`tier_memory`]) and the room for its far exits ([`far_exit_bytes`]), the verifier's
    /// state ([`verify_memory`]).
    pub own: u64,
    /// Of `own`, the bytes held while the exits read a slice of the lower tiers: the
    /// solver's cells and far exits without the frontier ([`frontier_bytes`]), the
    /// verifier's state without its frontier ([`verify_frontier_bytes`]).
    pub own_beside_slice: u64,
    /// Of `own` and `own_beside_slice`, the room kept for the solver's far exits
    /// ([`far_exit_bytes`]; 0 for the verifier, which lists none).
    pub far_exits: u64,
    /// The lower tiers' scores held at once: the whole window, or the largest slice.
    pub lower: u64,
    /// The process itself and its working buffers ([`PROCESS_BYTES`]).
    pub process: u64,
}

impl TierPlan {
    /// Bytes needed in all, at the peak: with the lower tiers whole, the tier's arrays beside
    /// them; with slices, the larger of the arrays beside a slice (while the exits are
    /// computed; the slice is then freed) and the whole arrays (during the propagation).
    pub fn needed(&self) -> u64 {
        let own = match self.exits {
            ExitPlan::Resident => self.own + self.lower,
            ExitPlan::Sliced { .. } => self.own.max(self.own_beside_slice + self.lower),
        };
        own + self.process
    }

    /// Bytes the far exits may take under `limit` without the peak exceeding it: the room
    /// kept for them and whatever the plan leaves unused. The solver stops a tier whose
    /// lists outgrow it ([`Tuning::far_exit_room`](crate::tier::Tuning::far_exit_room)).
    pub fn far_exit_room(&self, limit: u64) -> u64 {
        limit.saturating_sub(self.needed()) + self.far_exits
    }
}

/// The memory plan of tier `n` under `rules` with `limit` bytes available: the tier's own
/// cells and frontier ([`tier_memory`]) and the room for its far exits
/// ([`far_exit_bytes`]) plus the scores of the tiers its captures reach
/// ([`window_bytes`]). When both fit, [`ExitPlan::Resident`]; otherwise the window is cut into
/// slices ([`ExitPlan::Sliced`]) of `limit − (own − frontier)` bytes: the frontier is not
/// touched until the slices are freed ([`frontier_bytes`]), so its bytes go to the slice.
/// `forced` asks for slices of at most that many bytes whatever the limit (tests,
/// measurements; at least one byte).
///
/// # Errors
/// The plan that would be needed at least, when the tier's own memory, or its cells beside
/// the smallest slice (`min(window, max(MIN_SLICE_BYTES, window / MAX_SLICES))`), exceeds
/// `limit`.
pub fn plan_tier(
    rules: &Rules,
    n: u8,
    limit: u64,
    forced: Option<u64>,
) -> Result<TierPlan, TierPlan> {
    let far = far_exit_bytes(n, positions(n));
    let own = tier_memory(positions(n)) + far;
    plan_with(
        (own, own - frontier_bytes(positions(n)), far),
        rules,
        n,
        limit,
        forced,
    )
}

/// The memory plan of the deep verification of tier `n` ([`verify_tier_in_place`](crate::tier::verify_tier_in_place)):
/// [`plan_tier`]'s, with the verifier's own memory ([`verify_memory`]) in place of the
/// solver's; a sliced plan gives the frontier's bytes ([`verify_frontier_bytes`]), which
/// the verifier allocates once the slices are done, to the slice.
///
/// # Errors
/// The plan that would be needed at least, when the tier's own memory, or its memory beside
/// the smallest slice plus that slice, exceeds `limit`.
pub fn plan_verify(
    rules: &Rules,
    n: u8,
    limit: u64,
    forced: Option<u64>,
) -> Result<TierPlan, TierPlan> {
    let size = positions(n);
    let own = verify_memory(size);
    plan_with(
        (own, own - verify_frontier_bytes(size), 0),
        rules,
        n,
        limit,
        forced,
    )
}

/// What a plan made with no memory at all needs: its least (a refusal, whose plan is the
/// smallest slice).
fn least_needed(plan: Result<TierPlan, TierPlan>) -> u64 {
    plan.map_or_else(|p| p.needed(), |p| p.needed())
}

/// The smallest slice a plan allows for a window of `window` bytes.
pub(crate) fn least_slice(window: u64) -> u64 {
    window.min(MIN_SLICE_BYTES.max(window.div_ceil(MAX_SLICES)))
}

/// The plan of a tier whose arrays take `own` bytes at their largest and `beside` bytes
/// while its exits read a slice of the lower tiers, of which `far` in both for its far exits.
fn plan_with(
    (own, beside, far): (u64, u64, u64),
    rules: &Rules,
    n: u8,
    limit: u64,
    forced: Option<u64>,
) -> Result<TierPlan, TierPlan> {
    let window = window_bytes(rules, n);
    let process = PROCESS_BYTES;
    let limit = limit.saturating_sub(process);
    let plan = |exits, lower| TierPlan {
        exits,
        own,
        own_beside_slice: beside,
        far_exits: far,
        lower,
        process,
    };
    if let Some(bytes) = forced {
        let slice_bytes = bytes.max(1);
        return Ok(plan(
            ExitPlan::Sliced { slice_bytes },
            slice_bytes.min(window),
        ));
    }
    if own.saturating_add(window) <= limit {
        return Ok(plan(ExitPlan::Resident, window));
    }
    let least = least_slice(window);
    if own > limit || beside.saturating_add(least) > limit {
        return Err(plan(ExitPlan::Sliced { slice_bytes: least }, least));
    }
    let slice_bytes = limit - beside;
    Ok(plan(
        ExitPlan::Sliced { slice_bytes },
        slice_bytes.min(window),
    ))
}

/// Bytes of memory [`verify_tier_in_place`](crate::tier::verify_tier_in_place) needs for a tier
/// of `positions` positions: its scores, which hold the verification state too (one byte
/// per position), and two bits per position (the failure bit and the frontier), and a level
/// mask per 1024 positions (a 128th of a byte per position); lower tiers not included.
pub fn verify_memory(positions: u64) -> u64 {
    positions + positions / 4 + positions / (crate::granule::LEVEL_GRANULE as u64 / 8) + 4096
}

/// Bytes of [`verify_memory`] that the verifier allocates only once its local check is done:
/// the frontier bit per position. While the local check reads the lower tiers in slices,
/// the exit flag it records rides in the cells, so a sliced plan ([`plan_verify`]) gives
/// these bytes to the slice.
pub fn verify_frontier_bytes(positions: u64) -> u64 {
    positions / 8
}

/// Bytes a deep verification of tiers up to `max` ([`verify_deep`](crate::verify_deep))
/// holds at its peak at full speed: at the tier that dominates, its scores and verification
/// state ([`verify_memory`]) and the scores of its capture window held whole
/// ([`window_bytes`]), and the process itself ([`PROCESS_BYTES`]). Returns `(tier, bytes)`.
pub fn verify_deep_memory(rules: &Rules, max: u8) -> (u8, u64) {
    (0..=max)
        .map(|m| {
            (
                m,
                verify_memory(positions(m)) + window_bytes(rules, m) + PROCESS_BYTES,
            )
        })
        .max_by_key(|&(_, b)| b)
        .unwrap_or((max, 0))
}

/// The least memory a deep verification of tiers up to `max` can run in: at the tier that
/// dominates, its own memory ([`verify_memory`]), or its memory beside a slice and the
/// smallest slice of its window that [`plan_verify`] allows, whichever is larger. Returns
/// `(tier, bytes)`.
pub fn verify_deep_least_memory(rules: &Rules, max: u8) -> (u8, u64) {
    (0..=max)
        .map(|m| (m, least_needed(plan_verify(rules, m, 0, None))))
        .max_by_key(|&(_, b)| b)
        .unwrap_or((max, 0))
}

/// Bytes of memory available to this process: `MemAvailable` from `/proc/meminfo`, else
/// unlimited. A limit of the user's (the command line's `OWARE_MEMORY_LIMIT`) is passed to
/// the jobs as their `memory_limit` instead.
pub fn available_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(u64::MAX, |kb| kb * 1024)
}

/// `bytes` in binary units, e.g. `1.50 GiB` (`512 B` below 1 KiB).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figures the refusal messages and `verify --start` print, at a few tiers.
    #[test]
    fn formulas_keep_their_values() {
        assert_eq!(
            tier_memory(1 << 20),
            (1 << 20) + (1 << 18) + 1024 + 8192 + 4096
        );
        assert_eq!(verify_memory(1 << 20), (1 << 20) + (1 << 18) + 8192 + 4096);
        assert_eq!(partition_memory(1000, 3), tier_memory(334));
        assert_eq!(generate_tier_memory(1000, 1), tier_memory(1000));
        assert_eq!(
            generate_tier_memory(1000, 3),
            partition_memory(1000, 3) + exchange_memory(1 << 22)
        );
        assert_eq!(exchange_memory(1 << 20), (32 << 20) + (1 << 18) * 122);
        let top = positions(12);
        let lower: u64 = (0..12).map(positions).sum();
        let abapa = Rules::ABAPA;
        let (m, b) = verify_deep_memory(&abapa, 12);
        assert_eq!(m, 12);
        assert_eq!(
            b,
            verify_memory(top) + window_bytes(&abapa, 12) + PROCESS_BYTES
        );
        let (m, b) = verify_deep_least_memory(&abapa, 12);
        assert_eq!(m, 12);
        let beside = verify_memory(top) - verify_frontier_bytes(top);
        assert_eq!(
            b,
            verify_memory(top).max(beside + MIN_SLICE_BYTES) + PROCESS_BYTES
        );
        assert!(plan_verify(&abapa, 12, b, None).is_ok());
        assert!(plan_verify(&abapa, 12, b - 1, None).is_err());
        assert_eq!(generate_peak_memory(13, 12), (12, 0));
        let (m, b) = generate_peak_memory(0, 12);
        let far = far_exit_bytes(12, top);
        assert_eq!(far, top.div_ceil(16384) * 16);
        assert_eq!((m, b), (12, lower + tier_memory(top) + far + PROCESS_BYTES));
    }

    /// The window of the standard capture (2 or 3 seeds, up to six houses) and of
    /// `capture=1`, and the three outcomes of a plan.
    #[test]
    fn windows_and_plans() {
        let abapa = Rules::ABAPA;
        assert_eq!(abapa.capture_window(36), 18..35);
        assert_eq!(abapa.capture_window(5), 0..4);
        assert_eq!(abapa.capture_window(1), 0..0);
        assert_eq!(abapa.capture_window(0), 0..0);
        let one: Rules = "abapa+capture=1".parse().unwrap();
        assert_eq!(one.capture_window(10), 4..10);
        assert_eq!(
            window_bytes(&abapa, 12),
            (0..11).map(positions).sum::<u64>()
        );
        let own = tier_memory(positions(12)) + far_exit_bytes(12, positions(12));
        let frontier = frontier_bytes(positions(12));
        let beside = own - frontier;
        let window = window_bytes(&abapa, 12);
        let plan = plan_tier(&abapa, 12, u64::MAX, None).unwrap();
        assert_eq!(plan.exits, ExitPlan::Resident);
        assert_eq!(plan.needed(), own + window + PROCESS_BYTES);
        // Out of room for the window whole: the slice takes the frontier's bytes too (tier
        // 16, whose window is more than twice its frontier).
        let own16 = tier_memory(positions(16)) + far_exit_bytes(16, positions(16));
        let frontier16 = frontier_bytes(positions(16));
        let window16 = window_bytes(&abapa, 16);
        assert!(window16 / 2 > frontier16);
        let limit = own16 + window16 / 2 + PROCESS_BYTES;
        let plan = plan_tier(&abapa, 16, limit, None).unwrap();
        let slice_bytes = window16 / 2 + frontier16;
        assert_eq!(plan.exits, ExitPlan::Sliced { slice_bytes });
        assert_eq!(plan.own_beside_slice, own16 - frontier16);
        assert_eq!(plan.needed(), limit);
        // Room for the window beside the cells but not beside the cells and frontier: one
        // slice, which holds the window.
        let plan = plan_tier(&abapa, 12, own + window + PROCESS_BYTES - 1, None).unwrap();
        assert_eq!(
            plan.exits,
            ExitPlan::Sliced {
                slice_bytes: window + frontier - 1
            }
        );
        assert_eq!(plan.lower, window);
        assert_eq!(plan.needed(), own.max(beside + window) + PROCESS_BYTES);
        // The smallest slice fits beside the cells; the refusal is the frontier's.
        let least = MIN_SLICE_BYTES;
        assert!(beside + least < own);
        assert!(plan_tier(&abapa, 12, own + PROCESS_BYTES, None).is_ok());
        let refused = plan_tier(&abapa, 12, own + PROCESS_BYTES - 1, None).unwrap_err();
        assert_eq!(refused.needed(), own + PROCESS_BYTES);
        assert_eq!(
            generate_least_memory(&abapa, 12, 12),
            (12, own + PROCESS_BYTES)
        );
        // The verifier's slice takes the frontier's bytes, but not the failure bits'.
        let v = verify_memory(positions(12));
        let frontier = verify_frontier_bytes(positions(12));
        let plan = plan_verify(&abapa, 12, v + window / 2 + PROCESS_BYTES, None).unwrap();
        assert_eq!(
            plan.exits,
            ExitPlan::Sliced {
                slice_bytes: window / 2 + frontier
            }
        );
        assert_eq!(plan.own_beside_slice, v - frontier);
        assert_eq!(plan.needed(), v + window / 2 + PROCESS_BYTES);
        let forced = plan_tier(&abapa, 12, u64::MAX, Some(0)).unwrap();
        assert_eq!(forced.exits, ExitPlan::Sliced { slice_bytes: 1 });
    }

    /// Under 22 GiB the top tiers of the 36-seed game read their windows in these many
    /// slices: the verifier in one more than generation at tier 36 (its failure bit stays
    /// beside the slices; with its frontier there too it took 3 and 6 at tiers 35 and 36),
    /// generation in one more at tier 35 since its plan keeps room for the far exits.
    #[test]
    fn sweeps_of_the_top_tiers_under_22_gib() {
        use crate::lower::slice::{cut_slices, SLICE_ALIGN};
        let abapa = Rules::ABAPA;
        let sweeps = |plan: Result<TierPlan, TierPlan>, n: u8| match plan.map(|p| p.exits) {
            Ok(ExitPlan::Resident) => 1,
            Ok(ExitPlan::Sliced { slice_bytes }) => {
                cut_slices(abapa.capture_window(n), slice_bytes, SLICE_ALIGN).len()
            }
            Err(_) => 0,
        };
        let limit = 22 << 30;
        let generate: Vec<usize> = (33..=36)
            .map(|n| sweeps(plan_tier(&abapa, n, limit, None), n))
            .collect();
        let verify: Vec<usize> = (33..=36)
            .map(|n| sweeps(plan_verify(&abapa, n, limit, None), n))
            .collect();
        assert_eq!(generate, [1, 2, 3, 4]);
        assert_eq!(verify, [1, 2, 3, 5]);
    }

    /// The room kept for the far exits holds the lists of tiers 27..=36 (abapa) as
    /// generated (docs/BENCHMARKS.md), with their allocator's share, and it is what the
    /// plan counts beside the slice and at the peak.
    #[test]
    fn far_exit_room_holds_the_lists_measured() {
        use crate::solve::cell::far_list_bytes;
        let lists = [
            (27, 158_187),
            (28, 334_143),
            (29, 993_445),
            (30, 2_360_502),
            (31, 4_501_366),
            (32, 5_238_137),
            (33, 10_628_019),
            (34, 20_064_443),
            (35, 33_332_197),
            (36, 59_748_720),
        ];
        for (n, listed) in lists {
            let p = positions(n);
            let chunks = p.div_ceil(crate::solve::CHUNK as u64);
            // The most the lists can take: every chunk's list not empty.
            let measured = chunks * (far_list_bytes(1) - 4) + listed * 4;
            let room = far_exit_bytes(n, p);
            assert!(room > measured, "tier {n}: room {room}, lists {measured}");
            assert!(room < p / 16, "tier {n}: room {room}");
            let plan = plan_tier(&Rules::ABAPA, n, 22 << 30, None).unwrap();
            assert_eq!(plan.far_exits, room);
            assert_eq!(plan.own, tier_memory(p) + room);
            assert_eq!(plan.own_beside_slice, plan.own - frontier_bytes(p));
            assert!(plan.needed() <= 22 << 30);
            assert_eq!(
                plan.far_exit_room(22 << 30),
                (22 << 30) - plan.needed() + room
            );
        }
        assert_eq!(
            far_exit_bytes(23, positions(23)),
            positions(23).div_ceil(16384) * 16
        );
        assert!(far_exit_bytes(24, positions(24)) > positions(24) >> 11);
        // The share at tier 36 (X = 15): 2^-7; at tier 48 (X = 7): 2^-(5/3).
        let p = positions(36);
        assert_eq!(far_exit_bytes(36, p) - p.div_ceil(16384) * 44, (p >> 7) * 4);
        let p = positions(48);
        assert_eq!(
            far_exit_bytes(48, p) - p.div_ceil(16384) * 44,
            (p >> 1) * 646 / 1024 * 4
        );
    }

    #[test]
    fn bytes_print_in_binary_units() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(3 << 29), "1.50 GiB");
    }
}
