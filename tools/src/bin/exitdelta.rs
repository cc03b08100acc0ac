//! Design aid for smaller tables: the entropy of a tier's scores against that of
//! `score − exit`, where `exit` is the best value over the moves that leave the tier
//! (captures and ends of the game, known from the lower tiers alone; `score >= exit`).
//! Positions without such a move keep their score. Prints the order-0 and order-1 entropies
//! in bits per position, and the order-1 entropy when the context also says whether the
//! position has an exit, and the order-1 entropy of the scores with "don't care" entries
//! (where the exit is the score, the previous stored value when it is not above it). See docs/BENCHMARKS.md, "Findings".
//!
//! `cargo run --release -p oware-tools --bin exitdelta -- tables 20`
use oware_db::index::{IndexKind, TierIndex};
use oware_db::{Outcome, Rules};

use oware_tools::entropy::{bits, dir_and_tier, read_tier};

fn main() {
    let (dir, n) = dir_and_tier(
        "usage: exitdelta DIR TIER (a directory of abapa tables holding tiers 0..=TIER)",
    );
    let rules = Rules::ABAPA;
    let load = |t: u8| read_tier(&dir, t);
    let lower: Vec<Vec<i8>> = (0..n).map(load).collect();
    let v = load(n);
    let idx: Vec<TierIndex> = (0..=n)
        .map(|t| TierIndex::new(t, IndexKind::Reachable))
        .collect();
    let sym = |x: i32| (x + 64) as usize;
    let (mut c0, mut c1, mut d0, mut d1, mut e1) = (
        vec![0u64; 128],
        vec![vec![0u64; 128]; 128],
        vec![0u64; 128],
        vec![vec![0u64; 128]; 128],
        vec![vec![vec![0u64; 128]; 128]; 2],
    );
    // "Don't care": where the exit is the score, any stored value up to the score gives the
    // score back as max(stored, exit); the previous stored value is kept when it can be.
    let mut f1 = vec![vec![0u64; 128]; 128];
    let (mut with_exit, mut exact) = (0u64, 0u64);
    let (mut pv, mut pd, mut pf) = (0i32, 0i32, 0i32);
    for (i, p) in idx[n as usize].cursor(0, v.len() as u64).enumerate() {
        let mut exit = i32::MIN;
        p.for_each_move(&rules, |m| match m.outcome {
            Outcome::Continue { captured: 0, .. } => {}
            Outcome::Continue { child, captured } => {
                let t = child.seeds();
                let r = idx[t as usize].rank(&child).expect("a child is reachable");
                exit = exit.max(captured as i32 - lower[t as usize][r as usize] as i32);
            }
            Outcome::End { score } => exit = exit.max(score as i32),
        });
        let x = v[i] as i32;
        let d = if exit == i32::MIN { x } else { x - exit };
        if exit != i32::MIN {
            with_exit += 1;
            assert!(d >= 0);
            if d == 0 {
                exact += 1;
            }
        }
        c0[sym(x)] += 1;
        c1[sym(pv)][sym(x)] += 1;
        d0[sym(d)] += 1;
        d1[sym(pd)][sym(d)] += 1;
        e1[usize::from(exit != i32::MIN)][sym(pd)][sym(d)] += 1;
        let stored = if exit == x && pf <= x { pf } else { x };
        f1[sym(pf)][sym(stored)] += 1;
        pv = x;
        pd = d;
        pf = stored;
    }
    let m = v.len() as f64;
    let h1 = |c: &Vec<Vec<u64>>| c.iter().map(|r| bits(r)).sum::<f64>() / m;
    println!(
        "tier {n}: {} positions, with exit {:.3}, exit exact {:.3}",
        v.len(),
        with_exit as f64 / m,
        exact as f64 / m
    );
    println!(
        "score: order-0 {:.3} order-1 {:.3}; delta: order-0 {:.3} order-1 {:.3}, +has-exit ctx {:.3}",
        bits(&c0) / m,
        h1(&c1),
        bits(&d0) / m,
        h1(&d1),
        (h1(&e1[0]) + h1(&e1[1]))
    );
    println!(
        "don't care where the exit is the score: order-1 {:.3}",
        h1(&f1)
    );
}
