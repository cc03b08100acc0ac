//! The writer of tier tables (format in `db/FORMAT.md`): blocks compressed in parallel in
//! bounded batches and streamed to a temporary file that is renamed into place. With
//! ctx-huffman (the default) a first parallel pass counts the (previous, current) score
//! pairs of the whole tier to build the table's order-1 model.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use oware_db::format::{self, Compression, Header};
use oware_db::huffman::{self, Model};
use oware_db::manifest::sync_dir;
use oware_db::{Error, IndexKind, Position, Rules, TierIndex};
use rayon::prelude::*;

/// What [`write_table`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenTable {
    /// The file name only, e.g. `tier-07.owt`.
    pub file: String,
    /// The full path.
    pub path: PathBuf,
    /// The file's size in bytes.
    pub file_size: u64,
    /// The whole-file checksum (blake3, hex).
    pub checksum: String,
}

/// Settings of the writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// Entries per block: larger blocks compress better and probe slower.
    pub block_entries: u32,
    /// The zstd level (zstd only).
    pub level: i32,
    /// Blocks compressed per parallel batch (bounds the compressed bytes held in memory).
    pub batch_blocks: usize,
    /// How blocks are compressed (default ctx-huffman).
    pub compression: Compression,
    /// ctx-huffman: the longest code in bits (`huffman::MIN_LIMIT ..= huffman::MAX_LIMIT`).
    pub code_limit: u8,
    /// ctx-huffman: log2 of the entries per sub-block (`0 ..= huffman::MAX_SUB_BLOCK_SHIFT`).
    pub sub_block_shift: u8,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            block_entries: format::DEFAULT_BLOCK_ENTRIES,
            level: format::DEFAULT_LEVEL,
            batch_blocks: 1024,
            compression: Compression::default(),
            code_limit: format::DEFAULT_CODE_LIMIT,
            sub_block_shift: format::DEFAULT_SUB_BLOCK_SHIFT,
        }
    }
}

/// Writes the table of tier `tier` to `dir/tier-NN.owt` with the default [`WriteOptions`].
/// `scores[i]` is the score of the position of index `i` of `TierIndex::new(tier, kind)`.
///
/// # Errors
/// [`Error::Io`]; [`Error::InvalidState`] if `scores` is not the tier's size.
pub fn write_table(
    dir: &Path,
    rules: &Rules,
    tier: u8,
    kind: IndexKind,
    scores: &[i8],
) -> Result<WrittenTable, Error> {
    write_table_with(dir, rules, tier, kind, scores, &WriteOptions::default())
}

/// A `Write` that counts and hashes what passes through.
struct Hashing<W: Write> {
    inner: W,
    hasher: blake3::Hasher,
    written: u64,
}

impl<W: Write> Hashing<W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.inner.write_all(bytes)?;
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
        Ok(())
    }
}

/// The bytes of block `b` as written: for the dense index, entries the probe never reads
/// (positions no move can reach, answered by a one-ply search) repeat the previous entry
/// so that they extend runs; the reachable index stores every entry as given.
fn block_source<'a>(
    scores: &'a [i8],
    idx: &TierIndex,
    start: u64,
    scratch: &'a mut Vec<u8>,
) -> &'a [u8] {
    scratch.clear();
    scratch.extend(scores.iter().map(|&v| v as u8));
    if idx.kind() == IndexKind::Dense {
        let mut prev = 0u8;
        for (k, v) in scratch.iter_mut().enumerate() {
            let p: Position = idx.unrank(start + k as u64);
            if p.is_reachable() {
                prev = *v;
            } else {
                *v = prev;
            }
        }
    }
    scratch
}

/// The ctx-huffman model of a tier: the (context, symbol) pairs of every block as written
/// (see [`block_source`]), counted in parallel.
fn build_model(
    scores: &[i8],
    idx: &TierIndex,
    tier: u8,
    be: usize,
    opts: &WriteOptions,
) -> Result<Model, Error> {
    if !(huffman::MIN_LIMIT..=huffman::MAX_LIMIT).contains(&opts.code_limit) {
        return Err(Error::InvalidState(format!(
            "code length limit {} outside {}..={}",
            opts.code_limit,
            huffman::MIN_LIMIT,
            huffman::MAX_LIMIT
        )));
    }
    if opts.sub_block_shift > huffman::MAX_SUB_BLOCK_SHIFT {
        return Err(Error::InvalidState(format!(
            "sub-block shift {} above {}",
            opts.sub_block_shift,
            huffman::MAX_SUB_BLOCK_SHIFT
        )));
    }
    let s = huffman::symbol_count(tier);
    let counts = scores
        .par_chunks(be)
        .enumerate()
        .try_fold(
            || (vec![0u64; s * s], Vec::new()),
            |(mut counts, mut scratch), (b, chunk)| {
                let src = block_source(chunk, idx, (b * be) as u64, &mut scratch);
                Model::count_block(tier, src, opts.sub_block_shift, &mut counts)?;
                Ok::<_, String>((counts, scratch))
            },
        )
        .map(|r| r.map(|(c, _)| c))
        .try_reduce(
            || vec![0u64; s * s],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                Ok(a)
            },
        )
        .map_err(|e| Error::InvalidState(format!("tier {tier}: {e}")))?;
    Ok(Model::from_counts(tier, &counts, opts.code_limit))
}

/// As [`write_table`], with explicit settings.
///
/// Writes `tier-NN.owt.tmp`, fsyncs it, renames it to `tier-NN.owt` and fsyncs the
/// directory, so a half-written file is never taken for a good one. Memory: `scores` plus
/// one batch of compressed blocks.
///
/// # Errors
/// As [`write_table`]; also [`Error::InvalidState`] for a ctx-huffman table with a score
/// outside `−tier ..= tier` or settings out of range.
pub fn write_table_with(
    dir: &Path,
    rules: &Rules,
    tier: u8,
    kind: IndexKind,
    scores: &[i8],
    opts: &WriteOptions,
) -> Result<WrittenTable, Error> {
    let block_entries = opts.block_entries.clamp(1, format::MAX_BLOCK_ENTRIES);
    let mut header = Header::new(rules, tier, kind, block_entries, opts.level);
    if scores.len() as u64 != header.entries {
        return Err(Error::InvalidState(format!(
            "tier {tier} ({}) has {} entries, {} scores given",
            kind.name(),
            header.entries,
            scores.len()
        )));
    }
    let idx = TierIndex::new(tier, kind);
    let be = block_entries as usize;
    let block_count = header.block_count() as usize;
    let model = match opts.compression {
        Compression::Zstd => None,
        Compression::Huffman => {
            let model = build_model(scores, &idx, tier, be, opts)?;
            header.compression = Compression::Huffman;
            header.level = 0;
            header.code_limit = opts.code_limit;
            header.sub_block_shift = opts.sub_block_shift;
            header.model = model.lengths().to_vec();
            Some(model)
        }
    };
    let name = format::tier_file_name(tier);
    let path = dir.join(&name);
    let tmp = dir.join(format!("{name}.tmp"));
    let file = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let io = |e| Error::io(&tmp, e);
    let mut out = Hashing {
        inner: BufWriter::with_capacity(1 << 20, file),
        hasher: blake3::Hasher::new(),
        written: 0,
    };
    out.put(&header.encode()).map_err(io)?;
    let batch_blocks = opts.batch_blocks.max(1);
    let mut index = Vec::with_capacity(block_count * format::INDEX_ENTRY);
    let level = opts.level;
    for first in (0..block_count).step_by(batch_blocks) {
        let last = (first + batch_blocks).min(block_count);
        let compressed: Vec<std::io::Result<Vec<u8>>> = (first..last)
            .into_par_iter()
            .map_init(
                || (None, Vec::new()),
                |(comp, scratch), b| {
                    let chunk = &scores[b * be..((b + 1) * be).min(scores.len())];
                    let src = block_source(chunk, &idx, (b * be) as u64, scratch);
                    if let Some(m) = &model {
                        let mut out = Vec::new();
                        m.encode_block(src, opts.sub_block_shift, &mut out)
                            .map_err(std::io::Error::other)?;
                        return Ok(out);
                    }
                    if comp.is_none() {
                        *comp = Some(zstd::bulk::Compressor::new(level)?);
                    }
                    match comp.as_mut() {
                        Some(c) => c.compress(src),
                        None => Err(std::io::Error::other("no zstd context")),
                    }
                },
            )
            .collect();
        for c in compressed {
            let c = c.map_err(io)?;
            index.extend_from_slice(&format::encode_index_entry(
                out.written,
                format::block_checksum(&c),
            ));
            out.put(&c).map_err(io)?;
        }
    }
    let index_offset = out.written;
    out.put(&index).map_err(io)?;
    out.put(&format::encode_trailer_head(
        index_offset,
        block_count as u64,
    ))
    .map_err(io)?;
    let sum = out.hasher.finalize();
    let Hashing {
        mut inner, written, ..
    } = out;
    inner.write_all(sum.as_bytes()).map_err(io)?;
    let file = inner.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)?;
    drop(file);
    fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
    sync_dir(dir)?;
    Ok(WrittenTable {
        file: name,
        path,
        file_size: written + format::CHECKSUM_LEN as u64,
        checksum: format::hex(sum.as_bytes()),
    })
}
