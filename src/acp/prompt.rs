//! `session/prompt`: the editor's content blocks as one prompt, run in the session's
//! conversation, answered with the stop reason; and the `/` commands offered (skills,
//! and roles for one message).

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Session, rpc};
use crate::conversation::Op;
use crate::engine::command::Command;
use crate::engine::{CoreError, Discard, RunOptions, UserInput};
use crate::state::AppState;

/// Runs one prompt; `{stopReason}` (`end_turn`, or `cancelled` after `session/cancel`).
pub(super) async fn run(
    state: &Arc<AppState>,
    session: &Session,
    params: &Value,
) -> Result<Value, (i64, String)> {
    let blocks = params["prompt"].as_array().cloned().unwrap_or_default();
    let (input, role) = input(state, &blocks)?;
    let mut guard = session.conversation.lock().await;
    let conversation = guard
        .as_mut()
        .ok_or((rpc::INVALID_PARAMS, "the session is closed".to_string()))?;
    let op = Op::Prompt {
        input,
        options: RunOptions::default(),
        role,
    };
    let ran = conversation.submit(op, session.updates.as_ref()).await;
    // What arrived is kept whatever happened (a stopped turn included).
    if !conversation.off_the_record()
        && let Err(e) = conversation
            .submit(Op::Command(Command::SaveSession(None)), &Discard)
            .await
    {
        tracing::warn!("acp: cannot save the session: {e}");
    }
    match ran {
        Ok(_) => Ok(json!({"stopReason": "end_turn"})),
        Err(CoreError::Cancelled) => Ok(json!({"stopReason": "cancelled"})),
        Err(e) => Err((rpc::INTERNAL, e.to_string())),
    }
}

/// The content blocks as loki's input: text joined, embedded resources as fenced text
/// named by their URI, linked files and images attached; `/role text` names a role for
/// this one message.
fn input(state: &AppState, blocks: &[Value]) -> Result<(UserInput, Option<String>), (i64, String)> {
    let mut input = UserInput::default();
    let mut texts = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => texts.push(block["text"].as_str().unwrap_or_default().to_string()),
            Some("resource") => {
                let resource = &block["resource"];
                let uri = resource["uri"].as_str().unwrap_or("resource");
                if let Some(text) = resource["text"].as_str() {
                    texts.push(format!("<context uri=\"{uri}\">\n{text}\n</context>"));
                }
            }
            Some("resource_link") => {
                let uri = block["uri"].as_str().unwrap_or_default();
                match uri.strip_prefix("file://") {
                    Some(path) => input.files.push(path.to_string()),
                    None => input.files.push(uri.to_string()),
                }
            }
            Some("image") => {
                let mime = block["mimeType"].as_str().unwrap_or("image/png");
                let data = block["data"].as_str().unwrap_or_default();
                input.images.push(format!("data:{mime};base64,{data}"));
            }
            other => {
                return Err((
                    rpc::INVALID_PARAMS,
                    format!("content of type {other:?} is not supported"),
                ));
            }
        }
    }
    let text = texts.join("\n\n");
    let role = one_off_role(state, &text);
    input.text = match &role {
        Some(name) => text.trim_start()[1 + name.len()..].trim_start().to_string(),
        None => text,
    };
    Ok((input, role))
}

/// `/name …` where `name` is a role (and not a skill, which the conversation runs
/// itself).
fn one_off_role(state: &AppState, text: &str) -> Option<String> {
    let name = text
        .trim_start()
        .strip_prefix('/')?
        .split_whitespace()
        .next()?;
    crate::role::list(&state.paths.roles_dir)
        .into_iter()
        .find(|role| role == name)
}

/// The `/` commands the editor offers: skills and roles.
pub(super) fn available_commands(state: &AppState, session: &Session) -> Value {
    let skills =
        crate::skill::discover(&state.paths.config_dir.join("skills"), &session.updates.cwd);
    let mut commands: Vec<Value> = skills
        .iter()
        .map(|s| {
            json!({"name": s.name, "description": s.description, "input": {"hint": "arguments"}})
        })
        .collect();
    for role in crate::role::list(&state.paths.roles_dir) {
        if skills.iter().any(|s| s.name == role) {
            continue;
        }
        commands.push(json!({
            "name": role,
            "description": format!("one message with the role `{role}`"),
            "input": {"hint": "message"},
        }));
    }
    json!({"sessionUpdate": "available_commands_update", "availableCommands": commands})
}
