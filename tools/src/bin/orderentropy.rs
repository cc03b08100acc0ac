//! Design aid for smaller tables: does another order of the positions make the scores easier
//! to predict from the previous one? Prints the order-1 entropy (the tables' model: each score
//! coded knowing the previous one) of a tier's scores in the stored order and in orders that
//! rank the board with its houses permuted (the dense index of the permuted board, skipping
//! unreachable positions). For scale, it also prints the entropy of the scores' signs alone
//! (win, draw or loss for the mover), knowing the previous one or four signs. With
//! `--search`, it then looks for a better permutation by swapping
//! two houses at a time while that lowers the entropy (slow: use a small tier). See docs/BENCHMARKS.md,
//! "Findings".
//!
//! `cargo run --release -p oware-tools --bin orderentropy -- tables 20 [--search]`
use oware_db::index::{IndexKind, TierIndex};
use oware_db::Position;

use oware_tools::entropy::{bits, dir_and_tier, read_tier};

/// Order-1 entropy of a sequence of scores, in bits per score.
fn order1(seq: impl Iterator<Item = i8>) -> f64 {
    let mut counts = vec![0u64; 256 * 256];
    let mut prev = 0u8;
    let mut len = 0u64;
    for x in seq {
        counts[usize::from(prev) << 8 | usize::from(x as u8)] += 1;
        prev = x as u8;
        len += 1;
    }
    counts.chunks(256).map(bits).sum::<f64>() / len as f64
}

/// Entropy of the signs of `scores` (three symbols), each coded knowing the previous `k`
/// signs (`k` at most 8), in bits per score.
fn signs(scores: &[i8], k: u32) -> f64 {
    let mut counts = vec![[0u64; 3]; 1 << (2 * k)];
    let mut history = 0usize;
    for &x in scores {
        let sign = (x.signum() + 1) as usize;
        counts[history][sign] += 1;
        history = (history << 2 | sign) & ((1 << (2 * k)) - 1);
    }
    counts.iter().map(|c| bits(c)).sum::<f64>() / scores.len() as f64
}

fn main() {
    let (dir, n) = dir_and_tier(
        "usage: orderentropy DIR TIER [--search] (a directory holding the table of TIER)",
    );
    let scores = read_tier(&dir, n);
    for k in [1, 4] {
        println!(
            "tier {n}, the signs alone, knowing the previous {k}: {:.3} bits per position",
            signs(&scores, k)
        );
    }
    let reachable = TierIndex::new(n, IndexKind::Reachable);
    let dense = TierIndex::new(n, IndexKind::Dense);
    println!(
        "tier {n}, stored order: {:.3} bits per position",
        order1(scores.iter().copied())
    );
    // `order[k]`: the house of the position that becomes house `k` of the ranked board, so
    // house `order[11]` varies fastest and house `order[0]` slowest.
    let orders: [(&str, [usize; 12]); 6] = [
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
    let entropy = |order: &[usize; 12]| {
        order1(dense.positions().filter_map(|q| {
            let h = q.houses();
            let mut p = [0u8; 12];
            for (k, &house) in order.iter().enumerate() {
                p[house] = h[k];
            }
            let p = Position::from_houses_unchecked(p);
            reachable.rank(&p).map(|r| scores[r as usize])
        }))
    };
    for (name, order) in &orders {
        println!(
            "tier {n}, {name:34} {:.3} bits per position",
            entropy(order)
        );
    }
    if std::env::args().nth(3).as_deref() == Some("--search") {
        let (mut best, mut bits) = (orders[0].1, entropy(&orders[0].1));
        loop {
            let mut improved = false;
            for a in 0..12 {
                for b in a + 1..12 {
                    let mut order = best;
                    order.swap(a, b);
                    let e = entropy(&order);
                    if e < bits - 1e-4 {
                        (best, bits, improved) = (order, e, true);
                        println!("tier {n}, houses {best:?}: {bits:.4} bits per position");
                    }
                }
            }
            if !improved {
                break;
            }
        }
        println!("tier {n}, best found: houses {best:?}, {bits:.4} bits per position");
    }
}
