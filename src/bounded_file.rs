//! Reading a file loki was pointed at (config, project files, flags) without trusting
//! it: it must be a regular file (not a FIFO that never ends or a device that never
//! stops), and no more than a stated size is read.

use std::io::Read;
use std::path::Path;

/// The text of regular file `path`, at most `limit` bytes; an error naming why not
/// (not a regular file, too large, not UTF-8, or the OS's reason).
pub fn read_to_string(path: &Path, limit: u64) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind};
    // The type is checked on the opened file, so a swap between check and read cannot
    // slip a FIFO in; opening a FIFO for reading would block, hence O_NONBLOCK.
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    if meta.len() > limit {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("larger than {limit} bytes ({} bytes)", meta.len()),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("larger than {limit} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|_| Error::new(ErrorKind::InvalidData, "not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        std::fs::write(&file, "{}").unwrap();
        assert_eq!(read_to_string(&file, 10).unwrap(), "{}");
        assert!(read_to_string(&file, 1).is_err());
        assert!(read_to_string(dir.path(), 10).is_err());
        #[cfg(target_os = "linux")]
        assert!(read_to_string(Path::new("/dev/zero"), 10).is_err());
    }
}
