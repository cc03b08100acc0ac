//! Untrusted bytes: tables read from memory (`Table::from_bytes`), damaged tables, and
//! manifests that name files outside their directory. Every damaged input is an error,
//! never a panic. The fuzz targets of `fuzz/` (run by `scripts/fuzz`) search the same
//! inputs at random; an input they find that crashes belongs in `fuzz_regressions.rs`.

use oware_db::check::check_table;
use oware_db::format::Compression;
use oware_db::index::IndexKind;
use oware_db::manifest::{Manifest, TierEntry};
use oware_db::table::Table;
use oware_db::write::{write_table_with, WriteOptions};
use oware_db::{Error, Rules};

/// The bytes of a small table of tier `n` (made-up scores in the tier's range), in many
/// blocks and sub-blocks.
fn table_bytes(n: u8, compression: Compression) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let size = oware_db::index::tier_size(n, IndexKind::Reachable) as usize;
    let span = 2 * usize::from(n) + 1;
    let scores: Vec<i8> = (0..size)
        .map(|i| ((i * 7) % span) as i8 - n as i8)
        .collect();
    let opts = WriteOptions {
        block_entries: 40,
        compression,
        sub_block_shift: 3,
        ..WriteOptions::default()
    };
    let w = write_table_with(
        dir.path(),
        &Rules::AWARI,
        n,
        IndexKind::Reachable,
        &scores,
        &opts,
    )
    .unwrap();
    std::fs::read(&w.path).unwrap()
}

#[test]
fn a_table_from_bytes_reads_as_from_its_file() {
    for compression in Compression::ALL {
        let dir = tempfile::tempdir().unwrap();
        let bytes = table_bytes(4, compression);
        let path = dir.path().join("tier-04.owt");
        std::fs::write(&path, &bytes).unwrap();
        let file = Table::open(&path).unwrap();
        let mem = Table::from_bytes(bytes).unwrap();
        assert_eq!(mem.path(), std::path::Path::new("<memory>"));
        assert_eq!(mem.read_all().unwrap(), file.read_all().unwrap());
        for i in 0..mem.len() {
            assert_eq!(mem.get(i).unwrap(), file.get(i).unwrap());
        }
        let sum = mem.verify_checksum().unwrap();
        assert_eq!(sum, file.checksum_hex());
        let entry = TierEntry {
            verified: None,
            distance: None,
            source: None,
            file: "tier-04.owt".into(),
            entries: mem.len(),
            file_size: mem.file_size(),
            checksum: sum,
            stats: None,
        };
        check_table(mem, 4, &Rules::AWARI, Some(&entry)).unwrap();
    }
}

#[test]
fn every_cut_of_a_table_is_an_error() {
    for compression in Compression::ALL {
        let bytes = table_bytes(3, compression);
        for len in 0..bytes.len() {
            let r = Table::from_bytes(bytes[..len].to_vec());
            assert!(r.is_err(), "{compression}: cut at {len} of {}", bytes.len());
        }
    }
}

#[test]
fn every_flipped_byte_of_a_table_is_caught() {
    for compression in Compression::ALL {
        let bytes = table_bytes(3, compression);
        for at in 0..bytes.len() {
            let mut b = bytes.clone();
            b[at] ^= 0x5a;
            let Ok(t) = Table::from_bytes(b) else {
                continue;
            };
            // A flip that the header checks let through is caught by a block checksum or
            // the whole-file checksum.
            let read = t.read_all().is_ok();
            assert!(
                !read || t.verify_checksum().is_err(),
                "{compression}: flip at {at}"
            );
        }
    }
}

#[test]
fn garbage_is_not_a_table() {
    assert!(matches!(
        Table::from_bytes(Vec::new()),
        Err(Error::Truncated { .. })
    ));
    assert!(matches!(
        Table::from_bytes(vec![0; 4096]),
        Err(Error::BadMagic { .. })
    ));
    let mut b = b"OWARE-TB".to_vec();
    b.resize(200, 0xff);
    assert!(Table::from_bytes(b).is_err());
}

fn manifest_with_file(tier: &str, file: &str) -> String {
    format!(
        r#"{{"format": 1, "rules": "abapa", "index": "reachable", "tiers": {{"{tier}":
        {{"file": {file:?}, "entries": 1, "file_size": 136, "checksum": "{}"}}}}}}"#,
        "0".repeat(64)
    )
}

#[test]
fn a_manifest_names_only_files_of_its_directory() {
    assert!(Manifest::parse(&manifest_with_file("0", "tier-00.owt")).is_ok());
    assert!(Manifest::parse(&manifest_with_file("0", "my table")).is_ok());
    for file in [
        "",
        ".",
        "..",
        "../tier-00.owt",
        "/etc/passwd",
        "sub/tier-00.owt",
        "sub\\tier-00.owt",
        "tier-00.owt/",
    ] {
        let e = Manifest::parse(&manifest_with_file("0", file));
        assert!(matches!(e, Err(Error::Manifest { .. })), "{file:?}: {e:?}");
    }
    assert!(Manifest::parse(&manifest_with_file("49", "tier-49.owt")).is_err());
    assert!(Manifest::parse(&manifest_with_file("x", "tier-00.owt")).is_err());
}

#[test]
fn a_bad_manifest_file_names_its_path() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("manifest.json"),
        manifest_with_file("0", "../x"),
    )
    .unwrap();
    match Manifest::load(dir.path()) {
        Err(Error::Manifest { path, detail }) => {
            assert_eq!(path, dir.path().join("manifest.json"));
            assert!(detail.contains("../x"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
}

/// Released pages read back unchanged: a table reads the same after
/// `release_pages`/`release_entries` of any range (past its end included), from its file or
/// from memory.
#[test]
fn released_pages_read_back_unchanged() {
    for compression in Compression::ALL {
        let dir = tempfile::tempdir().unwrap();
        let bytes = table_bytes(9, compression);
        let path = dir.path().join("tier-09.owt");
        std::fs::write(&path, &bytes).unwrap();
        let file = Table::open(&path).unwrap();
        let mem = Table::from_bytes(bytes).unwrap();
        let all = file.read_all().unwrap();
        let len = file.len();
        for table in [&file, &mem] {
            for (first, n) in [
                (0, 1),
                (39, 2),
                (41, len / 3),
                (len - 1, 5),
                (len, 9),
                (0, len),
            ] {
                table.release_entries(first, n);
                assert_eq!(table.read_all().unwrap(), all);
            }
            table.release_pages();
            assert_eq!(table.read_all().unwrap(), all);
            assert_eq!(table.get(len / 2).unwrap(), all[(len / 2) as usize]);
            table.verify_checksum().unwrap();
        }
    }
}
