//! Transparent huge pages for the large vectors that are read and written at random.
//!
//! With 4 KiB pages a random access into gigabytes misses the TLB as well as the cache;
//! with 2 MiB pages the page walks mostly disappear. The solver's own cells live in maps
//! advised so ([`AtomicBuf`](crate::solve::buffer::AtomicBuf)); the vectors made here (the
//! verifier's scores and bits, the lower tiers it holds, the slices of lower tiers, the
//! distance pass's arrays, a rank's cells and share of the lower tiers) get the same advice
//! before their pages are first touched. Where the kernel refuses it
//! (`transparent_hugepage` set to `never`, or another system) nothing changes but speed.

use std::collections::TryReserveError;

/// The size of a transparent huge page on x86-64 and most arm64 kernels.
#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;

/// Reserves room for exactly `additional` more elements in `v` (as
/// [`Vec::try_reserve_exact`]), then asks the kernel to back the whole 2 MiB pages of its
/// allocation with transparent huge pages (`MADV_HUGEPAGE`). Call it before the elements
/// are written, so that their first touch takes huge pages.
///
/// # Errors
/// The memory cannot be reserved.
pub(crate) fn try_reserve<T>(v: &mut Vec<T>, additional: usize) -> Result<(), TryReserveError> {
    v.try_reserve_exact(additional)?;
    #[cfg(target_os = "linux")]
    {
        let start = v.as_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
        let (from, to) = (
            start.next_multiple_of(HUGE_PAGE),
            end / HUGE_PAGE * HUGE_PAGE,
        );
        if from < to {
            // SAFETY: `from..to` lies within `v`'s allocation, which this process owns;
            // `MADV_HUGEPAGE` changes only which pages back it, never its contents, and
            // its failure (a kernel without transparent huge pages) is harmless.
            let _ =
                unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE) };
        }
    }
    Ok(())
}

/// A vector of `len` elements made by `f`, on transparent huge pages where the kernel allows
/// them ([`try_reserve`]), or an error if its memory cannot be reserved.
pub(crate) fn try_vec<T>(
    len: usize,
    f: impl FnMut(usize) -> T,
) -> Result<Vec<T>, std::collections::TryReserveError> {
    let mut v = Vec::new();
    try_reserve(&mut v, len)?;
    v.extend((0..len).map(f));
    Ok(v)
}

/// A vector of `len` elements made by `f`, on transparent huge pages where the kernel allows
/// them. Like `collect`, it aborts the process when the memory cannot be had.
pub(crate) fn vec_of<T>(len: usize, f: impl FnMut(usize) -> T) -> Vec<T> {
    try_vec(len, f).unwrap_or_else(|_| match std::alloc::Layout::array::<T>(len) {
        Ok(layout) => std::alloc::handle_alloc_error(layout),
        Err(_) => panic!("a vector of {len} elements overflows the address space"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The advice changes nothing in the vector, whatever its size or element type.
    #[test]
    fn reserved_vectors_work_as_before() {
        for len in [0usize, 1, 4 << 20, (5 << 20) + 3] {
            let mut v: Vec<u64> = Vec::new();
            try_reserve(&mut v, len).unwrap();
            assert!(v.capacity() >= len);
            v.extend((0..len as u64).map(|i| i * 3));
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
            let mut b: Vec<i8> = vec![7; 10];
            try_reserve(&mut b, len).unwrap();
            b.resize(10 + len, -1);
            assert_eq!(&b[..10], &[7; 10]);
            assert!(b[10..].iter().all(|&x| x == -1));
        }
    }

    /// The advice is given: the kernel marks the mapping that holds the vector's whole huge
    /// pages `hg` in `/proc/self/smaps` (where it has transparent huge pages at all).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernel_is_asked_for_huge_pages() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            return;
        }
        let mut v: Vec<u8> = Vec::new();
        try_reserve(&mut v, 8 * HUGE_PAGE).unwrap();
        let inside = (v.as_ptr() as usize).next_multiple_of(HUGE_PAGE);
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut within = false;
        let mut flags = None;
        for line in smaps.lines() {
            let head = line.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = head.split_once('-') {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    within = (a..b).contains(&inside);
                    continue;
                }
            }
            if within {
                if let Some(f) = line.strip_prefix("VmFlags:") {
                    flags = Some(f.split_whitespace().map(str::to_owned).collect::<Vec<_>>());
                }
            }
        }
        let flags = flags.expect("the vector's mapping in /proc/self/smaps");
        assert!(flags.iter().any(|f| f == "hg"), "VmFlags {flags:?}");
    }
}
