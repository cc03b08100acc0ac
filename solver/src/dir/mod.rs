//! The table directory ([`TableDir`]): where its tiers, manifest, scratch and temporaries
//! are, its writer's lock ([`DirLock`]) and cancellation ([`Cancel`]), the disk it has
//! free; and the tier files read and written in parallel and checked.

pub(crate) mod cancel;
pub(crate) mod check;
pub(crate) mod disk;
pub(crate) mod lock;
pub(crate) mod read;
pub(crate) mod romein;
pub(crate) mod temp;
pub(crate) mod write;
pub(crate) mod write_ranked;

use std::path::{Path, PathBuf};

use oware_db::manifest::Manifest;

pub use cancel::Cancel;
pub use check::{check_tiers, CheckObserver};
pub use disk::{
    densest, free_disk, table_disk_bound, table_disk_estimate, Measured, TierDisk, MEASURED_MARGIN,
    MEASURED_MIN_POSITIONS, SPILL_SNAPSHOT_BITS, SPILL_WINDOW_BITS,
};
pub use lock::{DirLock, LockError, LOCK_FILE};
pub use read::{read_distances, read_table};
pub use romein::{export_overhead, export_romein, import_romein};
pub use temp::is_temporary;
pub use write::{write_distances_parallel, write_table_parallel, DEFAULT_BATCH_BLOCKS};

/// The scratch directory, inside the table directory, of the lower tiers' side copies.
pub const SCRATCH_DIR: &str = ".scratch";

/// A directory of tables as its writers see it: every path they build, the lock they take,
/// the cancellation that stops them and removes their temporaries, the disk they check.
#[derive(Clone, Debug)]
pub struct TableDir {
    path: PathBuf,
    cancel: Cancel,
}

impl TableDir {
    /// The directory at `path`, whose writers `cancel` stops.
    pub fn new(path: impl Into<PathBuf>, cancel: &Cancel) -> TableDir {
        TableDir {
            path: path.into(),
            cancel: cancel.clone(),
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The cancellation of its writers.
    pub fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    /// Creates the directory (and its parents) if missing.
    ///
    /// # Errors
    /// The directory cannot be created.
    pub fn create(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.path)
    }

    /// The file of tier `tier`: the one `manifest` records, or the standard name
    /// ([`oware_db::manifest::tier_path`]).
    pub fn tier_path(&self, manifest: Option<&Manifest>, tier: u8) -> PathBuf {
        oware_db::manifest::tier_path(&self.path, manifest, tier)
    }

    /// The scratch directory of the side copies ([`SCRATCH_DIR`]).
    pub fn scratch(&self) -> PathBuf {
        self.path.join(SCRATCH_DIR)
    }

    /// The manifest, if the directory has one.
    ///
    /// # Errors
    /// As [`Manifest::load`].
    pub fn manifest(&self) -> Result<Option<Manifest>, oware_db::Error> {
        Manifest::load(&self.path)
    }

    /// Takes the writer's lock without waiting; while it is held, cancelling removes the
    /// directory's temporaries.
    ///
    /// # Errors
    /// [`LockError::Held`] when another process holds it; [`LockError::Io`] when the lock
    /// file cannot be opened, locked or written.
    pub fn lock(&self) -> Result<DirLock, LockError> {
        DirLock::acquire(&self.path, &self.cancel)
    }

    /// Bytes free to an unprivileged user on the directory's filesystem; `None` where that
    /// cannot be read.
    pub fn free_disk(&self) -> Option<u64> {
        disk::free_disk(&self.path)
    }
}
