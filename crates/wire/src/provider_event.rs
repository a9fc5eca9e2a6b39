//! What a provider's reply decodes into, one piece at a time (loki re-exports these from
//! `loki::client`).

use crate::message::Usage;

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// Natural end.
    Stop,
    /// Output limit reached.
    Length,
    /// The model wants tool results.
    ToolCalls,
    /// Blocked by the provider's filter.
    ContentFilter,
    /// Anything else the provider said.
    Other(String),
}

impl FinishReason {
    /// Maps a provider's finish string.
    pub fn parse(s: &str) -> Self {
        match s {
            "stop" | "end_turn" | "STOP" | "stop_sequence" => Self::Stop,
            "length" | "max_tokens" | "MAX_TOKENS" => Self::Length,
            "tool_calls" | "tool_use" | "function_call" => Self::ToolCalls,
            "content_filter" | "SAFETY" => Self::ContentFilter,
            other => Self::Other(other.to_string()),
        }
    }
}

/// One decoded piece of a provider reply.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    /// Answer text.
    Text(String),
    /// Reasoning ("thinking") text.
    Reasoning(String),
    /// The signature of the reasoning streamed so far (extended thinking).
    ReasoningSignature(String),
    /// A fragment of a tool call; fragments with the same `index` concatenate.
    ToolCallDelta {
        /// Position of the call in this reply.
        index: usize,
        /// Call id (first fragment).
        id: Option<String>,
        /// Function name (first fragment).
        name: Option<String>,
        /// A piece of the JSON arguments.
        arguments: String,
    },
    /// An opaque token to send back with a tool call (see [`ToolCall::signature`]).
    ToolCallSignature {
        /// Position of the call in this reply.
        index: usize,
        /// The token.
        signature: String,
    },
    /// Token usage.
    Usage(Usage),
    /// The model finished.
    Finish(FinishReason),
}
