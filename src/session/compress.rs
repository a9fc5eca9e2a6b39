//! Keeping long sessions inside the context window: when a session's estimated tokens
//! reach the compression threshold, its older messages are summarised by the model and
//! replaced by the summary; the newest exchanges stay verbatim.
//!
//! Token counts come from [`crate::tokens`]: exact for OpenAI-family models, estimated
//! for others; they are for budgeting, not billing.

use crate::tokens::{Counter, PER_MESSAGE};
use loki_wire::message::{Content, ContentPart, Message, Role};

/// Messages at the end of the conversation that are never summarised.
pub const KEEP_RECENT: usize = 4;

/// Default prompt asking for the summary.
pub const DEFAULT_SUMMARIZATION_PROMPT: &str =
    "Summarize the discussion briefly in 200 words or less to use as a prompt for future context.";

/// Default prefix of the summary put back into the conversation.
pub const DEFAULT_SUMMARY_CONTEXT_PROMPT: &str =
    "This is a summary of the chat history as a recap: ";

/// Estimated tokens of a conversation: about four characters per token for ASCII text,
/// one token per character for other scripts (CJK text tokenises densely), plus four
/// tokens of framing per message and a fixed cost per image.
pub fn estimate_tokens(messages: &[Message]) -> usize {
    count_tokens(messages, Counter::Estimate)
}

/// Tokens of a conversation counted with `counter`, with the same framing and image
/// costs as [`estimate_tokens`].
pub fn count_tokens(messages: &[Message], counter: Counter) -> usize {
    let text_tokens = |text: &str| counter.count(text);
    messages
        .iter()
        .map(|m| {
            let text = match &m.content {
                Content::Text(t) => text_tokens(t),
                Content::Parts(parts) => parts
                    .iter()
                    .map(|p| match p {
                        ContentPart::Text { text } => text_tokens(text),
                        ContentPart::ImageUrl { .. } => 765,
                    })
                    .sum(),
            };
            let calls: usize = m
                .tool_calls
                .iter()
                .map(|c| text_tokens(&c.arguments) + 8)
                .sum();
            text + calls + PER_MESSAGE
        })
        .sum()
}

/// Tokens a single tool result may keep once its turn is over, as a share of the
/// threshold: the model has read it and answered; a later turn can call the tool again.
const TOOL_RESULT_SHARE: usize = 8;

/// Shortens tool results of finished turns that are larger than an eighth of `threshold`
/// tokens to their beginning and a note, so that reading a few big files does not push a
/// session over the threshold turn after turn. True when something was shortened.
pub fn trim_tool_results(messages: &mut [Message], threshold: usize, counter: Counter) -> bool {
    let limit = (threshold / TOOL_RESULT_SHARE).max(16);
    let mut trimmed = false;
    for message in messages.iter_mut().filter(|m| m.role == Role::Tool) {
        let Content::Text(text) = &message.content else {
            continue;
        };
        if counter.count(text) <= limit {
            continue;
        }
        // About four characters a token for ASCII, one for other scripts: keep the
        // beginning that certainly fits.
        let head: String = text.chars().take(limit * 2).collect();
        let left_out = text.chars().count() - head.chars().count();
        message.content =
            Content::Text(format!("{head}{TRIM_NOTE_START}{left_out}{TRIM_NOTE_END}").into());
        trimmed = true;
    }
    trimmed
}

/// How the note after a shortened tool result starts and ends (the count between).
const TRIM_NOTE_START: &str = "\n[… ";
const TRIM_NOTE_END: &str = " more characters of this tool result were left out to keep \
the session under compression_threshold; call the tool again to see them]";

/// The beginning a shortened tool result kept, when `text` is one (`trim_tool_results`).
pub fn trimmed_head(text: &str) -> Option<&str> {
    let rest = text.strip_suffix(TRIM_NOTE_END)?;
    let at = rest.rfind(TRIM_NOTE_START)?;
    rest[at + TRIM_NOTE_START.len()..]
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| &text[..at])
}

/// Lines of a tool result a summary request keeps.
const SUMMARY_RESULT_LINES: usize = 6;

/// Characters of a tool result a summary request keeps.
const SUMMARY_RESULT_CHARS: usize = 600;

/// The messages a summary (or a memory extraction) is asked about: `messages` with every
/// tool result cut to its first lines and a count of what was left out. The model read
/// those results in full when it answered; what it concluded is in its own messages, so
/// resending every file it read only to have it summarised away is waste.
pub fn for_summary(messages: &[Message]) -> Vec<Message> {
    messages
        .iter()
        .map(|message| {
            let Content::Text(text) = &message.content else {
                return message.clone();
            };
            if message.role != Role::Tool || text.chars().count() <= SUMMARY_RESULT_CHARS {
                return message.clone();
            }
            let mut head: String = text
                .lines()
                .take(SUMMARY_RESULT_LINES)
                .collect::<Vec<_>>()
                .join("\n");
            if head.chars().count() > SUMMARY_RESULT_CHARS {
                head = head.chars().take(SUMMARY_RESULT_CHARS).collect();
            }
            let lines = text.lines().count();
            let kept_lines = head.lines().count();
            let mut shortened = message.clone();
            shortened.content = Content::Text(format!(
                "{head}\n[… {} more lines ({} bytes) of this tool result are not repeated here]",
                lines.saturating_sub(kept_lines),
                text.len().saturating_sub(head.len()),
            )
            .into());
            shortened
        })
        .collect()
}

/// Splits the conversation into the part to summarise and the part kept verbatim: at most
/// the last [`KEEP_RECENT`] messages, starting at a user message, and no more than
/// `budget` tokens (fewer messages, down to none, when the recent ones are larger).
/// `None` when there is too little to summarise: nothing but an earlier summary would go.
pub fn split_for_summary(
    messages: &[Message],
    budget: usize,
    counter: Counter,
) -> Option<(Vec<Message>, Vec<Message>)> {
    if messages.len() <= KEEP_RECENT {
        return None;
    }
    let mut cut = messages.len() - KEEP_RECENT;
    // Start the kept tail at a user message so the conversation still alternates.
    while cut > 0 && messages[cut].role != Role::User {
        cut -= 1;
    }
    // Shrink the tail until it fits the budget: the next user message, or nothing.
    while cut < messages.len() && count_tokens(&messages[cut..], counter) > budget {
        cut += 1;
        while cut < messages.len() && messages[cut].role != Role::User {
            cut += 1;
        }
    }
    if messages[..cut].iter().all(|m| m.role == Role::System) {
        return None;
    }
    Some((messages[..cut].to_vec(), messages[cut..].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_request_gets_the_first_lines_of_big_tool_results() {
        let big: String = (0..400)
            .map(|n| format!("line {n} of the file\n"))
            .collect();
        let mut result = Message::text(Role::Tool, big.clone());
        result.tool_call_id = Some("call_1".into());
        let messages = vec![
            Message::text(Role::User, "read it"),
            result,
            Message::text(Role::Tool, "short result"),
            Message::text(Role::Assistant, "it has 400 lines"),
        ];
        let sent = for_summary(&messages);
        let text = sent[1].text_content();
        assert!(text.starts_with("line 0 of the file\nline 1"), "{text}");
        assert!(!text.contains("line 6 of"), "{text}");
        assert!(text.contains("394 more lines"), "{text}");
        assert!(text.len() < 400, "{}", text.len());
        assert_eq!(sent[1].tool_call_id.as_deref(), Some("call_1"));
        assert_eq!(sent[2].text_content(), "short result");
        assert_eq!(sent[3].text_content(), "it has 400 lines");
        assert!(big.len() > 8000);
    }

    #[test]
    fn estimates_scale_with_text() {
        let short = vec![Message::text(Role::User, "hi")];
        let long = vec![Message::text(Role::User, "word ".repeat(400))];
        assert_eq!(estimate_tokens(&short), 5);
        assert_eq!(estimate_tokens(&long), 504);
        assert_eq!(estimate_tokens(&[Message::text(Role::User, "漢字")]), 6);
    }

    #[test]
    fn split_keeps_the_recent_tail_starting_at_a_user_message() {
        let m: Vec<Message> = (0..10)
            .map(|i| {
                Message::text(
                    if i % 2 == 0 {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    format!("m{i}"),
                )
            })
            .collect();
        let (old, kept) = split_for_summary(&m, usize::MAX, Counter::Estimate).unwrap();
        assert_eq!(old.len(), 6);
        assert_eq!(kept[0].text_content(), "m6");
        assert!(split_for_summary(&m[..4], usize::MAX, Counter::Estimate).is_none());
        // A tail over the budget shrinks to the last exchange, then to nothing.
        let (old, kept) = split_for_summary(&m, 12, Counter::Estimate).unwrap();
        assert_eq!((old.len(), kept.len()), (8, 2));
        let (old, kept) = split_for_summary(&m, 5, Counter::Estimate).unwrap();
        assert_eq!((old.len(), kept.len()), (10, 0));
        // Nothing but an earlier summary to summarise: no new summary.
        let mut again = vec![Message::text(Role::System, "summary")];
        again.extend(m[6..].iter().cloned());
        assert!(split_for_summary(&again, usize::MAX, Counter::Estimate).is_none());
    }

    #[test]
    fn big_tool_results_are_shortened() {
        let mut m = vec![
            Message::text(Role::User, "read"),
            Message::text(Role::Tool, "x".repeat(4000)),
            Message::text(Role::Tool, "small"),
        ];
        assert!(trim_tool_results(&mut m, 1000, Counter::Estimate));
        assert!(estimate_tokens(&m[1..2]) <= 1000 / 8 + PER_MESSAGE + 40);
        assert!(m[1].text_content().contains("left out"));
        assert_eq!(m[2].text_content(), "small");
        assert!(!trim_tool_results(&mut m, 1000, Counter::Estimate));
    }
}
