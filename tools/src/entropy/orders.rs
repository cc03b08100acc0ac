//! Other orders of the positions: does ranking the board with its houses permuted make the
//! scores easier to predict from the previous one? Each order is the dense index of the
//! permuted board, skipping unreachable positions.

use oware_db::index::{IndexKind, TierIndex};
use oware_db::Position;

use super::bits;

/// A permutation of the houses: `order[k]` is the house of the position that becomes house
/// `k` of the ranked board, so house `order[11]` varies fastest and house `order[0]` slowest.
pub type Order = [usize; 12];

/// The orders measured, the stored one first.
pub const ORDERS: [(&str, Order); 6] = [
    ("houses in order", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
    ("each side reversed", [5, 4, 3, 2, 1, 0, 11, 10, 9, 8, 7, 6]),
    (
        "opponent side first",
        [6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5],
    ),
    (
        "opponent side first, reversed",
        [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    ),
    ("sides interleaved", [0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11]),
    (
        "sides interleaved from the middle",
        [5, 6, 4, 7, 3, 8, 2, 9, 1, 10, 0, 11],
    ),
];

/// Order-1 entropy of a sequence of scores, in bits per score: each coded knowing the previous
/// one (score 0 before the first).
pub fn order1(seq: impl Iterator<Item = i8>) -> f64 {
    let mut counts = vec![0u64; 256 * 256];
    let mut prev = 0u8;
    let mut len = 0u64;
    for x in seq {
        counts[usize::from(prev) << 8 | usize::from(x as u8)] += 1;
        prev = x as u8;
        len += 1;
    }
    counts.chunks(256).map(bits).sum::<f64>() / len.max(1) as f64
}

/// The scores of tier `n` in reachable-index order, ranked in another order of the houses.
pub struct Reorder<'a> {
    scores: &'a [i8],
    reachable: TierIndex,
    dense: TierIndex,
}

impl<'a> Reorder<'a> {
    /// For `scores`, those of tier `n` in reachable-index order.
    ///
    /// # Panics
    /// If `scores` is not as long as the reachable index of tier `n`.
    pub fn new(n: u8, scores: &'a [i8]) -> Self {
        let reachable = TierIndex::new(n, IndexKind::Reachable);
        assert_eq!(scores.len() as u64, reachable.size(), "scores of tier {n}");
        Reorder {
            scores,
            reachable,
            dense: TierIndex::new(n, IndexKind::Dense),
        }
    }

    /// The order-1 entropy of the scores in `order`, in bits per position.
    pub fn entropy(&self, order: &Order) -> f64 {
        order1(self.dense.positions().filter_map(|q| {
            let h = q.houses();
            let mut p = [0u8; 12];
            for (k, &house) in order.iter().enumerate() {
                p[house] = h[k];
            }
            let p = Position::from_houses_unchecked(p);
            self.reachable.rank(&p).map(|r| self.scores[r as usize])
        }))
    }

    /// A greedy search for a better order: from the houses in order, swaps two houses while
    /// that lowers the entropy, calling `improved` with each better order found. Returns the
    /// best order and its entropy. Slow: one pass over the tier per swap tried.
    pub fn search(&self, mut improved: impl FnMut(&Order, f64)) -> (Order, f64) {
        let (mut best, mut bits) = (ORDERS[0].1, self.entropy(&ORDERS[0].1));
        loop {
            let mut better = false;
            for a in 0..12 {
                for b in a + 1..12 {
                    let mut order = best;
                    order.swap(a, b);
                    let e = self.entropy(&order);
                    if e < bits - 1e-4 {
                        (best, bits, better) = (order, e, true);
                        improved(&best, bits);
                    }
                }
            }
            if !better {
                return (best, bits);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_houses_in_order_are_the_stored_order() {
        let n = 6;
        let size = TierIndex::new(n, IndexKind::Reachable).size();
        let scores: Vec<i8> = (0..size).map(|i| (i * 7 % 13) as i8 - 6).collect();
        let stored = order1(scores.iter().copied());
        let r = Reorder::new(n, &scores);
        assert_eq!(r.entropy(&ORDERS[0].1), stored);
        assert_ne!(r.entropy(&ORDERS[1].1), stored);
    }
}
