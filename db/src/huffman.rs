//! The `ctx-huffman` block encoding (compression code 2, see `db/FORMAT.md`): a static
//! order-1 canonical Huffman code, one model per table.
//!
//! A score `v` of tier `n` is the symbol `v + n` (`0 ..= 2n`). Each entry is coded with the
//! code of its *context*, the symbol of the entry before it; the first entry of every
//! sub-block uses the context of score 0 (symbol `n`), so sub-blocks decode independently.
//! The model is, for each context, the canonical code length of every symbol (0 = absent),
//! at most `limit` bits, so one lookup into a per-context table of `2^limit` entries decodes a
//! symbol. A context with a single symbol codes it with zero bits (its length byte is 1).
//!
//! Why hand-written and not a crate: a probe decodes a few hundred entries from the middle of
//! a block, with a model shared by the whole table and built once; general-purpose entropy
//! coders (zstd, the Huffman crates) rebuild their tables per frame or per stream, which is
//! the fixed cost of ~7 µs this encoding removes. The code is small: code lengths
//! ([`code_lengths`]), the tables ([`Model`]), a bit writer and a lookup decoder.
//!
//! Bitstream: LSB-first (the first code's first bit is bit 0 of byte 0); codes are stored
//! bit-reversed so that the decoder indexes its table with the next `limit` stream bits.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use thiserror::Error;

pub mod distance;

/// The symbols present (code length above 0) in context `ctx` of a model whose code lengths
/// there are `lens`, checked: none longer than `limit`, a lone symbol of length 1, and two
/// or more lengths that make a complete prefix code (their Kraft sum is exactly 1). Shared
/// by the models of scores and of distances.
///
/// # Errors
/// [`CodecError::TooLong`], [`CodecError::LoneSymbol`] or [`CodecError::NotPrefixCode`].
pub(crate) fn checked_symbols(
    ctx: usize,
    lens: &[u8],
    limit: u8,
) -> Result<Vec<usize>, CodecError> {
    let present: Vec<usize> = (0..lens.len()).filter(|&x| lens[x] > 0).collect();
    if let Some(&bad) = present.iter().find(|&&x| lens[x] > limit) {
        return Err(CodecError::TooLong {
            context: ctx,
            symbol: bad,
            length: lens[bad],
            limit,
        });
    }
    match present.as_slice() {
        [] => {}
        &[x] if lens[x] != 1 => {
            return Err(CodecError::LoneSymbol {
                context: ctx,
                symbol: x,
                length: lens[x],
            })
        }
        [_] => {}
        _ => {
            let kraft: u64 = present.iter().map(|&x| 1u64 << (limit - lens[x])).sum();
            if kraft != 1u64 << limit {
                return Err(CodecError::NotPrefixCode(ctx));
            }
        }
    }
    Ok(present)
}

#[cfg(test)]
mod round_trips;

/// What is wrong with a model, a block to encode or an encoded block. The messages become
/// the details of [`crate::Error::BadHeader`], [`crate::Error::CorruptBlock`] and the
/// writer's errors.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CodecError {
    /// A score outside `−n ..= n` of its tier `n`.
    #[error("score {score} outside -{tier}..={tier}")]
    ScoreOutOfRange {
        /// The score.
        score: i8,
        /// The tier.
        tier: u8,
    },
    /// A model of the wrong size.
    #[error("{found} code lengths, expected {expected}")]
    ModelSize {
        /// The number of code lengths given.
        found: usize,
        /// The number the tier needs.
        expected: usize,
    },
    /// A code length limit outside `1 ..= MAX_LIMIT`.
    #[error("code length limit {0}")]
    Limit(u8),
    /// A code longer than the model's limit.
    #[error("context {context}: symbol {symbol} has length {length} > {limit}")]
    TooLong {
        /// The context.
        context: usize,
        /// The symbol.
        symbol: usize,
        /// Its code length.
        length: u8,
        /// The model's limit.
        limit: u8,
    },
    /// The only symbol of a context with a length other than 1.
    #[error("context {context}: lone symbol {symbol} has length {length}")]
    LoneSymbol {
        /// The context.
        context: usize,
        /// The symbol.
        symbol: usize,
        /// Its code length.
        length: u8,
    },
    /// The code lengths of a context do not form a complete prefix code.
    #[error("context {0}: code lengths are not a complete prefix code")]
    NotPrefixCode(usize),
    /// A sub-block whose length in bits does not fit its u16 in the sub-block table.
    #[error("sub-block of {0} bits")]
    SubBlockBits(u64),
    /// A (context, symbol) pair to encode that the model has no code for.
    #[error("symbol {symbol} after {context} is not in the model")]
    NotInModel {
        /// The symbol.
        symbol: usize,
        /// The context.
        context: usize,
    },
    /// An encoded block shorter than its sub-block table.
    #[error("shorter than its sub-block table")]
    ShortTable,
    /// An entry asked for past the end of its block.
    #[cfg(test)]
    #[error("entry {at} of a block of {len}")]
    EntryOutOfRange {
        /// The entry.
        at: usize,
        /// The block's entry count.
        len: usize,
    },
    /// A sub-block asked for past the end of its block, or with an output of the wrong
    /// length.
    #[error("sub-block {sub} of a block of {len}")]
    SubBlockOutOfRange {
        /// The sub-block.
        sub: usize,
        /// The block's entry count.
        len: usize,
    },
    /// A code that runs past the end of its sub-block.
    #[cfg(test)]
    #[error("a code runs past its sub-block")]
    CodePastSubBlock,
    /// A sub-block whose codes do not end where the sub-block does.
    #[error("sub-block {sub} ends at bit {pos}, expected {end}")]
    SubBlockEnd {
        /// The sub-block.
        sub: usize,
        /// Where its codes end (bit).
        pos: u64,
        /// Where it ends (bit).
        end: u64,
    },
    /// A sub-block that ends past the bitstream.
    #[error("sub-block {sub} ends at bit {end}, past the stream ({bits} bits)")]
    SubBlockPastStream {
        /// The sub-block.
        sub: usize,
        /// Where it ends (bit).
        end: u64,
        /// The stream's length in bits.
        bits: u64,
    },
    /// Stream bits that are no code of their context.
    #[error("no code in context {0}")]
    NoCode(usize),
    /// A distance table's entry whose distance byte does not go with its score: a distance
    /// (0 ..= 254) where the score is 0, none (255) where it is not, or one past the model's
    /// alphabet.
    #[error("distance byte {distance} with score {score}")]
    DistanceScore {
        /// The distance byte (255 for none).
        distance: u8,
        /// The position's score.
        score: i8,
    },
    /// A distance model whose head is out of range: its bucket count or its alphabet.
    #[error("distance model with {buckets} buckets and {alphabet} symbols")]
    DistanceModelHead {
        /// The number of last-distance buckets.
        buckets: u8,
        /// The number of distances coded (`0 .. alphabet`).
        alphabet: u8,
    },
    /// A distance the model has no code for in its context.
    #[error("distance {distance} in context {context} is not in the model")]
    DistanceNotInModel {
        /// The distance.
        distance: u8,
        /// The context (`score slot × buckets + bucket`).
        context: usize,
    },
    /// Scores given as the context of a distance block that do not cover its entries.
    #[error("{found} scores for {expected} distances")]
    ContextLength {
        /// The number of scores given.
        found: usize,
        /// The number of entries.
        expected: usize,
    },
}

/// The longest code length the format allows.
pub const MAX_LIMIT: u8 = 15;
/// The shortest code-length limit the writer accepts: enough for 97 symbols (tier 48).
pub const MIN_LIMIT: u8 = 7;
/// The largest sub-block the format allows, as a shift (4096 entries): a sub-block's length
/// in bits must fit the u16 of the sub-block table.
pub const MAX_SUB_BLOCK_SHIFT: u8 = 12;

/// A decode-table entry that no valid code reaches (a context absent from the model).
const INVALID: u16 = u16::MAX;
/// A first-level decode-table entry whose code is longer than [`PRIMARY_BITS`]: look in
/// the full table.
const ESCAPE: u16 = u16::MAX - 1;
/// Bits of the first-level decode table: `2^8` entries per context (25 KiB at tier 24, in
/// the L1 cache), which decodes all but the rare long codes; the full `2^limit` table
/// (L2-sized) answers the rest. Measured on tier 24: 1.2-1.4 µs a probe instead of 1.7-1.9.
const PRIMARY_BITS: u32 = 8;

/// Number of symbols of tier `n`: `2n + 1`.
pub fn symbol_count(n: u8) -> usize {
    2 * usize::from(n) + 1
}

/// Huffman code lengths of the symbols with nonzero `counts`, each at most `limit` bits
/// (0 for an absent symbol; 1 for the only symbol present). When a plain Huffman code is
/// longer than `limit`, the counts are flattened (halved, keeping them nonzero) and the code
/// rebuilt until it fits: the usual heuristic, within a fraction of a percent of optimal on
/// tier tables.
///
/// # Panics
/// If `2^limit` is smaller than the number of symbols present (the code cannot exist).
pub fn code_lengths(counts: &[u64], limit: u8) -> Vec<u8> {
    let present: Vec<usize> = (0..counts.len()).filter(|&s| counts[s] > 0).collect();
    let mut lengths = vec![0u8; counts.len()];
    match present.len() {
        0 => return lengths,
        1 => {
            lengths[present[0]] = 1;
            return lengths;
        }
        k => assert!(
            (k as u64) <= 1u64 << limit,
            "{k} symbols need more than {limit} bits"
        ),
    }
    let mut weights: Vec<u64> = present.iter().map(|&s| counts[s]).collect();
    loop {
        let depths = huffman_depths(&weights);
        if depths.iter().all(|&d| d <= u32::from(limit)) {
            for (&s, &d) in present.iter().zip(&depths) {
                lengths[s] = d as u8;
            }
            return lengths;
        }
        for w in &mut weights {
            *w = (*w >> 1).max(1);
        }
    }
}

/// The depth of every leaf of a Huffman tree of `weights` (at least two).
fn huffman_depths(weights: &[u64]) -> Vec<u32> {
    let k = weights.len();
    let mut parent = vec![usize::MAX; 2 * k - 1];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| Reverse((w, i)))
        .collect();
    let mut next = k;
    while let (Some(Reverse((wa, a))), Some(Reverse((wb, b)))) = (heap.pop(), heap.pop()) {
        parent[a] = next;
        parent[b] = next;
        heap.push(Reverse((wa + wb, next)));
        next += 1;
    }
    (0..k)
        .map(|leaf| {
            let mut d = 0;
            let mut x = leaf;
            while parent[x] != usize::MAX {
                x = parent[x];
                d += 1;
            }
            d
        })
        .collect()
}

/// The order-1 model of one table: code lengths, and the encode and decode tables built
/// from them.
#[derive(Clone, Debug)]
pub struct Model {
    n: u8,
    symbols: usize,
    limit: u8,
    lengths: Vec<u8>,
    /// Per context, per symbol: the bit-reversed code (low 16 bits) and its length (bits
    /// 16..24); the length is 0 for a context's only symbol.
    codes: Vec<u32>,
    /// Per context, `2^limit` entries: symbol << 4 | code length, or `INVALID`.
    decode: Vec<u16>,
    /// Per context, `2^PRIMARY_BITS` entries: as `decode` for codes of at most
    /// `PRIMARY_BITS` bits, `ESCAPE` for longer ones, `INVALID` in an absent context.
    primary: Vec<u16>,
}

impl Model {
    /// Counts, for tier `n`, the (context, symbol) pairs of one block of `scores` (score
    /// bytes, `score as u8`) with
    /// sub-blocks of `2^sub_shift` entries, adding to `counts` (`symbol_count(n)²`,
    /// context-major).
    ///
    /// # Errors
    /// A score outside `−n ..= n` (its index and value).
    pub fn count_block(
        n: u8,
        scores: &[u8],
        sub_shift: u8,
        counts: &mut [u64],
    ) -> Result<(), CodecError> {
        let s = symbol_count(n);
        for sub in scores.chunks(1 << sub_shift) {
            let mut ctx = usize::from(n);
            for &v in sub {
                let sym = symbol_of(n, v)?;
                counts[ctx * s + sym] += 1;
                ctx = sym;
            }
        }
        Ok(())
    }

    /// The model of tier `n` with codes of at most `limit` bits for the pair `counts`
    /// (`symbol_count(n)²`, context-major, as [`Model::count_block`] gathers them).
    ///
    /// # Panics
    /// If `counts` has the wrong length or `limit` is outside `MIN_LIMIT ..= MAX_LIMIT`.
    pub fn from_counts(n: u8, counts: &[u64], limit: u8) -> Model {
        let s = symbol_count(n);
        assert_eq!(counts.len(), s * s, "counts of tier {n}");
        assert!((MIN_LIMIT..=MAX_LIMIT).contains(&limit), "limit {limit}");
        let lengths: Vec<u8> = counts
            .chunks(s)
            .flat_map(|c| code_lengths(c, limit))
            .collect();
        match Model::from_lengths(n, limit, &lengths) {
            Ok(m) => m,
            Err(e) => unreachable!("built code lengths are valid: {e}"),
        }
    }

    /// The model of tier `n` from its stored code lengths (`symbol_count(n)²` bytes,
    /// context-major) and its length limit; checks that every context's lengths form a
    /// complete prefix code (Kraft sum 1), a single symbol of length 1, or no symbol.
    ///
    /// # Errors
    /// What is wrong with the lengths.
    pub fn from_lengths(n: u8, limit: u8, lengths: &[u8]) -> Result<Model, CodecError> {
        let s = symbol_count(n);
        if lengths.len() != s * s {
            return Err(CodecError::ModelSize {
                found: lengths.len(),
                expected: s * s,
            });
        }
        if limit == 0 || limit > MAX_LIMIT {
            return Err(CodecError::Limit(limit));
        }
        let size = 1usize << limit;
        let mut codes = vec![0u32; s * s];
        let mut decode = vec![INVALID; s * size];
        for ctx in 0..s {
            let lens = &lengths[ctx * s..(ctx + 1) * s];
            let table = &mut decode[ctx * size..(ctx + 1) * size];
            let present = checked_symbols(ctx, lens, limit)?;
            match present.len() {
                0 => continue,
                1 => {
                    let x = present[0];
                    table.fill((x as u16) << 4);
                    codes[ctx * s + x] = 0;
                    continue;
                }
                _ => {}
            }
            // Canonical codes: by length, then symbol.
            let mut order = present;
            order.sort_by_key(|&x| (lens[x], x));
            let mut code = 0u32;
            let mut prev = 0u8;
            for x in order {
                let len = lens[x];
                code <<= len - prev;
                prev = len;
                let rev = code.reverse_bits() >> (32 - u32::from(len));
                codes[ctx * s + x] = rev | (u32::from(len) << 16);
                let entry = ((x as u16) << 4) | u16::from(len);
                let mut i = rev as usize;
                while i < size {
                    table[i] = entry;
                    i += 1 << len;
                }
                code += 1;
            }
        }
        let primary = decode
            .chunks(size)
            .flat_map(|t| {
                (0..1usize << PRIMARY_BITS).map(move |i| {
                    let e = t[i & (size - 1)];
                    if e != INVALID && u32::from(e & 15) > PRIMARY_BITS {
                        ESCAPE
                    } else {
                        e
                    }
                })
            })
            .collect();
        Ok(Model {
            n,
            symbols: s,
            limit,
            lengths: lengths.to_vec(),
            codes,
            decode,
            primary,
        })
    }

    /// The code lengths, as stored in the table's header.
    pub fn lengths(&self) -> &[u8] {
        &self.lengths
    }

    /// Encodes one block of `scores` (score bytes, `score as u8`) with sub-blocks of `2^sub_shift` entries: the sub-block
    /// table (the length in bits of every sub-block but the last, u16 each) and the
    /// bitstream, appended to `out`.
    ///
    /// # Errors
    /// A score outside `−n ..= n`, or one whose (context, symbol) pair is absent from the
    /// model.
    pub fn encode_block(
        &self,
        scores: &[u8],
        sub_shift: u8,
        out: &mut Vec<u8>,
    ) -> Result<(), CodecError> {
        let subs = scores.len().div_ceil(1 << sub_shift).max(1);
        let table_at = out.len();
        out.resize(table_at + 2 * (subs - 1), 0);
        let mut w = BitWriter::new(out);
        let mut start = 0u64;
        for (k, sub) in scores.chunks(1 << sub_shift).enumerate() {
            if k > 0 {
                let bits = w.bits - start;
                let bits = u16::try_from(bits).map_err(|_| CodecError::SubBlockBits(bits))?;
                let at = table_at + 2 * (k - 1);
                w.out[at..at + 2].copy_from_slice(&bits.to_le_bytes());
                start = w.bits;
            }
            let mut ctx = usize::from(self.n);
            for &v in sub {
                let sym = symbol_of(self.n, v)?;
                let c = self.codes[ctx * self.symbols + sym];
                let len = c >> 16;
                if len == 0 && self.lengths[ctx * self.symbols + sym] == 0 {
                    return Err(CodecError::NotInModel {
                        symbol: sym,
                        context: ctx,
                    });
                }
                w.put(u64::from(c & 0xffff), len);
                ctx = sym;
            }
        }
        w.finish();
        Ok(())
    }

    /// Splits an encoded block of `len` entries into its sub-block start offsets (bits) and
    /// its bitstream; checks that the sub-blocks lie inside the stream.
    fn split<'a>(
        &self,
        block: &'a [u8],
        len: usize,
        sub_shift: u8,
    ) -> Result<Parts<'a>, CodecError> {
        split_block(block, len, sub_shift)
    }

    /// Decodes entry `at` of an encoded block of `len` entries (sub-blocks of
    /// `2^sub_shift`): only the sub-block that holds it, up to it. (The reader decodes
    /// whole sub-blocks, which it caches; this checks them entry by entry in the tests.)
    ///
    /// # Errors
    /// The block is malformed (a code absent from the model, a sub-block outside the
    /// stream, a code running past it).
    #[cfg(test)]
    pub fn decode_at(
        &self,
        block: &[u8],
        len: usize,
        sub_shift: u8,
        at: usize,
    ) -> Result<i8, CodecError> {
        if at >= len {
            return Err(CodecError::EntryOutOfRange { at, len });
        }
        let parts = self.split(block, len, sub_shift)?;
        let k = at >> sub_shift;
        let (start, end) = parts.sub_range(k)?;
        let mut ctx = u16::from(self.n);
        let pos = self.run(
            parts.stream,
            start,
            (at & ((1 << sub_shift) - 1)) + 1,
            &mut ctx,
            |_, _| {},
        )?;
        if pos > end {
            return Err(CodecError::CodePastSubBlock);
        }
        Ok(self.score(ctx))
    }

    /// Decodes a whole encoded block into `out` (its length is the block's entry count),
    /// as score bytes (`score as u8`).
    ///
    /// # Errors
    /// As [`Model::decode_at`]; also a sub-block that does not end exactly where the next
    /// begins.
    pub fn decode_block(
        &self,
        block: &[u8],
        sub_shift: u8,
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        let parts = self.split(block, out.len(), sub_shift)?;
        let total = out.len();
        for (k, sub) in out.chunks_mut(1 << sub_shift).enumerate() {
            self.decode_part(&parts, total, sub_shift, k, sub)?;
        }
        Ok(())
    }

    /// Decodes sub-block `k` (entries `k << sub_shift ..`) of an encoded block of `len`
    /// entries into `out`, whose length is that sub-block's entry count.
    ///
    /// # Errors
    /// As [`Model::decode_block`].
    pub fn decode_sub_block(
        &self,
        block: &[u8],
        len: usize,
        sub_shift: u8,
        k: usize,
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        let first = k << sub_shift;
        if first >= len || out.len() != (len - first).min(1 << sub_shift) {
            return Err(CodecError::SubBlockOutOfRange { sub: k, len });
        }
        let parts = self.split(block, len, sub_shift)?;
        self.decode_part(&parts, len, sub_shift, k, out)
    }

    /// Decodes the first `out.len()` entries of sub-block `k` (entries `k << sub_shift ..`)
    /// of an encoded block of `len` entries into `out`, as scores (`i8`): what a probe of
    /// the last of them needs, when it also needs the scores before it. Decoded to the
    /// sub-block's end, its codes are checked to end where it does.
    ///
    /// # Errors
    /// As [`Model::decode_sub_block`]; also more entries than the sub-block holds.
    pub fn decode_sub_block_prefix(
        &self,
        block: &[u8],
        len: usize,
        sub_shift: u8,
        k: usize,
        out: &mut [i8],
    ) -> Result<(), CodecError> {
        let first = k << sub_shift;
        if first >= len || out.is_empty() || out.len() > (len - first).min(1 << sub_shift) {
            return Err(CodecError::SubBlockOutOfRange { sub: k, len });
        }
        let parts = self.split(block, len, sub_shift)?;
        let n = i16::from(self.n);
        let (start, end) = parts.sub_range(k)?;
        let mut ctx = u16::from(self.n);
        let count = out.len();
        let pos = self.run(parts.stream, start, count, &mut ctx, |i, sym| {
            out[i] = (sym as i16 - n) as i8;
        })?;
        if count == (len - first).min(1 << sub_shift) {
            let last = (k + 1) << sub_shift >= len;
            if !ends_right(pos, end, last) {
                return Err(CodecError::SubBlockEnd { sub: k, pos, end });
            }
        }
        Ok(())
    }

    /// Decodes sub-block `k` of a block of `total` entries into `sub` and checks that its
    /// codes end where the sub-block does.
    fn decode_part(
        &self,
        parts: &Parts<'_>,
        total: usize,
        sub_shift: u8,
        k: usize,
        sub: &mut [u8],
    ) -> Result<(), CodecError> {
        let n = i16::from(self.n);
        let (start, end) = parts.sub_range(k)?;
        let mut ctx = u16::from(self.n);
        let pos = self.run(parts.stream, start, sub.len(), &mut ctx, |i, sym| {
            sub[i] = (sym as i16 - n) as i8 as u8;
        })?;
        let last = (k + 1) << sub_shift >= total;
        if !ends_right(pos, end, last) {
            return Err(CodecError::SubBlockEnd { sub: k, pos, end });
        }
        Ok(())
    }

    #[cfg(test)]
    fn score(&self, sym: u16) -> i8 {
        (sym as i16 - i16::from(self.n)) as i8
    }

    /// Decodes `count` symbols from bit `pos` of `stream`, starting in context `*ctx`;
    /// calls `each(i, symbol)`; leaves the last symbol in `*ctx` and returns the bit
    /// position after the last code. Reads past the stream's end see zero bits (the caller
    /// checks the returned position).
    #[inline]
    fn run(
        &self,
        stream: &[u8],
        mut pos: u64,
        count: usize,
        ctx: &mut u16,
        mut each: impl FnMut(usize, u16),
    ) -> Result<u64, CodecError> {
        let limit = u32::from(self.limit);
        let mask = (1u64 << limit) - 1;
        let pmask = (1u64 << PRIMARY_BITS) - 1;
        let per_refill = (56 / limit) as usize;
        let mut c = usize::from(*ctx);
        let mut i = 0;
        while i < count {
            let mut buf = peek(stream, pos);
            let stop = (i + per_refill).min(count);
            while i < stop {
                let mut e = self.primary[(c << PRIMARY_BITS) | (buf & pmask) as usize];
                if e >= ESCAPE {
                    e = self.decode[(c << limit) | (buf & mask) as usize];
                }
                if e == INVALID {
                    return Err(CodecError::NoCode(c));
                }
                let len = u32::from(e & 15);
                buf >>= len;
                pos += u64::from(len);
                c = usize::from(e >> 4);
                each(i, c as u16);
                i += 1;
            }
        }
        *ctx = c as u16;
        Ok(pos)
    }
}

/// The symbol of the score byte `v` (`score as u8`) in tier `n`.
fn symbol_of(n: u8, v: u8) -> Result<usize, CodecError> {
    let v = v as i8;
    let sym = i16::from(v) + i16::from(n);
    if (0..=2 * i16::from(n)).contains(&sym) {
        Ok(sym as usize)
    } else {
        Err(CodecError::ScoreOutOfRange { score: v, tier: n })
    }
}

/// Splits an encoded block of `len` entries (sub-blocks of `2^sub_shift`) into its sub-block
/// table and its bitstream.
fn split_block(block: &[u8], len: usize, sub_shift: u8) -> Result<Parts<'_>, CodecError> {
    let subs = len.div_ceil(1 << sub_shift).max(1);
    let head = 2 * (subs - 1);
    if block.len() < head {
        return Err(CodecError::ShortTable);
    }
    let (table, stream) = block.split_at(head);
    Ok(Parts {
        table,
        stream,
        stream_bits: stream.len() as u64 * 8,
    })
}

/// Whether a sub-block whose codes end at bit `pos` ends right: exactly where the next
/// begins (`end`), or for the last sub-block of a block within the stream's last byte.
fn ends_right(pos: u64, end: u64, last: bool) -> bool {
    if last {
        pos <= end && end - pos < 8
    } else {
        pos == end
    }
}

/// The 64 stream bits from bit `pos` on (at least 57 meaningful); zeros past the end.
#[inline]
fn peek(stream: &[u8], pos: u64) -> u64 {
    let byte = (pos >> 3) as usize;
    let word = match stream.get(byte..byte + 8) {
        Some(b) => {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            u64::from_le_bytes(a)
        }
        None => {
            let mut a = [0u8; 8];
            if let Some(rest) = stream.get(byte..) {
                a[..rest.len()].copy_from_slice(rest);
            }
            u64::from_le_bytes(a)
        }
    };
    word >> (pos & 7)
}

/// An encoded block split into its sub-block table and bitstream.
struct Parts<'a> {
    table: &'a [u8],
    stream: &'a [u8],
    stream_bits: u64,
}

impl Parts<'_> {
    /// The bit range of sub-block `k` in the stream.
    fn sub_range(&self, k: usize) -> Result<(u64, u64), CodecError> {
        let subs = self.table.len() / 2 + 1;
        let mut start = 0u64;
        for j in 0..k {
            start += u64::from(u16::from_le_bytes([
                self.table[2 * j],
                self.table[2 * j + 1],
            ]));
        }
        let end = if k + 1 < subs {
            start
                + u64::from(u16::from_le_bytes([
                    self.table[2 * k],
                    self.table[2 * k + 1],
                ]))
        } else {
            self.stream_bits
        };
        if end > self.stream_bits {
            return Err(CodecError::SubBlockPastStream {
                sub: k,
                end,
                bits: self.stream_bits,
            });
        }
        Ok((start, end))
    }
}

/// Appends bits LSB-first to a byte vector.
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    held: u32,
    /// Bits written so far (since the writer was made).
    bits: u64,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut Vec<u8>) -> Self {
        BitWriter {
            out,
            acc: 0,
            held: 0,
            bits: 0,
        }
    }

    /// Appends the `len` (<= 16) low bits of `code`.
    #[inline]
    fn put(&mut self, code: u64, len: u32) {
        self.acc |= code << self.held;
        self.held += len;
        self.bits += u64::from(len);
        if self.held >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.held -= 32;
        }
    }

    /// Flushes the last bits, zero-padded to a byte.
    fn finish(self) {
        let bytes = self.held.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_respect_the_limit_and_kraft() {
        // Fibonacci counts make a plain Huffman code as deep as possible.
        let mut counts = vec![1u64, 1];
        while counts.len() < 40 {
            let k = counts.len();
            counts.push(counts[k - 1] + counts[k - 2]);
        }
        for limit in [7u8, 11, 12, 15] {
            let l = code_lengths(&counts, limit);
            assert!(l.iter().all(|&x| (1..=limit).contains(&x)), "{l:?}");
            let kraft: u64 = l.iter().map(|&x| 1u64 << (limit - x)).sum();
            assert_eq!(kraft, 1 << limit);
        }
        assert_eq!(code_lengths(&[0, 5, 0], 11), vec![0, 1, 0]);
        assert_eq!(code_lengths(&[0, 0], 11), vec![0, 0]);
        assert_eq!(code_lengths(&[3, 3], 11), vec![1, 1]);
    }

    #[test]
    fn bad_lengths_are_refused() {
        // Tier 1: 3 symbols, 9 lengths.
        let ok = [1u8, 2, 2, 0, 1, 0, 0, 0, 0];
        assert!(Model::from_lengths(1, 11, &ok).is_ok());
        for bad in [
            [1u8, 1, 2, 0, 1, 0, 0, 0, 0], // Kraft sum > 1
            [2, 2, 0, 0, 1, 0, 0, 0, 0],   // Kraft sum < 1
            [1, 2, 2, 0, 2, 0, 0, 0, 0],   // lone symbol of length 2
            [1, 2, 12, 0, 1, 0, 0, 0, 0],  // longer than the limit
        ] {
            assert!(Model::from_lengths(1, 11, &bad).is_err(), "{bad:?}");
        }
        assert!(Model::from_lengths(1, 11, &ok[..8]).is_err());
        assert!(Model::from_lengths(1, 16, &ok).is_err());
    }

    #[test]
    fn lone_symbol_contexts_cost_no_bits() {
        let scores = [0u8; 1000];
        let mut counts = vec![0; 9];
        Model::count_block(1, &scores, 8, &mut counts).unwrap();
        let m = Model::from_counts(1, &counts, 11);
        let mut out = Vec::new();
        m.encode_block(&scores, 8, &mut out).unwrap();
        // Only the sub-block table (3 zero lengths), no stream.
        assert_eq!(out, vec![0; 6]);
        let mut back = vec![9u8; 1000];
        m.decode_block(&out, 8, &mut back).unwrap();
        assert!(back.iter().all(|&x| x == 0));
        assert_eq!(m.decode_at(&out, 1000, 8, 999).unwrap(), 0);
        // A context the model lacks is an error, not a wrong score.
        assert!(m.encode_block(&[1], 8, &mut Vec::new()).is_err());
        assert!(m.encode_block(&[2], 8, &mut Vec::new()).is_err());
    }

    #[test]
    fn damaged_streams_are_errors() {
        let scores: Vec<u8> = (0..700).map(|i| (((i * 7 % 5) as i8) - 2) as u8).collect();
        let mut counts = vec![0; 25];
        Model::count_block(2, &scores, 8, &mut counts).unwrap();
        let m = Model::from_counts(2, &counts, 11);
        let mut out = Vec::new();
        m.encode_block(&scores, 8, &mut out).unwrap();
        for cut in 0..out.len() {
            let mut back = vec![0u8; 700];
            assert!(
                m.decode_block(&out[..cut], 8, &mut back).is_err(),
                "cut {cut}"
            );
        }
        let mut long = out.clone();
        long.push(0);
        assert!(m.decode_block(&long, 8, &mut vec![0u8; 700]).is_err());
    }
}
