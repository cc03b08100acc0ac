//! A neighbour's score as context: the position with one seed moved from a house to the next
//! or the previous one, as image coders use the pixel above besides the one to the left. A
//! block decoder knows only the scores of smaller indices, so a neighbour counts only where
//! its index is smaller ("causal"), unless every neighbour is asked for, to show how much the
//! neighbours know at all.

use oware_db::index::{IndexKind, TierIndex};
use oware_db::Position;

use super::bits;

/// The order-1 entropy and that with each neighbour as a further context.
#[derive(Clone, Debug)]
pub struct Neighbours {
    /// Knowing the previous score only (the tables' model), in bits per position.
    pub order1: f64,
    /// For each neighbour, a seed moved from house `a` to house `b`.
    pub moves: Vec<Neighbour>,
}

/// The entropy knowing the previous score and one neighbour's.
#[derive(Clone, Debug)]
pub struct Neighbour {
    /// The house a seed leaves.
    pub from: usize,
    /// The house it goes to, next to `from` (11 and 0 too, around the board).
    pub to: usize,
    /// Bits per position.
    pub bits: f64,
    /// The share of positions whose neighbour is known (exists, and is causal if asked).
    pub known: f64,
}

/// Measures `scores`, those of tier `n` in reachable-index order; every neighbour if `any`,
/// else only those of smaller index.
///
/// # Panics
/// If `scores` is not as long as the reachable index of tier `n`.
pub fn measure(n: u8, scores: &[i8], any: bool) -> Neighbours {
    let index = TierIndex::new(n, IndexKind::Reachable);
    assert_eq!(scores.len() as u64, index.size(), "scores of tier {n}");
    // Symbols: score + n, and `none` for a missing neighbour or previous score.
    let width = 2 * n as usize + 2;
    let none = width - 1;
    let symbol = |x: i8| (i32::from(x) + i32::from(n)) as usize;
    let moves: Vec<(usize, usize)> = (0..12)
        .flat_map(|a| [(a, (a + 1) % 12), (a, (a + 11) % 12)])
        .collect();
    // counts[m][(previous * width + neighbour) * width + score]
    let mut counts = vec![vec![0u64; width * width * width]; moves.len()];
    let mut found = vec![0u64; moves.len()];
    let mut order1 = vec![0u64; width * width];
    let mut previous = none;
    for (i, (p, &x)) in index.cursor(0, scores.len() as u64).zip(scores).enumerate() {
        let houses = p.houses();
        let s = symbol(x);
        order1[previous * width + s] += 1;
        for (m, &(a, b)) in moves.iter().enumerate() {
            let mut neighbour = none;
            if houses[a] > 0 {
                let mut q = houses;
                q[a] -= 1;
                q[b] += 1;
                let j = Position::new(q).ok().and_then(|q| index.rank(&q));
                if let Some(j) = j.filter(|&j| any || (j as usize) < i) {
                    neighbour = symbol(scores[j as usize]);
                    found[m] += 1;
                }
            }
            counts[m][(previous * width + neighbour) * width + s] += 1;
        }
        previous = s;
    }
    let total = scores.len().max(1) as f64;
    // Conditional entropy in bits per position of counts laid out as rows of `width`.
    let conditional = |c: &[u64]| -> f64 { c.chunks(width).map(bits).sum::<f64>() / total };
    Neighbours {
        order1: conditional(&order1),
        moves: moves
            .iter()
            .zip(counts.iter().zip(&found))
            .map(|(&(from, to), (c, &k))| Neighbour {
                from,
                to,
                bits: conditional(c),
                known: k as f64 / total,
            })
            .collect(),
    }
}
