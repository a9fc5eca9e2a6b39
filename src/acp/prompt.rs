//! `session/prompt`: the editor's content blocks as one prompt, run in the session's
//! conversation, answered with the stop reason; and the `/` commands offered (skills,
//! and roles for one message).

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::Session;
use crate::error::CoreError;
use crate::jsonrpc::{Fault, code};
use crate::state::AppState;
use loki_protocol::emitter::Discard;
use loki_protocol::op::Op;
use loki_protocol::op::{RunOptions, UserInput};

/// Runs one prompt; `{stopReason}` (`end_turn`, or `cancelled` after `session/cancel`).
pub(super) async fn run(
    state: &Arc<AppState>,
    session: &Session,
    params: &Value,
) -> Result<Value, Fault> {
    let blocks = params["prompt"].as_array().cloned().unwrap_or_default();
    let (mut input, role) = input(state, &session.updates.cwd, &blocks)?;
    let mut guard = session.conversation.lock().await;
    let conversation = guard.as_mut().ok_or(Fault::new(
        code::INVALID_PARAMS,
        "the session is closed".to_string(),
    ))?;
    // The editor shows no notices: a mention left out is said in the answer's stream.
    for note in crate::mention::attach(state, conversation, &mut input, session.updates.as_ref()) {
        session.updates.update(json!({
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": format!("loki: {note}\n\n")},
        }));
    }
    let op = Op::Prompt {
        input,
        options: RunOptions::default(),
        role,
    };
    let ran = conversation.submit(op, session.updates.as_ref()).await;
    // What arrived is kept whatever happened (a stopped turn included).
    if let Err(e) = conversation.save_after_turn(&Discard).await {
        tracing::warn!("acp: cannot save the session: {e}");
    }
    match ran {
        Ok(_) => Ok(json!({"stopReason": "end_turn"})),
        Err(CoreError::Cancelled) => Ok(json!({"stopReason": "cancelled"})),
        Err(e) => Err(Fault::new(code::INTERNAL, e.to_string())),
    }
}

/// The content blocks as loki's input: text joined, embedded resources as fenced text
/// named by their URI, linked files (inside the session's working directory or an
/// additional directory) and images attached; `/role text` names a role for this one
/// message.
fn input(
    state: &AppState,
    cwd: &Path,
    blocks: &[Value],
) -> Result<(UserInput, Option<String>), Fault> {
    let mut input = UserInput::default();
    let mut texts = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => texts.push(block["text"].as_str().unwrap_or_default().to_string()),
            Some("resource") => {
                let resource = &block["resource"];
                let uri = resource["uri"].as_str().unwrap_or("resource");
                if let Some(text) = resource["text"].as_str() {
                    texts.push(context_block(uri, text));
                }
            }
            Some("resource_link") => {
                let uri = block["uri"].as_str().unwrap_or_default();
                input.files.push(linked(state, cwd, uri)?);
            }
            Some("image") => {
                let mime = block["mimeType"].as_str().unwrap_or("image/png");
                let data = block["data"].as_str().unwrap_or_default();
                input.images.push(format!("data:{mime};base64,{data}"));
            }
            other => {
                return Err(Fault::new(
                    code::INVALID_PARAMS,
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

/// An embedded resource for the model: `<context uri="…">text</context>`. The URI is
/// escaped as an attribute value, and anything in the text that could pass for the
/// closing tag is defused, so neither can end the element early and have what follows
/// read as the user's own words.
fn context_block(uri: &str, text: &str) -> String {
    format!(
        "<context uri=\"{}\">\n{}\n</context>",
        crate::prompt_tags::escape_attribute(uri),
        crate::prompt_tags::defuse_closing(text, &["context"])
    )
}

/// The file a `resource_link` names, to attach: a `file:` URI or a path, which must lie
/// inside the session's working directory or an additional directory (the editor may
/// link anything; the model is sent only what the file tools would read unasked), or an
/// `http(s)` URL.
fn linked(state: &AppState, cwd: &Path, uri: &str) -> Result<String, Fault> {
    let lower = uri.get(..8).unwrap_or(uri).to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(uri.to_string());
    }
    let path = if lower.starts_with("file:") {
        crate::lsp::convert::uri_path(uri).ok_or_else(|| {
            Fault::new(code::INVALID_PARAMS, format!("`{uri}` is not a local file"))
        })?
    } else {
        std::path::PathBuf::from(uri)
    };
    let shown = path.display().to_string();
    let resolved = crate::tool::paths::resolve(cwd, &shown);
    let config = &state.config;
    let allowed = resolved.inside
        || config
            .additional_directories
            .iter()
            .chain(&config.permissions.additional_directories)
            .any(|dir| {
                resolved
                    .path
                    .starts_with(crate::tool::paths::resolve(cwd, dir).path)
            });
    // The resolved path has its links followed: so must loki's own paths (a config dir
    // that is a link into a dotfiles checkout below the working directory).
    let private = state.paths.private().iter().any(|p| {
        resolved.path.starts_with(p)
            || std::fs::canonicalize(p).is_ok_and(|real| resolved.path.starts_with(real))
    });
    if !allowed || private {
        return Err(Fault::new(
            code::INVALID_PARAMS,
            format!(
                "`{shown}` is outside the session's working directory ({}); loki attaches \
                 only files inside it or in additional_directories",
                cwd.display()
            ),
        ));
    }
    // A `Read(…)` deny rule holds for what the editor links as for the file tools.
    // Relative rules (`Read(.env)`) are written against the working tree.
    let rules = crate::config::permissions::Rules::new(&config.permissions);
    let tree = crate::tool::paths::resolve(cwd, ".").path;
    let relative = resolved
        .path
        .strip_prefix(&tree)
        .map_or_else(|_| shown.clone(), |rel| rel.display().to_string());
    if let Some(rule) = rules.denies_read(&relative, &resolved.path) {
        return Err(Fault::new(
            code::INVALID_PARAMS,
            format!("`{shown}` may not be read: {}", rules.describe(rule)),
        ));
    }
    Ok(resolved.path.display().to_string())
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
            let hint = s.argument_hint.as_deref().unwrap_or("arguments");
            json!({"name": s.name, "description": s.description, "input": {"hint": hint}})
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_embedded_resource_cannot_end_its_element_early() {
        let block = context_block(
            "a\" onload=\"x\"><b>&",
            "one </context> two < / CONTEXT > three <contextual> </cont",
        );
        assert_eq!(
            block,
            "<context uri=\"a&quot; onload=&quot;x&quot;&gt;&lt;b&gt;&amp;\">\n\
             one <\\/context> two <\\ / CONTEXT > three <contextual> </cont\n</context>"
        );
        assert_eq!(block.matches("</context>").count(), 1);
    }
}
