//! The table file format: its version ([`VERSION`]), its magic numbers, the file name of
//! each tier ([`tier_file_name`], [`tier_of_file_name`]) and the compressions of its blocks
//! ([`Compression`]). `db/FORMAT.md` describes the format in words; this module is its
//! single definition in code, the byte layout below included (which only the reader and the
//! writer of this crate use).
//!
//! ```text
//! header   48 fixed bytes + rules text padded to 8, ending with an xxh3-64 of itself
//!          (+ for ctx-huffman: the order-1 code lengths, padded to 8)
//! blocks   one per block of `block_entries` values (one byte each: a score as i8, or a
//!          distance as u8, 255 for none): a zstd frame, or a ctx-huffman block (sub-block
//!          table + bitstream; a distance's context is its position's score)
//! index    one 16-byte entry per block: start offset (u64), xxh3-64 of the compressed bytes
//! trailer  index offset (u64), block count (u64), end magic (8), blake3 of all before (32)
//! ```
//! Every integer is little-endian.

use std::path::Path;

use crate::error::Error;
use crate::huffman::{distance, symbol_count};
use crate::index::{IndexKind, TierIndex};
use crate::position::MAX_SEEDS;
use crate::rules::Rules;

/// The first 8 bytes of every table.
pub const MAGIC: [u8; 8] = *b"OWARE-TB";
/// The 8 bytes before the final checksum.
pub const END_MAGIC: [u8; 8] = *b"OWTB-END";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;
/// Size of the fixed part of the header.
pub(crate) const FIXED_HEADER: usize = 48;
/// Size of one block-index entry.
pub(crate) const INDEX_ENTRY: usize = 16;
/// Size of the trailer.
pub(crate) const TRAILER: usize = 56;
/// Size of the whole-file checksum (blake3) at the very end.
pub(crate) const CHECKSUM_LEN: usize = 32;
/// Value encoding 1: one signed byte per position, the score.
pub(crate) const ENCODING_I8_SCORE: u8 = 1;
/// Value encoding 2: one unsigned byte per position, its distance to conversion
/// (docs/RULES.md), [`NO_DISTANCE_BYTE`] where the score is 0; zstd blocks, or ctx-huffman
/// blocks coded in the context of each position's score (the reachable index only).
pub(crate) const ENCODING_U8_DISTANCE: u8 = 2;
/// The byte of a distance table that stands for no distance (a position scored 0).
pub const NO_DISTANCE_BYTE: u8 = 255;
/// The longest distance a distance table holds.
pub const MAX_STORED_DISTANCE: u16 = 254;
/// Compression 1: every block is one zstd frame.
pub(crate) const COMPRESSION_ZSTD: u8 = 1;
/// Compression 2: every block is coded with the table's order-1 canonical Huffman model
/// (`ctx-huffman`, [`crate::huffman`]).
pub(crate) const COMPRESSION_HUFFMAN: u8 = 2;
/// The largest block the reader accepts (entries); a guard against absurd headers.
pub(crate) const MAX_BLOCK_ENTRIES: u32 = 1 << 24;
/// The longest rules text a header may hold.
pub(crate) const MAX_RULES_LEN: usize = 1024;

/// The file name of tier `n`: `tier-NN.owt`.
pub fn tier_file_name(n: u8) -> String {
    format!("tier-{n:02}.owt")
}

/// The tier whose table file is named `name` (the inverse of [`tier_file_name`]), or `None`
/// for any other name.
pub fn tier_of_file_name(name: &str) -> Option<u8> {
    let n = name
        .strip_prefix("tier-")?
        .strip_suffix(".owt")?
        .parse::<u8>()
        .ok()?;
    (n <= crate::position::MAX_SEEDS && tier_file_name(n) == name).then_some(n)
}

/// The file name of tier `n`'s distance table: `tier-NN.owd`.
pub fn distance_file_name(n: u8) -> String {
    format!("tier-{n:02}.owd")
}

/// The tier whose distance table is named `name` (the inverse of [`distance_file_name`]),
/// or `None` for any other name.
pub fn tier_of_distance_file_name(name: &str) -> Option<u8> {
    let n = name
        .strip_prefix("tier-")?
        .strip_suffix(".owd")?
        .parse::<u8>()
        .ok()?;
    (n <= crate::position::MAX_SEEDS && distance_file_name(n) == name).then_some(n)
}

/// What the entries of a table are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Values {
    /// Scores, one `i8` per position (`tier-NN.owt`).
    Scores,
    /// Distances to conversion, one `u8` per position (`tier-NN.owd`), 255 for none.
    Distances,
}

impl Values {
    /// The header code.
    pub(crate) fn code(self) -> u8 {
        match self {
            Values::Scores => ENCODING_I8_SCORE,
            Values::Distances => ENCODING_U8_DISTANCE,
        }
    }

    /// The file name of tier `n`'s table of these values.
    pub fn file_name(self, n: u8) -> String {
        match self {
            Values::Scores => tier_file_name(n),
            Values::Distances => distance_file_name(n),
        }
    }

    /// `scores` or `distances`.
    pub fn name(self) -> &'static str {
        match self {
            Values::Scores => "scores",
            Values::Distances => "distances",
        }
    }
}

/// The checksum of one compressed block, stored in its index entry.
#[inline]
pub(crate) fn block_checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// Lower-case hex of bytes.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The error of parsing a [`Compression`] from a name it does not know (the name is
/// kept).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown compression `{0}` (zstd, huffman)")]
pub struct UnknownCompression(pub String);

/// How the blocks of a table are compressed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Code 1: every block is one zstd frame.
    Zstd,
    /// Code 2: a static order-1 canonical Huffman code, one model per table (the default).
    #[default]
    Huffman,
}

impl Compression {
    /// Every compression, in code order.
    pub const ALL: [Compression; 2] = [Compression::Zstd, Compression::Huffman];

    /// The header code.
    pub(crate) fn code(self) -> u8 {
        match self {
            Compression::Zstd => COMPRESSION_ZSTD,
            Compression::Huffman => COMPRESSION_HUFFMAN,
        }
    }

    /// The compression of a header code, if known.
    pub(crate) fn from_code(code: u8) -> Option<Compression> {
        Compression::ALL.into_iter().find(|c| c.code() == code)
    }

    /// The name used on the command line and in `oware info`: `zstd` or `huffman`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Zstd => "zstd",
            Compression::Huffman => "huffman",
        }
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Compression {
    type Err = UnknownCompression;

    /// `zstd`, or `huffman` (also `ctx-huffman`).
    fn from_str(s: &str) -> Result<Self, UnknownCompression> {
        match s {
            "zstd" => Ok(Compression::Zstd),
            "huffman" | "ctx-huffman" => Ok(Compression::Huffman),
            _ => Err(UnknownCompression(s.to_string())),
        }
    }
}

/// The header fields of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// Format version.
    pub version: u32,
    /// Tier `n` (seeds on the board).
    pub tier: u8,
    /// The index the entries follow.
    pub kind: IndexKind,
    /// Number of entries (positions) in the table.
    pub entries: u64,
    /// Entries per block (the last block may hold fewer).
    pub block_entries: u32,
    /// What the entries are (header byte 30: [`ENCODING_I8_SCORE`] or
    /// [`ENCODING_U8_DISTANCE`]).
    pub values: Values,
    /// The compression of the blocks.
    pub compression: Compression,
    /// The zstd level the blocks were compressed with (informational; 0 for ctx-huffman).
    pub level: i32,
    /// The rules the table was built with.
    pub rules: Rules,
    /// ctx-huffman: the longest code, in bits (header byte 38; 0 for zstd).
    pub code_limit: u8,
    /// ctx-huffman: log2 of the entries per sub-block (header byte 39; 0 for zstd).
    pub sub_block_shift: u8,
    /// ctx-huffman: the model, stored after the rules text (empty for zstd): for scores the
    /// code lengths, `(2n+1)²` bytes, context-major; for distances the bucket count `K`, the
    /// alphabet size `A`, then `2n · K · A` code lengths ([`crate::huffman::distance`]).
    pub model: Vec<u8>,
}

fn kind_code(kind: IndexKind) -> u8 {
    match kind {
        IndexKind::Dense => 0,
        IndexKind::Reachable => 1,
    }
}

fn read_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

/// Reads a little-endian `u64` at `at` of `b` (the caller checks the bounds).
pub(crate) fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

impl Header {
    /// A version-1 header of a zstd table of tier `tier` under `rules` (set the ctx-huffman
    /// fields to make it a ctx-huffman header).
    pub fn new(rules: &Rules, tier: u8, kind: IndexKind, block_entries: u32, level: i32) -> Self {
        Header {
            version: VERSION,
            tier,
            kind,
            entries: TierIndex::new(tier, kind).size(),
            block_entries,
            values: Values::Scores,
            compression: Compression::Zstd,
            level,
            rules: *rules,
            code_limit: 0,
            sub_block_shift: 0,
            model: Vec::new(),
        }
    }

    /// Number of blocks.
    pub fn block_count(&self) -> u64 {
        self.entries.div_ceil(u64::from(self.block_entries.max(1)))
    }

    /// Number of entries of block `b`.
    pub fn block_len(&self, b: u64) -> usize {
        let start = b * u64::from(self.block_entries);
        (self.entries - start).min(u64::from(self.block_entries)) as usize
    }

    /// The encoded header, its length a multiple of 8.
    pub fn encode(&self) -> Vec<u8> {
        let rules = self.rules.to_string().into_bytes();
        let padded = rules.len().div_ceil(8) * 8;
        let len = FIXED_HEADER + padded + self.model.len().div_ceil(8) * 8;
        let mut b = Vec::with_capacity(len);
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&self.version.to_le_bytes());
        b.extend_from_slice(&(len as u32).to_le_bytes());
        b.extend_from_slice(&self.entries.to_le_bytes());
        b.extend_from_slice(&self.block_entries.to_le_bytes());
        b.push(self.tier);
        b.push(kind_code(self.kind));
        b.push(self.values.code());
        b.push(self.compression.code());
        b.extend_from_slice(&self.level.to_le_bytes());
        b.extend_from_slice(&(rules.len() as u16).to_le_bytes());
        b.extend_from_slice(&[self.code_limit, self.sub_block_shift]);
        debug_assert_eq!(b.len(), 40);
        b.extend_from_slice(&[0; 8]); // checksum, filled below
        b.extend_from_slice(&rules);
        b.resize(FIXED_HEADER + padded, 0);
        b.extend_from_slice(&self.model);
        b.resize(len, 0);
        let sum = header_checksum(&b);
        b[40..48].copy_from_slice(&sum.to_le_bytes());
        b
    }

    /// Decodes and validates the header at the start of `file` (the whole file's bytes);
    /// returns it with its encoded length. Checks the magic, the version, the header
    /// checksum, every field's range, and that the entry count is the size of the tier's
    /// index.
    ///
    /// # Errors
    /// [`Error::Truncated`], [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::BadHeader`].
    pub fn decode(path: &Path, file: &[u8]) -> Result<(Header, usize), Error> {
        let size = file.len() as u64;
        let truncated = |detail: &str| Error::Truncated {
            path: path.to_path_buf(),
            size,
            detail: detail.to_string(),
        };
        let bad = |detail: String| Error::BadHeader {
            path: path.to_path_buf(),
            detail,
        };
        if file.len() < MAGIC.len() {
            return Err(truncated("shorter than the magic"));
        }
        if file[..8] != MAGIC {
            return Err(Error::BadMagic {
                path: path.to_path_buf(),
            });
        }
        if file.len() < FIXED_HEADER {
            return Err(truncated("shorter than the header"));
        }
        let version = read_u32(file, 8);
        let len = read_u32(file, 12) as usize;
        let rules_len = usize::from(u16::from_le_bytes([file[36], file[37]]));
        let max_model = symbol_count(MAX_SEEDS)
            .pow(2)
            .max(max_distance_model())
            .div_ceil(8)
            * 8;
        if len < FIXED_HEADER || len % 8 != 0 || len > FIXED_HEADER + MAX_RULES_LEN + 8 + max_model
        {
            return Err(bad(format!("header length {len}")));
        }
        if file.len() < len {
            return Err(truncated("shorter than the header"));
        }
        let stored = read_u64(file, 40);
        if header_checksum(&file[..len]) != stored {
            return Err(bad("header checksum mismatch".into()));
        }
        if version != VERSION {
            return Err(Error::UnsupportedVersion {
                path: path.to_path_buf(),
                found: version,
                supported: VERSION,
            });
        }
        let entries = read_u64(file, 16);
        let block_entries = read_u32(file, 24);
        let tier = file[28];
        let kind = match file[29] {
            0 => IndexKind::Dense,
            1 => IndexKind::Reachable,
            k => return Err(bad(format!("index kind {k}"))),
        };
        let encoding = file[30];
        let level = read_u32(file, 32) as i32;
        let (code_limit, sub_block_shift) = (file[38], file[39]);
        if tier > MAX_SEEDS {
            return Err(bad(format!("tier {tier}")));
        }
        let compression = Compression::from_code(file[31])
            .ok_or_else(|| bad(format!("compression {}", file[31])))?;
        let values = match encoding {
            ENCODING_I8_SCORE => Values::Scores,
            ENCODING_U8_DISTANCE => Values::Distances,
            _ => return Err(bad(format!("value encoding {encoding}"))),
        };
        let rules_padded = rules_len.div_ceil(8) * 8;
        let model_at = FIXED_HEADER + rules_padded;
        let model_len = match compression {
            Compression::Zstd => {
                if code_limit != 0 || sub_block_shift != 0 {
                    return Err(bad("reserved bytes 38..40 are not zero".into()));
                }
                0
            }
            Compression::Huffman => {
                if code_limit == 0 || code_limit > crate::huffman::MAX_LIMIT {
                    return Err(bad(format!("code length limit {code_limit}")));
                }
                if sub_block_shift > crate::huffman::MAX_SUB_BLOCK_SHIFT {
                    return Err(bad(format!("sub-block shift {sub_block_shift}")));
                }
                match values {
                    Values::Scores => symbol_count(tier).pow(2),
                    Values::Distances => {
                        if file[29] != 1 {
                            return Err(bad(
                                "a ctx-huffman distance table of the dense index".into()
                            ));
                        }
                        // The model's head: its bucket count and alphabet size (checked when
                        // the model is built).
                        let (k, a) = match file.get(model_at..model_at + distance::MODEL_HEAD) {
                            Some(&[k, a]) if model_at + distance::MODEL_HEAD <= len => {
                                (usize::from(k), usize::from(a))
                            }
                            _ => return Err(bad("no room for the distance model".into())),
                        };
                        distance::MODEL_HEAD + 2 * usize::from(tier) * k * a
                    }
                }
            }
        };
        if model_at + model_len.div_ceil(8) * 8 != len {
            return Err(bad(format!(
                "header length {len} does not fit rules text of {rules_len} bytes and a model \
                 of {model_len}"
            )));
        }
        if block_entries == 0 || block_entries > MAX_BLOCK_ENTRIES {
            return Err(bad(format!("{block_entries} entries per block")));
        }
        let expected = TierIndex::new(tier, kind).size();
        if entries != expected {
            return Err(bad(format!(
                "{entries} entries; tier {tier} ({}) has {expected}",
                kind.name()
            )));
        }
        let text = std::str::from_utf8(&file[FIXED_HEADER..FIXED_HEADER + rules_len])
            .map_err(|_| bad("rules text is not UTF-8".into()))?;
        let rules: Rules = text
            .parse()
            .map_err(|e| bad(format!("rules text `{text}`: {e}")))?;
        let model = file[model_at..model_at + model_len].to_vec();
        Ok((
            Header {
                version,
                tier,
                kind,
                entries,
                block_entries,
                values,
                compression,
                level,
                rules,
                code_limit,
                sub_block_shift,
                model,
            },
            len,
        ))
    }
}

/// The largest model of a ctx-huffman distance table: tier 48, every bucket, every
/// distance.
fn max_distance_model() -> usize {
    distance::MODEL_HEAD
        + 2 * usize::from(MAX_SEEDS)
            * usize::from(distance::MAX_BUCKETS)
            * usize::from(distance::MAX_ALPHABET)
}

/// xxh3-64 of the header with its checksum field taken as zero.
fn header_checksum(header: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&header[..40]);
    h.update(&[0; 8]);
    h.update(&header[48..]);
    h.digest()
}

/// Encodes one block-index entry.
pub(crate) fn encode_index_entry(start: u64, checksum: u64) -> [u8; INDEX_ENTRY] {
    let mut e = [0u8; INDEX_ENTRY];
    e[..8].copy_from_slice(&start.to_le_bytes());
    e[8..].copy_from_slice(&checksum.to_le_bytes());
    e
}

/// Encodes the trailer less its last 32 bytes (the blake3 of everything before them).
pub(crate) fn encode_trailer_head(
    index_offset: u64,
    block_count: u64,
) -> [u8; TRAILER - CHECKSUM_LEN] {
    let mut t = [0u8; TRAILER - CHECKSUM_LEN];
    t[..8].copy_from_slice(&index_offset.to_le_bytes());
    t[8..16].copy_from_slice(&block_count.to_le_bytes());
    t[16..24].copy_from_slice(&END_MAGIC);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tier_file_names_round_trip() {
        for n in 0..=48 {
            assert_eq!(tier_of_file_name(&tier_file_name(n)), Some(n));
        }
        for bad in [
            "tier-7.owt",
            "tier-49.owt",
            "tier-07.owt.tmp",
            "tier-x.owt",
            "t-07.owt",
        ] {
            assert_eq!(tier_of_file_name(bad), None, "{bad}");
        }
    }

    fn huffman_header() -> Header {
        Header {
            compression: Compression::Huffman,
            level: 0,
            code_limit: 12,
            sub_block_shift: 8,
            model: vec![1; 25],
            ..Header::new(&Rules::ABAPA, 2, IndexKind::Reachable, 1024, 0)
        }
    }

    /// `bytes` with byte `at` set to `v` and the header checksum recomputed.
    fn patched(bytes: &[u8], at: usize, v: u8) -> Vec<u8> {
        let mut b = bytes.to_vec();
        b[at] = v;
        let sum = header_checksum(&b);
        b[40..48].copy_from_slice(&sum.to_le_bytes());
        b
    }

    #[test]
    fn distance_file_names_round_trip_and_differ_from_score_tables() {
        for n in 0..=48 {
            assert_eq!(tier_of_distance_file_name(&distance_file_name(n)), Some(n));
            assert_eq!(tier_of_file_name(&distance_file_name(n)), None);
            assert_eq!(tier_of_distance_file_name(&tier_file_name(n)), None);
        }
    }

    #[test]
    fn distance_headers_round_trip() {
        let h = Header {
            values: Values::Distances,
            ..Header::new(&Rules::ABAPA, 5, IndexKind::Reachable, 1024, 9)
        };
        let b = h.encode();
        assert_eq!(Header::decode(Path::new("x"), &b).unwrap(), (h, b.len()));
        // ctx-huffman: the model's head says its length, 2 + 2n·K·A (tier 2: 2 + 4·3·5).
        let mut model = vec![3u8, 5];
        model.resize(2 + 4 * 3 * 5, 1);
        let h = Header {
            values: Values::Distances,
            model,
            ..huffman_header()
        };
        let b = h.encode();
        assert_eq!(b.len(), 48 + 8 + 64);
        assert_eq!(Header::decode(Path::new("x"), &b).unwrap(), (h, b.len()));
        // A score model taken for a distance model, a head that disagrees with the length,
        // and the dense index are bad headers.
        let p = Path::new("x");
        for bad in [
            patched(&huffman_header().encode(), 30, ENCODING_U8_DISTANCE),
            patched(&b, 56, 4),
            patched(&b, 57, 4),
            patched(&b, 29, 0),
        ] {
            assert!(matches!(
                Header::decode(p, &bad),
                Err(Error::BadHeader { .. })
            ));
        }
        let z = Header::new(&Rules::ABAPA, 2, IndexKind::Reachable, 1024, 3).encode();
        assert!(matches!(
            Header::decode(Path::new("x"), &patched(&z, 30, 3)),
            Err(Error::BadHeader { .. })
        ));
    }

    #[test]
    fn huffman_headers_round_trip() {
        let h = huffman_header();
        let b = h.encode();
        // 48 + "abapa" padded to 8 + 25 model bytes padded to 32.
        assert_eq!(b.len(), 48 + 8 + 32);
        assert_eq!(Header::decode(Path::new("x"), &b).unwrap(), (h, b.len()));
    }

    #[test]
    fn unknown_compression_and_bad_huffman_fields_are_bad_headers() {
        let p = Path::new("x");
        let z = Header::new(&Rules::ABAPA, 2, IndexKind::Reachable, 1024, 3).encode();
        let h = huffman_header().encode();
        let cases = [
            patched(&z, 31, 0),
            patched(&z, 31, 3),
            patched(&z, 31, 2), // ctx-huffman without a model
            patched(&h, 31, 1), // zstd with a model and nonzero bytes 38..40
            patched(&z, 38, 12),
            patched(&h, 38, 0),
            patched(&h, 38, 16),
            patched(&h, 39, 13),
            patched(&h, 28, 3), // tier 3 needs a 49-byte model
        ];
        for (k, b) in cases.iter().enumerate() {
            let r = Header::decode(p, b);
            assert!(matches!(r, Err(Error::BadHeader { .. })), "case {k}: {r:?}");
        }
        assert!(Header::decode(p, &patched(&z, 31, 1)).is_ok());
    }

    #[test]
    fn header_round_trips_and_names_the_problem() {
        let h = Header::new(&Rules::AWARI, 7, IndexKind::Reachable, 4096, 9);
        let bytes = h.encode();
        assert_eq!(bytes.len() % 8, 0);
        let p = std::path::Path::new("x.owt");
        assert_eq!(Header::decode(p, &bytes).unwrap(), (h, bytes.len()));
        assert!(matches!(
            Header::decode(p, b"NOTATABLE......"),
            Err(Error::BadMagic { .. })
        ));
        let mut v = bytes.clone();
        v[8] = 2; // version
        assert!(matches!(
            Header::decode(p, &v),
            Err(Error::BadHeader { .. })
        ));
    }

    #[test]
    fn unsupported_version_is_reported() {
        // A header of a future version, with a valid header checksum.
        let h = Header {
            version: 2,
            ..Header::new(&Rules::ABAPA, 2, IndexKind::Reachable, 16, 1)
        };
        let bytes = h.encode();
        let r = Header::decode(std::path::Path::new("x.owt"), &bytes);
        assert!(
            matches!(
                r,
                Err(Error::UnsupportedVersion {
                    found: 2,
                    supported: 1,
                    ..
                })
            ),
            "{r:?}"
        );
    }
}
