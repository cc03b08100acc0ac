//! A rank that cannot allocate its arrays for a tier stops every rank with it, the solver's
//! and the verifier's alike: the others name it instead of waiting for it in a collective
//! call. The allocation of one rank is made to fail by this test binary's allocator, which
//! refuses, on the thread that asks it to, every allocation of one given size.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use oware_db::Rules;
use oware_solver::distributed::{
    solve_tier_local, verify_tier_local, Comm, LowerShare, Partition, PartitionConfig, ThreadComm,
};
use oware_solver::tier::LowerTiers;
use oware_solver::NoProgress;

thread_local! {
    /// The size of the allocations refused on this thread (0: none).
    static REFUSED: Cell<usize> = const { Cell::new(0) };
}

/// The system's allocator, but for the allocations of the size [`REFUSED`] names on the
/// thread that asks for them.
struct Refusing;

fn refused(size: usize) -> bool {
    size != 0 && REFUSED.try_with(|r| r.get() == size).unwrap_or(false)
}

// SAFETY: every call is the system allocator's, or a null pointer (a failed allocation),
// which callers of `GlobalAlloc` must handle.
unsafe impl GlobalAlloc for Refusing {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if refused(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if refused(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if refused(new_size) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Refusing = Refusing;

/// `f`'s result, or a failure if it has not returned within a minute (ranks left waiting
/// in a collective call) or panicked.
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(v) => v,
        Err(RecvTimeoutError::Timeout) => {
            panic!("the ranks still run after a minute: some wait for the one that failed")
        }
        Err(RecvTimeoutError::Disconnected) => panic!("a rank panicked"),
    }
}

const N: u8 = 12;
const RANKS: usize = 3;

/// The first `n` tiers' scores as lower tiers.
fn lower_tiers(tiers: &[Vec<i8>], n: u8) -> LowerTiers {
    let mut lower = LowerTiers::new();
    for t in &tiers[..n as usize] {
        lower.push(Arc::from(t.clone()));
    }
    lower
}

/// Every rank's error: the failing one's own (`own`, its start), the others' naming it and
/// the `asked` bytes.
fn assert_all_stopped(
    results: &[Result<(), (String, Option<usize>)>],
    failing: usize,
    own: &str,
    asked: usize,
) {
    for (r, result) in results.iter().enumerate() {
        let Err((m, failed_rank)) = result else {
            panic!("rank {r} went on; every rank must stop")
        };
        assert!(!m.contains('\n'), "{m}");
        if r == failing {
            assert!(m.starts_with(own), "rank {r}: {m}");
            assert_eq!(*failed_rank, None, "rank {r}: {m}");
        } else {
            assert!(
                m.starts_with(&format!("tier {N}: cannot allocate the "))
                    && m.ends_with(&format!(
                        ": rank {failing} could not allocate its own ({asked} bytes asked)"
                    )),
                "rank {r}: {m}"
            );
            assert_eq!(*failed_rank, Some(failing), "rank {r}: {m}");
        }
    }
}

#[test]
fn a_rank_that_cannot_allocate_its_arrays_stops_every_rank() {
    let rules = Rules::ABAPA;
    let tiers = common::solve_all(&rules, N - 1);
    let part = Partition::of_tier(N, RANKS);
    let failing = 1;
    let range = part.range(failing);
    let cells = (range.end - range.start) as usize;
    // The cells and frontier bits are anonymous memory maps, which this allocator does not
    // see; the dirty flags (a byte per 1,024 positions) and the level masks (8 bytes per
    // 1,024) come from it, allocated with them: refused with the lower tiers whole on every
    // rank, and with each rank's share of them.
    let flags = cells.div_ceil(1024);
    let masks = cells.div_ceil(1024) * 8;
    for (what, refused, shared) in [("dirty flags", flags, false), ("level masks", masks, true)] {
        let lower = lower_tiers(&tiers, N);
        let results = within_a_minute(move || {
            ThreadComm::run(RANKS, |c| {
                let share = LowerShare::from_whole(&lower, c.rank(), c.size());
                let config = PartitionConfig::default();
                if c.rank() == failing {
                    REFUSED.set(refused);
                }
                let result = if shared {
                    solve_tier_local(c, &rules, N, &share, &NoProgress, &config)
                } else {
                    solve_tier_local(c, &rules, N, &lower, &NoProgress, &config)
                };
                REFUSED.set(0);
                result
                    .map(|_| ())
                    .map_err(|e| (e.to_string(), e.failed_rank()))
            })
        });
        let own =
            format!("tier {N}: cannot allocate the {what} of {cells} positions ({refused} bytes)");
        assert_all_stopped(&results, failing, &own, refused);
    }
}

#[test]
fn a_rank_that_cannot_allocate_its_verification_bits_stops_every_rank() {
    let rules = Rules::ABAPA;
    let tiers = common::solve_all(&rules, N);
    let lower = lower_tiers(&tiers, N);
    let scores = tiers[N as usize].clone();
    let part = Partition::of_tier(N, RANKS);
    let failing = 2;
    let range = part.range(failing);
    let positions = (range.end - range.start) as usize;
    let frontier = positions.div_ceil(64) * 8;
    let results = within_a_minute(move || {
        ThreadComm::run(RANKS, |c| {
            let share = LowerShare::from_whole(&lower, c.rank(), c.size());
            let range = part.range(c.rank());
            let mut mine = part.share_of(c.rank(), &scores);
            if c.rank() == failing {
                REFUSED.set(frontier);
            }
            let result = verify_tier_local(
                c,
                &rules,
                N,
                range.start,
                &mut mine,
                &share,
                &PartitionConfig::default(),
                &NoProgress,
            );
            REFUSED.set(0);
            result
                .map(|_| ())
                .map_err(|e| (e.to_string(), e.failed_rank()))
        })
    });
    let own = format!(
        "tier {N}: cannot allocate the frontier of {positions} positions ({frontier} bytes)"
    );
    assert_all_stopped(&results, failing, &own, frontier);
}
