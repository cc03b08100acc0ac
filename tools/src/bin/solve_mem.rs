//! Solves tiers 0..=N in memory and prints the time and rate of each (a quick profile aid;
//! `scripts/bench` measures through `oware generate`).
//!
//! `cargo run --release -p oware-tools --bin solve_mem -- [N] [RULES] [distances]`
//! (defaults: 15, abapa, scores only; `distances` decides the levels in rounds, with the
//! distances to conversion)
use std::sync::Arc;
use std::time::Instant;

use oware_db::Rules;
use oware_solver::tier::{solve_tier_tuned, LowerTiers, Tuning};
use oware_solver::NoProgress;

fn main() {
    let mut args = std::env::args().skip(1);
    let max: u8 = args.next().and_then(|s| s.parse().ok()).unwrap_or(15);
    let rules: Rules = args
        .next()
        .map(|s| s.parse().expect("rules"))
        .unwrap_or_default();
    let tuning = Tuning {
        distances: args.next().is_some_and(|a| a == "distances"),
        ..Tuning::default()
    };
    let mut lower = LowerTiers::new();
    let t0 = Instant::now();
    for n in 0..=max {
        let t = Instant::now();
        let (scores, stats) =
            solve_tier_tuned(&rules, n, &lower, &NoProgress, tuning).expect("tier allocates");
        let dt = t.elapsed().as_secs_f64();
        println!(
            "tier {n:2}: {:>12} positions {:8.3} s {:8.2} M/s (init {:.3} scan {:.3} sweep {:.3}) sweeps {} rounds {} endless {}",
            stats.positions,
            dt,
            stats.positions as f64 / dt / 1e6,
            stats.init_seconds,
            stats.scan_seconds,
            stats.sweep_seconds,
            stats.sweeps,
            stats.distance_rounds,
            stats.endless
        );
        lower.push(Arc::from(scores.to_vec()));
    }
    println!("total {:.3} s", t0.elapsed().as_secs_f64());
}
