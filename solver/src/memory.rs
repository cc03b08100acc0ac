//! The memory the solver and the verifier need, in bytes, and the memory the machine has
//! available: every figure that generation and verification check before they start, and
//! that `oware verify --start` reports.

use oware_db::{tier_size, IndexKind};

use crate::tier::{DIRTY, LEVEL_GRANULE};

/// Positions of tier `n` (reachable index).
fn positions(n: u8) -> u64 {
    tier_size(n, IndexKind::Reachable)
}

/// Bytes of memory [`solve_tier`](crate::solve_tier) needs for a tier of `positions`
/// positions: its cells (which become the scores), two frontier bits per position, the
/// dirty flags and the level masks; lower tiers not included.
pub fn tier_memory(positions: u64) -> u64 {
    positions
        + positions / 4
        + positions / DIRTY as u64
        + positions / (LEVEL_GRANULE as u64 / 8)
        + 4096
}

/// Bytes one rank holds for `local` owned positions of a tier solved over several ranks:
/// one cell and one frontier bit per position, in whole 64-bit words.
pub(crate) fn rank_bytes(local: u64) -> u64 {
    local + local.div_ceil(64) * 8
}

/// Bytes of memory one rank of `ranks` needs for its part of a tier of `positions`
/// positions ([`solve_tier_local`](crate::distributed::solve_tier_local): cells, which
/// become the scores, and frontier bits; lower tiers and exchange buffers not included).
pub fn partition_memory(positions: u64, ranks: usize) -> u64 {
    rank_bytes(positions.div_ceil(ranks.max(1) as u64)) + 4096
}

/// Bytes of memory [`generate_with`](crate::generate_with) needs to solve a tier of
/// `positions` positions over `ranks` ranks (1: in this process alone): the solver's cells
/// and frontier and, over several ranks, the gathered tier; lower tiers not included (they
/// are memory-mapped side copies).
pub fn generate_tier_memory(positions: u64, ranks: usize) -> u64 {
    if ranks > 1 {
        partition_memory(positions, ranks) + positions
    } else {
        tier_memory(positions)
    }
}

/// Peak memory of generating tiers up to `max` in one process, reached at the first tier
/// `m` at or above `from` that dominates: the solver's memory for tier `m` plus the lower
/// tiers' scores, which generation reads from memory-mapped side copies (page cache, not
/// process memory, but read at random, so they should fit in memory for speed). Returns
/// `(m, bytes)`; `(max, 0)` when `from > max`.
pub fn generate_peak_memory(from: u8, max: u8) -> (u8, u64) {
    (from..=max)
        .map(|m| {
            let lower: u64 = (0..m).map(positions).sum();
            (m, lower + tier_memory(positions(m)))
        })
        .max_by_key(|&(_, b)| b)
        .unwrap_or((max, 0))
}

/// Bytes of memory [`verify_tier`](crate::verify_tier) needs beyond the scores it is given,
/// for a tier of `positions` positions (verification state and frontier; lower tiers not
/// included).
pub fn verify_memory(positions: u64) -> u64 {
    positions + positions / 8 + 4096
}

/// Bytes a deep verification of tiers up to `max` ([`verify_deep_with`](crate::verify_deep_with))
/// holds at its peak: the scores of every lower tier, and the top tier's scores and
/// verification state.
pub fn verify_deep_memory(max: u8) -> u64 {
    let lower: u64 = (0..max).map(positions).sum();
    let top = positions(max);
    lower + top + verify_memory(top)
}

/// Bytes of memory available to this process: `OWARE_MEMORY_LIMIT` if set, else
/// `MemAvailable` from `/proc/meminfo`, else unlimited.
pub fn available_memory() -> u64 {
    if let Some(v) = std::env::var("OWARE_MEMORY_LIMIT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        return v;
    }
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
        assert_eq!(verify_memory(1 << 20), (1 << 20) + (1 << 17) + 4096);
        assert_eq!(partition_memory(1000, 3), 334 + 6 * 8 + 4096);
        assert_eq!(generate_tier_memory(1000, 1), tier_memory(1000));
        assert_eq!(
            generate_tier_memory(1000, 3),
            partition_memory(1000, 3) + 1000
        );
        let top = positions(12);
        let lower: u64 = (0..12).map(positions).sum();
        assert_eq!(verify_deep_memory(12), lower + top + verify_memory(top));
        assert_eq!(generate_peak_memory(13, 12), (12, 0));
        let (m, b) = generate_peak_memory(0, 12);
        assert_eq!((m, b), (12, lower + tier_memory(top)));
    }

    #[test]
    fn bytes_print_in_binary_units() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(3 << 29), "1.50 GiB");
    }
}
