//! The reader of one tier table: a memory-mapped file (or a buffer in memory,
//! [`Table::from_bytes`]), one block (zstd) or one sub-block (ctx-huffman) decoded per
//! probe, and a small cache of decoded units shared by all threads. The ctx-huffman decode
//! tables are built once when the table is opened. A ctx-huffman distance table is decoded
//! with its tier's scores, the context of its code ([`Table::get_distance`],
//! [`Table::read_distances_into`]). A file of the Romein-Bal databases
//! (`scores.N`, one byte per position) is read as a table too, through its numbering
//! ([`Table::open_romein`]).

use std::cell::RefCell;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use memmap2::Mmap;

use crate::error::Error;
use crate::format::{
    self, Compression, Header, Values, CHECKSUM_LEN, END_MAGIC, INDEX_ENTRY, NO_DISTANCE_BYTE,
    TRAILER,
};
use crate::huffman::distance::{DistanceModel, PartState};
use crate::huffman::Model;
use crate::index::{IndexKind, TierIndex};
use crate::romein::{self, RomeinOrder, RomeinRuns};
use crate::rules::Rules;

/// Bytes of decoded units (blocks or sub-blocks) a table keeps in its cache (at least 16).
const CACHE_BYTES: usize = 1 << 20;

/// One slot of the direct-mapped cache of decoded units.
struct Slot {
    /// The unit held: the block number (zstd) or the sub-block key (ctx-huffman:
    /// block × sub-blocks per block + sub-block); `u64::MAX` for none.
    block: u64,
    data: Vec<u8>,
    /// A ctx-huffman distance sub-block is decoded only up to the entries probed so far
    /// (`data`): where its decoder stands after them.
    state: PartState,
}

/// The bytes of a table: a read-only map of its file, or a buffer the table owns.
enum Bytes {
    Map(Mmap),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

thread_local! {
    /// One zstd decompression context per thread, reused by every probe.
    static DCTX: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// An open tier table.
///
/// [`Table::get`] checks the checksum of the one block that holds the entry, then decodes it:
/// a zstd block is decompressed whole, a ctx-huffman block only in the sub-block (256
/// entries by default) that holds the entry; either is kept in a small direct-mapped cache,
/// so probes of nearby entries do not decode again. A `Table` is `Send + Sync`: probe it from many
/// threads.
pub struct Table {
    path: PathBuf,
    map: Bytes,
    header: Header,
    header_len: usize,
    index_offset: usize,
    block_count: u64,
    cache: Vec<Mutex<Slot>>,
    /// The ctx-huffman model of a score table (none for zstd).
    model: Option<Model>,
    /// The ctx-huffman model of a distance table (none for zstd).
    distance_model: Option<DistanceModel>,
    /// The mapped file, kept open for [`Table::check_file`] (none for a table in memory).
    file: Option<File>,
    /// For a Romein-Bal file: its order, its checksum and runs once computed.
    romein: Option<(RomeinOrder, OnceLock<String>, OnceLock<RomeinRuns>)>,
}

/// Entries per "block" of a Romein-Bal file: what [`Table::block_entries`] reports for it, a
/// unit for splitting reads between threads (the file has no blocks).
pub const ROMEIN_BLOCK_ENTRIES: u32 = 1 << 16;

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("path", &self.path)
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

/// Why the end magic of a table's `bytes` (a header of `header_len` bytes declaring
/// `block_count` blocks) is not at its end, where a trailer fits the header: bytes appended
/// after a whole table ([`Error::TrailingBytes`]), or a damaged end magic in a trailer that
/// is in place ([`Error::BadEndMagic`]). `None` where no trailer fits: the file is cut short.
fn end_not_found(path: &Path, bytes: &[u8], header_len: usize, block_count: u64) -> Option<Error> {
    // Whether a trailer at `t` fits: its block count the header's, its index just before it.
    let fits = |t: usize| {
        t + TRAILER <= bytes.len()
            && t >= header_len
            && format::read_u64(bytes, t + 8) == block_count
            && (t as u64).checked_sub(block_count.saturating_mul(INDEX_ENTRY as u64))
                == Some(format::read_u64(bytes, t))
    };
    let t = bytes.len() - TRAILER;
    if fits(t) {
        return Some(Error::BadEndMagic {
            path: path.to_path_buf(),
            found: String::from_utf8_lossy(&bytes[t + 16..t + 24]).into_owned(),
            expected: String::from_utf8_lossy(&END_MAGIC).into_owned(),
        });
    }
    // The last end magic before the one the file's end puts, in a trailer fitting the header.
    let magic_at = bytes
        .get(header_len..t + 16 + END_MAGIC.len() - 1)?
        .windows(END_MAGIC.len())
        .enumerate()
        .rev()
        .filter(|(_, w)| *w == END_MAGIC)
        .map(|(i, _)| header_len + i)
        .find(|&m| m >= 16 && fits(m - 16))?;
    Some(Error::TrailingBytes {
        path: path.to_path_buf(),
        size: bytes.len() as u64,
        end: (magic_at - 16 + TRAILER) as u64,
    })
}

impl Table {
    /// Opens and maps a table; validates the header (magic, version, header checksum, fields)
    /// and the trailer and the block index's position. Does not hash the whole file: see
    /// [`Table::verify_checksum`]. Every block's own checksum is checked when it is read.
    ///
    /// Only a regular file is opened (after following symbolic links): a named pipe, a device
    /// or a directory is refused at once, without blocking. A file named `scores.N` is a file
    /// of the Romein-Bal databases: it is opened with [`Table::open_romein`].
    ///
    /// # Safety
    /// The file is memory-mapped, read-only, for as long as the `Table` lives. It must not be
    /// truncated or modified while it is open, by this process or any other: the reads of a
    /// truncated file's missing pages fault (the process is killed by `SIGBUS` on Unix), and
    /// bytes changed under the map give scores that no checksum was checked against. The
    /// writers of this crate never change a published table: they write a temporary file and
    /// rename it into place, which leaves an open table's file untouched. Replace a table the
    /// same way, never by rewriting it in place. A reader that cannot rule out a truncation
    /// (a server) checks the file's length before reading: [`Table::check_file`].
    ///
    /// # Errors
    /// [`Error::Io`] (the file cannot be opened or mapped, or is not a regular file),
    /// [`Error::BadMagic`],
    /// [`Error::UnsupportedVersion`], [`Error::Truncated`], [`Error::TrailingBytes`] (bytes
    /// appended), [`Error::BadEndMagic`], [`Error::BadHeader`] (also: a ctx-huffman model
    /// whose code lengths are not valid prefix codes).
    pub fn open(path: &Path) -> Result<Table, Error> {
        if let Some(n) = path
            .file_name()
            .and_then(|f| f.to_str())
            .and_then(romein::tier_of_file_name)
        {
            return Self::open_romein(path, n);
        }
        let file = open_regular(path).map_err(|e| Error::io(path, e))?;
        let size = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if size < format::MAGIC.len() as u64 {
            return Err(Error::Truncated {
                path: path.to_path_buf(),
                size,
                detail: "shorter than the magic".into(),
            });
        }
        // SAFETY: the map is read-only and private to this process. Tables are written to a
        // temporary file and renamed into place, so a published table is never modified in
        // place; the caller must not truncate or rewrite a table file while it is open (that
        // would make reads of the missing pages fault). Every read below is bounds-checked
        // against the map's length, which is fixed at mapping time.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        let mut table = Self::from_map(path, Bytes::Map(map))?;
        table.file = Some(file);
        Ok(table)
    }

    /// Opens a file of the Romein-Bal Awari databases holding tier `n` (`scores.N`: one
    /// signed byte per position, at the position's Goedel number, [`RomeinOrder`]) as a
    /// table of the reachable index under the `awari` rules: its entries are read through
    /// the two numberings, from the raw bytes, with no conversion. The file has no header or
    /// checksum of its own: [`Table::verify_checksum`] computes one, and every byte read is
    /// checked to lie in `-n..=n`. [`Table::open`] opens a file named `scores.N` this way.
    ///
    /// # Safety
    /// As [`Table::open`]: the file is memory-mapped.
    ///
    /// # Errors
    /// [`Error::Io`] (as [`Table::open`]), [`Error::TierOutOfRange`],
    /// [`Error::RomeinSize`] (the file is not one byte per position of tier `n`).
    pub fn open_romein(path: &Path, n: u8) -> Result<Table, Error> {
        if n > crate::position::MAX_SEEDS {
            return Err(Error::TierOutOfRange(n));
        }
        let order = RomeinOrder::new(n);
        let file = open_regular(path).map_err(|e| Error::io(path, e))?;
        let size = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if size != order.size() {
            return Err(Error::RomeinSize {
                path: path.to_path_buf(),
                tier: n,
                size,
                expected: order.size(),
            });
        }
        // SAFETY: as in `Table::open`: a read-only map of a file the caller keeps unchanged;
        // every read is bounds-checked against the map's length.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        let header = Header {
            version: format::VERSION,
            tier: n,
            kind: IndexKind::Reachable,
            entries: size,
            block_entries: ROMEIN_BLOCK_ENTRIES,
            values: Values::Scores,
            compression: Compression::Zstd,
            level: 0,
            rules: Rules::AWARI,
            code_limit: 0,
            sub_block_shift: 0,
            model: Vec::new(),
        };
        Ok(Table {
            path: path.to_path_buf(),
            block_count: header.block_count(),
            header,
            header_len: 0,
            index_offset: 0,
            map: Bytes::Map(map),
            cache: Vec::new(),
            model: None,
            distance_model: None,
            file: Some(file),
            romein: Some((order, OnceLock::new(), OnceLock::new())),
        })
    }

    /// The Romein-Bal order of a table opened from a `scores.N` file
    /// ([`Table::open_romein`]); `None` for a table of this crate's format.
    pub fn romein(&self) -> Option<RomeinOrder> {
        self.romein.as_ref().map(|(o, ..)| *o)
    }

    /// Calls `f(index, score)` for the positions of a Romein-Bal file
    /// ([`Table::open_romein`]) with Goedel numbers `goedel`, in file order: the entry of
    /// each in this table's (reachable) index, and its score ([`RomeinRuns`]; a byte out of
    /// range is passed on too, and the error returned at the end). The bytes are read in order
    /// and their pages released from the resident set once read ([`Table::release_pages`]):
    /// the way to read such a file whole, or in parallel ranges, at the speed of the disk.
    ///
    /// # Errors
    /// [`Error::InvalidState`] for a table of this crate's format, [`Error::IndexOutOfRange`]
    /// for a range past the file, [`Error::RomeinScore`] for a byte outside `-n..=n`.
    pub fn for_each_romein(
        &self,
        goedel: std::ops::Range<u64>,
        mut f: impl FnMut(u64, i8),
    ) -> Result<(), Error> {
        let Some((order, _, runs)) = &self.romein else {
            return Err(Error::InvalidState(format!(
                "{}: not a Romein-Bal file",
                self.path.display()
            )));
        };
        let n = self.header.tier;
        if goedel.end > self.header.entries || goedel.start > goedel.end {
            return Err(Error::IndexOutOfRange {
                index: goedel.end.saturating_sub(1),
                len: self.header.entries,
            });
        }
        let runs =
            runs.get_or_init(|| RomeinRuns::new(*order, TierIndex::new(n, IndexKind::Reachable)));
        let bytes = &self.map[goedel.start as usize..goedel.end as usize];
        let mut bad = None;
        runs.for_each(goedel.clone(), |g, i| {
            let v = bytes[(g - goedel.start) as usize] as i8;
            if v.unsigned_abs() > n {
                bad.get_or_insert((g, v));
            }
            f(i, v);
        });
        if let Some((g, v)) = bad {
            return Err(self.romein_score(g, v));
        }
        if let Bytes::Map(m) = &self.map {
            release(m, goedel.start as usize, bytes.len());
        }
        Ok(())
    }

    fn romein_score(&self, offset: u64, value: i8) -> Error {
        Error::RomeinScore {
            path: self.path.clone(),
            tier: self.header.tier,
            offset,
            value,
        }
    }

    /// The score of entry `index` (reachable index) of a Romein-Bal file.
    fn get_romein(&self, order: &RomeinOrder, index: u64) -> Result<i8, Error> {
        let n = self.header.tier;
        let p = TierIndex::new(n, IndexKind::Reachable).unrank(index);
        let g = order.rank_unchecked(&p);
        let v = self.map[g as usize] as i8;
        if v.unsigned_abs() > n {
            return Err(self.romein_score(g, v));
        }
        Ok(v)
    }

    /// Checks that the file under the map still has the length it had when the table was
    /// opened ([`Table::open`] keeps the file open for this: one `fstat` per call). A reader
    /// that cannot rule out that its tables are truncated under it (a server) calls it before
    /// reading: a table cut short is then an error, [`Error::Truncated`], instead of a fault
    /// (`SIGBUS`) on its missing pages, and it reads again once the file has its length back.
    /// A truncation between this check and the read still faults: the check narrows the
    /// hazard of [`Table::open`]'s safety contract, it does not lift it. Always `Ok` for a
    /// table held in memory ([`Table::from_bytes`]).
    ///
    /// # Errors
    /// [`Error::Truncated`] (the file's length changed), [`Error::Io`] (`fstat` failed).
    pub fn check_file(&self) -> Result<(), Error> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let size = file.metadata().map_err(|e| Error::io(&self.path, e))?.len();
        let mapped = self.map.len() as u64;
        if size != mapped {
            return Err(Error::Truncated {
                path: self.path.clone(),
                size,
                detail: format!(
                    "the file changed under the reader, which opened it with {mapped} bytes; \
                     replace a table by renaming a complete file over it"
                ),
            });
        }
        Ok(())
    }

    /// A table over the bytes of a table file held in memory (read from anywhere: a network
    /// reply, an archive, an embedded resource), with the same checks as [`Table::open`]. The
    /// table owns the buffer, so nothing can change it under the reader: this is the safe
    /// alternative to a memory map. [`Table::path`] is `<memory>`, and errors name it.
    ///
    /// ```
    /// use oware_db::Error;
    /// use oware_db::table::Table;
    /// assert!(matches!(Table::from_bytes(b"not a table".to_vec()), Err(Error::BadMagic { .. })));
    /// ```
    ///
    /// # Errors
    /// As [`Table::open`], less [`Error::Io`]: [`Error::BadMagic`],
    /// [`Error::UnsupportedVersion`], [`Error::Truncated`], [`Error::BadHeader`].
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Table, Error> {
        let path = Path::new("<memory>");
        if bytes.len() < format::MAGIC.len() {
            return Err(Error::Truncated {
                path: path.to_path_buf(),
                size: bytes.len() as u64,
                detail: "shorter than the magic".into(),
            });
        }
        Self::from_map(path, Bytes::Owned(bytes))
    }

    fn from_map(path: &Path, map: Bytes) -> Result<Table, Error> {
        let bytes: &[u8] = &map;
        let size = bytes.len() as u64;
        let (header, header_len) = Header::decode(path, bytes)?;
        let truncated = |detail: &str| Error::Truncated {
            path: path.to_path_buf(),
            size,
            detail: detail.to_string(),
        };
        let bad = |detail: String| Error::BadHeader {
            path: path.to_path_buf(),
            detail,
        };
        if bytes.len() < header_len + TRAILER {
            return Err(truncated("no room for the trailer"));
        }
        let t = bytes.len() - TRAILER;
        if bytes[t + 16..t + 24] != END_MAGIC {
            return Err(end_not_found(path, bytes, header_len, header.block_count())
                .unwrap_or_else(|| {
                    truncated("the trailer is missing (file cut short or damaged)")
                }));
        }
        let index_offset = format::read_u64(bytes, t);
        let block_count = format::read_u64(bytes, t + 8);
        if block_count != header.block_count() {
            return Err(bad(format!(
                "trailer says {block_count} blocks, the header {}",
                header.block_count()
            )));
        }
        let expected_index = (t as u64).checked_sub(block_count.saturating_mul(INDEX_ENTRY as u64));
        if expected_index != Some(index_offset) || index_offset < header_len as u64 {
            // A whole table with another appended after it ends with an end magic too.
            if let Some(e @ Error::TrailingBytes { .. }) =
                end_not_found(path, bytes, header_len, header.block_count())
            {
                return Err(e);
            }
            return Err(bad(format!(
                "block index at {index_offset} does not end at the trailer ({t})"
            )));
        }
        let (model, distance_model) = match (header.compression, header.values) {
            (Compression::Zstd, _) => (None, None),
            (Compression::Huffman, Values::Scores) => (
                Some(
                    Model::from_lengths(header.tier, header.code_limit, &header.model)
                        .map_err(|e| bad(format!("ctx-huffman model: {e}")))?,
                ),
                None,
            ),
            (Compression::Huffman, Values::Distances) => (
                None,
                Some(
                    DistanceModel::from_stored(header.tier, header.code_limit, &header.model)
                        .map_err(|e| bad(format!("ctx-huffman distance model: {e}")))?,
                ),
            ),
        };
        // Cached units: zstd blocks, or ctx-huffman sub-blocks.
        let unit = match header.compression {
            Compression::Huffman => header.block_entries.min(1 << header.sub_block_shift),
            Compression::Zstd => header.block_entries,
        };
        let slots = (CACHE_BYTES / unit.max(1) as usize).clamp(16, 1024);
        let cache = (0..slots)
            .map(|_| {
                Mutex::new(Slot {
                    block: u64::MAX,
                    data: Vec::new(),
                    state: PartState::default(),
                })
            })
            .collect();
        Ok(Table {
            path: path.to_path_buf(),
            header,
            header_len,
            index_offset: index_offset as usize,
            block_count,
            map,
            cache,
            model,
            distance_model,
            file: None,
            romein: None,
        })
    }

    /// The file this table was opened from (`<memory>` for [`Table::from_bytes`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The zstd level the blocks were compressed with, as the file records it
    /// (informational; 0 for ctx-huffman).
    pub fn compression_level(&self) -> i32 {
        self.header.level
    }

    /// The rules the table was built with.
    pub fn rules(&self) -> Rules {
        self.header.rules
    }

    /// The tier (seeds on the board).
    pub fn tier(&self) -> u8 {
        self.header.tier
    }

    /// What the entries are: scores (`tier-NN.owt`) or distances (`tier-NN.owd`).
    pub fn values(&self) -> Values {
        self.header.values
    }

    /// The distance to conversion stored at entry `index` of a distance table
    /// (docs/RULES.md), `None` for a position without one (scored 0). `scores` is the table
    /// of the tier's scores: a ctx-huffman distance table is coded in the context of each
    /// position's score, so the probe reads the scores of the entry's sub-block from it (from
    /// its cache when the score of the same entry was just probed) and decodes that one
    /// sub-block of distances. A zstd distance table does not read `scores`.
    ///
    /// # Errors
    /// As [`Table::get`]; [`Error::InvalidState`] if this table holds scores, or `scores`
    /// is not a table of the scores of the same tier and index; [`Error::CorruptBlock`] also
    /// when a score read from `scores` is outside the tier's range.
    pub fn get_distance(&self, index: u64, scores: &Table) -> Result<Option<u16>, Error> {
        if self.header.values != Values::Distances {
            return Err(Error::InvalidState(format!(
                "{}: a table of scores, not of distances",
                self.path.display()
            )));
        }
        let v = match &self.distance_model {
            None => self.get(index)? as u8,
            Some(model) => {
                self.check_context(scores)?;
                if index >= self.header.entries {
                    return Err(Error::IndexOutOfRange {
                        index,
                        len: self.header.entries,
                    });
                }
                self.get_distance_huffman(model, scores, index, None)?
            }
        };
        Ok((v != NO_DISTANCE_BYTE).then_some(u16::from(v)))
    }

    /// Whether [`Table::get_distance_after`] reads this (distance) table with `scores`: both
    /// ctx-huffman, of the same sub-block size (at most 256 entries), their blocks whole
    /// sub-blocks, so that a distance sub-block's entries are those of one score sub-block.
    pub(crate) fn takes_score_prefix(&self, scores: &Table) -> bool {
        let shift = self.header.sub_block_shift;
        let whole = |t: &Table| t.header.block_entries % (1 << shift) == 0;
        self.distance_model.is_some()
            && scores.model.is_some()
            && scores.romein.is_none()
            && scores.header.sub_block_shift == shift
            && shift <= 8
            && whole(self)
            && whole(scores)
    }

    /// The scores of the entries of `index`'s sub-block from its first up to `index`, into
    /// `out` (their count returned; the last is the score of `index`): from the cache when
    /// the sub-block is there, else decoded up to `index` only (not cached). For
    /// [`Tablebase::distance`](crate::Tablebase::distance), which needs them all as the
    /// context of the distance of `index`; for a ctx-huffman score table of sub-blocks of at
    /// most `out.len()` entries ([`Table::takes_score_prefix`]).
    pub(crate) fn score_prefix(&self, index: u64, out: &mut [i8]) -> Result<usize, Error> {
        if index >= self.header.entries {
            return Err(Error::IndexOutOfRange {
                index,
                len: self.header.entries,
            });
        }
        let Some(model) = &self.model else {
            return Err(Error::InvalidState(format!(
                "{}: score prefixes of a ctx-huffman table only",
                self.path.display()
            )));
        };
        let be = u64::from(self.header.block_entries);
        let (block, at) = (index / be, (index % be) as usize);
        let shift = self.header.sub_block_shift;
        let k = at >> shift;
        let first = k << shift;
        let want = at - first + 1;
        let Some(out) = out.get_mut(..want) else {
            return Err(Error::InvalidState(format!(
                "{}: sub-blocks of {} entries",
                self.path.display(),
                1u64 << shift
            )));
        };
        let per_block = be.div_ceil(1 << shift);
        let key = block * per_block + k as u64;
        {
            let slot = &self.cache[(key % self.cache.len() as u64) as usize];
            let slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
            if slot.block == key {
                let Some(data) = slot.data.get(..want) else {
                    return Err(self.corrupt(block, "short block".into()));
                };
                for (o, &v) in out.iter_mut().zip(data) {
                    *o = v as i8;
                }
                return Ok(want);
            }
        }
        let len = self.header.block_len(block);
        let src = self.checked_block(block)?;
        model
            .decode_sub_block_prefix(src, len, shift, k, out)
            .map_err(|e| self.corrupt(block, e.to_string()))?;
        Ok(want)
    }

    /// [`Table::get_distance`] of entry `index` given `prefix`, the scores of `index`'s
    /// sub-block from its first entry up to `index` in `scores` ([`Table::score_prefix`]; a
    /// table that [`Table::takes_score_prefix`]), instead of reading them from `scores`.
    pub(crate) fn get_distance_after(
        &self,
        index: u64,
        scores: &Table,
        prefix: &[i8],
    ) -> Result<Option<u16>, Error> {
        let Some(model) = &self.distance_model else {
            return self.get_distance(index, scores);
        };
        self.check_context(scores)?;
        if index >= self.header.entries {
            return Err(Error::IndexOutOfRange {
                index,
                len: self.header.entries,
            });
        }
        let v = self.get_distance_huffman(model, scores, index, Some(prefix))?;
        Ok((v != NO_DISTANCE_BYTE).then_some(u16::from(v)))
    }

    /// Checks that `scores` is the score table of this distance table's tier and index.
    fn check_context(&self, scores: &Table) -> Result<(), Error> {
        if scores.values() != Values::Scores
            || scores.tier() != self.tier()
            || scores.kind() != self.kind()
            || scores.len() != self.len()
        {
            return Err(Error::InvalidState(format!(
                "{}: the distances of tier {} ({}) are read with its scores, not with the {} \
                 of tier {} ({}, {} entries)",
                self.path.display(),
                self.tier(),
                self.kind().name(),
                scores.values().name(),
                scores.tier(),
                scores.kind().name(),
                scores.len()
            )));
        }
        Ok(())
    }

    /// [`Table::get_distance`] for ctx-huffman: entry `index` from the cache of decoded
    /// sub-blocks, or by decoding (and caching) its sub-block with the scores of its
    /// entries, read from `scores` through that table's cache.
    fn get_distance_huffman(
        &self,
        model: &DistanceModel,
        scores: &Table,
        index: u64,
        prefix: Option<&[i8]>,
    ) -> Result<u8, Error> {
        let be = u64::from(self.header.block_entries);
        let (block, at) = (index / be, (index % be) as usize);
        let shift = self.header.sub_block_shift;
        let len = self.header.block_len(block);
        let k = at >> shift;
        let per_block = (self.header.block_entries as u64).div_ceil(1 << shift);
        let key = block * per_block + k as u64;
        let slot = &self.cache[(key % self.cache.len() as u64) as usize];
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        let first = k << shift;
        let want = at - first + 1;
        if slot.block != key {
            slot.block = u64::MAX;
            slot.data.clear();
        }
        if slot.data.len() < want {
            // Decode on from the entries decoded so far up to entry `at`, with the scores
            // of those entries (on the stack for the usual sub-block).
            slot.block = u64::MAX;
            let done = slot.data.len();
            let (mut small, mut large) = ([0i8; 256], Vec::new());
            let context = match prefix {
                Some(prefix) if prefix.len() >= want => &prefix[..want],
                _ => {
                    let context = if want <= small.len() {
                        &mut small[..want]
                    } else {
                        large.resize(want, 0);
                        &mut large[..]
                    };
                    scores.read_cached(block * be + (first + done) as u64, &mut context[done..])?;
                    context
                }
            };
            let src = self.checked_block(block)?;
            let Slot { data, state, .. } = &mut *slot;
            model
                .decode_sub_block_prefix(src, len, shift, k, context, state, data)
                .map_err(|e| self.corrupt(block, e.to_string()))?;
            slot.block = key;
        }
        match slot.data.get(at - first) {
            Some(&v) => Ok(v),
            None => Err(self.corrupt(block, "short block".into())),
        }
    }

    /// Copies the entries `first..first + out.len()` (within the table) into `out` through
    /// the cache: each unit (block or sub-block) they lie in is taken from the cache, or
    /// decoded into it.
    fn read_cached(&self, first: u64, out: &mut [i8]) -> Result<(), Error> {
        let mut at = first;
        let end = first + out.len() as u64;
        while at < end {
            let dst = &mut out[(at - first) as usize..];
            let copied = self.with_unit(at, |data, unit_first| {
                let from = (at - unit_first) as usize;
                let src = data.get(from..).unwrap_or_default();
                let k = src.len().min(dst.len());
                for (d, &s) in dst[..k].iter_mut().zip(src) {
                    *d = s as i8;
                }
                k
            })?;
            if copied == 0 {
                return Err(self.corrupt(
                    at / u64::from(self.header.block_entries),
                    "short block".into(),
                ));
            }
            at += copied as u64;
        }
        Ok(())
    }

    /// The index kind the entries follow.
    pub fn kind(&self) -> IndexKind {
        self.header.kind
    }

    /// Number of entries.
    pub fn len(&self) -> u64 {
        self.header.entries
    }

    /// Whether the table has no entries (never true for a valid table).
    pub fn is_empty(&self) -> bool {
        self.header.entries == 0
    }

    /// Entries per block.
    pub fn block_entries(&self) -> u32 {
        self.header.block_entries
    }

    /// How the blocks are compressed. A Romein-Bal file ([`Table::romein`]) has no blocks and
    /// reports [`Compression::Zstd`]: ask [`Table::romein`] first.
    pub fn compression(&self) -> Compression {
        self.header.compression
    }

    /// Number of blocks.
    pub fn block_count(&self) -> u64 {
        self.block_count
    }

    /// The file's size in bytes.
    pub fn file_size(&self) -> u64 {
        self.map.len() as u64
    }

    /// Bits of file per entry.
    pub fn bits_per_entry(&self) -> f64 {
        self.file_size() as f64 * 8.0 / self.len().max(1) as f64
    }

    /// The whole-file checksum stored in the file (blake3, hex).
    /// For a Romein-Bal file, which stores none: the blake3 hash of the whole file, computed
    /// on the first call.
    pub fn checksum_hex(&self) -> String {
        if let Some((_, sum, _)) = &self.romein {
            return sum
                .get_or_init(|| format::hex(blake3::hash(&self.map).as_bytes()))
                .clone();
        }
        format::hex(&self.map[self.map.len() - CHECKSUM_LEN..])
    }

    /// Hashes the whole file (blake3) and compares with the stored checksum; returns the
    /// checksum (hex) when they agree. A Romein-Bal file stores none: its hash is returned
    /// ([`Table::checksum_hex`]).
    ///
    /// # Errors
    /// [`Error::ChecksumMismatch`].
    pub fn verify_checksum(&self) -> Result<String, Error> {
        if self.romein.is_some() {
            return Ok(self.checksum_hex());
        }
        let body = &self.map[..self.map.len() - CHECKSUM_LEN];
        let computed = format::hex(blake3::hash(body).as_bytes());
        let stored = self.checksum_hex();
        if computed == stored {
            Ok(computed)
        } else {
            Err(Error::ChecksumMismatch {
                path: self.path.clone(),
                stored,
                computed,
            })
        }
    }

    /// Releases the pages of the table's file that this process has read: they leave the
    /// process's resident set (they stay in the page cache, shared, while the system has room
    /// for them) and are read again from the file, unchanged, on the next access. For a
    /// reader that decodes a table once, or a part of it, and holds on to it: its resident set
    /// then holds the decoded scores, not the compressed table too. Does nothing for a table
    /// held in memory ([`Table::from_bytes`]) or where the system cannot release pages.
    pub fn release_pages(&self) {
        if let Bytes::Map(m) = &self.map {
            release(m, 0, m.len());
        }
    }

    /// [`Table::release_pages`] of the compressed blocks that hold the entries
    /// `first..first + len` and of their entries in the block index (every page either
    /// touches, and 2 MiB before each: pages of entries before the range that a fault in it
    /// may have mapped again, whose release would otherwise fall to no one; the header
    /// stays). Pages in use by another thread are only read again. A reader that decodes a
    /// long range group by group and releases each group so holds one group's pages at a
    /// time, its block index included (a 64th of a byte per entry at the default block size,
    /// which would otherwise build up to a range's 64th: 125 MB for a slice of 8 GB). Entries
    /// past the table are ignored. Nothing for a Romein-Bal file, whose pages hold the entries
    /// of any range scattered ([`Table::for_each_romein`] releases what it reads).
    pub fn release_entries(&self, first: u64, len: u64) {
        let Bytes::Map(m) = &self.map else { return };
        if self.romein.is_some() {
            // The entries of a range lie all over the file.
            return;
        }
        let be = u64::from(self.header.block_entries).max(1);
        let end = first.saturating_add(len).min(self.header.entries);
        if first >= end {
            return;
        }
        let (b0, b1) = (first / be, (end - 1) / be);
        let bytes: &[u8] = m;
        let offset = |b: u64| {
            if b < self.block_count {
                format::read_u64(bytes, self.index_offset + b as usize * INDEX_ENTRY) as usize
            } else {
                self.index_offset
            }
        };
        // Each span starts `MAP_AROUND` early: a fault maps pages before it too (the read of
        // `offset(b0)` here, a decoder's first read of a block), pages of entries released
        // already, which no other release would take back.
        let (start, stop) = (offset(b0), offset(b1 + 1).min(self.index_offset));
        if start < stop {
            let from = start.saturating_sub(MAP_AROUND);
            release(m, from, stop - from);
        }
        // The blocks' entries in the index, read to find them (b1 < block_count: `end` is
        // within the table).
        let index = self.index_offset + b0 as usize * INDEX_ENTRY;
        let from = index.saturating_sub(MAP_AROUND);
        release(m, from, index - from + (b1 - b0 + 1) as usize * INDEX_ENTRY);
    }

    /// The score stored at entry `index` (of a zstd distance table: its byte, as `i8`; see
    /// [`Table::get_distance`]).
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`], [`Error::CorruptBlock`] (the block's checksum, offsets,
    /// decompressed size or codes are wrong); [`Error::InvalidState`] for a ctx-huffman
    /// distance table, which is read with its scores ([`Table::get_distance`]).
    pub fn get(&self, index: u64) -> Result<i8, Error> {
        if index >= self.header.entries {
            return Err(Error::IndexOutOfRange {
                index,
                len: self.header.entries,
            });
        }
        if let Some((order, ..)) = &self.romein {
            return self.get_romein(order, index);
        }
        let v = self.with_unit(index, |data, first| {
            data.get((index - first) as usize).copied()
        })?;
        match v {
            Some(v) => Ok(v as i8),
            None => Err(self.corrupt(
                index / u64::from(self.header.block_entries),
                "short block".into(),
            )),
        }
    }

    /// Calls `f` with the decoded unit that holds entry `index` (within the table) and the
    /// entry of its first element: the block (zstd) or the sub-block (ctx-huffman) from the
    /// cache, or decoded into it. A Romein-Bal file's entry is read alone (its unit is the
    /// entry).
    fn with_unit<R>(&self, index: u64, f: impl FnOnce(&[u8], u64) -> R) -> Result<R, Error> {
        if let Some((order, ..)) = &self.romein {
            let v = self.get_romein(order, index)?;
            return Ok(f(&[v as u8], index));
        }
        if self.distance_model.is_some() {
            return Err(self.needs_scores());
        }
        let be = u64::from(self.header.block_entries);
        let block = index / be;
        let at = (index % be) as usize;
        let len = self.header.block_len(block);
        let (key, first) = match &self.model {
            Some(_) => {
                let shift = self.header.sub_block_shift;
                let k = at >> shift;
                let per_block = (self.header.block_entries as u64).div_ceil(1 << shift);
                (block * per_block + k as u64, k << shift)
            }
            None => (block, 0),
        };
        let slot = &self.cache[(key % self.cache.len() as u64) as usize];
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.block != key {
            slot.block = u64::MAX;
            match &self.model {
                Some(model) => {
                    let shift = self.header.sub_block_shift;
                    let src = self.checked_block(block)?;
                    slot.data
                        .resize(len.saturating_sub(first).min(1 << shift), 0);
                    model
                        .decode_sub_block(src, len, shift, first >> shift, &mut slot.data)
                        .map_err(|e| self.corrupt(block, e.to_string()))?;
                }
                None => {
                    slot.data.resize(len, 0);
                    self.decompress_block(block, &mut slot.data)?;
                }
            }
            slot.block = key;
        }
        Ok(f(&slot.data, block * be + first as u64))
    }

    /// The error of reading a ctx-huffman distance table without its scores.
    fn needs_scores(&self) -> Error {
        Error::InvalidState(format!(
            "{}: a ctx-huffman distance table is read with its tier's scores \
             (Table::get_distance, Table::read_distances_into)",
            self.path.display()
        ))
    }

    /// Decompresses every block in order: the whole table's scores (or a zstd distance
    /// table's bytes; a ctx-huffman one is read with [`Table::read_distances`]).
    ///
    /// # Errors
    /// [`Error::CorruptBlock`]; [`Error::InvalidState`] for a ctx-huffman distance table.
    pub fn read_all(&self) -> Result<Vec<i8>, Error> {
        let entries = usize::try_from(self.header.entries)
            .map_err(|_| self.corrupt(0, "too many entries for this machine".into()))?;
        let mut out = vec![0i8; entries];
        self.read_into(0, &mut out)?;
        Ok(out)
    }

    /// Decompresses the entries `first..first + out.len()` into `out`, block by block: the
    /// way to read a table in parallel, each thread taking a range of whole blocks (the
    /// library itself starts no thread).
    ///
    /// # Errors
    /// [`Error::InvalidState`] when `first` is not the first entry of a block, or the range
    /// does not end at the end of a block or of the table, and for a ctx-huffman distance
    /// table ([`Table::read_distances_into`]); [`Error::CorruptBlock`].
    pub fn read_into(&self, first: u64, out: &mut [i8]) -> Result<(), Error> {
        if self.romein.is_some() {
            return self.read_range(first, out);
        }
        if self.distance_model.is_some() {
            return Err(self.needs_scores());
        }
        self.check_whole_blocks(first, out.len())?;
        let be = u64::from(self.header.block_entries);
        // SAFETY: `i8` and `u8` have the same size and alignment, and every byte is a valid
        // `i8`; the slice reborrows `out` for this call only.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), out.len()) };
        for (k, chunk) in bytes.chunks_mut(be as usize).enumerate() {
            self.decompress_block(first / be + k as u64, chunk)?;
        }
        Ok(())
    }

    /// Checks that the entries `first..first + len` are whole blocks of the table.
    fn check_whole_blocks(&self, first: u64, len: usize) -> Result<(), Error> {
        let be = u64::from(self.header.block_entries);
        let end = first.checked_add(len as u64);
        let aligned = |e: u64| e % be == 0 || e == self.header.entries;
        if first % be != 0 || !end.is_some_and(|e| e <= self.header.entries && aligned(e)) {
            return Err(Error::InvalidState(format!(
                "{}: entries {first}..+{len} are not whole blocks of {be} entries within {}",
                self.path.display(),
                self.header.entries
            )));
        }
        Ok(())
    }

    /// The distances of a whole distance table, given the tier's `scores` (every entry, in
    /// index order): [`Table::read_distances_into`] of every block.
    ///
    /// # Errors
    /// As [`Table::read_distances_into`].
    pub fn read_distances(&self, scores: &[i8]) -> Result<Vec<u8>, Error> {
        let entries = usize::try_from(self.header.entries)
            .map_err(|_| self.corrupt(0, "too many entries for this machine".into()))?;
        let mut out = vec![0u8; entries];
        self.read_distances_into(0, scores, &mut out)?;
        Ok(out)
    }

    /// Decodes the distances of the entries `first..first + out.len()` of a distance table
    /// into `out` (one byte each, [`NO_DISTANCE_BYTE`] for none), block by block, given the
    /// scores of the same entries, `scores` (as many as `out`): a ctx-huffman distance table
    /// is coded in the context of each position's score. A zstd distance table does not
    /// read `scores`. As with [`Table::read_into`], the range is whole blocks: split a table
    /// between threads by blocks.
    ///
    /// # Errors
    /// [`Error::InvalidState`] when this table holds scores, `scores` is not as long as
    /// `out`, or the range is not whole blocks within the table; [`Error::CorruptBlock`]
    /// (also when a score given is outside the tier's range, or the blocks were coded with
    /// other scores and do not decode with these).
    pub fn read_distances_into(
        &self,
        first: u64,
        scores: &[i8],
        out: &mut [u8],
    ) -> Result<(), Error> {
        if self.header.values != Values::Distances {
            return Err(Error::InvalidState(format!(
                "{}: a table of scores, not of distances",
                self.path.display()
            )));
        }
        if scores.len() != out.len() {
            return Err(Error::InvalidState(format!(
                "{}: {} scores given for {} distances",
                self.path.display(),
                scores.len(),
                out.len()
            )));
        }
        self.check_whole_blocks(first, out.len())?;
        let be = self.header.block_entries as usize;
        let Some(model) = &self.distance_model else {
            for (k, chunk) in out.chunks_mut(be).enumerate() {
                self.decompress_block(first / be as u64 + k as u64, chunk)?;
            }
            return Ok(());
        };
        for (k, (chunk, context)) in out.chunks_mut(be).zip(scores.chunks(be)).enumerate() {
            let b = first / be as u64 + k as u64;
            let src = self.checked_block(b)?;
            model
                .decode_block(src, self.header.sub_block_shift, context, chunk)
                .map_err(|e| self.corrupt(b, e.to_string()))?;
        }
        Ok(())
    }

    /// Decompresses the entries `first..first + out.len()` into `out`, wherever the range
    /// starts and ends: the blocks it covers whole are decoded into `out` directly, the
    /// (at most two) blocks it cuts are decoded whole into a scratch buffer and the part in
    /// range copied. The way to read a slice of a table that does not follow block bounds
    /// (the library itself starts no thread: split a long range between threads).
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`] when the range ends past the table; [`Error::CorruptBlock`];
    /// [`Error::InvalidState`] for a ctx-huffman distance table
    /// ([`Table::read_distances_into`]).
    pub fn read_range(&self, first: u64, out: &mut [i8]) -> Result<(), Error> {
        if self.distance_model.is_some() {
            return Err(self.needs_scores());
        }
        let entries = self.header.entries;
        let end = first
            .checked_add(out.len() as u64)
            .filter(|&e| e <= entries)
            .ok_or(Error::IndexOutOfRange {
                index: first.saturating_add(out.len() as u64).saturating_sub(1),
                len: entries,
            })?;
        if let Some((order, ..)) = &self.romein {
            let cursor = TierIndex::new(self.header.tier, IndexKind::Reachable).cursor(first, end);
            for (o, p) in out.iter_mut().zip(cursor) {
                let g = order.rank_unchecked(&p);
                let v = self.map[g as usize] as i8;
                if v.unsigned_abs() > self.header.tier {
                    return Err(self.romein_score(g, v));
                }
                *o = v;
            }
            return Ok(());
        }
        let be = u64::from(self.header.block_entries);
        let mut at = first;
        let mut scratch: Vec<u8> = Vec::new();
        while at < end {
            let block = at / be;
            let block_start = block * be;
            let block_end = (block_start + be).min(entries);
            let stop = block_end.min(end);
            let dst = &mut out[(at - first) as usize..(stop - first) as usize];
            if at == block_start && stop == block_end {
                // SAFETY: `i8` and `u8` have the same size and alignment, and every byte is
                // a valid `i8`; the slice reborrows `out` for this call only.
                let bytes = unsafe {
                    std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<u8>(), dst.len())
                };
                self.decompress_block(block, bytes)?;
            } else {
                scratch.resize((block_end - block_start) as usize, 0);
                self.decompress_block(block, &mut scratch)?;
                let from = (at - block_start) as usize;
                for (d, &s) in dst.iter_mut().zip(&scratch[from..]) {
                    *d = s as i8;
                }
            }
            at = stop;
        }
        Ok(())
    }

    fn corrupt(&self, block: u64, detail: String) -> Error {
        Error::CorruptBlock {
            path: self.path.clone(),
            block,
            detail,
        }
    }

    /// The compressed bytes and stored checksum of block `b`.
    fn block_bytes(&self, b: u64) -> Result<(&[u8], u64), Error> {
        let bytes: &[u8] = &self.map;
        let e = self.index_offset + b as usize * INDEX_ENTRY;
        let start = format::read_u64(bytes, e);
        let sum = format::read_u64(bytes, e + 8);
        let end = if b + 1 < self.block_count {
            format::read_u64(bytes, e + INDEX_ENTRY)
        } else {
            self.index_offset as u64
        };
        if start < self.header_len as u64 || start > end || end > self.index_offset as u64 {
            return Err(self.corrupt(b, format!("bad offsets {start}..{end}")));
        }
        Ok((&bytes[start as usize..end as usize], sum))
    }

    /// Asks the processor to fetch the compressed bytes of the block that holds entry
    /// `index` into its caches, ahead of a probe of that entry (nothing on processors
    /// without a prefetch instruction we use, for a Romein-Bal file, or for an index out of
    /// range).
    pub fn prefetch(&self, index: u64) {
        if index >= self.header.entries || self.romein.is_some() {
            return;
        }
        if let Ok((src, _)) = self.block_bytes(index / u64::from(self.header.block_entries)) {
            prefetch_bytes(src);
        }
    }

    /// The compressed bytes of block `b`, once their checksum is checked.
    fn checked_block(&self, b: u64) -> Result<&[u8], Error> {
        let (src, sum) = self.block_bytes(b)?;
        let computed = format::block_checksum(src);
        if computed != sum {
            return Err(self.corrupt(
                b,
                format!("block checksum {computed:016x}, stored {sum:016x}"),
            ));
        }
        Ok(src)
    }

    /// Decompresses block `b` into `out`, whose length is the block's entry count (not for
    /// a ctx-huffman distance table, which needs its scores).
    fn decompress_block(&self, b: u64, out: &mut [u8]) -> Result<(), Error> {
        if self.distance_model.is_some() {
            return Err(self.needs_scores());
        }
        let src = self.checked_block(b)?;
        if let Some(model) = &self.model {
            return model
                .decode_block(src, self.header.sub_block_shift, out)
                .map_err(|e| self.corrupt(b, e.to_string()));
        }
        let n = DCTX.with(|cell| {
            let mut cell = cell.borrow_mut();
            if cell.is_none() {
                *cell = Some(zstd::bulk::Decompressor::new()?);
            }
            match cell.as_mut() {
                Some(d) => d.decompress_to_buffer(src, out),
                None => Err(std::io::Error::other("no zstd context")),
            }
        });
        match n {
            Ok(n) if n == out.len() => Ok(()),
            Ok(n) => Err(self.corrupt(b, format!("{n} entries, expected {}", out.len()))),
            Err(e) => Err(self.corrupt(b, format!("zstd: {e}"))),
        }
    }
}

/// Opens `path` for reading if it is a regular file (after following symbolic links), and
/// refuses anything else without blocking: a named pipe, a device, a socket or a directory.
/// The file is opened with `O_NONBLOCK` on Unix, so that opening a pipe with no writer
/// returns at once, and its type is then checked on the open descriptor (`fstat`). A
/// dangling symbolic link is named as such (the target it points to), not as a missing file.
///
/// # Errors
/// The file cannot be opened, or is not a regular file (`is a directory`, `is a named pipe
/// (FIFO), not a regular file`, ...).
pub(crate) fn open_regular(path: &Path) -> std::io::Result<File> {
    use std::io::{Error as IoError, ErrorKind};
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = match options.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(match std::fs::read_link(path) {
                Ok(target) => IoError::other(format!(
                    "a dangling symbolic link (to {}, which does not exist)",
                    target.display()
                )),
                Err(_) => e,
            })
        }
        Err(e) => return Err(e),
    };
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    if kind.is_dir() {
        return Err(IoError::new(ErrorKind::IsADirectory, "is a directory"));
    }
    let what = {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if kind.is_fifo() {
                "is a named pipe (FIFO), not a regular file"
            } else if kind.is_char_device() || kind.is_block_device() {
                "is a device, not a regular file"
            } else if kind.is_socket() {
                "is a socket, not a regular file"
            } else {
                "not a regular file"
            }
        }
        #[cfg(not(unix))]
        {
            "not a regular file"
        }
    };
    Err(IoError::new(ErrorKind::InvalidInput, what))
}

/// The most a fault on a mapped file maps before the page it reads, by the kernel's measure:
/// the whole large folio of the page cache that holds the page (up to 2 MiB, a PMD on
/// x86-64), or else the cached pages of the aligned fault-around window (64 KiB by default).
const MAP_AROUND: usize = 2 << 20;

/// Drops the pages `offset..offset + len` of `map` from the process's resident set
/// (`madvise(MADV_DONTNEED)`); a failure (an unsupported system) leaves them resident.
fn release(map: &Mmap, offset: usize, len: usize) {
    let len = len.min(map.len().saturating_sub(offset));
    if len == 0 {
        return;
    }
    #[cfg(unix)]
    {
        // SAFETY: `MADV_DONTNEED` on this read-only, shared mapping of a file (`Mmap::map`
        // maps with `MAP_SHARED` and `PROT_READ`) only unmaps the pages from this process: the
        // next access, by this thread or any other, reads the same bytes of the file again
        // (from the page cache, or the disk). No byte under a live reference changes, unlike
        // a private or anonymous mapping, whose pages would come back zeroed; the file itself
        // is never modified while the table is open (see `Table::open`'s safety contract).
        let _ =
            unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, offset, len) };
    }
    #[cfg(not(unix))]
    let _ = (map, offset, len);
}

/// Asks the processor to fetch the cache lines of `bytes` (a hint: no effect on what is
/// read).
#[inline]
fn prefetch_bytes(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let mut at = bytes.as_ptr() as usize & !63;
        let end = bytes.as_ptr() as usize + bytes.len();
        while at < end {
            // SAFETY: a prefetch is a hint that never faults, whatever the address; every
            // address here lies in the cache lines of `bytes` anyway. (The intrinsic is safe
            // to call from Rust 1.87 on; the block keeps 1.85 building.)
            #[allow(unused_unsafe)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(at as *const i8);
            }
            at += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}
