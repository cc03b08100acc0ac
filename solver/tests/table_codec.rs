//! Tables written with either block compression read back exactly through
//! `oware_db::Table` (`get` of every entry and `read_all`), for random block and sub-block
//! sizes, code length limits and score distributions.

use oware_db::format::Compression;
use oware_db::huffman::{MAX_LIMIT, MIN_LIMIT};
use oware_db::{IndexKind, Rules, Table, TierIndex};
use oware_solver::table_writer::{write_table_with, WriteOptions};
use proptest::prelude::*;

fn scores(n: u8, kind: u8, seed: u64) -> Vec<i8> {
    let len = TierIndex::new(n, IndexKind::Reachable).size();
    let mut z = seed | 1;
    let mut next = move || {
        z ^= z >> 12;
        z ^= z << 25;
        z ^= z >> 27;
        z.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let k = 2 * u64::from(n) + 1;
    let a = (next() % k) as i8 - n as i8;
    let b = (next() % k) as i8 - n as i8;
    (0..len)
        .map(|_| match kind % 3 {
            0 => a,
            1 => {
                if next() % 4 == 0 {
                    b
                } else {
                    a
                }
            }
            _ => (next() % k) as i8 - n as i8,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn tables_round_trip(
        n in 0u8..=5,
        block in prop_oneof![Just(1024u32), 1u32..400],
        shift in 0u8..=9,
        limit in MIN_LIMIT..=MAX_LIMIT,
        zstd in any::<bool>(),
        kind in 0u8..3,
        seed in any::<u64>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let data = scores(n, kind, seed);
        let compression = if zstd { Compression::Zstd } else { Compression::Huffman };
        let opts = WriteOptions {
            block_entries: block,
            level: 1,
            batch_blocks: 3,
            compression,
            code_limit: limit,
            sub_block_shift: shift,
        };
        let w = write_table_with(dir.path(), &Rules::ABAPA, n, IndexKind::Reachable, &data, &opts)
            .unwrap();
        let t = Table::open(&w.path).unwrap();
        prop_assert_eq!(t.compression(), compression);
        prop_assert_eq!(t.read_all().unwrap(), data.clone());
        for (i, &v) in data.iter().enumerate() {
            prop_assert_eq!(t.get(i as u64).unwrap(), v, "entry {}", i);
        }
        prop_assert!(t.get(data.len() as u64).is_err());
    }
}

#[test]
fn huffman_refuses_scores_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = vec![0i8; TierIndex::new(2, IndexKind::Reachable).size() as usize];
    data[5] = 3;
    let r = write_table_with(
        dir.path(),
        &Rules::ABAPA,
        2,
        IndexKind::Reachable,
        &data,
        &WriteOptions::default(),
    );
    assert!(matches!(r, Err(oware_db::Error::InvalidState(_))), "{r:?}");
}

#[test]
fn a_corrupt_model_is_a_bad_header() {
    // A model whose header checksum is right but whose code lengths are not a prefix code.
    use oware_db::format::Header;
    let dir = tempfile::tempdir().unwrap();
    let n = 3;
    let data = scores(n, 2, 9);
    let w = write_table_with(
        dir.path(),
        &Rules::ABAPA,
        n,
        IndexKind::Reachable,
        &data,
        &WriteOptions::default(),
    )
    .unwrap();
    let mut bytes = std::fs::read(&w.path).unwrap();
    let (mut h, len) = Header::decode(&w.path, &bytes).unwrap();
    let at = h.model.iter().position(|&l| l > 1).unwrap();
    h.model[at] += 1;
    let enc = h.encode();
    assert_eq!(enc.len(), len);
    bytes[..len].copy_from_slice(&enc);
    std::fs::write(&w.path, &bytes).unwrap();
    let r = Table::open(&w.path);
    assert!(
        matches!(r, Err(oware_db::Error::BadHeader { ref detail, .. }) if detail.contains("model")),
        "{r:?}"
    );
}
