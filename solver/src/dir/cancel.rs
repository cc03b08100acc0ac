//! The cancellation of the writers of table directories ([`Cancel`]): a value the caller
//! makes, hands to every job that writes, and cancels from wherever it is stopped (the
//! command line's signal thread), instead of state of the whole process.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard};

use super::temp::remove_temporaries;

/// A cancellation shared by the writers of table directories and whoever stops them.
///
/// Writers hold [`Cancel::writing`] while they create, write and rename a temporary file
/// (a table, the manifest, a side copy) and check [`Cancel::is_cancelled`] between steps.
/// [`Cancel::cancel`] stops them and removes the temporaries of every directory locked
/// through this value ([`TableDir::lock`](super::TableDir::lock)): it waits for the writing
/// steps in flight, then keeps every new one from starting, for good, so nothing is left
/// behind when the process ends right after it. Clones share one state.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<State>);

#[derive(Debug, Default)]
struct State {
    /// Set by [`Cancel::cancel`]: writers stop at their next check.
    cancelled: AtomicBool,
    /// Shared by every writing step; taken exclusively, and never given back, by
    /// [`Cancel::cancel`].
    writing: RwLock<()>,
    /// The directories locked through this value.
    held: Mutex<Vec<PathBuf>>,
}

impl Cancel {
    /// A cancellation not cancelled yet.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Whether [`Cancel::cancel`] was called: a long write checks it between batches and
    /// gives up.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Relaxed)
    }

    /// Held while a writer creates, writes and renames a temporary file of a locked
    /// directory: [`Cancel::cancel`] waits for the steps in flight, so it never misses a
    /// temporary created while it runs.
    pub fn writing(&self) -> RwLockReadGuard<'_, ()> {
        self.0
            .writing
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Cancels the writers and removes the temporaries of every directory locked through
    /// this value: for a caller that ends the process right after. It first waits for the
    /// writing steps in flight (which give up at their next check), then keeps every new
    /// one from starting, for good.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Relaxed);
        let writing = self
            .0
            .writing
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        // Never released: no writer may start after the cleanup.
        std::mem::forget(writing);
        let held = self.0.held.lock().unwrap_or_else(PoisonError::into_inner);
        for dir in held.iter() {
            remove_temporaries(dir);
        }
    }

    /// Records that `dir` is locked through this value.
    pub(crate) fn hold(&self, dir: &Path) {
        let mut held = self.0.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.push(dir.to_path_buf());
    }

    /// Records that `dir` is no longer locked.
    pub(crate) fn release(&self, dir: &Path) {
        let mut held = self.0.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = held.iter().position(|d| d == dir) {
            held.swap_remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancelling_removes_the_temporaries_of_the_locked_directories_only() {
        let locked = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        for d in [locked.path(), other.path()] {
            std::fs::write(d.join("tier-03.owt.tmp"), b"x").unwrap();
        }
        let cancel = Cancel::new();
        let clone = cancel.clone();
        cancel.hold(locked.path());
        assert!(!clone.is_cancelled());
        clone.cancel();
        assert!(cancel.is_cancelled());
        assert!(!locked.path().join("tier-03.owt.tmp").exists());
        assert!(other.path().join("tier-03.owt.tmp").exists());
        // No writing step starts after the cleanup.
        assert!(cancel.0.writing.try_read().is_err());
    }
}
