//! Tiers to and from the files of the Romein-Bal databases (`scores.N`, one byte per
//! position in their order, [`RomeinOrder`]) at any size: the target is filled one range
//! at a time, each from a sequential read of the whole source, so that memory holds one
//! range (and what reads the source) whatever the tier.

use std::io::Write;
use std::path::Path;

use oware_db::format::Compression;
use oware_db::index::{IndexKind, TierIndex};
use oware_db::romein::RomeinOrder;
use oware_db::table::Table;
use oware_db::write::{EncodeScratch, TableEncoder, WriteOptions, WrittenTable};
use oware_db::{Error, Rules};
use rayon::prelude::*;

use super::read::read_range_parallel;
use super::TableDir;

/// Entries of our table decoded at a time while exporting.
const DECODE_ENTRIES: u64 = 1 << 24;

/// Positions of our order per parallel task while exporting.
const TASK: usize = 1 << 16;

/// Bytes an export of tier `n` holds besides its range of the output: one chunk of
/// decoded scores.
pub fn export_overhead(n: u8) -> u64 {
    DECODE_ENTRIES.min(TierIndex::new(n, IndexKind::Reachable).size())
}

/// Writes `table` (a tier of the reachable index) as the Romein-Bal file `file`: the file's
/// bytes are filled `range` at a time (at least one), each range from a decoding of the
/// whole table in order, in chunks, on the rayon pool; memory is one range plus one chunk of
/// scores ([`export_overhead`]). The file is written to `file` + `.tmp` and renamed into
/// place; a failure removes the temporary. Gives up between chunks once `dir`'s writers are
/// cancelled. Returns the file's blake3 hash (hex), computed as it is written.
///
/// # Errors
/// [`Error::InvalidState`] for a table of another index; the errors of reading `table`;
/// [`Error::Io`] writing the file; an I/O error of kind `Interrupted` once cancelled.
pub fn export_romein(
    dir: &TableDir,
    table: &Table,
    file: &Path,
    range: u64,
) -> Result<String, Error> {
    let tmp = file.with_file_name(format!(
        "{}.tmp",
        file.file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().into_owned())
    ));
    let result = export_into(dir, table, &tmp, range).and_then(|sum| {
        std::fs::rename(&tmp, file).map_err(|e| Error::io(file, e))?;
        Ok(sum)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn export_into(dir: &TableDir, table: &Table, tmp: &Path, range: u64) -> Result<String, Error> {
    let n = table.tier();
    if table.kind() != IndexKind::Reachable {
        return Err(Error::InvalidState(format!(
            "{}: the `{}` index; the Romein-Bal files hold the reachable positions",
            table.path().display(),
            table.kind().name()
        )));
    }
    let order = RomeinOrder::new(n);
    let size = order.size();
    let index = TierIndex::new(n, IndexKind::Reachable);
    let range = range.clamp(1, size.max(1));
    let chunk_len = DECODE_ENTRIES.min(size) as usize;
    let mut chunk = vec![0i8; chunk_len];
    let mut out = vec![0u8; range.min(size) as usize];
    let f = std::fs::File::create(tmp).map_err(|e| Error::io(tmp, e))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    let mut hasher = blake3::Hasher::new();
    let mut g0 = 0u64;
    while g0 < size {
        let g1 = (g0 + range).min(size);
        let out = &mut out[..(g1 - g0) as usize];
        let mut at = 0u64;
        while at < size {
            if dir.cancel().is_cancelled() {
                let stop = std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted");
                return Err(Error::io(dir.path(), stop));
            }
            let len = (size - at).min(chunk_len as u64) as usize;
            let scores = &mut chunk[..len];
            read_range_parallel(table, at, scores)?;
            let to = super::read::Scattered(out.as_mut_ptr().cast::<i8>());
            scores.par_chunks(TASK).enumerate().for_each(|(k, part)| {
                let first = at + (k * TASK) as u64;
                let cursor = index.cursor(first, first + part.len() as u64);
                for (p, &v) in cursor.zip(part) {
                    let g = order.rank_unchecked(&p);
                    if (g0..g1).contains(&g) {
                        // SAFETY: `g - g0 < out.len()`; each position has one Goedel
                        // number, so no two writes reach the same byte, and `out` is not
                        // otherwise touched until every task has finished.
                        unsafe { to.write((g - g0) as usize, v) };
                    }
                }
            });
            at += len as u64;
        }
        w.write_all(out).map_err(|e| Error::io(tmp, e))?;
        hasher.update(out);
        g0 = g1;
    }
    let f = w.into_inner().map_err(|e| Error::io(tmp, e.into_error()))?;
    f.sync_all().map_err(|e| Error::io(tmp, e))?;
    Ok(hasher.finalize().to_hex().to_string())
}

/// Writes the Romein-Bal file `source` (opened with [`Table::open_romein`]) as the table of
/// its tier in `dir` under `rules` with `opts` (`tier-NN.owt`, byte for byte the table that
/// [`write_table_parallel`](super::write::write_table_parallel) writes from the same scores):
/// the table's scores are filled `range` at a time (rounded down to whole blocks, at least
/// one), each range from a sequential read of the whole source; with ctx-huffman, one pass
/// over the ranges counts the model's pairs and a second encodes. Memory is one range of
/// scores plus its encoded blocks. Gives up between ranges once `dir`'s writers are
/// cancelled.
///
/// # Errors
/// [`Error::InvalidState`] when `source` is not a Romein-Bal file; [`Error::RomeinScore`]
/// for a byte out of range; as [`TableEncoder::write`]; an I/O error of kind `Interrupted`
/// once cancelled.
pub fn import_romein(
    dir: &TableDir,
    rules: &Rules,
    source: &Table,
    opts: &WriteOptions,
    range: u64,
) -> Result<WrittenTable, Error> {
    if source.romein().is_none() {
        return Err(Error::InvalidState(format!(
            "{}: not a Romein-Bal file",
            source.path().display()
        )));
    }
    let n = source.tier();
    let kind = IndexKind::Reachable;
    let size = source.len();
    let be = u64::from(opts.block_entries.max(1));
    let range = (range / be).max(1) * be;
    let ranges: Vec<(u64, u64)> = (0..size.div_ceil(range))
        .map(|k| (k * range, ((k + 1) * range).min(size)))
        .collect();
    let cancelled = || {
        dir.cancel().is_cancelled().then(|| {
            let stop = std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted");
            Error::io(dir.path(), stop)
        })
    };
    let fill = |(a, b): (u64, u64)| -> Result<Vec<i8>, Error> {
        if let Some(e) = cancelled() {
            return Err(e);
        }
        let mut s = vec![0i8; (b - a) as usize];
        read_range_parallel(source, a, &mut s)?;
        Ok(s)
    };
    fn part<'s>(
        dir: &TableDir,
        rules: &Rules,
        n: u8,
        a: u64,
        be: u64,
        s: &'s [i8],
        opts: &WriteOptions,
    ) -> Result<TableEncoder<'s>, Error> {
        let first = (a / be) as usize;
        TableEncoder::for_blocks(dir.path(), rules, n, IndexKind::Reachable, first, s, opts)
    }
    let mut writer = TableEncoder::for_blocks(dir.path(), rules, n, kind, 0, &[], opts)?;
    let mut counts = None;
    if opts.compression == Compression::Huffman {
        let mut total = writer.empty_counts();
        for &(a, b) in &ranges {
            let s = fill((a, b))?;
            let enc = part(dir, rules, n, a, be, &s, opts)?;
            let c = super::write::count_blocks(&enc)?;
            total.add(&c);
        }
        writer.set_counts(&total);
        counts = Some(total);
    }
    let blocks = ranges.into_iter().flat_map(|(a, b)| {
        let encoded = fill((a, b)).and_then(|s| {
            let mut enc = part(dir, rules, n, a, be, &s, opts)?;
            if let Some(c) = &counts {
                enc.set_counts(c);
            }
            Ok(enc
                .held_blocks()
                .into_par_iter()
                .map_init(EncodeScratch::default, |scratch, blk| {
                    enc.encode_block(blk, scratch)
                })
                .collect::<Vec<_>>())
        });
        match encoded {
            Ok(v) => v,
            Err(e) => vec![Err(e)],
        }
    });
    writer.write(blocks)
}
