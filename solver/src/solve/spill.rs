//! Distances out of core: a tier whose distances do not fit in memory beside its cells is
//! propagated once per *window* of its indices ([`Spill`]), each run keeping the distances
//! of its window only, which go to a scratch file (zstd) before the next run starts. Every
//! run starts from the state the exits left (the cells and the level masks), kept in a
//! scratch file in between; the rounds are the same in every run, since a position's round
//! is the length of a breadth-first chain of decisions, whatever the order of the work
//! (`rounds.rs`). The scores are those of the last run.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use crate::distance::NO_DISTANCE;
use crate::error::SolveError;

/// Where and how a tier's distances are kept out of core ([`Tuning::spill`]).
///
/// [`Tuning::spill`]: super::Tuning::spill
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spill<'a> {
    /// The directory of the scratch files (created by the caller); they are removed when
    /// the distances are dropped.
    pub dir: &'a Path,
    /// Most positions whose distances are held in memory at once: rounded down to a
    /// multiple of [`WINDOW_ALIGN`] (at least one). A tier of no more positions is decided
    /// in one run, in memory.
    pub window: u64,
}

/// Windows start at multiples of this many positions: whole blocks of a distance table.
pub const WINDOW_ALIGN: u64 = 1 << 16;

/// The windows of a tier of `size` positions under `spill`.
pub(super) fn windows(size: u64, spill: &Spill<'_>) -> Vec<Range<u64>> {
    let w = (spill.window / WINDOW_ALIGN * WINDOW_ALIGN).max(WINDOW_ALIGN);
    (0..size.div_ceil(w))
        .map(|k| k * w..((k + 1) * w).min(size))
        .collect()
}

/// The distances of a tier kept in scratch files, one per window, in index order
/// (`TierScores::spilled`). The files are removed when this is dropped.
#[derive(Debug)]
pub struct SpilledDistances {
    tier: u8,
    windows: Vec<(Range<u64>, PathBuf)>,
    max: u8,
    runs: u64,
}

impl SpilledDistances {
    /// The windows' index ranges, in order; together they cover the tier.
    pub fn windows(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        self.windows.iter().map(|(r, _)| r.clone())
    }

    /// The longest distance of the tier (0 when there is none).
    pub fn max(&self) -> u8 {
        self.max
    }

    /// Runs of the propagation that decided them: one per window.
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// Reads the distances of window `w` into `buf`, resized to the window's length (one
    /// byte per position, as [`TierScores::distances`](super::TierScores::distances) gives
    /// them).
    ///
    /// # Errors
    /// [`SolveError::Scratch`] when the file cannot be read, or holds fewer bytes.
    ///
    /// # Panics
    /// If `w` is not a window.
    pub fn read(&self, w: usize, buf: &mut Vec<u8>) -> Result<(), SolveError> {
        let (range, path) = &self.windows[w];
        buf.clear();
        buf.resize((range.end - range.start) as usize, 0);
        let err = |source| SolveError::Scratch {
            tier: self.tier,
            path: path.clone(),
            source,
        };
        let file = File::open(path).map_err(err)?;
        let mut dec = zstd::stream::Decoder::new(file).map_err(err)?;
        dec.read_exact(buf).map_err(err)
    }
}

impl Drop for SpilledDistances {
    fn drop(&mut self) {
        for (_, path) in &self.windows {
            // A scratch file left behind is removed with the scratch directory.
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Collects the distances of a tier's windows as they are made, into scratch files.
pub(super) struct SpillWriter {
    done: SpilledDistances,
    dir: PathBuf,
}

impl SpillWriter {
    pub(super) fn new(tier: u8, dir: &Path) -> Self {
        SpillWriter {
            done: SpilledDistances {
                tier,
                windows: Vec::new(),
                max: 0,
                runs: 0,
            },
            dir: dir.to_path_buf(),
        }
    }

    /// Writes the distances `bytes` of the window `range` (the next one).
    pub(super) fn push(&mut self, range: Range<u64>, bytes: &[u8]) -> Result<(), SolveError> {
        let tier = self.done.tier;
        let path = self.dir.join(format!(
            "tier-{tier:02}.distances-{}",
            self.done.windows.len()
        ));
        let max = bytes
            .iter()
            .copied()
            .filter(|&d| d != NO_DISTANCE)
            .max()
            .unwrap_or(0);
        self.done.max = self.done.max.max(max);
        write_zstd(&path, &[bytes]).map_err(|source| SolveError::Scratch {
            tier,
            path: path.clone(),
            source,
        })?;
        self.done.windows.push((range, path));
        self.done.runs += 1;
        Ok(())
    }

    pub(super) fn finish(self) -> SpilledDistances {
        self.done
    }
}

/// Writes `parts`, one after the other, to a new file at `path`, compressed with zstd, and
/// removes it again on failure.
fn write_zstd(path: &Path, parts: &[&[u8]]) -> std::io::Result<()> {
    let written = (|| {
        let file = File::create(path)?;
        let mut enc = zstd::stream::Encoder::new(BufWriter::with_capacity(1 << 20, file), 1)?;
        for part in parts {
            enc.write_all(part)?;
        }
        enc.finish()?.flush()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

/// The state the exits left a tier in (its cells and level masks), kept in a scratch file
/// so that each run of the propagation starts from it; the file is removed on drop.
pub(super) struct Snapshot {
    tier: u8,
    path: PathBuf,
}

impl Snapshot {
    /// Saves `cells` and `levels` of tier `tier` in `dir`.
    pub(super) fn save(
        tier: u8,
        dir: &Path,
        cells: &[AtomicU8],
        levels: &[AtomicU64],
    ) -> Result<Self, SolveError> {
        let path = dir.join(format!("tier-{tier:02}.state"));
        // SAFETY: no thread writes the cells while the propagation has not started; an
        // `AtomicU8` has the size and alignment of a `u8`.
        let bytes = unsafe { std::slice::from_raw_parts(cells.as_ptr().cast::<u8>(), cells.len()) };
        let masks: Vec<u8> = levels
            .iter()
            .flat_map(|m| m.load(Ordering::Relaxed).to_le_bytes())
            .collect();
        write_zstd(&path, &[bytes, &masks]).map_err(|source| SolveError::Scratch {
            tier,
            path: path.clone(),
            source,
        })?;
        Ok(Snapshot { tier, path })
    }

    /// Puts the saved state back into `cells` and `levels`.
    pub(super) fn restore(
        &self,
        cells: &[AtomicU8],
        levels: &[AtomicU64],
    ) -> Result<(), SolveError> {
        let err = |source| SolveError::Scratch {
            tier: self.tier,
            path: self.path.clone(),
            source,
        };
        let file = File::open(&self.path).map_err(err)?;
        let mut dec = zstd::stream::Decoder::with_buffer(BufReader::with_capacity(1 << 20, file))
            .map_err(err)?;
        let mut buf = vec![0u8; 1 << 20];
        for part in cells.chunks(buf.len()) {
            let got = &mut buf[..part.len()];
            dec.read_exact(got).map_err(err)?;
            for (c, &b) in part.iter().zip(got.iter()) {
                c.store(b, Ordering::Relaxed);
            }
        }
        for part in levels.chunks(buf.len() / 8) {
            let got = &mut buf[..part.len() * 8];
            dec.read_exact(got).map_err(err)?;
            for (m, b) in part.iter().zip(got.chunks_exact(8)) {
                let mut word = [0u8; 8];
                word.copy_from_slice(b);
                m.store(u64::from_le_bytes(word), Ordering::Relaxed);
            }
        }
        Ok(())
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cover_the_tier_in_aligned_runs() {
        let dir = Path::new("/nonexistent");
        let spill = |window| Spill { dir, window };
        assert_eq!(windows(10, &spill(1)), vec![0..10]);
        let w = windows(3 * WINDOW_ALIGN + 5, &spill(WINDOW_ALIGN + 7));
        assert_eq!(w.len(), 4);
        assert_eq!(w[0], 0..WINDOW_ALIGN);
        assert_eq!(w[3], 3 * WINDOW_ALIGN..3 * WINDOW_ALIGN + 5);
        assert_eq!(
            windows(2 * WINDOW_ALIGN, &spill(u64::MAX)),
            vec![0..2 * WINDOW_ALIGN]
        );
    }

    #[test]
    fn a_snapshot_restores_cells_and_masks() {
        let dir = tempfile::tempdir().unwrap();
        let cells: Vec<AtomicU8> = (0..3_000_000u32)
            .map(|i| AtomicU8::new((i * 7) as u8))
            .collect();
        let levels: Vec<AtomicU64> = (0..300_000u64)
            .map(|i| AtomicU64::new(i * 0x9E37))
            .collect();
        let snap = Snapshot::save(5, dir.path(), &cells, &levels).unwrap();
        for c in &cells {
            c.store(1, Ordering::Relaxed);
        }
        for m in &levels {
            m.store(3, Ordering::Relaxed);
        }
        snap.restore(&cells, &levels).unwrap();
        assert!(cells
            .iter()
            .enumerate()
            .all(|(i, c)| c.load(Ordering::Relaxed) == (i as u32 * 7) as u8));
        assert!(levels
            .iter()
            .enumerate()
            .all(|(i, m)| m.load(Ordering::Relaxed) == i as u64 * 0x9E37));
        let path = dir.path().join("tier-05.state");
        assert!(path.exists());
        drop(snap);
        assert!(!path.exists());
    }
}
