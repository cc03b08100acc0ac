//! Test support: an independent brute-force solver and invariant checks.
//!
//! The brute force shares nothing with the solver but the move generator and the index:
//! no un-moves, no counters, no levels. Per threshold `k = 1..=n` it computes, by plain
//! sweeps over the whole tier until nothing changes, the least fixpoints
//! `A_k = {p : the mover can force a score >= k}` and `B_k = {p : the opponent can hold the
//! mover to <= -k}`; then `score(p) = max{k : p in A_k}`, or `-max{k : p in B_k}`, or 0.

#![allow(
    dead_code,
    reason = "every test crate compiles this module and uses a different subset of it"
)]

use std::sync::Arc;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::{Outcome, Position, Rules};
use oware_solver::tier::{solve_tier, LowerTiers};
use oware_solver::NoProgress;

fn lookup(tiers: &[Vec<i8>], p: &Position) -> i8 {
    let idx = TierIndex::new(p.seeds(), IndexKind::Reachable);
    let r = idx.rank(p).expect("a child is always reachable");
    tiers[p.seeds() as usize][r as usize]
}

/// Scores of every tier `0..=max` by the brute force.
pub fn brute_all(rules: &Rules, max: u8) -> Vec<Vec<i8>> {
    let mut tiers: Vec<Vec<i8>> = Vec::new();
    for n in 0..=max {
        let idx = TierIndex::new(n, IndexKind::Reachable);
        let size = idx.size() as usize;
        let mut exit: Vec<Option<i8>> = vec![None; size];
        let mut kids: Vec<Vec<u32>> = vec![Vec::new(); size];
        for i in 0..size {
            let p = idx.unrank(i as u64);
            let moves = p.moves(rules);
            if moves.is_empty() {
                exit[i] = Some(p.end_score());
            }
            for m in moves.iter() {
                let v = match m.outcome {
                    Outcome::Continue { child, captured: 0 } => {
                        kids[i].push(idx.rank(&child).expect("same tier") as u32);
                        continue;
                    }
                    Outcome::Continue { child, captured } => {
                        captured as i8 - lookup(&tiers, &child)
                    }
                    Outcome::End { score } => score,
                };
                exit[i] = Some(exit[i].map_or(v, |e| e.max(v)));
            }
        }
        let mut score = vec![0i8; size];
        for k in 1..=n as i8 {
            let mut a = vec![false; size];
            let mut b = vec![false; size];
            loop {
                let mut changed = false;
                for i in 0..size {
                    if !a[i]
                        && (exit[i].is_some_and(|e| e >= k)
                            || kids[i].iter().any(|&c| b[c as usize]))
                    {
                        a[i] = true;
                        changed = true;
                    }
                    if !b[i]
                        && exit[i].is_none_or(|e| e <= -k)
                        && kids[i].iter().all(|&c| a[c as usize])
                    {
                        b[i] = true;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            for i in 0..size {
                if a[i] {
                    score[i] = k;
                } else if b[i] {
                    score[i] = -k;
                }
            }
        }
        tiers.push(score);
    }
    tiers
}

/// Checks `|score| <= n` and the recurrence at every position of tier `n`, given the scores
/// of tiers `0..=n` (`tiers[n]` is the tier checked). Returns the first failures.
pub fn check_tier(rules: &Rules, tiers: &[&[i8]], n: u8) -> Vec<String> {
    let idx = TierIndex::new(n, IndexKind::Reachable);
    let mut bad = Vec::new();
    let get = |p: &Position| {
        let t = TierIndex::new(p.seeds(), IndexKind::Reachable);
        tiers[p.seeds() as usize][t.rank(p).expect("reachable") as usize]
    };
    for i in 0..idx.size() {
        let p = idx.unrank(i);
        let s = tiers[n as usize][i as usize];
        if s.unsigned_abs() > n {
            bad.push(format!("{p}: |{s}| > {n}"));
        }
        let moves = p.moves(rules);
        let best = if moves.is_empty() {
            p.end_score()
        } else {
            moves
                .iter()
                .map(|m| m.outcome.value(get))
                .max()
                .unwrap_or(i8::MIN)
        };
        if best != s {
            bad.push(format!("{p}: stored {s}, recurrence gives {best}"));
        }
        if bad.len() >= 10 {
            break;
        }
    }
    bad
}

/// The rules values the correctness tests run under.
pub fn test_rules() -> Vec<Rules> {
    [
        "abapa",
        "awari",
        "abapa+grand-slam=illegal",
        "abapa+grand-slam=capture-all",
        "abapa+grand-slam=to-opponent",
        "abapa+grand-slam=keep-last",
        "abapa+grand-slam=keep-first",
        "abapa+capture=1,2",
        "abapa+starve=forfeit",
        "awari+grand-slam=no-capture+capture=3",
    ]
    .iter()
    .map(|s| s.parse().expect("valid rules"))
    .collect()
}

/// Scores of every tier `0..=max` by the solver (one process, current thread pool).
pub fn solve_all(rules: &Rules, max: u8) -> Vec<Vec<i8>> {
    let mut lower = LowerTiers::new();
    let mut out = Vec::new();
    for n in 0..=max {
        let (scores, _) = solve_tier(rules, n, &lower, &NoProgress).expect("tier allocates");
        let v = scores.to_vec();
        lower.push(Arc::from(v.clone()));
        out.push(v);
    }
    out
}
