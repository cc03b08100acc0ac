//! The solver agrees with an independent brute force on every position of tiers 0..=10,
//! under both presets and every grand-slam option, and every tier satisfies the recurrence.

mod common;

use std::sync::Arc;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::Rules;
use oware_solver::tier::{solve_tier_tuned, LowerTiers, Tuning};
use oware_solver::NoProgress;

#[test]
fn solver_matches_brute_force_up_to_tier_10() {
    let max = 10;
    for rules in common::test_rules() {
        let brute = common::brute_all(&rules, max);
        let solved = common::solve_all(&rules, max);
        for n in 0..=max {
            let idx = TierIndex::new(n, IndexKind::Reachable);
            let diffs: Vec<String> = (0..idx.size() as usize)
                .filter(|&i| brute[n as usize][i] != solved[n as usize][i])
                .take(5)
                .map(|i| {
                    format!(
                        "{}: brute {} solver {}",
                        idx.unrank(i as u64),
                        brute[n as usize][i],
                        solved[n as usize][i]
                    )
                })
                .collect();
            assert!(diffs.is_empty(), "{rules} tier {n}: {diffs:?}");
            let refs: Vec<&[i8]> = solved.iter().map(|v| v.as_slice()).collect();
            let bad = common::check_tier(&rules, &refs[..=n as usize], n);
            assert!(bad.is_empty(), "{rules} tier {n}: {bad:?}");
        }
    }
}

#[test]
fn scores_do_not_depend_on_thread_count() {
    let rules = Rules::ABAPA;
    let reference = common::solve_all(&rules, 12);
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let got = pool.install(|| common::solve_all(&rules, 12));
        assert!(got == reference, "{threads} threads differ");
    }
}

/// With work stacks of 3 positions and a budget of 5 per task, most of the propagation
/// overflows into frontier sweeps: the scores are still those of the brute force. Limits of 0
/// are taken as 1 (one position per task and sweep) and give the same scores too.
#[test]
fn overflowing_work_stacks_give_the_same_scores() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let cases = [
        (
            Tuning {
                stack: 3,
                budget: 5,
                exact_exits: 0,
                ..Tuning::default()
            },
            10,
        ),
        (
            Tuning {
                stack: 0,
                budget: 0,
                exact_exits: 1,
                ..Tuning::default()
            },
            8,
        ),
    ];
    for rules in [Rules::ABAPA, Rules::AWARI] {
        let brute = common::brute_all(&rules, 10);
        for (tuning, max) in cases {
            let mut lower = LowerTiers::new();
            for n in 0..=max {
                let (scores, stats) = pool
                    .install(|| solve_tier_tuned(&rules, n, &lower, &NoProgress, tuning))
                    .expect("tier allocates");
                assert!(
                    scores.as_slice() == brute[n as usize].as_slice(),
                    "{rules} tier {n}, {tuning:?}"
                );
                // One empty sweep ends each level; more means overflow was swept.
                if n >= 4 {
                    assert!(stats.sweeps > u64::from(n), "{rules} tier {n}: {stats:?}");
                }
                lower.push(Arc::from(scores.to_vec()));
            }
        }
    }
}
