//! The disk a generation needs, and the disk a directory's filesystem has free.

use std::path::Path;

use oware_db::write::WriteOptions;

/// Bytes a table of `positions` positions may take on disk, at most: one byte per position
/// (the raw scores; zstd's worst case exceeds them by well under 1%, and a ctx-huffman code
/// of at most 97 symbols averages under the 7 bits of a fixed-length code; tables measure 3.5
/// to 4.5 bits per position), plus 80 bytes per block (index entry, sub-block offsets, frame
/// headers) and 64 KiB of header, model and trailer.
pub fn table_disk_bound(positions: u64) -> u64 {
    let blocks = positions.div_ceil(u64::from(WriteOptions::DEFAULT_BLOCK_ENTRIES));
    positions + blocks * 80 + (64 << 10)
}

/// Bytes of disk [`crate::generate`] needs to solve (`solve`) and keep as a lower tier
/// (`side_copies` side copies of one byte per position, one per rank) a tier of
/// `positions` positions, with its distance table when `distances` (bounded as a table:
/// one byte per position at most; its ctx-huffman code measures 2.6–3.5 bits per position
/// from tier 9 up, so the bound's slack also covers a model larger than the 64 KiB counted).
/// Distances kept out of core take a byte per position more in scratch files while the
/// tier is solved (its windows' distances and its cells after the exits, zstd-compressed;
/// the tables' slack covers the rest).
pub fn generate_tier_disk(positions: u64, solve: bool, side_copies: u64, distances: bool) -> u64 {
    let tables = if solve {
        (table_disk_bound(positions) + positions) * u64::from(distances)
            + table_disk_bound(positions)
    } else {
        0
    };
    tables + side_copies * positions
}

/// Bytes free to an unprivileged user on the filesystem of `dir` (`statvfs`'s available
/// blocks); `None` where that cannot be read.
#[cfg(unix)]
pub fn free_disk(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `statvfs` is plain data, so all zeroes is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a valid NUL-terminated string and `st` a valid place to write to.
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Bytes free on the filesystem of `dir`: unknown on this platform.
#[cfg(not(unix))]
pub fn free_disk(_dir: &Path) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_covers_one_byte_per_position() {
        assert_eq!(table_disk_bound(0), 64 << 10);
        assert!(table_disk_bound(1 << 30) >= 1 << 30);
        assert!(table_disk_bound(1 << 30) < (1 << 30) + (1 << 30) / 10);
        assert_eq!(generate_tier_disk(1000, false, 2, true), 2000);
        assert_eq!(
            generate_tier_disk(1000, true, 0, false),
            table_disk_bound(1000)
        );
        // Two tables, a side copy, and a byte per position of the distances out of core.
        assert_eq!(
            generate_tier_disk(1000, true, 1, true),
            2 * table_disk_bound(1000) + 1000 + 1000
        );
    }

    #[cfg(unix)]
    #[test]
    fn free_disk_reads_the_filesystem() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_disk(dir.path()).is_some());
        assert_eq!(free_disk(&dir.path().join("missing")), None);
    }
}
