//! Distance tables of real tiers (solved and their distances found by the library): the
//! ctx-huffman code in the context of the scores reads back exactly, whole and entry by
//! entry, through `Table` and `Tablebase`; the parallel writer writes the bytes of the
//! single-thread one on any number of threads; zstd distance tables (what earlier versions
//! wrote) still read as before.

mod common;

use std::path::Path;
use std::sync::Arc;

use oware_db::format::{distance_file_name, Compression, Values, NO_DISTANCE_BYTE};
use oware_db::index::{IndexKind, TierIndex};
use oware_db::table::Table;
use oware_db::write::{
    write_distances_with, write_table, EncodeScratch, TableEncoder, WriteOptions,
};
use oware_db::{Rules, Tablebase};
use oware_solver::dir::{read_distances, write_distances_parallel};
use oware_solver::tier::{tier_distances, LowerTiers};
use oware_solver::{Cancel, TableDir};

/// The scores and the distances of every tier `0..=max` under `rules`.
fn tiers(rules: &Rules, max: u8) -> Vec<(Vec<i8>, Vec<u8>)> {
    let scores = common::solve_all(rules, max);
    let mut lower = LowerTiers::new();
    let mut out = Vec::new();
    for (n, s) in scores.into_iter().enumerate() {
        let d = tier_distances(rules, n as u8, &s, &lower).unwrap();
        lower.push(Arc::from(s.clone()));
        out.push((s, d));
    }
    out
}

/// The distance byte `d` as a probe answers it.
fn answer(d: u8) -> Option<u16> {
    (d != NO_DISTANCE_BYTE).then_some(u16::from(d))
}

/// Writes the score table and the distance table (default settings, parallel writer) of
/// every tier into `dir`.
fn write_dir(dir: &Path, rules: &Rules, tiers: &[(Vec<i8>, Vec<u8>)]) {
    let table_dir = TableDir::new(dir, &Cancel::new());
    for (n, (s, d)) in tiers.iter().enumerate() {
        let n = n as u8;
        write_table(dir, rules, n, IndexKind::Reachable, s).unwrap();
        let w =
            write_distances_parallel(&table_dir, rules, n, IndexKind::Reachable, d, s, 7).unwrap();
        assert_eq!(w.file, distance_file_name(n));
        assert!(!dir.join(format!("{}.tmp", w.file)).exists());
    }
}

#[test]
fn ctx_huffman_distance_tables_of_real_tiers_read_back() {
    for rules in [Rules::ABAPA, Rules::AWARI] {
        let max = 11;
        let tiers = tiers(&rules, max);
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write_dir(dir, &rules, &tiers);
        let tb = Tablebase::open(dir).unwrap();
        for (n, (s, d)) in tiers.iter().enumerate() {
            let n = n as u8;
            let t = Table::open(&dir.join(distance_file_name(n))).unwrap();
            let scores = tb.table(n).unwrap();
            assert_eq!(t.values(), Values::Distances);
            assert_eq!(t.compression(), Compression::Huffman);
            assert_eq!(
                t.block_entries(),
                WriteOptions::DEFAULT_DISTANCE_BLOCK_ENTRIES
            );
            t.verify_checksum().unwrap();
            assert_eq!(&t.read_distances(s).unwrap(), d, "{rules} tier {n}");
            assert_eq!(&read_distances(&t, s).unwrap(), d, "{rules} tier {n}");
            // Every entry of the small tiers, every 7th of the others, probed alone.
            let step = if n <= 8 { 1 } else { 7 };
            let idx = TierIndex::new(n, IndexKind::Reachable);
            for i in (0..d.len()).step_by(step) {
                let want = answer(d[i]);
                assert_eq!(t.get_distance(i as u64, scores).unwrap(), want, "{n} {i}");
                if i % (step * 5) == 0 {
                    let p = idx.unrank(i as u64);
                    assert_eq!(tb.distance(&p).unwrap(), want, "{rules} {p}");
                }
            }
        }
    }
}

#[test]
fn the_parallel_writer_writes_the_bytes_of_the_single_thread_one() {
    let rules = Rules::ABAPA;
    let tiers = tiers(&rules, 10);
    for n in [0u8, 3, 9, 10] {
        let (s, d) = &tiers[usize::from(n)];
        for opts in [
            WriteOptions::distances(),
            WriteOptions {
                block_entries: 300,
                sub_block_shift: 5,
                code_limit: 9,
                ..WriteOptions::distances()
            },
        ] {
            let one = tempfile::tempdir().unwrap();
            let a = write_distances_with(one.path(), &rules, n, IndexKind::Reachable, d, s, &opts)
                .unwrap();
            let want = std::fs::read(&a.path).unwrap();
            // Blocks encoded in any order, one encoder per block, give the same bytes.
            let other = tempfile::tempdir().unwrap();
            let mut enc = TableEncoder::for_distances(
                other.path(),
                &rules,
                n,
                IndexKind::Reachable,
                d,
                s,
                &opts,
            )
            .unwrap();
            let mut counts = enc.empty_counts();
            let mut scratch = EncodeScratch::default();
            for b in (0..enc.block_count()).rev() {
                enc.count_block(b, &mut counts, &mut scratch).unwrap();
            }
            enc.set_counts(&counts);
            let mut blocks: Vec<(usize, Vec<u8>)> = (0..enc.block_count())
                .rev()
                .map(|b| (b, enc.encode_block(b, &mut scratch).unwrap()))
                .collect();
            blocks.sort_by_key(|(b, _)| *b);
            let w = enc.write(blocks.into_iter().map(|(_, x)| Ok(x))).unwrap();
            assert_eq!(std::fs::read(&w.path).unwrap(), want, "tier {n}");
            if opts != WriteOptions::distances() {
                continue;
            }
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                for batch in [1, 3, 1024] {
                    let many = tempfile::tempdir().unwrap();
                    let table_dir = TableDir::new(many.path(), &Cancel::new());
                    let b = pool
                        .install(|| {
                            write_distances_parallel(
                                &table_dir,
                                &rules,
                                n,
                                IndexKind::Reachable,
                                d,
                                s,
                                batch,
                            )
                        })
                        .unwrap();
                    assert_eq!(
                        (&a.file, a.file_size, &a.checksum),
                        (&b.file, b.file_size, &b.checksum)
                    );
                    assert_eq!(
                        std::fs::read(&b.path).unwrap(),
                        want,
                        "tier {n}, {threads} threads, batch {batch}"
                    );
                }
            }
        }
    }
}

#[test]
fn zstd_distance_tables_still_read() {
    let rules = Rules::AWARI;
    let tiers = tiers(&rules, 9);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (n, (s, d)) in tiers.iter().enumerate() {
        let n = n as u8;
        write_table(dir, &rules, n, IndexKind::Reachable, s).unwrap();
        // As earlier versions wrote them: zstd blocks of 1024 entries, level 9, from the
        // distance bytes taken as scores.
        let zstd = WriteOptions {
            compression: Compression::Zstd,
            ..WriteOptions::default()
        };
        let bytes: Vec<i8> = d.iter().map(|&x| x as i8).collect();
        let old = TableEncoder::new(dir, &rules, n, IndexKind::Reachable, &bytes, &zstd)
            .unwrap()
            .with_values(Values::Distances)
            .unwrap();
        let mut scratch = EncodeScratch::default();
        let blocks: Vec<_> = (0..old.block_count())
            .map(|b| old.encode_block(b, &mut scratch))
            .collect();
        let w = old.write(blocks).unwrap();
        // The new writer makes the same file when asked for zstd.
        let again = tempfile::tempdir().unwrap();
        let w2 = write_distances_with(again.path(), &rules, n, IndexKind::Reachable, d, s, &zstd)
            .unwrap();
        assert_eq!(
            std::fs::read(&w.path).unwrap(),
            std::fs::read(&w2.path).unwrap()
        );
        // A ctx-huffman table cannot be made through the old path.
        let huffman = TableEncoder::new(
            dir,
            &rules,
            n,
            IndexKind::Reachable,
            &bytes,
            &WriteOptions::default(),
        )
        .unwrap()
        .with_values(Values::Distances);
        assert!(huffman.is_err());
    }
    let tb = Tablebase::open(dir).unwrap();
    for (n, (s, d)) in tiers.iter().enumerate() {
        let n = n as u8;
        let t = tb.distance_table(n).unwrap();
        assert_eq!(t.compression(), Compression::Zstd);
        assert_eq!(
            t.read_all().unwrap(),
            d.iter().map(|&x| x as i8).collect::<Vec<_>>()
        );
        assert_eq!(&t.read_distances(s).unwrap(), d);
        assert_eq!(&read_distances(t, s).unwrap(), d);
        let idx = TierIndex::new(n, IndexKind::Reachable);
        for (i, &x) in d.iter().enumerate() {
            assert_eq!(
                t.get_distance(i as u64, tb.table(n).unwrap()).unwrap(),
                answer(x)
            );
            if i % 11 == 0 {
                assert_eq!(tb.distance(&idx.unrank(i as u64)).unwrap(), answer(x));
            }
        }
    }
}

#[test]
fn the_new_code_is_smaller_than_zstd() {
    let rules = Rules::ABAPA;
    let tiers = tiers(&rules, 12);
    for n in 10..=12u8 {
        let (s, d) = &tiers[usize::from(n)];
        let tmp = tempfile::tempdir().unwrap();
        let zstd = WriteOptions {
            compression: Compression::Zstd,
            ..WriteOptions::default()
        };
        let z =
            write_distances_with(tmp.path(), &rules, n, IndexKind::Reachable, d, s, &zstd).unwrap();
        let h = write_distances_with(
            tmp.path(),
            &rules,
            n,
            IndexKind::Reachable,
            d,
            s,
            &WriteOptions::distances(),
        )
        .unwrap();
        // Measured: 2.9-3.4 bits per position against 4.1-4.7 for zstd (2.7-2.9 against
        // 3.9 at tiers 20..=22).
        assert!(
            h.file_size * 5 < z.file_size * 4,
            "tier {n}: {} bytes, zstd {}",
            h.file_size,
            z.file_size
        );
    }
}
