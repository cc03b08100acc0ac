//! End-to-end: `oware generate --compression zstd` and the default (ctx-huffman) write tables
//! that probe identically; `oware recompress` converts one into the other byte for byte;
//! `oware info` names each table's compression.

mod support;

use std::path::Path;

use support::{ok, run};

use oware_db::format::Compression;
use oware_db::index::TierIndex;
use oware_db::table::Table;
use oware_db::Tablebase;

const MAX: u8 = 9;

fn tier(dir: &Path, n: u8) -> std::path::PathBuf {
    dir.join(format!("tier-{n:02}.owt"))
}

#[test]
fn zstd_and_huffman_tables_probe_identically() {
    let tmp = tempfile::tempdir().unwrap();
    let h = tmp.path().join("huffman");
    let z = tmp.path().join("zstd");
    let max = MAX.to_string();
    for (dir, extra) in [(&h, None), (&z, Some("zstd"))] {
        let mut args = vec![
            "generate",
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--max-seeds",
            &max,
        ];
        if let Some(c) = extra {
            args.extend(["--compression", c]);
        }
        ok(&args);
    }
    let hb = Tablebase::open(&h).unwrap();
    let zb = Tablebase::open(&z).unwrap();
    for n in 0..=MAX {
        let (ht, zt) = (hb.table(n).unwrap(), zb.table(n).unwrap());
        assert_eq!(ht.compression(), Compression::Huffman);
        assert_eq!(zt.compression(), Compression::Zstd);
        let all = ht.read_all().unwrap();
        assert_eq!(all, zt.read_all().unwrap(), "tier {n}");
        for i in 0..ht.len() {
            assert_eq!(ht.get(i).unwrap(), all[i as usize], "tier {n} entry {i}");
            assert_eq!(zt.get(i).unwrap(), all[i as usize], "tier {n} entry {i}");
        }
        // Every position of the tier, reachable or not, through the probe API.
        let idx = TierIndex::new(n, oware_db::index::IndexKind::Dense);
        for i in (0..idx.size()).step_by(7) {
            let p = idx.unrank(i);
            assert_eq!(hb.score(&p).unwrap(), zb.score(&p).unwrap(), "{p}");
        }
    }
    // The binary answers the same, and `info` names the compressions.
    for p in ["1 1 1 1 1 2 0 0 0 0 0 1", "0 0 0 0 0 3 2 1 0 0 1 0"] {
        let a = ok(&["probe", "--dir", h.to_str().unwrap(), p]);
        let b = ok(&["probe", "--dir", z.to_str().unwrap(), p]);
        assert_eq!(a, b);
    }
    let info = ok(&["info", "--json", "--dir", h.to_str().unwrap()]);
    assert!(info.contains("\"compression\": \"huffman\""), "{info}");
    let info = ok(&["info", "--dir", z.to_str().unwrap()]);
    assert!(info.contains("zstd"), "{info}");
    // `recompress` gives the same bytes as generating with that compression.
    let r = tmp.path().join("recompressed");
    ok(&[
        "recompress",
        "--dir",
        z.to_str().unwrap(),
        "--out",
        r.to_str().unwrap(),
    ]);
    let rz = tmp.path().join("back-to-zstd");
    ok(&[
        "recompress",
        "--dir",
        r.to_str().unwrap(),
        "--out",
        rz.to_str().unwrap(),
        "--compression",
        "zstd",
    ]);
    for n in 0..=MAX {
        assert_eq!(
            std::fs::read(tier(&h, n)).unwrap(),
            std::fs::read(tier(&r, n)).unwrap(),
            "tier {n}"
        );
        assert_eq!(
            std::fs::read(tier(&z, n)).unwrap(),
            std::fs::read(tier(&rz, n)).unwrap(),
            "tier {n}"
        );
        assert!(Table::open(&tier(&r, n)).unwrap().verify_checksum().is_ok());
    }
    ok(&["verify", "--dir", r.to_str().unwrap()]);
    let bad = run(&[
        "generate",
        "--dir",
        r.to_str().unwrap(),
        "--compression",
        "lz4",
    ]);
    assert!(!bad.status.success());
}
