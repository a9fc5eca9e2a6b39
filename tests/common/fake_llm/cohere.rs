//! Cohere v2 API replies (`api.cohere.com/v2`), as the service sends them. `POST /v2/chat`
//! with `"stream": true` answers with named SSE events (`event: <type>\ndata: <json>\n\n`, the
//! JSON repeating the name in `"type"`; no `[DONE]`): `message-start`, `content-start`,
//! `content-delta`*, `content-end` (or `tool-plan-delta`*, then per call `tool-call-start`,
//! `tool-call-delta`*, `tool-call-end`), `message-end` with `finish_reason` and usage.
//! Otherwise `/v2/chat`, `/v2/embed` and `/v2/rerank` answer with JSON, and errors are
//! `{"id","message"}`.
//!
//! Usage: billed `input_tokens = PROMPT_TOKENS`, raw `tokens.input_tokens = RAW_PROMPT_TOKENS`
//! (the raw count includes Cohere's system preamble); output tokens = number of deltas or
//! words, at least 1.

use serde_json::{Value, json};

use super::{Frame, Reply};

pub const ID: &str = "c14c80c3-18eb-4519-9460-6c92edd8cfb4";
pub const PROMPT_TOKENS: u64 = 12;
pub const RAW_PROMPT_TOKENS: u64 = 186;
/// The tool plan [`tool_call_stream`] streams before its calls.
pub const TOOL_PLAN: &str = "I will call the requested tools.";

/// `event: <type>\ndata: <json>\n\n`, the name taken from the JSON's `"type"`.
pub fn event(value: &Value) -> Frame {
    let kind = value["type"].as_str().unwrap_or("message");
    Frame::new(format!("event: {kind}\ndata: {value}\n\n").into_bytes())
}

/// A stream of arbitrary events, one frame each.
pub fn stream(events: &[Value]) -> Reply {
    Reply::sse(events.iter().map(event).collect())
}

fn message_start() -> Value {
    json!({"id": ID, "type": "message-start", "delta": {"message": {
        "role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []
    }}})
}

/// The `usage` object of a chat response.
pub fn usage(output_tokens: u64) -> Value {
    json!({
        "billed_units": {"input_tokens": PROMPT_TOKENS, "output_tokens": output_tokens},
        "tokens": {"input_tokens": RAW_PROMPT_TOKENS, "output_tokens": output_tokens}
    })
}

fn message_end(finish_reason: &str, output_tokens: u64) -> Value {
    json!({"type": "message-end", "delta": {
        "finish_reason": finish_reason, "usage": usage(output_tokens.max(1))
    }})
}

/// A streamed text answer: one `content-delta` per part, `finish_reason: "COMPLETE"`.
pub fn text_stream(parts: &[&str]) -> Reply {
    text_stream_with_finish(parts, "COMPLETE")
}

/// [`text_stream`] ending with another `finish_reason` (e.g. `"MAX_TOKENS"`).
pub fn text_stream_with_finish(parts: &[&str], finish_reason: &str) -> Reply {
    let mut events = vec![
        message_start(),
        json!({"type": "content-start", "index": 0, "delta": {"message": {
            "content": {"type": "text", "text": ""}
        }}}),
    ];
    for part in parts {
        events.push(
            json!({"type": "content-delta", "index": 0, "delta": {"message": {
                "content": {"text": part}
            }}}),
        );
    }
    events.push(json!({"type": "content-end", "index": 0}));
    events.push(message_end(finish_reason, parts.len() as u64));
    stream(&events)
}

/// Splits `s` into up to 3 non-empty pieces at char boundaries.
fn pieces(s: &str) -> Vec<&str> {
    let starts: Vec<usize> = s.char_indices().map(|(i, _)| i).collect();
    let n = starts.len().min(3);
    let mut out = Vec::with_capacity(n);
    let mut from = 0;
    for k in 1..=n {
        let to = if k == n {
            s.len()
        } else {
            starts[starts.len() * k / n]
        };
        out.push(&s[from..to]);
        from = to;
    }
    out
}

/// A streamed tool-calling answer: [`TOOL_PLAN`] in `tool-plan-delta`s, then for each
/// `(id, name, arguments)` a `tool-call-start` (with `arguments: ""`), the arguments split
/// across `tool-call-delta`s and a `tool-call-end`; `finish_reason: "TOOL_CALL"`.
pub fn tool_call_stream(calls: &[(&str, &str, &str)]) -> Reply {
    let mut events = vec![message_start()];
    for piece in pieces(TOOL_PLAN) {
        events.push(json!({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": piece}}}));
    }
    let mut deltas = 0;
    for (index, (id, name, arguments)) in calls.iter().enumerate() {
        events.push(json!({"type": "tool-call-start", "index": index, "delta": {"message": {
            "tool_calls": {"id": id, "type": "function", "function": {"name": name, "arguments": ""}}
        }}}));
        for piece in pieces(arguments) {
            events.push(
                json!({"type": "tool-call-delta", "index": index, "delta": {"message": {
                    "tool_calls": {"function": {"arguments": piece}}
                }}}),
            );
            deltas += 1;
        }
        events.push(json!({"type": "tool-call-end", "index": index}));
    }
    events.push(message_end("TOOL_CALL", deltas));
    stream(&events)
}

fn word_count(text: &str) -> u64 {
    text.split_whitespace().count().max(1) as u64
}

/// A non-streaming `/v2/chat` answer with one text content item, `finish_reason: "COMPLETE"`.
pub fn text_json(text: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "id": ID, "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            "finish_reason": "COMPLETE", "usage": usage(word_count(text))
        }),
    )
}

/// An HTTP error with Cohere's body: `{"id","message"}`.
pub fn error(status: u16, message: &str) -> Reply {
    Reply::json(status, json!({"id": ID, "message": message}))
}

/// A `/v2/embed` answer with `embeddings.float` = `vectors`; `texts` echoes placeholder inputs
/// `"text 0"`, `"text 1"`, ...
pub fn embed_json(vectors: &[Vec<f32>]) -> Reply {
    let texts: Vec<String> = (0..vectors.len()).map(|i| format!("text {i}")).collect();
    Reply::json(
        200,
        json!({
            "id": ID, "embeddings": {"float": vectors}, "texts": texts,
            "meta": {
                "api_version": {"version": "2"},
                "billed_units": {"input_tokens": 2 * vectors.len()}
            },
            "response_type": "embeddings_by_type"
        }),
    )
}

/// A `/v2/rerank` answer listing `(index, relevance_score)` in the given order.
pub fn rerank_json(results: &[(usize, f64)]) -> Reply {
    let results: Vec<Value> = results
        .iter()
        .map(|(index, score)| json!({"index": index, "relevance_score": score}))
        .collect();
    Reply::json(
        200,
        json!({
            "results": results, "id": ID,
            "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}}
        }),
    )
}
