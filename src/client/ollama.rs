//! Ollama's native chat API (`type: ollama`): `POST /api/chat`, answered as
//! newline-delimited JSON objects (`message.content`, `message.thinking`,
//! `message.tool_calls` with arguments as objects), the last with `done: true`, the token
//! counts and `done_reason`. Images travel base64 in `images`; sampling goes in `options`.

use serde_json::{Map, Value, json};

use super::api_client::Api;
use super::wire::{self, ResponseError, WireFormat};
use super::{ChatRequest, Model};
use loki_wire::body_stream::{DecodeError, Decoder};
use loki_wire::message::{Content, ContentPart, Role, Usage};
use loki_wire::provider_event::{FinishReason, ProviderEvent};

/// Ollama's default address.
pub const DEFAULT_API_BASE: &str = "http://127.0.0.1:11434";

/// Ollama's native API: `POST /api/chat`, a key only behind a proxy that wants one.
#[derive(Debug)]
pub struct Ollama;

impl Ollama {
    /// The server's root from a configured `api_base`: a `/v1` or `/api` suffix (the
    /// OpenAI-compatible or native path) is dropped.
    pub fn root(api_base: &str) -> &str {
        api_base
            .trim_end_matches('/')
            .trim_end_matches("/v1")
            .trim_end_matches("/api")
    }
}

impl Api for Ollama {
    fn format(&self, _model: &Model) -> &dyn WireFormat {
        &OllamaWire
    }

    fn chat_path(&self) -> &str {
        "/api/chat"
    }
}

/// NDJSON chat: every reply, asked to stream or not, is read line by line.
#[derive(Debug, Clone, Copy)]
pub struct OllamaWire;

impl WireFormat for OllamaWire {
    fn body(&self, model: &Model, request: &ChatRequest) -> Value {
        build_body(model, request)
    }

    fn streamed(&self, _response: &reqwest::Response, _request: &ChatRequest) -> bool {
        true
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::<Lines>::default()
    }

    fn parse(&self, body: &[u8]) -> Result<Vec<ProviderEvent>, ResponseError> {
        let mut lines = Lines::default();
        let mut out = Vec::new();
        lines.feed(body, &mut out)?;
        lines.finish(&mut out)?;
        Ok(out)
    }
}

/// Builds the request body.
pub fn build_body(model: &Model, request: &ChatRequest) -> Value {
    super::effort::ignored(request.controls.effort, "Ollama");
    let source = super::system_quirks(&request.messages, model);
    let mut messages = Vec::with_capacity(source.len());
    for m in source.iter() {
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        };
        let (text, images) = split_content(&m.content);
        let mut msg = json!({"role": role, "content": text});
        if !images.is_empty() {
            msg["images"] = json!(images);
        }
        if !m.tool_calls.is_empty() {
            let calls: Vec<Value> = m
                .tool_calls
                .iter()
                .map(|c| {
                    let args = wire::arguments_value(&c.arguments);
                    json!({"function": {"name": c.name, "arguments": args}})
                })
                .collect();
            msg["tool_calls"] = Value::Array(calls);
        }
        messages.push(msg);
    }
    let mut body = json!({
        "model": model.real_name(),
        "messages": messages,
        "stream": request.stream,
    });
    let mut options = Map::new();
    if let Some(t) = request.temperature {
        options.insert("temperature".into(), json!(t));
    }
    if let Some(p) = request.top_p {
        options.insert("top_p".into(), json!(p));
    }
    // Ollama generates until the context is full unless `num_predict` bounds it; the
    // registry gives its models a limit they always send (client::output_cap).
    if let Some(n) = request.output_limit(model) {
        options.insert("num_predict".into(), json!(n));
    }
    // Ollama's default context is small and cuts long prompts silently.
    if let Some(n) = model.config.max_input_tokens {
        options.insert("num_ctx".into(), json!(n));
    }
    if !options.is_empty() {
        body["options"] = Value::Object(options);
    }
    if !request.tools.is_empty() {
        body["tools"] = Value::Array(super::openai::function_tools(&request.tools));
    }
    body
}

/// Text, and the base64 data of inline images (Ollama cannot fetch URLs).
fn split_content(content: &Content) -> (String, Vec<String>) {
    match content {
        Content::Text(t) => (t.to_string(), Vec::new()),
        Content::Parts(parts) => {
            let mut text = Vec::new();
            let mut images = Vec::new();
            for part in parts {
                match part {
                    ContentPart::Text { text: t } => text.push(t.as_str()),
                    ContentPart::ImageUrl { image_url } => {
                        if let Some((_, data)) = image_url.url.split_once(";base64,") {
                            images.push(data.to_string());
                        }
                    }
                }
            }
            (text.join("\n"), images)
        }
    }
}

/// NDJSON decoding state. Only the unfinished line is buffered, and each byte is scanned
/// for a line end once, so one huge line costs linear time.
#[derive(Debug, Default)]
pub struct Lines {
    buffer: Vec<u8>,
    calls: usize,
    done: bool,
    max_line: Option<usize>,
}

impl Lines {
    fn check(&self, extra: usize) -> Result<(), DecodeError> {
        match self.max_line {
            Some(limit) if self.buffer.len() + extra > limit => Err(DecodeError::TooLarge(limit)),
            _ => Ok(()),
        }
    }
}

impl Lines {
    fn line(&mut self, line: &[u8], out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if text.is_empty() {
            return Ok(());
        }
        let value = wire::parse_json(text)?;
        if let Some(error) = value["error"].as_str() {
            return Err(DecodeError::Upstream(error.to_string()));
        }
        let message = &value["message"];
        if let Some(thinking) = message["thinking"].as_str().filter(|t| !t.is_empty()) {
            out.push(ProviderEvent::Reasoning(thinking.to_string()));
        }
        if let Some(content) = message["content"].as_str().filter(|t| !t.is_empty()) {
            out.push(ProviderEvent::Text(content.to_string()));
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            let function = &call["function"];
            let (id, name) = (call["id"].as_str(), function["name"].as_str());
            let arguments = function["arguments"].to_string();
            out.push(wire::call_started(self.calls, id, name, arguments));
            self.calls += 1;
        }
        if value["done"].as_bool() == Some(true) {
            let n = |key: &str| value[key].as_u64().unwrap_or(0);
            out.push(ProviderEvent::Usage(Usage {
                estimated: false,
                input_tokens: n("prompt_eval_count"),
                output_tokens: n("eval_count"),
                cached_tokens: 0,
            }));
            out.push(ProviderEvent::Finish(match value["done_reason"].as_str() {
                Some("length") => FinishReason::Length,
                _ if self.calls > 0 => FinishReason::ToolCalls,
                _ => FinishReason::Stop,
            }));
            self.done = true;
        }
        Ok(())
    }
}

impl Decoder for Lines {
    fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            self.check(end)?;
            let result = if self.buffer.is_empty() {
                self.line(&bytes[..end], out)
            } else {
                self.buffer.extend_from_slice(&bytes[..end]);
                let line = std::mem::take(&mut self.buffer);
                self.line(&line, out)
            };
            bytes = &bytes[end + 1..];
            result?;
        }
        self.check(bytes.len())?;
        self.buffer.extend_from_slice(bytes);
        Ok(())
    }

    fn set_max_event(&mut self, max: Option<usize>) {
        self.max_line = max;
    }

    fn finish(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        let rest = std::mem::take(&mut self.buffer);
        self.line(&rest, out)
    }

    fn complete(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_reply_reads_like_a_stream_and_the_root_drops_api_paths() {
        let body =
            br#"{"message":{"content":"hi"},"done":true,"prompt_eval_count":2,"eval_count":1}"#;
        let events = OllamaWire.parse(body).unwrap();
        assert_eq!(events[0], ProviderEvent::Text("hi".into()));
        assert_eq!(events[2], ProviderEvent::Finish(FinishReason::Stop));
        assert_eq!(Ollama::root("http://h:11434/v1/"), "http://h:11434");
        assert_eq!(Ollama::root("http://h:11434/api"), "http://h:11434");
    }

    #[test]
    fn a_line_over_the_limit_is_refused_before_it_ends() {
        let mut lines = Lines::default();
        lines.set_max_event(Some(64));
        let mut out = Vec::new();
        lines
            .feed(
                b"{\"message\":{\"content\":\"ok\"},\"done\":false}\n{\"a\":\"",
                &mut out,
            )
            .unwrap();
        assert_eq!(out, vec![ProviderEvent::Text("ok".into())]);
        assert_eq!(
            lines.feed(&[b'x'; 64], &mut out),
            Err(DecodeError::TooLarge(64))
        );
    }

    #[test]
    fn ndjson_in_any_split_gives_the_same_events() {
        let body = concat!(
            r#"{"message":{"role":"assistant","content":"","thinking":"hm"},"done":false}"#,
            "\n",
            r#"{"message":{"role":"assistant","content":"Hé"},"done":false}"#,
            "\n",
            r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},"done":false}"#,
            "\n",
            r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":7,"eval_count":3}"#,
        )
        .as_bytes();
        let mut reference = None;
        for split in 1..body.len() {
            let mut lines = Lines::default();
            let mut out = Vec::new();
            for piece in body.chunks(split) {
                lines.feed(piece, &mut out).unwrap();
            }
            lines.finish(&mut out).unwrap();
            assert!(lines.complete());
            match &reference {
                None => reference = Some(out),
                Some(r) => assert_eq!(&out, r, "split {split}"),
            }
        }
        let events = reference.unwrap();
        assert_eq!(events[0], ProviderEvent::Reasoning("hm".into()));
        assert_eq!(events[1], ProviderEvent::Text("Hé".into()));
        assert_eq!(
            events[3],
            ProviderEvent::Usage(Usage {
                estimated: false,
                input_tokens: 7,
                output_tokens: 3,
                cached_tokens: 0
            })
        );
        assert_eq!(events[4], ProviderEvent::Finish(FinishReason::ToolCalls));
        let mut lines = Lines::default();
        let err = lines
            .feed(b"{\"error\":\"model 'x' not found\"}\n", &mut Vec::new())
            .unwrap_err();
        assert_eq!(err, DecodeError::Upstream("model 'x' not found".into()));
    }
}
