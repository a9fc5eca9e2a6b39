//! What `loki --mcp-server` offers, read from the config directory on every request:
//! tools for roles, agents and knowledge bases, and a prompt per role.

use serde_json::{Value, json};

use crate::role::{Role, SystemVars};
use crate::state::AppState;

/// What a tool name stands for.
pub(super) enum Entry {
    /// `role_<name>`.
    Role(String),
    /// `agent_<name>`.
    Agent(String),
    /// `kb_search_<name>`.
    Rag(String),
    /// `macro_<name>`.
    Macro(String),
}

/// Roles the catalogue leaves out: they frame other features (the shell assistant,
/// session titles), not questions.
const INTERNAL_ROLES: &[&str] = &["shell", "explain-shell", "create-title"];

fn roles(state: &AppState) -> Vec<String> {
    crate::role::list(&state.paths.roles_dir)
        .into_iter()
        .filter(|n| !INTERNAL_ROLES.contains(&n.as_str()))
        .collect()
}

/// Role `name` as offered (`None`: no such role, or an internal one).
pub(super) fn role(state: &AppState, name: &str) -> Option<Role> {
    if !roles(state).iter().any(|r| r == name) {
        return None;
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let vars = SystemVars::detect(&state.env, &cwd);
    Role::load(&state.paths.roles_dir, name, &vars).ok()
}

/// The first line of `text`, at most 120 characters.
fn summary(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut out: String = line.trim().chars().take(120).collect();
    if line.trim().chars().count() > 120 {
        out.push('…');
    }
    out
}

/// A tool as `tools/list` describes it.
fn tool(name: String, description: String, input_schema: Value) -> Value {
    json!({"name": name, "description": description, "inputSchema": input_schema})
}

/// Whether clients can offer a tool named `name` to their models: 1 to 64 ASCII letters,
/// digits, `_` and `-` (what Anthropic's and OpenAI's APIs accept; MCP allows a little
/// more). A role or agent whose file name makes another name is left out.
fn usable_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn prompt_schema(what: &str) -> Value {
    json!({
        "type": "object",
        "properties": {"prompt": {"type": "string", "description": what}},
        "required": ["prompt"]
    })
}

/// Every tool: roles, agents, knowledge bases.
pub(super) fn tools(state: &AppState) -> Vec<Value> {
    let mut out = Vec::new();
    let mut left_out = Vec::new();
    for name in roles(state) {
        let about = role(state, &name)
            .map(|r| summary(&r.prompt))
            .unwrap_or_default();
        out.push(tool(
            format!("role_{name}"),
            format!("Ask loki's `{name}` role. {about}"),
            prompt_schema("What to ask"),
        ));
    }
    for name in crate::agent::list(&state.paths.agents_dir) {
        let about = crate::agent::AgentDef::load(&state.paths, &name, &state.env)
            .map(|a| a.config.description)
            .unwrap_or_default();
        out.push(tool(
            format!("agent_{name}"),
            format!("Give loki's `{name}` agent a task. {about}"),
            prompt_schema("The task"),
        ));
    }
    for name in crate::macros::list(&state.paths.macros_dir) {
        let usage = crate::macros::load(&state.paths.macros_dir, &name)
            .map(|m| crate::macros::usage(&name, &m))
            .unwrap_or_default();
        out.push(tool(
            format!("macro_{name}"),
            format!("Run loki's `{name}` macro (its steps in a new conversation; the answers come back). Usage: {usage}"),
            json!({
                "type": "object",
                "properties": {
                    "args": {"type": "array", "items": {"type": "string"}, "description": "The macro's arguments, in order"}
                }
            }),
        ));
    }
    for name in crate::rag::list(&state.paths.rags_dir) {
        out.push(tool(
            format!("kb_search_{name}"),
            format!("Search loki's `{name}` knowledge base: the passages that best match a query, each with its source."),
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for"},
                    "top_k": {"type": "integer", "minimum": 1, "maximum": 50, "description": "How many passages (default 5)"}
                },
                "required": ["query"]
            }),
        ));
    }
    out.retain(|tool| {
        let name = tool["name"].as_str().unwrap_or_default();
        let usable = usable_name(name);
        if !usable {
            left_out.push(name.to_string());
        }
        usable
    });
    if !left_out.is_empty() {
        tracing::warn!(
            "MCP server: left out tools whose names clients cannot use: {}",
            left_out.join(", ")
        );
    }
    out
}

/// What tool `name` stands for, if it is offered.
pub(super) fn find(state: &AppState, name: &str) -> Option<Entry> {
    if !usable_name(name) {
        return None;
    }
    if let Some(role) = name.strip_prefix("role_") {
        return roles(state)
            .contains(&role.to_string())
            .then(|| Entry::Role(role.to_string()));
    }
    if let Some(agent) = name.strip_prefix("agent_") {
        return crate::agent::list(&state.paths.agents_dir)
            .contains(&agent.to_string())
            .then(|| Entry::Agent(agent.to_string()));
    }
    if let Some(name) = name.strip_prefix("macro_") {
        return crate::macros::list(&state.paths.macros_dir)
            .contains(&name.to_string())
            .then(|| Entry::Macro(name.to_string()));
    }
    let rag = name.strip_prefix("kb_search_")?;
    crate::rag::list(&state.paths.rags_dir)
        .contains(&rag.to_string())
        .then(|| Entry::Rag(rag.to_string()))
}

/// A prompt per role: its instructions, then the caller's `input`.
pub(super) fn prompts(state: &AppState) -> Vec<Value> {
    roles(state)
        .into_iter()
        .map(|name| {
            let mut prompt = json!({
                "name": name,
                "arguments": [{
                    "name": "input",
                    "description": "Text to add after the role's instructions",
                    "required": false
                }]
            });
            // Absent rather than null: clients validate the field as an optional string.
            if let Some(role) = role(state, &name) {
                prompt["description"] = Value::String(summary(&role.prompt));
            }
            prompt
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::usable_name;

    #[test]
    fn tool_names_are_what_model_apis_accept() {
        assert!(usable_name("role_poet") && usable_name("kb_search_my-docs"));
        let long = format!("role_{}", "a".repeat(60));
        for name in [
            "role_my role",
            "role_a.b",
            "role_é",
            "agent_x:y",
            "",
            long.as_str(),
        ] {
            assert!(!usable_name(name), "{name}");
        }
    }
}
