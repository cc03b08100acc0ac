//! The writer's lock of a table directory, and the temporary files a writer leaves there.
//!
//! A writer ([`crate::generate`], `oware recompress`) holds an exclusive advisory lock
//! (`flock`, on unix) on `DIR/.lock` for as long as it writes; the file holds the holder's process id.
//! The kernel releases the lock when the process ends, however it ends, so a lock file left
//! by a dead process blocks nobody. Readers never look at it.
//!
//! Holding the lock proves that no other writer is alive, so the temporaries found in the
//! directory then (`tier-NN.owt.tmp`, `manifest.json.tmp`, the scratch directory) are a dead
//! writer's leftovers: [`DirLock::remove_temporaries`] removes them.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;

use super::cancel::Cancel;
use super::temp::remove_temporaries;

/// The lock file of a table directory.
pub const LOCK_FILE: &str = ".lock";

/// Why a directory could not be locked.
#[derive(Debug, Error)]
pub enum LockError {
    /// Another live process holds the lock.
    #[error("{} is being written by {}", dir.display(), holder(*pid))]
    Held {
        /// The directory.
        dir: PathBuf,
        /// The holder's process id, as its lock file records it (`None` when unreadable).
        pid: Option<u32>,
    },
    /// The lock file cannot be opened or locked.
    #[error("cannot lock {}: {source}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

/// Whether `e` is the error of an open with `O_NOFOLLOW` that met a symbolic link (`ELOOP`;
/// `EMLINK` on FreeBSD).
fn followed_a_link(e: &io::Error) -> bool {
    #[cfg(unix)]
    return matches!(e.raw_os_error(), Some(libc::ELOOP | libc::EMLINK));
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

fn holder(pid: Option<u32>) -> String {
    pid.map_or_else(|| "another process".to_string(), |p| format!("process {p}"))
}

/// An exclusive lock on a table directory, released when dropped (or when the process ends).
#[derive(Debug)]
pub struct DirLock {
    dir: PathBuf,
    file: File,
    /// The cancellation whose cleanup removes the directory's temporaries.
    cancel: Cancel,
}

impl DirLock {
    /// Takes the lock of `dir` (which must exist) without waiting, and writes this process's
    /// id into the lock file; while it is held, `cancel`'s cleanup removes the directory's
    /// temporaries ([`Cancel::cancel`]).
    ///
    /// # Errors
    /// [`LockError::Held`] when another process holds it; [`LockError::Io`] when the lock file
    /// cannot be opened, locked or written.
    pub(crate) fn acquire(dir: &Path, cancel: &Cancel) -> Result<DirLock, LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        // Not followed if it is a link, nor taken if it is not a plain file: the lock file is
        // emptied and written, and must not be some other file of the system.
        let not_plain = |what: &str| {
            io(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{what}: remove it"),
            ))
        };
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(not_plain("a symbolic link, not a lock file"));
        }
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // A link made since the look above fails the open rather than be followed; a
            // FIFO opens without waiting for a writer.
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let mut file = options.open(&path).map_err(|e| {
            if followed_a_link(&e) {
                not_plain("a symbolic link, not a lock file")
            } else {
                io(e)
            }
        })?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(not_plain("not a plain file, so not a lock file"));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            // A hard link is another file's name as well: emptying it would empty that file.
            if meta.nlink() > 1 {
                return Err(not_plain("a file with other links, so not a lock file"));
            }
        }
        match try_lock(&file) {
            Ok(true) => {}
            Ok(false) => {
                // A holder that has just taken the lock writes its id right after: give it a
                // few milliseconds before naming nobody.
                let mut pid = None;
                for _ in 0..20 {
                    let mut text = String::new();
                    pid = file
                        .seek(SeekFrom::Start(0))
                        .and_then(|_| file.read_to_string(&mut text))
                        .ok()
                        .and_then(|_| text.trim().parse().ok());
                    if pid.is_some() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                return Err(LockError::Held {
                    dir: dir.to_path_buf(),
                    pid,
                });
            }
            Err(e) => return Err(io(e)),
        }
        file.set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| writeln!(file, "{}", std::process::id()))
            .map_err(io)?;
        cancel.hold(dir);
        Ok(DirLock {
            dir: dir.to_path_buf(),
            file,
            cancel: cancel.clone(),
        })
    }

    /// The directory locked.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Removes the writers' temporaries of the directory: the scratch directory and every
    /// [`is_temporary`](super::temp::is_temporary) file.
    pub fn remove_temporaries(&self) {
        remove_temporaries(&self.dir);
    }

    /// Held while the holder creates, writes and renames a temporary file of the directory
    /// ([`Cancel::writing`]).
    pub fn writing(&self) -> std::sync::RwLockReadGuard<'_, ()> {
        self.cancel.writing()
    }

    /// Whether the writers are cancelled ([`Cancel::is_cancelled`]).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        self.cancel.release(&self.dir);
        // The lock file stays (removing it would let two processes lock two different files);
        // emptied, it names no holder.
        let _ = self.file.set_len(0);
        // Closing the file releases the lock.
    }
}

/// Takes an exclusive `flock` on `file` without waiting: `Ok(false)` when another open file
/// of the same inode holds one.
#[cfg(unix)]
fn try_lock(file: &File) -> io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    loop {
        // SAFETY: `flock` on a file descriptor this `File` owns and keeps open.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(e),
        }
    }
}

/// No advisory locks on this platform: the lock file is written, nothing is excluded.
#[cfg(not(unix))]
fn try_lock(_file: &File) -> io::Result<bool> {
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_with_the_holders_pid() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = Cancel::new();
        let lock = DirLock::acquire(dir.path(), &cancel).unwrap();
        match DirLock::acquire(dir.path(), &cancel) {
            Err(LockError::Held { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("{other:?}"),
        }
        drop(lock);
        let again = DirLock::acquire(dir.path(), &cancel).unwrap();
        assert_eq!(again.dir(), dir.path());
    }
}
