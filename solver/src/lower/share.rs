//! One rank's share of the lower tiers: the scores of its own range of places
//! ([`Partition`]) of every solved tier that a capture of a tier still to solve reaches, and
//! the answers to the look-ups the ranks send for them (one byte per look-up).
//!
//! A look-up is one 64-bit word, [`LowerShare::request`]: the child's tier and its place in
//! that tier; the rank it goes to is the owner of that place.
//!
//! A share with a scratch directory ([`LowerShare::with_scratch`]) keeps each tier as a
//! memory-mapped side copy there, as one process keeps its lower tiers
//! ([`LowerTiers::push_mapped`]): the captures read it during a tier's first pass only, so
//! its pages leave the rank's resident set for the propagation
//! ([`LowerShare::release_pages`]) and come back from the page cache for the next tier.

use std::path::PathBuf;

use oware_db::retro::ChildRanker;
use oware_db::{Error, Position, MAX_SEEDS};

use super::{side_copy, LowerTiers, Scores};
use crate::comm::{LocalScores, Partition};

/// The bit where a look-up word holds the tier (indices are below 2^40 in every tier).
const TIER_SHIFT: u32 = 42;

/// This rank's scores of the lower tiers, each for the rank's own range of places of that
/// tier.
pub struct LowerShare {
    rank: usize,
    /// By tier: its split over the ranks, and this rank's scores if held.
    tiers: Vec<(Partition, Option<Scores>)>,
    /// Where the side copies go; `None`: the scores are held in memory.
    scratch: Option<PathBuf>,
}

impl LowerShare {
    /// No tier held yet, for rank `rank` of `ranks`.
    ///
    /// # Panics
    /// If `rank >= ranks`.
    pub fn new(rank: usize, ranks: usize) -> Self {
        assert!(rank < ranks, "rank {rank} of {ranks}");
        let tiers = (0..=MAX_SEEDS)
            .map(|t| (Partition::of_tier(t, ranks), None))
            .collect();
        LowerShare {
            rank,
            tiers,
            scratch: None,
        }
    }

    /// No tier held yet, for rank `rank` of `ranks`, each tier to be kept as a side copy in
    /// `scratch` (a directory this rank alone writes, created by the caller).
    ///
    /// # Panics
    /// If `rank >= ranks`.
    pub fn with_scratch(rank: usize, ranks: usize, scratch: PathBuf) -> Self {
        LowerShare {
            scratch: Some(scratch),
            ..LowerShare::new(rank, ranks)
        }
    }

    /// The directory of this rank's side copies, if it keeps them.
    pub fn scratch(&self) -> Option<&std::path::Path> {
        self.scratch.as_deref()
    }

    /// The rank whose share this is.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The split of tier `tier` over the ranks.
    pub fn partition(&self, tier: u8) -> &Partition {
        &self.tiers[tier as usize].0
    }

    /// Keeps this rank's scores of tier `tier`: in memory, or as a side copy in the scratch
    /// directory (the vector then freed).
    ///
    /// # Errors
    /// [`Error::InvalidState`] if `local` is not this rank's range of places of the tier;
    /// [`Error::Io`] if the side copy cannot be written or mapped.
    pub fn insert(&mut self, tier: u8, local: LocalScores) -> Result<(), Error> {
        let (part, held) = &mut self.tiers[tier as usize];
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
        *held = Some(match &self.scratch {
            Some(dir) if !local.scores.is_empty() => {
                let path = dir.join(format!("tier-{tier:02}.share"));
                Scores::Mapped(side_copy(&path, &local.scores).map_err(|e| Error::io(&path, e))?)
            }
            _ => Scores::Owned(local.scores),
        });
        Ok(())
    }

    /// Releases the pages of the side copies from the rank's resident set (a tier's first
    /// pass has read its captures): they are read again, unchanged, from the page cache or
    /// the file on the next access. Nothing for scores held in memory.
    pub fn release_pages(&self) {
        for held in self.tiers.iter().filter_map(|(_, held)| held.as_ref()) {
            held.release_pages();
        }
    }

    /// Drops this rank's scores of tier `tier` (if held), and its side copy.
    pub fn remove(&mut self, tier: u8) {
        if let Some(Scores::Mapped(_)) = self.tiers[tier as usize].1.take() {
            if let Some(dir) = &self.scratch {
                let _ = std::fs::remove_file(dir.join(format!("tier-{tier:02}.share")));
            }
        }
    }

    /// Whether this rank holds its scores of tier `tier`.
    pub fn holds(&self, tier: u8) -> bool {
        self.tiers[tier as usize].1.is_some()
    }

    /// Bytes of the scores held.
    pub fn bytes(&self) -> u64 {
        self.tiers
            .iter()
            .filter_map(|(_, s)| s.as_ref())
            .map(|s| s.as_slice().len() as u64)
            .sum()
    }

    /// The look-up word of a reachable position of a tier below 49, and the rank that owns
    /// it. The position is ranked with [`oware_db::retro::rank_of_child`], as a move's child.
    #[inline]
    pub fn request(&self, p: &Position) -> (u64, usize) {
        let tier = p.seeds();
        let part = &self.tiers[tier as usize].0;
        let g = oware_db::retro::rank_of_child(part.index(), p);
        Self::word(tier, part, g)
    }

    /// The look-up word of index `g` of tier `tier`, split by `part`, and its owner.
    #[inline(always)]
    fn word(tier: u8, part: &Partition, g: u64) -> (u64, usize) {
        let o = part.place_of(g);
        ((u64::from(tier) << TIER_SHIFT) | o, part.owner(o))
    }

    /// [`LowerShare::request`] for the child of a move from `house`, ranked by `ranker`
    /// (which keeps half of the rank of the children of positions visited in index order).
    #[inline]
    pub(crate) fn request_ranked(
        &self,
        child: &Position,
        ranker: &mut ChildRanker,
        house: u8,
    ) -> (u64, usize) {
        let tier = child.seeds();
        let g = ranker.rank(child, house);
        Self::word(tier, &self.tiers[tier as usize].0, g)
    }

    /// The tier and the place in that tier a look-up word of [`LowerShare::request`] asks
    /// for.
    #[inline]
    pub fn asked(word: u64) -> (u8, u64) {
        ((word >> TIER_SHIFT) as u8, word & ((1 << TIER_SHIFT) - 1))
    }

    /// The score a look-up word asks for: this rank must own it.
    ///
    /// # Panics
    /// If the tier is not held or the index is not this rank's.
    #[inline]
    pub fn answer(&self, word: u64) -> i8 {
        *self.entry(word)
    }

    /// Where the score a look-up word asks for is held (to fetch it ahead of reading it):
    /// this rank must own it.
    ///
    /// # Panics
    /// As [`LowerShare::answer`].
    #[inline]
    pub(crate) fn entry(&self, word: u64) -> &i8 {
        let tier = (word >> TIER_SHIFT) as usize;
        let g = word & ((1 << TIER_SHIFT) - 1);
        let (part, held) = &self.tiers[tier];
        let scores = held
            .as_ref()
            .unwrap_or_else(|| panic!("tier {tier} is not held"))
            .as_slice();
        &scores[(g - part.start(self.rank)) as usize]
    }

    /// This rank's share of tiers that one process holds whole (for tests and measurements):
    /// the held tiers of `lower`, cut to this rank's places.
    pub fn from_whole(lower: &LowerTiers, rank: usize, ranks: usize) -> Self {
        let mut share = LowerShare::new(rank, ranks);
        for t in 0..lower.len() as u8 {
            if !lower.holds(t) {
                continue;
            }
            let scores = share.partition(t).share_of(rank, lower.tier(t));
            share.tiers[t as usize].1 = Some(Scores::Owned(scores));
        }
        share
    }
}

#[cfg(test)]
mod tests {
    use super::{LowerShare, Position};
    use crate::comm::LocalScores;

    /// A share kept as side copies answers as one held in memory, before and after its pages
    /// are released, and removing a tier removes its file.
    #[test]
    fn side_copies_answer_as_memory_does() {
        let tmp = tempfile::tempdir().unwrap();
        // Tier 9: every rank holds some of it.
        let (ranks, tier) = (3, 9);
        for rank in 0..ranks {
            let mut memory = LowerShare::new(rank, ranks);
            let mut mapped = LowerShare::with_scratch(rank, ranks, tmp.path().to_path_buf());
            let part = memory.partition(tier).clone();
            let range = part.range(rank);
            assert!(!range.is_empty());
            let scores: Vec<i8> = range.clone().map(|o| (o % 13) as i8 - 6).collect();
            for share in [&mut memory, &mut mapped] {
                let local = LocalScores {
                    start: range.start,
                    scores: scores.clone(),
                };
                share.insert(tier, local).unwrap();
            }
            let file = tmp.path().join(format!("tier-{tier:02}.share"));
            assert!(file.exists());
            assert_eq!(mapped.bytes(), memory.bytes());
            let index =
                oware_db::index::TierIndex::new(tier, oware_db::index::IndexKind::Reachable);
            let mut asked = 0;
            for release in [false, true] {
                if release {
                    mapped.release_pages();
                }
                for o in range.clone() {
                    let p: Position = index.unrank(part.index_at(o));
                    let (word, owner) = mapped.request(&p);
                    assert_eq!(owner, rank);
                    assert_eq!(mapped.answer(word), memory.answer(word));
                    assert_eq!(mapped.answer(word), (o % 13) as i8 - 6);
                    asked += 1;
                }
            }
            assert_eq!(asked, 2 * (range.end - range.start));
            mapped.remove(tier);
            assert!(!mapped.holds(tier));
            assert!(!file.exists());
        }
    }
}
