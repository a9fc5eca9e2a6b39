//! Writing files so that a crash, a full disk or Ctrl-C never leaves a truncated file:
//! write a temporary sibling, fsync it, then rename it over the target.
//!
//! Files holding secrets are created with mode 0600 from the start (never briefly
//! world-readable).

use std::io::Write;
use std::path::Path;

/// Replaces `path` with `contents` atomically. With `private`, the file gets mode 0600
/// (Unix). Parent directories are created as needed.
pub fn write_atomic(path: &Path, contents: &[u8], private: bool) -> std::io::Result<()> {
    write_atomic_as(path, contents, if private { 0o600 } else { 0o644 }, false)
}

/// Replaces `path` with `contents` atomically, giving the file exactly `mode` (Unix; the
/// umask does not apply): a file put back as it was keeps its permissions.
pub fn write_atomic_with_mode(path: &Path, contents: &[u8], mode: u32) -> std::io::Result<()> {
    write_atomic_as(path, contents, mode, true)
}

fn write_atomic_as(path: &Path, contents: &[u8], mode: u32, exact: bool) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let tmp = dir.join(format!(
        ".{name}.{}.{:08x}.tmp",
        std::process::id(),
        fastrand::u32(..)
    ));
    let result = write_then_rename(&tmp, path, contents, mode, exact);
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    } else {
        remove_stale_temps(dir);
    }
    result
}

/// Removes the temporary files in `dir` that killed writes left behind
/// (`.NAME.PID.RANDOM.tmp` of a process that no longer runs; Linux, through `/proc`). A
/// live writer's are kept.
fn remove_stale_temps(dir: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some((pid, random)) = file
            .to_str()
            .filter(|f| f.starts_with('.'))
            .and_then(|f| f.strip_suffix(".tmp"))
            .and_then(|f| f.rsplit_once('.'))
            .and_then(|(head, random)| Some((head.rsplit_once('.')?.1, random)))
        else {
            continue;
        };
        let ours = random.len() == 8 && random.bytes().all(|b| b.is_ascii_hexdigit());
        if ours && pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn write_then_rename(
    tmp: &Path,
    path: &Path,
    contents: &[u8],
    mode: u32,
    exact: bool,
) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // An exact mode is set once the file is ours, never wider before.
        options.mode(if exact { mode & 0o600 } else { mode });
    }
    let mut file = options.open(tmp)?;
    #[cfg(unix)]
    if exact {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = (mode, exact);
    file.write_all(contents)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(tmp, path)
}

/// Largest file loki reads whole for its own state (sessions, macros, the vault, roles):
/// 64 MiB.
pub const MAX_OWN_FILE: u64 = 64 * 1024 * 1024;

/// Largest configuration file loki reads (`functions/mcp.json`, `.env`, an agent's
/// `config.yaml`, a project's settings): 4 MiB.
pub const MAX_CONFIG_FILE: u64 = 4 * 1024 * 1024;

/// Reads a file loki keeps its own state in: only a regular file (a FIFO would block
/// forever, a link to `/dev/zero` would never end), at most `max` bytes. The errors are
/// ordinary I/O errors whose text says what was wrong; a missing file keeps `NotFound`.
pub fn read_regular(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    if meta.len() > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {} MiB", max >> 20),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    std::fs::File::open(path)?
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {} MiB", max >> 20),
        ));
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path, max: u64) -> std::io::Result<String> {
    String::from_utf8(read_regular(path, max)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_files_of_dead_writers_are_removed_and_a_live_one_s_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.yaml");
        // No process has pid 4294967: the file of a writer killed before its rename.
        let dead = dir.path().join(".state.yaml.4294967.0badc0de.tmp");
        let live = dir
            .path()
            .join(format!(".state.yaml.{}.12345678.tmp", std::process::id()));
        let other = dir.path().join(".other.yaml.4294967.0badc0de.tmp");
        for f in [&dead, &live, &other] {
            std::fs::write(f, "partial").unwrap();
        }
        write_atomic(&path, b"whole", false).unwrap();
        assert!(
            !dead.exists() && !other.exists(),
            "a dead writer's temp file stays"
        );
        assert!(live.exists());
    }

    #[test]
    fn replaces_content_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/config.yaml");
        write_atomic(&path, b"one", true).unwrap();
        write_atomic(&path, b"two", true).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let entries: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(entries.len(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn failure_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        write_atomic(&path, b"keep", false).unwrap();
        // A directory in the way of the rename makes it fail.
        let blocked = dir.path().join("d");
        std::fs::create_dir_all(blocked.join("x")).unwrap();
        assert!(write_atomic(&blocked, b"new", false).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"keep");
    }
}
