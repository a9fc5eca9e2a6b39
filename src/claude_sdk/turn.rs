//! The SDK run's turns, one after another: `system/init`, the prompt (the conversation
//! runs the program's `UserPromptSubmit` and `Stop` hooks around it), the messages, the
//! `result`; the conversation saved after each turn and closed when the input ends.

use std::sync::{Arc, PoisonError};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Work;
use super::control::Program;
use super::messages::{Messages, uuid};
use crate::config::permissions::PermissionMode;
use crate::conversation::Conversation;
use crate::error::CoreError;
use loki_protocol::command::Command;
use loki_protocol::emitter::Discard;
use loki_protocol::op::{Op, Reply};
use loki_protocol::op::{RunOptions, RunOutcome, UserInput};

/// The version of Claude Code's protocol spoken (what `system/init` reports).
const PROTOCOL_LEVEL: &str = "2.1.332";

/// What every turn needs.
pub(super) struct Settings {
    pub program: Arc<Program>,
    pub partial: bool,
    pub max_budget_usd: Option<f64>,
    pub max_turns: Option<usize>,
}

/// Runs the queued work until the input ends, then closes the conversation; the exit
/// status.
pub(super) async fn run_all(
    mut conversation: Conversation,
    mut queue: mpsc::UnboundedReceiver<Work>,
    settings: Settings,
) -> u8 {
    let mut spent = 0.0;
    while let Some(work) = queue.recv().await {
        let (op, what) = match work {
            Work::Prompt(message) => {
                spent += turn(&mut conversation, &settings, &message, spent).await;
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
    0
}

/// The `result` message that ends a turn, timed from the turn's start.
struct Report<'a> {
    program: &'a Program,
    started: Instant,
    /// What earlier turns cost.
    spent: f64,
}

impl Report<'_> {
    fn send(&self, subtype: &str, text: &str, outcome: &RunOutcome, cost: f64) {
        let elapsed = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.program.send(&json!({
            "type": "result",
            "subtype": subtype,
            "is_error": subtype != "success",
            "duration_ms": elapsed,
            "duration_api_ms": elapsed,
            "num_turns": outcome.steps,
            "result": text,
            "session_id": self.program.session_id,
            "total_cost_usd": self.spent + cost,
            "usage": {"input_tokens": outcome.usage.input_tokens, "output_tokens": outcome.usage.output_tokens},
            "stop_reason": outcome.finish_reason,
            "uuid": uuid(),
        }));
    }
}

/// One turn; what it cost.
async fn turn(
    conversation: &mut Conversation,
    settings: &Settings,
    message: &Value,
    spent: f64,
) -> f64 {
    let program = &settings.program;
    let report = Report {
        program,
        started: Instant::now(),
        spent,
    };
    let model = conversation.status().model;
    init(program, &model, conversation);
    if settings.max_budget_usd.is_some_and(|max| spent >= max) {
        let why = "the budget (--max-budget-usd) is spent";
        report.send("error_max_budget_usd", why, &RunOutcome::default(), 0.0);
        return 0.0;
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
    let cost = conversation.cost_of(outcome.usage).unwrap_or(0.0);
    let (subtype, text) = verdict(&ran, &outcome, settings, spent + cost);
    report.send(subtype, &text, &outcome, cost);
    if let Err(e) = conversation.save_after_turn(&Discard).await {
        tracing::warn!("claude sdk: cannot save the session: {e}");
    }
    cost
}

/// How a turn that ran ends: the `result` subtype and its text. `total`: what the run
/// has cost with this turn.
fn verdict(
    ran: &Result<Reply, CoreError>,
    outcome: &RunOutcome,
    settings: &Settings,
    total: f64,
) -> (&'static str, String) {
    let over_turns = settings.max_turns.is_some_and(|max| {
        outcome.steps >= max && outcome.finish_reason.as_deref() == Some("tool_calls")
    });
    match ran {
        Ok(_) if settings.max_budget_usd.is_some_and(|max| total >= max) => {
            ("error_max_budget_usd", outcome.text.clone())
        }
        Ok(_) if over_turns => ("error_max_turns", outcome.text.clone()),
        Ok(_) => ("success", outcome.text.clone()),
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
