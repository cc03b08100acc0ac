//! `generate_with` over simulated ranks writes the same tables as a single process, and
//! resumes per tier like it.

use std::path::Path;

use oware_db::Rules;
use oware_solver::distributed::ThreadComm;
use oware_solver::{
    generate, generate_with, GenerateObserver, GenerateOptions, Phase, Progress, TierReport,
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
        memory_limit: None,
        compression: Default::default(),
        slice_bytes: None,
    }
}

fn tables(dir: &Path, max: u8) -> Vec<Vec<u8>> {
    (0..=max)
        .map(|n| std::fs::read(dir.join(format!("tier-{n:02}.owt"))).unwrap())
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
    let max = 10;
    for rules in ["abapa", "awari"] {
        let tmp = tempfile::tempdir().unwrap();
        let single = tmp.path().join("single");
        generate(&options(&single, rules, max), &Silent).unwrap();
        let expected = tables(&single, max);
        for ranks in [2, 3] {
            let dir = tmp.path().join(format!("ranks{ranks}"));
            let opts = options(&dir, rules, max);
            let results = ThreadComm::run(ranks, |c| generate_with(c, &opts, &Silent).is_ok());
            assert!(results.iter().all(|&ok| ok));
            assert!(tables(&dir, max) == expected, "{rules}, {ranks} ranks");
            assert!(!dir.join(oware_solver::SCRATCH_DIR).exists());
            // Resume: a lost tier is solved again, the others are kept.
            std::fs::remove_file(dir.join("tier-07.owt")).unwrap();
            let reports = ThreadComm::run(ranks, |c| generate_with(c, &opts, &Silent).unwrap());
            assert!(
                reports.iter().all(|r| solved(r) == 1),
                "{rules}, {ranks} ranks"
            );
            assert!(
                tables(&dir, max) == expected,
                "{rules}, {ranks} ranks, resumed"
            );
        }
    }
}
