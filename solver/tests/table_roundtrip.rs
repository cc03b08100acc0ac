//! Tables written by `oware_db`'s writer (and the parallel driver of `oware_solver`) read
//! back exactly through `oware_db::table::Table`.

mod synthetic;

use oware_db::format::{tier_file_name, Compression};
use oware_db::index::{IndexKind, TierIndex};
use oware_db::manifest::Manifest;
use oware_db::table::Table;
use oware_db::write::{write_table, write_table_with, WriteOptions};
use oware_db::{Error, Rules};
use oware_solver::dir::write_table_parallel;
use synthetic::{synth, synth_tier};

#[test]
fn round_trip_several_tiers_and_block_sizes() {
    let dir = tempfile::tempdir().unwrap();
    for (n, block_entries) in [
        (0u8, 4096u32),
        (1, 1),
        (5, 7),
        (9, 64),
        (11, 4096),
        (13, 100_000),
    ] {
        let kind = IndexKind::Reachable;
        let scores = synth_tier(n, kind);
        let opts = WriteOptions {
            block_entries,
            level: 3,
            ..WriteOptions::default()
        };
        let w = write_table_parallel(
            &oware_solver::TableDir::new(dir.path(), &oware_solver::Cancel::new()),
            &Rules::AWARI,
            n,
            kind,
            &scores,
            &opts,
            5,
        )
        .unwrap();
        assert_eq!(w.file, tier_file_name(n));
        assert!(!dir.path().join(format!("{}.tmp", w.file)).exists());
        let t = Table::open(&w.path).unwrap();
        assert_eq!(t.tier(), n);
        assert_eq!(t.rules(), Rules::AWARI);
        assert_eq!(t.kind(), kind);
        assert_eq!(t.len(), scores.len() as u64);
        assert_eq!(t.file_size(), w.file_size);
        assert_eq!(t.file_size(), std::fs::metadata(&w.path).unwrap().len());
        assert_eq!(t.checksum_hex(), w.checksum);
        assert_eq!(t.verify_checksum().unwrap(), w.checksum);
        assert_eq!(t.read_all().unwrap(), scores);
        assert_eq!(oware_solver::dir::read_table(&t).unwrap(), scores);
        // `read_into` takes whole blocks only: a range that starts or ends inside a block
        // (short of the table's end) is refused.
        let (be, len) = (block_entries as usize, scores.len());
        if be > 1 && len > be {
            let mut buf = vec![0i8; be];
            assert!(t.read_into(1, &mut buf).is_err());
            assert!(t.read_into(0, &mut buf[..be - 1]).is_err());
            // The second block, whole or cut short by the table's end.
            let second = &mut buf[..be.min(len - be)];
            t.read_into(be as u64, second).unwrap();
            assert_eq!(second, &scores[be..be + second.len()]);
        }
        assert!(t.read_into(len as u64, &mut [0i8]).is_err());
        // `read_range` takes any range: inside one block, across blocks, to the end.
        let mut rng = fastrand::Rng::with_seed(u64::from(n));
        for _ in 0..50 {
            let a = rng.usize(0..=len);
            let b = rng.usize(a..=len.min(a + 3 * be + 5));
            let mut buf = vec![0i8; b - a];
            t.read_range(a as u64, &mut buf).unwrap();
            assert_eq!(buf, &scores[a..b], "tier {n} range {a}..{b}");
        }
        assert!(matches!(
            t.read_range(len as u64 - 1, &mut [0i8; 2]),
            Err(Error::IndexOutOfRange { .. })
        ));
        // Probes in a scattered order, so blocks are decompressed, cached and evicted.
        let len = t.len();
        for k in 0..len.min(20_000) {
            let i = (k * 7919) % len;
            assert_eq!(t.get(i).unwrap(), scores[i as usize], "tier {n} entry {i}");
        }
        assert!(matches!(
            t.get(len),
            Err(Error::IndexOutOfRange { index, len: l }) if index == len && l == len
        ));
    }
}

#[test]
fn dense_tables_keep_reachable_entries() {
    let dir = tempfile::tempdir().unwrap();
    let n = 8;
    let scores = synth_tier(n, IndexKind::Dense);
    let w = write_table(dir.path(), &Rules::ABAPA, n, IndexKind::Dense, &scores).unwrap();
    let t = Table::open(&w.path).unwrap();
    let idx = TierIndex::new(n, IndexKind::Dense);
    for i in 0..t.len() {
        if idx.unrank(i).is_reachable() {
            assert_eq!(t.get(i).unwrap(), synth(n, i));
        }
    }
}

#[test]
fn parallel_probes_agree() {
    let dir = tempfile::tempdir().unwrap();
    let n = 12;
    let scores = synth_tier(n, IndexKind::Reachable);
    let opts = WriteOptions {
        block_entries: 256,
        ..WriteOptions::default()
    };
    let w = write_table_with(
        dir.path(),
        &Rules::ABAPA,
        n,
        IndexKind::Reachable,
        &scores,
        &opts,
    )
    .unwrap();
    let t = Table::open(&w.path).unwrap();
    std::thread::scope(|s| {
        for th in 0..4u64 {
            let (t, scores) = (&t, &scores);
            s.spawn(move || {
                let len = t.len();
                for k in 0..50_000u64 {
                    let i = (k * 104_729 + th * 31) % len;
                    assert_eq!(t.get(i).unwrap(), scores[i as usize]);
                }
            });
        }
    });
}

#[test]
fn wrong_length_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let r = write_table(dir.path(), &Rules::ABAPA, 3, IndexKind::Reachable, &[0; 5]);
    assert!(matches!(r, Err(Error::InvalidState(_))), "{r:?}");
}

#[test]
fn manifest_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(Manifest::load(dir.path()).unwrap(), None);
    synthetic::build_dir(dir.path(), &Rules::ABAPA, 3, &WriteOptions::default());
    let m = Manifest::load(dir.path()).unwrap().unwrap();
    assert_eq!(m.rules, Rules::ABAPA);
    assert_eq!(m.index, IndexKind::Reachable);
    assert_eq!(m.tiers.len(), 4);
    assert_eq!(m.tiers[&3].file, "tier-03.owt");
    assert!(!dir.path().join("manifest.json.tmp").exists());
    std::fs::write(dir.path().join("manifest.json"), "{ not json").unwrap();
    assert!(matches!(
        Manifest::load(dir.path()),
        Err(Error::Manifest { .. })
    ));
}

#[test]
fn the_parallel_driver_writes_the_same_bytes() {
    for compression in Compression::ALL {
        for (n, kind, block_entries) in [
            (0u8, IndexKind::Reachable, 1024u32),
            (7, IndexKind::Dense, 100),
            (9, IndexKind::Reachable, 64),
            (11, IndexKind::Reachable, 1024),
        ] {
            let scores = synth_tier(n, kind);
            let opts = WriteOptions {
                block_entries,
                compression,
                ..WriteOptions::default()
            };
            let (one, many) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            let a = write_table_with(one.path(), &Rules::ABAPA, n, kind, &scores, &opts).unwrap();
            for batch in [1, 3, 1024] {
                let b = write_table_parallel(
                    &oware_solver::TableDir::new(many.path(), &oware_solver::Cancel::new()),
                    &Rules::ABAPA,
                    n,
                    kind,
                    &scores,
                    &opts,
                    batch,
                )
                .unwrap();
                assert_eq!(
                    (&a.file, a.file_size, &a.checksum),
                    (&b.file, b.file_size, &b.checksum)
                );
                assert_eq!(
                    std::fs::read(&a.path).unwrap(),
                    std::fs::read(&b.path).unwrap(),
                    "{compression} tier {n} {} batch {batch}",
                    kind.name()
                );
            }
        }
    }
}
