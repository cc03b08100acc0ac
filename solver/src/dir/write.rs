//! The parallel driver of `oware-db`'s table writer: the pair counts of ctx-huffman gathered
//! on every thread, then blocks compressed in parallel in bounded batches and streamed to
//! the file. The bytes are those of [`oware_db::write::write_table_with`].

use oware_db::index::IndexKind;
use oware_db::write::{EncodeScratch, TableEncoder, WriteOptions, WrittenTable};
use oware_db::{Error, Rules};
use rayon::prelude::*;

use super::TableDir;
use crate::solve::SpilledDistances;
use crate::SolveError;

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
    let encoder = TableEncoder::new(dir.path(), rules, tier, kind, scores, opts)?;
    write_encoded(dir, encoder, batch_blocks)
}

/// The distance table of tier `tier` (`tier-NN.owd`) from its distances, one byte each as
/// [`tier_distances`](crate::tier::tier_distances) gives them, and the tier's `scores`: ctx-huffman
/// in the context of each position's score, with the settings of
/// [`WriteOptions::distances`], counted and encoded on the rayon thread pool as
/// [`write_table_parallel`] does. The bytes are those of
/// [`oware_db::write::write_distances_with`].
///
/// # Errors
/// As [`write_table_parallel`]; [`Error::InvalidState`] when `scores` is not as long as
/// `distances`, or a distance does not go with its score (a distance where the score is 0,
/// none where it is not).
pub fn write_distances_parallel(
    dir: &TableDir,
    rules: &Rules,
    tier: u8,
    kind: IndexKind,
    distances: &[u8],
    scores: &[i8],
    batch_blocks: usize,
) -> Result<WrittenTable, Error> {
    let opts = WriteOptions::distances();
    let encoder =
        TableEncoder::for_distances(dir.path(), rules, tier, kind, distances, scores, &opts)?;
    write_encoded(dir, encoder, batch_blocks)
}

/// [`write_distances_parallel`] from distances kept out of core ([`SpilledDistances`]): each
/// window is read twice, once to count and once to encode, and blocks are encoded
/// `batch_blocks` at a time, so memory is `scores`, one window and one batch. The same
/// bytes as from the distances held whole.
///
/// # Errors
/// As [`write_distances_parallel`]; [`Error::Io`] when a scratch file cannot be read.
pub fn write_distances_spilled(
    dir: &TableDir,
    rules: &Rules,
    tier: u8,
    spilled: &SpilledDistances,
    scores: &[i8],
    batch_blocks: usize,
) -> Result<WrittenTable, Error> {
    let opts = WriteOptions::distances();
    let be = u64::from(opts.block_entries);
    debug_assert_eq!(crate::solve::WINDOW_ALIGN % be, 0);
    let windows: Vec<std::ops::Range<u64>> = spilled.windows().collect();
    let read = |w: usize, buf: &mut Vec<u8>| {
        spilled.read(w, buf).map_err(|e| match e {
            SolveError::Scratch { path, source, .. } => Error::io(path, source),
            other => Error::InvalidState(other.to_string()),
        })
    };
    let mut head = distance_blocks(dir, rules, tier, scores, 0, &[], &opts)?;
    let mut counts = head.empty_counts();
    let mut buf = Vec::new();
    for (w, range) in windows.iter().enumerate() {
        read(w, &mut buf)?;
        let part = distance_blocks(dir, rules, tier, scores, range.start, &buf, &opts)?;
        counts.add(&count_blocks(&part)?);
    }
    head.set_counts(&counts);
    let head = &head;
    let batch = batch_blocks.max(1) as u64 * be;
    // The blocks, a batch at a time: the window that holds them read when first reached.
    let (mut w, mut at, mut loaded) = (0, 0u64, usize::MAX);
    let mut ready: std::collections::VecDeque<Result<Vec<u8>, Error>> = Default::default();
    let blocks = std::iter::from_fn(move || loop {
        if let Some(block) = ready.pop_front() {
            return Some(block);
        }
        let range = windows.get(w)?;
        let mut step = || {
            if dir.cancel().is_cancelled() {
                let stop = std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted");
                return Err(Error::io(dir.path(), stop));
            }
            if loaded != w {
                read(w, &mut buf)?;
                (loaded, at) = (w, 0);
            }
            let end = (at + batch).min(buf.len() as u64);
            let distances = &buf[at as usize..end as usize];
            let mut part =
                distance_blocks(dir, rules, tier, scores, range.start + at, distances, &opts)?;
            part.set_model_of(head)?;
            let part = &part;
            ready.extend(
                part.held_blocks()
                    .into_par_iter()
                    .map_init(EncodeScratch::default, |scratch, b| {
                        part.encode_block(b, scratch)
                    })
                    .collect::<Vec<_>>(),
            );
            at = end;
            if at == buf.len() as u64 {
                w += 1;
            }
            Ok(())
        };
        if let Err(e) = step() {
            w = windows.len();
            return Some(Err(e));
        }
    });
    head.write(blocks)
}

/// The encoder of the distance blocks of tier `tier` from index `first` on (a whole number
/// of blocks) that `distances` covers, in the context of the tier's `scores`.
fn distance_blocks<'a>(
    dir: &TableDir,
    rules: &Rules,
    tier: u8,
    scores: &'a [i8],
    first: u64,
    distances: &'a [u8],
    opts: &WriteOptions,
) -> Result<TableEncoder<'a>, Error> {
    let at = first as usize..first as usize + distances.len();
    let scores = scores
        .get(at)
        .ok_or_else(|| Error::InvalidState(format!("tier {tier}: fewer scores than distances")))?;
    TableEncoder::for_distance_blocks(
        dir.path(),
        rules,
        tier,
        (first / u64::from(opts.block_entries)) as usize,
        distances,
        scores,
        opts,
    )
}

/// The pair counts of the blocks `encoder` holds, on the current rayon pool.
pub(crate) fn count_blocks(
    encoder: &TableEncoder<'_>,
) -> Result<oware_db::write::ModelCounts, Error> {
    encoder
        .held_blocks()
        .into_par_iter()
        .try_fold(
            || (encoder.empty_counts(), EncodeScratch::default()),
            |(mut counts, mut scratch), b| {
                encoder.count_block(b, &mut counts, &mut scratch)?;
                Ok::<_, Error>((counts, scratch))
            },
        )
        .map(|r| r.map(|(c, _)| c))
        .try_reduce(
            || encoder.empty_counts(),
            |mut a, b| {
                a.add(&b);
                Ok(a)
            },
        )
}

/// Counts (ctx-huffman) and encodes the blocks of `encoder` on the rayon pool, `batch_blocks`
/// at a time, and writes the file.
fn write_encoded(
    dir: &TableDir,
    mut encoder: TableEncoder<'_>,
    batch_blocks: usize,
) -> Result<WrittenTable, Error> {
    let block_count = encoder.block_count();
    if encoder.needs_counts() {
        let counts = count_blocks(&encoder)?;
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
