//! The ctx-huffman code of distance tables (value encoding 2 with compression 2, see
//! `db/FORMAT.md`): a static canonical Huffman code of the distances whose context is the
//! position's own score (the entry of the tier's score table at the same index) and a bucket
//! of the last distance coded before it in its sub-block.
//!
//! A position scored 0 has no distance (its byte is 255, [`NONE`]) and costs no bit: the
//! decoder, which is given the scores of the sub-block, skips it. A distance `d` of a position
//! scored `s ≠ 0` is coded with the code of context `(s, min(b, K − 1))`, where `b` is the
//! [`bucket`] of the last distance coded in the sub-block (0 before the first) and `K` the
//! model's bucket count (1 ..= [`MAX_BUCKETS`]: the writer picks the count that makes the
//! smallest table, model included). The alphabet is the distances `0 .. A`, `A` at most 255.
//!
//! The sub-block table, the bitstream and its bit order are those of the score code
//! ([`super`]). Decoding is one look-up of the next 8 bits in a 256-entry table of the
//! context; the rare longer codes (about 1 % of the distances of tier 20) are decoded from the
//! canonical code's first code per length, so a model's tables stay small (half a KiB per
//! context) whatever its code length limit.

use super::{
    checked_symbols, code_lengths, ends_right, peek, split_block, BitWriter, CodecError, Parts,
    MAX_LIMIT,
};

/// The byte of a position without a distance (scored 0): never coded.
pub const NONE: u8 = 255;
/// The most last-distance buckets a model may have (the values of [`bucket`]).
pub const MAX_BUCKETS: u8 = 15;
/// The largest alphabet: the distances `0 ..= 254`.
pub const MAX_ALPHABET: u8 = 255;
/// The shortest code length limit the writer accepts for distances: enough for 255 symbols.
pub const MIN_LIMIT: u8 = 8;
/// Bytes of a stored model before its code lengths: the bucket count `K` and the alphabet
/// size `A`.
pub const MODEL_HEAD: usize = 2;
/// Bits of the first-level decode table of a context (`2^8` entries of 2 bytes).
const PRIMARY_BITS: u32 = 8;
/// A decode-table entry of a context absent from the model.
const INVALID: u16 = u16::MAX;
/// A decode-table entry whose code is longer than [`PRIMARY_BITS`].
const ESCAPE: u16 = u16::MAX - 1;
/// Flag of [`DistanceModel::codes`]: the distance has a code in the context (a lone
/// symbol's code has length 0).
const PRESENT: u32 = 1 << 24;

/// The bucket of a distance, as the context of the next one: `d + 1` for `d` in 0..=7, then
/// 9 for 8..=11, 10 for 12..=15, 11 for 16..=23, 12 for 24..=31, 13 for 32..=47, 14 above; 0
/// stands for no distance yet in the sub-block.
#[inline]
pub fn bucket(d: u8) -> usize {
    match d {
        0..=7 => usize::from(d) + 1,
        8..=11 => 9,
        12..=15 => 10,
        16..=23 => 11,
        24..=31 => 12,
        32..=47 => 13,
        _ => 14,
    }
}

/// Number of nonzero scores of tier `n`: `2n`.
fn score_slots(n: u8) -> usize {
    2 * usize::from(n)
}

/// The slot of the nonzero score `s` of tier `n`: `−n ..= −1` are `0 .. n`, `1 ..= n` are
/// `n .. 2n`.
#[inline]
fn score_slot(n: u8, s: i8) -> Result<usize, CodecError> {
    let (n16, s16) = (i16::from(n), i16::from(s));
    if s == 0 || s16.abs() > n16 {
        return Err(CodecError::ScoreOutOfRange { score: s, tier: n });
    }
    Ok(if s < 0 {
        (s16 + n16) as usize
    } else {
        (s16 + n16 - 1) as usize
    })
}

/// The length of the pair counts of tier `n` that [`DistanceModel::count_block`] gathers:
/// per nonzero score, per bucket value (`0 ..` [`MAX_BUCKETS`]), per distance `0 ..= 254`.
pub fn counts_len(n: u8) -> usize {
    score_slots(n) * usize::from(MAX_BUCKETS) * usize::from(MAX_ALPHABET)
}

/// The canonical code of one context, for the codes longer than [`PRIMARY_BITS`]: per
/// length, the first code, the number of codes and where its symbols start in the
/// context's symbols sorted by (length, symbol).
#[derive(Clone, Debug, Default)]
struct Canonical {
    first: [u16; 16],
    count: [u16; 16],
    offset: [u16; 16],
}

/// Where the decoder of a sub-block stands after some of its entries: the bit of the stream
/// it reads next, and the bucket of the last distance decoded (0 for none yet).
#[derive(Clone, Copy, Debug, Default)]
pub struct PartState {
    pos: u64,
    last: usize,
}

/// The code of one distance table: its code lengths (as stored in the header), and the
/// encode and decode tables built from them.
#[derive(Clone, Debug)]
pub struct DistanceModel {
    n: u8,
    /// `K`: bucket values `0 .. K` (the last distance's bucket, capped at `K − 1`).
    buckets: usize,
    /// `A`: the distances `0 .. A` are the symbols.
    alphabet: usize,
    limit: u8,
    /// `[K, A]` then `2n · K · A` code lengths, context-major.
    stored: Vec<u8>,
    /// Per context, per symbol: the bit-reversed code (low 16 bits), its length (bits
    /// 16..24) and [`PRESENT`].
    codes: Vec<u32>,
    /// Per context, `2^PRIMARY_BITS` entries: the symbol's capped bucket (the context
    /// offset of the next distance, at most 14) << 12 | symbol << 4 | length, [`ESCAPE`] or
    /// [`INVALID`].
    primary: Vec<u16>,
    /// Per context: its canonical code by length.
    long: Vec<Canonical>,
    /// Per context, `A` entries: its symbols sorted by (length, symbol).
    sorted: Vec<u8>,
    /// Per score byte (`s as u8`): the first context of score `s`, `slot(s) · K`;
    /// [`u32::MAX`] for 0 and the scores outside `−n ..= n`.
    score_base: Box<[u32; 256]>,
    /// Per distance: its bucket capped at `K − 1`, the context offset of the next one.
    next_bucket: Box<[u8; 256]>,
}

impl DistanceModel {
    /// Counts, for tier `n`, the (context, distance) pairs of one block of `distances` (one
    /// byte each, [`NONE`] for none) whose scores are `scores`, with sub-blocks of
    /// `2^sub_shift` entries, adding to `counts` ([`counts_len`] long).
    ///
    /// # Errors
    /// A score outside `−n ..= n`, a distance byte that does not go with its score
    /// ([`CodecError::DistanceScore`]), or `scores` of another length.
    pub fn count_block(
        n: u8,
        distances: &[u8],
        scores: &[i8],
        sub_shift: u8,
        counts: &mut [u64],
    ) -> Result<(), CodecError> {
        if scores.len() != distances.len() {
            return Err(CodecError::ContextLength {
                found: scores.len(),
                expected: distances.len(),
            });
        }
        let a = usize::from(MAX_ALPHABET);
        let k = usize::from(MAX_BUCKETS);
        let sub = 1 << sub_shift;
        for (ds, ss) in distances.chunks(sub).zip(scores.chunks(sub)) {
            let mut last = 0;
            for (&d, &s) in ds.iter().zip(ss) {
                if s == 0 {
                    if d != NONE {
                        return Err(CodecError::DistanceScore {
                            distance: d,
                            score: s,
                        });
                    }
                    continue;
                }
                let slot = score_slot(n, s)?;
                if d == NONE {
                    return Err(CodecError::DistanceScore {
                        distance: d,
                        score: s,
                    });
                }
                counts[(slot * k + last) * a + usize::from(d)] += 1;
                last = bucket(d);
            }
        }
        Ok(())
    }

    /// The model of tier `n` with codes of at most `limit` bits for the pair `counts`
    /// ([`counts_len`] long, as [`DistanceModel::count_block`] gathers them): the alphabet is
    /// the distances up to the longest counted, and the bucket count the one (of
    /// `1 ..= MAX_BUCKETS`) that makes the fewest bits of codes and model together (the
    /// fewest buckets among equals).
    ///
    /// # Panics
    /// If `counts` has the wrong length or `limit` is outside `MIN_LIMIT ..= MAX_LIMIT`.
    pub fn from_counts(n: u8, counts: &[u64], limit: u8) -> DistanceModel {
        assert_eq!(counts.len(), counts_len(n), "counts of tier {n}");
        assert!((MIN_LIMIT..=MAX_LIMIT).contains(&limit), "limit {limit}");
        let a_max = usize::from(MAX_ALPHABET);
        let k_max = usize::from(MAX_BUCKETS);
        let alphabet = (0..a_max)
            .rev()
            .find(|&d| (0..score_slots(n) * k_max).any(|c| counts[c * a_max + d] > 0))
            .map_or(1, |d| d + 1);
        let mut best: Option<(u64, Vec<u8>)> = None;
        for k in 1..=k_max {
            let mut stored = vec![k as u8, alphabet as u8];
            let mut bits = 0u64;
            for slot in 0..score_slots(n) {
                for b in 0..k {
                    // The fine buckets that bucket `b` of `k` merges: `b` alone, or
                    // `b ..` for the last.
                    let fine = if b + 1 == k { b..k_max } else { b..b + 1 };
                    let merged: Vec<u64> = (0..alphabet)
                        .map(|d| {
                            fine.clone()
                                .map(|f| counts[(slot * k_max + f) * a_max + d])
                                .sum()
                        })
                        .collect();
                    let lengths = code_lengths(&merged, limit);
                    if lengths.iter().filter(|&&l| l > 0).count() > 1 {
                        bits += merged
                            .iter()
                            .zip(&lengths)
                            .map(|(&c, &l)| c * u64::from(l))
                            .sum::<u64>();
                    }
                    stored.extend_from_slice(&lengths);
                }
            }
            let total = bits + 8 * stored.len() as u64;
            if best.as_ref().is_none_or(|(t, _)| total < *t) {
                best = Some((total, stored));
            }
        }
        let stored = best.map(|(_, s)| s).unwrap_or_default();
        match DistanceModel::from_stored(n, limit, &stored) {
            Ok(m) => m,
            Err(e) => unreachable!("built code lengths are valid: {e}"),
        }
    }

    /// The model of tier `n` from its stored form (`[K, A]`, then `2n · K · A` code lengths,
    /// context-major) and its length limit; checks that every context's lengths form a
    /// complete prefix code (Kraft sum 1), a single symbol of length 1, or no symbol.
    ///
    /// # Errors
    /// What is wrong with the stored model.
    pub fn from_stored(n: u8, limit: u8, stored: &[u8]) -> Result<DistanceModel, CodecError> {
        let (k, a) = match stored {
            [k, a, ..] => (*k, *a),
            _ => {
                return Err(CodecError::ModelSize {
                    found: stored.len(),
                    expected: MODEL_HEAD,
                })
            }
        };
        if !(1..=MAX_BUCKETS).contains(&k) || a == 0 {
            return Err(CodecError::DistanceModelHead {
                buckets: k,
                alphabet: a,
            });
        }
        let (buckets, alphabet) = (usize::from(k), usize::from(a));
        let contexts = score_slots(n) * buckets;
        let expected = MODEL_HEAD + contexts * alphabet;
        if stored.len() != expected {
            return Err(CodecError::ModelSize {
                found: stored.len(),
                expected,
            });
        }
        if limit == 0 || limit > MAX_LIMIT {
            return Err(CodecError::Limit(limit));
        }
        let lengths = &stored[MODEL_HEAD..];
        let size = 1usize << PRIMARY_BITS;
        let mut codes = vec![0u32; contexts * alphabet];
        let mut primary = vec![INVALID; contexts * size];
        let mut long = vec![Canonical::default(); contexts];
        let mut sorted = vec![0u8; contexts * alphabet];
        for ctx in 0..contexts {
            let lens = &lengths[ctx * alphabet..(ctx + 1) * alphabet];
            let table = &mut primary[ctx * size..(ctx + 1) * size];
            let present = checked_symbols(ctx, lens, limit)?;
            match present.len() {
                0 => continue,
                1 => {
                    let x = present[0];
                    table.fill(
                        ((bucket(x as u8).min(buckets - 1) as u16) << 12) | ((x as u16) << 4),
                    );
                    codes[ctx * alphabet + x] = PRESENT;
                    continue;
                }
                _ => {}
            }
            let mut order = present;
            order.sort_by_key(|&x| (lens[x], x));
            let canon = &mut long[ctx];
            for (i, &x) in order.iter().enumerate() {
                sorted[ctx * alphabet + i] = x as u8;
                canon.count[usize::from(lens[x])] += 1;
            }
            let mut next = 0u32;
            let mut offset = 0u16;
            for len in 1..=usize::from(limit) {
                canon.first[len] = next as u16;
                canon.offset[len] = offset;
                offset += canon.count[len];
                next = (next + u32::from(canon.count[len])) << 1;
            }
            table.fill(ESCAPE);
            let mut code = 0u32;
            let mut prev = 0u8;
            for x in order {
                let len = lens[x];
                code <<= len - prev;
                prev = len;
                let rev = code.reverse_bits() >> (32 - u32::from(len));
                codes[ctx * alphabet + x] = rev | (u32::from(len) << 16) | PRESENT;
                if u32::from(len) <= PRIMARY_BITS {
                    let entry = ((bucket(x as u8).min(buckets - 1) as u16) << 12)
                        | ((x as u16) << 4)
                        | u16::from(len);
                    let mut i = rev as usize;
                    while i < size {
                        table[i] = entry;
                        i += 1 << len;
                    }
                }
                code += 1;
            }
        }
        let mut score_base = Box::new([u32::MAX; 256]);
        for v in -i16::from(n)..=i16::from(n) {
            if let Ok(slot) = score_slot(n, v as i8) {
                score_base[usize::from(v as i8 as u8)] = (slot * buckets) as u32;
            }
        }
        let mut next_bucket = Box::new([0u8; 256]);
        for (d, b) in next_bucket.iter_mut().enumerate() {
            *b = bucket(d as u8).min(buckets - 1) as u8;
        }
        Ok(DistanceModel {
            score_base,
            next_bucket,
            n,
            buckets,
            alphabet,
            limit,
            stored: stored.to_vec(),
            codes,
            primary,
            long,
            sorted,
        })
    }

    /// The model as stored in the table's header: `[K, A]` and the code lengths.
    pub fn stored(&self) -> &[u8] {
        &self.stored
    }

    /// The context of a distance whose score is `s`, after a last distance of bucket
    /// `last`.
    #[inline]
    fn context(&self, s: i8, last: usize) -> Result<usize, CodecError> {
        Ok(score_slot(self.n, s)? * self.buckets + last.min(self.buckets - 1))
    }

    /// Encodes one block of `distances` whose scores are `scores` (sub-blocks of
    /// `2^sub_shift` entries): the sub-block table and the bitstream, appended to `out`.
    ///
    /// # Errors
    /// A score outside `−n ..= n`, a distance byte that does not go with its score, one that
    /// the model has no code for, or `scores` of another length.
    pub fn encode_block(
        &self,
        distances: &[u8],
        scores: &[i8],
        sub_shift: u8,
        out: &mut Vec<u8>,
    ) -> Result<(), CodecError> {
        if scores.len() != distances.len() {
            return Err(CodecError::ContextLength {
                found: scores.len(),
                expected: distances.len(),
            });
        }
        let sub = 1 << sub_shift;
        let subs = distances.len().div_ceil(sub).max(1);
        let table_at = out.len();
        out.resize(table_at + 2 * (subs - 1), 0);
        let mut w = BitWriter::new(out);
        let mut start = 0u64;
        for (k, (ds, ss)) in distances.chunks(sub).zip(scores.chunks(sub)).enumerate() {
            if k > 0 {
                let bits = w.bits - start;
                let bits = u16::try_from(bits).map_err(|_| CodecError::SubBlockBits(bits))?;
                let at = table_at + 2 * (k - 1);
                w.out[at..at + 2].copy_from_slice(&bits.to_le_bytes());
                start = w.bits;
            }
            let mut last = 0;
            for (&d, &s) in ds.iter().zip(ss) {
                if s == 0 {
                    if d != NONE {
                        return Err(CodecError::DistanceScore {
                            distance: d,
                            score: s,
                        });
                    }
                    continue;
                }
                let ctx = self.context(s, last)?;
                if usize::from(d) >= self.alphabet {
                    return Err(CodecError::DistanceScore {
                        distance: d,
                        score: s,
                    });
                }
                let c = self.codes[ctx * self.alphabet + usize::from(d)];
                if c & PRESENT == 0 {
                    return Err(CodecError::DistanceNotInModel {
                        distance: d,
                        context: ctx,
                    });
                }
                w.put(u64::from(c & 0xffff), (c >> 16) & 0xff);
                last = bucket(d);
            }
        }
        w.finish();
        Ok(())
    }

    /// Decodes a whole encoded block into `out` (its length is the block's entry count),
    /// given the scores of its entries: [`NONE`] where the score is 0.
    ///
    /// # Errors
    /// The block is malformed (a code absent from the model, a sub-block outside the
    /// stream, one that does not end exactly where the next begins), a score outside
    /// `−n ..= n`, or `scores` of another length.
    pub fn decode_block(
        &self,
        block: &[u8],
        sub_shift: u8,
        scores: &[i8],
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        if scores.len() != out.len() {
            return Err(CodecError::ContextLength {
                found: scores.len(),
                expected: out.len(),
            });
        }
        let parts = split_block(block, out.len(), sub_shift)?;
        let total = out.len();
        let sub = 1 << sub_shift;
        for (k, (o, s)) in out.chunks_mut(sub).zip(scores.chunks(sub)).enumerate() {
            self.decode_part(&parts, total, sub_shift, k, s, o)?;
        }
        Ok(())
    }

    /// Decodes sub-block `k` (entries `k << sub_shift ..`) of an encoded block of `len`
    /// entries into `out`, whose length is that sub-block's entry count, given the scores of
    /// its entries (as many).
    ///
    /// # Errors
    /// As [`DistanceModel::decode_block`]; also a sub-block past the block's end.
    #[cfg(test)]
    pub fn decode_sub_block(
        &self,
        block: &[u8],
        len: usize,
        sub_shift: u8,
        k: usize,
        scores: &[i8],
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        let first = k << sub_shift;
        if first >= len || out.len() != (len - first).min(1 << sub_shift) {
            return Err(CodecError::SubBlockOutOfRange { sub: k, len });
        }
        if scores.len() != out.len() {
            return Err(CodecError::ContextLength {
                found: scores.len(),
                expected: out.len(),
            });
        }
        let parts = split_block(block, len, sub_shift)?;
        self.decode_part(&parts, len, sub_shift, k, scores, out)
    }

    /// Decodes sub-block `k` of a block of `total` entries into `out` and checks that its
    /// codes end where the sub-block does.
    fn decode_part(
        &self,
        parts: &Parts<'_>,
        total: usize,
        sub_shift: u8,
        k: usize,
        scores: &[i8],
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        let (start, end) = parts.sub_range(k)?;
        let mut state = PartState {
            pos: start,
            last: 0,
        };
        self.decode_run(parts.stream, &mut state, scores, out)?;
        let is_last = (k + 1) << sub_shift >= total;
        if !ends_right(state.pos, end, is_last) {
            return Err(CodecError::SubBlockEnd {
                sub: k,
                pos: state.pos,
                end,
            });
        }
        Ok(())
    }

    /// Decodes the entries of sub-block `k` (entries `k << sub_shift ..`) of an encoded
    /// block of `len` entries from `out.len()` (those before it decoded already, `state`
    /// where they left the decoder; `state` is anything when `out` is empty) up to
    /// `scores.len()` (the scores of the sub-block's entries from its first on, at most the
    /// sub-block's entry count), appending them to `out` and leaving `state` after them.
    /// A probe decodes only the entries up to the one it reads; when the sub-block is
    /// decoded to its end, its codes are checked to end where it does.
    ///
    /// # Errors
    /// As [`DistanceModel::decode_sub_block`].
    #[allow(clippy::too_many_arguments)]
    pub fn decode_sub_block_prefix(
        &self,
        block: &[u8],
        len: usize,
        sub_shift: u8,
        k: usize,
        scores: &[i8],
        state: &mut PartState,
        out: &mut Vec<u8>,
    ) -> Result<(), CodecError> {
        let first = k << sub_shift;
        let count = if first < len {
            (len - first).min(1 << sub_shift)
        } else {
            0
        };
        if count == 0 || scores.len() > count || out.len() > scores.len() {
            return Err(CodecError::SubBlockOutOfRange { sub: k, len });
        }
        let parts = split_block(block, len, sub_shift)?;
        let (start, end) = parts.sub_range(k)?;
        if out.is_empty() {
            *state = PartState {
                pos: start,
                last: 0,
            };
        }
        let done = out.len();
        out.resize(scores.len(), 0);
        let r = self.decode_run(parts.stream, state, &scores[done..], &mut out[done..]);
        if r.is_err() {
            out.clear();
            return r;
        }
        if out.len() == count {
            let is_last = first + count >= len;
            if !ends_right(state.pos, end, is_last) {
                out.clear();
                return Err(CodecError::SubBlockEnd {
                    sub: k,
                    pos: state.pos,
                    end,
                });
            }
        }
        Ok(())
    }

    /// Decodes `out.len()` entries whose scores are `scores` from `stream`, from the
    /// decoder state `state` (left after them).
    #[inline]
    fn decode_run(
        &self,
        stream: &[u8],
        state: &mut PartState,
        scores: &[i8],
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        let pmask = (1u64 << PRIMARY_BITS) - 1;
        // Codes read from one 57-bit window of the stream before the next: each is at most
        // `L` bits.
        let per_refill = 56 / u32::from(self.limit);
        let mut pos = state.pos;
        let mut last = state.last;
        let mut buf = peek(stream, pos);
        let mut left = per_refill;
        for (o, &s) in out.iter_mut().zip(scores) {
            if s == 0 {
                *o = NONE;
                continue;
            }
            let base = self.score_base[usize::from(s as u8)];
            if base == u32::MAX {
                return Err(CodecError::ScoreOutOfRange {
                    score: s,
                    tier: self.n,
                });
            }
            if left == 0 {
                buf = peek(stream, pos);
                left = per_refill;
            }
            left -= 1;
            let ctx = base as usize + last;
            let e = self.primary[(ctx << PRIMARY_BITS) | (buf & pmask) as usize];
            let (d, len, next) = match e {
                INVALID => return Err(CodecError::NoCode(ctx)),
                ESCAPE => {
                    let (d, len) = self.decode_long(ctx, buf).ok_or(CodecError::NoCode(ctx))?;
                    (d, len, usize::from(self.next_bucket[usize::from(d)]))
                }
                e => ((e >> 4) as u8, u32::from(e & 15), usize::from(e >> 12)),
            };
            buf >>= len;
            pos += u64::from(len);
            *o = d;
            last = next;
        }
        *state = PartState { pos, last };
        Ok(())
    }

    /// Decodes a code longer than [`PRIMARY_BITS`] of context `ctx` at the start of `buf`
    /// (stream bits, the code's first bit lowest), bit by bit along the canonical code:
    /// its symbol and length, or `None` for bits that are no code (never, for a complete
    /// code).
    #[cold]
    fn decode_long(&self, ctx: usize, buf: u64) -> Option<(u8, u32)> {
        let c = &self.long[ctx];
        let mut code = 0u32;
        for len in 1..=usize::from(self.limit) {
            code = (code << 1) | ((buf >> (len - 1)) & 1) as u32;
            let k = code.wrapping_sub(u32::from(c.first[len]));
            if k < u32::from(c.count[len]) {
                let i = usize::from(c.offset[len]) + k as usize;
                return Some((self.sorted[ctx * self.alphabet + i], len as u32));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `len` distances of tier `n` and their scores: a score 0 with probability `zero/256`,
    /// distances geometric (each step up with probability `p/256`, at most `max`), parity
    /// following the score's sign most of the time, as in real tables.
    fn sample(n: u8, len: usize, zero: u8, p: u8, max: u8, seed: u64) -> (Vec<u8>, Vec<i8>) {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut d = Vec::with_capacity(len);
        let mut s = Vec::with_capacity(len);
        for _ in 0..len {
            let v = if n == 0 || rng.u8(..) < zero {
                0
            } else {
                let m = rng.i16(1..=i16::from(n)) as i8;
                if rng.bool() {
                    m
                } else {
                    -m
                }
            };
            s.push(v);
            if v == 0 {
                d.push(NONE);
            } else {
                let mut x = 0u8;
                while x < max && rng.u8(..) < p {
                    x += 1;
                }
                d.push(x);
            }
        }
        (d, s)
    }

    fn model_of(n: u8, d: &[u8], s: &[i8], block: usize, shift: u8, limit: u8) -> DistanceModel {
        let mut counts = vec![0u64; counts_len(n)];
        for (db, sb) in d.chunks(block).zip(s.chunks(block)) {
            DistanceModel::count_block(n, db, sb, shift, &mut counts).unwrap();
        }
        let m = DistanceModel::from_counts(n, &counts, limit);
        // The model survives its stored form.
        DistanceModel::from_stored(n, limit, m.stored()).unwrap()
    }

    fn round_trip(n: u8, d: &[u8], s: &[i8], block: usize, shift: u8, limit: u8) {
        let m = model_of(n, d, s, block, shift, limit);
        for (b, (db, sb)) in d.chunks(block).zip(s.chunks(block)).enumerate() {
            let mut enc = Vec::new();
            m.encode_block(db, sb, shift, &mut enc).unwrap();
            let mut back = vec![0u8; db.len()];
            m.decode_block(&enc, shift, sb, &mut back).unwrap();
            assert_eq!(back, db, "block {b}");
            for (k, (dk, sk)) in db.chunks(1 << shift).zip(sb.chunks(1 << shift)).enumerate() {
                let mut sub = vec![0u8; dk.len()];
                m.decode_sub_block(&enc, db.len(), shift, k, sk, &mut sub)
                    .unwrap();
                assert_eq!(sub, dk, "block {b} sub-block {k}");
                // Decoded in parts (a prefix, then on to the end), as probes do.
                let mut state = PartState::default();
                let mut part = Vec::new();
                let cut = (b * 7 + k * 13) % dk.len() + 1;
                m.decode_sub_block_prefix(
                    &enc,
                    db.len(),
                    shift,
                    k,
                    &sk[..cut],
                    &mut state,
                    &mut part,
                )
                .unwrap();
                assert_eq!(part, dk[..cut], "block {b} sub-block {k} to {cut}");
                m.decode_sub_block_prefix(&enc, db.len(), shift, k, sk, &mut state, &mut part)
                    .unwrap();
                assert_eq!(part, dk, "block {b} sub-block {k} from {cut}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]

        #[test]
        fn distance_codec_round_trips(
            n in 0u8..=48,
            len in prop_oneof![Just(0usize), Just(1), 0usize..6000],
            block in prop_oneof![Just(4096usize), 1usize..5000],
            shift in 0u8..=10,
            limit in MIN_LIMIT..=MAX_LIMIT,
            zero in any::<u8>(),
            p in any::<u8>(),
            max in any::<u8>(),
            seed in any::<u64>(),
        ) {
            let max = max.min(254);
            let (d, s) = sample(n, len, zero, p, max, seed);
            round_trip(n, &d, &s, block, shift, limit);
        }
    }

    #[test]
    fn every_distance_of_tier_48_under_the_smallest_limit() {
        // 255 distances, nearly uniform, with codes of at most 8 bits (256 codes).
        let (d, s) = sample(48, 60_000, 10, 255, 254, 3);
        round_trip(48, &d, &s, 4096, 8, MIN_LIMIT);
    }

    #[test]
    fn positions_scored_0_cost_no_bit_and_lone_contexts_none() {
        let s: Vec<i8> = (0..1000).map(|i| if i % 3 == 0 { 0 } else { 2 }).collect();
        let d: Vec<u8> = s.iter().map(|&v| if v == 0 { NONE } else { 1 }).collect();
        let m = model_of(2, &d, &s, 1000, 8, 12);
        let mut out = Vec::new();
        m.encode_block(&d, &s, 8, &mut out).unwrap();
        // Only the sub-block table (3 zero lengths), no stream: one distance per context.
        assert_eq!(out, vec![0; 6]);
        let mut back = vec![0u8; 1000];
        m.decode_block(&out, 8, &s, &mut back).unwrap();
        assert_eq!(back, d);
    }

    #[test]
    fn the_bucket_count_follows_the_data() {
        // Few entries: one bucket (the model's size counts); many, correlated with the last
        // distance: more.
        let (d, s) = sample(3, 300, 40, 200, 60, 1);
        assert_eq!(model_of(3, &d, &s, 4096, 8, 12).stored()[0], 1);
        let mut rng = fastrand::Rng::with_seed(5);
        let mut d = Vec::new();
        let mut prev = 0u8;
        for _ in 0..200_000 {
            prev = if rng.u8(..) < 230 {
                prev
            } else {
                rng.u8(0..40)
            };
            d.push(prev);
        }
        let s = vec![1i8; d.len()];
        assert!(model_of(1, &d, &s, 4096, 8, 12).stored()[0] > 1);
    }

    #[test]
    fn entries_that_do_not_go_with_their_scores_are_refused() {
        let (d, s) = sample(4, 2000, 60, 128, 30, 9);
        let m = model_of(4, &d, &s, 4096, 8, 12);
        let i = s.iter().position(|&v| v != 0).unwrap();
        let z = s.iter().position(|&v| v == 0).unwrap();
        for (at, v) in [(i, NONE), (z, 3), (i, 200)] {
            let mut bad = d.clone();
            bad[at] = v;
            let r = m.encode_block(&bad, &s, 8, &mut Vec::new());
            assert!(r.is_err(), "entry {at} = {v}");
            let mut counts = vec![0u64; counts_len(4)];
            if v != 200 {
                assert!(DistanceModel::count_block(4, &bad, &s, 8, &mut counts).is_err());
            }
        }
        let mut bad = s.clone();
        bad[i] = 5;
        assert!(m.encode_block(&d, &bad, 8, &mut Vec::new()).is_err());
        assert!(m.encode_block(&d, &s[1..], 8, &mut Vec::new()).is_err());
    }

    #[test]
    fn damaged_streams_and_wrong_scores_are_errors() {
        let (d, s) = sample(5, 700, 50, 150, 40, 11);
        let m = model_of(5, &d, &s, 4096, 8, 12);
        let mut out = Vec::new();
        m.encode_block(&d, &s, 8, &mut out).unwrap();
        for cut in 0..out.len() {
            let mut back = vec![0u8; 700];
            assert!(
                m.decode_block(&out[..cut], 8, &s, &mut back).is_err(),
                "cut {cut}"
            );
        }
        let mut long = out.clone();
        long.push(0);
        assert!(m.decode_block(&long, 8, &s, &mut vec![0u8; 700]).is_err());
        // Scores out of range are errors, not panics.
        let mut wild = s.clone();
        wild[3] = 100;
        assert!(m.decode_block(&out, 8, &wild, &mut vec![0u8; 700]).is_err());
        // Every flipped bit decodes to an error or to distances, never panics.
        for at in 0..out.len() {
            for bit in 0..8 {
                let mut b = out.clone();
                b[at] ^= 1 << bit;
                let _ = m.decode_block(&b, 8, &s, &mut vec![0u8; 700]);
            }
        }
    }

    #[test]
    fn bad_models_are_refused() {
        // Tier 1: 2 score slots; one bucket, alphabet 3: 6 lengths.
        let ok = [1u8, 3, 1, 2, 2, 0, 1, 0];
        assert!(DistanceModel::from_stored(1, 12, &ok).is_ok());
        for bad in [
            vec![1u8, 3, 1, 1, 2, 0, 1, 0], // Kraft sum > 1
            vec![1, 3, 2, 2, 0, 0, 1, 0],   // Kraft sum < 1
            vec![1, 3, 1, 2, 2, 0, 2, 0],   // lone symbol of length 2
            vec![1, 3, 1, 2, 13, 0, 1, 0],  // longer than the limit
            vec![0, 3, 1, 2, 2, 0, 1, 0],   // no bucket
            vec![10, 3, 1, 2, 2, 0, 1, 0],  // too many buckets
            vec![1, 0],                     // no symbol
            vec![1, 3, 1, 2, 2, 0, 1],      // too short
            vec![1],                        // no head
        ] {
            assert!(DistanceModel::from_stored(1, 12, &bad).is_err(), "{bad:?}");
        }
        assert!(DistanceModel::from_stored(1, 16, &ok).is_err());
    }
}
