//! The SDK run's turns, one after another: `system/init`, the prompt (the conversation
//! runs the program's `UserPromptSubmit` and `Stop` hooks around it), the messages, the
//! `result`; the conversation saved after each turn and closed when the input ends.

use std::sync::{Arc, PoisonError};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Work;
use super::control::Program;
use super::messages::{Messages, Tally, uuid};
use crate::claude_names::result::RunResult;
use crate::config::permissions::PermissionMode;
use crate::conversation::Conversation;
use crate::error::CoreError;
use crate::state::AppState;
use loki_protocol::command::Command;
use loki_protocol::emitter::Discard;
use loki_protocol::op::{Op, Reply};
use loki_protocol::op::{RunOptions, RunOutcome, UserInput};

/// The version of Claude Code's protocol spoken (what `system/init` reports).
const PROTOCOL_LEVEL: &str = "2.1.332";

/// What every turn needs.
pub(super) struct Settings {
    pub program: Arc<Program>,
    /// Loki's state (the models' context windows for `modelUsage`).
    pub state: Arc<AppState>,
    pub partial: bool,
    pub max_budget_usd: Option<f64>,
    /// `--replay-user-messages`: each prompt is echoed back when its turn starts.
    pub replay: bool,
    /// `CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS`: `system/session_state_changed` says
    /// `running` when a turn starts and `idle` after its `result` (Zed's adapter ends a
    /// prompt on `idle`).
    pub session_states: bool,
    /// One prompt from the command line (`claude -p … --output-format stream-json`):
    /// a turn that did not succeed is the process's failure too (an `error:` line on
    /// stderr, exit status 1), as in every other one-shot.
    pub one_prompt: bool,
}

/// Runs the queued work until the input ends, then closes the conversation; the exit
/// status.
pub(super) async fn run_all(
    mut conversation: Conversation,
    mut queue: mpsc::UnboundedReceiver<Work>,
    settings: Settings,
) -> u8 {
    let mut spent = 0.0;
    let mut failed: Option<String> = None;
    while let Some(work) = queue.recv().await {
        let (op, what) = match work {
            Work::Prompt(message) => {
                session_state(&settings, "running");
                let (cost, unsuccessful) =
                    run_turn(&mut conversation, &settings, &message, spent).await;
                spent += cost;
                failed = failed.or(unsuccessful);
                session_state(&settings, "idle");
                continue;
            }
            Work::SetModel(model) => (Op::Command(Command::SetModel(model)), "set_model"),
            // Loki's own rules for the mode hold: in `plan`, only loki's read-only tools
            // run unasked (an MCP tool's `readOnlyHint` is not taken on trust); in
            // `acceptEdits`, loki's file edits run.
            Work::SetMode(mode) => (
                Op::Command(super::mode_command(mode)),
                "set_permission_mode",
            ),
        };
        if let Err(e) = conversation.submit(op, &Discard).await {
            tracing::warn!("claude sdk: {what}: {e}");
        }
    }
    let closed = conversation.close(&Discard).await;
    if let Err(e) = &closed.saved {
        tracing::warn!("claude sdk: cannot save the session: {e}");
        return 1;
    }
    match failed.filter(|_| settings.one_prompt) {
        Some(why) => {
            crate::term::report_error(
                &crate::render::theme::Theme::stderr(&settings.state.terminal),
                &why,
            );
            1
        }
        None => 0,
    }
}

/// The `result` message that ends a turn, timed from the turn's start.
struct Report<'a> {
    settings: &'a Settings,
    started: Instant,
    /// What earlier turns cost.
    spent: f64,
    /// The model the turn ran on.
    model: String,
}

/// How a turn ended, for its `result`.
struct Ending<'a> {
    subtype: &'a str,
    text: &'a str,
    tally: Tally,
    finish_reason: Option<&'a str>,
    cost: f64,
}

impl Report<'_> {
    fn send(&self, ending: &Ending<'_>) {
        let elapsed = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let usage = ending.tally.usage;
        let fresh = usage.input_tokens.saturating_sub(usage.cached_tokens);
        let mut result = RunResult {
            subtype: ending.subtype,
            text: ending.text,
            num_turns: ending.tally.steps,
            usage,
            total_cost_usd: self.spent + ending.cost,
            session_id: &self.settings.program.session_id,
            duration_ms: elapsed,
            finish_reason: ending.finish_reason,
        }
        .to_json();
        result["modelUsage"] = json!({self.model.clone(): self.model_usage(ending, fresh)});
        result["uuid"] = json!(uuid());
        self.settings.program.send(&result);
    }

    /// The turn's usage of its model, as Claude's `ModelUsage`.
    fn model_usage(&self, ending: &Ending<'_>, fresh: u64) -> Value {
        let model = self
            .settings
            .state
            .providers
            .resolve(&self.model, crate::config::clients::ModelKind::Chat)
            .ok();
        let window = model.as_ref().and_then(|m| m.config.max_input_tokens);
        let most_out = model.as_ref().and_then(|m| m.config.max_output_tokens);
        json!({
            "inputTokens": fresh,
            "outputTokens": ending.tally.usage.output_tokens,
            "cacheReadInputTokens": ending.tally.usage.cached_tokens,
            "cacheCreationInputTokens": 0,
            "webSearchRequests": 0,
            "costUSD": ending.cost,
            "contextWindow": window.unwrap_or(DEFAULT_WINDOW),
            "maxOutputTokens": most_out.unwrap_or(0),
        })
    }
}

/// The context window reported for a model loki knows none for.
const DEFAULT_WINDOW: u64 = 200_000;

/// `system/session_state_changed`, when the program asked for it (`session_states`).
fn session_state(settings: &Settings, state: &str) {
    if !settings.session_states {
        return;
    }
    let program = &settings.program;
    program.send(&json!({
        "type": "system",
        "subtype": "session_state_changed",
        "state": state,
        "uuid": uuid(),
        "session_id": program.session_id,
    }));
}

/// The prompt echoed back (`--replay-user-messages`) as its turn starts, with its
/// `uuid` (a new one when it had none).
fn replay(program: &Program, message: &Value) {
    let id = message["uuid"].as_str().map_or_else(uuid, str::to_string);
    program.send(&json!({
        "type": "user",
        "message": message["message"],
        "session_id": program.session_id,
        "parent_tool_use_id": null,
        "uuid": id,
        "isReplay": true,
    }));
}

/// One turn: `system/init`, the prompt, its messages and the `result`; the session
/// saved. What it cost, and why it did not succeed (`None` when it did).
async fn run_turn(
    conversation: &mut Conversation,
    settings: &Settings,
    message: &Value,
    spent: f64,
) -> (f64, Option<String>) {
    let program = &settings.program;
    let model = conversation.status().model;
    let report = Report {
        settings,
        started: Instant::now(),
        spent,
        model: model.clone(),
    };
    init(program, &model, conversation);
    if settings.replay {
        replay(program, message);
    }
    if settings.max_budget_usd.is_some_and(|max| spent >= max) {
        let why = "the budget (--max-budget-usd) is spent";
        report.send(&Ending {
            subtype: "error_max_budget_usd",
            text: why,
            tally: Tally::default(),
            finish_reason: None,
            cost: 0.0,
        });
        return (0.0, Some(why.to_string()));
    }
    let input = user_input(&message["message"]["content"]);
    let messages = Messages::new(Arc::clone(program), model, settings.partial);
    program
        .calls
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    let op = Op::Prompt {
        input,
        options: RunOptions::default(),
        role: None,
    };
    let ran = conversation.submit(op, &messages).await;
    messages.flush_response();
    let outcome = match &ran {
        Ok(Reply::Ran(outcome)) => outcome.clone(),
        _ => RunOutcome::default(),
    };
    // A turn that ran reports its outcome; one that stopped, what its events counted.
    let tally = match &ran {
        Ok(_) => Tally {
            steps: outcome.steps,
            usage: outcome.usage,
        },
        Err(_) => messages.tally(),
    };
    let cost = conversation.cost_of(tally.usage).unwrap_or(0.0);
    let (subtype, text) = verdict(&ran, &outcome, settings, spent + cost);
    report.send(&Ending {
        subtype,
        text: &text,
        tally,
        finish_reason: outcome.finish_reason.as_deref(),
        cost,
    });
    if let Err(e) = conversation.save_after_turn(&Discard).await {
        tracing::warn!("claude sdk: cannot save the session: {e}");
    }
    (cost, (subtype != "success").then_some(text))
}

/// How a turn that ran ends: the `result` subtype and its text. `total`: what the run
/// has cost with this turn.
fn verdict(
    ran: &Result<Reply, CoreError>,
    outcome: &RunOutcome,
    settings: &Settings,
    total: f64,
) -> (&'static str, String) {
    match ran {
        Ok(_) if settings.max_budget_usd.is_some_and(|max| total >= max) => {
            ("error_max_budget_usd", outcome.text.clone())
        }
        Ok(_) => ("success", outcome.text.clone()),
        // `--max-turns` is loki's `max_tool_rounds`: the turn stopped with calls left.
        Err(e @ CoreError::TurnLimit(_)) => ("error_max_turns", e.to_string()),
        // `--max-budget-usd` given to `loki -p` is the run's `max_cost`.
        Err(e @ CoreError::Budget(_)) => ("error_max_budget_usd", e.to_string()),
        // An interrupt reads `interrupted`; a prompt a hook blocked, the hook's reason.
        Err(e) => ("error_during_execution", e.to_string()),
    }
}

/// `system/init`: the session, the model, the tools offered to the model (loki's names,
/// shown by Claude's), the permission mode and the sandbox commands run in.
fn init(program: &Program, model: &str, conversation: &Conversation) {
    let status = conversation.status();
    let mode = PermissionMode::parse(status.permission_mode).unwrap_or_default();
    // Several loki tools share one Claude name (`fs_cat` and `fs_read` are `Read`).
    let mut tools: Vec<String> = Vec::new();
    for name in conversation.offered_tools() {
        let claude = program.claude_name(&name);
        if !tools.contains(&claude) {
            tools.push(claude);
        }
    }
    program.send(&json!({
        "type": "system",
        "subtype": "init",
        "uuid": uuid(),
        "session_id": program.session_id,
        "apiKeySource": "none",
        "claude_code_version": PROTOCOL_LEVEL,
        "cwd": program.cwd,
        "tools": tools,
        "mcp_servers": program.mcp_servers.iter().map(|name| json!({"name": name, "status": "pending"})).collect::<Vec<_>>(),
        "model": model,
        "permissionMode": mode.claude_name(),
        "sandbox": status.sandbox,
        "slash_commands": [],
        "output_style": "default",
        "skills": [],
        "plugins": [],
    }));
}

/// A user message's content (a string, or text and image blocks) as loki's input.
fn user_input(content: &Value) -> UserInput {
    let mut input = UserInput::default();
    match content {
        Value::String(text) => input.text.clone_from(text),
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            for block in blocks {
                match block["type"].as_str() {
                    Some("text") => texts.push(block["text"].as_str().unwrap_or_default()),
                    Some("image") => {
                        let source = &block["source"];
                        if let (Some(mime), Some(data)) =
                            (source["media_type"].as_str(), source["data"].as_str())
                        {
                            input.images.push(format!("data:{mime};base64,{data}"));
                        }
                    }
                    _ => {}
                }
            }
            input.text = texts.join("\n");
        }
        _ => {}
    }
    input
}
