//! One rank's share of the lower tiers: the scores of its own index range ([`Partition`]) of
//! every solved tier that a capture of a tier still to solve reaches, and the answers to the
//! look-ups the ranks send for them (one byte per look-up).
//!
//! A look-up is one 64-bit word, [`LowerShare::request`]: the child's tier and its index in
//! that tier; the rank it goes to is the owner of that index ([`LowerShare::owner`]).

use oware_db::index::{IndexKind, TierIndex};
use oware_db::table::Table;
use oware_db::{Error, Position, MAX_SEEDS};

use super::partition::{LocalScores, Partition};
use crate::lower::LowerTiers;

/// The bit where a look-up word holds the tier (indices are below 2^40 in every tier).
const TIER_SHIFT: u32 = 42;

/// This rank's scores of the lower tiers, each for the rank's own range of that tier.
pub struct LowerShare {
    rank: usize,
    /// By tier: the tier's index, its split over the ranks, and this rank's scores if held.
    tiers: Vec<(TierIndex, Partition, Option<Vec<i8>>)>,
}

impl LowerShare {
    /// No tier held yet, for rank `rank` of `ranks`.
    ///
    /// # Panics
    /// If `rank >= ranks`.
    pub fn new(rank: usize, ranks: usize) -> Self {
        assert!(rank < ranks, "rank {rank} of {ranks}");
        let tiers = (0..=MAX_SEEDS)
            .map(|t| {
                let index = TierIndex::new(t, IndexKind::Reachable);
                let part = Partition::new(index.size(), ranks);
                (index, part, None)
            })
            .collect();
        LowerShare { rank, tiers }
    }

    /// The rank whose share this is.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The split of tier `tier` over the ranks.
    pub fn partition(&self, tier: u8) -> Partition {
        self.tiers[tier as usize].1
    }

    /// Keeps this rank's scores of tier `tier`.
    ///
    /// # Errors
    /// [`Error::InvalidState`] if `local` is not this rank's range of the tier.
    pub fn insert(&mut self, tier: u8, local: LocalScores) -> Result<(), Error> {
        let (_, part, held) = &mut self.tiers[tier as usize];
        let range = part.range(self.rank);
        if local.start != range.start || local.scores.len() as u64 != range.end - range.start {
            return Err(Error::InvalidState(format!(
                "tier {tier}: rank {} holds {}..{}, {} scores from {} given",
                self.rank,
                range.start,
                range.end,
                local.scores.len(),
                local.start
            )));
        }
        *held = Some(local.scores);
        Ok(())
    }

    /// Reads this rank's range of tier `tier` from its table and keeps it.
    ///
    /// # Errors
    /// As [`Table::read_range`]; [`Error::InvalidState`] if the table is of another tier.
    pub fn load(&mut self, tier: u8, table: &Table) -> Result<(), Error> {
        if table.tier() != tier {
            return Err(Error::InvalidState(format!(
                "{} is tier {}, not {tier}",
                table.path().display(),
                table.tier()
            )));
        }
        let range = self.partition(tier).range(self.rank);
        let mut scores = crate::hugepage::vec_of((range.end - range.start) as usize, |_| 0i8);
        crate::dir::read::read_range_parallel(table, range.start, &mut scores)?;
        table.release_pages();
        self.insert(
            tier,
            LocalScores {
                start: range.start,
                scores,
            },
        )
    }

    /// Drops this rank's scores of tier `tier` (if held).
    pub fn remove(&mut self, tier: u8) {
        self.tiers[tier as usize].2 = None;
    }

    /// Whether this rank holds its scores of tier `tier`.
    pub fn holds(&self, tier: u8) -> bool {
        self.tiers[tier as usize].2.is_some()
    }

    /// Bytes of the scores held.
    pub fn bytes(&self) -> u64 {
        self.tiers
            .iter()
            .filter_map(|(_, _, s)| s.as_ref())
            .map(|s| s.len() as u64)
            .sum()
    }

    /// The look-up word of a reachable position of a tier below 49, and the rank that owns
    /// it. The position is ranked with [`oware_db::retro::rank_of_child`], as a move's child.
    #[inline]
    pub fn request(&self, p: &Position) -> (u64, usize) {
        let tier = p.seeds();
        let (index, part, _) = &self.tiers[tier as usize];
        let g = oware_db::retro::rank_of_child(index, p);
        ((u64::from(tier) << TIER_SHIFT) | g, part.owner(g))
    }

    /// The score a look-up word asks for: this rank must own it.
    ///
    /// # Panics
    /// If the tier is not held or the index is not this rank's.
    #[inline]
    pub fn answer(&self, word: u64) -> i8 {
        let tier = (word >> TIER_SHIFT) as usize;
        let g = word & ((1 << TIER_SHIFT) - 1);
        let (_, part, held) = &self.tiers[tier];
        let scores = held
            .as_deref()
            .unwrap_or_else(|| panic!("tier {tier} is not held"));
        scores[(g - part.start(self.rank)) as usize]
    }

    /// This rank's share of tiers that one process holds whole (for tests and measurements):
    /// the held tiers of `lower`, cut to this rank's ranges.
    pub fn from_whole(lower: &LowerTiers, rank: usize, ranks: usize) -> Self {
        let mut share = LowerShare::new(rank, ranks);
        for t in 0..lower.len() as u8 {
            if !lower.holds(t) {
                continue;
            }
            let range = share.partition(t).range(rank);
            let scores = lower.tier(t)[range.start as usize..range.end as usize].to_vec();
            share.tiers[t as usize].2 = Some(scores);
        }
        share
    }
}
