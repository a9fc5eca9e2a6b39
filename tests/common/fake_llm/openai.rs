//! Reply builders for the OpenAI chat-completions wire format.
//!
//! Streams are byte-for-byte shaped like api.openai.com's with
//! `stream_options.include_usage`: `data: {json}\n\n` events whose objects keep OpenAI's key
//! order (`id`, `object`, `created`, `model`, `system_fingerprint`, `choices`, `usage`), every
//! chunk carrying `"usage":null`; a first chunk with `delta.role = "assistant"`; content deltas;
//! a chunk with an empty delta and the `finish_reason`; a usage chunk with `"choices":[]`; then
//! `data: [DONE]\n\n`. JSON is written by hand (not through `serde_json::Value`) so the key
//! order does not depend on serde_json's `preserve_order` feature.
//!
//! Unless stated otherwise, usage is `prompt_tokens = PROMPT_TOKENS` and
//! `completion_tokens` = number of content/reasoning deltas (streams) or whitespace-separated
//! words (non-streaming bodies), at least 1.

use std::fmt::Write as _;

use super::{Frame, Reply};

pub const ID: &str = "chatcmpl-fake000000000000000000000001";
pub const CREATED: u64 = 1_700_000_000;
pub const MODEL: &str = "gpt-4o-mini";
pub const SYSTEM_FINGERPRINT: &str = "fp_fake000000";
/// Default `usage.prompt_tokens` of every builder that does not take token counts.
pub const PROMPT_TOKENS: u64 = 12;

/// JSON string literal for `s` (with quotes).
pub fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_json_str(&mut out, s);
    out
}

fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// One `chat.completion.chunk` object; `delta` is raw JSON text.
pub fn chunk_json(delta: &str, finish_reason: Option<&str>) -> String {
    let finish = finish_reason.map_or_else(|| "null".to_string(), json_str);
    format!(
        "{{\"id\":\"{ID}\",\"object\":\"chat.completion.chunk\",\"created\":{CREATED},\
         \"model\":\"{MODEL}\",\"system_fingerprint\":\"{SYSTEM_FINGERPRINT}\",\
         \"choices\":[{{\"index\":0,\"delta\":{delta},\"logprobs\":null,\
         \"finish_reason\":{finish}}}],\"usage\":null}}"
    )
}

/// The `usage` object (raw JSON text).
pub fn usage_json(prompt_tokens: u64, completion_tokens: u64, reasoning_tokens: u64) -> String {
    let total = prompt_tokens + completion_tokens;
    format!(
        "{{\"prompt_tokens\":{prompt_tokens},\"completion_tokens\":{completion_tokens},\
         \"total_tokens\":{total},\
         \"prompt_tokens_details\":{{\"cached_tokens\":0,\"audio_tokens\":0}},\
         \"completion_tokens_details\":{{\"reasoning_tokens\":{reasoning_tokens},\
         \"audio_tokens\":0,\"accepted_prediction_tokens\":0,\
         \"rejected_prediction_tokens\":0}}}}"
    )
}

/// The final usage chunk (`"choices":[]`).
pub fn usage_chunk_json(prompt_tokens: u64, completion_tokens: u64) -> String {
    usage_chunk_json_with_reasoning(prompt_tokens, completion_tokens, 0)
}

fn usage_chunk_json_with_reasoning(prompt: u64, completion: u64, reasoning: u64) -> String {
    let usage = usage_json(prompt, completion, reasoning);
    format!(
        "{{\"id\":\"{ID}\",\"object\":\"chat.completion.chunk\",\"created\":{CREATED},\
         \"model\":\"{MODEL}\",\"system_fingerprint\":\"{SYSTEM_FINGERPRINT}\",\
         \"choices\":[],\"usage\":{usage}}}"
    )
}

/// `data: <payload>\n\n`
pub fn data_frame(payload: &str) -> Frame {
    let mut bytes = Vec::with_capacity(payload.len() + 8);
    bytes.extend_from_slice(b"data: ");
    bytes.extend_from_slice(payload.as_bytes());
    bytes.extend_from_slice(b"\n\n");
    Frame::new(bytes)
}

/// `data: [DONE]\n\n`
pub fn done_frame() -> Frame {
    data_frame("[DONE]")
}

/// Generic helper: each value becomes `data: <json>\n\n`.
pub fn sse_frames(events: &[serde_json::Value]) -> Vec<Frame> {
    events
        .iter()
        .map(|event| data_frame(&event.to_string()))
        .collect()
}

fn content_delta(text: &str) -> String {
    format!("{{\"content\":{}}}", json_str(text))
}

const ROLE_DELTA: &str = "{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}";

/// Appends the finish chunk, the usage chunk and `[DONE]`.
fn finish_frames(
    frames: &mut Vec<Frame>,
    finish: &str,
    prompt: u64,
    completion: u64,
    reasoning: u64,
) {
    frames.push(data_frame(&chunk_json("{}", Some(finish))));
    frames.push(data_frame(&usage_chunk_json_with_reasoning(
        prompt, completion, reasoning,
    )));
    frames.push(done_frame());
}

/// A text stream: role chunk, one event per part, `finish_reason: "stop"`, usage, `[DONE]`.
pub fn text_stream(parts: &[&str]) -> Reply {
    text_stream_with_usage(parts, PROMPT_TOKENS, parts.len().max(1) as u64)
}

/// [`text_stream`] with explicit token counts in the usage chunk.
pub fn text_stream_with_usage(parts: &[&str], prompt_tokens: u64, completion_tokens: u64) -> Reply {
    let mut frames = Vec::with_capacity(parts.len() + 4);
    frames.push(data_frame(&chunk_json(ROLE_DELTA, None)));
    for part in parts {
        frames.push(data_frame(&chunk_json(&content_delta(part), None)));
    }
    finish_frames(&mut frames, "stop", prompt_tokens, completion_tokens, 0);
    Reply::sse(frames)
}

/// DeepSeek-style reasoning stream: deltas with `reasoning_content` (and `"content":null`)
/// first, then deltas with `content` (and `"reasoning_content":null`).
pub fn reasoning_stream(reasoning: &[&str], text: &[&str]) -> Reply {
    let mut frames = Vec::with_capacity(reasoning.len() + text.len() + 4);
    frames.push(data_frame(&chunk_json(
        "{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"\"}",
        None,
    )));
    for part in reasoning {
        let delta = format!(
            "{{\"content\":null,\"reasoning_content\":{}}}",
            json_str(part)
        );
        frames.push(data_frame(&chunk_json(&delta, None)));
    }
    for part in text {
        let delta = format!(
            "{{\"content\":{},\"reasoning_content\":null}}",
            json_str(part)
        );
        frames.push(data_frame(&chunk_json(&delta, None)));
    }
    let completion = (reasoning.len() + text.len()).max(1) as u64;
    finish_frames(
        &mut frames,
        "stop",
        PROMPT_TOKENS,
        completion,
        reasoning.len() as u64,
    );
    Reply::sse(frames)
}

/// Splits `s` into up to 3 non-empty pieces at char boundaries (fewer if `s` is that short).
fn split_arguments(s: &str) -> Vec<&str> {
    let boundaries: Vec<usize> = s.char_indices().map(|(i, _)| i).collect();
    let pieces = boundaries.len().min(3);
    if pieces == 0 {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(pieces);
    let mut start = 0;
    for k in 1..=pieces {
        let end = if k == pieces {
            s.len()
        } else {
            boundaries[boundaries.len() * k / pieces]
        };
        out.push(&s[start..end]);
        start = end;
    }
    out
}

/// OpenAI-style tool-call stream. For each call (index i): a delta with
/// `tool_calls[{index, id, type:"function", function:{name, arguments:""}}]` (the first one
/// also carrying `role`, `content:null`, `refusal:null`), then the arguments text split across
/// 2–3 deltas `tool_calls[{index, function:{arguments}}]`. Ends with
/// `finish_reason: "tool_calls"`, usage and `[DONE]`.
pub fn tool_call_stream(calls: &[(&str, &str, &str)]) -> Reply {
    let mut frames = Vec::new();
    if calls.is_empty() {
        frames.push(data_frame(&chunk_json(ROLE_DELTA, None)));
    }
    let mut deltas = 0u64;
    for (index, (id, name, arguments)) in calls.iter().enumerate() {
        let head = format!(
            "{{\"index\":{index},\"id\":{},\"type\":\"function\",\
             \"function\":{{\"name\":{},\"arguments\":\"\"}}}}",
            json_str(id),
            json_str(name)
        );
        let delta = if index == 0 {
            format!(
                "{{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{head}],\"refusal\":null}}"
            )
        } else {
            format!("{{\"tool_calls\":[{head}]}}")
        };
        frames.push(data_frame(&chunk_json(&delta, None)));
        for piece in split_arguments(arguments) {
            let delta = format!(
                "{{\"tool_calls\":[{{\"index\":{index},\"function\":{{\"arguments\":{}}}}}]}}",
                json_str(piece)
            );
            frames.push(data_frame(&chunk_json(&delta, None)));
            deltas += 1;
        }
    }
    finish_frames(&mut frames, "tool_calls", PROMPT_TOKENS, deltas.max(1), 0);
    Reply::sse(frames)
}

/// Generic stream: role chunk, one chunk per `delta` object (serialized with serde_json, so
/// key order follows serde_json's features), finish chunk, usage chunk, `[DONE]`.
pub fn stream_from_deltas(
    deltas: &[serde_json::Value],
    finish_reason: &str,
    prompt_tokens: u64,
    completion_tokens: u64,
) -> Reply {
    let mut frames = Vec::with_capacity(deltas.len() + 4);
    frames.push(data_frame(&chunk_json(ROLE_DELTA, None)));
    for delta in deltas {
        frames.push(data_frame(&chunk_json(&delta.to_string(), None)));
    }
    finish_frames(
        &mut frames,
        finish_reason,
        prompt_tokens,
        completion_tokens,
        0,
    );
    Reply::sse(frames)
}

fn word_count(text: &str) -> u64 {
    text.split_whitespace().count().max(1) as u64
}

/// A non-streaming `chat.completion` body; `message` is raw JSON text.
pub fn completion_json(message: &str, finish_reason: &str, usage: &str) -> String {
    format!(
        "{{\"id\":\"{ID}\",\"object\":\"chat.completion\",\"created\":{CREATED},\
         \"model\":\"{MODEL}\",\"choices\":[{{\"index\":0,\"message\":{message},\
         \"logprobs\":null,\"finish_reason\":{}}}],\"usage\":{usage},\
         \"service_tier\":\"default\",\"system_fingerprint\":\"{SYSTEM_FINGERPRINT}\"}}",
        json_str(finish_reason)
    )
}

/// Non-streaming completion with `choices[0].message = {role, content}`, finish `"stop"`.
pub fn text_json(text: &str) -> Reply {
    let message = format!(
        "{{\"role\":\"assistant\",\"content\":{},\"refusal\":null,\"annotations\":[]}}",
        json_str(text)
    );
    let usage = usage_json(PROMPT_TOKENS, word_count(text), 0);
    Reply::raw(
        200,
        "application/json",
        completion_json(&message, "stop", &usage),
    )
}

/// Non-streaming completion whose message has `reasoning_content` and `content`.
pub fn reasoning_json(reasoning: &str, text: &str) -> Reply {
    let message = format!(
        "{{\"role\":\"assistant\",\"content\":{},\"reasoning_content\":{}}}",
        json_str(text),
        json_str(reasoning)
    );
    let reasoning_tokens = word_count(reasoning);
    let usage = usage_json(
        PROMPT_TOKENS,
        word_count(text) + reasoning_tokens,
        reasoning_tokens,
    );
    Reply::raw(
        200,
        "application/json",
        completion_json(&message, "stop", &usage),
    )
}

/// Non-streaming completion with `message.tool_calls`, finish `"tool_calls"`.
pub fn tool_call_json(calls: &[(&str, &str, &str)]) -> Reply {
    let tool_calls: Vec<String> = calls
        .iter()
        .map(|(id, name, arguments)| {
            format!(
                "{{\"id\":{},\"type\":\"function\",\"function\":{{\"name\":{},\"arguments\":{}}}}}",
                json_str(id),
                json_str(name),
                json_str(arguments)
            )
        })
        .collect();
    let message = format!(
        "{{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{}],\"refusal\":null,\
         \"annotations\":[]}}",
        tool_calls.join(",")
    );
    let usage = usage_json(PROMPT_TOKENS, (calls.len() as u64).max(1) * 8, 0);
    Reply::raw(
        200,
        "application/json",
        completion_json(&message, "tool_calls", &usage),
    )
}

/// OpenAI error body, pretty-printed like api.openai.com does:
/// `{"error":{"message","type","param":null,"code":null}}`.
pub fn error(status: u16, message: &str, kind: &str) -> Reply {
    let body = format!(
        "{{\n    \"error\": {{\n        \"message\": {},\n        \"type\": {},\n        \
         \"param\": null,\n        \"code\": null\n    }}\n}}\n",
        json_str(message),
        json_str(kind)
    );
    Reply::raw(status, "application/json", body)
}

/// `GET /v1/models` body: `{"object":"list","data":[{"id","object":"model","created","owned_by"}]}`.
pub fn models_list(ids: &[&str]) -> Reply {
    let data: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(
                "{{\"id\":{},\"object\":\"model\",\"created\":{CREATED},\"owned_by\":\"openai\"}}",
                json_str(id)
            )
        })
        .collect();
    let body = format!("{{\"object\":\"list\",\"data\":[{}]}}", data.join(","));
    Reply::raw(200, "application/json", body)
}

/// The text of token `i` of [`long_stream`]: `"word{i} "`, with markdown and newlines mixed in.
pub fn long_stream_token(i: usize) -> String {
    if i % 36 == 35 {
        format!("word{i}.\n\n## Section {}\n\n", i / 36 + 1)
    } else if i % 12 == 11 {
        format!("word{i}.\n")
    } else if i % 12 == 5 {
        format!("**word{i}** ")
    } else if i % 12 == 8 {
        format!("`word{i}` ")
    } else {
        format!("word{i} ")
    }
}

/// The first event of every stream: `delta.role = "assistant"`.
pub fn role_frame() -> Frame {
    data_frame(&chunk_json(ROLE_DELTA, None))
}

/// One content event carrying `text`.
pub fn text_frame(text: &str) -> Frame {
    data_frame(&chunk_json(&content_delta(text), None))
}

/// The end of a text stream: the `stop` chunk, usage and `[DONE]`.
pub fn end_frames() -> Vec<Frame> {
    let mut frames = Vec::new();
    finish_frames(&mut frames, "stop", PROMPT_TOKENS, 1, 0);
    frames
}

/// An SSE comment line (`: keep-alive`), as servers send to keep idle connections open.
pub fn keep_alive_frame() -> Frame {
    Frame::new(b": keep-alive\n\n".to_vec())
}

/// A long deterministic text stream of `tokens` content events (see [`long_stream_token`]),
/// for throughput benchmarks. Usage reports `completion_tokens = tokens`.
pub fn long_stream(tokens: usize) -> Reply {
    let mut frames = Vec::with_capacity(tokens + 4);
    frames.push(data_frame(&chunk_json(ROLE_DELTA, None)));
    for i in 0..tokens {
        frames.push(data_frame(&chunk_json(
            &content_delta(&long_stream_token(i)),
            None,
        )));
    }
    finish_frames(&mut frames, "stop", PROMPT_TOKENS, tokens as u64, 0);
    Reply::sse(frames)
}

/// The full text [`long_stream`] streams.
pub fn long_stream_text(tokens: usize) -> String {
    (0..tokens).map(long_stream_token).collect()
}

/// A valid first chunk (`role` + `content: "Hello"`) followed by a `data: {not json` event,
/// then the body ends normally (no finish chunk, no `[DONE]`).
pub fn malformed_stream() -> Reply {
    Reply::sse(vec![
        data_frame(&chunk_json(
            "{\"role\":\"assistant\",\"content\":\"Hello\"}",
            None,
        )),
        Frame::new(b"data: {not json\n\n".to_vec()),
    ])
}
