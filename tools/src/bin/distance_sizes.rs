//! Sizes of a directory's distance tables under both codes: for each tier with a distance
//! table, its distances (read with the tier's scores) written again as ctx-huffman in the
//! context of the scores (the default of `oware generate`) and compared with zstd (the
//! table in the directory when it is zstd, as earlier versions wrote it; else the distances
//! written as zstd, 1024 entries per block, level 9). Prints the bits per position of each,
//! the share of positions scored 0 (which cost nothing in the new code), the model's bucket
//! count `K` and alphabet `A` (db/FORMAT.md), and checks that the new table reads back.
//!
//! ```text
//! cargo run --release -p oware-tools --bin distance_sizes -- DIR [FIRST [LAST]]
//! ```

use std::path::PathBuf;

use anyhow::{bail, Context};
use oware_db::format::{distance_file_name, tier_file_name, Compression, Values};
use oware_db::table::Table;
use oware_db::write::{write_distances_with, WriteOptions};
use oware_solver::dir::{read_distances, read_table, write_distances_parallel};
use oware_solver::{Cancel, TableDir};

/// The bucket count and alphabet stored at the head of a ctx-huffman distance table's model
/// (after the 48-byte fixed header and the rules text, padded to 8).
fn model_head(bytes: &[u8]) -> Option<(u8, u8)> {
    let rules = usize::from(u16::from_le_bytes([*bytes.get(36)?, *bytes.get(37)?]));
    let at = 48 + rules.div_ceil(8) * 8;
    Some((*bytes.get(at)?, *bytes.get(at + 1)?))
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .context("usage: distance_sizes DIR [FIRST [LAST]]")?,
    );
    let first: u8 = args.next().map_or(Ok(0), |a| a.parse())?;
    let last: u8 = args.next().map_or(Ok(48), |a| a.parse())?;
    let tmp = dir.join(".distance-sizes");
    std::fs::create_dir_all(&tmp)?;
    let cancel = Cancel::new();
    let out = TableDir::new(&tmp, &cancel);
    println!("tier  positions  score 0   zstd b/pos  new b/pos  new/zstd   K    A");
    for n in first..=last {
        let dpath = dir.join(distance_file_name(n));
        if !dpath.exists() {
            continue;
        }
        let scores_table = Table::open(&dir.join(tier_file_name(n)))?;
        let dtable = Table::open(&dpath)?;
        if dtable.values() != Values::Distances || dtable.tier() != n {
            bail!("{}: not the distances of tier {n}", dpath.display());
        }
        let scores = read_table(&scores_table)?;
        let distances = read_distances(&dtable, &scores)?;
        let (rules, kind) = (scores_table.rules(), scores_table.kind());
        let zstd_size = if dtable.compression() == Compression::Zstd {
            dtable.file_size()
        } else {
            let opts = WriteOptions {
                compression: Compression::Zstd,
                ..WriteOptions::default()
            };
            let w = write_distances_with(&tmp, &rules, n, kind, &distances, &scores, &opts)?;
            w.file_size
        };
        let w = write_distances_parallel(&out, &rules, n, kind, &distances, &scores, 1024)?;
        let bytes = std::fs::read(&w.path)?;
        let (k, a) = model_head(&bytes).context("a ctx-huffman header")?;
        let back = Table::open(&w.path)?;
        if read_distances(&back, &scores)? != distances {
            bail!("tier {n}: the new table does not read back");
        }
        let len = scores.len() as f64;
        let zeros = scores.iter().filter(|&&s| s == 0).count() as f64;
        let (z, h) = (zstd_size as f64 * 8.0 / len, w.file_size as f64 * 8.0 / len);
        println!(
            "{n:4} {:10} {:7.1} % {z:11.3} {h:10.3} {:8.3} {k:4} {a:4}",
            scores.len(),
            100.0 * zeros / len,
            h / z
        );
        std::fs::remove_file(&w.path)?;
    }
    std::fs::remove_dir_all(&tmp)?;
    Ok(())
}
