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

/// A table already recorded: its bytes on disk and its positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measured {
    /// The file's size in bytes.
    pub bytes: u64,
    /// Its positions.
    pub positions: u64,
}

/// Fewest positions a recorded table needs for its bits per position to judge a higher
/// tier's: smaller ones are mostly header and model.
pub const MEASURED_MIN_POSITIONS: u64 = 1 << 20;

/// Margin over the bits per position measured on the lower tiers. Within a game they drift
/// by a few hundredths of a bit from one tier to the next (docs/BENCHMARKS.md).
pub const MEASURED_MARGIN: f64 = 1.25;

/// Bytes a table of `positions` positions is expected to take: [`MEASURED_MARGIN`] times the
/// bytes per position of `lower` (a lower tier's table of the same kind), plus the header's
/// 64 KiB; never more than [`table_disk_bound`], which it is without a measure.
pub fn table_disk_estimate(positions: u64, lower: Option<Measured>) -> u64 {
    let bound = table_disk_bound(positions);
    match lower {
        Some(m) if m.positions > 0 => {
            let per = m.bytes as f64 / m.positions as f64 * MEASURED_MARGIN;
            ((positions as f64 * per).ceil() as u64 + (64 << 10)).min(bound)
        }
        _ => bound,
    }
}

/// The largest bytes per position among `tables` (a directory's recorded tables of one
/// kind) of at least [`MEASURED_MIN_POSITIONS`] positions.
pub fn densest(tables: impl IntoIterator<Item = Measured>) -> Option<Measured> {
    tables
        .into_iter()
        .filter(|m| m.positions >= MEASURED_MIN_POSITIONS)
        .max_by(|a, b| {
            // a.bytes / a.positions against b.bytes / b.positions, exactly.
            (u128::from(a.bytes) * u128::from(b.positions))
                .cmp(&(u128::from(b.bytes) * u128::from(a.positions)))
        })
}

/// What [`crate::generate`] writes to disk for one tier.
#[derive(Clone, Copy, Debug, Default)]
pub struct TierDisk {
    /// The tier's positions.
    pub positions: u64,
    /// Whether the tier is solved (and its tables written); a tier kept from an earlier run
    /// writes only its side copies.
    pub solve: bool,
    /// Side copies of one byte per position kept for a later tier: one per process, or the
    /// ranks' shares of one.
    pub side_copies: u64,
    /// The densest recorded score table of a lower tier ([`densest`]), if any.
    pub scores: Option<Measured>,
    /// Whether a distance table is written too.
    pub distances: bool,
    /// The densest recorded distance table of a lower tier, if any.
    pub distances_measured: Option<Measured>,
    /// Whether the distances are kept out of core while the tier is solved: their windows
    /// and the state after the exits go to zstd scratch files ([`SPILL_WINDOW_BITS`],
    /// [`SPILL_SNAPSHOT_BITS`]).
    pub spilled: bool,
}

/// Bits per position the windows' distances of a tier kept out of core are counted at in
/// scratch (zstd level 1; 3.3 measured at tier 35 of the 36-seed game). They stay until its
/// distance table is written.
pub const SPILL_WINDOW_BITS: u64 = 4;

/// Bits per position the state after the exits of a tier whose distances are kept out of
/// core is counted at in scratch (its cells and level masks, zstd level 1; 2.6 measured at
/// tier 35 of the 36-seed game). It is removed before the tables are written.
pub const SPILL_SNAPSHOT_BITS: u64 = 4;

impl TierDisk {
    /// Bytes of disk the tier is expected to need: its tables as [`table_disk_estimate`]
    /// judges them from the lower tiers (each at most [`table_disk_bound`]); with distances
    /// kept out of core, the windows' scratch beside the larger of the tables and the saved
    /// state (which goes before they are written); and the side copies. An estimate, not a
    /// bound: a tier that outgrows it stops the run with a full disk, which loses only the
    /// tier in progress.
    pub fn bytes(&self) -> u64 {
        let mut total = self.side_copies * self.positions;
        if self.solve {
            let mut tables = table_disk_estimate(self.positions, self.scores);
            if self.distances {
                tables += table_disk_estimate(self.positions, self.distances_measured);
            }
            total += if self.distances && self.spilled {
                let bits = |b: u64| (self.positions * b).div_ceil(8);
                bits(SPILL_WINDOW_BITS) + tables.max(bits(SPILL_SNAPSHOT_BITS))
            } else {
                tables
            };
        }
        total
    }
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
    }

    fn tier(positions: u64) -> TierDisk {
        TierDisk {
            positions,
            solve: true,
            ..TierDisk::default()
        }
    }

    #[test]
    fn a_tier_counts_its_tables_side_copies_and_scratch() {
        let kept = TierDisk {
            solve: false,
            side_copies: 2,
            distances: true,
            spilled: true,
            ..tier(1000)
        };
        assert_eq!(kept.bytes(), 2000);
        assert_eq!(tier(1000).bytes(), table_disk_bound(1000));
        let with = TierDisk {
            distances: true,
            side_copies: 1,
            ..tier(1000)
        };
        assert_eq!(with.bytes(), 2 * table_disk_bound(1000) + 1000);
        // The scratch only where the distances are kept out of core.
        let spilled = TierDisk {
            spilled: true,
            ..with
        };
        // The windows beside the tables, which outweigh the saved state.
        assert_eq!(spilled.bytes(), with.bytes() + 500);
        // The windows beside the saved state, where it outweighs the tables.
        let m = |bytes, positions| Measured { bytes, positions };
        let n = 1u64 << 30;
        let small = TierDisk {
            scores: Some(m(1 << 20, 8 << 20)),
            distances: true,
            distances_measured: Some(m(1 << 20, 8 << 20)),
            spilled: true,
            ..tier(n)
        };
        // Tables of 1.25 bits per position each, under the state's 4.
        assert!(2 * table_disk_estimate(n, Some(m(1 << 20, 8 << 20))) < n / 2);
        assert_eq!(small.bytes(), n / 2 + n / 2);
        let scores_only = TierDisk {
            spilled: true,
            ..tier(1000)
        };
        assert_eq!(scores_only.bytes(), table_disk_bound(1000));
    }

    #[test]
    fn measured_tables_bound_a_higher_tier() {
        let m = |bytes, positions| Measured { bytes, positions };
        // Half a byte per position (4 bits): 5 bits with the margin.
        let n = 1u64 << 30;
        assert_eq!(
            table_disk_estimate(n, Some(m(1 << 20, 2 << 20))),
            n * 5 / 8 + (64 << 10)
        );
        // Never above the bound, which is the estimate without a measure.
        assert_eq!(table_disk_estimate(n, None), table_disk_bound(n));
        assert_eq!(
            table_disk_estimate(n, Some(m(3 << 20, 2 << 20))),
            table_disk_bound(n)
        );
        // The densest of the large enough tables judges.
        let tables = [
            m(100, 10),
            m(3 << 20, 8 << 20),
            m(1 << 20, 2 << 20),
            m(2, 4),
        ];
        assert_eq!(densest(tables), Some(m(1 << 20, 2 << 20)));
        assert_eq!(densest([m(100, 10)]), None);
        // Scores and distances each judged by their own kind.
        let t = TierDisk {
            scores: Some(m(1 << 20, 2 << 20)),
            distances: true,
            distances_measured: Some(m(1 << 20, 4 << 20)),
            ..tier(n)
        };
        assert_eq!(t.bytes(), n * 5 / 8 + n * 5 / 16 + (128 << 10));
    }

    #[cfg(unix)]
    #[test]
    fn free_disk_reads_the_filesystem() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_disk(dir.path()).is_some());
        assert_eq!(free_disk(&dir.path().join("missing")), None);
    }
}
