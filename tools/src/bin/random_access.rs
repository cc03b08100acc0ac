//! The machine's ceiling for the solver's parent updates: random one-byte cells (one per
//! position, as the solver's state holds them) updated in batches of 256 whose cache lines are
//! prefetched first, as the solver's `propagate` does, with a chosen amount of other work (a
//! dependent chain of multiplies) before each prefetch.
//!
//! Three ways to update a cell are timed: a compare-and-swap (what the solver does, since two
//! threads may update the same cell), a plain load and store (only correct for one owner), and
//! a load alone.
//!
//! ```text
//! cargo run --release -p oware-tools --bin random_access -- [MIB] [THREADS]
//! ```
//!
//! `MIB` is the array's size, in a memory map advised to use transparent huge pages like the
//! solver's; it defaults to tier 26's cells (one byte for each of its 770,319,837 positions:
//! 735 MiB). `THREADS` defaults to 2.

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

use memmap2::{Advice, MmapMut};
use oware_db::index::{tier_size, IndexKind};

/// The tier whose cells the default size holds.
const DEFAULT_TIER: u8 = 26;

/// Updates per batch, whose prefetches are issued before the first update.
const BATCH: usize = 256;

/// How a cell is updated.
#[derive(Clone, Copy)]
enum Update {
    Cas,
    Plain,
    Load,
}

/// The solver's prefetch hint (`solver/src/prefetch.rs`) for one cell.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch(cell: &AtomicU8) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: a prefetch is only a hint and never faults.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(cell.as_ptr().cast::<i8>()) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn prefetch(_: &AtomicU8) {}

/// A step of xorshift (the random index) followed by `work` dependent multiplies.
#[inline(always)]
fn next(mut x: u64, work: u32) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    let mut y = x;
    for _ in 0..work {
        y = y.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ (y >> 29);
    }
    // Keeps the chain live without changing the sequence of indices.
    x ^ (y & 1 & (y >> 63))
}

/// Millions of updates per second over all threads.
fn run(cells: &[AtomicU8], threads: usize, per_thread: usize, work: u32, how: Update) -> f64 {
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                let mut x = 0x9E37_79B9_7F4A_7C15 ^ (t as u64 + 1).wrapping_mul(7919);
                let len = cells.len() as u128;
                let mut idx = [0usize; BATCH];
                for _ in 0..per_thread / BATCH {
                    for i in idx.iter_mut() {
                        x = next(x, work);
                        *i = ((u128::from(x) * len) >> 64) as usize;
                        prefetch(&cells[*i]);
                    }
                    for &i in &idx {
                        let c = &cells[i];
                        match how {
                            Update::Cas => {
                                // The solver's loop: a load, then compare-and-swap until
                                // no other thread changed the cell in between.
                                let mut v = c.load(Ordering::Relaxed);
                                while let Err(now) = c.compare_exchange_weak(
                                    v,
                                    v.wrapping_add(1),
                                    Ordering::Relaxed,
                                    Ordering::Relaxed,
                                ) {
                                    v = now;
                                }
                            }
                            Update::Plain => c.store(
                                c.load(Ordering::Relaxed).wrapping_add(1),
                                Ordering::Relaxed,
                            ),
                            Update::Load => {
                                std::hint::black_box(c.load(Ordering::Relaxed));
                            }
                        }
                    }
                }
            });
        }
    });
    (threads * per_thread) as f64 / start.elapsed().as_secs_f64() / 1e6
}

/// Nanoseconds per call of `next(_, work)` on one thread.
fn work_ns(work: u32) -> f64 {
    const N: u32 = 10_000_000;
    let start = Instant::now();
    let mut x = 1u64;
    for _ in 0..N {
        x = next(x, work);
    }
    std::hint::black_box(x);
    start.elapsed().as_nanos() as f64 / f64::from(N)
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let default_mib = tier_size(DEFAULT_TIER, IndexKind::Reachable).div_ceil(1 << 20) as usize;
    let mib: usize = args
        .next()
        .map_or(Ok(default_mib), |a| a.parse())
        .map_err(std::io::Error::other)?;
    let threads: usize = args
        .next()
        .map_or(Ok(2), |a| a.parse())
        .map_err(std::io::Error::other)?;
    let bytes = mib.max(1) << 20;
    let mut map = MmapMut::map_anon(bytes)?;
    let _ = map.advise(Advice::HugePage);
    for page in map.chunks_mut(4096) {
        page[0] = 1;
    }
    // SAFETY: the map is `bytes` long, initialised, and outlives the slice; `AtomicU8` has
    // the size and alignment of `u8`, and the map is only accessed through atomics from here
    // on.
    let cells: &[AtomicU8] =
        unsafe { std::slice::from_raw_parts(map.as_ptr().cast::<AtomicU8>(), bytes) };
    let per_thread = 30_000_000;
    println!(
        "{mib} MiB of one-byte cells, {threads} threads, batches of {BATCH} prefetched updates"
    );
    println!(
        "other work ns/update | CAS M/s | plain M/s | load M/s | CAS, plain, load ns/update/thread"
    );
    for work in [0, 10, 20, 40] {
        let ns = work_ns(work);
        let r = [Update::Cas, Update::Plain, Update::Load]
            .map(|how| run(cells, threads, per_thread, work, how));
        let per = r.map(|m| threads as f64 * 1e3 / m);
        println!(
            "{ns:20.1} | {:7.1} | {:9.1} | {:8.1} | {:.1}, {:.1}, {:.1}",
            r[0], r[1], r[2], per[0], per[1], per[2]
        );
    }
    Ok(())
}
