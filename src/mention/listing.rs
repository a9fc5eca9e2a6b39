//! `@dir/`: the names below a directory (not their contents, as in Claude Code), with
//! what `.gitignore` files and hidden names leave out left out, bounded.

use std::path::Path;

/// Most entries listed; beyond them the listing says how many were left out.
const MAX_ENTRIES: usize = 500;

/// The entries below `dir` (walked recursively, sorted, directories ending in `/`), each
/// shown as `shown` joined with its path relative to `dir`.
pub fn listing(dir: &Path, shown: &str) -> String {
    let walk = ignore::WalkBuilder::new(dir)
        .require_git(false)
        .sort_by_file_name(std::ffi::OsStr::cmp)
        .build();
    let prefix = if shown.ends_with('/') {
        shown.to_string()
    } else {
        format!("{shown}/")
    };
    let mut lines = Vec::new();
    let mut left_out = 0usize;
    for entry in walk.flatten() {
        let Ok(rel) = entry.path().strip_prefix(dir) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        if lines.len() == MAX_ENTRIES {
            left_out += 1;
            continue;
        }
        let slash = if entry.file_type().is_some_and(|t| t.is_dir()) {
            "/"
        } else {
            ""
        };
        lines.push(format!("{prefix}{}{slash}", rel.display()));
    }
    if lines.is_empty() {
        lines.push("(empty)".to_string());
    }
    if left_out > 0 {
        lines.push(format!("… and {left_out} more"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_names_leaving_out_ignored_and_hidden_ones() {
        let dir = crate::test_support::tree(&[
            (".gitignore", "target/\n*.log\n"),
            ("src/a.rs", ""),
            ("src/nested/b.md", ""),
            ("debug.log", ""),
            ("target/out", ""),
        ]);
        assert_eq!(
            listing(dir.path(), "proj/"),
            "proj/src/\nproj/src/a.rs\nproj/src/nested/\nproj/src/nested/b.md"
        );
    }
}
