//! Solves tiers 0..=N in memory, verifies each with `verify_tier` right after solving it, and
//! prints the rate of both (the speed bar of `verify --deep`: at least half the rate of
//! generation).
//!
//! `cargo run --release -p oware-tools --bin verify_mem -- [N] [RULES]` (defaults: 15, abapa)
use std::sync::Arc;
use std::time::Instant;

use oware_db::Rules;
use oware_solver::tier::{solve_tier, verify_tier, LowerTiers};
use oware_solver::NoProgress;

fn main() {
    let mut args = std::env::args().skip(1);
    let max: u8 = args.next().and_then(|s| s.parse().ok()).unwrap_or(15);
    let rules: Rules = args
        .next()
        .map(|s| s.parse().expect("rules"))
        .unwrap_or_default();
    let mut lower = LowerTiers::new();
    let (mut solve_total, mut verify_total, mut positions) = (0.0, 0.0, 0u64);
    for n in 0..=max {
        let t = Instant::now();
        let (scores, stats) = solve_tier(&rules, n, &lower, &NoProgress).expect("tier allocates");
        let solve = t.elapsed().as_secs_f64();
        let report =
            verify_tier(&rules, n, scores.as_slice(), &lower, &NoProgress).expect("tier allocates");
        let verify = report.seconds;
        println!(
            "tier {n:2}: {:>11} positions  solve {:7.3} s {:7.2} M/s  verify {:7.3} s {:7.2} M/s  ratio {:.2}  mismatches {}",
            stats.positions,
            solve,
            stats.positions as f64 / solve / 1e6,
            verify,
            stats.positions as f64 / verify / 1e6,
            solve / verify,
            report.mismatches
        );
        assert!(report.is_ok(), "{:?}", report.first);
        solve_total += solve;
        verify_total += verify;
        positions += stats.positions;
        lower.push(Arc::from(scores.to_vec()));
    }
    println!(
        "total: {positions} positions  solve {solve_total:.3} s {:.2} M/s  verify {verify_total:.3} s {:.2} M/s  verify/solve speed {:.2}",
        positions as f64 / solve_total / 1e6,
        positions as f64 / verify_total / 1e6,
        solve_total / verify_total
    );
}
