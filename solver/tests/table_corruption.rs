//! No file content makes the reader panic: every byte of a small table flipped in turn, and
//! the table cut at every length; each open, probe and checksum returns an error or the
//! correct value, and the whole-file checksum always catches the damage.

use oware_db::format::Compression;
use oware_db::index::IndexKind;
use oware_db::table::Table;
use oware_db::write::WriteOptions;
use oware_db::Rules;
use oware_solver::dir::write_table_parallel;

mod synthetic;

fn check(path: &std::path::Path, scores: &[i8], what: &str) -> bool {
    let Ok(t) = Table::open(path) else {
        return true;
    };
    for (i, &s) in scores.iter().enumerate() {
        if let Ok(v) = t.get(i as u64) {
            assert_eq!(v, s, "{what}: entry {i} read back wrong");
        }
    }
    if let Ok(all) = t.read_all() {
        assert_eq!(all, scores, "{what}: read_all wrong");
    }
    if let Ok(all) = oware_solver::dir::read_table(&t) {
        assert_eq!(all, scores, "{what}: read_table wrong");
    }
    t.verify_checksum().is_err()
}

#[test]
fn every_flipped_byte_and_every_truncation_is_caught_zstd() {
    flip_and_cut(Compression::Zstd);
}

#[test]
fn every_flipped_byte_and_every_truncation_is_caught_huffman() {
    flip_and_cut(Compression::Huffman);
}

fn flip_and_cut(compression: Compression) {
    let dir = tempfile::tempdir().unwrap();
    let n = 3;
    let scores = synthetic::synth_tier(n, IndexKind::Reachable);
    let opts = WriteOptions {
        block_entries: 32,
        level: 3,
        compression,
        sub_block_shift: 3,
        ..WriteOptions::default()
    };
    let w = write_table_parallel(
        &oware_solver::TableDir::new(dir.path(), &oware_solver::Cancel::new()),
        &Rules::ABAPA,
        n,
        IndexKind::Reachable,
        &scores,
        &opts,
        4,
    )
    .unwrap();
    let good = std::fs::read(&w.path).unwrap();
    assert_eq!(Table::open(&w.path).unwrap().compression(), compression);
    assert!(good.len() > 300, "{}", good.len());
    let bad = dir.path().join("bad.owt");
    let mut blocks_caught = 0;
    for at in 0..good.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut v = good.clone();
            v[at] ^= mask;
            std::fs::write(&bad, &v).unwrap();
            let what = format!("byte {at} ^ {mask:#x}");
            assert!(check(&bad, &scores, &what), "{what}: not detected");
            // With a valid header the damage in a block is caught by its block checksum.
            if let Ok(t) = Table::open(&bad) {
                if (0..t.len()).any(|i| t.get(i).is_err()) {
                    blocks_caught += 1;
                }
            }
        }
    }
    assert!(blocks_caught > 0);
    for len in 0..good.len() {
        std::fs::write(&bad, &good[..len]).unwrap();
        assert!(
            check(&bad, &scores, &format!("cut at {len}")),
            "cut at {len}"
        );
    }
}
