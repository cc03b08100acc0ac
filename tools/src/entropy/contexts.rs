//! Contexts a block decoder could afford: the tables' model is order 1 (the previous score);
//! the others add the mover's seed count `m` (constant over long runs of indices, since the
//! index is grouped by it), the score before the previous one, or a feature of the board that
//! a cursor gives with each position.

use std::collections::HashMap;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::Position;

/// Counts of (context, score) pairs.
type Counts = HashMap<(u64, i8), u64>;

/// A context: its name and the key of a position given the two previous scores.
type Context = (&'static str, fn(&Position, i8, i8) -> u64);

fn byte(x: i8) -> u64 {
    u64::from(x as u8)
}

/// The contexts measured, the tables' model first.
pub const CONTEXTS: [Context; 6] = [
    ("previous (the tables' model)", |_, p1, _| byte(p1)),
    ("previous, m", |p, p1, _| {
        byte(p1) | u64::from(p.mover_seeds()) << 8
    }),
    ("previous two", |_, p1, p2| byte(p1) | byte(p2) << 8),
    ("previous, m, empty mover houses", |p, p1, _| {
        let empty = p.houses()[..6].iter().filter(|&&s| s == 0).count() as u64;
        byte(p1) | u64::from(p.mover_seeds()) << 8 | empty << 16
    }),
    ("previous, m, empty opponent houses", |p, p1, _| {
        let empty = p.houses()[6..].iter().filter(|&&s| s == 0).count() as u64;
        byte(p1) | u64::from(p.mover_seeds()) << 8 | empty << 16
    }),
    ("previous, m, opponent houses of 1 or 2", |p, p1, _| {
        let weak = p.houses()[6..]
            .iter()
            .filter(|&&s| s == 1 || s == 2)
            .count() as u64;
        byte(p1) | u64::from(p.mover_seeds()) << 8 | weak << 16
    }),
];

/// The entropy of the scores under one context.
#[derive(Clone, Debug)]
pub struct Entropy {
    /// The context's name.
    pub name: &'static str,
    /// Bits per position.
    pub bits: f64,
    /// Distinct contexts seen.
    pub contexts: usize,
}

/// The conditional entropy of the scores given their contexts, in bits per position, and the
/// number of contexts seen.
fn conditional(counts: &Counts) -> (f64, usize) {
    let mut per_context: HashMap<u64, u64> = HashMap::new();
    for (&(c, _), &k) in counts {
        *per_context.entry(c).or_default() += k;
    }
    let total: u64 = per_context.values().sum();
    let bits: f64 = counts
        .iter()
        .map(|(&(c, _), &k)| -(k as f64) * (k as f64 / per_context[&c] as f64).log2())
        .sum();
    (bits / total.max(1) as f64, per_context.len())
}

/// The entropy of `scores`, those of tier `n` in reachable-index order, under each of
/// [`CONTEXTS`], in that order.
pub fn measure(n: u8, scores: &[i8]) -> Vec<Entropy> {
    let mut counts: Vec<Counts> = vec![Counts::new(); CONTEXTS.len()];
    let (mut p1, mut p2) = (0i8, 0i8);
    let index = TierIndex::new(n, IndexKind::Reachable);
    for (p, &x) in index.cursor(0, scores.len() as u64).zip(scores) {
        for ((_, key), c) in CONTEXTS.iter().zip(&mut counts) {
            *c.entry((key(&p, p1, p2), x)).or_default() += 1;
        }
        (p2, p1) = (p1, x);
    }
    CONTEXTS
        .iter()
        .zip(&counts)
        .map(|((name, _), c)| {
            let (bits, contexts) = conditional(c);
            Entropy {
                name,
                bits,
                contexts,
            }
        })
        .collect()
}
