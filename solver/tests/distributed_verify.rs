//! Deep verification over simulated ranks gives the verdicts of one process: on a
//! generated directory (every tier re-proved and recorded), and on a directory whose table
//! was rewritten with changed scores (the same failing positions, with the same details);
//! the trusted tiers below the range are decoded only where a tier of the range holds them;
//! the ranks prove the distance tables with one process's verdicts, a changed distance
//! behind a valid checksum named alike.

use std::path::Path;
use std::sync::Mutex;

use oware_db::check::TierCheck;
use oware_db::index::IndexKind;
use oware_db::manifest::Manifest;
use oware_db::table::Table;
use oware_db::write::WriteOptions;
use oware_db::Rules;
use oware_solver::dir::CheckObserver;
use oware_solver::distributed::{Comm, LocalComm, ThreadComm};
use oware_solver::memory::PROCESS_BYTES;
use oware_solver::{
    generate, verify_deep, DeepReport, DistanceVerdict, GenerateObserver, GenerateOptions,
    NoProgress, Phase, Progress, RankError, TierReport, TierVerdict, VerifyError, VerifyObserver,
    VerifyOptions,
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

impl CheckObserver for Silent {
    fn checks_start(&self, _: usize, _: u64) {}
    fn table_checked(&self, _: &TierCheck, _: u64) {}
}

impl VerifyObserver for Silent {
    fn checks_passed(&self) {}
    fn tier_start(&self, _: u8, _: u64) {}
    fn tier_read(&self, _: u8, _: u64) {}
    fn tier_done(&self, _: &TierVerdict) {}
}

fn generated(dir: &Path, rules: &Rules, max: u8) {
    let opts = GenerateOptions {
        dir: dir.to_path_buf(),
        rules: *rules,
        max_seeds: max,
        ..GenerateOptions::default()
    };
    generate(&LocalComm, &opts, &Silent).unwrap();
}

fn options(
    dir: &Path,
    rules: &Rules,
    tiers: std::ops::RangeInclusive<u8>,
    batch: Option<usize>,
) -> VerifyOptions {
    VerifyOptions {
        dir: dir.to_path_buf(),
        rules: *rules,
        tiers,
        again: true,
        exchange_batch: batch,
        ..VerifyOptions::default()
    }
}

/// What a verdict says, without timings.
fn summary(v: &TierVerdict) -> String {
    match v {
        TierVerdict::Verified(r) => format!(
            "verified {} {} {} {} {:?}",
            r.tier, r.positions, r.nonzero, r.mismatches, r.first
        ),
        TierVerdict::Trusted {
            tier, positions, ..
        } => format!("trusted {tier} {positions}"),
        TierVerdict::Recorded {
            tier, positions, ..
        } => format!("recorded {tier} {positions}"),
        TierVerdict::Unreadable { tier, .. } => format!("unreadable {tier}"),
        TierVerdict::CheckFailed(c) => format!("check failed {}", c.tier),
    }
}

/// Rewrites tier `n` of `dir` with `change` applied to its scores, and records the new file
/// in the manifest (so that the plain checks pass and only the proof can tell).
fn rewrite(dir: &Path, rules: &Rules, n: u8, change: impl Fn(&mut [i8])) {
    let path = dir.join(format!("tier-{n:02}.owt"));
    let mut scores = Table::open(&path).unwrap().read_all().unwrap();
    change(&mut scores);
    let w = oware_db::write::write_table_with(
        dir,
        rules,
        n,
        IndexKind::Reachable,
        &scores,
        &WriteOptions::default(),
    )
    .unwrap();
    let mut m = Manifest::load(dir).unwrap().unwrap();
    let e = m.tiers.get_mut(&n).unwrap();
    e.checksum = w.checksum;
    e.file_size = w.file_size;
    e.verified = None;
    m.save(dir).unwrap();
}

/// What a distance verdict says.
fn distance_summary(v: &DistanceVerdict) -> String {
    match v {
        DistanceVerdict::Proved { tier, max, .. } => format!("proved {tier} max {max}"),
        DistanceVerdict::Failed { tier, error } => format!("failed {tier}: {error}"),
        DistanceVerdict::Skipped { tier, why } => format!("skipped {tier}: {why}"),
    }
}

/// The first index from `len / part` on of tier `n` of `dir` whose score `pick` takes.
fn first_from(dir: &Path, n: u8, part: usize, pick: impl Fn(i8) -> bool) -> usize {
    let scores = Table::open(&dir.join(format!("tier-{n:02}.owt")))
        .unwrap()
        .read_all()
        .unwrap();
    let from = scores.len() / part;
    from + scores[from..].iter().position(|&s| pick(s)).unwrap()
}

/// Rewrites the distance table of tier `n` of `dir` with `change` applied to its distances,
/// and records the new file in the manifest: only the proof can tell.
fn rewrite_distances(dir: &Path, n: u8, change: impl FnOnce(&mut [u8])) {
    let scores = Table::open(&dir.join(format!("tier-{n:02}.owt")))
        .unwrap()
        .read_all()
        .unwrap();
    let mut m = Manifest::load(dir).unwrap().unwrap();
    let table = Table::open(&dir.join(format!("tier-{n:02}.owd"))).unwrap();
    let mut bytes = table.read_distances(&scores).unwrap();
    drop(table);
    change(&mut bytes);
    let w = oware_db::write::write_distances_with(
        dir,
        &m.rules,
        n,
        IndexKind::Reachable,
        &bytes,
        &scores,
        &WriteOptions::distances(),
    )
    .unwrap();
    let d = m.tiers.get_mut(&n).unwrap().distance.as_mut().unwrap();
    d.checksum = w.checksum;
    d.file_size = w.file_size;
    d.verified = None;
    m.save(dir).unwrap();
}

#[test]
fn ranks_prove_distances_as_one_process() {
    let max = 12;
    for rules in [Rules::ABAPA, Rules::AWARI] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t");
        generated(&dir, &rules, max);
        let check = |tag: &str| {
            let one =
                verify_deep(&LocalComm, &options(&dir, &rules, 6..=max, None), &Silent).unwrap();
            let want: Vec<String> = one.distances.iter().map(distance_summary).collect();
            assert_eq!(want.len(), max as usize - 5, "{want:?}");
            for (ranks, batch) in [(2, None), (3, Some(4096)), (5, None)] {
                let opts = options(&dir, &rules, 6..=max, batch);
                let reports = ThreadComm::run(ranks, |c| verify_deep(c, &opts, &Silent).unwrap());
                for (r, rep) in reports.iter().enumerate() {
                    let got: Vec<String> = rep.distances.iter().map(distance_summary).collect();
                    assert_eq!(got, want, "{rules}, {tag}, {ranks} ranks, rank {r}");
                }
            }
            want
        };
        let want = check("generated");
        assert!(want.iter().all(|w| w.starts_with("proved")), "{want:?}");
        // A changed distance in tier 10, behind a valid checksum: named alike.
        let at = first_from(&dir, 10, 2, |s| s != 0);
        rewrite_distances(&dir, 10, |b| b[at] = b[at].wrapping_add(1));
        let want = check("changed");
        assert!(
            want.iter()
                .any(|w| w.starts_with("failed 10: tier 10: position ")),
            "{want:?}"
        );
        // A nonzero score of tier 11 at distance 0, behind a valid checksum: its own equation
        // (it has moves) and those of its parents that keep their score through it fail, and
        // the ranks name the lowest alike.
        rewrite_distances(&dir, 10, |b| b[at] = b[at].wrapping_sub(1));
        let at = first_from(&dir, 11, 3, |s| s > 0);
        rewrite_distances(&dir, 11, |b| b[at] = 0);
        let want = check("distance 0");
        assert!(
            want.iter()
                .any(|w| w.starts_with("failed 11: tier 11: position ")),
            "{want:?}"
        );
    }
}

#[test]
fn ranks_verify_as_one_process() {
    let max = 12;
    for rules in [Rules::ABAPA, Rules::AWARI] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t");
        generated(&dir, &rules, max);
        let one = verify_deep(&LocalComm, &options(&dir, &rules, 3..=max, None), &Silent).unwrap();
        assert!(one.is_ok());
        let want: Vec<String> = one.verdicts.iter().map(summary).collect();
        for (ranks, batch) in [(2, Some(256)), (3, None), (4, Some(1000))] {
            let opts = options(&dir, &rules, 3..=max, batch);
            let reports = ThreadComm::run(ranks, |c| verify_deep(c, &opts, &Silent).unwrap());
            for (r, rep) in reports.iter().enumerate() {
                assert!(rep.is_ok(), "{rules}, {ranks} ranks, rank {r}");
                let got: Vec<String> = rep.verdicts.iter().map(summary).collect();
                assert_eq!(got, want, "{rules}, {ranks} ranks, rank {r}");
            }
            assert_eq!(reports[0].recorded, one.recorded);
            assert_eq!(reports[0].not_recorded, one.not_recorded);
            assert_eq!(reports[0].positions, one.positions);
        }
        // Every tier re-proved: every tier recorded.
        let opts = options(&dir, &rules, 0..=max, Some(300));
        let reports = ThreadComm::run(2, |c| verify_deep(c, &opts, &Silent).unwrap());
        assert_eq!(reports[0].recorded, (0..=max).collect::<Vec<_>>());
        // Recorded tiers are not re-proved unless asked.
        let opts = VerifyOptions {
            again: false,
            ..options(&dir, &rules, 0..=max, None)
        };
        let reports = ThreadComm::run(3, |c| verify_deep(c, &opts, &Silent).unwrap());
        assert!(reports[0].verdicts[3..]
            .iter()
            .all(|v| matches!(v, TierVerdict::Recorded { .. })));

        // Changed scores in tier 9: the same failing positions and details.
        rewrite(&dir, &rules, 9, |s| {
            for i in (0..s.len()).step_by(997) {
                s[i] = -s[i];
            }
            s[5] = i8::from(s[5] == 0);
            let len = s.len();
            s[len - 1] = s[len - 1].saturating_add(1);
        });
        let one = verify_deep(&LocalComm, &options(&dir, &rules, 0..=max, None), &Silent).unwrap();
        assert!(!one.is_ok());
        let want: Vec<String> = one.verdicts.iter().map(summary).collect();
        assert!(want.last().unwrap().starts_with("verified 9"), "{want:?}");
        for ranks in [2, 5] {
            let opts = options(&dir, &rules, 0..=max, Some(500));
            let reports = ThreadComm::run(ranks, |c| verify_deep(c, &opts, &Silent).unwrap());
            let got: Vec<String> = reports[0].verdicts.iter().map(summary).collect();
            assert_eq!(got, want, "{rules}, {ranks} ranks, changed tier 9");
            assert!(!reports[1].is_ok());
        }
    }
    let _ = NoProgress;
}

/// Records the tiers whose tables are read whole.
struct Reads(Mutex<Vec<u8>>);

impl Progress for Reads {
    fn start(&self, _: Phase, _: u64) {}
    fn advance(&self, _: u64) {}
}

impl CheckObserver for Reads {
    fn checks_start(&self, _: usize, _: u64) {}
    fn table_checked(&self, _: &TierCheck, _: u64) {}
}

impl VerifyObserver for Reads {
    fn checks_passed(&self) {}
    fn tier_start(&self, _: u8, _: u64) {}
    fn tier_read(&self, tier: u8, _: u64) {
        self.0.lock().unwrap().push(tier);
    }
    fn tier_done(&self, _: &TierVerdict) {}
}

#[test]
fn trusted_tiers_are_decoded_only_where_the_range_holds_them() {
    let (a, b) = (12, 12);
    let rules = Rules::ABAPA;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    generated(&dir, &rules, b);
    // Captures take 2 or 3 seeds: tier 12 reads tiers 0..=10, never 11.
    let held: Vec<u8> = (0..a)
        .filter(|&t| (a..=b).any(|m| rules.capture_window(m).contains(&t)))
        .chain(a..=b)
        .collect();
    assert!(!held.contains(&11) && held.contains(&10), "{held:?}");
    let verdicts = |reports: &[oware_solver::DeepReport]| -> Vec<Vec<String>> {
        reports
            .iter()
            .map(|r| {
                assert!(r.is_ok());
                r.verdicts.iter().map(summary).collect()
            })
            .collect()
    };
    // One process, the lower tiers held whole: only those of the window are read.
    let reads = Reads(Mutex::new(Vec::new()));
    let one = verify_deep(&LocalComm, &options(&dir, &rules, a..=b, None), &reads).unwrap();
    assert_eq!(*reads.0.lock().unwrap(), held);
    let want = verdicts(std::slice::from_ref(&one)).remove(0);
    assert_eq!(want.len(), usize::from(b) + 1);
    assert!(want[11].starts_with("trusted 11"), "{want:?}");
    // In slices: the slices read the tables; no trusted tier is read whole.
    let reads = Reads(Mutex::new(Vec::new()));
    let opts = VerifyOptions {
        slice_bytes: Some(4096),
        distance_window: None,
        ..options(&dir, &rules, a..=b, None)
    };
    let sliced = verify_deep(&LocalComm, &opts, &reads).unwrap();
    assert_eq!(*reads.0.lock().unwrap(), (a..=b).collect::<Vec<_>>());
    assert_eq!(verdicts(&[sliced]), vec![want.clone()]);
    // Over ranks: each reads its share of the tiers of the window.
    let opts = options(&dir, &rules, a..=b, Some(256));
    let reads: Vec<Reads> = (0..3).map(|_| Reads(Mutex::new(Vec::new()))).collect();
    let reports = ThreadComm::run(3, |c| verify_deep(c, &opts, &reads[c.rank()]).unwrap());
    assert_eq!(verdicts(&reports), vec![want; 3]);
    for r in &reads {
        assert_eq!(*r.0.lock().unwrap(), held);
    }
}

#[test]
fn a_share_too_large_is_refused_with_the_rank_and_its_figures() {
    let rules = Rules::ABAPA;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    generated(&dir, &rules, 12);
    let opts = VerifyOptions {
        memory_limit: Some(PROCESS_BYTES + (1 << 20)),
        ..options(&dir, &rules, 12..=12, None)
    };
    let results = ThreadComm::run(2, |c| verify_deep(c, &opts, &Silent));
    for (r, res) in results.iter().enumerate() {
        match res {
            Err(VerifyError::Rank(
                e @ RankError::TooLarge {
                    job: "deep verification",
                    tier,
                    rank,
                    ranks: 2,
                    needed,
                    own,
                    lower,
                    available,
                },
            )) => {
                assert_eq!(*rank, r);
                assert!(*tier <= 12);
                assert_eq!(*available, PROCESS_BYTES + (1 << 20));
                assert!(needed > available && *needed == own + lower + PROCESS_BYTES);
                let msg = e.to_string();
                assert!(
                    msg.starts_with(&format!("deep verification of tier {tier} needs "))
                        && msg.contains(&format!("on rank {r} of 2"))
                        && msg.contains("for its share of the lower tiers")
                        && !msg.contains("slice"),
                    "{msg}"
                );
            }
            // A rank whose share fits stops with the first that does not.
            Err(VerifyError::Rank(RankError::Failed { rank })) => {
                assert!(matches!(
                    results[*rank],
                    Err(VerifyError::Rank(RankError::TooLarge { .. }))
                ));
            }
            other => panic!("rank {r}: {other:?}"),
        }
    }
    assert!(results
        .iter()
        .any(|r| matches!(r, Err(VerifyError::Rank(RankError::TooLarge { .. })))));
}

/// One of three ranks under a memory limit that leaves no room for its range's distances at
/// tier 12 (a byte per position beside its scores, 64 KiB short), the others unlimited:
/// every rank skips that tier's distances alike, naming that rank, and the verification goes
/// on (no rank is left waiting in a collective); 64 KiB more, and every rank proves them.
#[test]
fn a_rank_without_room_for_distances_makes_every_rank_skip_them() {
    let rules = Rules::ABAPA;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    generated(&dir, &rules, 12);
    let run = |limit: u64| {
        let low = VerifyOptions {
            memory_limit: Some(limit),
            ..options(&dir, &rules, 10..=12, None)
        };
        let high = options(&dir, &rules, 10..=12, None);
        ThreadComm::run(3, |c| {
            verify_deep(c, if c.rank() == 1 { &low } else { &high }, &Silent)
        })
    };
    let proved = |reports: &[Result<DeepReport, VerifyError>]| {
        reports.iter().all(|r| {
            r.as_ref()
                .is_ok_and(|r| r.distances.iter().all(DistanceVerdict::is_proved))
        })
    };
    // The least limit of rank 1 (to 64 KiB) under which every rank proves every distance.
    let (mut lo, mut hi) = (1u64 << 20, 1u64 << 30);
    assert!(proved(&run(hi)));
    while hi - lo > 1 << 16 {
        let mid = lo + (hi - lo) / 2;
        if proved(&run(mid)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let reports: Vec<_> = run(lo).into_iter().map(Result::unwrap).collect();
    let want: Vec<String> = reports[0].distances.iter().map(distance_summary).collect();
    assert!(
        want.iter()
            .any(|w| w.starts_with("skipped 12: rank 1 of 3 needs ")),
        "{want:?}"
    );
    for (r, rep) in reports.iter().enumerate() {
        assert!(rep.is_ok(), "rank {r}");
        let got: Vec<String> = rep.distances.iter().map(distance_summary).collect();
        assert_eq!(got, want, "rank {r}");
    }
}
