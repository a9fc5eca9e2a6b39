//! Anthropic Messages API replies, as the service sends them: named SSE events
//! (`event: <type>` + `data: <json>`) for streams, a message object otherwise.

use serde_json::{Value, json};

use super::{Frame, Reply};

/// `event: <type>\ndata: <json>\n\n`
pub fn event(value: &Value) -> Frame {
    let kind = value["type"].as_str().unwrap_or("message");
    Frame::new(format!("event: {kind}\ndata: {value}\n\n").into_bytes())
}

fn start() -> Value {
    json!({"type": "message_start", "message": {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 12, "cache_read_input_tokens": 30, "cache_creation_input_tokens": 0, "output_tokens": 1}
    }})
}

fn stop(reason: &str, output: u64) -> Vec<Frame> {
    vec![
        event(
            &json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null}, "usage": {"output_tokens": output}}),
        ),
        event(&json!({"type": "message_stop"})),
    ]
}

/// A streamed text answer: one `text_delta` per part.
pub fn text_stream(parts: &[&str]) -> Reply {
    let mut frames = vec![
        event(&start()),
        event(
            &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        event(&json!({"type": "ping"})),
    ];
    for part in parts {
        frames.push(event(&json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": part}})));
    }
    frames.push(event(&json!({"type": "content_block_stop", "index": 0})));
    frames.extend(stop("end_turn", parts.len() as u64));
    Reply::sse(frames)
}

/// A streamed answer that calls tools: a short text block, then one `tool_use` block per
/// call with its input split across `input_json_delta`s.
pub fn tool_use_stream(calls: &[(&str, &str, &str)]) -> Reply {
    let mut frames = vec![
        event(&start()),
        event(
            &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        event(
            &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me check."}}),
        ),
        event(&json!({"type": "content_block_stop", "index": 0})),
    ];
    for (i, (id, name, input)) in calls.iter().enumerate() {
        let index = i + 1;
        frames.push(event(&json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
        let cut = input.len() / 2;
        for piece in [&input[..cut], &input[cut..]] {
            frames.push(event(&json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})));
        }
        frames.push(event(
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    frames.extend(stop("tool_use", 20));
    Reply::sse(frames)
}

/// Text, then an `error` event mid-stream.
pub fn error_mid_stream(text: &str) -> Reply {
    Reply::sse(vec![
        event(&start()),
        event(
            &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        event(
            &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ),
        event(
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ])
}

/// An HTTP error with Anthropic's error body.
pub fn error(status: u16, kind: &str, message: &str) -> Reply {
    Reply::json(
        status,
        json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}
