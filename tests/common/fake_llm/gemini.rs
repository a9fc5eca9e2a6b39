//! Google Gemini API replies (`generativelanguage.googleapis.com/v1beta`), as the service
//! sends them. `models/*:streamGenerateContent?alt=sse` streams one `GenerateContentResponse`
//! per SSE event: `data: <json>` and no event names, no `[DONE]` (the body just ends). Google's
//! servers end every event with `\r\n\r\n`, and so does [`event`]; [`with_lf`] rewrites a reply
//! to `\n\n`. `models/*:generateContent` answers with one pretty-printed JSON object, and errors
//! use Google's `{"error":{"code","message","status"}}` shape.
//!
//! Usage: `promptTokenCount = PROMPT_TOKENS` (of which `CACHED_TOKENS` cached);
//! `candidatesTokenCount` = number of streamed chunks or words, at least 1.

use serde_json::{Value, json};

use super::{Frame, Reply};

pub const MODEL_VERSION: &str = "gemini-2.5-flash";
pub const RESPONSE_ID: &str = "fAkE0aBcD3fGhIjKlMnOpQ";
pub const PROMPT_TOKENS: u64 = 12;
pub const CACHED_TOKENS: u64 = 4;
/// The `thoughtSignature` on the first `functionCall` part of [`function_call_stream`].
pub const THOUGHT_SIGNATURE: &str = "CiQB0e2Kb1FakeThoughtSignatureAAAAAAAAAAAAAAAAAAAAAA==";
const JSON: &str = "application/json; charset=UTF-8";

/// `data: <json>\r\n\r\n`
pub fn event(value: &Value) -> Frame {
    Frame::new(format!("data: {value}\r\n\r\n").into_bytes())
}

/// A stream of arbitrary `GenerateContentResponse` chunks, one event (and one frame) each.
pub fn stream(chunks: &[Value]) -> Reply {
    Reply::sse(chunks.iter().map(event).collect())
}

/// The same reply with every event ending in `\n\n` instead of `\r\n\r\n`.
pub fn with_lf(mut reply: Reply) -> Reply {
    for frame in &mut reply.frames {
        if frame.bytes.ends_with(b"\r\n\r\n") {
            let end = frame.bytes.len() - 4;
            frame.bytes.truncate(end);
            frame.bytes.extend_from_slice(b"\n\n");
        }
    }
    reply
}

fn prompt_details() -> Value {
    json!([{"modality": "TEXT", "tokenCount": PROMPT_TOKENS}])
}

/// `usageMetadata` of a chunk before the last one.
fn running_usage(candidates: u64) -> Value {
    json!({
        "promptTokenCount": PROMPT_TOKENS, "candidatesTokenCount": candidates,
        "totalTokenCount": PROMPT_TOKENS + candidates, "promptTokensDetails": prompt_details()
    })
}

/// The full `usageMetadata` of the last chunk (or of a non-streaming response).
pub fn usage(candidates: u64, thoughts: u64) -> Value {
    json!({
        "promptTokenCount": PROMPT_TOKENS, "candidatesTokenCount": candidates,
        "totalTokenCount": PROMPT_TOKENS + candidates + thoughts,
        "cachedContentTokenCount": CACHED_TOKENS, "thoughtsTokenCount": thoughts,
        "promptTokensDetails": prompt_details(),
        "cacheTokensDetails": [{"modality": "TEXT", "tokenCount": CACHED_TOKENS}]
    })
}

/// One `GenerateContentResponse` with a single candidate made of `parts`.
pub fn chunk(parts: Value, finish_reason: Option<&str>, usage_metadata: Value) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if let Some(reason) = finish_reason {
        candidate["finishReason"] = json!(reason);
    }
    json!({
        "candidates": [candidate], "usageMetadata": usage_metadata,
        "modelVersion": MODEL_VERSION, "responseId": RESPONSE_ID
    })
}

/// Chunks carrying one part each; the last also carries `finishReason: "STOP"` and
/// [`usage`]`(n, thoughts)`. No parts gives one chunk with an empty text part.
fn stop_stream(parts: Vec<Value>, thoughts: u64) -> Reply {
    let parts = if parts.is_empty() {
        vec![json!({"text": ""})]
    } else {
        parts
    };
    let n = parts.len() as u64;
    let chunks: Vec<Value> = parts
        .into_iter()
        .zip(1..)
        .map(|(part, i)| {
            if i == n {
                chunk(json!([part]), Some("STOP"), usage(n, thoughts))
            } else {
                chunk(json!([part]), None, running_usage(i))
            }
        })
        .collect();
    stream(&chunks)
}

/// A streamed text answer: one chunk per part, the last with `finishReason: "STOP"`.
pub fn text_stream(parts: &[&str]) -> Reply {
    stop_stream(parts.iter().map(|p| json!({"text": p})).collect(), 0)
}

/// A thought-summary part (`"thought": true`, as sent with `includeThoughts`), then the
/// answer text with `finishReason: "STOP"`; `thoughtsTokenCount` = words of `thought`.
pub fn thought_then_text(thought: &str, text: &str) -> Reply {
    let thoughts = word_count(thought);
    let first = chunk(
        json!([{"text": thought, "thought": true}]),
        None,
        json!({
            "promptTokenCount": PROMPT_TOKENS, "totalTokenCount": PROMPT_TOKENS + thoughts,
            "thoughtsTokenCount": thoughts, "promptTokensDetails": prompt_details()
        }),
    );
    let last = chunk(
        json!([{"text": text}]),
        Some("STOP"),
        usage(word_count(text), thoughts),
    );
    stream(&[first, last])
}

/// Whole function calls (Gemini never fragments them), one chunk each; `args` is JSON text
/// and is sent as an object. The first part carries a `thoughtSignature`, as thinking models
/// send it; the last chunk has `finishReason: "STOP"` (Gemini has no tool-call reason).
pub fn function_call_stream(calls: &[(&str, &str)]) -> Reply {
    let parts = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            let args: Value = serde_json::from_str(args).unwrap_or_else(|e| {
                panic!("gemini::function_call_stream: args of {name} are not JSON ({e}): {args}")
            });
            let mut part = json!({"functionCall": {"name": name, "args": args}});
            if i == 0 {
                part["thoughtSignature"] = json!(THOUGHT_SIGNATURE);
            }
            part
        })
        .collect();
    stop_stream(parts, 0)
}

fn word_count(text: &str) -> u64 {
    text.split_whitespace().count().max(1) as u64
}

/// A non-streaming `generateContent` answer (200, pretty-printed like Google's).
pub fn text_json(text: &str) -> Reply {
    let value = chunk(
        json!([{"text": text}]),
        Some("STOP"),
        usage(word_count(text), 0),
    );
    Reply::raw(200, JSON, format!("{value:#}\n"))
}

/// The canonical `google.rpc.Code` name Google pairs with an HTTP status.
pub fn status_name(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        500 => "INTERNAL",
        501 => "UNIMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "UNKNOWN",
    }
}

/// An HTTP error with Google's body: `{"error":{"code","message","status"}}`, pretty-printed.
pub fn error(status: u16, message: &str) -> Reply {
    let value = json!({
        "error": {"code": status, "message": message, "status": status_name(status)}
    });
    Reply::raw(status, JSON, format!("{value:#}\n"))
}

/// A prompt blocked by the safety filters: one streamed chunk with no candidates and
/// `promptFeedback.blockReason: "SAFETY"`.
pub fn blocked() -> Reply {
    let rating = |category: &str| json!({"category": category, "probability": "NEGLIGIBLE"});
    stream(&[json!({
        "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": [
            rating("HARM_CATEGORY_SEXUALLY_EXPLICIT"),
            rating("HARM_CATEGORY_HATE_SPEECH"),
            rating("HARM_CATEGORY_HARASSMENT"),
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": true}
        ]},
        "usageMetadata": {
            "promptTokenCount": PROMPT_TOKENS, "totalTokenCount": PROMPT_TOKENS,
            "promptTokensDetails": prompt_details()
        },
        "modelVersion": MODEL_VERSION, "responseId": RESPONSE_ID
    })])
}
