//! Slices of the lower tiers: when the scores that a tier's captures reach do not fit in
//! memory at once, the tier's exits are computed in sweeps, one per slice (see
//! `solve_tier_sliced`).
//!
//! The window of lower tiers ([`Rules::capture_window`](oware_db::Rules::capture_window)), taken in
//! `(tier, rank)` order, is cut into [`Slice`]s of at most a given number of scores; each
//! slice is a few [`Piece`]s, one per tier it covers. A [`ScoreSource`] fills a slice's
//! buffer: [`TableSource`] decodes it from the tables of a directory, and [`LowerTiers`]
//! copies it from tiers it holds. A source only has to deliver the scores of a rank range of
//! a tier, so a source that receives them from the process that owns them (a distributed
//! run partitioning the lower tiers) fits the same sweeps.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use oware_db::index::{IndexKind, TierIndex};
use oware_db::retro::ChildRanker;
use oware_db::table::Table;
use oware_db::{Error, Position, MAX_SEEDS};

use crate::lower::LowerTiers;

/// Entries a cut aligns to inside a tier: the tables' default block, so that a table's
/// slice is mostly whole blocks (a [`TableSource`] reads any range all the same).
pub const SLICE_ALIGN: u64 = oware_db::write::WriteOptions::DEFAULT_BLOCK_ENTRIES as u64;

/// The scores of one tier's index range `ranks` held by a slice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The tier.
    pub tier: u8,
    /// The indices (reachable kind) of the tier.
    pub ranks: Range<u64>,
}

impl Piece {
    /// Scores in the piece.
    pub fn len(&self) -> u64 {
        self.ranks.end - self.ranks.start
    }

    /// Whether the piece holds no score.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One slice of the lower window: consecutive pieces in `(tier, rank)` order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Slice {
    /// The pieces, by increasing tier.
    pub pieces: Vec<Piece>,
}

impl Slice {
    /// Scores in the slice (bytes of its buffer).
    pub fn len(&self) -> u64 {
        self.pieces.iter().map(Piece::len).sum()
    }

    /// Whether the slice holds no score.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Cuts the tiers `window` (sizes of the reachable index) into slices of at most
/// `max(slice_bytes, align)` scores, in `(tier, rank)` order. A slice is filled greedily: a
/// tier that fits whole in what is left of it is taken whole; otherwise the slice takes a
/// whole number of `align` entries of it and the next slice goes on from there. Returns at
/// least one slice (an empty one for an empty window).
pub fn cut_slices(window: Range<u8>, slice_bytes: u64, align: u64) -> Vec<Slice> {
    let align = align.max(1);
    let cap = slice_bytes.max(align) / align * align;
    let mut slices = vec![Slice::default()];
    let mut used = 0u64;
    for tier in window {
        let size = TierIndex::new(tier, IndexKind::Reachable).size();
        let mut at = 0u64;
        while at < size {
            let left = cap - used;
            let rest = size - at;
            let take = if rest <= left {
                rest
            } else {
                left / align * align
            };
            if take == 0 {
                slices.push(Slice::default());
                used = 0;
                continue;
            }
            if let Some(s) = slices.last_mut() {
                s.pieces.push(Piece {
                    tier,
                    ranks: at..at + take,
                });
            }
            used += take;
            at += take;
        }
    }
    if slices.len() > 1 && slices.last().is_some_and(Slice::is_empty) {
        slices.pop();
    }
    slices
}

/// A source of lower-tier scores: the scores of a rank range of a tier.
///
/// The sliced first pass asks for every piece of a slice before its sweep, from the calling
/// thread; an implementation may decode in parallel on the current rayon pool, and one for
/// several processes may exchange the scores with the processes that hold them (every
/// process then walks the same slices in the same order).
pub trait ScoreSource: Sync {
    /// Fills `out` with the scores of indices `start..start + out.len()` of tier `tier`
    /// (reachable kind).
    ///
    /// # Errors
    /// The scores cannot be read (a missing or corrupt table, an index out of range).
    fn load(&self, tier: u8, start: u64, out: &mut [i8]) -> Result<(), Error>;
}

impl ScoreSource for LowerTiers {
    fn load(&self, tier: u8, start: u64, out: &mut [i8]) -> Result<(), Error> {
        let scores = (usize::from(tier) < self.len())
            .then(|| self.tier(tier))
            .ok_or_else(|| Error::InvalidState(format!("tier {tier} is not held")))?;
        let range = usize::try_from(start)
            .ok()
            .and_then(|s| Some(s..s.checked_add(out.len())?))
            .and_then(|r| scores.get(r))
            .ok_or_else(|| {
                Error::InvalidState(format!(
                    "tier {tier}: indices {start}..+{} of {} held",
                    out.len(),
                    scores.len()
                ))
            })?;
        out.copy_from_slice(range);
        Ok(())
    }
}

/// Scores decoded from the tables `tier-NN.owt` of a directory, on the current rayon pool;
/// each table is opened (and its header checked) the first time it is read.
pub struct TableSource {
    dir: PathBuf,
    tables: Mutex<Vec<Option<Arc<Table>>>>,
}

impl TableSource {
    /// The tables of `dir`.
    pub fn new(dir: &Path) -> Self {
        TableSource {
            dir: dir.to_path_buf(),
            tables: Mutex::new(vec![None; usize::from(MAX_SEEDS) + 1]),
        }
    }

    fn table(&self, tier: u8) -> Result<Arc<Table>, Error> {
        let mut tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = tables
            .get_mut(usize::from(tier))
            .ok_or_else(|| Error::InvalidState(format!("tier {tier} is over {MAX_SEEDS}")))?;
        if let Some(t) = slot {
            return Ok(Arc::clone(t));
        }
        let path = oware_db::manifest::tier_path(&self.dir, None, tier);
        let table = Table::open(&path)?;
        let expected = TierIndex::new(tier, IndexKind::Reachable).size();
        if table.tier() != tier || table.kind() != IndexKind::Reachable || table.len() != expected {
            return Err(Error::InvalidState(format!(
                "{}: holds tier {} ({:?}, {} entries), not tier {tier} (reachable, {expected})",
                path.display(),
                table.tier(),
                table.kind(),
                table.len()
            )));
        }
        let table = Arc::new(table);
        *slot = Some(Arc::clone(&table));
        Ok(table)
    }
}

impl ScoreSource for TableSource {
    /// Decodes the range, then releases every page of the table it read (compressed blocks,
    /// block index, header): the slice costs its buffer only. The block index alone is a
    /// 64th of a byte per score and would otherwise stay resident for every range read,
    /// tier after tier, outside the memory plan.
    fn load(&self, tier: u8, start: u64, out: &mut [i8]) -> Result<(), Error> {
        let table = self.table(tier)?;
        let read = crate::dir::read::read_range_parallel(&table, start, out);
        table.release_pages();
        read
    }
}

/// A slice loaded into memory, looked up by position.
pub(crate) struct Loaded<'a> {
    scores: &'a [i8],
    /// Per tier: its index, the first rank held, how many, and where they start in `scores`
    /// (none held: `len` 0).
    tiers: Vec<(TierIndex, u64, u64, usize)>,
    /// The tiers the slice touches, `lo..hi` (for a quick test before ranking).
    lo: u8,
    hi: u8,
}

impl<'a> Loaded<'a> {
    /// The lookup of `slice`, whose scores are `scores` (pieces in order).
    pub(crate) fn new(slice: &Slice, scores: &'a [i8]) -> Self {
        let mut tiers: Vec<(TierIndex, u64, u64, usize)> = (0..=MAX_SEEDS)
            .map(|t| (TierIndex::new(t, IndexKind::Reachable), 0, 0, 0))
            .collect();
        let mut base = 0usize;
        for p in &slice.pieces {
            tiers[usize::from(p.tier)] =
                (tiers[usize::from(p.tier)].0, p.ranks.start, p.len(), base);
            base += p.len() as usize;
        }
        debug_assert_eq!(base, scores.len());
        let lo = slice.pieces.first().map_or(0, |p| p.tier);
        let hi = slice.pieces.last().map_or(0, |p| p.tier + 1);
        Loaded {
            scores,
            tiers,
            lo,
            hi,
        }
    }

    /// The score of `p` (a capture's child), when the slice holds it: a reference, for a
    /// prefetch before it is read.
    #[inline]
    pub(crate) fn entry(&self, p: &Position) -> Option<&'a i8> {
        self.held(p.seeds(), |index| index.rank_unchecked(p))
    }

    /// [`Loaded::entry`] for the child of a move from `house`, ranked by `ranker` (which
    /// keeps half of the rank of the children of positions visited in index order).
    #[inline(always)]
    pub(crate) fn entry_ranked(
        &self,
        p: &Position,
        ranker: &mut ChildRanker,
        house: u8,
    ) -> Option<&'a i8> {
        self.held(p.seeds(), |_| ranker.rank(p, house))
    }

    /// The score of the position of tier `t` that `rank` ranks in `t`'s index, when the slice
    /// holds it (the tier is tested first, so that a tier outside the slice is not ranked).
    #[inline(always)]
    fn held(&self, t: u8, rank: impl FnOnce(&TierIndex) -> u64) -> Option<&'a i8> {
        if t < self.lo || t >= self.hi {
            return None;
        }
        let (index, first, len, base) = &self.tiers[usize::from(t)];
        let off = rank(index).wrapping_sub(*first);
        if off >= *len {
            return None;
        }
        Some(&self.scores[*base + off as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slices cover the window exactly once, in order, each within its size, cut inside
    /// a tier only at a multiple of the alignment.
    #[test]
    fn slices_cover_the_window_in_order() {
        for (window, bytes, align) in [
            (0u8..11, 1u64, 1024u64),
            (0..11, 5000, 1024),
            (3..15, 1 << 20, 1024),
            (0..13, 37 * 1024, 1024),
            (2..9, 100, 7),
            (0..0, 10, 1024),
            (0..1, 10, 1024),
        ] {
            let slices = cut_slices(window.clone(), bytes, align);
            assert!(!slices.is_empty());
            let cap = bytes.max(align) / align * align;
            let mut next: Vec<(u8, u64)> = Vec::new();
            for s in &slices {
                assert!(s.len() <= cap, "{window:?} {bytes}: {s:?}");
                for p in &s.pieces {
                    assert!(!p.is_empty());
                    match next.last_mut() {
                        Some((t, at)) if *t == p.tier => {
                            assert_eq!(*at, p.ranks.start);
                            *at = p.ranks.end;
                        }
                        _ => {
                            assert_eq!(p.ranks.start, 0);
                            next.push((p.tier, p.ranks.end));
                        }
                    }
                    let size = TierIndex::new(p.tier, IndexKind::Reachable).size();
                    assert!(p.ranks.end == size || p.ranks.end % align == 0);
                }
            }
            let expect: Vec<(u8, u64)> = window
                .map(|t| (t, TierIndex::new(t, IndexKind::Reachable).size()))
                .collect();
            assert_eq!(next, expect);
        }
    }
}
