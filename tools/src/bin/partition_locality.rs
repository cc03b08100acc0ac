//! Design aid for the split of a tier over ranks: the share of a tier's in-tier moves whose
//! parent and child belong to different ranks under several ways of splitting the index, for
//! several numbers of ranks. Propagation sends one update along each such move (child to
//! parent) when the child is decided, so the share is that of the updates that cross ranks.
//!
//! ```text
//! cargo run --release -p oware-tools --bin partition_locality -- TIER [RULES [RANKS,..]]
//! ```
//!
//! The index orders a tier by the mover's seeds `m` first (a block per `m`), then by the
//! mover's side, then by the opponent's. A move that sows no seed onto the other side
//! leaves that side as it was, and it becomes the child's mover's side: the parent is in
//! block `m`, the child in block `n − m`. The splits compared, each a map of the index onto
//! `0..size` cut into equal ranges, one per rank:
//!
//! - `ranges`: the index itself, cut into equal ranges;
//! - `classes`: the blocks reordered `0, n, 1, n − 1, …`, each class `{m, n − m}` together;
//! - `classes, prorated`: each class's range shared by both of its blocks in proportion, so
//!   that a class cut between ranks gives each rank the same fraction of both blocks (the
//!   split of `oware_solver::distributed::Partition`, there in whole table blocks);
//! - `classes by the larger side`: within a class, positions ordered by their larger side
//!   (the one a move without sowing across keeps), then by block, then by the smaller side.

use anyhow::Context;
use oware_db::index::{binomial, IndexKind, TierIndex};
use oware_db::{Outcome, Position, Rules};
use rayon::prelude::*;

/// The splits compared (see the module documentation).
const SPLITS: [&str; 4] = [
    "ranges",
    "classes",
    "classes, prorated",
    "classes by the larger side",
];

/// Configurations of `houses` houses holding `seeds` seeds.
fn configs(houses: usize, seeds: usize) -> u64 {
    binomial(seeds + houses - 1, houses - 1)
}

/// The rank of a side among the sides of the same seeds, in lexicographic order.
fn side_rank(side: &[u8]) -> u64 {
    let mut left: usize = side.iter().map(|&h| usize::from(h)).sum();
    let mut rank = 0;
    for (i, &h) in side.iter().enumerate().take(side.len() - 1) {
        let rest = side.len() - i - 1;
        for x in 0..usize::from(h) {
            rank += configs(rest, left - x);
        }
        left -= usize::from(h);
    }
    rank
}

/// The tier's blocks and classes, and the position of each position in each split.
struct Splits {
    n: usize,
    size: u64,
    /// First index of each block (by mover's seeds), and the tier's size last.
    off: Vec<u64>,
    /// First place of each block when the blocks are ordered by class.
    voff: Vec<u64>,
    /// First place of each class `{k, n − k}`, `k ≤ n / 2`, and its positions.
    classes: Vec<(u64, u64)>,
}

impl Splits {
    fn new(index: &TierIndex) -> Self {
        let n = usize::from(index.tier());
        let size = index.size();
        let mut count = vec![0u64; n + 1];
        for p in index.positions() {
            count[usize::from(p.mover_seeds())] += 1;
        }
        let mut off = vec![0u64; n + 2];
        for m in 0..=n {
            off[m + 1] = off[m] + count[m];
        }
        let (mut voff, mut classes) = (vec![0u64; n + 1], Vec::new());
        let mut at = 0;
        for k in 0..=n / 2 {
            let blocks: &[usize] = if n - k == k { &[k] } else { &[k, n - k] };
            let first = at;
            for &m in blocks {
                voff[m] = at;
                at += count[m];
            }
            classes.push((first, at - first));
        }
        Splits {
            n,
            size,
            off,
            voff,
            classes,
        }
    }

    /// Where position `p` of index `g` falls in each split, as a fraction of the tier.
    fn places(&self, p: &Position, g: u64) -> [f64; 4] {
        let m = usize::from(p.mover_seeds());
        let k = m.min(self.n - m);
        let in_block = g - self.off[m];
        let block_len = self.off[m + 1] - self.off[m];
        let (first, len) = self.classes[k];
        let h = p.houses();
        let (mover, opponent) = h.split_at(6);
        // The larger side (the mover's on a tie), whether it is the mover's, and the other.
        let (large, is_mover, small) = if 2 * m >= self.n {
            (mover, true, opponent)
        } else {
            (opponent, false, mover)
        };
        let (large_seeds, small_seeds) = (self.n - k, k);
        let within = (side_rank(large) as f64
            + (f64::from(u8::from(is_mover))
                + side_rank(small) as f64 / configs(6, small_seeds) as f64)
                / 2.0)
            / configs(6, large_seeds) as f64;
        let size = self.size as f64;
        [
            g as f64 / size,
            (self.voff[m] + in_block) as f64 / size,
            (first as f64 + in_block as f64 / block_len as f64 * len as f64) / size,
            (first as f64 + within * len as f64) / size,
        ]
    }
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tier: u8 = args
        .first()
        .context("usage: partition_locality TIER [RULES [RANKS,..]]")?
        .parse()?;
    anyhow::ensure!(tier <= 48, "a tier is at most 48");
    let rules: Rules = args.get(1).map_or("abapa", |s| s.as_str()).parse()?;
    let ranks: Vec<u64> = args
        .get(2)
        .map_or("2,4,8,16", |s| s.as_str())
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    anyhow::ensure!(ranks.iter().all(|&r| r > 0), "ranks are positive");
    let index = TierIndex::new(tier, IndexKind::Reachable);
    let splits = Splits::new(&index);
    let owner = |place: f64, r: u64| ((place * r as f64) as u64).min(r - 1);
    const CHUNK: u64 = 1 << 16;
    let (edges, crossing) = (0..index.size().div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let start = c * CHUNK;
            let end = (start + CHUNK).min(index.size());
            let mut crossing = vec![0u64; SPLITS.len() * ranks.len()];
            let mut edges = 0u64;
            for (g, p) in (start..end).zip(index.cursor(start, end)) {
                let parent = splits.places(&p, g);
                p.for_each_move(&rules, |mv| {
                    if let Outcome::Continue { child, captured: 0 } = mv.outcome {
                        let child_at = splits.places(&child, index.rank_unchecked(&child));
                        edges += 1;
                        for s in 0..SPLITS.len() {
                            for (i, &r) in ranks.iter().enumerate() {
                                let crossed = owner(parent[s], r) != owner(child_at[s], r);
                                crossing[s * ranks.len() + i] += u64::from(crossed);
                            }
                        }
                    }
                });
            }
            (edges, crossing)
        })
        .reduce(
            || (0, vec![0; SPLITS.len() * ranks.len()]),
            |(e1, c1), (e2, c2)| (e1 + e2, c1.iter().zip(&c2).map(|(a, b)| a + b).collect()),
        );
    println!(
        "tier {tier} ({rules}): {} positions, {edges} in-tier moves ({:.2} per position)",
        index.size(),
        edges as f64 / index.size() as f64
    );
    print!("{:<28}", "moves across ranks");
    for r in &ranks {
        print!("{:>9}", format!("{r} ranks"));
    }
    println!();
    for (s, name) in SPLITS.iter().enumerate() {
        print!("{name:<28}");
        for i in 0..ranks.len() {
            let share = crossing[s * ranks.len() + i] as f64 / edges.max(1) as f64;
            print!("{:>9}", format!("{:.1} %", 100.0 * share));
        }
        println!();
    }
    Ok(())
}
