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

/// Proof that the processor has AVX2 and that the SIMD paths are on: only [`avx2`] makes
/// one, so a function that takes it may run AVX2 instructions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

/// [`Avx2`] where the processor has AVX2 (detected at run time, the operating system's
/// saving of the vector registers included) and [`disable`] was not called.
#[inline]
pub(crate) fn avx2() -> Option<Avx2> {
    #[cfg(target_arch = "x86_64")]
    {
        (!OFF.load(Ordering::Relaxed) && std::arch::is_x86_feature_detected!("avx2"))
            .then_some(Avx2(()))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}
