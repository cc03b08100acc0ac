//! Scores of the tiers already solved, for the captures of the tier being solved.

use std::sync::Arc;

use oware_db::{IndexKind, Position, TierIndex};

/// The scores of tiers `0..len()`, each in [`IndexKind::Reachable`] index order.
#[derive(Clone, Default)]
pub struct LowerTiers {
    tiers: Vec<(TierIndex, Arc<[i8]>)>,
}

impl LowerTiers {
    /// No tiers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the next tier (`self.len()`).
    ///
    /// # Panics
    /// If `scores` does not have the size of that tier.
    pub fn push(&mut self, scores: Arc<[i8]>) {
        let index = TierIndex::new(self.tiers.len() as u8, IndexKind::Reachable);
        assert_eq!(
            scores.len() as u64,
            index.size(),
            "tier {} size",
            self.len()
        );
        self.tiers.push((index, scores));
    }

    /// Number of tiers held (they are tiers `0..len()`).
    pub fn len(&self) -> usize {
        self.tiers.len()
    }

    /// Whether no tier is held.
    pub fn is_empty(&self) -> bool {
        self.tiers.is_empty()
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.tiers.iter().map(|(_, s)| s.len() as u64).sum()
    }

    /// The scores of tier `n`.
    pub fn tier(&self, n: u8) -> &[i8] {
        &self.tiers[n as usize].1
    }

    /// The score of a reachable position of a held tier.
    ///
    /// # Panics
    /// If the position's tier is not held.
    #[inline]
    pub fn score(&self, p: &Position) -> i8 {
        let (index, scores) = &self.tiers[p.seeds() as usize];
        scores[index.rank_unchecked(p) as usize]
    }
}
