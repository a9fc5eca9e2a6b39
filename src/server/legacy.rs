//! OpenAI's legacy completions (`POST /v1/completions` with `model` and `prompt`), which
//! share their path with loki's own one-shot completions. A request is OpenAI's when an
//! official OpenAI SDK sends it (`X-Stainless-Lang`) or it carries a field only OpenAI's
//! endpoint has; it then runs as a chat completion with the prompt as the user message,
//! and the answer — whole or streamed — is rewritten into the `text_completion` shape.

use axum::body::Body;
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{Map, Value, json};

/// Fields only OpenAI's legacy endpoint takes.
const OPENAI_ONLY: &[&str] = &[
    "max_tokens",
    "n",
    "stop",
    "echo",
    "suffix",
    "logprobs",
    "best_of",
    "seed",
    "user",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "stream_options",
    "top_p",
];

/// Whether `body` (sent with `headers`) is a request to OpenAI's legacy endpoint.
pub(super) fn is_openai(headers: &HeaderMap, body: &Value) -> bool {
    headers.contains_key("x-stainless-lang")
        || body["prompt"].is_array()
        || OPENAI_ONLY.iter().any(|field| body.get(field).is_some())
}

/// The chat completion request that answers legacy request `body`.
pub(super) fn as_chat(body: &Value) -> Result<Value, &'static str> {
    let prompt = match &body["prompt"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) if parts.len() == 1 && parts[0].is_string() => {
            parts[0].as_str().unwrap_or_default().to_string()
        }
        Value::Array(_) => return Err("`prompt` as a list takes exactly one string"),
        _ => return Err("`prompt` is a string"),
    };
    if body["echo"] == true || body.get("suffix").is_some_and(|s| !s.is_null()) {
        return Err("`echo` and `suffix` are not supported");
    }
    let mut chat = Map::new();
    chat.insert("model".into(), body["model"].clone());
    chat.insert(
        "messages".into(),
        json!([{"role": "user", "content": prompt}]),
    );
    for key in [
        "stream",
        "stream_options",
        "max_tokens",
        "temperature",
        "top_p",
        "stop",
        "seed",
        "n",
    ] {
        if let Some(value) = body.get(key).filter(|v| !v.is_null()) {
            chat.insert(key.into(), value.clone());
        }
    }
    Ok(Value::Object(chat))
}

/// A chat completion (whole or streamed) in the `text_completion` shape.
pub(super) fn as_text_completion(response: Response, stream: bool) -> Response {
    let (parts, body) = response.into_parts();
    if !parts.status.is_success() {
        return Response::from_parts(parts, body);
    }
    let body = if stream {
        let chunks = futures_util::StreamExt::map(body.into_data_stream(), |chunk| {
            chunk.map(|bytes| bytes::Bytes::from(rewrite_event(&bytes)))
        });
        Body::from_stream(chunks)
    } else {
        let rewritten = async move {
            let bytes = super::reply::answer_bytes(body).await;
            let text = serde_json::from_slice::<Value>(&bytes)
                .map(|v| text_completion(&v).to_string())
                .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).into_owned());
            Ok::<_, std::convert::Infallible>(bytes::Bytes::from(text))
        };
        Body::from_stream(futures_util::stream::once(rewritten))
    };
    let mut parts = parts;
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Response::from_parts(parts, body)
}

/// One server-sent event's text, with a chat chunk rewritten as a text completion.
fn rewrite_event(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let rewritten = line
            .strip_prefix("data: ")
            .and_then(|data| serde_json::from_str::<Value>(data.trim_end()).ok())
            .filter(|v| v["object"] == "chat.completion.chunk")
            .map(|v| format!("data: {}\n", text_completion(&v)));
        out.push_str(rewritten.as_deref().unwrap_or(line));
    }
    out
}

/// A `chat.completion` or `chat.completion.chunk` as a `text_completion`.
fn text_completion(chat: &Value) -> Value {
    let choices: Vec<Value> = chat["choices"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|choice| {
            let text = choice["message"]["content"]
                .as_str()
                .or(choice["delta"]["content"].as_str())
                .unwrap_or_default();
            json!({"text": text, "index": choice["index"], "logprobs": null,
                   "finish_reason": choice["finish_reason"]})
        })
        .collect();
    let mut out = json!({
        "id": chat["id"].as_str().map(|id| id.replace("chatcmpl-", "cmpl-")),
        "object": "text_completion",
        "created": chat["created"],
        "model": chat["model"],
        "choices": choices,
    });
    if !chat["usage"].is_null() {
        out["usage"] = chat["usage"].clone();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_answers_and_chunks_become_text_completions() {
        let chat = json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 5,
            "model": "m", "choices": [{"index": 0, "message": {"role": "assistant",
            "content": "hi"}, "finish_reason": "stop"}], "usage": {"total_tokens": 3}});
        let text = text_completion(&chat);
        assert_eq!(text["object"], "text_completion");
        assert_eq!(text["id"], "cmpl-1");
        assert_eq!(text["choices"][0]["text"], "hi");
        assert_eq!(text["usage"]["total_tokens"], 3);
        let event = rewrite_event(
            b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
        );
        assert!(
            event.starts_with("data: {") && event.ends_with("\n\n"),
            "{event}"
        );
        assert!(event.contains("\"text\":\"a\""), "{event}");
        assert_eq!(rewrite_event(b"data: [DONE]\n\n"), "data: [DONE]\n\n");
    }

    #[test]
    fn openai_requests_are_told_from_loki_s() {
        let headers = HeaderMap::new();
        assert!(!is_openai(&headers, &json!({"prompt": "hi", "model": "m"})));
        assert!(is_openai(
            &headers,
            &json!({"prompt": "hi", "max_tokens": 5})
        ));
        let mut sdk = HeaderMap::new();
        sdk.insert("x-stainless-lang", "python".parse().unwrap());
        assert!(is_openai(&sdk, &json!({"prompt": "hi", "model": "m"})));
    }
}
