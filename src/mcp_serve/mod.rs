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

use std::sync::Arc;

use anyhow::Context;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListToolsResult,
    PaginatedRequestParams, PromptMessage, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::conversation::{Conversation, ConversationSpec, Op};
use crate::engine::command::Command;
use crate::engine::{CollectingEmitter, RunOptions, UserInput};
use crate::state::AppState;
use crate::tool::approve::DenyAll;
use catalogue::Entry;

/// The MCP server: what it offers is read again on every list, so new roles, agents and
/// knowledge bases show up without a restart.
#[derive(Clone)]
pub struct LokiMcp {
    state: Arc<AppState>,
    /// `--yolo`: every tool call of the conversations runs.
    yolo: bool,
}

impl LokiMcp {
    /// A server over `state`.
    pub fn new(state: Arc<AppState>, yolo: bool) -> Self {
        Self { state, yolo }
    }

    /// Runs `prompt` in a fresh conversation set up by `command`; the answer's text.
    async fn converse(
        &self,
        command: Command,
        prompt: String,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<String, String> {
        let spec = ConversationSpec {
            commands: vec![command],
            approver: Some(Arc::new(DenyAll)),
            yolo: self.yolo,
            cancel: Some(cancel),
            label: Some("mcp".into()),
            ..ConversationSpec::default()
        };
        let mut conversation =
            Conversation::resolve(&self.state, spec).map_err(|e| e.to_string())?;
        conversation.prepare().await.map_err(|e| e.to_string())?;
        let collected = CollectingEmitter::new();
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
        let closed = conversation.close(&collected).await;
        result.map_err(|e| e.to_string())?;
        closed.into_saved().map_err(|e| e.to_string())?;
        Ok(collected.answer())
    }

    /// Runs macro `name` in a fresh conversation; its answers and reports.
    async fn run_macro(
        &self,
        name: &str,
        args: &[String],
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<String, String> {
        let spec = ConversationSpec {
            approver: Some(Arc::new(DenyAll)),
            yolo: self.yolo,
            cancel: Some(cancel),
            label: Some("mcp".into()),
            ..ConversationSpec::default()
        };
        let conversation = Conversation::open(&self.state, spec)
            .await
            .map_err(|e| e.to_string())?;
        let out = Collected::default();
        crate::macros::run(conversation, name, args, &out)
            .await
            .map_err(|e| e.to_string())?;
        Ok(out.text())
    }

    /// The best chunks of knowledge base `name` for `query`, one block per chunk.
    async fn search(&self, name: &str, query: &str, top_k: usize) -> Result<String, String> {
        let state = &self.state;
        let kb = state
            .rags
            .open(state.paths.rag_dir(name), name)
            .map_err(|e| e.to_string())?;
        let settings = crate::rag::SearchSettings {
            top_k,
            reranker_model: None,
        };
        let found = crate::rag::search::search(&kb, &state.providers, query, &settings)
            .await
            .map_err(|e| e.to_string())?;
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

impl crate::engine::Emitter for StepAnswer<'_> {
    fn emit(&self, envelope: crate::engine::event::Envelope) {
        if let crate::engine::event::Event::AssistantDelta(delta) = envelope.event
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
    ) -> Box<dyn crate::engine::Emitter + '_> {
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

fn text_result(result: Result<String, String>) -> CallToolResponse {
    match result {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
    }
    .into()
}

impl ServerHandler for LokiMcp {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("loki", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "loki's roles, agents and knowledge bases: `role_*` and `agent_*` tools answer a prompt, `kb_search_*` tools return the passages that match a query.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(catalogue::tools(
            &self.state,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        if request.name == bounded::TOO_LARGE {
            let bytes = arguments.get("bytes").and_then(Value::as_u64).unwrap_or(0);
            return Err(ErrorData::invalid_request(
                format!(
                    "the request was {bytes} bytes, more than the {} bytes loki reads in one message; nothing was done",
                    bounded::MAX_LINE
                ),
                None,
            ));
        }
        let text = |key: &str| -> Result<String, ErrorData> {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string)
                .ok_or_else(|| ErrorData::invalid_params(format!("`{key}` is required"), None))
        };
        let entry = catalogue::find(&self.state, &request.name).ok_or_else(|| {
            ErrorData::invalid_params(format!("no tool `{}`", request.name), None)
        })?;
        let cancel = context.ct.clone();
        Ok(match entry {
            Entry::Role(role) => text_result(
                self.converse(Command::UseRole(role), text("prompt")?, cancel)
                    .await,
            ),
            Entry::Agent(agent) => {
                let command = Command::UseAgent {
                    name: agent,
                    variables: Vec::new(),
                    session: None,
                };
                text_result(self.converse(command, text("prompt")?, cancel).await)
            }
            Entry::Macro(name) => {
                let args: Vec<String> = arguments
                    .get("args")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                text_result(self.run_macro(&name, &args, cancel).await)
            }
            Entry::Rag(rag) => {
                let top_k = arguments
                    .get("top_k")
                    .and_then(Value::as_u64)
                    .map_or(5, |k| k.clamp(1, 50) as usize);
                text_result(self.search(&rag, &text("query")?, top_k).await)
            }
        })
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(catalogue::prompts(
            &self.state,
        )))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let role = catalogue::role(&self.state, &request.name).ok_or_else(|| {
            ErrorData::invalid_params(format!("no prompt `{}`", request.name), None)
        })?;
        let input = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("input"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let text = if input.is_empty() {
            role.prompt
        } else {
            format!("{}\n\n{input}", role.prompt)
        };
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(rmcp::model::Role::User, text)])
                .into(),
        )
    }
}

/// Serves until stdin closes (stdio) or the process is stopped (HTTP at `addr`).
pub async fn serve(state: Arc<AppState>, addr: Option<&str>, yolo: bool) -> anyhow::Result<u8> {
    let server = LokiMcp::new(state, yolo);
    match addr.filter(|a| !a.is_empty()) {
        None => {
            let stdin = bounded::stdin_bounded(tokio::io::stdin());
            let running = server
                .serve((stdin, tokio::io::stdout()))
                .await
                .context("cannot start the MCP server on stdio")?;
            running.waiting().await.context("the MCP server stopped")?;
            Ok(0)
        }
        Some(addr) => serve_http(server, addr).await,
    }
}

/// A web page the user visits must not reach the MCP server on their machine: a request
/// naming an `Origin` other than the server's own is refused (rmcp checks `Host`).
async fn same_origin_only(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::header;
    use axum::response::IntoResponse;
    let headers = request.headers();
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        let origin = origin.to_str().unwrap_or("");
        if !crate::origin::origin_allowed(&[], origin, host) {
            return (
                axum::http::StatusCode::FORBIDDEN,
                "requests from web pages are refused by loki's MCP server",
            )
                .into_response();
        }
    }
    next.run(request).await
}

async fn serve_http(server: LokiMcp, addr: &str) -> anyhow::Result<u8> {
    let server_terminal = server.state.terminal;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr().context("cannot read the address")?;
    if !local.ip().is_loopback() {
        anyhow::bail!(
            "the MCP server listens on loopback addresses only (127.0.0.1:PORT); it has no authentication"
        );
    }
    let cancel = tokio_util::sync::CancellationToken::new();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_cancellation_token(cancel.child_token()),
    );
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(same_origin_only));
    let theme = crate::render::theme::Theme::stderr(&server_terminal);
    crate::term::session_note(
        &theme,
        &format!("loki: MCP server on http://{local}/mcp; Ctrl-C stops"),
    );
    let stop = cancel.clone();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            stop.cancel();
        })
        .await
        .context("the MCP server stopped")?;
    Ok(0)
}
