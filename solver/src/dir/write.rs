//! The parallel driver of `oware-db`'s table writer: the pair counts of ctx-huffman gathered
//! on every thread, then blocks compressed in parallel in bounded batches and streamed to
//! the file. The bytes are those of [`oware_db::write::write_table_with`].

use oware_db::index::IndexKind;
use oware_db::write::{EncodeScratch, TableEncoder, WriteOptions, WrittenTable};
use oware_db::{Error, Rules};
use rayon::prelude::*;

use super::TableDir;

/// Blocks compressed per parallel batch by default (bounds the compressed bytes held in
/// memory).
pub const DEFAULT_BATCH_BLOCKS: usize = 1024;

/// [`oware_db::write::write_table_with`] on the rayon thread pool: the same file, byte for byte.
/// Blocks are compressed `batch_blocks` at a time (at least 1), so memory is `scores` plus
/// one batch of compressed blocks. Between batches it gives up once `dir`'s writers are
/// cancelled ([`Cancel`](super::Cancel)).
///
/// # Errors
/// As [`oware_db::write::write_table_with`]; an I/O error of kind `Interrupted` once cancelled.
pub fn write_table_parallel(
    dir: &TableDir,
    rules: &Rules,
    tier: u8,
    kind: IndexKind,
    scores: &[i8],
    opts: &WriteOptions,
    batch_blocks: usize,
) -> Result<WrittenTable, Error> {
    let mut encoder = TableEncoder::new(dir.path(), rules, tier, kind, scores, opts)?;
    let block_count = encoder.block_count();
    if encoder.needs_counts() {
        let enc = &encoder;
        let counts = (0..block_count)
            .into_par_iter()
            .try_fold(
                || (enc.empty_counts(), EncodeScratch::default()),
                |(mut counts, mut scratch), b| {
                    enc.count_block(b, &mut counts, &mut scratch)?;
                    Ok::<_, Error>((counts, scratch))
                },
            )
            .map(|r| r.map(|(c, _)| c))
            .try_reduce(
                || enc.empty_counts(),
                |mut a, b| {
                    a.add(&b);
                    Ok(a)
                },
            )?;
        encoder.set_counts(&counts);
    }
    let encoder = &encoder;
    let batch_blocks = batch_blocks.max(1);
    let blocks = (0..block_count)
        .step_by(batch_blocks)
        .flat_map(move |first| {
            let last = (first + batch_blocks).min(block_count);
            if dir.cancel().is_cancelled() {
                let stop = std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted");
                return vec![Err(Error::io(dir.path(), stop))];
            }
            (first..last)
                .into_par_iter()
                .map_init(EncodeScratch::default, |scratch, b| {
                    encoder.encode_block(b, scratch)
                })
                .collect::<Vec<_>>()
        });
    encoder.write(blocks)
}
