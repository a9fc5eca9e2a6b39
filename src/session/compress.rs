//! Keeping long sessions inside the context window: when a session's estimated tokens
//! reach the compression threshold, its older messages are summarised by the model and
//! replaced by the summary; the newest exchanges stay verbatim.
//!
//! Token counts come from [`crate::tokens`]: exact for OpenAI-family models, estimated
//! for others; they are for budgeting, not billing.

use crate::client::{Content, ContentPart, Message, Role};
use crate::tokens::{Counter, PER_MESSAGE};

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

/// Splits the conversation into the part to summarise and the part kept verbatim.
/// `None` when there is too little to summarise.
pub fn split_for_summary(messages: &[Message]) -> Option<(Vec<Message>, Vec<Message>)> {
    if messages.len() <= KEEP_RECENT {
        return None;
    }
    let mut cut = messages.len() - KEEP_RECENT;
    // Start the kept tail at a user message so the conversation still alternates.
    while cut > 0 && messages[cut].role != Role::User {
        cut -= 1;
    }
    if cut == 0 {
        return None;
    }
    Some((messages[..cut].to_vec(), messages[cut..].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let (old, kept) = split_for_summary(&m).unwrap();
        assert_eq!(old.len(), 6);
        assert_eq!(kept[0].text_content(), "m6");
        assert!(split_for_summary(&m[..4]).is_none());
    }
}
