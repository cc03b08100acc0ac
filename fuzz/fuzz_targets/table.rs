//! A table file from fuzzed bytes (both codecs, ctx-huffman and zstd): the header, the
//! trailer and block index, every block's decoder, probes of single entries, and the plain
//! checks of `check_table`. The checksums are rewritten after the mutation
//! (`fix_checksums`), so the mutations reach the decoders.
//!
//! Properties: no panic, hang or runaway allocation; `get(i)` agrees with `read_all()[i]`;
//! an index past the end is an error. A distance table is also decoded with made-up scores
//! (the context of its ctx-huffman code; some out of the tier's range): distances or an
//! error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oware_db::check::check_table;
use oware_db::format::Values;
use oware_db::manifest::TierEntry;
use oware_db::table::Table;
use oware_fuzz::{fix_checksums, Probe};

/// Tables with more entries than this are probed, not read whole (a few bytes of a corrupt
/// or a real ctx-huffman file can stand for millions of entries: reading them all is
/// legitimate, but slow).
const READ_ALL_MAX: u64 = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    fix_checksums(&mut bytes);
    let Ok(table) = Table::from_bytes(bytes) else {
        return;
    };
    let n = table.len();
    let _ = (table.rules(), table.kind(), table.compression_level());
    let _ = (
        table.block_count(),
        table.bits_per_entry(),
        table.checksum_hex(),
    );
    let checksum = table.verify_checksum();
    let mut probe = Probe::new(data);
    let all = if n <= READ_ALL_MAX {
        table.read_all().ok()
    } else {
        None
    };
    let be = u64::from(table.block_entries());
    // Single entries: the first, the last, the first and last of a block, random ones.
    let mut picks = vec![0, n.saturating_sub(1), be, be.saturating_sub(1)];
    for _ in 0..16 {
        picks.push(probe.next() % n.max(1));
    }
    for i in picks {
        let got = table.get(i);
        match (&all, i < n) {
            (Some(all), true) => assert_eq!(got.ok(), Some(all[i as usize]), "entry {i}"),
            (_, false) => assert!(got.is_err(), "entry {i} of {n}"),
            _ => {}
        }
    }
    // A whole block, read on its own, agrees with read_all.
    if n > 0 && be <= READ_ALL_MAX {
        let b = probe.next() % table.block_count().max(1);
        let first = b * be;
        let len = be.min(n - first.min(n));
        let mut out = vec![0i8; len as usize];
        let r = table.read_into(first, &mut out);
        if let (Some(all), Ok(())) = (&all, r) {
            assert_eq!(&all[first as usize..(first + len) as usize], &out[..]);
        }
    }
    assert!(table.get(n).is_err());
    if table.values() == Values::Distances && n <= READ_ALL_MAX {
        let tier = i64::from(table.tier());
        let span = 2 * tier as u64 + 2;
        let scores: Vec<i8> = (0..n)
            .map(|_| ((probe.next() % span) as i64 - tier) as i8)
            .collect();
        let _ = table.read_distances(&scores);
        if let Ok(d) = table.read_distances(&vec![0; n as usize]) {
            // With every score 0, every entry is none.
            assert!(d.iter().all(|&x| x == 255));
        }
    }
    // The plain checks, recorded as the manifest would record this file.
    if let Ok(sum) = checksum {
        let entry = TierEntry {
            file: String::new(),
            entries: n,
            file_size: table.file_size(),
            checksum: sum,
            stats: None,
            verified: None,
            distance: None,
            source: None,
        };
        let (tier, rules) = (table.tier(), table.rules());
        let _ = check_table(table, tier, &rules, Some(&entry));
    }
});
