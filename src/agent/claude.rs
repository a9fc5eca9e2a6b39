//! Claude Code's project agents, `.claude/agents/<name>.md`, as loki agents (for a
//! trusted project): front matter `name`, `description`, `tools` (Claude's names or
//! loki's, comma-separated; none: the built-in tools that read) and `model` (a loki
//! model id; Claude's `sonnet`, `opus`, `haiku` and `inherit` mean the conversation's
//! model); the body is the instructions.

use std::path::Path;

use super::config::AgentConfig;

/// Largest agent file read.
const MAX_AGENT: u64 = 256 * 1024;

/// The tools an agent without a `tools` line gets: the built-ins that read.
const READING: &[&str] = &["fs_cat", "fs_ls", "fs_read", "fs_glob", "fs_grep"];

/// The agents of `dir` (`.claude/agents`), by name.
pub(super) fn names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            (path.extension().is_some_and(|x| x == "md"))
                .then(|| path.file_stem()?.to_str().map(str::to_string))
                .flatten()
        })
        .filter(|n| super::valid_name(n))
        .collect()
}

/// Agent `name` of `dir`, when there is one that can be read.
pub(super) fn load(dir: &Path, name: &str) -> Option<AgentConfig> {
    let file = dir.join(format!("{name}.md"));
    // Inside the project only, a regular file of a bounded size.
    let root = std::fs::canonicalize(dir.parent()?.parent()?).ok()?;
    if !std::fs::canonicalize(&file).ok()?.starts_with(&root) {
        tracing::warn!(
            "skipped {}: it resolves outside the project",
            file.display()
        );
        return None;
    }
    let text = crate::atomic_file::read_regular_text(&file, MAX_AGENT).ok()?;
    let (fields, body) = crate::skill::front_matter(&text);
    let field = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.trim().to_string())
    };
    let tools: Vec<String> = match field("tools").filter(|t| !t.is_empty()) {
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .flat_map(crate::claude_names::loki_tools)
            .collect(),
        None => READING.iter().map(|t| (*t).to_string()).collect(),
    };
    let model = field("model").filter(|m| m.contains(':'));
    Some(AgentConfig {
        name: field("name").unwrap_or_else(|| name.to_string()),
        description: field("description").unwrap_or_default(),
        model,
        instructions: body.trim().to_string(),
        global_tools: tools,
        ..AgentConfig::default()
    })
}
