//! Untrusted bytes: tables read from memory (`Table::from_bytes`), damaged tables, and
//! manifests that name files outside their directory. Every damaged input is an error,
//! never a panic. The fuzz targets of `fuzz/` (run by `scripts/fuzz`) search the same
//! inputs at random; an input they find that crashes belongs in `fuzz_regressions.rs`.

use oware_db::check::check_table;
use oware_db::format::{Compression, NO_DISTANCE_BYTE};
use oware_db::index::IndexKind;
use oware_db::manifest::{Manifest, TierEntry};
use oware_db::table::Table;
use oware_db::write::{write_distances_with, write_table_with, WriteOptions};
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

/// A small distance table of tier `n` (made-up distances that go with made-up scores: none
/// where the score is 0), in many blocks and sub-blocks: its bytes, the table of its scores
/// (held in memory), the scores and the distances.
fn distance_table_bytes(n: u8, compression: Compression) -> (Vec<u8>, Table, Vec<i8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let size = oware_db::index::tier_size(n, IndexKind::Reachable) as usize;
    let span = 2 * usize::from(n) + 1;
    let scores: Vec<i8> = (0..size)
        .map(|i| ((i * 7 + i / 5) % span) as i8 - n as i8)
        .collect();
    let distances: Vec<u8> = scores
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            if s == 0 {
                NO_DISTANCE_BYTE
            } else {
                ((i * 13) % 37) as u8
            }
        })
        .collect();
    let opts = WriteOptions {
        block_entries: 40,
        compression,
        sub_block_shift: 3,
        ..WriteOptions::distances()
    };
    let w = write_distances_with(
        dir.path(),
        &Rules::AWARI,
        n,
        IndexKind::Reachable,
        &distances,
        &scores,
        &opts,
    )
    .unwrap();
    assert_eq!(w.file, format!("tier-{n:02}.owd"));
    let bytes = std::fs::read(&w.path).unwrap();
    let t = write_table_with(
        dir.path(),
        &Rules::AWARI,
        n,
        IndexKind::Reachable,
        &scores,
        &WriteOptions::default(),
    )
    .unwrap();
    let score_table = Table::from_bytes(std::fs::read(&t.path).unwrap()).unwrap();
    (bytes, score_table, scores, distances)
}

#[test]
fn a_distance_table_from_bytes_reads_with_its_scores() {
    for compression in Compression::ALL {
        let (bytes, score_table, scores, distances) = distance_table_bytes(4, compression);
        let t = Table::from_bytes(bytes).unwrap();
        assert_eq!(t.compression(), compression);
        assert_eq!(t.read_distances(&scores).unwrap(), distances);
        for (i, &d) in distances.iter().enumerate() {
            let want = (d != NO_DISTANCE_BYTE).then_some(u16::from(d));
            assert_eq!(t.get_distance(i as u64, &score_table).unwrap(), want, "{i}");
        }
        assert!(t.get_distance(t.len(), &score_table).is_err());
        // A table of another tier's scores is no context.
        let (_, other, ..) = distance_table_bytes(3, compression);
        if compression == Compression::Huffman {
            assert!(matches!(
                t.get_distance(0, &other),
                Err(Error::InvalidState(_))
            ));
            // Read without its scores, a ctx-huffman distance table is an error, not bytes.
            assert!(matches!(t.read_all(), Err(Error::InvalidState(_))));
            assert!(matches!(t.get(0), Err(Error::InvalidState(_))));
        } else {
            assert_eq!(
                t.read_all().unwrap(),
                distances.iter().map(|&d| d as i8).collect::<Vec<_>>()
            );
        }
        let entry = TierEntry {
            verified: None,
            distance: None,
            source: None,
            file: "tier-04.owd".into(),
            entries: t.len(),
            file_size: t.file_size(),
            checksum: t.verify_checksum().unwrap(),
            stats: None,
        };
        check_table(t, 4, &Rules::AWARI, Some(&entry)).unwrap();
    }
}

#[test]
fn every_cut_of_a_distance_table_is_an_error() {
    let (bytes, ..) = distance_table_bytes(3, Compression::Huffman);
    for len in 0..bytes.len() {
        assert!(
            Table::from_bytes(bytes[..len].to_vec()).is_err(),
            "cut at {len}"
        );
    }
}

#[test]
fn every_flipped_byte_of_a_distance_table_is_caught() {
    let (bytes, score_table, scores, distances) = distance_table_bytes(3, Compression::Huffman);
    for at in 0..bytes.len() {
        for mask in [0x5a, 0x01, 0x80] {
            let mut b = bytes.clone();
            b[at] ^= mask;
            let Ok(t) = Table::from_bytes(b) else {
                continue;
            };
            // A flip that the header checks let through is caught by a block checksum or
            // the whole-file checksum; probes give the right distance or an error.
            let read = t.read_distances(&scores);
            assert!(
                read.is_err() || t.verify_checksum().is_err(),
                "flip {mask:#x} at {at}"
            );
            if let Ok(read) = read {
                assert_eq!(read, distances, "flip {mask:#x} at {at}");
            }
            for i in 0..t.len() {
                if let Ok(d) = t.get_distance(i, &score_table) {
                    let want = distances[i as usize];
                    assert_eq!(d, (want != NO_DISTANCE_BYTE).then_some(u16::from(want)));
                }
            }
        }
    }
}

/// A damaged block whose checksum was made to match again (what a fuzzer reaches): its
/// decoder reports the damage, or reads distances, and never panics; scores out of range
/// are errors too.
#[test]
fn damaged_distance_blocks_behind_good_checksums_are_errors_not_panics() {
    let (bytes, _, scores, _) = distance_table_bytes(5, Compression::Huffman);
    let t = Table::from_bytes(bytes.clone()).unwrap();
    let blocks = t.block_count() as usize;
    // The block index: `blocks` entries of 16 bytes before the 56-byte trailer.
    let index = bytes.len() - 56 - 16 * blocks;
    let start = |b: usize| {
        let e = index + 16 * b;
        u64::from_le_bytes(bytes[e..e + 8].try_into().unwrap()) as usize
    };
    let mut damaged = 0;
    for b in 0..blocks.min(12) {
        let (from, to) = (start(b), if b + 1 < blocks { start(b + 1) } else { index });
        for at in from..to {
            let mut x = bytes.clone();
            x[at] ^= 0x24;
            let sum = xxhash_rust::xxh3::xxh3_64(&x[from..to]);
            let e = index + 16 * b + 8;
            x[e..e + 8].copy_from_slice(&sum.to_le_bytes());
            let t = Table::from_bytes(x).unwrap();
            if t.read_distances(&scores).is_err() {
                damaged += 1;
            }
        }
    }
    assert!(damaged > 0);
    let mut wild = scores.clone();
    wild[1] = 100;
    assert!(matches!(
        t.read_distances(&wild),
        Err(Error::CorruptBlock { .. })
    ));
    assert!(t.read_distances(&scores[1..]).is_err());
}

/// `Tablebase::distance` with the tier's distance table open decodes the scores of the
/// position's sub-block once, up to its entry, for both the score and the distance's context:
/// its answers are those of `Table::get_distance`, and a damaged score block is an error,
/// never a wrong distance.
#[test]
fn distance_probes_that_decode_the_scores_once_answer_the_same() {
    use oware_db::index::TierIndex;
    use oware_db::Tablebase;
    let n = 8;
    let size = oware_db::index::tier_size(n, IndexKind::Reachable) as usize;
    let span = 2 * usize::from(n) + 1;
    let scores: Vec<i8> = (0..size)
        .map(|i| ((i * 7 + i / 5) % span) as i8 - n as i8)
        .collect();
    let distances: Vec<u8> = scores
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            if s == 0 {
                NO_DISTANCE_BYTE
            } else {
                ((i * 13) % 37) as u8
            }
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let kind = IndexKind::Reachable;
    let t = write_table_with(
        dir.path(),
        &Rules::AWARI,
        n,
        kind,
        &scores,
        &WriteOptions::default(),
    )
    .unwrap();
    write_distances_with(
        dir.path(),
        &Rules::AWARI,
        n,
        kind,
        &distances,
        &scores,
        &WriteOptions::distances(),
    )
    .unwrap();
    let index = TierIndex::new(n, kind);
    let check = |damaged: bool| {
        let tb = Tablebase::open_with_rules(dir.path(), &Rules::AWARI).unwrap();
        tb.distance_table(n).unwrap();
        let mut errors = 0;
        for i in 0..size as u64 {
            let p = index.unrank(i);
            if p.moves(&Rules::AWARI).is_empty() {
                continue;
            }
            let want = distances[i as usize];
            match tb.distance(&p) {
                Ok(d) => assert_eq!(d, (want != NO_DISTANCE_BYTE).then_some(u16::from(want))),
                Err(e) if damaged => {
                    errors += 1;
                    let _ = e.to_string();
                }
                Err(e) => panic!("{p}: {e}"),
            }
        }
        errors
    };
    assert_eq!(check(false), 0);
    // Damage one byte in the middle of the score table's blocks.
    let mut bytes = std::fs::read(&t.path).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x5a;
    std::fs::write(&t.path, &bytes).unwrap();
    assert!(check(true) > 0);
}
