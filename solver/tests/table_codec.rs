//! Tables written with either block compression read back exactly through
//! `oware_db::table::Table` (`get` of every entry and `read_all`), for random block and sub-block
//! sizes, code length limits and score distributions.

use oware_db::format::Compression;
use oware_db::index::{IndexKind, TierIndex};
use oware_db::table::Table;
use oware_db::write::{write_table_with, WriteOptions};
use oware_db::Rules;
use oware_solver::dir::write_table_parallel;
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
        limit in WriteOptions::MIN_CODE_LIMIT..=WriteOptions::MAX_CODE_LIMIT,
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
            compression,
            code_limit: limit,
            sub_block_shift: shift,
        };
        let w = write_table_parallel(
&oware_solver::TableDir::new(dir.path(), &oware_solver::Cancel::new()),
            &Rules::ABAPA,
            n,
            IndexKind::Reachable,
            &data,
            &opts,
            3,
        )
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
