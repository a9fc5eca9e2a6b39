//! Tab after `@` in the REPL: paths below the working directory that hold what was typed
//! as a subsequence (`@nts` finds `notes.txt`), names that start with it first, and
//! what `.gitignore` leaves out last (it is still offered: a build log is a fair thing
//! to ask about).

use std::collections::HashSet;
use std::path::Path;

/// Most entries looked at per walk (a Tab in a huge tree stays quick).
const MAX_WALK: usize = 20_000;
/// Most suggestions offered.
const MAX_SUGGESTIONS: usize = 50;
/// How deep the walk goes.
const MAX_DEPTH: usize = 12;

/// One path offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The mention to put in the line: `@src/`, `@notes.txt`, `@"my notes.txt"`.
    pub value: String,
    /// A directory (its mention ends in `/`, and completing may go on).
    pub is_dir: bool,
    /// Left out by a `.gitignore`.
    pub ignored: bool,
}

/// The mentions completing `typed` (what follows the `@`, an opening quote included)
/// below `cwd`, best first.
pub fn completions(cwd: &Path, typed: &str) -> Vec<Completion> {
    let typed = typed.trim_start_matches(['"', '\'']);
    let hidden = typed.starts_with('.') || typed.contains("/.");
    let kept = walk(cwd, true, hidden);
    let mut ranked: Vec<(Rank, String, bool, bool)> = walk(cwd, false, hidden)
        .into_iter()
        .filter(|(path, _)| subsequence(typed, path))
        .map(|(path, is_dir)| {
            let ignored = !kept.contains(&(path.clone(), is_dir));
            (rank(typed, &path, ignored), path, is_dir, ignored)
        })
        .collect();
    ranked.sort();
    ranked
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, path, is_dir, ignored)| Completion {
            value: mention_of(&path),
            is_dir,
            ignored,
        })
        .collect()
}

/// How good a match is, best lowest: not ignored, then the name starting with what was
/// typed, then the path, then the name holding it; shallower and shorter first.
type Rank = (bool, u8, usize, usize);

fn rank(typed: &str, path: &str, ignored: bool) -> Rank {
    let lower = path.to_lowercase();
    let typed = typed.to_lowercase();
    let name = lower
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let class = if name.starts_with(&typed) {
        0
    } else if lower.starts_with(&typed) {
        1
    } else if subsequence(&typed, name) {
        2
    } else {
        3
    };
    let depth = path.trim_end_matches('/').matches('/').count();
    (ignored, class, depth, path.len())
}

/// Case-insensitive subsequence match: `nts` matches `notes.txt`.
fn subsequence(typed: &str, candidate: &str) -> bool {
    let mut chars = candidate.chars().flat_map(char::to_lowercase);
    typed
        .chars()
        .flat_map(char::to_lowercase)
        .all(|t| chars.any(|c| c == t))
}

/// `@path`, quoted when it holds white space.
fn mention_of(path: &str) -> String {
    if path.contains(char::is_whitespace) {
        let quote = if path.contains('"') { '\'' } else { '"' };
        format!("@{quote}{path}{quote}")
    } else {
        format!("@{path}")
    }
}

/// The paths below `cwd` (relative, directories ending in `/`), with or without what
/// ignore files leave out; hidden names only when `hidden`; never `.git`.
fn walk(cwd: &Path, respect_ignores: bool, hidden: bool) -> HashSet<(String, bool)> {
    ignore::WalkBuilder::new(cwd)
        .standard_filters(respect_ignores)
        .hidden(!hidden)
        .require_git(false)
        .max_depth(Some(MAX_DEPTH))
        .filter_entry(|e| e.file_name() != ".git")
        .build()
        .take(MAX_WALK)
        .flatten()
        .filter_map(|entry| {
            let rel = entry.path().strip_prefix(cwd).ok()?;
            if rel.as_os_str().is_empty() {
                return None;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let mut path = rel.to_string_lossy().into_owned();
            if is_dir {
                path.push('/');
            }
            Some((path, is_dir))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(cwd: &Path, typed: &str) -> Vec<String> {
        completions(cwd, typed)
            .into_iter()
            .map(|c| c.value)
            .collect()
    }

    #[test]
    fn subsequences_match_and_ignored_files_come_last() {
        let dir = crate::test_support::tree(&[
            (".gitignore", "notes.log\n"),
            ("notes.log", ""),
            ("notes.txt", ""),
            ("src/nested_notes.md", ""),
            ("my notes.txt", ""),
        ]);
        let root = dir.path();
        assert_eq!(
            values(root, "no"),
            [
                "@notes.txt",
                "@\"my notes.txt\"",
                "@src/nested_notes.md",
                "@notes.log"
            ]
        );
        assert_eq!(values(root, "nts")[0], "@notes.txt");
        assert_eq!(values(root, "srnest"), ["@src/nested_notes.md"]);
        let src = completions(root, "sr");
        assert_eq!(src[0].value, "@src/");
        assert!(src[0].is_dir);
    }
}
