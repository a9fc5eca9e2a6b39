//! `loki --mcp-server [ADDR]`: loki as an MCP server, so Claude Desktop, an editor or
//! another loki can use what this one has. Over stdio (no ADDR) or streamable HTTP at
//! `http://ADDR/mcp`, it offers:
//!
//! - a tool per role, `role_<name> {prompt}`: a fresh conversation with the role answers;
//! - a tool per agent, `agent_<name> {prompt}`;
//! - a tool per knowledge base, `kb_search_<name> {query, top_k}`: its best chunks;
//! - a tool per macro, `macro_<name> {args}`: its steps in a new conversation, the
//!   answers returned;
//! - a prompt per role: the role's instructions with the caller's input.
//!
//! Each call is a loki conversation like any other ([`Conversation`]). Nobody is at a
//! terminal, so tool calls that need approval run only when `--yolo` or
//! `auto_approve_tools` allows them; the rest are refused with a reason the model reads.
//! A call the client cancels stops its conversation.

mod bounded;
mod catalogue;
mod http;
mod rpc;
mod stdio;

use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::conversation::{Conversation, ConversationSpec};
use crate::state::AppState;
use crate::tool::approve::DenyAll;
use catalogue::Entry;
use loki_protocol::command::Command;
use loki_protocol::emitter::CollectingEmitter;
use loki_protocol::op::Op;
use loki_protocol::op::{RunOptions, UserInput};
use rpc::RpcError;

/// The MCP server: what it offers is read again on every list, so new roles, agents and
/// knowledge bases show up without a restart.
#[derive(Clone)]
pub struct LokiMcp {
    state: Arc<AppState>,
    /// `--yolo`: every tool call of the conversations runs.
    yolo: bool,
    /// Tool calls running at once; more wait their turn.
    running: Arc<tokio::sync::Semaphore>,
}

/// Most tool calls (each a conversation with the model) running at once, for all clients
/// together.
const MAX_RUNNING_CALLS: usize = 8;

impl LokiMcp {
    /// A server over `state`.
    pub fn new(state: Arc<AppState>, yolo: bool) -> Self {
        Self {
            state,
            yolo,
            running: Arc::new(tokio::sync::Semaphore::new(MAX_RUNNING_CALLS)),
        }
    }

    /// Runs `prompt` in a fresh conversation set up by `command`; the answer's text.
    async fn converse(
        &self,
        command: Command,
        prompt: String,
        cancel: CancellationToken,
    ) -> Result<String, CallError> {
        let spec = ConversationSpec {
            commands: vec![command],
            approver: Some(Arc::new(DenyAll)),
            yolo: self.yolo,
            cancel: Some(cancel),
            label: Some("mcp".into()),
            ..ConversationSpec::default()
        };
        let mut conversation = Conversation::resolve(&self.state, spec)?;
        let collected = CollectingEmitter::new();
        if let Err(e) = conversation.prepare().await {
            // Closed all the same: what it started (MCP servers) is let go.
            let _ = conversation.close(&collected).await;
            return Err(e.into());
        }
        let input = UserInput {
            text: prompt,
            ..UserInput::default()
        };
        let options = RunOptions {
            stream: Some(false),
            unknown_tool_fails: false,
        };
        let op = Op::Prompt {
            input,
            options,
            role: None,
        };
        let result = conversation.submit(op, &collected).await;
        conversation
            .finish(result, &collected)
            .await
            .into_result()?;
        Ok(collected.answer())
    }

    /// Runs macro `name` in a fresh conversation; its answers and reports.
    async fn run_macro(
        &self,
        name: &str,
        args: &[String],
        cancel: CancellationToken,
    ) -> Result<String, CallError> {
        let spec = ConversationSpec {
            approver: Some(Arc::new(DenyAll)),
            yolo: self.yolo,
            cancel: Some(cancel.clone()),
            label: Some("mcp".into()),
            ..ConversationSpec::default()
        };
        let conversation = Conversation::open(&self.state, spec).await?;
        let out = Collected::default();
        crate::macros::run(
            conversation,
            &self.state.paths.macros_dir,
            name,
            args,
            &out,
            cancel,
        )
        .await?;
        Ok(out.text())
    }

    /// The best chunks of knowledge base `name` for `query`, one block per chunk.
    async fn search(&self, name: &str, query: &str, top_k: usize) -> Result<String, CallError> {
        let state = &self.state;
        let kb = state.rags.open(state.paths.rag_dir(name), name)?;
        let settings = crate::rag::SearchSettings {
            top_k,
            reranker_model: None,
        };
        let found = crate::rag::search::search(&kb, &state.providers, query, &settings).await?;
        for warning in &found.warnings {
            tracing::warn!(rag = name, "{warning}");
        }
        Ok(found
            .hits
            .iter()
            .map(|hit| format!("[{}]\n{}", hit.source, hit.text))
            .collect::<Vec<_>>()
            .join("\n\n"))
    }
}

/// A macro's output, kept: answers and reports, in order.
#[derive(Default)]
struct Collected {
    parts: std::sync::Mutex<Vec<String>>,
}

impl Collected {
    fn text(&self) -> String {
        self.parts
            .lock()
            .map(|p| p.join("\n\n"))
            .unwrap_or_default()
    }

    fn push(&self, text: String) {
        if let Ok(mut parts) = self.parts.lock()
            && !text.trim().is_empty()
        {
            parts.push(text);
        }
    }
}

/// Collects one step's answer.
struct StepAnswer<'a> {
    out: &'a Collected,
    text: std::sync::Mutex<String>,
}

impl loki_protocol::emitter::Emitter for StepAnswer<'_> {
    fn emit(&self, envelope: loki_protocol::event::Envelope) {
        if let loki_protocol::event::Event::AssistantDelta(delta) = envelope.event
            && let Ok(mut text) = self.text.lock()
        {
            text.push_str(&delta.text);
        }
    }
}

impl Drop for StepAnswer<'_> {
    fn drop(&mut self) {
        let text = self.text.lock().map(|t| t.clone()).unwrap_or_default();
        self.out.push(text);
    }
}

impl crate::macros::Output for Collected {
    fn events(
        &self,
        _cancel: Option<tokio_util::sync::CancellationToken>,
    ) -> Box<dyn loki_protocol::emitter::Emitter + '_> {
        Box::new(StepAnswer {
            out: self,
            text: std::sync::Mutex::default(),
        })
    }

    fn echo(&self, _step: &str) {}

    fn note(&self, _line: &str) {}

    fn report(&self, text: &str) {
        self.push(text.to_string());
    }

    fn info_rows(&self) -> Vec<crate::conversation::info::Row> {
        Vec::new()
    }
}

/// The protocol revisions loki's server speaks, newest first; `initialize` gets the
/// client's when it is one of them, else the newest.
const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Why a tool call failed; the calling model reads it as the tool's result.
#[derive(Debug, thiserror::Error)]
enum CallError {
    /// A required argument is missing or empty.
    #[error("`{0}` is required")]
    Missing(&'static str),
    /// The client cancelled the call while it waited for its turn.
    #[error("cancelled before it started")]
    NotStarted,
    /// The conversation failed.
    #[error(transparent)]
    Conversation(#[from] crate::error::CoreError),
    /// The macro failed.
    #[error(transparent)]
    Macro(#[from] crate::macros::MacroError),
    /// The knowledge base cannot be searched.
    #[error(transparent)]
    Rag(#[from] crate::rag::RagError),
}

/// A tool's result: its text, flagged as an error when the call failed.
fn text_result(result: Result<String, CallError>) -> Value {
    let (text, failed) = match result {
        Ok(text) => (text, false),
        Err(e) => (e.to_string(), true),
    };
    json!({"content": [{"type": "text", "text": text}], "isError": failed})
}

impl LokiMcp {
    /// The result of request `method`, or its error. `cancel` fires when the client
    /// cancels the request or goes away.
    async fn answer(
        &self,
        method: &str,
        params: &Value,
        cancel: CancellationToken,
    ) -> Result<Value, RpcError> {
        match method {
            "initialize" => Ok(initialized(params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({"tools": catalogue::tools(&self.state)})),
            "tools/call" => self.call_tool(params, cancel).await,
            "prompts/list" => Ok(json!({"prompts": catalogue::prompts(&self.state)})),
            "prompts/get" => self.get_prompt(params),
            _ => Err(RpcError::new(
                rpc::METHOD_NOT_FOUND,
                format!("loki's MCP server has no method `{method}`"),
            )),
        }
    }

    /// `tools/call`: an unknown tool is a protocol error; anything else, a missing
    /// argument included, is the tool's result (flagged as an error), which the calling
    /// model reads and can correct.
    async fn call_tool(
        &self,
        params: &Value,
        cancel: CancellationToken,
    ) -> Result<Value, RpcError> {
        let name = params["name"].as_str().unwrap_or_default();
        let arguments = &params["arguments"];
        let text = |key: &'static str| -> Result<String, CallError> {
            arguments[key]
                .as_str()
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string)
                .ok_or(CallError::Missing(key))
        };
        let entry = catalogue::find(&self.state, name)
            .ok_or_else(|| RpcError::new(rpc::INVALID_PARAMS, format!("no tool `{name}`")))?;
        let _turn = tokio::select! {
            permit = Arc::clone(&self.running).acquire_owned() => permit.ok(),
            () = cancel.cancelled() => return Ok(text_result(Err(CallError::NotStarted))),
        };
        let result = match entry {
            Entry::Role(role) => match text("prompt") {
                Ok(prompt) => self.converse(Command::UseRole(role), prompt, cancel).await,
                Err(e) => Err(e),
            },
            Entry::Agent(agent) => match text("prompt") {
                Ok(prompt) => {
                    let command = Command::UseAgent {
                        name: agent,
                        variables: Vec::new(),
                        session: None,
                    };
                    self.converse(command, prompt, cancel).await
                }
                Err(e) => Err(e),
            },
            Entry::Macro(name) => {
                let args: Vec<String> = arguments["args"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                self.run_macro(&name, &args, cancel).await
            }
            Entry::Rag(rag) => match text("query") {
                Ok(query) => {
                    let top_k = arguments["top_k"]
                        .as_u64()
                        .map_or(5, |k| k.clamp(1, 50) as usize);
                    self.search(&rag, &query, top_k).await
                }
                Err(e) => Err(e),
            },
        };
        Ok(text_result(result))
    }

    fn get_prompt(&self, params: &Value) -> Result<Value, RpcError> {
        let name = params["name"].as_str().unwrap_or_default();
        let role = catalogue::role(&self.state, name)
            .ok_or_else(|| RpcError::new(rpc::INVALID_PARAMS, format!("no prompt `{name}`")))?;
        let input = params["arguments"]["input"].as_str().unwrap_or_default();
        let text = if input.is_empty() {
            role.prompt
        } else {
            format!("{}\n\n{input}", role.prompt)
        };
        Ok(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}]
        }))
    }
}

/// The answer to `initialize`: the revision (the client's when loki speaks it), what the
/// server offers, and who it is.
fn initialized(params: &Value) -> Value {
    let asked = params["protocolVersion"].as_str().unwrap_or_default();
    let version = PROTOCOL_VERSIONS
        .iter()
        .find(|v| **v == asked)
        .unwrap_or(&PROTOCOL_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}, "prompts": {"listChanged": false}},
        "serverInfo": {"name": "loki", "version": env!("CARGO_PKG_VERSION")},
        "instructions": "loki's roles, agents and knowledge bases: `role_*` and `agent_*` tools answer a prompt, `kb_search_*` tools return the passages that match a query."
    })
}

/// Serves until stdin closes (stdio) or the process is stopped (HTTP at `addr`).
pub async fn serve(state: Arc<AppState>, addr: Option<&str>, yolo: bool) -> anyhow::Result<u8> {
    let server = LokiMcp::new(state, yolo);
    match addr.filter(|a| !a.is_empty()) {
        None => stdio::serve(server).await,
        Some(_) if yolo => anyhow::bail!(
            "--yolo is refused with an HTTP address: any program or user on this machine can reach the port, and it would run tools unapproved; use stdio, or auto_approve_tools for the tools you trust"
        ),
        Some(addr) => http::serve(server, addr).await,
    }
}
