//! The chat-completions wire format's per-token and per-message halves (`type: openai`
//! and every `openai-compatible` vendor): the stream chunk, parsed once per streamed
//! token, with the decoder that turns chunks into events, and the request's message
//! array, built from every message of the conversation on every turn. The rest of the
//! request (options, tools, the HTTP call) is `loki::client::openai`'s.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::body_stream::{DecodeError, Decoder, Sse, SseParser};
use crate::message::{Content, ContentPart, Message, Role, Usage};
use crate::provider_event::{FinishReason, ProviderEvent};
use crate::sse::SseEvent;

/// One streamed chunk, or a whole response.
#[derive(Deserialize)]
struct WireChunk {
    #[serde(default)]
    choices: Vec<WireChoice>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

/// One choice of a chunk.
#[derive(Deserialize)]
struct WireChoice {
    delta: Option<WireDelta>,
    message: Option<WireDelta>,
    finish_reason: Option<String>,
}

/// What a choice adds (`delta` when streamed, `message` when whole).
#[derive(Deserialize)]
struct WireDelta {
    content: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<WireToolCall>,
}

/// A fragment of a tool call.
#[derive(Deserialize)]
struct WireToolCall {
    index: Option<usize>,
    id: Option<String>,
    function: Option<WireFunction>,
}

/// The function of a tool call fragment.
#[derive(Deserialize)]
struct WireFunction {
    name: Option<String>,
    arguments: Option<String>,
}

/// Token usage, in the last chunk.
#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    prompt_tokens_details: Option<WireUsageDetails>,
}

/// Cached prompt tokens.
#[derive(Deserialize)]
struct WireUsageDetails {
    #[serde(default)]
    cached_tokens: u64,
}

/// Parses one streamed `data:` payload.
fn chunk_from_str(data: &str) -> Result<WireChunk, serde_json::Error> {
    serde_json::from_str(data)
}

/// Parses a whole (non-streamed) response body.
fn chunk_from_slice(body: &[u8]) -> Result<WireChunk, serde_json::Error> {
    serde_json::from_slice(body)
}

/// The decoder of a streamed chat-completions body (built here, so that its code is).
pub fn decoder() -> Box<dyn Decoder> {
    Box::new(Sse::new(ChunkParser::default()))
}

/// Decodes `data:` chunks until `[DONE]` (or a chunk with a finish reason).
#[derive(Debug, Default)]
pub struct ChunkParser {
    done: bool,
}

impl SseParser for ChunkParser {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        if event.data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let from = out.len();
        let chunk = chunk_from_str(&event.data).map_err(|source| {
            DecodeError::Malformed(
                ChunkError::StreamJson {
                    source,
                    preview: preview(&event.data),
                }
                .to_string(),
            )
        })?;
        decode_chunk(chunk, out).map_err(|e| DecodeError::Malformed(e.to_string()))?;
        self.done |= out[from..]
            .iter()
            .any(|e| matches!(e, ProviderEvent::Finish(_)));
        Ok(())
    }

    fn complete(&self) -> bool {
        self.done
    }
}

/// Why a chat-completions chunk or body gave no events.
#[derive(Debug, thiserror::Error)]
pub enum ChunkError {
    /// A streamed `data:` payload is not JSON in the expected shape.
    #[error("invalid JSON in stream ({source}): {preview}")]
    StreamJson {
        /// The parse error.
        source: serde_json::Error,
        /// The start of the payload.
        preview: String,
    },
    /// A whole body is not JSON in the expected shape.
    #[error("invalid JSON ({source}): {preview}")]
    Json {
        /// The parse error.
        source: serde_json::Error,
        /// The start of the body.
        preview: String,
    },
    /// A whole body with neither choices nor an error.
    #[error("no choices in response: {0}")]
    NoChoices(String),
    /// The provider put an error in the chunk.
    #[error("error reported in the stream: {0}")]
    Reported(String),
}

/// Decodes one streamed `data:` payload.
pub fn parse_chunk(data: &str) -> Result<Vec<ProviderEvent>, ChunkError> {
    let chunk = chunk_from_str(data).map_err(|source| ChunkError::StreamJson {
        source,
        preview: preview(data),
    })?;
    let mut events = Vec::new();
    decode_chunk(chunk, &mut events)?;
    Ok(events)
}

/// Decodes a complete (non-streamed) chat-completion body.
pub fn parse_response(body: &[u8]) -> Result<Vec<ProviderEvent>, ChunkError> {
    let chunk = chunk_from_slice(body).map_err(|source| ChunkError::Json {
        source,
        preview: preview(&String::from_utf8_lossy(body)),
    })?;
    if chunk.choices.is_empty() && chunk.error.is_none() {
        return Err(ChunkError::NoChoices(preview(&String::from_utf8_lossy(
            body,
        ))));
    }
    let mut events = Vec::new();
    decode_chunk(chunk, &mut events)?;
    Ok(events)
}

fn decode_chunk(chunk: WireChunk, events: &mut Vec<ProviderEvent>) -> Result<(), ChunkError> {
    if let Some(err) = chunk.error {
        return Err(ChunkError::Reported(crate::error_text::error_message(
            err.to_string().as_bytes(),
        )));
    }
    for choice in chunk.choices {
        if let Some(delta) = choice.delta.or(choice.message) {
            if let Some(r) = delta
                .reasoning_content
                .or(delta.reasoning)
                .filter(|r| !r.is_empty())
            {
                events.push(ProviderEvent::Reasoning(r));
            }
            if let Some(t) = delta.content.filter(|t| !t.is_empty()) {
                events.push(ProviderEvent::Text(t));
            }
            for (pos, call) in delta.tool_calls.into_iter().enumerate() {
                let (name, arguments) = match call.function {
                    Some(f) => (f.name, f.arguments.unwrap_or_default()),
                    None => (None, String::new()),
                };
                events.push(ProviderEvent::ToolCallDelta {
                    index: call.index.unwrap_or(pos),
                    id: call.id,
                    name,
                    arguments,
                });
            }
        }
        if let Some(reason) = choice.finish_reason {
            events.push(ProviderEvent::Finish(FinishReason::parse(&reason)));
        }
    }
    if let Some(u) = chunk.usage {
        events.push(ProviderEvent::Usage(Usage {
            estimated: false,
            input_tokens: u.prompt_tokens,
            output_tokens: u.completion_tokens,
            cached_tokens: u
                .prompt_tokens_details
                .map(|d| d.cached_tokens)
                .unwrap_or(0),
        }));
    }
    Ok(())
}

fn preview(s: &str) -> String {
    let mut p: String = s.chars().take(120).collect();
    if p.len() < s.len() {
        p.push('…');
    }
    p
}

/// Messages in the chat-completions shape (after the model's system-message quirks).
pub fn message_values(messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages.iter() {
        match m.role {
            Role::System => out.push(json!({"role": "system", "content": m.text_content()})),
            Role::User => out.push(json!({"role": "user", "content": content_value(&m.content)})),
            Role::Assistant => {
                let mut msg =
                    json!({"role": "assistant", "content": strip_think(&m.text_content())});
                if !m.tool_calls.is_empty()
                    && let Some(obj) = msg.as_object_mut()
                {
                    let calls: Vec<Value> = m
                        .tool_calls
                        .iter()
                        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                        .collect();
                    obj.insert("tool_calls".into(), Value::Array(calls));
                }
                out.push(msg);
            }
            Role::Tool => out.push(json!({
                "role": "tool",
                "tool_call_id": m.tool_call_id,
                "content": m.text_content(),
            })),
        }
    }
    out
}

fn content_value(content: &Content) -> Value {
    match content {
        Content::Text(t) => Value::String(t.to_string()),
        Content::Parts(parts) => Value::Array(
            parts
                .iter()
                .map(|p| match p {
                    ContentPart::Text { text } => json!({"type": "text", "text": text}),
                    ContentPart::ImageUrl { image_url } => {
                        json!({"type": "image_url", "image_url": {"url": image_url.url}})
                    }
                })
                .collect(),
        ),
    }
}

/// Removes a leading `<think>…</think>` block from text sent back to the model.
pub fn strip_think(text: &str) -> String {
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix("<think>")
        && let Some(end) = rest.find("</think>")
    {
        return rest[end + "</think>".len()..].trim_start().to_string();
    }
    text.to_string()
}
