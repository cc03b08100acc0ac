//! The writer of tier tables (format in `db/FORMAT.md`): blocks encoded in order and streamed
//! to a temporary file that is renamed into place. With ctx-huffman (the default) a first
//! pass counts the (previous, current) score pairs of the whole tier to build the table's
//! order-1 model.
//!
//! [`write_table_with`] does every step on the calling thread. [`TableEncoder`] offers the
//! same steps one block at a time, for a caller that counts and encodes blocks on several
//! threads (the library itself starts no thread); the bytes written are the same.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::format::{self, Compression, Header, Values};
use crate::huffman::distance::{self as dist, DistanceModel};
use crate::huffman::{self, Model};
use crate::index::{IndexKind, TierIndex};
use crate::manifest::sync_dir;
use crate::position::Position;
use crate::rules::Rules;

/// What a table writer wrote.
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

/// Settings of the writer. The associated constants are the defaults and the accepted
/// ranges (for command-line flags, say).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// Entries per block: larger blocks compress better and probe slower (clamped to
    /// `1 ..= WriteOptions::MAX_BLOCK_ENTRIES`).
    pub block_entries: u32,
    /// The zstd level (zstd only).
    pub level: i32,
    /// How blocks are compressed (default ctx-huffman).
    pub compression: Compression,
    /// ctx-huffman: the longest code in bits
    /// (`WriteOptions::MIN_CODE_LIMIT ..= WriteOptions::MAX_CODE_LIMIT`).
    pub code_limit: u8,
    /// ctx-huffman: log2 of the entries per sub-block
    /// (`0 ..= WriteOptions::MAX_SUB_BLOCK_SHIFT`).
    pub sub_block_shift: u8,
}

impl WriteOptions {
    /// Default entries per block.
    pub const DEFAULT_BLOCK_ENTRIES: u32 = 1024;
    /// The largest block, in entries, that tables may have (the reader refuses larger ones).
    pub const MAX_BLOCK_ENTRIES: u32 = format::MAX_BLOCK_ENTRIES;
    /// Default zstd level.
    pub const DEFAULT_LEVEL: i32 = 9;
    /// Default code length limit of ctx-huffman, in bits (the decode table has `2^limit`
    /// entries per context).
    pub const DEFAULT_CODE_LIMIT: u8 = 12;
    /// The shortest code length limit the writer accepts: enough for the 97 scores of
    /// tier 48.
    pub const MIN_CODE_LIMIT: u8 = huffman::MIN_LIMIT;
    /// The longest code length limit the format allows.
    pub const MAX_CODE_LIMIT: u8 = huffman::MAX_LIMIT;
    /// Default sub-block of ctx-huffman, as a shift: 256 entries.
    pub const DEFAULT_SUB_BLOCK_SHIFT: u8 = 8;
    /// The largest sub-block of ctx-huffman the format allows, as a shift: 4096 entries.
    pub const MAX_SUB_BLOCK_SHIFT: u8 = huffman::MAX_SUB_BLOCK_SHIFT;
    /// Default entries per block of a distance table ([`WriteOptions::distances`]): 4096, so
    /// that the block index (16 bytes a block) costs a 32nd of a bit per position; a probe
    /// still decodes one sub-block only.
    pub const DEFAULT_DISTANCE_BLOCK_ENTRIES: u32 = 4096;
    /// The shortest code length limit the writer accepts for a ctx-huffman distance table:
    /// enough for the 255 distances.
    pub const MIN_DISTANCE_CODE_LIMIT: u8 = dist::MIN_LIMIT;

    /// The default settings of a distance table: ctx-huffman in the context of the scores,
    /// [`WriteOptions::DEFAULT_DISTANCE_BLOCK_ENTRIES`] entries per block, the default code
    /// length limit and sub-block.
    pub fn distances() -> Self {
        WriteOptions {
            block_entries: Self::DEFAULT_DISTANCE_BLOCK_ENTRIES,
            ..WriteOptions::default()
        }
    }
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            block_entries: Self::DEFAULT_BLOCK_ENTRIES,
            level: Self::DEFAULT_LEVEL,
            compression: Compression::default(),
            code_limit: Self::DEFAULT_CODE_LIMIT,
            sub_block_shift: Self::DEFAULT_SUB_BLOCK_SHIFT,
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

/// As [`write_table`], with explicit settings, on the calling thread (see [`TableEncoder`]
/// to spread the work over threads).
///
/// Writes `tier-NN.owt.tmp`, fsyncs it, renames it to `tier-NN.owt` and fsyncs the
/// directory, so a half-written file is never taken for a good one. Memory: `scores` plus
/// one compressed block.
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
    let encoder = TableEncoder::new(dir, rules, tier, kind, scores, opts)?;
    write_on_this_thread(encoder)
}

/// Writes the distance table of tier `tier` to `dir/tier-NN.owd` on the calling thread (see
/// [`TableEncoder::for_distances`] to spread the work over threads; the bytes are the same).
/// `distances[i]` is the distance of the position of index `i` (one byte,
/// [`format::NO_DISTANCE_BYTE`] where the score is 0) and `scores[i]` its score, the
/// context of the ctx-huffman code; [`WriteOptions::distances`] are the usual settings.
///
/// # Errors
/// As [`write_table_with`]; [`Error::InvalidState`] also as [`TableEncoder::for_distances`],
/// and for ctx-huffman when a distance does not go with its score (a distance where the
/// score is 0, none where it is not).
pub fn write_distances_with(
    dir: &Path,
    rules: &Rules,
    tier: u8,
    kind: IndexKind,
    distances: &[u8],
    scores: &[i8],
    opts: &WriteOptions,
) -> Result<WrittenTable, Error> {
    let encoder = TableEncoder::for_distances(dir, rules, tier, kind, distances, scores, opts)?;
    write_on_this_thread(encoder)
}

/// Counts (ctx-huffman), encodes and writes every block of `encoder` on the calling thread.
fn write_on_this_thread(mut encoder: TableEncoder<'_>) -> Result<WrittenTable, Error> {
    let mut scratch = EncodeScratch::default();
    if encoder.needs_counts() {
        let mut counts = encoder.empty_counts();
        for b in 0..encoder.block_count() {
            encoder.count_block(b, &mut counts, &mut scratch)?;
        }
        encoder.set_counts(&counts);
    }
    let blocks = (0..encoder.block_count()).map(|b| encoder.encode_block(b, &mut scratch));
    encoder.write(blocks)
}

/// The pair counts of a ctx-huffman model (score pairs; for a distance table, (score, last
/// distance's bucket, distance) triples), gathered block by block with
/// [`TableEncoder::count_block`] and added up with [`ModelCounts::add`] (in any order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelCounts(Vec<u64>);

impl ModelCounts {
    /// Adds the counts of `other` (of the same table) to these.
    ///
    /// # Panics
    /// If `other` counts the pairs of another tier.
    pub fn add(&mut self, other: &ModelCounts) {
        assert_eq!(self.0.len(), other.0.len(), "counts of another tier");
        self.0.iter_mut().zip(&other.0).for_each(|(x, y)| *x += y);
    }

    /// The counts as words, to send to another process ([`TableEncoder::counts_from_words`]
    /// reads them back).
    pub fn words(&self) -> &[u64] {
        &self.0
    }
}

/// Reusable working memory of [`TableEncoder::count_block`] and
/// [`TableEncoder::encode_block`]: keep one per thread.
#[derive(Default)]
pub struct EncodeScratch {
    /// The zstd compression context, made on first use.
    zstd: Option<zstd::bulk::Compressor<'static>>,
    /// The bytes of the block being counted or encoded.
    bytes: Vec<u8>,
}

impl std::fmt::Debug for EncodeScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncodeScratch").finish_non_exhaustive()
    }
}

/// A table being written, in steps that a caller may spread over threads:
///
/// 1. [`TableEncoder::new`] checks the settings and the scores' length;
/// 2. with ctx-huffman ([`TableEncoder::needs_counts`]), [`TableEncoder::count_block`] on
///    every block, the counts added up and given to [`TableEncoder::set_counts`];
/// 3. [`TableEncoder::encode_block`] on every block (`&self`: on any thread);
/// 4. [`TableEncoder::write`] with the encoded blocks in order, which writes the file.
///
/// [`write_table_with`] is these steps on one thread. However the blocks are spread, the
/// file's bytes are the same. A distance table is made the same way from
/// [`TableEncoder::for_distances`] ([`write_distances_with`] on one thread). The blocks may
/// also be spread over processes that each hold only some of the scores
/// ([`TableEncoder::for_blocks`]): each counts and encodes its own blocks, the counts are
/// added up everywhere, and one of them writes the file from every process's encoded blocks
/// in order.
#[derive(Debug)]
pub struct TableEncoder<'a> {
    dir: PathBuf,
    /// The scores of the blocks `held`, from the first entry of its first block on.
    scores: &'a [i8],
    /// The blocks whose scores are held: all of them, except for [`TableEncoder::for_blocks`].
    held: std::ops::Range<usize>,
    idx: TierIndex,
    header: Header,
    block_entries: usize,
    block_count: usize,
    opts: WriteOptions,
    model: Option<Model>,
    /// For a distance table ([`TableEncoder::for_distances`]): the tier's scores, the
    /// context of its ctx-huffman code (empty otherwise).
    context: &'a [i8],
    /// The ctx-huffman model of a distance table.
    distance_model: Option<DistanceModel>,
    /// The temporary file the table is written to before the rename.
    tmp: PathBuf,
}

impl<'a> TableEncoder<'a> {
    /// An encoder of the table of tier `tier` of `scores` (`scores[i]` is the score of the
    /// position of index `i` of `TierIndex::new(tier, kind)`) into `dir/tier-NN.owt`.
    ///
    /// # Errors
    /// [`Error::InvalidState`] if `scores` is not the tier's size, or for ctx-huffman a code
    /// length limit or sub-block shift out of range.
    pub fn new(
        dir: &Path,
        rules: &Rules,
        tier: u8,
        kind: IndexKind,
        scores: &'a [i8],
        opts: &WriteOptions,
    ) -> Result<Self, Error> {
        let mut encoder = Self::for_blocks(dir, rules, tier, kind, 0, &[], opts)?;
        if scores.len() as u64 != encoder.header.entries {
            return Err(Error::InvalidState(format!(
                "tier {tier} ({}) has {} entries, {} scores given",
                kind.name(),
                encoder.header.entries,
                scores.len()
            )));
        }
        encoder.scores = scores;
        encoder.held = 0..encoder.block_count;
        Ok(encoder)
    }

    /// An encoder that holds only the scores of the blocks from `first_block` on that
    /// `scores` covers: `scores[i]` is the score of index `first_block · block_entries + i`,
    /// and `scores` is a whole number of blocks or ends at the tier's end. It counts and
    /// encodes those blocks only; [`TableEncoder::write`] takes every block of the table, from
    /// wherever they were encoded.
    ///
    /// # Errors
    /// As [`TableEncoder::new`]; [`Error::InvalidState`] if `scores` is not such a run of
    /// blocks.
    pub fn for_blocks(
        dir: &Path,
        rules: &Rules,
        tier: u8,
        kind: IndexKind,
        first_block: usize,
        scores: &'a [i8],
        opts: &WriteOptions,
    ) -> Result<Self, Error> {
        let block_entries = opts.block_entries.clamp(1, format::MAX_BLOCK_ENTRIES);
        let header = Header::new(rules, tier, kind, block_entries, opts.level);
        let be = u64::from(block_entries);
        let from = first_block as u64 * be;
        let to = from + scores.len() as u64;
        if from > header.entries || to > header.entries || (to % be != 0 && to != header.entries) {
            return Err(Error::InvalidState(format!(
                "tier {tier} ({}): {} scores from index {from} are not whole blocks of its {} entries",
                kind.name(),
                scores.len(),
                header.entries
            )));
        }
        if opts.compression == Compression::Huffman {
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
        }
        let name = format::tier_file_name(tier);
        Ok(TableEncoder {
            dir: dir.to_path_buf(),
            scores,
            held: first_block..first_block + to.div_ceil(be).saturating_sub(from / be) as usize,
            idx: TierIndex::new(tier, kind),
            block_count: header.block_count() as usize,
            header,
            block_entries: block_entries as usize,
            opts: *opts,
            model: None,
            context: &[],
            distance_model: None,
            tmp: dir.join(format!("{name}.tmp")),
        })
    }

    /// An encoder of the distance table of tier `tier` (`dir/tier-NN.owd`): `distances[i]`
    /// is the distance of the position of index `i` of `TierIndex::new(tier, kind)` (one
    /// byte, [`format::NO_DISTANCE_BYTE`] where the score is 0; docs/RULES.md) and `scores[i]`
    /// its score. With ctx-huffman (the default; [`WriteOptions::distances`] are the usual
    /// settings) each distance is coded in the context of its score, and a position scored 0
    /// costs nothing; with zstd the scores are not read.
    ///
    /// # Errors
    /// As [`TableEncoder::new`]; [`Error::InvalidState`] also when `scores` is not as long,
    /// and for ctx-huffman with the dense index or a code length limit under
    /// [`WriteOptions::MIN_DISTANCE_CODE_LIMIT`].
    pub fn for_distances(
        dir: &Path,
        rules: &Rules,
        tier: u8,
        kind: IndexKind,
        distances: &'a [u8],
        scores: &'a [i8],
        opts: &WriteOptions,
    ) -> Result<Self, Error> {
        let encoder = Self::new(dir, rules, tier, kind, as_signed(distances), opts)?;
        encoder.distances_of(scores)
    }

    /// [`TableEncoder::for_distances`] of the reachable index holding only the blocks from
    /// `first_block` on that `distances` covers, as [`TableEncoder::for_blocks`] does for
    /// scores: `distances[i]` and `scores[i]` are those of index
    /// `first_block · block_entries + i`. So a table is
    /// written from distances held a few blocks at a time: the counts of every block added
    /// up ([`ModelCounts::add`]) and set on each encoder, the blocks encoded by the encoders
    /// that hold them, and [`TableEncoder::write`] given them all in order.
    ///
    /// # Errors
    /// As [`TableEncoder::for_distances`] and [`TableEncoder::for_blocks`].
    pub fn for_distance_blocks(
        dir: &Path,
        rules: &Rules,
        tier: u8,
        first_block: usize,
        distances: &'a [u8],
        scores: &'a [i8],
        opts: &WriteOptions,
    ) -> Result<Self, Error> {
        let kind = IndexKind::Reachable;
        let bytes = as_signed(distances);
        let encoder = Self::for_blocks(dir, rules, tier, kind, first_block, bytes, opts)?;
        encoder.distances_of(scores)
    }

    /// This encoder, holding distances, made a distance table's in the context of `scores`
    /// (as long as the distances held).
    fn distances_of(self, scores: &'a [i8]) -> Result<Self, Error> {
        let (tier, kind, opts) = (self.header.tier, self.idx.kind(), self.opts);
        let distances = self.scores;
        let mut encoder = self;
        encoder.header.values = Values::Distances;
        encoder.tmp = encoder
            .dir
            .join(format!("{}.tmp", Values::Distances.file_name(tier)));
        if scores.len() != distances.len() {
            return Err(Error::InvalidState(format!(
                "tier {tier}: {} scores given for {} distances",
                scores.len(),
                distances.len()
            )));
        }
        if opts.compression == Compression::Huffman {
            if kind != IndexKind::Reachable {
                return Err(Error::InvalidState(format!(
                    "tier {tier}: ctx-huffman distance tables follow the reachable index, not \
                     the {}",
                    kind.name()
                )));
            }
            if opts.code_limit < dist::MIN_LIMIT {
                return Err(Error::InvalidState(format!(
                    "code length limit {} of a distance table outside {}..={}",
                    opts.code_limit,
                    dist::MIN_LIMIT,
                    huffman::MAX_LIMIT
                )));
            }
        }
        encoder.context = scores;
        Ok(encoder)
    }

    /// The same encoder, writing a table of `values` instead: for [`Values::Distances`], a
    /// zstd distance table `tier-NN.owd` whose entries are the bytes given as scores (each
    /// distance as a `u8`, [`format::NO_DISTANCE_BYTE`] for none; docs/RULES.md). A
    /// ctx-huffman distance table is coded in the context of the scores:
    /// [`TableEncoder::for_distances`].
    ///
    /// # Errors
    /// [`Error::InvalidState`] for a distance table with ctx-huffman compression.
    pub fn with_values(mut self, values: Values) -> Result<Self, Error> {
        if values == Values::Distances && self.opts.compression != Compression::Zstd {
            return Err(Error::InvalidState(format!(
                "tier {}: a {} distance table is made with its scores \
                 (TableEncoder::for_distances)",
                self.header.tier, self.opts.compression
            )));
        }
        self.header.values = values;
        let name = values.file_name(self.header.tier);
        self.tmp = self.dir.join(format!("{name}.tmp"));
        Ok(self)
    }

    /// The blocks whose scores this encoder holds (every block but for
    /// [`TableEncoder::for_blocks`]).
    pub fn held_blocks(&self) -> std::ops::Range<usize> {
        self.held.clone()
    }

    /// Counts read back from [`ModelCounts::words`].
    ///
    /// # Errors
    /// [`Error::InvalidState`] if they are not the counts of this table's tier.
    pub fn counts_from_words(&self, words: Vec<u64>) -> Result<ModelCounts, Error> {
        if words.len() != self.empty_counts().0.len() {
            return Err(Error::InvalidState(format!(
                "tier {}: {} pair counts given, the model has {}",
                self.header.tier,
                words.len(),
                self.empty_counts().0.len()
            )));
        }
        Ok(ModelCounts(words))
    }

    /// Number of blocks of the table.
    pub fn block_count(&self) -> usize {
        self.block_count
    }

    /// Whether blocks need the pair counts of the whole tier ([`TableEncoder::set_counts`])
    /// before they are encoded: true for ctx-huffman until the counts are set.
    pub fn needs_counts(&self) -> bool {
        self.opts.compression == Compression::Huffman
            && self.model.is_none()
            && self.distance_model.is_none()
    }

    /// Whether this encoder codes distances with ctx-huffman, in the context of the scores.
    fn distance_huffman(&self) -> bool {
        self.header.values == Values::Distances && self.opts.compression == Compression::Huffman
    }

    /// Counts that hold no pair yet, to gather those of some blocks into.
    pub fn empty_counts(&self) -> ModelCounts {
        if self.distance_huffman() {
            return ModelCounts(vec![0; dist::counts_len(self.header.tier)]);
        }
        let s = huffman::symbol_count(self.header.tier);
        ModelCounts(vec![0; s * s])
    }

    /// The scores of block `b` of a distance table: the context of its distances.
    fn context_chunk(&self, b: usize) -> &'a [i8] {
        let be = self.block_entries;
        let at = (b - self.held.start) * be;
        &self.context[at..(at + be).min(self.context.len())]
    }

    /// The entries of block `b` of the scores.
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the block's scores are not held.
    fn chunk(&self, b: usize) -> Result<&'a [i8], Error> {
        if !self.held.contains(&b) {
            return Err(Error::InvalidState(format!(
                "tier {}: block {b} is not among the blocks {:?} held",
                self.header.tier, self.held
            )));
        }
        let be = self.block_entries;
        let at = (b - self.held.start) * be;
        Ok(&self.scores[at..(at + be).min(self.scores.len())])
    }

    /// Adds the score pairs of block `b` to `counts` (for a ctx-huffman distance table, its
    /// (score, last distance's bucket, distance) triples).
    ///
    /// # Errors
    /// [`Error::InvalidState`] for a score outside `−tier ..= tier`, a block whose scores
    /// are not held ([`TableEncoder::held_blocks`]), or for a distance table a distance that
    /// does not go with its score (a distance where the score is 0, none where it is not).
    ///
    /// # Panics
    /// If `counts` are of another tier.
    pub fn count_block(
        &self,
        b: usize,
        counts: &mut ModelCounts,
        scratch: &mut EncodeScratch,
    ) -> Result<(), Error> {
        let tier = self.header.tier;
        if self.distance_huffman() {
            let chunk = self.chunk(b)?;
            // SAFETY: as in `as_signed`: the distances, given as bytes, seen as `u8` again.
            let bytes =
                unsafe { std::slice::from_raw_parts(chunk.as_ptr().cast::<u8>(), chunk.len()) };
            let context = self.context_chunk(b);
            return DistanceModel::count_block(
                tier,
                bytes,
                context,
                self.opts.sub_block_shift,
                &mut counts.0,
            )
            .map_err(|e| Error::InvalidState(format!("tier {tier}: block {b}: {e}")));
        }
        let src = block_source(
            self.chunk(b)?,
            &self.idx,
            (b * self.block_entries) as u64,
            scratch,
        );
        Model::count_block(tier, src, self.opts.sub_block_shift, &mut counts.0)
            .map_err(|e| Error::InvalidState(format!("tier {tier}: {e}")))
    }

    /// Builds the ctx-huffman model from the counts of every block (a no-op for zstd).
    ///
    /// # Panics
    /// If `counts` are of another tier.
    pub fn set_counts(&mut self, counts: &ModelCounts) {
        if self.opts.compression != Compression::Huffman {
            return;
        }
        self.header.compression = Compression::Huffman;
        self.header.level = 0;
        self.header.code_limit = self.opts.code_limit;
        self.header.sub_block_shift = self.opts.sub_block_shift;
        if self.distance_huffman() {
            let model =
                DistanceModel::from_counts(self.header.tier, &counts.0, self.opts.code_limit);
            self.header.model = model.stored().to_vec();
            self.distance_model = Some(model);
            return;
        }
        let model = Model::from_counts(self.header.tier, &counts.0, self.opts.code_limit);
        self.header.model = model.lengths().to_vec();
        self.model = Some(model);
    }

    /// Takes the model of `other`, an encoder of the same table whose counts are set
    /// ([`TableEncoder::set_counts`]): the same as setting those counts here, without
    /// building the code again.
    ///
    /// # Errors
    /// [`Error::InvalidState`] when `other` is of another tier or kind of table, or its
    /// counts are not set.
    pub fn set_model_of(&mut self, other: &TableEncoder<'_>) -> Result<(), Error> {
        let (a, b) = (&self.header, &other.header);
        if a.tier != b.tier || a.values != b.values || self.opts != other.opts {
            return Err(Error::InvalidState(format!(
                "tier {}: the model of another table (tier {})",
                a.tier, b.tier
            )));
        }
        if other.needs_counts() {
            return Err(Error::InvalidState(format!(
                "tier {}: a model taken before its counts were set",
                a.tier
            )));
        }
        self.header = other.header.clone();
        self.model.clone_from(&other.model);
        self.distance_model.clone_from(&other.distance_model);
        Ok(())
    }

    /// The encoded bytes of block `b`.
    ///
    /// # Errors
    /// [`Error::InvalidState`] for ctx-huffman before [`TableEncoder::set_counts`];
    /// [`Error::Io`] (on the temporary file's path) when zstd fails, or for ctx-huffman a
    /// score pair the counts did not hold; [`Error::InvalidState`] for a block whose scores
    /// are not held ([`TableEncoder::held_blocks`]), and for a ctx-huffman distance table a
    /// distance that does not go with its score or that the counts did not hold.
    pub fn encode_block(&self, b: usize, scratch: &mut EncodeScratch) -> Result<Vec<u8>, Error> {
        if self.needs_counts() {
            return Err(Error::InvalidState(format!(
                "tier {}: a ctx-huffman block encoded before the model's counts were set",
                self.header.tier
            )));
        }
        let start = (b * self.block_entries) as u64;
        let io = |e| Error::io(&self.tmp, e);
        if let Some(m) = &self.distance_model {
            let chunk = self.chunk(b)?;
            // SAFETY: as in `as_signed`: the distances, given as bytes, seen as `u8` again.
            let bytes =
                unsafe { std::slice::from_raw_parts(chunk.as_ptr().cast::<u8>(), chunk.len()) };
            let mut out = Vec::new();
            m.encode_block(
                bytes,
                self.context_chunk(b),
                self.opts.sub_block_shift,
                &mut out,
            )
            .map_err(|e| {
                Error::InvalidState(format!("tier {}: block {b}: {e}", self.header.tier))
            })?;
            return Ok(out);
        }
        if let Some(m) = &self.model {
            let src = block_source(self.chunk(b)?, &self.idx, start, scratch);
            let mut out = Vec::new();
            m.encode_block(src, self.opts.sub_block_shift, &mut out)
                .map_err(|e| io(io::Error::other(e)))?;
            return Ok(out);
        }
        if scratch.zstd.is_none() {
            scratch.zstd = Some(zstd::bulk::Compressor::new(self.opts.level).map_err(io)?);
        }
        let EncodeScratch { zstd, bytes } = scratch;
        let src = block_source_into(self.chunk(b)?, &self.idx, start, bytes);
        match zstd.as_mut() {
            Some(c) => c.compress(src).map_err(io),
            None => Err(io(io::Error::other("no zstd context"))),
        }
    }

    /// Writes the table from its encoded `blocks`, every one in order (as
    /// [`TableEncoder::encode_block`] made them), and returns what was written. The blocks
    /// are taken one by one as the file is written, so an iterator that encodes them lazily
    /// bounds the memory held.
    ///
    /// Writes `tier-NN.owt.tmp`, fsyncs it, renames it to `tier-NN.owt` and fsyncs the
    /// directory.
    ///
    /// # Errors
    /// [`Error::Io`]; the first error among `blocks`; [`Error::InvalidState`] when `blocks`
    /// does not hold [`TableEncoder::block_count`] blocks, or for ctx-huffman before
    /// [`TableEncoder::set_counts`].
    pub fn write<I>(&self, blocks: I) -> Result<WrittenTable, Error>
    where
        I: IntoIterator<Item = Result<Vec<u8>, Error>>,
    {
        if self.needs_counts() {
            return Err(Error::InvalidState(format!(
                "tier {}: a ctx-huffman table written before the model's counts were set",
                self.header.tier
            )));
        }
        let name = self.header.values.file_name(self.header.tier);
        let path = self.dir.join(&name);
        let tmp = &self.tmp;
        let file = File::create(tmp).map_err(|e| Error::io(tmp, e))?;
        let io = |e| Error::io(tmp, e);
        let mut out = Hashing {
            inner: BufWriter::with_capacity(1 << 20, file),
            hasher: blake3::Hasher::new(),
            written: 0,
        };
        out.put(&self.header.encode()).map_err(io)?;
        let mut index = Vec::with_capacity(self.block_count * format::INDEX_ENTRY);
        let mut count = 0usize;
        for c in blocks {
            let c = c?;
            count += 1;
            index.extend_from_slice(&format::encode_index_entry(
                out.written,
                format::block_checksum(&c),
            ));
            out.put(&c).map_err(io)?;
        }
        if count != self.block_count {
            return Err(Error::InvalidState(format!(
                "tier {}: {count} blocks given, the table has {}",
                self.header.tier, self.block_count
            )));
        }
        let index_offset = out.written;
        out.put(&index).map_err(io)?;
        out.put(&format::encode_trailer_head(
            index_offset,
            self.block_count as u64,
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
        fs::rename(tmp, &path).map_err(|e| Error::io(&path, e))?;
        sync_dir(&self.dir)?;
        Ok(WrittenTable {
            file: name,
            path,
            file_size: written + format::CHECKSUM_LEN as u64,
            checksum: format::hex(sum.as_bytes()),
        })
    }
}

/// Distances, one byte each, seen as the `i8` entries the encoder holds.
fn as_signed(distances: &[u8]) -> &[i8] {
    // SAFETY: `u8` and `i8` have the same size and alignment, and every byte is a valid
    // `i8`; the slice borrows `distances`.
    unsafe { std::slice::from_raw_parts(distances.as_ptr().cast::<i8>(), distances.len()) }
}

/// A `Write` that counts and hashes what passes through.
struct Hashing<W: Write> {
    inner: W,
    hasher: blake3::Hasher,
    written: u64,
}

impl<W: Write> Hashing<W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.write_all(bytes)?;
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
        Ok(())
    }
}

/// [`block_source_into`] into the scratch's bytes.
fn block_source<'s>(
    scores: &[i8],
    idx: &TierIndex,
    start: u64,
    scratch: &'s mut EncodeScratch,
) -> &'s [u8] {
    block_source_into(scores, idx, start, &mut scratch.bytes)
}

/// The bytes of the block of `scores` that starts at entry `start`, as written: for the
/// dense index, entries the probe never reads (positions no move can reach, answered by a
/// one-ply search) repeat the previous entry so that they extend runs; the reachable index
/// stores every entry as given.
fn block_source_into<'s>(
    scores: &[i8],
    idx: &TierIndex,
    start: u64,
    bytes: &'s mut Vec<u8>,
) -> &'s [u8] {
    bytes.clear();
    bytes.extend(scores.iter().map(|&v| v as u8));
    if idx.kind() == IndexKind::Dense {
        let mut prev = 0u8;
        for (k, v) in bytes.iter_mut().enumerate() {
            let p: Position = idx.unrank(start + k as u64);
            if p.is_reachable() {
                prev = *v;
            } else {
                *v = prev;
            }
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Table;

    /// Uniform pseudo-random scores of tier `n` of the reachable index.
    fn scores(n: u8, seed: u64) -> Vec<i8> {
        let len = TierIndex::new(n, IndexKind::Reachable).size();
        let mut z = seed | 1;
        let mut next = move || {
            z ^= z >> 12;
            z ^= z << 25;
            z ^= z >> 27;
            z.wrapping_mul(0x2545_F491_4F6C_DD1D)
        };
        let k = 2 * u64::from(n) + 1;
        (0..len).map(|_| (next() % k) as i8 - n as i8).collect()
    }

    #[test]
    fn blocks_encoded_in_parts_write_the_same_file() {
        let n = 9;
        let data = scores(n, 5);
        for compression in [Compression::Huffman, Compression::Zstd] {
            let opts = WriteOptions {
                compression,
                block_entries: 1000,
                ..WriteOptions::default()
            };
            let whole = tempfile::tempdir().unwrap();
            let w = write_table_with(
                whole.path(),
                &Rules::ABAPA,
                n,
                IndexKind::Reachable,
                &data,
                &opts,
            )
            .unwrap();
            let want = std::fs::read(&w.path).unwrap();
            // Three parts of whole blocks, one of them empty, the last ending at the tier's end.
            let be = 1000;
            let cuts = [0, 3 * be, 3 * be, 7 * be, data.len()];
            let dir = tempfile::tempdir().unwrap();
            let mut parts: Vec<TableEncoder<'_>> = cuts
                .windows(2)
                .map(|c| {
                    TableEncoder::for_blocks(
                        dir.path(),
                        &Rules::ABAPA,
                        n,
                        IndexKind::Reachable,
                        c[0] / be,
                        &data[c[0]..c[1]],
                        &opts,
                    )
                    .unwrap()
                })
                .collect();
            let mut scratch = EncodeScratch::default();
            let mut total = parts[0].empty_counts();
            for p in &parts {
                let mut counts = p.empty_counts();
                for b in p.held_blocks() {
                    p.count_block(b, &mut counts, &mut scratch).unwrap();
                }
                total.add(&p.counts_from_words(counts.words().to_vec()).unwrap());
            }
            for p in &mut parts {
                p.set_counts(&total);
            }
            // A part refuses the blocks it does not hold.
            assert!(parts[0].encode_block(3, &mut scratch).is_err());
            let blocks: Vec<Vec<u8>> = parts
                .iter()
                .flat_map(|p| p.held_blocks().map(move |b| (p, b)))
                .map(|(p, b)| p.encode_block(b, &mut EncodeScratch::default()).unwrap())
                .collect();
            let got = parts[0].write(blocks.into_iter().map(Ok)).unwrap();
            assert_eq!(std::fs::read(&got.path).unwrap(), want, "{compression:?}");
        }
        // Scores that are not whole blocks are refused.
        let opts = WriteOptions {
            block_entries: 1000,
            ..WriteOptions::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let e = TableEncoder::for_blocks(
            dir.path(),
            &Rules::ABAPA,
            n,
            IndexKind::Reachable,
            1,
            &data[..10],
            &opts,
        );
        assert!(matches!(e, Err(Error::InvalidState(_))));
    }

    /// Distances encoded in parts, each part taking the model of one whose counts were set
    /// ([`TableEncoder::set_model_of`]), write the file written whole.
    #[test]
    fn distance_blocks_encoded_in_parts_write_the_same_file() {
        let n = 9;
        let scores = scores(n, 7);
        // A distance where the score is not 0, none where it is.
        let distances: Vec<u8> = scores
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                if s == 0 {
                    format::NO_DISTANCE_BYTE
                } else {
                    (i * 31 % 40) as u8
                }
            })
            .collect();
        let opts = WriteOptions {
            block_entries: 1000,
            ..WriteOptions::distances()
        };
        let rules = Rules::ABAPA;
        let whole = tempfile::tempdir().unwrap();
        let kind = IndexKind::Reachable;
        let w = write_distances_with(whole.path(), &rules, n, kind, &distances, &scores, &opts)
            .unwrap();
        let want = std::fs::read(&w.path).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let part = |from: usize, to: usize| {
            TableEncoder::for_distance_blocks(
                dir.path(),
                &rules,
                n,
                from / 1000,
                &distances[from..to],
                &scores[from..to],
                &opts,
            )
            .unwrap()
        };
        let cuts = [0, 4000, 9000, distances.len()];
        let mut head = part(0, 0);
        let mut total = head.empty_counts();
        let mut scratch = EncodeScratch::default();
        for c in cuts.windows(2) {
            let p = part(c[0], c[1]);
            for b in p.held_blocks() {
                p.count_block(b, &mut total, &mut scratch).unwrap();
            }
        }
        // A part takes no model before the counts are set.
        assert!(part(0, 4000).set_model_of(&head).is_err());
        head.set_counts(&total);
        let mut blocks = Vec::new();
        for c in cuts.windows(2) {
            let mut p = part(c[0], c[1]);
            p.set_model_of(&head).unwrap();
            for b in p.held_blocks() {
                blocks.push(p.encode_block(b, &mut scratch).unwrap());
            }
        }
        let got = head.write(blocks.into_iter().map(Ok)).unwrap();
        assert_eq!(std::fs::read(&got.path).unwrap(), want);
        // Nor the model of a score table.
        let score_table = TableEncoder::new(dir.path(), &rules, n, kind, &scores, &opts).unwrap();
        assert!(part(0, 4000).set_model_of(&score_table).is_err());
    }

    #[test]
    fn a_corrupt_model_is_a_bad_header() {
        // A model whose header checksum is right but whose code lengths are not a prefix
        // code.
        let dir = tempfile::tempdir().unwrap();
        let n = 3;
        let data = scores(n, 9);
        let w = write_table_with(
            dir.path(),
            &Rules::ABAPA,
            n,
            IndexKind::Reachable,
            &data,
            &WriteOptions::default(),
        )
        .unwrap();
        let mut bytes = std::fs::read(&w.path).unwrap();
        let (mut h, len) = Header::decode(&w.path, &bytes).unwrap();
        let at = h.model.iter().position(|&l| l > 1).unwrap();
        h.model[at] += 1;
        let enc = h.encode();
        assert_eq!(enc.len(), len);
        bytes[..len].copy_from_slice(&enc);
        std::fs::write(&w.path, &bytes).unwrap();
        let r = Table::open(&w.path);
        assert!(
            matches!(r, Err(Error::BadHeader { ref detail, .. }) if detail.contains("model")),
            "{r:?}"
        );
    }

    #[test]
    fn blocks_must_all_be_given_and_counts_set_first() {
        let dir = tempfile::tempdir().unwrap();
        let data = scores(5, 1);
        let opts = WriteOptions {
            block_entries: 64,
            ..WriteOptions::default()
        };
        let mut enc = TableEncoder::new(
            dir.path(),
            &Rules::ABAPA,
            5,
            IndexKind::Reachable,
            &data,
            &opts,
        )
        .unwrap();
        let mut scratch = EncodeScratch::default();
        assert!(enc.needs_counts());
        assert!(matches!(
            enc.encode_block(0, &mut scratch),
            Err(Error::InvalidState(_))
        ));
        let mut counts = enc.empty_counts();
        for b in 0..enc.block_count() {
            enc.count_block(b, &mut counts, &mut scratch).unwrap();
        }
        enc.set_counts(&counts);
        assert!(!enc.needs_counts());
        let first = enc.encode_block(0, &mut scratch);
        let r = enc.write([first]);
        assert!(matches!(r, Err(Error::InvalidState(_))), "{r:?}");
    }
}
