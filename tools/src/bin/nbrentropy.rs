//! Design aid for smaller tables: the entropy of a tier's scores given the previous score
//! (the tables' model) and the score of a *neighbour* on the board, the position with one
//! seed moved from a house to the next or the previous one, as image coders use the pixel
//! above besides the one to the left. A block decoder knows only the scores of smaller
//! indices, so by default a neighbour counts only where its index is smaller ("causal");
//! `--any` takes every neighbour, to show how much the neighbours know at all. See docs/BENCHMARKS.md,
//! "Findings".
//!
//! `cargo run --release -p oware-tools --bin nbrentropy -- tables 14 [--any]`
use oware_db::index::{IndexKind, TierIndex};
use oware_db::Position;

use oware_tools::entropy::{bits, dir_and_tier, read_tier};

fn main() {
    let (dir, n) = dir_and_tier(
        "usage: nbrentropy DIR TIER [--any] (a directory of tables holding tier TIER)",
    );
    let any = std::env::args().any(|a| a == "--any");
    let scores = read_tier(&dir, n);
    let index = TierIndex::new(n, IndexKind::Reachable);
    // Symbols: score + n, and `none` for a missing neighbour or previous score.
    let width = 2 * n as usize + 2;
    let none = width - 1;
    let symbol = |x: i8| (i32::from(x) + i32::from(n)) as usize;
    // Neighbours: a seed moved from house `a` to house `b`, next to each other (11 and 0
    // too, around the board).
    let moves: Vec<(usize, usize)> = (0..12)
        .flat_map(|a| [(a, (a + 1) % 12), (a, (a + 11) % 12)])
        .collect();
    // counts[m][(previous * width + neighbour) * width + score]
    let mut counts = vec![vec![0u64; width * width * width]; moves.len()];
    let mut found = vec![0u64; moves.len()];
    let mut order1 = vec![0u64; width * width];
    let mut previous = none;
    for (i, (p, &x)) in index
        .cursor(0, scores.len() as u64)
        .zip(&scores)
        .enumerate()
    {
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
    let total = scores.len() as f64;
    // Conditional entropy in bits per position of counts laid out as rows of `width`.
    let conditional = |c: &[u64]| -> f64 { c.chunks(width).map(bits).sum::<f64>() / total };
    println!(
        "tier {n}: previous score (the tables' model): {:.3} bits per position",
        conditional(&order1)
    );
    for (m, &(a, b)) in moves.iter().enumerate() {
        println!(
            "tier {n}: previous and the neighbour with a seed moved from house {a} to {b}: {:.3} \
             bits per position (neighbour known for {:.1} %)",
            conditional(&counts[m]),
            100.0 * found[m] as f64 / total
        );
    }
}
