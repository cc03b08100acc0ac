//! The split of a tier over the ranks ([`Partition`]), a rank's share of a tier's scores
//! ([`LocalScores`]) and the tuning of the exchanges ([`PartitionConfig`]): the types every
//! part of the distributed backend shares.

use std::ops::Range;

/// The split of a tier's indices over the ranks: rank `r` of `ranks` owns the indices from
/// `⌊size·r/ranks⌋` rounded down to a multiple of [`PARTITION_ALIGN`] to the start of rank
/// `r + 1` (the last rank to the tier's end). Ranges are whole blocks of the tables, so
/// that every rank encodes the blocks of its own range; their sizes differ by at most one
/// block, and a tier smaller than a block per rank leaves some ranks empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    size: u64,
    ranks: u64,
}

/// The entries a [`Partition`] aligns its ranges to: a block of the distance tables
/// ([`WriteOptions::DEFAULT_DISTANCE_BLOCK_ENTRIES`](oware_db::write::WriteOptions::DEFAULT_DISTANCE_BLOCK_ENTRIES)),
/// a whole number of blocks of the score tables
/// ([`WriteOptions::DEFAULT_BLOCK_ENTRIES`](oware_db::write::WriteOptions::DEFAULT_BLOCK_ENTRIES)).
pub const PARTITION_ALIGN: u64 =
    oware_db::write::WriteOptions::DEFAULT_DISTANCE_BLOCK_ENTRIES as u64;

const _: () = assert!(
    PARTITION_ALIGN % oware_db::write::WriteOptions::DEFAULT_BLOCK_ENTRIES as u64 == 0,
    "a rank's range is whole blocks of the score tables"
);

impl Partition {
    /// The split of `size` indices over `ranks` ranks.
    ///
    /// # Panics
    /// If `ranks == 0`.
    pub fn new(size: u64, ranks: usize) -> Self {
        assert!(ranks > 0, "at least one rank");
        Partition {
            size,
            ranks: ranks as u64,
        }
    }

    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.ranks as usize
    }

    /// The indices split.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// First index of rank `r` (`r == ranks` gives the tier size).
    #[inline]
    pub fn start(&self, r: usize) -> u64 {
        if r as u64 >= self.ranks {
            return self.size;
        }
        let even = (u128::from(self.size) * r as u128 / u128::from(self.ranks)) as u64;
        even / PARTITION_ALIGN * PARTITION_ALIGN
    }

    /// The indices owned by rank `r`.
    pub fn range(&self, r: usize) -> Range<u64> {
        self.start(r)..self.start(r + 1)
    }

    /// The rank owning index `g` (`g < size`).
    #[inline]
    pub fn owner(&self, g: u64) -> usize {
        // The owner of the even split, r = ⌈(g+1)·P/size⌉ − 1, starts at or before g, and
        // so does its aligned start: the owner is r or one of the next ranks.
        let num = (u128::from(g) + 1) * u128::from(self.ranks);
        let mut r = (num.div_ceil(u128::from(self.size)) - 1) as usize;
        while self.start(r + 1) <= g {
            r += 1;
        }
        r
    }
}

/// Tuning of [`solve_tier_local`](crate::distributed::solve_tier_local) and of the distributed verifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionConfig {
    /// The most updates (8 bytes each) a rank sends in one exchange, over all destinations;
    /// also about the most it receives. Frontier positions are taken `batch / 4` per round.
    pub batch: usize,
    /// As [`Tuning::exact_exits`](crate::tier::Tuning::exact_exits).
    pub exact_exits: u8,
    /// Bytes this rank's far-exit lists may take: once they outgrow it, every rank stops the
    /// tier with an error, as [`Tuning::far_exit_room`](crate::tier::Tuning::far_exit_room) does
    /// for one process. Unlimited by default.
    pub far_exit_room: u64,
}

impl Default for PartitionConfig {
    /// 4 Mi updates (32 MiB) per exchange; as many exits coded in the cells as fit; no
    /// bound on the far-exit lists.
    fn default() -> Self {
        PartitionConfig {
            batch: 1 << 22,
            exact_exits: 48,
            far_exit_room: u64::MAX,
        }
    }
}

/// This rank's scores of a tier: the indices `start..start + scores.len()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalScores {
    /// First index owned.
    pub start: u64,
    /// Scores of the owned indices, in index order.
    pub scores: Vec<i8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_matches_ranges() {
        for size in [
            0u64,
            1,
            2,
            5,
            7,
            64,
            100,
            1001,
            1024,
            2049,
            3000,
            7 * 1024 + 5,
            20_000,
        ] {
            for ranks in 1..=7 {
                let p = Partition::new(size, ranks);
                assert_eq!(p.start(0), 0);
                assert_eq!(p.start(ranks), size);
                for r in 0..ranks {
                    assert_eq!(p.start(r) % PARTITION_ALIGN, 0);
                    assert!(p.start(r) <= p.start(r + 1));
                    for g in p.range(r) {
                        assert_eq!(p.owner(g), r, "size {size} ranks {ranks} g {g}");
                    }
                }
            }
        }
        let big = Partition::new(279_871_768_995, 144);
        for r in 0..144 {
            let range = big.range(r);
            if !range.is_empty() {
                assert_eq!(big.owner(range.start), r);
                assert_eq!(big.owner(range.end - 1), r);
            }
        }
    }
}
