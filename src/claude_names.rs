//! Claude Code's tool names for loki's tools, so settings, hooks, permission rules and
//! programs written for Claude Code name loki's tools as they are used to.

/// Claude Code's tool names and the loki tools they stand for.
pub const TOOL_NAMES: &[(&str, &[&str])] = &[
    ("Read", &["fs_cat", "fs_read"]),
    ("Write", &["fs_write"]),
    ("Edit", &["fs_edit", "fs_patch"]),
    ("MultiEdit", &["fs_edit", "fs_patch"]),
    ("Bash", &["execute_command"]),
    ("Glob", &["fs_glob", "fs_ls"]),
    ("Grep", &["fs_grep"]),
    ("LS", &["fs_ls"]),
    ("WebFetch", &["fetch_url", "web_fetch"]),
    ("WebSearch", &["web_search"]),
    (
        "TodoWrite",
        &["todo__init", "todo__add", "todo__done", "todo__list"],
    ),
    ("Task", &["agent__spawn", "agent__collect", "agent__check"]),
];

/// The loki tools a name in a Claude tool list means (`Bash` → `execute_command`); a
/// loki name stands for itself; `mcp__server__tool` is loki's `server_tool`-style MCP
/// name left as given.
pub fn loki_tools(name: &str) -> Vec<String> {
    TOOL_NAMES
        .iter()
        .find(|(claude, _)| *claude == name)
        .map_or_else(
            || vec![name.to_string()],
            |(_, loki)| loki.iter().map(|t| (*t).to_string()).collect(),
        )
}

/// The Claude name a program knows a loki tool by (`execute_command` → `Bash`).
pub fn claude_name(tool: &str) -> &str {
    TOOL_NAMES
        .iter()
        .find(|(_, loki)| loki.contains(&tool))
        .map_or(tool, |(claude, _)| claude)
}
