//! A map of `0..size` onto itself that shifts each of a few runs by its own offset
//! ([`RunMap`]): a [`Partition`](super::Partition)'s index to place and place to index,
//! asked for once per parent by the propagation over several ranks.
//!
//! The runs are looked up in a table of at most [`BUCKETS`] buckets: a bucket that holds at
//! most one start of a run keeps that start and the offsets either side of it, so a look-up
//! is one load and a conditional move; a bucket holding more starts (runs shorter than a
//! bucket, rare: the index's smallest blocks) is searched.

use std::sync::Arc;

/// Buckets of the table at most.
const BUCKETS: u64 = 1 << 10;

/// The mark of a bucket holding several starts of runs.
const SEVERAL: u64 = u64::MAX;

/// A bucket: below `split` the offset `below` applies, from it on `above` (offsets added
/// with wrapping); `split == SEVERAL` when the bucket is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bucket {
    split: u64,
    below: u64,
    above: u64,
}

/// A map of `0..size` that adds `offset` to every value of the run from `start` to the next
/// run's start (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RunMap {
    /// The runs, by start: (start, offset).
    runs: Arc<[(u64, u64)]>,
    /// Values per bucket: `1 << shift`.
    shift: u32,
    buckets: Arc<[Bucket]>,
}

impl RunMap {
    /// The map of `0..size` whose runs begin at the starts of `runs` (ascending, the first
    /// at 0), each adding its offset (wrapping).
    pub(crate) fn new(size: u64, runs: Vec<(u64, u64)>) -> Self {
        debug_assert!(runs.first().is_some_and(|r| r.0 == 0), "a run from 0");
        debug_assert!(runs.windows(2).all(|w| w[0].0 < w[1].0), "ascending starts");
        let shift = size
            .div_ceil(BUCKETS)
            .max(1)
            .next_power_of_two()
            .trailing_zeros();
        let mut i = 0;
        let buckets = (0..size.div_ceil(1 << shift).max(1))
            .map(|b| {
                let (lo, hi) = (b << shift, (b + 1) << shift);
                while runs.get(i + 1).is_some_and(|r| r.0 <= lo) {
                    i += 1;
                }
                let inside = runs[i + 1..].iter().take_while(|r| r.0 < hi).count();
                match inside {
                    0 => Bucket {
                        split: hi,
                        below: runs[i].1,
                        above: runs[i].1,
                    },
                    1 => Bucket {
                        split: runs[i + 1].0,
                        below: runs[i].1,
                        above: runs[i + 1].1,
                    },
                    _ => Bucket {
                        split: SEVERAL,
                        below: 0,
                        above: 0,
                    },
                }
            })
            .collect();
        RunMap {
            runs: runs.into(),
            shift,
            buckets,
        }
    }

    /// The image of `x` (`x < size`).
    #[inline(always)]
    pub(crate) fn map(&self, x: u64) -> u64 {
        let b = &self.buckets[(x >> self.shift) as usize];
        if b.split == SEVERAL {
            return self.search(x);
        }
        x.wrapping_add(if x < b.split { b.below } else { b.above })
    }

    /// [`RunMap::map`] by a search of the runs.
    #[inline(never)]
    fn search(&self, x: u64) -> u64 {
        let i = self.runs.partition_point(|r| r.0 <= x) - 1;
        x.wrapping_add(self.runs[i].1)
    }

    /// The position in the runs (by start) of the run holding `x`.
    pub(crate) fn run_of(&self, x: u64) -> usize {
        self.runs.partition_point(|r| r.0 <= x).max(1) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buckets with no start, one and several map as the runs say.
    #[test]
    fn maps_as_the_runs_say() {
        let size = 1u64 << 16;
        // Runs of lengths 3, 1, 60, then long ones: buckets of 64 values.
        let starts = [0u64, 3, 4, 64, 5000, 5001, 40_000];
        let runs: Vec<(u64, u64)> = starts
            .iter()
            .enumerate()
            .map(|(k, &s)| (s, (k as u64 * 1000).wrapping_sub(s)))
            .collect();
        let map = RunMap::new(size, runs.clone());
        for x in 0..size {
            let k = starts.partition_point(|&s| s <= x) - 1;
            assert_eq!(map.map(x), k as u64 * 1000 + (x - starts[k]), "x {x}");
            assert_eq!(map.run_of(x), k);
        }
    }
}
