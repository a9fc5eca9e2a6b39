//! The messages a turn sends: the role's framing (instructions, examples, `__INPUT__`),
//! the history, and the new user message — or, for `.continue` / `.regenerate`, the
//! history up to the answer being extended or replaced. Also the input-size check and
//! what `--dry-run` shows.

use super::emitter::Sink;
use super::turn::TurnKind;
use crate::conversation::context::RequestContext;
use crate::error::CoreError;
use loki_protocol::event::{Event, Notice};
use loki_wire::message::{Content, ContentPart, Message, Role, Text};

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
    let (old, recent) = messages.split_at_mut(boundary);
    for message in old {
        if message.role != Role::Tool {
            continue;
        }
        let text = message.text_content();
        if text.len() <= STALE_KEEP {
            continue;
        }
        // The same result again in the turns sent whole: a pointer, shorter than a summary.
        if recent
            .iter()
            .any(|m| m.role == Role::Tool && m.content == message.content)
        {
            let id = message.tool_call_id.clone();
            *message = Message::text(Role::Tool, same_as_later(text.len()));
            message.tool_call_id = id;
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

/// What an image left out of a request becomes, so the model knows one was there.
const IMAGE_LEFT_OUT: &str = "[an image was here; not sent: this model cannot see images]";

/// Images are never sent to a model without vision: those the history holds (attached,
/// pasted or read by a tool while a vision model was in use, before `-m` or `.model`
/// switched) are replaced by a line saying so, and one notice per turn says how many.
/// What is sent only: the history keeps them for a model that can see them.
pub(super) fn leave_out_images(ctx: &RequestContext, messages: &mut [Message], sink: &Sink<'_>) {
    if ctx.model.config.supports_vision {
        return;
    }
    let dropped = drop_images(messages);
    if dropped > 0 {
        sink.emit(Event::Notice(Notice::info(format!(
            "{dropped} image(s) in the conversation not sent: `{}` cannot see images (-m a vision model to include them)",
            ctx.model.id()
        ))));
    }
}

/// Replaces every image part with [`IMAGE_LEFT_OUT`], a message of parts becoming plain
/// text (servers of text-only models may not take parts at all); how many were dropped.
fn drop_images(messages: &mut [Message]) -> usize {
    let mut dropped = 0;
    for message in messages {
        let Content::Parts(parts) = &message.content else {
            continue;
        };
        let images = count_images(message);
        if images == 0 {
            continue;
        }
        dropped += images;
        let text: Vec<&str> = parts
            .iter()
            .map(|p| match p {
                ContentPart::Text { text } => text.as_str(),
                ContentPart::ImageUrl { .. } => IMAGE_LEFT_OUT,
            })
            .collect();
        message.content = Content::Text(Text::from(text.join("\n")));
    }
    dropped
}

/// The image parts of `message`.
fn count_images(message: &Message) -> usize {
    match &message.content {
        Content::Parts(parts) => parts
            .iter()
            .filter(|p| matches!(p, ContentPart::ImageUrl { .. }))
            .count(),
        Content::Text(_) => 0,
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
        let repeated = last.get(&hash(text)).is_some_and(|&later| {
            // A hash match is checked against the text itself.
            later != i && messages[later].content == message.content
        });
        let note = if repeated {
            same_as_later(text.len())
        } else if starts_a_later_result(messages, i, text) {
            format!("[the beginning of a later result ({} bytes)]", text.len())
        } else {
            continue;
        };
        let id = message.tool_call_id.clone();
        messages[i] = Message::text(Role::Tool, note);
        messages[i].tool_call_id = id;
    }
}

/// What an earlier copy of a result sent whole later becomes.
fn same_as_later(bytes: usize) -> String {
    format!("[same as a later result ({bytes} bytes)]")
}

/// Whether the result at `i` is one the session shortened once its turn was over
/// (`trim_tool_results`) and a later result starts with what it kept: the same file read
/// again, now whole.
fn starts_a_later_result(messages: &[Message], i: usize, text: &str) -> bool {
    let Some(head) = crate::session::compress::trimmed_head(text) else {
        return false;
    };
    messages[i + 1..].iter().any(|m| {
        m.role == Role::Tool
            && matches!(&m.content, Content::Text(later)
                if later.starts_with(head)
                    && crate::session::compress::trimmed_head(later).is_none())
    })
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

    #[test]
    fn a_shortened_copy_of_a_later_whole_result_is_a_pointer() {
        let whole = "w ".repeat(6000);
        let mut history = vec![result("a", &whole)];
        crate::session::compress::trim_tool_results(
            &mut history,
            4000,
            crate::tokens::Counter::Estimate,
        );
        let shortened = history[0].text_content();
        assert!(
            shortened.len() > 400 && shortened.len() < 2000,
            "{shortened}"
        );
        let mut messages = vec![result("a", &shortened), result("b", &whole)];
        drop_repeated_results(&mut messages);
        assert_eq!(
            messages[0].text_content(),
            format!(
                "[the beginning of a later result ({} bytes)]",
                shortened.len()
            )
        );
        assert_eq!(messages[1].text_content(), whole);
        // A shortened result that no later result starts with is sent as it is.
        let mut alone = vec![result("a", &shortened), result("b", "other")];
        drop_repeated_results(&mut alone);
        assert_eq!(alone[0].text_content(), shortened);
    }

    #[test]
    fn a_stale_result_repeated_in_the_recent_turns_is_a_pointer_not_a_summary() {
        let big = "y".repeat(1000);
        let other = "z".repeat(1000);
        let mut messages = vec![
            Message::text(Role::User, "q0"),
            result("a", &big),
            result("b", &other),
            Message::text(Role::User, "q1"),
            result("c", &big),
        ];
        summarise_stale(&mut messages, 1);
        assert_eq!(messages[1].text_content(), same_as_later(1000));
        assert_eq!(messages[1].tool_call_id.as_deref(), Some("a"));
        assert!(
            messages[2]
                .text_content()
                .starts_with("[earlier a tool result")
        );
        assert_eq!(messages[4].text_content(), big);
    }
}

#[cfg(test)]
mod image_tests {
    use super::*;

    #[test]
    fn images_become_a_line_and_parts_plain_text() {
        let mut with_image = Message::text(Role::User, "");
        with_image.content = Content::Parts(vec![
            ContentPart::Text {
                text: "what is this?".into(),
            },
            ContentPart::ImageUrl {
                image_url: loki_wire::message::ImageUrl {
                    url: "data:image/png;base64,AA==".into(),
                },
            },
        ]);
        let mut messages = vec![with_image, Message::text(Role::Assistant, "a cat")];
        assert_eq!(drop_images(&mut messages), 1);
        assert_eq!(
            messages[0].content,
            Content::Text(Text::from(format!("what is this?\n{IMAGE_LEFT_OUT}")))
        );
        assert_eq!(messages[1].text_content(), "a cat");
        assert_eq!(drop_images(&mut messages), 0);
    }
}
