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
        decode_chunk(chunk, out).map_err(|e| match e {
            // An error object in the stream is the provider's error, not a broken frame.
            ChunkError::Reported(message) => DecodeError::Upstream(message),
            other => DecodeError::Malformed(other.to_string()),
        })?;
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
    without_think(text).to_string()
}

/// `text` after a leading `<think>…</think>` block, borrowed.
fn without_think(text: &str) -> &str {
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix("<think>")
        && let Some(end) = rest.find("</think>")
    {
        return rest[end + "</think>".len()..].trim_start();
    }
    text
}

/// Writes the `messages` array of a chat-completions request — the JSON
/// [`message_values`] builds — straight into `out`.
///
/// A long session's request is built on every turn; going through a `Value` per message
/// copied every text into a tree larger than the text itself, at the moment the whole
/// history, the tree and the request's bytes were all held at once (the 2,000-message
/// session's peak memory, docs/benchmarks.md).
pub fn write_messages(messages: &[Message], out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    out.push(b'[');
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match m.role {
            Role::System => {
                out.extend_from_slice(br#"{"role":"system","content":"#);
                write_text(&m.content, out)?;
            }
            Role::User => {
                out.extend_from_slice(br#"{"role":"user","content":"#);
                write_content(&m.content, out)?;
            }
            Role::Assistant => {
                out.extend_from_slice(br#"{"role":"assistant","content":"#);
                match &m.content {
                    Content::Text(t) => write_str(without_think(t), out)?,
                    other => write_str(&strip_think(&text_of(other)), out)?,
                }
                if !m.tool_calls.is_empty() {
                    out.extend_from_slice(br#","tool_calls":["#);
                    for (j, call) in m.tool_calls.iter().enumerate() {
                        if j > 0 {
                            out.push(b',');
                        }
                        out.extend_from_slice(br#"{"id":"#);
                        write_str(&call.id, out)?;
                        out.extend_from_slice(br#","type":"function","function":{"name":"#);
                        write_str(&call.name, out)?;
                        out.extend_from_slice(br#","arguments":"#);
                        write_str(&call.arguments, out)?;
                        out.extend_from_slice(b"}}");
                    }
                    out.push(b']');
                }
            }
            Role::Tool => {
                out.extend_from_slice(br#"{"role":"tool","tool_call_id":"#);
                match &m.tool_call_id {
                    Some(id) => write_str(id, out)?,
                    None => out.extend_from_slice(b"null"),
                }
                out.extend_from_slice(br#","content":"#);
                write_text(&m.content, out)?;
            }
        }
        out.push(b'}');
    }
    out.push(b']');
    Ok(())
}

/// About how many bytes [`write_messages`] writes for `messages`: their text plus an
/// eighth for escapes, and the members around each message.
pub fn size_hint(messages: &[Message]) -> usize {
    let text: usize = messages
        .iter()
        .map(|m| {
            let content = match &m.content {
                Content::Text(t) => t.len(),
                Content::Parts(parts) => parts
                    .iter()
                    .map(|p| match p {
                        ContentPart::Text { text } => text.len(),
                        ContentPart::ImageUrl { image_url } => image_url.url.len(),
                    })
                    .sum(),
            };
            let calls: usize = m
                .tool_calls
                .iter()
                .map(|c| c.id.len() + c.name.len() + c.arguments.len() + 64)
                .sum();
            content + calls + 48
        })
        .sum();
    text + text / 8
}

/// A JSON string, escaped.
fn write_str(text: &str, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    serde_json::to_writer(&mut *out, text)
}

/// The message's text (parts joined, images left out) as one JSON string.
fn write_text(content: &Content, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    match content {
        Content::Text(t) => write_str(t, out),
        other => write_str(&text_of(other), out),
    }
}

fn text_of(content: &Content) -> String {
    match content {
        Content::Text(t) => t.to_string(),
        Content::Parts(parts) => parts
            .iter()
            .filter_map(|p| match p {
                ContentPart::Text { text } => Some(text.as_str()),
                ContentPart::ImageUrl { .. } => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// A user message's content: a string, or its parts in the chat-completions shape.
fn write_content(content: &Content, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    match content {
        Content::Text(t) => write_str(t, out),
        Content::Parts(_) => serde_json::to_writer(&mut *out, &content_value(content)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{ImageUrl, ToolCall};

    fn history() -> Vec<Message> {
        let mut assistant = Message::text(Role::Assistant, "<think>hmm</think>  Let me look.");
        assistant.tool_calls = vec![
            ToolCall {
                id: "call_1".into(),
                name: "fs_read".into(),
                arguments: r#"{"path":"a \"b\".txt"}"#.into(),
                signature: None,
            },
            ToolCall {
                id: "call_2".into(),
                name: "fs_ls".into(),
                arguments: "{}".into(),
                signature: None,
            },
        ];
        let mut tool = Message::text(Role::Tool, "line 1\nline\t2 \u{1b}[31m é ✓");
        tool.tool_call_id = Some("call_1".into());
        let mut orphan = Message::text(Role::Tool, "no id");
        orphan.tool_call_id = None;
        let mut picture = Message::text(Role::User, "");
        picture.content = Content::Parts(vec![
            ContentPart::Text {
                text: "what is this?".into(),
            },
            ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: "data:image/png;base64,AAAA".into(),
                },
            },
        ]);
        let mut parted = Message::text(Role::Assistant, "");
        parted.content = Content::Parts(vec![
            ContentPart::Text {
                text: "<think>x</think>one".into(),
            },
            ContentPart::Text { text: "two".into() },
        ]);
        vec![
            Message::text(Role::System, "be brief \\ \"quoted\""),
            Message::text(Role::User, "hi\u{0}there"),
            assistant,
            tool,
            orphan,
            picture,
            parted,
            Message::text(Role::Assistant, "<think>unclosed"),
        ]
    }

    #[test]
    fn written_messages_are_the_json_of_the_message_values() {
        let messages = history();
        let mut out = Vec::new();
        write_messages(&messages, &mut out).unwrap();
        let written: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(written, Value::Array(message_values(&messages)));
        // Key order too: the bytes are those of the values, serialised.
        let expected = serde_json::to_vec(&message_values(&messages)).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            String::from_utf8(expected).unwrap()
        );
    }

    #[test]
    fn no_messages_is_an_empty_array() {
        let mut out = Vec::new();
        write_messages(&[], &mut out).unwrap();
        assert_eq!(out, b"[]");
    }
}
