//! The scan that starts each level: which cells of a granule it takes (a bit per cell, worked
//! out 64 cells at a time with AVX2 where the processor has it, eight at a time otherwise),
//! and the compare-and-swap that decides each of them.

use std::sync::atomic::{AtomicU8, Ordering};

use super::cell::Codes;
use super::{Ctx, CHUNK};
use crate::granule::LEVEL_GRANULE;
use crate::simd::Avx2;

/// Words of a granule's hit bits, one bit per cell.
const WORDS: usize = LEVEL_GRANULE / 64;

/// The two cells the scan of a level takes: waiting with exit `k`, pending with score `−k`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Targets {
    waiting: u8,
    pending: u8,
}

impl Targets {
    /// The cells the scan of level `k` takes under `codes`.
    pub(super) fn new(codes: Codes, k: i8) -> Self {
        Targets {
            waiting: codes.waiting(k),
            pending: codes.pending(-k),
        }
    }
}

/// The scan of level `k` over chunk `c` of the cells (`chunk`): in the granules whose level
/// mask holds `k` (cleared as they are read), decides every cell [`start_cell`] takes and
/// hands its index and score to `hit`, in index order.
#[inline(always)]
pub(super) fn scan_chunk(
    ctx: &Ctx<'_>,
    k: i8,
    c: usize,
    chunk: &[AtomicU8],
    mut hit: impl FnMut(u64, i8),
) {
    let targets = Targets::new(ctx.codes, k);
    let avx2 = crate::simd::avx2();
    let mut bits = [0u64; WORDS];
    for (g, granule) in chunk.chunks(LEVEL_GRANULE).enumerate() {
        // Propagations at this level set bit `k` again only in granules not yet scanned.
        let levels = &ctx.levels[c * (CHUNK / LEVEL_GRANULE) + g];
        if levels.fetch_and(!(1u64 << k), Ordering::Relaxed) & 1u64 << k == 0 {
            continue;
        }
        let base = c * CHUNK + g * LEVEL_GRANULE;
        granule_hits(avx2, granule, targets, &mut bits);
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let r = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                if let Some(v) = start_cell(&granule[r], ctx.codes, k) {
                    hit((base + r) as u64, v);
                }
            }
        }
    }
}

/// The scan of level `k` at one cell: decides it `+k` if it is waiting with exit `k`,
/// decides it `−k` if it is pending with that score, and then returns that score. Other
/// tasks propagate at the same time and may decide a waiting cell first, hence the
/// compare-and-swap.
#[inline(always)]
fn start_cell(cell: &AtomicU8, codes: Codes, k: i8) -> Option<i8> {
    let c = cell.load(Ordering::Relaxed);
    let v = codes.starts_at(c, k)?;
    cell.compare_exchange(c, Codes::decided(v), Ordering::Relaxed, Ordering::Relaxed)
        .ok()
        .map(|_| v)
}

/// The hits of a granule's cells (at most `LEVEL_GRANULE`): bit `r % 64` of `out[r / 64]`
/// is set when cell `r` is one of `targets` (what [`start_cell`] takes), the bits past the
/// cells clear. Without a branch per cell, which mispredicts. The cells are read while other
/// tasks decide some of them, so a hit is a candidate that `start_cell` checks; either path
/// reads each cell once, as a relaxed load would.
///
/// `avx2`: the AVX2 path, where the processor has it and the SIMD paths are on
/// ([`crate::simd::avx2`]).
#[inline(always)]
fn granule_hits(avx2: Option<Avx2>, cells: &[AtomicU8], targets: Targets, out: &mut [u64; WORDS]) {
    #[cfg(target_arch = "x86_64")]
    if avx2.is_some() {
        // SAFETY: an `Avx2` exists only where the processor has AVX2 (`simd::avx2`).
        unsafe { granule_hits_avx2(cells, targets, out) };
        return;
    }
    let _ = avx2;
    granule_hits_portable(cells, targets, out);
}

/// [`granule_hits`] eight cells at a time, in portable code.
fn granule_hits_portable(cells: &[AtomicU8], targets: Targets, out: &mut [u64; WORDS]) {
    debug_assert!(cells.len() <= LEVEL_GRANULE);
    out.fill(0);
    let waiting = u64::from(targets.waiting) * LANES;
    let pending = u64::from(targets.pending) * LANES;
    for (q, oct) in cells.chunks(8).enumerate() {
        let hits = match <&[AtomicU8; 8]>::try_from(oct) {
            Ok(whole) => hits_of(load_oct(whole), !0, waiting, pending),
            Err(_) => {
                let x = oct.iter().enumerate().fold(0u64, |x, (i, c)| {
                    x | u64::from(c.load(Ordering::Relaxed)) << (8 * i)
                });
                hits_of(x, (1u64 << (8 * oct.len())) - 1, waiting, pending)
            }
        };
        out[q / 8] |= u64::from(gather_bytes(hits)) << (8 * (q % 8));
    }
}

/// [`granule_hits`] 64 cells at a time: two 32-byte loads, compared with both targets at
/// once; the tier's last granule's cells past the last whole 64 go the portable way.
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn granule_hits_avx2(cells: &[AtomicU8], targets: Targets, out: &mut [u64; WORDS]) {
    use std::arch::asm;
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8,
    };
    let waiting = _mm256_set1_epi8(targets.waiting as i8);
    let pending = _mm256_set1_epi8(targets.pending as i8);
    let blocks = cells.chunks_exact(64);
    let rest = blocks.remainder();
    let whole = cells.len() / 64;
    for (word, block) in out.iter_mut().zip(blocks) {
        let mut bits = 0u64;
        for half in 0..2 {
            let v: __m256i;
            // SAFETY: reads the 32 cells `block[32 * half..][..32]`, which the block holds
            // (an unaligned load: no alignment required). The other tasks change cells only
            // by atomic stores of whole bytes, and an x86 load never tears a byte, so this
            // reads each cell as a relaxed `AtomicU8::load` would: as one of the values it
            // held, in no particular order between the cells, which is all the scan needs.
            // In `asm!` rather than an intrinsic, which would be a non-atomic read of memory
            // others write.
            unsafe {
                asm!(
                    "vmovdqu {v}, ymmword ptr [{p}]",
                    v = out(ymm_reg) v,
                    p = in(reg) block[32 * half..].as_ptr(),
                    options(nostack, preserves_flags, readonly),
                );
            }
            let hits =
                _mm256_or_si256(_mm256_cmpeq_epi8(v, waiting), _mm256_cmpeq_epi8(v, pending));
            bits |= u64::from(_mm256_movemask_epi8(hits) as u32) << (32 * half);
        }
        *word = bits;
    }
    if whole < WORDS {
        let mut tail = [0u64; WORDS];
        granule_hits_portable(rest, targets, &mut tail);
        out[whole] = tail[0];
        out[whole + 1..].fill(0);
    }
}

/// One lane per cell of a word.
const LANES: u64 = 0x0101_0101_0101_0101;

/// The eight cells of `oct`, one per byte of the word (cell `r` in byte `r`), each read
/// with its own relaxed load.
#[inline(always)]
fn load_oct(oct: &[AtomicU8; 8]) -> u64 {
    let mut x = 0u64;
    for (i, c) in oct.iter().enumerate() {
        x |= u64::from(c.load(Ordering::Relaxed)) << (8 * i);
    }
    x
}

/// The hits among the cells `x` (one per byte) in the bytes `lanes` keeps: bit 7 of a byte
/// is set when its cell equals a byte of `waiting` or of `pending` (each a target in every
/// byte).
#[inline(always)]
fn hits_of(x: u64, lanes: u64, waiting: u64, pending: u64) -> u64 {
    const LOW7: u64 = 0x7F * LANES;
    // Bit 7 of a lane of the result is set exactly when the lane of `y` is zero.
    let zero = |y: u64| !(((y & LOW7) + LOW7) | y | LOW7);
    (zero(x ^ waiting) | zero(x ^ pending)) & lanes
}

/// Bit 7 of each byte of `x` gathered into the bit of its byte's number.
#[inline(always)]
fn gather_bytes(x: u64) -> u8 {
    ((x >> 7 & LANES).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hits the scan takes by any path: exactly the cells `start_cell` takes, whatever
    /// the cells and the length of the granule (the tier's last one is short).
    #[test]
    fn granule_hits_are_exactly_the_cells_a_scan_takes_by_every_path() {
        // CI sets `OWARE_REQUIRE_AVX2` on a host with AVX2, so that the vector path cannot go
        // untested unseen.
        let avx2 = crate::simd::avx2();
        if avx2.is_none() {
            assert!(
                std::env::var_os("OWARE_REQUIRE_AVX2").is_none(),
                "OWARE_REQUIRE_AVX2 is set but the AVX2 path is not available"
            );
            eprintln!("the AVX2 path is not available here: only the portable one is tested");
        }
        let mut rng = fastrand::Rng::with_seed(7);
        for n in [1u8, 5, 12, 30, 48] {
            let codes = Codes::new(n, 48);
            for k in 1..=n as i8 {
                for round in 0..40 {
                    let len = match round {
                        0 => LEVEL_GRANULE,
                        1 => 1,
                        2 => 64,
                        _ => rng.usize(1..=LEVEL_GRANULE),
                    };
                    let cells: Vec<u8> = (0..len)
                        .map(|_| match rng.u8(0..4) {
                            0 => codes.waiting(k),
                            1 => codes.pending(-k),
                            _ => rng.u8(..),
                        })
                        .collect();
                    let atomic: Vec<AtomicU8> = cells.iter().map(|&c| AtomicU8::new(c)).collect();
                    let mut expected = [0u64; WORDS];
                    for (r, &c) in cells.iter().enumerate() {
                        if start_cell(&AtomicU8::new(c), codes, k).is_some() {
                            expected[r / 64] |= 1 << (r % 64);
                        }
                    }
                    let targets = Targets::new(codes, k);
                    // Stale bits must be overwritten.
                    let mut out = [!0u64; WORDS];
                    granule_hits_portable(&atomic, targets, &mut out);
                    assert_eq!(out, expected, "portable: n {n} k {k} len {len}");
                    if avx2.is_some() {
                        let mut out = [!0u64; WORDS];
                        granule_hits(avx2, &atomic, targets, &mut out);
                        assert_eq!(out, expected, "avx2: n {n} k {k} len {len}");
                    }
                }
            }
        }
    }
}
