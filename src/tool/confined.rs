//! File changes that land where they were allowed to, even if the tree changes meanwhile.
//!
//! Checking a path and then writing to it by name leaves a window: a directory swapped for
//! a symlink in between sends the write out of the tree. So `fs_write`, `fs_patch`,
//! `fs_mkdir` and `fs_rm` open the working directory once and do everything relative to
//! that handle with `cap-std`, which resolves each component itself (`openat2` with
//! `RESOLVE_BENEATH` on Linux, an `O_NOFOLLOW` walk elsewhere) and refuses any `..` or
//! symlink that would leave the directory — at the moment of the operation. Symlinks that
//! stay inside the tree keep working. The temporary file of an atomic replace is created
//! and renamed inside the opened parent directory.
//!
//! A path outside the tree that the user explicitly approved is opened from the filesystem
//! root instead, so it works as approved.

use std::io::Write;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

use super::ToolError;
use super::paths::{self, Resolved};

/// Files larger than this are not read whole for a patch (as `fs_read` refuses them).
const MAX_READ_BYTES: u64 = 50 * 1024 * 1024;

/// A path opened for changing: a directory handle and a path beneath it.
pub(super) struct Place {
    dir: Dir,
    rel: PathBuf,
    /// How the path is named in messages.
    shown: String,
}

/// Opens the place of `target`: beneath the working tree when it is inside, beneath the
/// filesystem root when it is outside and `outside_ok` (the user approved that path).
pub(super) fn place(cwd: &Path, target: &Resolved, outside_ok: bool) -> Result<Place, ToolError> {
    let shown = paths::display(cwd, &target.path);
    let root = paths::root(cwd);
    let (base, rel) = if target.inside {
        let rel = target.path.strip_prefix(&root).unwrap_or(Path::new(""));
        (root.clone(), rel.to_path_buf())
    } else if outside_ok {
        let base = target
            .path
            .ancestors()
            .last()
            .unwrap_or(Path::new("/"))
            .to_path_buf();
        let rel = target.path.strip_prefix(&base).unwrap_or(&target.path);
        (base, rel.to_path_buf())
    } else {
        return Err(ToolError::Failed(format!(
            "refused: {shown} now resolves outside the working directory (a symlink changed \
             after the call was checked); call again to be asked"
        )));
    };
    let dir = Dir::open_ambient_dir(&base, ambient_authority())
        .map_err(|e| ToolError::Failed(format!("{}: {e}", base.display())))?;
    Ok(Place { dir, rel, shown })
}

impl Place {
    /// How the path is named in messages (relative to the working directory when inside).
    pub(super) fn shown(&self) -> &str {
        &self.shown
    }

    fn error(&self, e: &std::io::Error) -> ToolError {
        // cap-std reports an escape as "a path led outside of the filesystem".
        if e.to_string().contains("outside of the filesystem") {
            ToolError::Failed(format!(
                "refused: {} leads out of the working directory through a symlink",
                self.shown
            ))
        } else {
            ToolError::Failed(format!("{}: {e}", self.shown))
        }
    }

    /// Splits into the parent directory (opened) and the last component.
    fn parent(&self, create: bool) -> Result<(Dir, String), ToolError> {
        let name = self
            .rel
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| ToolError::Failed(format!("{} is a directory, not a file", self.shown)))?
            .to_string();
        let parent = self.rel.parent().unwrap_or(Path::new(""));
        let dir = if parent.as_os_str().is_empty() {
            self.dir.try_clone()
        } else {
            if create {
                self.dir
                    .create_dir_all(parent)
                    .map_err(|e| self.error(&e))?;
            }
            self.dir.open_dir(parent)
        }
        .map_err(|e| self.error(&e))?;
        Ok((dir, name))
    }

    /// The file's text.
    pub(super) fn read_to_string(&self) -> Result<String, ToolError> {
        let meta = self.dir.metadata(&self.rel).map_err(|e| self.error(&e))?;
        if !meta.is_file() {
            return Err(ToolError::Failed(format!(
                "{} is not a regular file",
                self.shown
            )));
        }
        if meta.len() > MAX_READ_BYTES {
            return Err(ToolError::Failed(format!(
                "{} is {} bytes, too large to patch; rewrite it with fs_write or use execute_command",
                self.shown,
                meta.len()
            )));
        }
        self.dir
            .read_to_string(&self.rel)
            .map_err(|e| self.error(&e))
    }

    /// Replaces the file atomically (temp file + rename in the same opened directory),
    /// keeping the permissions it had; parent directories are created.
    pub(super) fn replace(&self, contents: &[u8]) -> Result<(), ToolError> {
        let (dir, name) = self.parent(true)?;
        let permissions = dir
            .metadata(&name)
            .ok()
            .filter(cap_std::fs::Metadata::is_file)
            .map(|m| m.permissions());
        let tmp = format!(
            ".{name}.{}.{:08x}.tmp",
            std::process::id(),
            fastrand::u32(..)
        );
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            options.mode(0o644);
        }
        let written = (|| {
            let mut file = dir.open_with(&tmp, &options)?;
            file.write_all(contents)?;
            if let Some(permissions) = permissions {
                file.set_permissions(permissions)?;
            }
            file.sync_all()?;
            drop(file);
            dir.rename(&tmp, &dir, &name)
        })();
        if let Err(e) = written {
            let _ = dir.remove_file(&tmp);
            return Err(self.error(&e));
        }
        Ok(())
    }

    /// Creates the directory and any missing parents.
    pub(super) fn create_dir_all(&self) -> Result<(), ToolError> {
        if self.rel.as_os_str().is_empty() {
            return Ok(());
        }
        self.dir
            .create_dir_all(&self.rel)
            .map_err(|e| self.error(&e))
    }

    /// Removes the entry: a file or symlink (never what a link points to), an empty
    /// directory, or — only when `recursive` was approved — a directory and its contents.
    pub(super) fn remove(&self, recursive: bool) -> Result<(), ToolError> {
        let (dir, name) = self.parent(false)?;
        let meta = dir.symlink_metadata(&name).map_err(|e| self.error(&e))?;
        let removed = if !meta.is_dir() {
            dir.remove_file(&name)
        } else if recursive {
            dir.remove_dir_all(&name)
        } else {
            dir.remove_dir(&name)
        };
        removed.map_err(|e| {
            if e.kind() == std::io::ErrorKind::DirectoryNotEmpty {
                ToolError::Failed(format!(
                    "{} is a directory with files in it (it was not when the call was \
                     checked); call again to be asked about deleting it with everything in it",
                    self.shown
                ))
            } else {
                self.error(&e)
            }
        })
    }
}
