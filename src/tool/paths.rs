//! Where a tool may touch the filesystem.
//!
//! A path argument is resolved against the working directory, normalised (`.` and `..`
//! removed without trusting the filesystem), and then every symlink in its existing part
//! is resolved. The result is inside the working tree only if that fully resolved path is
//! — so neither `../../etc/passwd` nor a symlink pointing out of the tree slips through.

use std::path::{Component, Path, PathBuf};

/// A path argument after resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The absolute, symlink-resolved path to operate on.
    pub path: PathBuf,
    /// Whether it lies inside the working directory.
    pub inside: bool,
}

/// Resolves `arg` (relative to `cwd`, `~/` expanded) and decides whether it is inside
/// `cwd`.
pub fn resolve(cwd: &Path, arg: &str) -> Resolved {
    let path = resolve_symlinks(&absolute(cwd, arg));
    Resolved {
        inside: path.starts_with(root(cwd)),
        path,
    }
}

/// Like [`resolve`], except that a symlink as the last component is not followed: the
/// entry itself is what a delete removes.
pub fn resolve_entry(cwd: &Path, arg: &str) -> Resolved {
    let joined = absolute(cwd, arg);
    let path = match (joined.parent(), joined.file_name()) {
        (Some(parent), Some(name)) => resolve_symlinks(parent).join(name),
        _ => joined,
    };
    Resolved {
        inside: path.starts_with(root(cwd)),
        path,
    }
}

/// Whether removing `arg` would remove the working tree: it names the working directory
/// or one of its ancestors (`""`, `.`, `sub/..`, `..`, `/`, the absolute path, …).
pub fn contains_tree(cwd: &Path, arg: &str) -> bool {
    let lexical = absolute(cwd, arg);
    let entry = resolve_entry(cwd, arg).path;
    let root = root(cwd);
    normalise(cwd).starts_with(&lexical) || root.starts_with(&entry) || root.starts_with(&lexical)
}

/// Whether deleting `arg` (relative to `cwd`) would remove `protected` or a directory
/// containing it; both are compared as written and with symlinks resolved.
pub fn contains_path(cwd: &Path, arg: &str, protected: &Path) -> bool {
    let lexical = absolute(cwd, arg);
    let entry = resolve_entry(cwd, arg).path;
    let written = normalise(protected);
    let real = resolve_symlinks(&written);
    written.starts_with(&lexical) || real.starts_with(&entry) || real.starts_with(&lexical)
}

/// The working directory as the root of the tree: normalised, symlinks resolved.
pub fn root(cwd: &Path) -> PathBuf {
    resolve_symlinks(&normalise(cwd))
}

/// `arg` made absolute against `cwd` (`~/` expanded), `.` and `..` removed lexically.
fn absolute(cwd: &Path, arg: &str) -> PathBuf {
    let expanded = match (arg.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if arg == "~" => dirs::home_dir().unwrap_or_else(|| PathBuf::from(arg)),
        _ => PathBuf::from(if arg.is_empty() { "." } else { arg }),
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    normalise(&joined)
}

/// Removes `.` and `..` lexically (`..` at the root stays at the root).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Canonicalises the longest existing prefix and appends the rest unchanged.
fn resolve_symlinks(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// How a path is shown to the user and the model: relative to `cwd` when inside it.
pub fn display(cwd: &Path, path: &Path) -> String {
    let root = resolve_symlinks(cwd);
    match path.strip_prefix(&root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_detected() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("work");
        std::fs::create_dir_all(cwd.join("src")).unwrap();
        assert!(resolve(&cwd, "src/main.rs").inside);
        assert!(resolve(&cwd, "new/dir/file.txt").inside);
        assert!(resolve(&cwd, "src/../src/./x").inside);
        assert!(resolve(&cwd, ".").inside);
        assert!(!resolve(&cwd, "../outside.txt").inside);
        assert!(!resolve(&cwd, "src/../../../etc/passwd").inside);
        assert!(!resolve(&cwd, "/etc/passwd").inside);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path(), cwd.join("link")).unwrap();
            let through = resolve(&cwd, "link/secret");
            assert!(!through.inside, "{through:?}");
            assert_eq!(
                through.path,
                dir.path().canonicalize().unwrap().join("secret")
            );
        }
        let inside = resolve(&cwd, "src");
        assert_eq!(display(&cwd, &inside.path), "src");
        for arg in ["", ".", "src/..", "..", "/", "./src/../."] {
            assert!(contains_tree(&cwd, arg), "{arg}");
        }
        assert!(contains_tree(&cwd, &cwd.display().to_string()));
        assert!(!contains_tree(&cwd, "src"));
        assert!(!contains_tree(&cwd, "../other"));
        #[cfg(unix)]
        {
            // Removing a link to the tree removes the link, not the tree.
            std::os::unix::fs::symlink(&cwd, cwd.join("self")).unwrap();
            assert!(!contains_tree(&cwd, "self"));
            assert!(resolve_entry(&cwd, "self").inside);
        }
    }
}
