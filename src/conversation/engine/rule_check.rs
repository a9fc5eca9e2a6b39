//! A permission rule that names no tool protects nothing: `execute_comand(rm:*)` would be
//! accepted and never match. At start every rule's tool part is checked against the
//! tools loki can offer — built-ins, Claude's names for them (and Claude Code tools loki
//! does not have, which a copied settings file may name), conversation tools, script
//! tools, agents' tools and MCP servers — and one that matches none is an error naming
//! the nearest real name.

use crate::state::AppState;

/// Claude Code tools loki has no counterpart for: rules naming them are accepted (a
/// settings file copied from Claude Code keeps working) and never match.
const CLAUDE_ONLY: &[&str] = &[
    "NotebookRead",
    "NotebookEdit",
    "BashOutput",
    "KillShell",
    "KillBash",
    "ExitPlanMode",
    "SlashCommand",
    "Skill",
    "AskUserQuestion",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "Agent",
    "TodoRead",
];

/// Rules whose tool part names no tool: the first of the user's own (config.yaml, the
/// command line) as a one-line error with a suggestion, and each one of a Claude Code
/// settings file as a warning — a copied file may name tools loki does not have (an MCP
/// server configured only for Claude Code, a newer tool), and its other rules must still
/// apply. `check_mcp`: MCP server names must be configured (off where the client brings
/// servers later: ACP, the SDK mode, the server).
#[derive(Debug, Default)]
pub struct UnknownRules {
    /// The first of the user's own rules that names nothing.
    pub error: Option<String>,
    /// Each settings file's rule that names nothing, with the file.
    pub warnings: Vec<String>,
}

/// See [`UnknownRules`].
pub fn unknown_rules(state: &AppState, check_mcp: bool) -> UnknownRules {
    let mut found = UnknownRules::default();
    let rules = crate::config::permissions::Rules::new(&state.config.permissions);
    if rules.is_empty() {
        return found;
    }
    let mut known: Vec<String> = crate::tool::builtin::BUILTINS
        .iter()
        .map(|b| b.name.to_string())
        .collect();
    known.extend(
        crate::claude_names::TOOL_NAMES
            .iter()
            .map(|(c, _)| (*c).to_string()),
    );
    known.extend(CLAUDE_ONLY.iter().map(|s| (*s).to_string()));
    known.extend(
        crate::tool::lsp::LspTool::ALL
            .iter()
            .map(|t| t.name().to_string()),
    );
    known.extend(
        crate::tool::memory::MemoryTool::ALL
            .iter()
            .map(|t| t.name().to_string()),
    );
    known.extend(crate::tool::user::ALL.iter().map(|t| t.name().to_string()));
    known.extend(
        crate::tool::agents::ALL
            .iter()
            .map(|t| t.name().to_string()),
    );
    known.extend(crate::tool::todo::ALL.iter().map(|t| t.name().to_string()));
    known.extend([
        crate::tool::skills::NAME.to_string(),
        crate::tool::load::NAME.to_string(),
    ]);
    known.extend(state.script_tools().tools.iter().map(|t| t.name.clone()));
    let servers = state.mcp.configured();
    for server in &servers {
        known.extend([
            format!("mcp__{server}__"),
            format!("mcp__search_{server}"),
            format!("mcp__describe_{server}"),
            format!("mcp__invoke_{server}"),
        ]);
    }
    let mut agent_tools: Option<Vec<String>> = None;
    for rule in rules.all() {
        let names: Vec<&str> = known.iter().map(String::as_str).collect();
        if rule.names_any(&names) || names_mcp(rule.tool_text(), &servers, check_mcp) {
            continue;
        }
        let agents = agent_tools.get_or_insert_with(|| agents_tools(state));
        let names: Vec<&str> = agents.iter().map(String::as_str).collect();
        if rule.names_any(&names) {
            continue;
        }
        let suggestion = nearest(rule.tool_text(), &known)
            .map(|n| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default();
        match state.config.permissions.origins.get(&rule.text) {
            Some(origin) if origin.contains("settings file") => found.warnings.push(format!(
                "{origin}: the permission rule `{}` names no tool loki knows{suggestion}; it never matches (the file's other rules apply)",
                rule.text
            )),
            _ if found.error.is_some() => {}
            origin => {
                let from = origin.map(|o| format!(" (from {o})")).unwrap_or_default();
                found.error = Some(format!(
                    "the permission rule `{}`{from} names no tool loki knows{suggestion}; fix or remove it (.info permissions lists the rules)",
                    rule.text
                ));
            }
        }
    }
    found
}

/// Whether `tool` names an MCP tool: `mcp__<server>__<tool>` or `<server>_<tool>` of a
/// configured server (any server when `check_mcp` is off).
fn names_mcp(tool: &str, servers: &[String], check_mcp: bool) -> bool {
    if let Some(rest) = tool.strip_prefix("mcp__") {
        let server = rest.split("__").next().unwrap_or_default();
        return !check_mcp || servers.iter().any(|s| s == server || server.contains('*'));
    }
    servers.iter().any(|s| {
        tool.strip_prefix(s.as_str())
            .is_some_and(|r| r.starts_with('_'))
    })
}

/// The tools every agent's tools file declares (read only when a rule is not otherwise
/// known).
fn agents_tools(state: &AppState) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(&state.paths.agents_dir) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for entry in entries.flatten() {
        for file in ["tools.sh", "tools.py", "tools.ts"] {
            let path = entry.path().join(file);
            if let Ok(tools) = crate::tool::script::parse_agent_tools(&path) {
                names.extend(tools.into_iter().map(|t| t.name));
            }
        }
    }
    names
}

/// The known name closest to `name` (at most three edits away).
fn nearest<'a>(name: &str, known: &'a [String]) -> Option<&'a str> {
    known
        .iter()
        .filter(|k| !k.ends_with("__"))
        .map(|k| (distance(name, k), k.as_str()))
        .filter(|(d, _)| *d <= 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            previous = here;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_are_suggested() {
        let known: Vec<String> = ["execute_command", "fs_read", "Bash"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        assert_eq!(nearest("execute_comand", &known), Some("execute_command"));
        assert_eq!(nearest("frobnicate", &known), None);
        assert!(names_mcp(
            "mcp__github__create_issue",
            &["github".into()],
            true
        ));
        assert!(!names_mcp("mcp__gihtub__x", &["github".into()], true));
        assert!(names_mcp("mcp__anything__x", &[], false));
        assert!(names_mcp("github_create_issue", &["github".into()], true));
    }
}
