//! The messages a turn sends: the role's framing (instructions, examples, `__INPUT__`),
//! the history, and the new user message — or, for `.continue` / `.regenerate`, the
//! history up to the answer being extended or replaced. Also the input-size check and
//! what `--dry-run` shows.

use super::turn::TurnKind;
use crate::conversation::context::RequestContext;
use crate::error::CoreError;
use loki_wire::message::{Message, Role};

/// The messages for `kind`, and the kind with the user message as the role framed it.
/// What the model is told in plan mode.
const PLAN_MODE: &str = "You are in plan mode: only tools that read run (no edits, no \
commands). Investigate what you need, then answer with a concrete, numbered plan of the \
changes you would make and how you would check them. The user will switch modes to let \
you carry it out.";

pub(super) fn build(
    ctx: &RequestContext,
    kind: TurnKind,
) -> Result<(TurnKind, Vec<Message>), CoreError> {
    let last_is_assistant = ctx
        .history
        .last()
        .is_some_and(|m| m.role == Role::Assistant);
    match &kind {
        TurnKind::Continue if !last_is_assistant => {
            return Err(CoreError::Conflict(
                "there is no answer to continue yet".into(),
            ));
        }
        TurnKind::Resume if ctx.history.is_empty() || last_is_assistant => {
            return Err(CoreError::InvalidRequest(
                "nothing to answer: the conversation ends with an answer".into(),
            ));
        }
        TurnKind::Regenerate if !last_is_assistant => {
            return Err(CoreError::Conflict(
                "there is no answer to regenerate yet".into(),
            ));
        }
        _ => {}
    }
    // The role frames the conversation: instructions and examples first, and for
    // `__INPUT__` roles a rewritten user message.
    let mut kind = kind;
    let mut prefix = match &ctx.role {
        Some(role) => role.frame(Message::text(Role::User, String::new())),
        None => vec![Message::text(Role::User, String::new())],
    };
    prefix.pop();
    if let (Some(role), TurnKind::New(user)) = (&ctx.role, &kind) {
        let mut framed = role.frame(user.clone());
        if let Some(last) = framed.pop() {
            kind = TurnKind::New(last);
        }
    }
    let mut messages = Vec::with_capacity(prefix.len() + ctx.history.len() + 2);
    messages.extend(prefix);
    // Plan mode is said in the system message (sent only, never stored).
    if ctx.tool_policy.mode() == crate::config::permissions::PermissionMode::Plan {
        match messages.first_mut().filter(|m| m.role == Role::System) {
            Some(system) => system.append_text(&format!("\n\n{PLAN_MODE}")),
            None => messages.insert(0, Message::text(Role::System, PLAN_MODE)),
        }
    }
    messages.extend(ctx.history.iter().cloned());
    summarise_stale(&mut messages[..], ctx.stale_tool_results);
    match &kind {
        TurnKind::New(user) => messages.push(user.clone()),
        TurnKind::Continue | TurnKind::Resume => {}
        TurnKind::Regenerate => {
            messages.pop();
        }
    }
    Ok((kind, messages))
}

/// Replaces the results of tool calls made more than `turns` user messages ago with one
/// line each (what is sent only; the history keeps them). The model can call the tool
/// again when it needs the whole result.
fn summarise_stale(messages: &mut [Message], turns: usize) {
    if turns == 0 {
        return;
    }
    let users: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User && m.tool_call_id.is_none())
        .map(|(i, _)| i)
        .collect();
    let Some(&boundary) = users.len().checked_sub(turns).and_then(|k| users.get(k)) else {
        return;
    };
    let names: std::collections::HashMap<String, String> = messages[..boundary]
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .map(|c| (c.id.clone(), c.name.clone()))
        .collect();
    for message in &mut messages[..boundary] {
        if message.role != Role::Tool {
            continue;
        }
        let text = message.text_content();
        if text.len() <= STALE_KEEP {
            continue;
        }
        let tool = message
            .tool_call_id
            .as_ref()
            .and_then(|id| names.get(id))
            .map_or("a tool", String::as_str);
        let first: String = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .chars()
            .take(60)
            .collect();
        let summary = format!(
            "[earlier {tool} result ({} bytes) not repeated; call again to see it. Starts: {first}…]",
            text.len()
        );
        let id = message.tool_call_id.clone();
        *message = Message::text(Role::Tool, summary);
        message.tool_call_id = id;
    }
}

/// Replaces a tool result that a later result repeats byte for byte (the same file read
/// again, the same command run again) with a one-line pointer to the later one: what is
/// sent only, nothing is lost, and the model reads the content once.
pub(super) fn drop_repeated_results(messages: &mut [Message]) {
    use std::collections::HashMap;
    use std::hash::{Hash, Hasher};
    let hash = |text: &str| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        h.finish()
    };
    // The last index of each large result's content.
    let mut last: HashMap<u64, usize> = HashMap::new();
    for (i, m) in messages.iter().enumerate() {
        if m.role == Role::Tool
            && let loki_wire::message::Content::Text(text) = &m.content
            && text.len() > STALE_KEEP
        {
            last.insert(hash(text), i);
        }
    }
    for i in 0..messages.len() {
        let message = &messages[i];
        if message.role != Role::Tool {
            continue;
        }
        let loki_wire::message::Content::Text(text) = &message.content else {
            continue;
        };
        if text.len() <= STALE_KEEP {
            continue;
        }
        let Some(&later) = last.get(&hash(text)) else {
            continue;
        };
        // A hash match is checked against the text itself.
        if later == i || messages[later].content != message.content {
            continue;
        }
        let note = format!(
            "[{} bytes, the same as a later result in this conversation, which is sent whole]",
            text.len()
        );
        let id = message.tool_call_id.clone();
        messages[i] = Message::text(Role::Tool, note);
        messages[i].tool_call_id = id;
    }
}

/// Tool results this short are sent whole however old they are.
const STALE_KEEP: usize = 400;

/// Refuses a request over the model's `max_input_tokens` before anything is sent.
pub(super) fn check_input_limit(
    ctx: &RequestContext,
    messages: &[Message],
) -> Result<(), CoreError> {
    let Some(max) = ctx.model.config.max_input_tokens.filter(|m| *m > 0) else {
        return Ok(());
    };
    let Some(tokens) = super::tokens_over(ctx, &[messages], max as usize) else {
        return Ok(());
    };
    let hint = if ctx.session.is_some() {
        "shorten the input or start a new session"
    } else {
        "shorten the input or use a model with a larger context"
    };
    Err(CoreError::TooLarge(format!(
        "Exceed max_input_tokens limit: the request is about {tokens} tokens and `{}` accepts {max} (max_input_tokens); {hint}",
        ctx.model.id()
    )))
}

/// The text `--dry-run` shows: the user message alone when it is the whole request,
/// otherwise every message under a role heading.
pub(super) fn dry_run_text(messages: &[Message]) -> String {
    let describe = |m: &Message| {
        let mut text = m.text_content();
        if let loki_wire::message::Content::Parts(parts) = &m.content {
            for part in parts {
                if let loki_wire::message::ContentPart::ImageUrl { image_url } = part {
                    let head: String = image_url.url.chars().take(40).collect();
                    text.push_str(&format!("\n[image: {head}…]"));
                }
            }
        }
        text
    };
    match messages {
        [only] => describe(only),
        _ => messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    Role::Tool => "tool",
                };
                format!("--- {role} ---\n{}", describe(m))
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
    }
}

#[cfg(test)]
mod repeated_tests {
    use super::*;

    fn result(id: &str, text: &str) -> Message {
        let mut m = Message::text(Role::Tool, text);
        m.tool_call_id = Some(id.into());
        m
    }

    #[test]
    fn an_earlier_copy_of_a_later_result_is_a_pointer() {
        let big = "x".repeat(1000);
        let mut messages = vec![result("a", &big), result("b", "short"), result("c", &big)];
        drop_repeated_results(&mut messages);
        assert!(
            messages[0]
                .text_content()
                .contains("same as a later result")
        );
        assert_eq!(messages[0].tool_call_id.as_deref(), Some("a"));
        assert_eq!(messages[1].text_content(), "short");
        assert_eq!(messages[2].text_content(), big);
    }
}
