//! `.init` and `loki --init`: an `AGENTS.md` for the repository, written by the model
//! from a compact view of it.
//!
//! The view ([`survey`]) is what a newcomer reads first — the top-level entries, the
//! head of the README, the build files and the test commands they imply — bounded so
//! that a large repository costs the same few thousand tokens as a small one. The model
//! gets it in one prompt ([`prompt`]) instead of exploring with tools, so the command
//! works with any model, tools or not, and in one request. What it answers is written
//! whole or not at all ([`write`]); asking before an existing file is replaced is the
//! front end's part.

use std::path::{Path, PathBuf};

/// The file written, in the working directory.
pub const FILE_NAME: &str = "AGENTS.md";

/// Most top-level entries listed.
const MAX_ENTRIES: usize = 80;
/// Most lines of the README shown.
const README_LINES: usize = 60;
/// Most bytes of any one file shown.
const MAX_FILE_BYTES: usize = 4000;

/// Build and project files shown whole (cut at [`MAX_FILE_BYTES`]) when present.
const BUILD_FILES: &[&str] = &[
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "go.mod",
    "Makefile",
    "justfile",
    "CMakeLists.txt",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "Gemfile",
    "composer.json",
    "mix.exs",
    "deno.json",
];

/// Instructions already written for agents, shown so that the new file keeps them.
const EXISTING_NOTES: &[&str] = &[FILE_NAME, "CLAUDE.md", ".cursorrules", "CONTRIBUTING.md"];

/// Where `AGENTS.md` goes for a conversation in `cwd`.
pub fn path_in(cwd: &Path) -> PathBuf {
    cwd.join(FILE_NAME)
}

/// The compact view of the repository at `root`.
pub fn survey(root: &Path) -> String {
    let mut out = format!("Repository: {}\n\n", root.display());
    out.push_str("## Top-level entries\n");
    out.push_str(&top_level(root));
    if let Some((name, head)) = readme(root) {
        out.push_str(&format!(
            "\n## {name} (first {README_LINES} lines)\n{head}\n"
        ));
    }
    for name in BUILD_FILES {
        if let Some(text) = read_capped(&root.join(name)) {
            out.push_str(&format!("\n## {name}\n{text}\n"));
        }
    }
    let commands = test_commands(root);
    if !commands.is_empty() {
        out.push_str("\n## Test commands found\n");
        for command in commands {
            out.push_str(&format!("- `{command}`\n"));
        }
    }
    for name in EXISTING_NOTES {
        if let Some(text) = read_capped(&root.join(name)) {
            out.push_str(&format!("\n## Existing {name}\n{text}\n"));
        }
    }
    out
}

/// The request that asks the model for `AGENTS.md`, given the [`survey`].
pub fn prompt(survey: &str) -> String {
    format!(
        "Write an {FILE_NAME} file for this repository: the instructions a coding agent (or a \
         new contributor) reads before changing it. Cover, briefly and only from what is shown \
         below: how to build it and run its tests (exact commands), how the code is laid out \
         (the main directories and what each holds), and the conventions to follow (style, \
         tooling, checks to run before finishing). Keep what an existing {FILE_NAME} or \
         CLAUDE.md says that is still true. Do not invent commands or files. Answer with the \
         Markdown of the file only: no preamble, no code fence around it.\n\n{survey}"
    )
}

/// The file's text from the model's answer: one enclosing code fence (```markdown … ```)
/// is taken off, and the text ends with one newline.
pub fn from_answer(answer: &str) -> String {
    let trimmed = answer.trim();
    let body = trimmed
        .strip_prefix("```")
        .and_then(|rest| rest.split_once('\n'))
        .and_then(|(_, body)| body.trim_end().strip_suffix("```"))
        .unwrap_or(trimmed);
    format!("{}\n", body.trim())
}

/// Writes `text` to `path` atomically: a reader sees the old file or the new one,
/// never half of either.
pub fn write(path: &Path, text: &str) -> std::io::Result<()> {
    crate::atomic_file::write_atomic(path, text.as_bytes(), false)
}

/// The top-level entries, directories first and marked with `/`; hidden ones and
/// dependency or build directories are left out.
fn top_level(root: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(root) else {
        return "(cannot be listed)\n".into();
    };
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let shown = name.to_string_lossy().into_owned();
        if shown.starts_with('.') || crate::files::is_skipped_dir(&name) {
            continue;
        }
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            dirs.push(format!("{shown}/"));
        } else {
            files.push(shown);
        }
    }
    dirs.sort();
    files.sort();
    let all: Vec<String> = dirs.into_iter().chain(files).collect();
    let mut out: String = all
        .iter()
        .take(MAX_ENTRIES)
        .map(|e| format!("{e}\n"))
        .collect();
    if all.len() > MAX_ENTRIES {
        out.push_str(&format!("… and {} more\n", all.len() - MAX_ENTRIES));
    }
    out
}

/// The README's name and its first lines.
fn readme(root: &Path) -> Option<(String, String)> {
    [
        "README.md",
        "README",
        "README.rst",
        "README.txt",
        "readme.md",
    ]
    .iter()
    .find_map(|name| {
        let text = read_capped(&root.join(name))?;
        let head: Vec<&str> = text.lines().take(README_LINES).collect();
        Some((name.to_string(), head.join("\n")))
    })
}

/// A text file's contents, cut at [`MAX_FILE_BYTES`]; `None` when it is missing, not a
/// regular file or binary.
fn read_capped(path: &Path) -> Option<String> {
    let bytes = crate::atomic_file::read_regular(path, 1024 * 1024).ok()?;
    if crate::files::looks_binary(&bytes) {
        return None;
    }
    let text = String::from_utf8_lossy(&bytes);
    if text.len() <= MAX_FILE_BYTES {
        return Some(text.into_owned());
    }
    let mut end = MAX_FILE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(format!("{}\n… (cut)", &text[..end]))
}

/// The test commands the build files imply.
fn test_commands(root: &Path) -> Vec<String> {
    let has = |name: &str| root.join(name).is_file();
    let text = |name: &str| read_capped(&root.join(name)).unwrap_or_default();
    let mut found = Vec::new();
    if has("Cargo.toml") {
        found.push("cargo test".to_string());
    }
    if let Ok(package) = serde_json::from_str::<serde_json::Value>(&text("package.json"))
        && package["scripts"]["test"].is_string()
    {
        found.push("npm test".to_string());
    }
    if has("pytest.ini")
        || text("pyproject.toml").contains("[tool.pytest")
        || root.join("tests").is_dir() && (has("pyproject.toml") || has("setup.py"))
    {
        found.push("pytest".to_string());
    }
    if has("go.mod") {
        found.push("go test ./...".to_string());
    }
    if text("Makefile").lines().any(|l| l.starts_with("test:")) {
        found.push("make test".to_string());
    }
    if text("justfile").lines().any(|l| l.starts_with("test")) {
        found.push("just test".to_string());
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_survey_shows_entries_readme_build_files_and_test_commands() {
        let dir = crate::test_support::tree(&[
            ("src/", ""),
            ("node_modules/x/", ""),
            ("README.md", "# Demo\nA demo project.\n"),
            ("Cargo.toml", "[package]\nname = \"demo\"\n"),
            ("package.json", r#"{"scripts": {"test": "vitest"}}"#),
            ("Makefile", "test:\n\tcargo test\n"),
        ]);
        let text = survey(dir.path());
        assert!(text.contains("src/\n"), "{text}");
        assert!(!text.contains("node_modules"), "{text}");
        assert!(text.contains("A demo project."), "{text}");
        assert!(text.contains("name = \"demo\""), "{text}");
        for command in ["cargo test", "npm test", "make test"] {
            assert!(text.contains(&format!("- `{command}`")), "{text}");
        }
    }

    #[test]
    fn one_enclosing_fence_is_taken_off() {
        assert_eq!(from_answer("```markdown\n# A\n\nb\n```\n"), "# A\n\nb\n");
        assert_eq!(from_answer("# A\n```sh\nx\n```"), "# A\n```sh\nx\n```\n");
    }
}
