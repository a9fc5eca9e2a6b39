//! `--mcp-config`: the MCP servers a program brings. Servers of `"type": "sdk"` live in
//! the program and are reached through `mcp_message` control requests; the others are
//! started by loki like the servers of its own `mcp.json`. Claude names their tools
//! `mcp__<server>__<tool>`; loki offers them as `<server>_<tool>`.

use std::sync::{Arc, Weak};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::control::Program;
use crate::config::Env;
use crate::mcp::carried::{Carrier, Carry, CarryError};
use crate::mcp::config::{McpConfig, ServerSpec, Transport};

/// Why `--mcp-config` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum McpConfigError {
    /// Neither JSON nor a readable file.
    #[error("--mcp-config: cannot read `{path}`: {error}")]
    Unreadable {
        /// The path given.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// Not `{"mcpServers": {…}}`.
    #[error("--mcp-config: {0}")]
    Shape(String),
}

/// The `mcpServers` object of `--mcp-config` (JSON text or a file holding it).
pub fn read(value: &str) -> Result<serde_json::Map<String, Value>, McpConfigError> {
    let text = if value.trim_start().starts_with('{') {
        value.to_string()
    } else {
        crate::atomic_file::read_regular_text(std::path::Path::new(value), 1 << 20).map_err(
            |error| McpConfigError::Unreadable {
                path: value.to_string(),
                error,
            },
        )?
    };
    let document: Value =
        serde_json::from_str(&text).map_err(|e| McpConfigError::Shape(e.to_string()))?;
    match document.get("mcpServers") {
        Some(Value::Object(servers)) => Ok(servers.clone()),
        None => Ok(serde_json::Map::new()),
        Some(_) => Err(McpConfigError::Shape(
            "\"mcpServers\" must be an object".into(),
        )),
    }
}

/// The specs of `servers`: the program's own carried through `program`, the others as
/// `mcp.json` would describe them (one that cannot be used is logged and left out).
pub fn specs(
    servers: &serde_json::Map<String, Value>,
    env: &Env,
    program: &Arc<Program>,
) -> Vec<ServerSpec> {
    let carrier = Carrier(Arc::new(ThroughProgram(Arc::downgrade(program))));
    let mut out = Vec::new();
    let mut others = serde_json::Map::new();
    for (name, server) in servers {
        if server["type"] == "sdk" {
            out.push(ServerSpec {
                name: name.clone(),
                transport: Transport::Carried(carrier.clone()),
                protocol_version: None,
                oauth: None,
            });
        } else {
            others.insert(name.clone(), server.clone());
        }
    }
    let text = json!({"mcpServers": others}).to_string();
    match McpConfig::parse(&text, env) {
        Ok(config) => {
            for broken in config.broken {
                tracing::warn!(
                    "claude sdk: MCP server `{}` is not used: {}",
                    broken.name,
                    broken.reason
                );
            }
            out.extend(config.servers.into_values());
        }
        Err(e) => tracing::warn!("claude sdk: --mcp-config: {e}"),
    }
    out
}

/// Carries MCP messages to the program's servers; the program is held weakly, so the
/// output ends when the program's input does.
struct ThroughProgram(Weak<Program>);

impl Carry for ThroughProgram {
    fn carry(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, CarryError>> {
        let program = self.0.upgrade();
        let request = json!({"server_name": server, "message": message});
        Box::pin(async move {
            let program = program.ok_or(CarryError::Gone)?;
            let answer = program
                .peer
                .request("mcp_message", request)
                .await
                .map_err(|e| CarryError::Refused(e.to_string()))?;
            Ok(answer.get("mcp_response").cloned().unwrap_or(Value::Null))
        })
    }
}

/// The name Claude gives loki tool `tool`: `mcp__<server>__<tool>` for a tool of one of
/// `servers`, else the built-in's Claude name (`execute_command` → `Bash`).
pub fn claude_name(servers: &[String], tool: &str) -> String {
    for server in servers {
        if let Some(rest) = tool
            .strip_prefix(server.as_str())
            .and_then(|r| r.strip_prefix('_'))
        {
            return format!("mcp__{server}__{rest}");
        }
    }
    crate::claude_names::claude_name(tool).to_string()
}

/// The loki tools a Claude name covers: `mcp__<server>__<tool>` is `<server>_<tool>`.
pub fn loki_tools(name: &str) -> Vec<String> {
    if let Some((server, tool)) = name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
    {
        return vec![format!("{server}_{tool}")];
    }
    crate::claude_names::loki_tools(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_tools_are_named_both_ways() {
        let servers = vec!["calc".to_string()];
        assert_eq!(claude_name(&servers, "calc_add"), "mcp__calc__add");
        assert_eq!(claude_name(&servers, "execute_command"), "Bash");
        assert_eq!(loki_tools("mcp__calc__add"), ["calc_add"]);
        assert_eq!(loki_tools("Bash"), ["execute_command"]);
    }

    #[test]
    fn the_config_is_json_or_a_file() {
        let servers = read(r#"{"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}"#).unwrap();
        assert!(servers.contains_key("calc"));
        assert!(read("/no/such/file.json").is_err());
        assert!(read(r#"{"mcpServers": []}"#).is_err());
    }
}
