//! `seeds OUT TABLE...` (an example, so that `cargo fuzz build` leaves it alone): writes
//! into `OUT` each table given (score or distance tables), then each score table's scores
//! re-encoded
//! with other writer settings (small blocks and sub-blocks, short codes, zstd level 1, the
//! dense index), so that the seed corpus of the `table` target holds many blocks, sub-block
//! tables and both codecs from the start. Built and run by `scripts/fuzz`.

use std::path::{Path, PathBuf};

use oware_db::format::{Compression, Values};
use oware_db::index::IndexKind;
use oware_db::table::Table;
use oware_db::write::{write_table_with, WriteOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let out = PathBuf::from(args.next().ok_or("usage: seeds OUT TABLE...")?);
    std::fs::create_dir_all(&out)?;
    let tmp = out.join(".tmp");
    let mut written = 0;
    for (k, path) in args.map(PathBuf::from).enumerate() {
        let t = Table::open(&path)?;
        std::fs::copy(&path, out.join(format!("{k:03}-real-{}", name(&path))))?;
        written += 1;
        if t.values() == Values::Distances {
            // A distance table is re-encoded with its scores only: the real one is the seed.
            continue;
        }
        let scores = t.read_all()?;
        let (tier, rules) = (t.tier(), t.rules());
        let variants = [
            (Compression::Huffman, 64, 3, 7, 0),
            (Compression::Huffman, 300, 0, 15, 0),
            (Compression::Zstd, 100, 0, 0, 1),
        ];
        for (v, &(compression, block_entries, sub_block_shift, code_limit, level)) in
            variants.iter().enumerate()
        {
            let opts = WriteOptions {
                block_entries,
                level,
                compression,
                code_limit: code_limit.max(WriteOptions::MIN_CODE_LIMIT),
                sub_block_shift,
            };
            std::fs::create_dir_all(&tmp)?;
            let w = write_table_with(&tmp, &rules, tier, t.kind(), &scores, &opts)?;
            std::fs::rename(&w.path, out.join(format!("{k:03}-v{v}-{}", name(&path))))?;
            written += 1;
        }
        // The dense index of the small tiers (made-up scores in the tier's range).
        if tier <= 4 {
            let size = oware_db::index::tier_size(tier, IndexKind::Dense) as usize;
            let span = 2 * usize::from(tier) + 1;
            let scores: Vec<i8> = (0..size).map(|i| (i % span) as i8 - tier as i8).collect();
            for compression in Compression::ALL {
                let opts = WriteOptions {
                    block_entries: 50,
                    compression,
                    sub_block_shift: 2,
                    ..WriteOptions::default()
                };
                std::fs::create_dir_all(&tmp)?;
                let w = write_table_with(&tmp, &rules, tier, IndexKind::Dense, &scores, &opts)?;
                let file = format!("{k:03}-dense-{compression}-{}", name(&path));
                std::fs::rename(&w.path, out.join(file))?;
                written += 1;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    println!("{written} seed tables in {}", out.display());
    Ok(())
}

fn name(p: &Path) -> String {
    p.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}
