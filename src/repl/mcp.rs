//! `.mcp`: the prompts and resources of the conversation's MCP servers. A prompt's
//! messages are sent as the next message; a resource is attached with
//! `.file mcp:SERVER:URI` (or `-f` on the command line).

use std::sync::Arc;

use super::Repl;
use crate::dotcmd::McpOp;
use crate::mcp::server::McpServer;
use loki_protocol::op::UserInput;

impl Repl {
    /// Runs `.mcp …`.
    pub(super) async fn mcp(&mut self, op: McpOp) {
        match op {
            McpOp::Prompts(server) => self.list_mcp(server, true).await,
            McpOp::Resources(server) => self.list_mcp(server, false).await,
            McpOp::Prompt { server, name, args } => {
                let Some(running) = self.mcp_server(&server).await else {
                    return;
                };
                let arguments = args
                    .into_iter()
                    .map(|(k, v)| (k, serde_json::Value::String(v)))
                    .collect();
                let beside = self.interrupt.beside(&self.cancel);
                let got = self
                    .conv
                    .mcp_prompt(&running, &name, arguments, &beside.token)
                    .await;
                drop(beside);
                match got {
                    Ok(messages) => {
                        let text = messages.join("\n\n");
                        if text.trim().is_empty() {
                            return self.error(&format!("prompt `{name}` of `{server}` is empty"));
                        }
                        self.ask(UserInput {
                            text,
                            ..UserInput::default()
                        })
                        .await;
                    }
                    Err(e) => self.error(&format!("prompt `{name}` of MCP server `{server}`: {e}")),
                }
            }
        }
    }

    /// The running server `name`, started if need be; reports why not.
    async fn mcp_server(&self, name: &str) -> Option<Arc<McpServer>> {
        let names = [name.to_string()];
        let (_lease, warnings) = self.state().mcp.acquire(&names).await;
        let running = self.state().mcp.running(&names).into_iter().next();
        if running.is_none() {
            let why = warnings.into_iter().next().unwrap_or_else(|| {
                format!("unknown MCP server `{name}` (not in functions/mcp.json)")
            });
            self.error(&why);
        }
        running
    }

    async fn list_mcp(&self, server: Option<String>, prompts: bool) {
        let names = match server {
            Some(name) => vec![name],
            None => self.conv.mcp_server_names(),
        };
        if names.is_empty() {
            return self.error("no MCP servers in this conversation (enabled_mcp_servers)");
        }
        let mut out = String::new();
        for name in names {
            let Some(running) = self.mcp_server(&name).await else {
                continue;
            };
            if prompts {
                match running.prompts().await {
                    Ok(list) => {
                        for p in list {
                            let args: Vec<String> = p
                                .arguments
                                .unwrap_or_default()
                                .into_iter()
                                .map(|a| {
                                    if a.required == Some(true) {
                                        format!("{}=…", a.name)
                                    } else {
                                        format!("[{}=…]", a.name)
                                    }
                                })
                                .collect();
                            out.push_str(&format!(
                                "{name} {} {}  {}\n",
                                p.name,
                                args.join(" "),
                                p.description.unwrap_or_default()
                            ));
                        }
                    }
                    Err(e) => self.error(&e.to_string()),
                }
            } else {
                match running.resources().await {
                    Ok(list) => {
                        for r in list {
                            out.push_str(&format!(
                                "mcp:{name}:{}  {}\n",
                                r.uri,
                                r.description.clone().unwrap_or(r.name.clone())
                            ));
                        }
                    }
                    Err(e) => self.error(&e.to_string()),
                }
            }
        }
        if out.is_empty() {
            let what = if prompts { "prompts" } else { "resources" };
            self.note(&format!("no {what}"));
        } else {
            self.println(out.trim_end());
        }
    }
}
