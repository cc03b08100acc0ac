//! `generate` over simulated ranks writes the same tables as a single process, score and
//! distance tables, each rank holding only its share of every tier, and resumes per tier
//! like it; a rank that fails stops every rank with an error.

use std::path::Path;

use oware_db::Rules;
use oware_solver::distributed::{Comm, LocalComm, ThreadComm};
use oware_solver::memory::PROCESS_BYTES;
use oware_solver::{
    generate, GenerateError, GenerateObserver, GenerateOptions, Phase, Progress, RankError,
    TierReport,
};

struct Silent;

impl Progress for Silent {
    fn start(&self, _: Phase, _: u64) {}
    fn advance(&self, _: u64) {}
}

impl GenerateObserver for Silent {
    fn tier_start(&self, _: u8, _: u64, _: bool) {}
    fn tier_done(&self, _: &TierReport) {}
}

fn options(dir: &Path, rules: &str, max: u8) -> GenerateOptions {
    GenerateOptions {
        dir: dir.to_path_buf(),
        rules: rules.parse::<Rules>().unwrap(),
        max_seeds: max,
        ..GenerateOptions::default()
    }
}

/// Every tier's score table and distance table.
fn tables(dir: &Path, max: u8) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..=max)
        .map(|n| {
            let read = |ext: &str| std::fs::read(dir.join(format!("tier-{n:02}.{ext}"))).unwrap();
            (read("owt"), read("owd"))
        })
        .collect()
}

fn solved(reports: &[TierReport]) -> usize {
    reports
        .iter()
        .filter(|r| matches!(r, TierReport::Solved { .. }))
        .count()
}

#[test]
fn ranks_write_the_tables_of_one_process_and_resume() {
    let max = 12;
    for rules in ["abapa", "awari"] {
        let tmp = tempfile::tempdir().unwrap();
        let single = tmp.path().join("single");
        generate(&LocalComm, &options(&single, rules, max), &Silent).unwrap();
        let expected = tables(&single, max);
        // Small exchanges on some: updates and look-ups in many bounded sub-rounds.
        for (ranks, batch) in [
            (1, None),
            (2, Some(64)),
            (3, None),
            (4, Some(1000)),
            (5, Some(64)),
        ] {
            let top = if batch == Some(64) { 10 } else { max };
            let dir = tmp.path().join(format!("ranks{ranks}"));
            let opts = GenerateOptions {
                exchange_batch: batch,
                ..options(&dir, rules, top)
            };
            let results =
                ThreadComm::run(ranks, |c| generate(c, &opts, &Silent).map(|r| solved(&r)));
            for (r, res) in results.iter().enumerate() {
                assert_eq!(
                    res.as_ref().ok(),
                    Some(&(top as usize + 1)),
                    "{rules}, {ranks} ranks, rank {r}"
                );
            }
            assert!(
                tables(&dir, top) == expected[..=top as usize],
                "{rules}, {ranks} ranks"
            );
            assert!(!dir.join(oware_solver::dir::SCRATCH_DIR).exists());
            // Resume: a lost tier and a damaged one are solved again, the others are kept
            // (and read back by every rank for its share).
            std::fs::remove_file(dir.join("tier-07.owt")).unwrap();
            let nine = dir.join("tier-09.owt");
            let mut bytes = std::fs::read(&nine).unwrap();
            let mid = bytes.len() / 2;
            bytes[mid] ^= 0x40;
            std::fs::write(&nine, bytes).unwrap();
            let reports = ThreadComm::run(ranks, |c| generate(c, &opts, &Silent).unwrap());
            assert!(
                reports.iter().all(|r| solved(r) == 2),
                "{rules}, {ranks} ranks"
            );
            assert!(
                tables(&dir, top) == expected[..=top as usize],
                "{rules}, {ranks} ranks, resumed"
            );
        }
    }
}

#[test]
fn a_failing_rank_stops_every_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    generate(&LocalComm, &options(&dir, "abapa", 4), &Silent).unwrap();
    // Rank 1 is asked for other rules: it alone finds the directory's tables wrong.
    let abapa = options(&dir, "abapa", 8);
    let awari = options(&dir, "awari", 8);
    let results = ThreadComm::run(3, |c| {
        let opts = if c.rank() == 1 { &awari } else { &abapa };
        generate(c, opts, &Silent).map(|_| ())
    });
    assert!(
        matches!(results[1], Err(GenerateError::RulesMismatch { .. })),
        "{:?}",
        results[1]
    );
    for r in [0, 2] {
        assert!(
            matches!(
                results[r],
                Err(GenerateError::Rank(RankError::Failed { rank: 1 }))
            ),
            "rank {r}: {:?}",
            results[r]
        );
    }
    // Nothing was written past tier 4.
    assert!(!dir.join("tier-05.owt").exists());
}

#[test]
fn a_share_too_large_is_refused_with_the_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let opts = GenerateOptions {
        memory_limit: Some(PROCESS_BYTES + (3 << 20)),
        ..options(&dir, "abapa", 14)
    };
    let results = ThreadComm::run(2, |c| generate(c, &opts, &Silent).map(|_| ()));
    for (r, res) in results.iter().enumerate() {
        match res {
            Err(GenerateError::Rank(
                e @ RankError::TooLarge {
                    job: "generation",
                    rank,
                    ranks: 2,
                    ..
                },
            )) => {
                assert_eq!(*rank, r);
                let msg = e.to_string();
                assert!(
                    msg.starts_with("generation of tier ")
                        && msg.contains(&format!("on rank {r} of 2"))
                        && msg.contains("share of the lower tiers"),
                    "{msg}"
                );
            }
            other => panic!("rank {r}: {other:?}"),
        }
    }
    // The tiers that fitted were written and recorded, the first that did not was not.
    assert!(dir.join("tier-00.owt").exists());
    assert!(!dir.join("tier-14.owt").exists());
}
