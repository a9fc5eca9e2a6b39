//! The `tools` of a Responses request as chat-completions functions. Function tools pass
//! as they are; a `namespace` tool (a named group of functions, which Codex sends with
//! every request) is flattened to one function per member, named as Codex and OpenAI
//! flatten them (`namespace__name`), and a call of one is answered with the two halves
//! apart again (`name` and `namespace`), which is how the client routes it. Built-in
//! tools that run on OpenAI's side (`web_search`, `file_search`, `computer_use_preview`,
//! `code_interpreter`, `image_generation`, `local_shell`, …) cannot run here: they are
//! dropped, logged, and named in the response's `warnings`, so a client that always
//! offers one still gets its answer.

use std::collections::HashMap;

use serde_json::{Value, json};

/// Joins a namespace and a member's name as Codex does when a boundary cannot keep them
/// apart: underscores around the join trimmed, then `__`.
pub(super) fn flat_name(namespace: &str, name: &str) -> String {
    format!(
        "{}__{}",
        namespace.trim_end_matches('_'),
        name.trim_start_matches('_')
    )
}

/// The flattened names of namespaced functions, to split a call's name again.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Names {
    /// Flat name → (namespace, name).
    namespaced: HashMap<String, (String, String)>,
}

impl Names {
    /// The Responses `name` and `namespace` of the function the model called as `flat`.
    pub(super) fn split<'a>(&'a self, flat: &'a str) -> (&'a str, Option<&'a str>) {
        match self.namespaced.get(flat) {
            Some((namespace, name)) => (name, Some(namespace)),
            None => (flat, None),
        }
    }
}

/// A request's tools as the chat completions endpoint takes them.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Tools {
    /// `{"type":"function","function":{…}}` for every function, namespaced ones flattened.
    pub functions: Vec<Value>,
    /// How to split the flattened names again.
    pub names: Names,
    /// One line per tool dropped, for the response's `warnings`.
    pub warnings: Vec<String>,
}

impl Tools {
    /// Adds one Responses function tool, under `name`.
    fn function(&mut self, name: String, tool: &Value) {
        self.functions.push(json!({"type": "function", "function": {
            "name": name, "description": tool["description"],
            "parameters": tool["parameters"]}}));
    }

    /// Drops a tool loki cannot run, saying so in the log and the warnings.
    fn drop_builtin(&mut self, kind: &str) {
        tracing::info!(tool = kind, "Responses request: built-in tool dropped");
        self.warnings.push(format!(
            "tool `{kind}` dropped: it is one of OpenAI's built-in tools, which loki does not \
             run (give the model loki's own tools through a role or agent)"
        ));
    }
}

/// The chat-completions form of a Responses request's `tools`.
pub(super) fn tools(tools: &[Value]) -> Tools {
    let mut out = Tools::default();
    for tool in tools {
        match tool["type"].as_str().unwrap_or("?") {
            "function" => out.function(tool["name"].as_str().unwrap_or("").to_string(), tool),
            "namespace" => {
                let namespace = tool["name"].as_str().unwrap_or("");
                for member in tool["tools"].as_array().into_iter().flatten() {
                    if member["type"] != "function" {
                        out.drop_builtin(member["type"].as_str().unwrap_or("?"));
                        continue;
                    }
                    let name = member["name"].as_str().unwrap_or("");
                    let flat = flat_name(namespace, name);
                    out.names
                        .namespaced
                        .insert(flat.clone(), (namespace.to_string(), name.to_string()));
                    out.function(flat, member);
                }
            }
            other => out.drop_builtin(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_are_flattened_and_built_ins_dropped_with_a_warning() {
        let got = tools(&[
            json!({"type": "function", "name": "exec_command", "parameters": {}}),
            json!({"type": "namespace", "name": "multi_agent_v1", "tools": [
                {"type": "function", "name": "spawn_agent", "description": "Spawn",
                 "parameters": {"type": "object"}},
                {"type": "web_search"}]}),
            json!({"type": "web_search", "external_web_access": false}),
        ]);
        let names: Vec<&Value> = got
            .functions
            .iter()
            .map(|f| &f["function"]["name"])
            .collect();
        assert_eq!(names, ["exec_command", "multi_agent_v1__spawn_agent"]);
        assert_eq!(got.functions[1]["function"]["description"], "Spawn");
        assert_eq!(
            got.names.split("multi_agent_v1__spawn_agent"),
            ("spawn_agent", Some("multi_agent_v1"))
        );
        assert_eq!(got.names.split("exec_command"), ("exec_command", None));
        assert_eq!(got.warnings.len(), 2, "{:?}", got.warnings);
        assert!(got.warnings[1].contains("`web_search`"));
    }

    #[test]
    fn flat_names_trim_the_underscores_around_the_join() {
        assert_eq!(flat_name("mcp__sample__", "search"), "mcp__sample__search");
        assert_eq!(flat_name("tools", "_x"), "tools__x");
    }
}
