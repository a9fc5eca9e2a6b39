//! The event vocabulary every front end consumes.
//!
//! The engine emits these in order; each turn starts with exactly one `TurnStarted` and
//! ends with exactly one `TurnFinished` or `TurnAborted`. Serialised with a `type` tag so
//! `--output-format json` (and the server) can write them as they are.

use serde::Serialize;

use crate::client::Usage;

/// Something that happened during a run.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// Emitted before each model call of a turn (once, or once per tool round).
    TurnStarted(TurnStarted),
    /// Answer text, in arrival order. Emitted for every text delta of the provider.
    AssistantDelta(TextDelta),
    /// Reasoning ("thinking") text, in arrival order.
    ReasoningDelta(TextDelta),
    /// The model requested a tool call (arguments complete). Emitted before approval.
    ToolCallProposed(ToolCallProposed),
    /// A tool call finished (or was refused); its result went back to the model.
    ToolCallFinished(ToolCallFinished),
    /// Token usage reported by the provider for one model response.
    Usage(Usage),
    /// An informational or warning line for the user (retries, skipped files, …).
    Notice(Notice),
    /// The turn completed; the answer is complete.
    TurnFinished(TurnFinished),
    /// The turn stopped early (cancelled or failed); what arrived so far is in `partial`.
    TurnAborted(TurnAborted),
}

/// Payload of [`Event::TurnStarted`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnStarted {
    /// `client:model`.
    pub model: String,
    /// Whether the answer will stream.
    pub stream: bool,
}

/// Payload of text deltas.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextDelta {
    /// The new text.
    pub text: String,
}

/// Payload of [`Event::ToolCallProposed`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallProposed {
    /// Provider call id.
    pub call_id: String,
    /// Function name.
    pub name: String,
    /// JSON arguments as text.
    pub arguments: String,
}

/// Payload of [`Event::ToolCallFinished`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallFinished {
    /// Provider call id.
    pub call_id: String,
    /// Function name.
    pub name: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// The result as sent to the model.
    pub result: String,
}

/// Severity of a [`Notice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    /// Neutral information.
    Info,
    /// Something the user may want to act on.
    Warning,
    /// What is being waited for right now (shown as the spinner's label on a terminal).
    Status,
}

/// Payload of [`Event::Notice`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Notice {
    /// Severity.
    pub level: NoticeLevel,
    /// One line.
    pub message: String,
}

impl Notice {
    /// An informational notice. Known secrets in the text are redacted (see
    /// [`crate::secrets`]): a notice can quote a provider's or a tool's message.
    pub fn info(message: impl Into<String>) -> Self {
        Self {
            level: NoticeLevel::Info,
            message: redacted(message.into()),
        }
    }

    /// A passing status (what is being waited for): on a terminal it becomes the spinner's
    /// label instead of a line of its own. Redacted like [`Notice::info`].
    pub fn status(message: impl Into<String>) -> Self {
        Self {
            level: NoticeLevel::Status,
            message: redacted(message.into()),
        }
    }

    /// A warning, redacted like [`Notice::info`].
    pub fn warning(message: impl Into<String>) -> Self {
        Self {
            level: NoticeLevel::Warning,
            message: redacted(message.into()),
        }
    }
}

fn redacted(message: String) -> String {
    match crate::secrets::redact(&message) {
        std::borrow::Cow::Borrowed(_) => message,
        std::borrow::Cow::Owned(clean) => clean,
    }
}

/// Payload of [`Event::TurnFinished`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnFinished {
    /// Usage summed over every model response of the turn.
    pub usage: Usage,
    /// The provider's finish reason of the last response (`stop`, `length`, …).
    pub finish_reason: Option<String>,
}

/// Why a turn was aborted.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortReason {
    /// The user pressed Ctrl-C (or the client disconnected).
    Cancelled,
    /// The provider or the input failed; the message says why.
    Error(String),
}

/// Payload of [`Event::TurnAborted`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnAborted {
    /// Why.
    pub reason: AbortReason,
    /// The answer text received before the stop.
    pub partial: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_with_type_tag() {
        let e = Event::AssistantDelta(TextDelta { text: "hi".into() });
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"type":"assistant_delta","text":"hi"}"#
        );
        let e = Event::TurnAborted(TurnAborted {
            reason: AbortReason::Cancelled,
            partial: "p".into(),
        });
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"type":"turn_aborted","reason":"cancelled","partial":"p"}"#
        );
    }
}
