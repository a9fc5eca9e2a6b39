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
mod turn;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::conversation::{Conversation, ConversationSpec, Op, catalog};
use crate::engine::command::Command;
use crate::state::AppState;
use crate::term::stdin_lines::{Read, key_in, stdin_lines};
use control::{ControlError, Mode, Program, SdkApprover, SdkHooks};
use flags::ClaudeOptions;
use servers::loki_tools;

/// Work for the conversation, done in order between turns.
enum Work {
    Prompt(Value),
    SetModel(String),
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
    let session_id = session_id(&state, &options).await?;
    let mode = options
        .permission_mode
        .as_deref()
        .and_then(Mode::parse)
        .unwrap_or(Mode::Default);
    let mode = Arc::new(Mutex::new(mode));
    let cwd = std::env::current_dir().unwrap_or_default();
    let (out, writer) = crate::term::json_lines::stdout_writer();
    let program = Arc::new(Program::new(
        out,
        session_id.clone(),
        cwd.display().to_string(),
        brought.keys().cloned().collect(),
    ));
    let mcp_servers = servers::specs(&brought, &state.env, &program);
    let approver = SdkApprover {
        program: Arc::clone(&program),
        mode: Arc::clone(&mode),
        asks_program: options.permission_prompt_tool.as_deref() == Some("stdio"),
    };
    let mut commands = vec![Command::OpenSession(session_id.clone())];
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
    let spec = ConversationSpec {
        model: options.model.clone(),
        commands,
        cwd: Some(cwd),
        approver: Some(Arc::new(approver)),
        hooks: Some(Arc::new(SdkHooks {
            program: Arc::clone(&program),
        })),
        mcp_servers,
        ..ConversationSpec::default()
    };
    let conversation = Conversation::open(&state, spec).await?;
    let remote = conversation.remote();
    let (work, queue) = mpsc::unbounded_channel();
    let runner = tokio::spawn(turn::run_all(
        conversation,
        queue,
        turn::Settings {
            program: Arc::clone(&program),
            mode: Arc::clone(&mode),
            partial: options.include_partial_messages,
            max_budget_usd: options.max_budget_usd,
            max_turns: options.max_turns,
        },
    ));
    // Each line is bounded (`max_input_size`): an over-long one is skipped, and the
    // conversation goes on.
    let max_bytes = state.config.max_input_size;
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
                // The program's answer to a request of loki's fails that request rather
                // than leave it (and the turn) waiting.
                if let Some(Value::String(id)) = key_in(&head, "request_id", 2) {
                    program.fail_pending(&id, &why);
                }
                continue;
            }
            Read::NotUtf8 => {
                tracing::warn!("claude sdk: a line of input is not UTF-8; skipped");
                continue;
            }
        };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            if !line.trim().is_empty() {
                tracing::warn!("claude sdk: a line of input is not JSON; skipped");
            }
            continue;
        };
        match message["type"].as_str() {
            Some("user") => {
                let _ = work.send(Work::Prompt(message));
            }
            Some("control_response") => program.resolve(&message),
            Some("control_request") => {
                let request = &message["request"];
                let answer = match request["subtype"].as_str() {
                    Some("initialize") => {
                        program.register_hooks(&request["hooks"]);
                        Ok(
                            json!({"commands": [], "output_style": "default", "available_output_styles": ["default"], "models": []}),
                        )
                    }
                    Some("interrupt") => {
                        let _ = remote.submit(Op::Interrupt);
                        Ok(json!({}))
                    }
                    Some("set_permission_mode") => {
                        match request["mode"].as_str().and_then(Mode::parse) {
                            Some(new) => {
                                *mode
                                    .lock()
                                    .unwrap_or_else(std::sync::PoisonError::into_inner) = new;
                                Ok(json!({}))
                            }
                            None => Err(ControlError::UnknownMode(request["mode"].to_string())),
                        }
                    }
                    Some("set_model") => match known_model(&state, &request["model"]) {
                        // Checked here so the answer says whether it took; the old model
                        // stays when it did not.
                        Ok(model) => {
                            let _ = work.send(Work::SetModel(model));
                            Ok(json!({}))
                        }
                        Err(e) => Err(e),
                    },
                    Some("mcp_status") => Ok(json!({"mcpServers": mcp_status(&state, &program)})),
                    other => Err(ControlError::Unsupported(format!("{other:?}"))),
                };
                program.respond(&message["request_id"], answer);
            }
            _ => {}
        }
    }
    drop(work);
    program.close();
    let status = runner.await.unwrap_or(1);
    // The writer ends once nothing can send any more (the approver in `remote` can).
    drop((remote, program));
    let _ = writer.await;
    Ok(status)
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
        .resolve(id, crate::client::config::ModelKind::Chat)
        .and_then(|m| crate::context::provider_for(state, &m))
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

/// The loki session the run works in: `--resume ID`, the newest SDK session with
/// `--continue`, else a new `sdk-<time>-<hex>`.
async fn session_id(state: &AppState, options: &ClaudeOptions) -> anyhow::Result<String> {
    if let Some(id) = &options.resume {
        if catalog::stored_session(state, id).await?.is_none() {
            anyhow::bail!("--resume: no session `{id}`");
        }
        return Ok(id.clone());
    }
    if options.continue_last {
        let names = catalog::session_names(state).await?;
        if let Some(latest) = names.into_iter().filter(|n| n.starts_with("sdk-")).max() {
            return Ok(latest);
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Ok(format!("sdk-{}-{:04x}", now.as_secs(), fastrand::u16(..)))
}
