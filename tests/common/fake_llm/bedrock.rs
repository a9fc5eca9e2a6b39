//! AWS Bedrock Runtime replies, as the service sends them. `POST /model/{id}/converse-stream`
//! answers in the AWS event-stream binary framing (`application/vnd.amazon.eventstream`), one
//! message per [`Frame`]: `total_len, headers_len, prelude CRC32` (u32 BE each), string headers
//! (`:event-type`, `:content-type`, `:message-type`), a JSON payload padded with `"p"` as AWS
//! pads it, and a message CRC32. `POST /model/{id}/converse` answers with JSON; REST errors are
//! `{"message"}` named by `x-amzn-ErrorType`. Usage: `inputTokens = INPUT_TOKENS`,
//! `outputTokens` = number of deltas, at least 1.

use serde_json::{Value, json};

use super::{BodyMode, Frame, Reply};

pub const CONTENT_TYPE: &str = "application/vnd.amazon.eventstream";
pub const REQUEST_ID: &str = "7d6a5c1e-2f0b-4c1a-9f5e-0b7c3d2e1a90";
pub const INPUT_TOKENS: u64 = 12;
/// The `signature` delta that closes the reasoning block of [`reasoning_then_text`].
pub const REASONING_SIGNATURE: &str = "ErUBCkYIBxgCIkBfakeSignatureAAAAAAAAAAAAAAAA";
const PAD: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const BEDROCK: &str = "http://internal.amazon.com/coral/com.amazon.bedrock/";
const CORAL: &str = "http://internal.amazon.com/coral/com.amazon.coral.service/";

const fn crc_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut bit = 0;
        while bit < 8 {
            c = (c >> 1) ^ (0xEDB8_8320 & (c & 1).wrapping_neg());
            bit += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

const CRC_TABLE: [u32; 256] = crc_table();

/// CRC-32 (IEEE 802.3, as zlib's `crc32`).
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc = CRC_TABLE[((crc ^ u32::from(byte)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

/// One event-stream message with string-typed (type 7) headers.
pub fn encode_message(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        let name_len = u8::try_from(name.len())
            .unwrap_or_else(|_| panic!("event-stream header name too long: {name}"));
        let value_len = u16::try_from(value.len())
            .unwrap_or_else(|_| panic!("event-stream header {name} value too long"));
        head.push(name_len);
        head.extend_from_slice(name.as_bytes());
        head.push(7);
        head.extend_from_slice(&value_len.to_be_bytes());
        head.extend_from_slice(value.as_bytes());
    }
    let total = 12 + head.len() + payload.len() + 4;
    let mut message = Vec::with_capacity(total);
    message.extend_from_slice(&(total as u32).to_be_bytes());
    message.extend_from_slice(&(head.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&message);
    message.extend_from_slice(&prelude_crc.to_be_bytes());
    message.extend_from_slice(&head);
    message.extend_from_slice(payload);
    let message_crc = crc32(&message);
    message.extend_from_slice(&message_crc.to_be_bytes());
    message
}

fn json_message(type_header: (&str, &str), message_type: &str, payload: &Value) -> Frame {
    let content_type = (":content-type", "application/json");
    let headers = [type_header, content_type, (":message-type", message_type)];
    Frame::new(encode_message(&headers, payload.to_string().as_bytes()))
}

/// An `event` message of type `event_type` with a JSON payload.
pub fn event(event_type: &str, payload: &Value) -> Frame {
    json_message((":event-type", event_type), "event", payload)
}

/// An `exception` message (e.g. `throttlingException`, `modelStreamErrorException`).
pub fn exception(exception_type: &str, message: &str) -> Frame {
    let payload = json!({"message": message});
    json_message((":exception-type", exception_type), "exception", &payload)
}

/// `200`, `Content-Type: application/vnd.amazon.eventstream`, chunked, one chunk per message.
pub fn stream(frames: Vec<Frame>) -> Reply {
    let reply = Reply::raw(200, CONTENT_TYPE, Vec::new()).mode(BodyMode::Chunked);
    Reply { frames, ..reply }.header("x-amzn-RequestId", REQUEST_ID)
}

/// A `"p"` padding value of the given length, shaped like AWS's.
fn pad(len: usize) -> &'static str {
    &PAD[..len % PAD.len()]
}

fn message_start() -> Frame {
    event("messageStart", &json!({"p": pad(4), "role": "assistant"}))
}

fn delta(index: usize, delta: Value) -> Frame {
    let payload = json!({"contentBlockIndex": index, "delta": delta, "p": pad(2 + index)});
    event("contentBlockDelta", &payload)
}

fn block_stop(index: usize) -> Frame {
    let payload = json!({"contentBlockIndex": index, "p": pad(9)});
    event("contentBlockStop", &payload)
}

/// `messageStop`, then `metadata` with usage and metrics.
fn finish(frames: &mut Vec<Frame>, stop_reason: &str, output_tokens: u64) {
    let (input, output) = (INPUT_TOKENS, output_tokens.max(1));
    let usage = json!({"inputTokens": input, "outputTokens": output,
        "totalTokens": input + output, "cacheReadInputTokens": 0});
    let stop = json!({"p": pad(12), "stopReason": stop_reason});
    frames.push(event("messageStop", &stop));
    let metadata = json!({"metrics": {"latencyMs": 100}, "p": pad(20), "usage": usage});
    frames.push(event("metadata", &metadata));
}

/// A streamed text answer: one `contentBlockDelta` per part in block 0 (Bedrock sends no
/// `contentBlockStart` for text), `stopReason: "end_turn"`, metadata.
pub fn text_stream(parts: &[&str]) -> Reply {
    let mut frames = vec![message_start()];
    frames.extend(parts.iter().map(|part| delta(0, json!({"text": part}))));
    frames.push(block_stop(0));
    finish(&mut frames, "end_turn", parts.len() as u64);
    stream(frames)
}

/// `s` cut in two at a char boundary near the middle, empty halves dropped.
fn halves(s: &str) -> Vec<&str> {
    let cut = (s.len() / 2..)
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len());
    [&s[..cut], &s[cut..]]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect()
}

/// Text "Let me check." in block 0, then per `(id, name, input)` a block `i + 1` with a
/// `toolUse` `contentBlockStart` and the input JSON text split across two deltas;
/// `stopReason: "tool_use"`.
pub fn tool_use_stream(calls: &[(&str, &str, &str)]) -> Reply {
    let mut frames = vec![
        message_start(),
        delta(0, json!({"text": "Let me check."})),
        block_stop(0),
    ];
    let mut deltas = 1;
    for (i, (id, name, input)) in calls.iter().enumerate() {
        let index = i + 1;
        let start = json!({"contentBlockIndex": index, "p": pad(6),
            "start": {"toolUse": {"toolUseId": id, "name": name}}});
        frames.push(event("contentBlockStart", &start));
        for piece in halves(input) {
            frames.push(delta(index, json!({"toolUse": {"input": piece}})));
            deltas += 1;
        }
        frames.push(block_stop(index));
    }
    finish(&mut frames, "tool_use", deltas);
    stream(frames)
}

/// A reasoning block 0 (`reasoningContent.text`, then `reasoningContent.signature`), then
/// the answer in block 1; `stopReason: "end_turn"`.
pub fn reasoning_then_text(reasoning: &str, text: &str) -> Reply {
    let signature = json!({"reasoningContent": {"signature": REASONING_SIGNATURE}});
    let mut frames = vec![
        message_start(),
        delta(0, json!({"reasoningContent": {"text": reasoning}})),
        delta(0, signature),
        block_stop(0),
        delta(1, json!({"text": text})),
        block_stop(1),
    ];
    finish(&mut frames, "end_turn", 2);
    stream(frames)
}

/// `messageStart`, one text delta, then an exception message; the body ends there.
pub fn exception_mid_stream(first_text: &str, exception_type: &str, message: &str) -> Reply {
    stream(vec![
        message_start(),
        delta(0, json!({"text": first_text})),
        exception(exception_type, message),
    ])
}

/// A non-streaming Converse answer with one text block, `stopReason: "end_turn"`.
pub fn converse_json(text: &str) -> Reply {
    let (input, output) = (INPUT_TOKENS, text.split_whitespace().count().max(1) as u64);
    let usage =
        json!({"inputTokens": input, "outputTokens": output, "totalTokens": input + output});
    let body = json!({
        "metrics": {"latencyMs": 1},
        "output": {"message": {"content": [{"text": text}], "role": "assistant"}},
        "stopReason": "end_turn", "usage": usage
    });
    Reply::json(200, body).header("x-amzn-RequestId", REQUEST_ID)
}

/// A REST error: `{"message"}`, and `x-amzn-ErrorType: <Kind>:<origin URL>` as AWS sends it,
/// the kind matching the status (400 `ValidationException`, 429 `ThrottlingException`, ...).
pub fn error(status: u16, message: &str) -> Reply {
    let (kind, origin) = match status {
        400 => ("ValidationException", BEDROCK),
        401 => ("UnrecognizedClientException", CORAL),
        403 => ("AccessDeniedException", BEDROCK),
        404 => ("ResourceNotFoundException", BEDROCK),
        408 => ("ModelTimeoutException", BEDROCK),
        424 => ("ModelErrorException", BEDROCK),
        429 => ("ThrottlingException", BEDROCK),
        503 => ("ServiceUnavailableException", BEDROCK),
        _ => ("InternalServerException", BEDROCK),
    };
    Reply::json(status, json!({"message": message}))
        .header("x-amzn-ErrorType", &format!("{kind}:{origin}"))
        .header("x-amzn-RequestId", REQUEST_ID)
}

/// The 403 IAM denial from AWS's auth layer, whose body key is capitalised: `{"Message"}`.
pub fn access_denied(message: &str) -> Reply {
    let kind = format!("AccessDeniedException:{CORAL}");
    Reply::json(403, json!({"Message": message}))
        .header("x-amzn-ErrorType", &kind)
        .header("x-amzn-RequestId", REQUEST_ID)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn be32(bytes: &[u8]) -> u32 {
        u32::from_be_bytes(bytes.try_into().unwrap())
    }

    #[test]
    fn crc32_matches_the_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn messages_carry_valid_lengths_and_crcs() {
        // AWS's "empty message" test vector.
        let empty = b"\0\0\0\x10\0\0\0\0\x05\xc2\x48\xeb\x7d\x98\xc8\xff";
        assert_eq!(encode_message(&[], b""), empty);

        let message = encode_message(&[(":event-type", "messageStart")], b"{\"p\":\"a\"}");
        assert_eq!(be32(&message[0..4]) as usize, message.len());
        assert_eq!(be32(&message[4..8]), 1 + 11 + 1 + 2 + 12);
        assert_eq!(be32(&message[8..12]), crc32(&message[..8]));
        let end = message.len() - 4;
        assert_eq!(be32(&message[end..]), crc32(&message[..end]));
        assert_eq!(&message[12..14], b"\x0b:");
        assert_eq!(&message[end - 9..end], b"{\"p\":\"a\"}");
    }
}
