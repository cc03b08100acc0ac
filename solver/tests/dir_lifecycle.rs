//! The lifecycle of a table directory under `generate`: the writer's lock, the removal of a
//! dead writer's leftovers, and a failed run that leaves complete tiers only.

use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};

use oware_db::Rules;
use oware_solver::dir::{LOCK_FILE, SCRATCH_DIR};
use oware_solver::distributed::{LocalComm, ThreadComm};
use oware_solver::{
    generate, Cancel, GenerateError, GenerateObserver, GenerateOptions, LockError, Phase, Progress,
    TableDir, TierReport,
};

/// Reports nothing; when `fail_tier` is set, makes the write of that tier's table (or, with
/// `fail_ext` `owd`, of its distance table) fail as on a full disk (its temporary file is
/// made a link to `/dev/full` as the tier's writing begins).
struct Observer {
    fail_tier: Option<u8>,
    fail_ext: &'static str,
    dir: std::path::PathBuf,
    tier: AtomicU8,
}

impl Progress for Observer {
    fn start(&self, phase: Phase, _: u64) {
        let tier = self.tier.load(Ordering::Relaxed);
        #[cfg(unix)]
        if phase == Phase::Write && self.fail_tier == Some(tier) {
            let tmp = self
                .dir
                .join(format!("tier-{tier:02}.{}.tmp", self.fail_ext));
            std::os::unix::fs::symlink("/dev/full", tmp).unwrap();
        }
        #[cfg(not(unix))]
        let _ = (phase, tier);
    }
    fn advance(&self, _: u64) {}
}

impl GenerateObserver for Observer {
    fn tier_start(&self, tier: u8, _: u64, _: bool) {
        self.tier.store(tier, Ordering::Relaxed);
    }
    fn tier_done(&self, _: &TierReport) {}
}

fn observer(dir: &Path, fail_tier: Option<u8>) -> Observer {
    Observer {
        fail_tier,
        fail_ext: "owt",
        dir: dir.to_path_buf(),
        tier: AtomicU8::new(0),
    }
}

fn options(dir: &Path, max: u8) -> GenerateOptions {
    GenerateOptions {
        dir: dir.to_path_buf(),
        rules: "abapa".parse::<Rules>().unwrap(),
        max_seeds: max,
        ..GenerateOptions::default()
    }
}

fn tables(dir: &Path, max: u8) -> Vec<Vec<u8>> {
    (0..=max)
        .map(|n| std::fs::read(dir.join(format!("tier-{n:02}.owt"))).unwrap())
        .collect()
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Only the lock file, the manifest and complete tables `0..=max`, each with its distance
/// table.
fn only_complete_tiers(dir: &Path, max: u8) -> bool {
    let mut expected: Vec<String> = (0..=max)
        .flat_map(|n| [format!("tier-{n:02}.owt"), format!("tier-{n:02}.owd")])
        .collect();
    expected.extend([LOCK_FILE.to_string(), "manifest.json".to_string()]);
    expected.sort();
    names(dir) == expected
}

#[test]
fn a_held_lock_refuses_a_second_writer_on_every_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    std::fs::create_dir_all(&dir).unwrap();
    let lock = TableDir::new(&dir, &Cancel::new()).lock().unwrap();
    let me = Some(std::process::id());
    let err = generate(&LocalComm, &options(&dir, 4), &observer(&dir, None)).unwrap_err();
    assert!(
        matches!(&err, GenerateError::Locked(LockError::Held { pid, .. }) if *pid == me),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{} is being written by process {}",
            dir.display(),
            std::process::id()
        )
    );
    let opts = options(&dir, 4);
    let results = ThreadComm::run(3, |c| {
        let r = generate(c, &opts, &observer(&dir, None));
        matches!(r, Err(GenerateError::Locked(LockError::Held { pid, .. })) if pid == me)
    });
    assert_eq!(results, [true, true, true]);
    assert_eq!(names(&dir), [LOCK_FILE]);
    drop(lock);
    generate(&LocalComm, &options(&dir, 4), &observer(&dir, None)).unwrap();
    assert!(only_complete_tiers(&dir, 4));
}

#[test]
fn a_dead_writers_leftovers_are_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean");
    generate(&LocalComm, &options(&clean, 9), &observer(&clean, None)).unwrap();
    let dir = tmp.path().join("t");
    std::fs::create_dir_all(dir.join(SCRATCH_DIR).join("rank-1")).unwrap();
    // A lock file naming a process that no longer holds the lock blocks nobody.
    std::fs::write(dir.join(LOCK_FILE), "4000000\n").unwrap();
    std::fs::write(dir.join(SCRATCH_DIR).join("tier-00.scores"), b"junk").unwrap();
    std::fs::write(dir.join("tier-03.owt.tmp"), b"partial").unwrap();
    std::fs::write(dir.join("tier-04.owd.tmp"), b"partial").unwrap();
    std::fs::write(dir.join("manifest.json.tmp"), b"{").unwrap();
    generate(&LocalComm, &options(&dir, 9), &observer(&dir, None)).unwrap();
    assert!(only_complete_tiers(&dir, 9), "{:?}", names(&dir));
    assert!(tables(&dir, 9) == tables(&clean, 9));
}

#[cfg(unix)]
#[test]
fn a_failed_write_leaves_complete_tiers_only_and_the_rerun_matches() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean");
    generate(&LocalComm, &options(&clean, 10), &observer(&clean, None)).unwrap();
    let dir = tmp.path().join("t");
    let opts = options(&dir, 10);
    let err = generate(&LocalComm, &opts, &observer(&dir, Some(8))).unwrap_err();
    assert!(err.to_string().contains("tier-08.owt.tmp"), "{err}");
    assert!(only_complete_tiers(&dir, 7), "{:?}", names(&dir));
    generate(&LocalComm, &opts, &observer(&dir, None)).unwrap();
    assert!(only_complete_tiers(&dir, 10), "{:?}", names(&dir));
    assert!(tables(&dir, 10) == tables(&clean, 10));

    // The same when the distance table's write fails, after the tier's own table is
    // written: the tier is not recorded, and its table goes with the temporaries.
    let dir = tmp.path().join("u");
    let opts = options(&dir, 10);
    let failing = Observer {
        fail_ext: "owd",
        ..observer(&dir, Some(8))
    };
    let err = generate(&LocalComm, &opts, &failing).unwrap_err();
    assert!(err.to_string().contains("tier-08.owd.tmp"), "{err}");
    let manifest = oware_db::manifest::Manifest::load(&dir).unwrap().unwrap();
    assert_eq!(manifest.tiers.keys().copied().max(), Some(7));
    assert!(only_complete_tiers(&dir, 7), "{:?}", names(&dir));
    generate(&LocalComm, &opts, &observer(&dir, None)).unwrap();
    assert!(only_complete_tiers(&dir, 10), "{:?}", names(&dir));
    assert!(tables(&dir, 10) == tables(&clean, 10));
    for n in 0..=10 {
        let name = format!("tier-{n:02}.owd");
        assert_eq!(
            std::fs::read(dir.join(&name)).unwrap(),
            std::fs::read(clean.join(&name)).unwrap(),
            "{name}"
        );
    }
}
