//! What every reader of a user's files agrees on: the directories never walked into (VCS
//! data, dependencies, build output) and how a file is told to be binary. `-f`, knowledge
//! bases and the file tools all send text to a model, so they skip the same things.

use std::ffi::OsStr;

/// Directories never descended into when walking a tree.
pub const SKIPPED_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".hg",
    ".svn",
    "__pycache__",
];

/// Whether a directory named `name` is one of [`SKIPPED_DIRS`].
pub fn is_skipped_dir(name: &OsStr) -> bool {
    name.to_str().is_some_and(|n| SKIPPED_DIRS.contains(&n))
}

/// Whether `entry` is a directory below the walk's root that is never descended into;
/// the root itself is walked whatever its name, since the user named it.
pub fn is_skipped_entry(entry: &walkdir::DirEntry) -> bool {
    entry.file_type().is_dir() && entry.depth() > 0 && is_skipped_dir(entry.file_name())
}

/// A NUL byte in the first 8 KiB, or invalid UTF-8 there, marks a file as binary (the
/// heuristic git and ripgrep use).
pub fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        // A multi-byte character cut at the 8 KiB boundary is fine.
        Err(e) => e.error_len().is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_detection() {
        assert!(looks_binary(b"a\0b"));
        assert!(looks_binary(&[0xff, 0xfe, 0x41]));
        assert!(!looks_binary("héllo".as_bytes()));
        let mut cut = vec![b'a'; 8191];
        cut.extend_from_slice("é".as_bytes());
        assert!(!looks_binary(&cut));
    }

    #[test]
    fn only_named_directories_below_the_root_are_skipped() {
        assert!(is_skipped_dir(OsStr::new(".git")));
        assert!(!is_skipped_dir(OsStr::new("src")));
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("target");
        std::fs::create_dir_all(root.join("node_modules")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        let skipped: Vec<String> = walkdir::WalkDir::new(&root)
            .into_iter()
            .flatten()
            .filter(is_skipped_entry)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(skipped, ["node_modules"]);
    }
}
