//! Scores of the tiers already solved, for the captures of the tier being solved.
//!
//! A tier is held either in memory or as an uncompressed side copy of its scores, one byte
//! per position, memory-mapped: the operating system pages it in and out, so the lower tiers
//! of a large tier are never loaded whole into the process.

pub(crate) mod lookup;
pub(crate) mod share;
pub(crate) mod slice;

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;
use oware_db::index::{IndexKind, TierIndex};
use oware_db::retro::{rank_of_child, ChildRanker};
use oware_db::Position;

/// Writes `scores` to `path` as a side copy (through a temporary file, renamed; not synced,
/// since a side copy does not outlive the run) and maps it: one process's lower tiers
/// ([`LowerTiers::push_mapped`]) and a rank's share (`share.rs`).
fn side_copy(path: &Path, scores: &[i8]) -> std::io::Result<Mmap> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = File::create(&tmp)?;
        // SAFETY: reinterpreting `i8` as `u8`: same size, alignment and validity.
        let bytes =
            unsafe { std::slice::from_raw_parts(scores.as_ptr().cast::<u8>(), scores.len()) };
        f.write_all(bytes)?;
    }
    std::fs::rename(&tmp, path)?;
    let file = File::open(path)?;
    // SAFETY: the file was just written by this process in a scratch directory of its own;
    // nothing truncates or rewrites it while it is mapped. Should another process do so
    // anyway, reads may see other bytes or fault, as for any mapping.
    let map = unsafe { Mmap::map(&file)? };
    if map.len() != scores.len() {
        return Err(std::io::Error::other(format!(
            "{}: mapped {} bytes, wrote {}",
            path.display(),
            map.len(),
            scores.len()
        )));
    }
    Ok(map)
}

/// Where a tier's scores live.
enum Scores {
    Memory(Arc<[i8]>),
    Owned(Vec<i8>),
    Mapped(Mmap),
}

impl Scores {
    /// Releases the pages of a side copy from the process's resident set: they are read
    /// again from the file, unchanged, on the next access. Nothing for scores in memory.
    fn release_pages(&self) {
        if let Scores::Mapped(m) = self {
            #[cfg(unix)]
            {
                // SAFETY: `MADV_DONTNEED` on a read-only shared mapping of a file
                // (`Mmap::map`: `MAP_SHARED`, `PROT_READ`) only unmaps its pages from this
                // process; the next access reads the same bytes of the file again, so no
                // byte under a live reference changes (a private or anonymous mapping would
                // come back zeroed; this one cannot). A side copy is not modified while
                // mapped (see `side_copy`).
                let _ = unsafe { m.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
            }
            #[cfg(not(unix))]
            let _ = m;
        }
    }

    #[inline]
    fn as_slice(&self) -> &[i8] {
        match self {
            Scores::Memory(s) => s,
            Scores::Owned(s) => s,
            // SAFETY: `i8` and `u8` have the same size and alignment, and every byte is a
            // valid `i8`; the slice borrows the mapping, which lives as long as `self`.
            Scores::Mapped(m) => unsafe {
                std::slice::from_raw_parts(m.as_ptr().cast::<i8>(), m.len())
            },
        }
    }
}

/// The scores of tiers `0..len()`, each in [`IndexKind::Reachable`] index order.
#[derive(Default)]
pub struct LowerTiers {
    tiers: Vec<(TierIndex, Scores)>,
}

impl LowerTiers {
    /// No tiers yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn next_index(&self, len: u64) -> TierIndex {
        let index = TierIndex::new(self.tiers.len() as u8, IndexKind::Reachable);
        assert_eq!(len, index.size(), "tier {} size", self.len());
        index
    }

    /// Adds the next tier (`self.len()`), held in memory.
    ///
    /// # Panics
    /// If `scores` does not have the size of that tier.
    pub fn push(&mut self, scores: Arc<[i8]>) {
        let index = self.next_index(scores.len() as u64);
        self.tiers.push((index, Scores::Memory(scores)));
    }

    /// Adds the next tier (`self.len()`) without its scores: a tier that no capture read
    /// from these lower tiers reaches (reading it panics).
    pub fn push_absent(&mut self) {
        let index = TierIndex::new(self.tiers.len() as u8, IndexKind::Reachable);
        self.tiers
            .push((index, Scores::Memory(Arc::from(Vec::new()))));
    }

    /// Adds the next tier (`self.len()`) as a memory-mapped side copy: writes `scores` to
    /// `path` (through a temporary file, renamed; not synced, since a side copy does not
    /// outlive the run) and maps it.
    ///
    /// # Errors
    /// The file cannot be written or mapped.
    ///
    /// # Panics
    /// If `scores` does not have the size of that tier.
    pub fn push_mapped(&mut self, path: &Path, scores: &[i8]) -> std::io::Result<()> {
        let index = self.next_index(scores.len() as u64);
        self.tiers
            .push((index, Scores::Mapped(side_copy(path, scores)?)));
        Ok(())
    }

    /// Holds tier `n`'s `scores` in memory (taking the vector as it is), or drops them
    /// (`None`: the tier becomes absent); absent tiers are added below `n` as needed.
    ///
    /// # Panics
    /// If `scores` does not have the size of tier `n`.
    pub(crate) fn set(&mut self, n: u8, scores: Option<Vec<i8>>) {
        while self.tiers.len() <= usize::from(n) {
            self.push_absent();
        }
        let index = TierIndex::new(n, IndexKind::Reachable);
        let held = match scores {
            Some(s) => {
                assert_eq!(s.len() as u64, index.size(), "tier {n} size");
                Scores::Owned(s)
            }
            None => Scores::Memory(Arc::from(Vec::new())),
        };
        self.tiers[usize::from(n)] = (index, held);
    }

    /// Releases the pages of the memory-mapped tiers from the process's resident set: they
    /// are read again from their side copies, unchanged, on the next access. For a tier solved
    /// without them (in slices) while they are kept for a later one.
    pub(crate) fn release_pages(&self) {
        for (_, s) in &self.tiers {
            s.release_pages();
        }
    }

    /// Adds absent tiers up to `len` tiers.
    pub(crate) fn pad(&mut self, len: u8) {
        while self.tiers.len() < usize::from(len) {
            self.push_absent();
        }
    }

    /// Whether tier `n` is held with its scores.
    pub(crate) fn holds(&self, n: u8) -> bool {
        self.tiers
            .get(usize::from(n))
            .is_some_and(|(_, s)| !s.as_slice().is_empty())
    }

    /// Number of tiers held (they are tiers `0..len()`).
    pub fn len(&self) -> usize {
        self.tiers.len()
    }

    /// Whether no tier is held.
    pub fn is_empty(&self) -> bool {
        self.tiers.is_empty()
    }

    /// Bytes held in the process's memory (memory-mapped tiers not counted).
    pub fn bytes(&self) -> u64 {
        self.tiers
            .iter()
            .map(|(_, s)| match s {
                Scores::Memory(m) => m.len() as u64,
                Scores::Owned(m) => m.len() as u64,
                Scores::Mapped(_) => 0,
            })
            .sum()
    }

    /// The scores of tier `n`.
    ///
    /// # Panics
    /// If tier `n` is not held.
    pub fn tier(&self, n: u8) -> &[i8] {
        self.tiers[n as usize].1.as_slice()
    }

    /// The score at index `rank` of tier `tier`: see [`LowerTiers::entry`].
    #[inline]
    pub fn at(&self, tier: u8, rank: u64) -> i8 {
        self.tiers[tier as usize].1.as_slice()[rank as usize]
    }

    /// The place of a reachable position of a held tier: `(tier, rank)`, and a reference to
    /// its score (for a prefetch).
    #[inline]
    pub fn entry(&self, p: &Position) -> (u8, u64, &i8) {
        let tier = p.seeds();
        let (index, scores) = &self.tiers[tier as usize];
        let rank = index.rank_unchecked(p);
        (tier, rank, &scores.as_slice()[rank as usize])
    }

    /// [`LowerTiers::entry`] for the child of a move from `house`, ranked by `ranker` (which
    /// keeps half of the rank of the children of positions visited in index order).
    #[inline(always)]
    pub(crate) fn entry_ranked(
        &self,
        p: &Position,
        ranker: &mut ChildRanker,
        house: u8,
    ) -> (u8, u64, &i8) {
        let tier = p.seeds();
        let rank = ranker.rank(p, house);
        (
            tier,
            rank,
            &self.tiers[tier as usize].1.as_slice()[rank as usize],
        )
    }

    /// [`LowerTiers::entry`]'s reference to the score, ranked with
    /// [`rank_of_child`]: for a position just stored to memory, such as a move's child.
    #[inline]
    pub fn entry_of_child(&self, p: &Position) -> &i8 {
        let (index, scores) = &self.tiers[p.seeds() as usize];
        &scores.as_slice()[rank_of_child(index, p) as usize]
    }

    /// The score of a reachable position of a held tier.
    ///
    /// # Panics
    /// If the position's tier is not held.
    #[inline]
    pub fn score(&self, p: &Position) -> i8 {
        let (index, scores) = &self.tiers[p.seeds() as usize];
        scores.as_slice()[index.rank_unchecked(p) as usize]
    }
}
