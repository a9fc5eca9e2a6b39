//! How MCP tools are offered to the model. A server with few tools has each tool exposed
//! directly as `<server>_<tool>`; a server with many (more than [`DIRECT_LIMIT`]) is
//! exposed through three meta functions that keep the tool list short:
//! `mcp__search_<server> {query, top_k}` (BM25 over tool names and descriptions),
//! `mcp__describe_<server> {tool}` (its input schema) and
//! `mcp__invoke_<server> {tool, arguments}`. `mcp_tool_exposure` forces either way.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{ToolEnv, ToolError};
use crate::mcp::server::McpServer;

/// Servers with at most this many tools are exposed directly under `auto`.
pub const DIRECT_LIMIT: usize = 10;

/// What calling an exposed function does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Calls this MCP tool.
    Direct {
        /// The tool's name on the server.
        tool: String,
        /// Annotated `readOnlyHint`.
        read_only: bool,
    },
    /// Searches the server's tools.
    Search,
    /// Describes one tool.
    Describe,
    /// Calls a tool by name.
    Invoke,
}

/// One function offered to the model on behalf of an MCP server.
#[derive(Debug, Clone)]
pub struct McpTool {
    /// Function name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON schema of the arguments.
    pub parameters: Value,
    /// The server.
    pub server: Arc<McpServer>,
    /// What it does.
    pub action: Action,
}

impl McpTool {
    /// Whether a call with `args` can change anything (and so needs approval).
    pub fn writes(&self, args: &Value) -> bool {
        match &self.action {
            Action::Direct { read_only, .. } => !read_only,
            Action::Search | Action::Describe => false,
            Action::Invoke => {
                let target = args["tool"].as_str().unwrap_or_default();
                !self.server.cached_tools().iter().any(|t| {
                    t.name == target
                        && t.annotations
                            .as_ref()
                            .and_then(|a| a.read_only_hint)
                            .unwrap_or(false)
                })
            }
        }
    }
}

/// A function name: letters, digits, `_` and `-`, at most 64 characters.
pub(crate) fn function_name(raw: &str) -> String {
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

/// The functions for `servers`, per `mode` (`auto`, `direct` or `meta`).
pub fn functions(servers: &[Arc<McpServer>], mode: &str) -> Vec<McpTool> {
    let mut out = Vec::new();
    for server in servers {
        let name = &server.spec.name;
        let tools = server.cached_tools();
        let direct = match mode {
            "direct" => true,
            "meta" => false,
            _ => tools.len() <= DIRECT_LIMIT,
        };
        if direct {
            for tool in tools {
                out.push(McpTool {
                    name: function_name(&format!("{name}_{}", tool.name)),
                    description: tool
                        .description
                        .as_deref()
                        .unwrap_or("(no description)")
                        .to_string(),
                    parameters: Value::Object((*tool.input_schema).clone()),
                    server: Arc::clone(server),
                    action: Action::Direct {
                        tool: tool.name.to_string(),
                        read_only: tool
                            .annotations
                            .as_ref()
                            .and_then(|a| a.read_only_hint)
                            .unwrap_or(false),
                    },
                });
            }
            continue;
        }
        let meta = |kind: &str, description: String, parameters: Value, action: Action| McpTool {
            name: function_name(&format!("mcp__{kind}_{name}")),
            description,
            parameters,
            server: Arc::clone(server),
            action,
        };
        out.push(meta(
            "search",
            format!("Search the tools of the `{name}` MCP server by what they do; returns names and descriptions. Use describe, then invoke."),
            json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "What you want to do"},
                "top_k": {"type": "integer", "description": "How many results (1-20, default 8)"}
            }, "required": ["query"]}),
            Action::Search,
        ));
        out.push(meta(
            "describe",
            format!("Show the arguments a tool of the `{name}` MCP server takes."),
            json!({"type": "object", "properties": {"tool": {"type": "string"}}, "required": ["tool"]}),
            Action::Describe,
        ));
        out.push(meta(
            "invoke",
            format!("Call a tool of the `{name}` MCP server with its arguments."),
            json!({"type": "object", "properties": {
                "tool": {"type": "string"},
                "arguments": {"type": "object"}
            }, "required": ["tool"]}),
            Action::Invoke,
        ));
    }
    out
}

/// A failed call as the tool round sees it: a cancelled call stops the round, anything
/// else (a tool that reports "cancelled" included) is a failure the model reads.
fn tool_error(e: crate::mcp::McpError) -> ToolError {
    match e {
        crate::mcp::McpError::Cancelled => ToolError::Cancelled,
        other => ToolError::Failed(format!("MCP tool invocation failed: {other}")),
    }
}

/// Runs an exposed function.
pub async fn run(
    tool: &McpTool,
    args: &Value,
    env: &ToolEnv<'_>,
    call_id: &str,
) -> Result<String, ToolError> {
    let server = &tool.server;
    let progress = env.progress.map(|tx| (tx, call_id));
    let side = super::mcp_client::ConversationSide {
        asker: env.asker,
        conversation: env.conversation,
        cwd: env.cwd,
        sampler: env.mcp_sampler,
    };
    let side = &side;
    let call = |name: String, arguments: Map<String, Value>| async move {
        let (text, images) = server
            .call(&name, arguments, env.timeout, env.cancel, progress, side)
            .await
            .map_err(tool_error)?;
        if let Some(sink) = env.images
            && let Ok(mut sink) = sink.lock()
        {
            sink.extend(images);
        }
        Ok(text)
    };
    match &tool.action {
        Action::Direct { tool: name, .. } => {
            let arguments = args.as_object().cloned().unwrap_or_default();
            call(name.clone(), arguments).await
        }
        Action::Invoke => {
            let name = args["tool"]
                .as_str()
                .ok_or_else(|| ToolError::BadArguments("`tool` is required".into()))?;
            let arguments = args["arguments"].as_object().cloned().unwrap_or_default();
            call(name.to_string(), arguments).await
        }
        Action::Search => {
            let query = args["query"].as_str().unwrap_or_default();
            let top_k = args["top_k"]
                .as_u64()
                .map_or(8, |k| k.clamp(1, 20) as usize);
            let tools = server.tools().await;
            let docs: Vec<String> = tools
                .iter()
                .map(|t| format!("{} {}", t.name, t.description.as_deref().unwrap_or("")))
                .collect();
            let hits: Vec<Value> = bm25(&docs, query)
                .into_iter()
                .take(top_k)
                .map(|i| {
                    json!({
                        "name": tools[i].name,
                        "server": server.spec.name,
                        "description": tools[i].description,
                    })
                })
                .collect();
            Ok(Value::Array(hits).to_string())
        }
        Action::Describe => {
            let name = args["tool"]
                .as_str()
                .ok_or_else(|| ToolError::BadArguments("`tool` is required".into()))?;
            let tools = server.tools().await;
            let found = tools.iter().find(|t| t.name == name).ok_or_else(|| {
                ToolError::Failed(format!(
                    "MCP describe failed: no tool `{name}` on `{}`",
                    server.spec.name
                ))
            })?;
            Ok(json!({
                "type": "object",
                "properties": {
                    "tool": {"type": "string"},
                    "arguments": Value::Object((*found.input_schema).clone()),
                },
                "description": found.description,
            })
            .to_string())
        }
    }
}

/// Indexes of `docs` ranked by BM25 against `query`, best first; documents with no
/// matching term are left out. The index is built once per search (linear in the tool
/// list; 20,000 tools take milliseconds), with the knowledge bases' BM25.
pub fn bm25(docs: &[String], query: &str) -> Vec<usize> {
    let index = loki_rag::bm25::Bm25::build(&mut docs.iter().map(String::as_str));
    index
        .search(query, docs.len())
        .into_iter()
        .map(|(i, _)| i as usize)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_cancelled_call_is_a_cancellation() {
        use crate::mcp::McpError;
        assert!(matches!(
            tool_error(McpError::Cancelled),
            ToolError::Cancelled
        ));
        let reported = tool_error(McpError::ToolFailed("cancelled".into()));
        assert!(
            matches!(&reported, ToolError::Failed(text) if text.ends_with(": cancelled")),
            "{reported:?}"
        );
        let stopped = tool_error(McpError::Stopped {
            server: "alpha".into(),
            message: "pipe closed".into(),
        });
        assert!(
            matches!(&stopped, ToolError::Failed(text) if text.contains("restarted on next use")),
            "{stopped:?}"
        );
    }

    #[test]
    fn bm25_ranks_the_matching_tool_first() {
        let docs = vec![
            "list_issues List issues in a GitHub repository".to_string(),
            "create_pull_request Open a pull request".to_string(),
            "get_file Read a file from a repository".to_string(),
        ];
        assert_eq!(bm25(&docs, "open pull request")[0], 1);
        assert_eq!(bm25(&docs, "issues")[..], [0]);
        assert!(bm25(&docs, "weather").is_empty());
        // Issue 26 item F: linear, not quadratic, in the number of tools.
        let many: Vec<String> = (0..20_000)
            .map(|i| format!("tool_{i} does thing number {i} for project {}", i % 97))
            .collect();
        let started = std::time::Instant::now();
        let hits = bm25(&many, "thing number 12345");
        assert_eq!(hits[0], 12345);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(function_name("my server_do.thing"), "my_server_do_thing");
    }
}
