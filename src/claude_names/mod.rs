//! Claude Code's tool names for loki's tools, so settings, hooks, permission rules and
//! programs written for Claude Code name loki's tools as they are used to — and, in
//! [`shapes`], the one table that shows each tool's input and output in Claude Code's
//! schema (`Write` as `{file_path, content}`) and maps edited input back.
//!
//! Two questions, two answers: which loki tools a Claude name *covers* ([`TOOL_NAMES`],
//! for tool lists, permission rules and hook matchers: `Glob` covers `fs_ls` too, and
//! `TodoWrite` every todo tool), and which Claude name a loki tool is *shown* under
//! ([`claude_name`]: only a tool whose input has a Claude shape takes a Claude name,
//! so a program never sees loki's arguments under Claude's name).

pub mod result;
pub mod shapes;

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
    (
        "Task",
        &["task", "agent__spawn", "agent__collect", "agent__check"],
    ),
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

/// The name a program or hook is shown loki tool `tool` under (`execute_command` →
/// `Bash`): its Claude name when [`shapes`] has its input in Claude's schema, else its
/// own (`todo__add`: Claude's `TodoWrite` sends the whole list, loki's tools one step).
pub fn claude_name(tool: &str) -> &str {
    shapes::of(tool).map_or(tool, |shape| shape.claude)
}

/// Every Claude name that covers loki tool `tool` (`fs_ls` → `Glob`, `LS`), for rules
/// and matchers written with any of them.
pub fn claude_names_of(tool: &str) -> Vec<&'static str> {
    TOOL_NAMES
        .iter()
        .filter(|(_, loki)| loki.contains(&tool))
        .map(|(claude, _)| *claude)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_shown_under_one_name_and_covered_by_all() {
        assert_eq!(claude_name("fs_ls"), "LS");
        assert_eq!(claude_name("fs_patch"), "Edit");
        assert_eq!(claude_name("todo__add"), "todo__add");
        assert_eq!(claude_name("agent__collect"), "agent__collect");
        assert_eq!(claude_names_of("fs_ls"), ["Glob", "LS"]);
        assert_eq!(claude_names_of("todo__add"), ["TodoWrite"]);
        // Every shown name is one that covers the tool.
        for shape in shapes::SHAPES {
            assert!(
                claude_names_of(shape.loki).contains(&shape.claude),
                "{}",
                shape.loki
            );
        }
    }
}
