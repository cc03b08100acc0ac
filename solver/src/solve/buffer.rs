//! Large zero-initialised arrays of atomics for the solver's cells and frontier bits,
//! allocated as anonymous memory maps that ask the kernel for transparent huge pages.
//!
//! The solver reads and writes its cells at random positions: with 4 KiB pages almost every
//! access also misses the TLB. With 2 MiB pages (`MADV_HUGEPAGE`, honoured where the
//! kernel's `transparent_hugepage` setting is `madvise` or `always`) the page walks mostly
//! disappear. Where the advice is refused the buffer works the same with small pages.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU16, AtomicU64, AtomicU8};

use memmap2::{Advice, MmapMut};

/// Element types that may live in an [`AtomicBuf`]: all-zero bytes are a valid value.
///
/// # Safety
/// Implementors must be plain integer atomics, valid when every byte is zero, with no
/// `Drop`.
pub unsafe trait Zeroable: Sized {}

// SAFETY: atomic integers are valid when zero and have no drop glue.
unsafe impl Zeroable for AtomicU16 {}
// SAFETY: as above.
unsafe impl Zeroable for AtomicU64 {}
// SAFETY: as above.
unsafe impl Zeroable for AtomicU8 {}

/// A fixed-length array of `T`, all zero at creation, in its own anonymous memory map.
pub struct AtomicBuf<T: Zeroable> {
    /// `None` for an empty buffer (a map cannot be empty).
    map: Option<MmapMut>,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Zeroable> AtomicBuf<T> {
    /// `len` zeroed elements.
    ///
    /// # Errors
    /// The memory map cannot be created (out of address space or memory).
    pub fn zeroed(len: usize) -> std::io::Result<Self> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| std::io::Error::other("buffer size overflows"))?;
        let map = if bytes == 0 {
            None
        } else {
            let map = MmapMut::map_anon(bytes)?;
            // Advice only: a kernel without transparent huge pages refuses it harmlessly.
            let _ = map.advise(Advice::HugePage);
            Some(map)
        };
        Ok(AtomicBuf {
            map,
            len,
            _t: PhantomData,
        })
    }

    /// The elements.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        match &self.map {
            // SAFETY: the map holds `len * size_of::<T>()` bytes, zero-initialised by the
            // kernel and page-aligned (so aligned for `T`); `T` is valid for any bytes that
            // the safe API can have written (only through `&T`, i.e. atomic operations),
            // and the slice borrows `self`, which owns the map.
            Some(m) => unsafe { std::slice::from_raw_parts(m.as_ptr().cast::<T>(), self.len) },
            None => &[],
        }
    }

    /// The raw bytes, for in-place rewrites by the owner.
    #[inline]
    pub fn as_mut_bytes(&mut self) -> &mut [u8] {
        match &mut self.map {
            Some(m) => &mut m[..],
            None => &mut [],
        }
    }

    /// The raw bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.map {
            Some(m) => &m[..],
            None => &[],
        }
    }
}

impl AtomicBuf<AtomicU8> {
    /// The bytes, copied into a vector a piece at a time, each piece's pages released once
    /// copied: at most one piece is held twice.
    pub fn into_bytes(self) -> Vec<u8> {
        const PIECE: usize = 1 << 21;
        let mut out = Vec::with_capacity(self.len);
        if let Some(map) = &self.map {
            for at in (0..self.len).step_by(PIECE) {
                let end = (at + PIECE).min(self.len);
                out.extend_from_slice(&map[at..end]);
                // SAFETY: the pages are only read again here, and never after: the buffer is
                // consumed. A refused advice leaves them resident, harmlessly.
                let _ = unsafe {
                    map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, at, end - at)
                };
            }
        }
        out
    }
}

impl<T: Zeroable> std::ops::Deref for AtomicBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

/// Bytes of the pages under `items` that are resident (`mincore`), for tests of what an
/// algorithm leaves untouched.
///
/// # Errors
/// `mincore` fails.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn resident_bytes<T>(items: &[T]) -> std::io::Result<u64> {
    // SAFETY: `sysconf` has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let start = items.as_ptr() as usize / page * page;
    let end = (items.as_ptr() as usize + std::mem::size_of_val(items)).div_ceil(page) * page;
    if end == start {
        return Ok(0);
    }
    let mut vec = vec![0u8; (end - start) / page];
    // SAFETY: `start..end` covers the pages of `items`, a live mapping borrowed for the call;
    // `vec` has one byte per page of that range.
    let rc = unsafe { libc::mincore(start as *mut libc::c_void, end - start, vec.as_mut_ptr()) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(vec.iter().filter(|&&b| b & 1 != 0).count() as u64 * page as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn zeroed_and_writable() {
        let mut b = AtomicBuf::<AtomicU16>::zeroed(5_000_000).unwrap();
        assert!(b.iter().all(|w| w.load(Ordering::Relaxed) == 0));
        b[4_999_999].store(0x1234, Ordering::Relaxed);
        assert_eq!(b.as_mut_bytes()[9_999_998], 0x34);
        let e = AtomicBuf::<AtomicU64>::zeroed(0).unwrap();
        assert!(e.is_empty());
    }
}
