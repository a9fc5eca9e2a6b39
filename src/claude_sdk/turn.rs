//! The SDK run's turns, one after another: `system/init`, the `UserPromptSubmit` hooks,
//! the prompt, the messages, the `result`, the `Stop` hooks; the conversation saved after
//! each turn and closed when the input ends.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Work;
use super::control::{Mode, Program};
use super::messages::{Messages, uuid};
use crate::conversation::{Conversation, Op};
use crate::engine::command::Command;
use crate::engine::{CoreError, Discard, RunOptions, RunOutcome, UserInput};

/// The version of Claude Code's protocol spoken (what `system/init` reports).
const PROTOCOL_LEVEL: &str = "2.1.332";

/// What every turn needs.
pub(super) struct Settings {
    pub program: Arc<Program>,
    pub mode: Arc<Mutex<Mode>>,
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
    let mut synced = None;
    while let Some(work) = queue.recv().await {
        match work {
            Work::Prompt(message) => {
                synced = sync_mode(&mut conversation, &settings, synced).await;
                spent += turn(&mut conversation, &settings, &message, spent).await;
            }
            Work::SetModel(model) => {
                let op = Op::Command(Command::SetModel(model));
                if let Err(e) = conversation.submit(op, &Discard).await {
                    tracing::warn!("claude sdk: set_model: {e}");
                }
            }
        }
    }
    let closed = conversation.close(&Discard).await;
    if let Err(e) = &closed.saved {
        tracing::warn!("claude sdk: cannot save the session: {e}");
        return 1;
    }
    0
}

/// The SDK's permission mode becomes the conversation's before each turn, so loki's own
/// rules for it hold too: in `plan`, only loki's read-only tools run unasked (an MCP
/// tool's `readOnlyHint` is not taken on trust); in `acceptEdits`, loki's file edits run.
/// A change in the middle of a turn reaches that turn's approvals through the approver.
/// Until the program names a mode other than `default`, the configured one is left.
async fn sync_mode(
    conversation: &mut Conversation,
    settings: &Settings,
    synced: Option<Mode>,
) -> Option<Mode> {
    let mode = *settings.mode.lock().unwrap_or_else(PoisonError::into_inner);
    if synced == Some(mode) || (synced.is_none() && mode == Mode::Default) {
        return synced;
    }
    let op = Op::Command(Command::Set {
        key: "permission_mode".into(),
        value: mode.loki_name().into(),
    });
    if let Err(e) = conversation.submit(op, &Discard).await {
        tracing::warn!("claude sdk: permission mode {}: {e}", mode.name());
    }
    Some(mode)
}

/// One turn; what it cost.
async fn turn(
    conversation: &mut Conversation,
    settings: &Settings,
    message: &Value,
    spent: f64,
) -> f64 {
    let program = &settings.program;
    let started = Instant::now();
    let model = conversation.model_id();
    init(
        settings,
        &model,
        conversation.status().sandbox,
        &conversation.offered_tools(),
    );
    let mut input = user_input(&message["message"]["content"]);
    let result = |subtype: &str, is_error: bool, text: &str, outcome: &RunOutcome, cost: f64| {
        let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        program.out.send(&json!({
            "type": "result",
            "subtype": subtype,
            "is_error": is_error,
            "duration_ms": elapsed,
            "duration_api_ms": elapsed,
            "num_turns": outcome.steps,
            "result": text,
            "session_id": program.session_id,
            "total_cost_usd": spent + cost,
            "usage": {"input_tokens": outcome.usage.input_tokens, "output_tokens": outcome.usage.output_tokens},
            "stop_reason": outcome.finish_reason,
            "uuid": uuid(),
        }));
    };
    if settings.max_budget_usd.is_some_and(|max| spent >= max) {
        result(
            "error_max_budget_usd",
            true,
            "the budget (--max-budget-usd) is spent",
            &RunOutcome::default(),
            0.0,
        );
        return 0.0;
    }
    let hooks = program
        .run_hooks(
            "UserPromptSubmit",
            None,
            None,
            json!({"prompt": input.text}),
        )
        .await;
    if let Some(reason) = blocked(&hooks) {
        result(
            "error_during_execution",
            true,
            &reason,
            &RunOutcome::default(),
            0.0,
        );
        return 0.0;
    }
    for context in hooks
        .iter()
        .filter_map(|h| h["hookSpecificOutput"]["additionalContext"].as_str())
    {
        input.text = format!("{}\n\n{context}", input.text);
    }
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
        Ok(reply) => reply_outcome(reply),
        Err(_) => RunOutcome::default(),
    };
    let cost = conversation.cost_of(outcome.usage).unwrap_or(0.0);
    let over_turns = settings.max_turns.is_some_and(|max| {
        outcome.steps >= max && outcome.finish_reason.as_deref() == Some("tool_calls")
    });
    match &ran {
        Ok(_)
            if settings
                .max_budget_usd
                .is_some_and(|max| spent + cost >= max) =>
        {
            result("error_max_budget_usd", true, &outcome.text, &outcome, cost);
        }
        Ok(_) if over_turns => result("error_max_turns", true, &outcome.text, &outcome, cost),
        Ok(_) => result("success", false, &outcome.text, &outcome, cost),
        Err(CoreError::Cancelled) => result(
            "error_during_execution",
            true,
            "interrupted",
            &outcome,
            cost,
        ),
        Err(e) => result(
            "error_during_execution",
            true,
            &e.to_string(),
            &outcome,
            cost,
        ),
    }
    let _ = program
        .run_hooks("Stop", None, None, json!({"stop_hook_active": false}))
        .await;
    if !conversation.off_the_record()
        && let Err(e) = conversation
            .submit(Op::Command(Command::SaveSession(None)), &Discard)
            .await
    {
        tracing::warn!("claude sdk: cannot save the session: {e}");
    }
    cost
}

fn reply_outcome(reply: &crate::conversation::Reply) -> RunOutcome {
    match reply {
        crate::conversation::Reply::Ran(outcome) => outcome.clone(),
        _ => RunOutcome::default(),
    }
}

/// `system/init`: the session, the model, the tools offered to the model (`offered`,
/// loki's names, shown by Claude's), the permission mode and the sandbox commands run in.
fn init(settings: &Settings, model: &str, sandbox: &str, offered: &[String]) {
    let program = &settings.program;
    let mode = settings
        .mode
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .name();
    // Several loki tools share one Claude name (`fs_cat` and `fs_read` are `Read`).
    let mut tools: Vec<String> = Vec::new();
    for name in offered {
        let claude = program.claude_name(name);
        if !tools.contains(&claude) {
            tools.push(claude);
        }
    }
    program.out.send(&json!({
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
        "permissionMode": mode,
        "sandbox": sandbox,
        "slash_commands": [],
        "output_style": "default",
        "skills": [],
        "plugins": [],
    }));
}

/// A hook that stopped the prompt: its reason.
fn blocked(outputs: &[Value]) -> Option<String> {
    outputs.iter().find_map(|o| {
        (o["decision"] == "block" || o["continue"] == json!(false)).then(|| {
            o["reason"]
                .as_str()
                .or(o["stopReason"].as_str())
                .unwrap_or("a UserPromptSubmit hook blocked the prompt")
                .to_string()
        })
    })
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
