//! Propagation in rounds ([`Rounds`]) gives tables byte-identical to depth-first
//! propagation for tiers 0..=16 under both presets, with small blocks and caps so that
//! every level takes many rounds.

mod common;

use std::sync::Arc;

use oware_db::Rules;
use oware_solver::{solve_tier_tuned, LowerTiers, NoProgress, Rounds, Tuning};

#[test]
fn rounds_match_depth_first_up_to_tier_16() {
    let max = 16;
    for rules in [Rules::ABAPA, Rules::AWARI] {
        let reference = common::solve_all(&rules, max);
        let tuning = Tuning {
            rounds: Some(Rounds {
                block_bits: 12,
                updates: 1 << 14,
            }),
            ..Tuning::default()
        };
        let mut lower = LowerTiers::new();
        for n in 0..=max {
            let (scores, _) =
                solve_tier_tuned(&rules, n, &lower, &NoProgress, tuning).expect("tier allocates");
            assert!(
                scores.as_slice() == reference[n as usize].as_slice(),
                "{rules} tier {n}"
            );
            lower.push(Arc::from(scores.to_vec()));
        }
    }
}
