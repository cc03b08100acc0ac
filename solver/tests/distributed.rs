//! The partitioned solver on 1–4 simulated ranks (threads) gives byte-identical tiers to
//! the single-process solver, under both presets, for tiers 0..=12, with unequal index
//! ranges and with exchanges split into many bounded sub-rounds (and then with every negative
//! exit kept in the lists of low exits).

mod common;

use std::sync::Arc;

use oware_db::Rules;
use oware_solver::distributed::{
    all_gather_scores, gather_scores, solve_tier_local, solve_tier_partitioned, Comm, LocalComm,
    LowerShare, PartitionConfig, ThreadComm,
};
use oware_solver::tier::LowerTiers;
use oware_solver::NoProgress;

const MAX: u8 = 12;

/// Every tier `0..=max` solved on the ranks of `comm`, each rank building its lower tiers
/// from all-gathered scores; returns rank 0's gathered tiers (empty on other ranks).
fn partitioned(comm: &dyn Comm, rules: &Rules, max: u8, config: &PartitionConfig) -> Vec<Vec<i8>> {
    let mut lower = LowerTiers::new();
    let mut out = Vec::new();
    for n in 0..=max {
        let (local, stats) =
            solve_tier_local(comm, rules, n, &lower, &NoProgress, config).expect("tier allocates");
        assert_eq!(stats.positions, local.scores.len() as u64);
        assert_eq!(stats.finite + stats.endless, stats.positions);
        if let Some(all) = gather_scores(comm, n, &local) {
            out.push(all);
        }
        let all = all_gather_scores(comm, n, &local);
        lower.push(Arc::from(all));
    }
    out
}

/// As [`partitioned`], but each rank keeps only its share of every solved tier: the
/// captures are looked up from their owners. Returns rank 0's gathered tiers and the
/// look-ups this rank sent to others.
fn shared(
    comm: &dyn Comm,
    rules: &Rules,
    max: u8,
    config: &PartitionConfig,
) -> (Vec<Vec<i8>>, u64) {
    let mut share = LowerShare::new(comm.rank(), comm.size());
    let mut out = Vec::new();
    let mut remote = 0;
    for n in 0..=max {
        let (local, stats) =
            solve_tier_local(comm, rules, n, &share, &NoProgress, config).expect("tier allocates");
        assert_eq!(stats.finite + stats.endless, stats.positions);
        remote += stats.lookups_remote;
        if let Some(all) = gather_scores(comm, n, &local) {
            out.push(all);
        }
        share.insert(n, local).expect("this rank's range");
        assert!(
            share.bytes()
                <= (0..=n)
                    .map(|t| share.partition(t).range(comm.rank()).count() as u64)
                    .sum()
        );
    }
    (out, remote)
}

#[test]
fn shared_lower_tiers_match_single_process() {
    for rules in [Rules::ABAPA, Rules::AWARI] {
        let reference = common::solve_all(&rules, MAX);
        for (ranks, batch) in [(1, 1 << 22), (2, 64), (3, 1 << 22), (4, 1000), (5, 64)] {
            let max = if batch < 1000 { 10 } else { MAX };
            let config = PartitionConfig {
                batch,
                ..PartitionConfig::default()
            };
            let results = ThreadComm::run(ranks, |comm| shared(comm, &rules, max, &config));
            let got = &results[0].0;
            for (n, (g, want)) in got.iter().zip(&reference).enumerate() {
                assert!(
                    g == want,
                    "{rules}, {ranks} ranks, batch {batch}: tier {n} differs"
                );
            }
            assert_eq!(got.len(), max as usize + 1);
            // Over several ranks, captures are asked of other ranks.
            let asked: u64 = results.iter().map(|r| r.1).sum();
            assert_eq!(asked > 0, ranks > 1, "{rules}, {ranks} ranks");
        }
    }
}

fn check(rules: &Rules, reference: &[Vec<i8>], ranks: usize, config: PartitionConfig) {
    let max = reference.len() as u8 - 1;
    let t = std::time::Instant::now();
    let results = ThreadComm::run(ranks, |comm| partitioned(comm, rules, max, &config));
    for (r, got) in results.iter().enumerate().skip(1) {
        assert!(got.is_empty(), "rank {r} got gathered tiers");
    }
    eprintln!(
        "{rules}, {ranks} ranks, batch {}: {:.2?}",
        config.batch,
        t.elapsed()
    );
    let got = &results[0];
    assert_eq!(got.len(), reference.len());
    for (n, (g, want)) in got.iter().zip(reference).enumerate() {
        let first = g.iter().zip(want).position(|(a, b)| a != b);
        assert!(
            g.len() == want.len() && first.is_none(),
            "{rules}, {ranks} ranks, batch {}: tier {n} differs (len {} vs {}, first index {first:?})",
            config.batch,
            g.len(),
            want.len()
        );
    }
}

#[test]
fn simulated_ranks_match_single_process() {
    for rules in [Rules::ABAPA, Rules::AWARI] {
        let reference = common::solve_all(&rules, MAX);
        for ranks in 1..=4 {
            check(&rules, &reference, ranks, PartitionConfig::default());
        }
        // Small batches: several rounds and sub-rounds per level; every negative exit in
        // the lists of low exits.
        let config = PartitionConfig {
            batch: 50,
            exact_exits: 0,
            ..PartitionConfig::default()
        };
        check(&rules, &reference[..=9], 3, config);
    }
}

#[test]
fn local_comm_matches_single_process() {
    let rules: Rules = "abapa+grand-slam=capture-all+capture=1,2"
        .parse()
        .expect("valid rules");
    let reference = common::solve_all(&rules, 10);
    let mut lower = LowerTiers::new();
    for (n, want) in reference.iter().enumerate() {
        let got = solve_tier_partitioned(&LocalComm, &rules, n as u8, &lower, &NoProgress)
            .expect("tier allocates")
            .expect("rank 0 gets the tier");
        assert!(&got == want, "tier {n} differs");
        lower.push(Arc::from(got));
    }
}

#[test]
fn more_ranks_than_positions() {
    // Tier 0 has one position and tier 1 twelve: most of 5 ranks own nothing or little.
    let reference = common::solve_all(&Rules::ABAPA, 3);
    let results = ThreadComm::run(5, |comm| {
        partitioned(comm, &Rules::ABAPA, 3, &PartitionConfig::default())
    });
    assert!(results[0] == reference);
}

#[test]
fn far_exit_lists_that_outgrow_a_ranks_room_stop_every_rank() {
    // Every negative exit listed: tier 10 lists tens of thousands over the ranks.
    let rules = Rules::ABAPA;
    let n = 10;
    let reference = common::solve_all(&rules, n);
    let mut lower = LowerTiers::new();
    for t in &reference[..n as usize] {
        lower.push(Arc::from(t.clone()));
    }
    let ranks = 3;
    let listing = PartitionConfig {
        exact_exits: 0,
        ..PartitionConfig::default()
    };
    // Whole lower tiers on every rank, or each rank's share of them (captures asked of
    // their owners, in a collective pass that must go on to its end).
    for shared in [false, true] {
        let run = |config: &PartitionConfig| {
            ThreadComm::run(ranks, |c| {
                let result = if shared {
                    let share = LowerShare::from_whole(&lower, c.rank(), c.size());
                    solve_tier_local(c, &rules, n, &share, &NoProgress, config)
                } else {
                    solve_tier_local(c, &rules, n, &lower, &NoProgress, config)
                };
                result
                    .map(|(local, stats)| {
                        let all = gather_scores(c, n, &local);
                        (all, stats.far_exits, stats.far_exit_bytes)
                    })
                    .map_err(|e| e.to_string())
            })
        };
        let free = run(&listing);
        let ok = |r: &Result<(Option<Vec<i8>>, u64, u64), String>| r.clone().expect("fits");
        assert!(
            ok(&free[0]).0.unwrap() == reference[n as usize],
            "shared {shared}"
        );
        let bytes: Vec<u64> = free.iter().map(|r| ok(r).2).collect();
        assert!(
            free.iter().all(|r| ok(r).1 > 1_000),
            "shared {shared}: {bytes:?}"
        );
        let most = *bytes.iter().max().unwrap();
        assert!(
            bytes.iter().any(|&b| b < most),
            "shared {shared}: {bytes:?}"
        );

        // Room for the largest lists: the same scores.
        let fits = run(&PartitionConfig {
            far_exit_room: most,
            ..listing
        });
        assert!(
            ok(&fits[0]).0.unwrap() == reference[n as usize],
            "shared {shared}"
        );

        // One byte less: every rank stops, the rank(s) over it with their own figures, the
        // others naming the first of them.
        let worst = bytes.iter().position(|&b| b == most).unwrap();
        let over = run(&PartitionConfig {
            far_exit_room: most - 1,
            ..listing
        });
        for (r, result) in over.iter().enumerate() {
            let Err(m) = result else {
                panic!("shared {shared}, rank {r}: solved the tier; every rank must stop")
            };
            assert!(!m.contains('\n'), "{m}");
            if bytes[r] == most {
                assert!(
                    m.starts_with("tier 10: cannot allocate the far-exit lists")
                        && m.contains(&format!("the {} bytes", most - 1)),
                    "shared {shared}, rank {r}: {m}"
                );
            } else {
                assert!(
                    m.starts_with("tier 10: cannot allocate the far-exit lists")
                        && m.contains(&format!("rank {worst}'s lists took {most} bytes")),
                    "shared {shared}, rank {r}: {m}"
                );
            }
        }
    }
}
