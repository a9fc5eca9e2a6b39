//! `load_tools`: large tool sets offered by group name and loaded on demand.
//!
//! When a conversation enables more tools than `load_tools_after`, only the core ones are
//! declared to the model: the built-in tools that read, the user's script tools (an
//! agent's own included) and loki's conversation tools (todo, sub-agents, questions,
//! skills, memory). The rest are sorted into groups — `files` (the writing tools),
//! `shell`, `web`, `lsp` and one per MCP server (`mcp_<name>`) — which the `load_tools`
//! tool lists by name, with their tools' names. A group the model loads is declared from the next
//! model call on, for the rest of the conversation (a session remembers it).
//!
//! Every enabled tool can still be called: loading only changes what is declared, never
//! what is allowed, and approval works as always.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{Effect, Tool, ToolError};
use crate::client::ToolSpec;

/// The function name.
pub const NAME: &str = "load_tools";

/// A group of tools declared on demand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Its name.
    pub name: String,
    /// Its tools' names.
    pub tools: Vec<String>,
}

/// The `load_tools` tool of one conversation.
#[derive(Debug, Clone)]
pub struct LoadTools {
    groups: std::sync::Arc<Vec<Group>>,
}

impl LoadTools {
    /// The groups.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The declaration sent to the model.
    pub fn spec(&self) -> ToolSpec {
        let listed: Vec<String> = self
            .groups
            .iter()
            .map(|g| format!("{} ({})", g.name, g.tools.join(", ")))
            .collect();
        ToolSpec {
            name: NAME.into(),
            description: format!(
                "Load tool groups; their tools can be called from your next step. Groups: {}.",
                listed.join("; ")
            ),
            parameters: json!({"type": "object", "properties": {
                "groups": {"type": "array", "items": {"type": "string"}}
            }, "required": ["groups"]}),
        }
    }

    /// The groups a call names, checked.
    pub fn requested(&self, args: &Value) -> Result<Vec<String>, ToolError> {
        let names = super::name_list(args, "groups", "group names")?;
        let mut found = Vec::new();
        for name in names {
            if !self.groups.iter().any(|g| g.name == name) {
                let known: Vec<&str> = self.groups.iter().map(|g| g.name.as_str()).collect();
                return Err(ToolError::BadArguments(format!(
                    "no tool group `{name}`; groups: {}",
                    known.join(", ")
                )));
            }
            found.push(name.to_string());
        }
        Ok(found)
    }

    /// Runs the call: names the tools now available.
    pub fn run(&self, args: &Value) -> Result<String, ToolError> {
        let requested = self.requested(args)?;
        let tools: Vec<String> = self
            .groups
            .iter()
            .filter(|g| requested.contains(&g.name))
            .flat_map(|g| g.tools.iter().cloned())
            .collect();
        Ok(format!("loaded: {}", tools.join(", ")))
    }
}

/// Whether `tool` is always declared.
fn is_core(tool: &Tool) -> bool {
    match tool {
        Tool::Builtin(b) => b.effect == Effect::Read,
        Tool::Script(_) => true,
        Tool::Mcp(_) | Tool::Lsp(_) | Tool::Load(_) => false,
        Tool::User(_) | Tool::Agent(_) | Tool::Todo(_) | Tool::Skills(_) | Tool::Memory(_) => true,
    }
}

/// The group of a tool that is not core.
fn group_of(tool: &Tool) -> String {
    match tool {
        Tool::Builtin(b) => match b.effect {
            Effect::Write => "files".into(),
            Effect::Exec => "shell".into(),
            Effect::Network | Effect::Read => "web".into(),
        },
        Tool::Mcp(m) => format!("mcp_{}", m.server.spec.name),
        Tool::Lsp(_) => "lsp".into(),
        _ => "other".into(),
    }
}

/// What to declare of `tools`: everything when there are at most `after` of them (or
/// `after` is 0); otherwise the core tools, the loaded groups' tools and `load_tools`
/// listing the groups still to load.
pub fn offered(tools: &[Tool], after: usize, loaded: &BTreeSet<String>) -> Vec<Tool> {
    if after == 0 || tools.len() <= after {
        return tools.to_vec();
    }
    let mut declared = Vec::new();
    let mut waiting: Vec<Group> = Vec::new();
    for tool in tools {
        if is_core(tool) {
            declared.push(tool.clone());
            continue;
        }
        let group = group_of(tool);
        if loaded.contains(&group) {
            declared.push(tool.clone());
            continue;
        }
        match waiting.iter_mut().find(|g| g.name == group) {
            Some(g) => g.tools.push(tool.name().to_string()),
            None => waiting.push(Group {
                name: group,
                tools: vec![tool.name().to_string()],
            }),
        }
    }
    if !waiting.is_empty() {
        declared.push(Tool::Load(LoadTools {
            groups: std::sync::Arc::new(waiting),
        }));
    }
    declared
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtins() -> Vec<Tool> {
        super::super::builtin::BUILTINS
            .iter()
            .map(Tool::Builtin)
            .collect()
    }

    #[test]
    fn few_tools_are_all_declared() {
        let tools = builtins();
        let none = BTreeSet::new();
        assert_eq!(offered(&tools, 0, &none).len(), tools.len());
        assert_eq!(offered(&tools, 50, &none).len(), tools.len());
    }

    #[test]
    fn many_tools_are_grouped_and_loaded_groups_declared() {
        let tools = builtins();
        let none = BTreeSet::new();
        let offered_now = offered(&tools, 4, &none);
        let names: Vec<&str> = offered_now.iter().map(Tool::name).collect();
        assert!(
            names.contains(&"fs_cat") && names.contains(&NAME),
            "{names:?}"
        );
        assert!(!names.contains(&"fs_write"), "{names:?}");
        let Some(Tool::Load(load)) = offered_now.last() else {
            panic!("no load_tools");
        };
        let groups: Vec<&str> = load.groups().iter().map(|g| g.name.as_str()).collect();
        assert_eq!(groups, ["files", "shell", "web"]);
        assert!(
            load.spec()
                .description
                .contains("files (fs_write, fs_patch, fs_edit, fs_mkdir, fs_rm)")
        );
        assert!(load.requested(&json!({"groups": ["nope"]})).is_err());

        let loaded: BTreeSet<String> = ["files".to_string()].into();
        let names: Vec<String> = offered(&tools, 4, &loaded)
            .iter()
            .map(|t| t.name().to_string())
            .collect();
        assert!(names.contains(&"fs_write".to_string()), "{names:?}");
        assert!(!names.contains(&"execute_command".to_string()), "{names:?}");
    }
}
