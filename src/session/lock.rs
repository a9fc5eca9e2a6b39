//! Lock files that serialise the writers of one session.
//!
//! A turn on a session holds an exclusive advisory lock (`flock`) on the session's lock
//! file from before its history is re-read until the session is written. Two loki
//! processes on one session therefore take turns instead of both appending to the same
//! starting point (and one of them silently overwriting the other). Each [`SessionLock`]
//! opens the file anew, so two conversations inside one process exclude each other the
//! same way. The lock goes when the [`SessionLock`] is dropped, or with the process.
//!
//! Lock files are never deleted (deleting a lock file someone waits on would let a third
//! writer in); they are empty and live beside the session (or under `by-name/.locks/`
//! for a named session not written yet), so deleting the session removes them.

use std::fs::File;
use std::path::{Path, PathBuf};

/// An exclusive lock on one session, held until dropped.
#[derive(Debug)]
pub struct SessionLock {
    /// Holding the open file holds the lock.
    _file: File,
    path: PathBuf,
}

impl SessionLock {
    /// Takes the lock at `path` if nobody holds it; `None` if somebody does.
    pub fn try_acquire(path: &Path) -> std::io::Result<Option<Self>> {
        let file = open(path)?;
        Ok(lock(&file, false)?.then(|| Self {
            _file: file,
            path: path.to_path_buf(),
        }))
    }

    /// Waits for the lock at `path` (blocks the calling thread).
    pub fn acquire(path: &Path) -> std::io::Result<Self> {
        let file = open(path)?;
        lock(&file, true)?;
        Ok(Self {
            _file: file,
            path: path.to_path_buf(),
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn open(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Locks `file` exclusively; false when `wait` is off and somebody else holds it.
#[cfg(unix)]
fn lock(file: &File, wait: bool) -> std::io::Result<bool> {
    use rustix::fs::{FlockOperation, flock};
    let operation = if wait {
        FlockOperation::LockExclusive
    } else {
        FlockOperation::NonBlockingLockExclusive
    };
    loop {
        match flock(file, operation) {
            Ok(()) => return Ok(true),
            Err(rustix::io::Errno::INTR) => continue,
            Err(rustix::io::Errno::WOULDBLOCK) if !wait => return Ok(false),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Without `flock` the lock file only marks the place; writers are not serialised.
#[cfg(not(unix))]
fn lock(_file: &File, _wait: bool) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_for_the_first_even_in_one_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/state.lock");
        let first = SessionLock::try_acquire(&path).unwrap().unwrap();
        assert!(SessionLock::try_acquire(&path).unwrap().is_none());
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || SessionLock::acquire(&path).unwrap())
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!waiter.is_finished(), "the second lock must wait");
        drop(first);
        let second = waiter.join().unwrap();
        assert_eq!(second.path(), path);
        assert!(SessionLock::try_acquire(&path).unwrap().is_none());
        drop(second);
        assert!(SessionLock::try_acquire(&path).unwrap().is_some());
    }
}
