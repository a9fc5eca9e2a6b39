//! loki behind the Claude Agent SDK: a program that sets `cli_path` to loki gets Claude
//! Code's stream-json and control protocol, answered by any model loki has. A driver
//! like the others: the flags become a [`ConversationSpec`], each `user` line an
//! [`Op::Prompt`], `interrupt` an [`Op::Interrupt`] through the conversation's
//! [`crate::conversation::Remote`], approvals go through hooks, the permission mode and
//! `can_use_tool`, and the conversation is closed (saved) when stdin ends. See
//! `docs/claude-sdk.md`.

mod control;
pub mod flags;
mod messages;
mod servers;
mod session;
mod turn;

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::config::permissions::PermissionMode;
use crate::conversation::{Conversation, ConversationSpec, Remote};
use crate::jsonrpc::peer::Peer;
use crate::jsonrpc::{Fault, Incoming};
use crate::state::AppState;
use crate::term::stdin_lines::{Read, key_in, stdin_lines};
use control::{Control, ControlError, Program, SdkApprover, SdkHooks};
use flags::ClaudeOptions;
use loki_protocol::command::Command;
use loki_protocol::op::Op;
use servers::loki_tools;

/// Work for the conversation, done in order between turns.
enum Work {
    Prompt(Value),
    SetModel(String),
    /// `set_permission_mode`: loki's `permission_mode` from the next turn on.
    SetMode(PermissionMode),
}

/// Serves one SDK connection until stdin ends; the exit status.
pub async fn serve(state: Arc<AppState>, options: ClaudeOptions) -> anyhow::Result<u8> {
    for flag in &options.ignored {
        tracing::info!("claude sdk: {flag} is accepted and has no meaning in loki");
    }
    let brought = match &options.mcp_config {
        Some(config) => servers::read(config)?,
        None => serde_json::Map::new(),
    };
    let state = with_options(&state, &options);
    let cwd = std::env::current_dir().unwrap_or_default();
    let session = session::choose(&state, &options, &cwd).await?;
    let (peer, writer) = Peer::stdio(Control);
    let program = Arc::new(Program::new(
        peer,
        session.id.clone(),
        cwd.display().to_string(),
        brought.keys().cloned().collect(),
    ));
    let spec = ConversationSpec {
        model: options.model.clone(),
        commands: start_commands(&options, session.name),
        cwd: Some(cwd),
        approver: Some(Arc::new(SdkApprover {
            program: Arc::clone(&program),
            asks_program: options.permission_prompt_tool.as_deref() == Some("stdio"),
        })),
        hooks: Some(Arc::new(SdkHooks {
            program: Arc::clone(&program),
        })),
        mcp_servers: servers::specs(&brought, &state.env, &program),
        ..ConversationSpec::default()
    };
    let conversation = Conversation::open(&state, spec).await?;
    let remote = conversation.remote();
    let model = conversation.status().model;
    let (work, queue) = mpsc::unbounded_channel();
    let runner = tokio::spawn(turn::run_all(
        conversation,
        queue,
        turn::Settings {
            program: Arc::clone(&program),
            state: Arc::clone(&state),
            partial: options.include_partial_messages,
            max_budget_usd: options.max_budget_usd,
            replay: options.replay_user_messages,
            session_states: state
                .env
                .get("CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS")
                .is_some_and(truthy),
            one_prompt: options.prompt.is_some(),
        },
    ));
    let driver = Driver {
        state,
        program,
        remote,
        work,
        model,
    };
    match options.prompt.clone() {
        Some(prompt) => driver.take(serde_json::json!({
            "type": "user",
            "message": {"role": "user", "content": prompt},
            "parent_tool_use_id": null,
        })),
        None => driver.read_input().await,
    }
    let Driver {
        program,
        remote,
        work,
        ..
    } = driver;
    drop(work);
    program.peer.close();
    let status = runner.await.unwrap_or(1);
    // The writer ends once nothing can send any more (the approver in `remote` can).
    drop((remote, program));
    let _ = writer.await;
    Ok(status)
}

/// The commands the conversation opens with: the session, the system prompt of
/// `--system-prompt` and `--append-system-prompt`, and `--permission-mode` (unless it
/// is `default`: then the configured `permission_mode` holds).
fn start_commands(options: &ClaudeOptions, session_id: String) -> Vec<Command> {
    let mut commands = vec![Command::OpenSession(session_id)];
    let prompt = [&options.system_prompt, &options.append_system_prompt]
        .into_iter()
        .flatten()
        .filter(|p| !p.trim().is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join("\n\n");
    if !prompt.is_empty() {
        commands.push(Command::UsePrompt(prompt));
    }
    let mode = options
        .permission_mode
        .as_deref()
        .and_then(PermissionMode::parse);
    if let Some(mode) = mode.filter(|m| *m != PermissionMode::Default) {
        commands.push(mode_command(mode));
    }
    commands
}

/// The command that makes `mode` the conversation's permission mode.
fn mode_command(mode: PermissionMode) -> Command {
    Command::Set {
        key: "permission_mode".into(),
        value: mode.name().into(),
    }
}

/// What reads the program's input: the program, the conversation's remote (for
/// interrupts) and its queue of work.
struct Driver {
    state: Arc<AppState>,
    program: Arc<Program>,
    remote: Remote,
    work: mpsc::UnboundedSender<Work>,
    /// The model the conversation opened with: the first of `initialize`'s models.
    model: String,
}

impl Driver {
    /// Takes the program's lines until its input ends. Each line is bounded
    /// (`max_input_size`): an over-long one is skipped, and the conversation goes on.
    async fn read_input(&self) {
        let max_bytes = self.state.config.max_input_size;
        let mut lines = stdin_lines(max_bytes);
        while let Some(Ok(read)) = lines.recv().await {
            let line = match read {
                Read::Line(line) => line,
                Read::TooLong { bytes, head } => {
                    let why = format!(
                        "a line of input of {} is over max_input_size ({}); skipped",
                        crate::input::human_size(bytes),
                        crate::input::human_size(max_bytes)
                    );
                    tracing::warn!("claude sdk: {why}");
                    // The program's answer to a request of loki's fails that request
                    // rather than leave it (and the turn) waiting.
                    if let Some(id) = key_in(&head, "request_id", 2) {
                        self.program.peer.fail_pending(&id, &why);
                    }
                    continue;
                }
                Read::NotUtf8 => {
                    tracing::warn!("claude sdk: a line of input is not UTF-8; skipped");
                    continue;
                }
            };
            match serde_json::from_str::<Value>(&line) {
                Ok(message) => self.take(message),
                Err(_) if line.trim().is_empty() => {}
                Err(_) => tracing::warn!("claude sdk: a line of input is not JSON; skipped"),
            }
        }
    }

    /// One message: a prompt is queued, a control response reaches its request, a
    /// control request is answered.
    fn take(&self, message: Value) {
        match self.program.peer.route(message) {
            Some(Incoming::Notification { method, params }) if method == "user" => {
                let _ = self.work.send(Work::Prompt(params));
            }
            Some(Incoming::Request { id, method, params }) => {
                let answer = self.control(&method, &params).map_err(Fault::from);
                self.program.peer.respond(&id, answer);
            }
            _ => {}
        }
    }

    /// The answer to the control request `subtype`.
    fn control(&self, subtype: &str, request: &Value) -> Result<Value, ControlError> {
        match subtype {
            "initialize" => {
                self.program.register_hooks(&request["hooks"]);
                Ok(json!({
                    "commands": [],
                    "agents": [],
                    "output_style": "default",
                    "available_output_styles": ["default"],
                    // Programs take the first as the current model (Zed's adapter
                    // fails on an empty list).
                    "models": models(&self.state, &self.model),
                    "account": {},
                    "pid": std::process::id(),
                }))
            }
            "interrupt" => {
                let _ = self.remote.submit(Op::Interrupt);
                Ok(json!({}))
            }
            "set_permission_mode" => {
                let mode = request["mode"]
                    .as_str()
                    .and_then(PermissionMode::parse)
                    .ok_or_else(|| ControlError::UnknownMode(request["mode"].to_string()))?;
                let _ = self.work.send(Work::SetMode(mode));
                Ok(json!({}))
            }
            // Checked here so the answer says whether it took; the old model stays when
            // it did not.
            "set_model" => {
                let model = known_model(&self.state, &request["model"])?;
                let _ = self.work.send(Work::SetModel(model));
                Ok(json!({}))
            }
            "mcp_status" => Ok(json!({"mcpServers": mcp_status(&self.state, &self.program)})),
            other => Err(ControlError::Unsupported(format!("{other:?}"))),
        }
    }
}

/// The model id of a `set_model` request, if loki can use it.
fn known_model(state: &AppState, model: &Value) -> Result<String, ControlError> {
    let Some(id) = model.as_str().map(str::trim).filter(|m| !m.is_empty()) else {
        return Err(ControlError::UnknownModel(format!(
            "set_model needs a model id, got {model}"
        )));
    };
    state
        .providers
        .resolve(id, crate::config::clients::ModelKind::Chat)
        .and_then(|m| crate::conversation::provider_for(state, &m))
        .map(|_| id.to_string())
        .map_err(|e| ControlError::UnknownModel(e.to_string()))
}

/// The servers of `--mcp-config` and how each is doing.
fn mcp_status(state: &AppState, program: &Program) -> Vec<Value> {
    let status = state.mcp.status();
    program
        .mcp_servers
        .iter()
        .map(|name| {
            let shown = match status.iter().find(|(n, _)| n == name) {
                Some((_, s)) if s.starts_with("running") => "connected",
                Some((_, s)) if s.starts_with("failed") || s.starts_with("not usable") => "failed",
                _ => "pending",
            };
            json!({"name": name, "status": shown})
        })
        .collect()
}

/// The configuration with what the flags change for this run: the tools that run
/// without asking (`--allowedTools`), those never run (`--disallowedTools`), and the most
/// model calls per turn (`--max-turns`).
fn with_options(state: &Arc<AppState>, options: &ClaudeOptions) -> Arc<AppState> {
    let mut config = state.config.clone();
    for name in &options.allowed_tools {
        if name.contains('(') {
            tracing::info!(
                "claude sdk: the rule `{name}` is not supported; such calls are asked about"
            );
            continue;
        }
        config.auto_approve_tools.extend(loki_tools(name));
    }
    for name in &options.disallowed_tools {
        let name = name.split('(').next().unwrap_or(name);
        config.deny_tools.extend(loki_tools(name));
    }
    if let Some(turns) = options.max_turns {
        config.max_tool_rounds = turns.max(1);
    }
    let origin = state.config_origin.clone();
    Arc::new(state.reconfigured(config, origin))
}

/// The chat models loki can use, as the SDK's `ModelInfo`s: `current` first.
fn models(state: &AppState, current: &str) -> Vec<Value> {
    let mut ids = vec![current.to_string()];
    let listed = state
        .providers
        .models(crate::config::clients::ModelKind::Chat)
        .unwrap_or_default();
    for model in listed {
        let id = model.id();
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids.into_iter()
        .map(|id| json!({"value": id, "displayName": id, "description": format!("{id} through loki")}))
        .collect()
}

/// Whether an environment switch is on (`1`, `true`, `yes`, `on`).
fn truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}
