//! A software prefetch hint, shared by the solver, the verifier and the distributed solver.

/// Hints the processor to fetch `x` into the cache (a no-op where unsupported).
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch(
            (x as *const T).cast::<i8>(),
            core::arch::x86_64::_MM_HINT_T0,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
