//! The switch of the solver's SIMD paths.
//!
//! Where a loop has a vector path (`std::arch`, chosen at run time by what the processor
//! has), it also has a portable one that gives the same results: the tables are the same
//! bytes either way. [`disable`] keeps a process on the portable paths (the command line's
//! `OWARE_SIMD=off`), for tests and for measuring what the vector paths bring.

use std::sync::atomic::{AtomicBool, Ordering};

static OFF: AtomicBool = AtomicBool::new(false);

/// Keeps the rest of the process on the portable paths.
pub fn disable() {
    OFF.store(true, Ordering::Relaxed);
}

/// The vector instructions the solver's SIMD paths use in this process: `"avx2"`, or
/// `"none"` when the processor lacks them or [`disable`] was called.
pub fn in_use() -> &'static str {
    if avx2() {
        "avx2"
    } else {
        "none"
    }
}

/// Whether the AVX2 paths may run: the processor has AVX2 and [`disable`] was not called.
#[inline]
pub(crate) fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        !OFF.load(Ordering::Relaxed) && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
