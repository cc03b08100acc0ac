//! Helpers of the fuzz targets of `oware-db` (see `scripts/fuzz`).
//!
//! A mutated table almost never keeps its checksums right (an xxh3-64 of the header, one of
//! each compressed block, a blake3 of the whole file), so a fuzzer that only flips bytes
//! would stop at the first checksum and never reach the decoders. [`fix_checksums`] rewrites
//! every checksum that the layout of `db/FORMAT.md` locates, after the mutation: the reader
//! then parses and decodes whatever the mutation left.

/// Reads a little-endian `u64` at `at`, if the 8 bytes are there.
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(s.try_into().ok()?))
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    if let Some(s) = at.checked_add(8).and_then(|end| b.get_mut(at..end)) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

/// The size of the fixed header, of one block-index entry, of the trailer, of the blake3.
const FIXED_HEADER: usize = 48;
const INDEX_ENTRY: usize = 16;
const TRAILER: usize = 56;
const CHECKSUM_LEN: usize = 32;

/// Rewrites the block checksums of the block index, the header checksum and the whole-file
/// checksum of a table file's bytes, wherever the (possibly damaged) offsets in the file put
/// them; leaves alone whatever cannot be located. Never panics.
pub fn fix_checksums(b: &mut [u8]) {
    let len = b.len();
    let header_len = b
        .get(12..16)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize);
    // Block checksums: entries of the index, from the trailer's index offset.
    if len >= TRAILER {
        let t = len - TRAILER;
        if let (Some(index), Some(count)) = (u64_at(b, t), u64_at(b, t + 8)) {
            let index = usize::try_from(index).unwrap_or(usize::MAX);
            if index <= t {
                let room = (t - index) / INDEX_ENTRY;
                let count = usize::try_from(count).unwrap_or(usize::MAX).min(room);
                for k in 0..count {
                    let e = index + k * INDEX_ENTRY;
                    let Some(start) = u64_at(b, e) else { break };
                    let end = if k + 1 < count {
                        u64_at(b, e + INDEX_ENTRY)
                    } else {
                        Some(index as u64)
                    };
                    let Some(end) = end else { break };
                    if start <= end && end <= len as u64 {
                        let sum = xxhash_rust::xxh3::xxh3_64(&b[start as usize..end as usize]);
                        put_u64(b, e + 8, sum);
                    }
                }
            }
        }
    }
    // The header checksum: xxh3-64 of the header with the checksum field as zero.
    if let Some(h) = header_len {
        if (FIXED_HEADER..=len).contains(&h) {
            let mut x = xxhash_rust::xxh3::Xxh3::new();
            x.update(&b[..40]);
            x.update(&[0; 8]);
            x.update(&b[48..h]);
            let sum = x.digest();
            put_u64(b, 40, sum);
        }
    }
    // The whole-file checksum, last.
    if len >= CHECKSUM_LEN {
        let sum = blake3::hash(&b[..len - CHECKSUM_LEN]);
        b[len - CHECKSUM_LEN..].copy_from_slice(sum.as_bytes());
    }
}

/// A small deterministic generator of probe indices, seeded by the input.
pub struct Probe(u64);

impl Probe {
    /// Seeded by the bytes of the input.
    pub fn new(data: &[u8]) -> Self {
        Probe(xxhash_rust::xxh3::xxh3_64(data) | 1)
    }

    /// The next pseudo-random number (xorshift64*).
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}
