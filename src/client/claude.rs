//! Anthropic's Messages API (`type: claude`): `system` as a top-level field, content
//! blocks (`text`, `image`, `tool_use`, `tool_result`, `thinking`), `x-api-key` and
//! `anthropic-version` headers, and the SSE event stream (`message_start`,
//! `content_block_start|delta|stop`, `message_delta`, `message_stop`, `ping`, `error`).
//!
//! The system prompt carries a `cache_control` breakpoint so repeated turns reuse it;
//! cache reads show up as cached tokens in the usage.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::ToolChoice;
use super::api_client::{Api, ApiClient, KeyHeader};
use super::wire::{self, Outgoing, ResponseError, SseFormat, WireFormat};
use super::{ChatRequest, Model, ProviderError};
use loki_wire::body_stream::{DecodeError, SseParser};
use loki_wire::message::{Message, Role, Usage};
use loki_wire::provider_event::{FinishReason, ProviderEvent};
use loki_wire::sse::SseEvent;

/// The API version loki speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Output limit sent when neither the model nor the request sets one (the API requires one).
const DEFAULT_MAX_TOKENS: u64 = 8192;

/// The system block OAuth sign-ins must start with.
const OAUTH_SYSTEM_PREFIX: &str = "You are Claude Code, Anthropic's official CLI for Claude.";

/// Anthropic's API: `/messages` with `anthropic-version`, a key in `x-api-key` or an
/// OAuth sign-in (which must announce itself as Claude Code).
#[derive(Debug)]
pub struct Claude;

impl Api for Claude {
    fn key_header(&self) -> KeyHeader {
        KeyHeader::Named("x-api-key")
    }

    fn format(&self, _model: &Model) -> &dyn WireFormat {
        &CLAUDE_WIRE
    }

    fn request(
        &self,
        client: &ApiClient,
        _model: &Model,
        _request: &ChatRequest,
        body: Value,
    ) -> Result<Outgoing, ProviderError> {
        let url = format!("{}/messages", client.api_base());
        Ok(Outgoing::new(url, body).header("anthropic-version", ANTHROPIC_VERSION))
    }

    fn authorize<'a>(
        &'a self,
        client: &'a ApiClient,
        outgoing: Outgoing,
    ) -> BoxFuture<'a, Result<Outgoing, ProviderError>> {
        Box::pin(async move {
            let mut outgoing = client.authorize(outgoing, self.key_header()).await?;
            if client.signed_in() {
                outgoing = outgoing.header("anthropic-beta", "oauth-2025-04-20");
                let prefix = json!({"type": "text", "text": OAUTH_SYSTEM_PREFIX});
                match outgoing.body["system"].as_array_mut() {
                    Some(blocks) => blocks.insert(0, prefix),
                    None => outgoing.body["system"] = json!([prefix]),
                }
            }
            Ok(outgoing)
        })
    }
}

/// The Messages format: content blocks, SSE events named by `type`.
pub const CLAUDE_WIRE: SseFormat<EventParser> = SseFormat::new(build_body, parse_response);

/// Builds the request body.
pub fn build_body(model: &Model, request: &ChatRequest) -> Value {
    let messages = super::system_quirks(&request.messages, model);
    let system: Vec<String> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(Message::text_content)
        .collect();
    let max_tokens = request
        .max_tokens
        .or(model.config.max_output_tokens)
        .unwrap_or(DEFAULT_MAX_TOKENS);
    let mut body = json!({
        "model": model.real_name(),
        "max_tokens": max_tokens,
        "messages": wire::block_turns(&messages, &BLOCKS),
    });
    let Some(obj) = body.as_object_mut() else {
        return body;
    };
    let mut system = system;
    if let Some(format) = &request.controls.format {
        // No JSON mode here: the instruction asks for it.
        system.push(super::json_instruction(format));
    }
    if !system.is_empty() {
        obj.insert(
            "system".into(),
            json!([{
                "type": "text",
                "text": system.join("\n\n"),
                "cache_control": {"type": "ephemeral"},
            }]),
        );
    }
    if !request.controls.stop.is_empty() {
        obj.insert("stop_sequences".into(), json!(request.controls.stop));
    }
    let thinking = request
        .controls
        .effort
        .and_then(|effort| super::effort::claude_thinking(effort, max_tokens));
    // Extended thinking refuses a set temperature or top_p: thinking wins.
    let sampling = thinking.is_none();
    if let Some(thinking) = thinking {
        obj.insert("thinking".into(), thinking);
    }
    if let Some(t) = request.temperature.filter(|_| sampling) {
        obj.insert("temperature".into(), json!(t));
    }
    // Current Claude models refuse temperature and top_p together; temperature wins.
    if let Some(p) = request
        .top_p
        .filter(|_| sampling && request.temperature.is_none())
    {
        obj.insert("top_p".into(), json!(p));
    }
    if request.stream {
        obj.insert("stream".into(), json!(true));
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.parameters,
                })
            })
            .collect();
        // Cache breakpoint after the tool definitions (they rarely change).
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = json!({"type": "ephemeral"});
        }
        obj.insert("tools".into(), Value::Array(tools));
        let choice = match &request.controls.tool_choice {
            Some(ToolChoice::Auto) => Some(json!({"type": "auto"})),
            Some(ToolChoice::None) => Some(json!({"type": "none"})),
            Some(ToolChoice::Required) => Some(json!({"type": "any"})),
            Some(ToolChoice::Function(name)) => Some(json!({"type": "tool", "name": name})),
            None => None,
        };
        if let Some(choice) = choice {
            obj.insert("tool_choice".into(), choice);
        }
    }
    // And after the conversation so far, so the next turn reads it from the cache.
    if let Some(block) = body["messages"]
        .as_array_mut()
        .and_then(|m| m.last_mut())
        .and_then(|m| m["content"].as_array_mut())
        .and_then(|c| c.last_mut())
    {
        block["cache_control"] = json!({"type": "ephemeral"});
    }
    body
}

/// Anthropic's content blocks; `tool_result`s open a user turn (see [`wire::block_turns`]).
const BLOCKS: wire::Blocks = wire::Blocks {
    text: |text| json!({"type": "text", "text": text}),
    image: image_block,
    reasoning: |r| json!({"type": "thinking", "thinking": r.text, "signature": r.signature}),
    tool_use: |call, input| {
        let (id, name) = (&call.id, &call.name);
        json!({"type": "tool_use", "id": id, "name": name, "input": input})
    },
    tool_result: |id, text| json!({"type": "tool_result", "tool_use_id": id, "content": text}),
};

/// `data:` URLs become base64 sources; other URLs are passed by reference.
fn image_block(url: &str) -> Value {
    if let Some((media_type, data)) = wire::inline_image(url) {
        return json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        });
    }
    json!({"type": "image", "source": {"type": "url", "url": url}})
}

fn usage_of(value: &Value) -> Usage {
    let n = |key: &str| value[key].as_u64().unwrap_or(0);
    let cached = n("cache_read_input_tokens");
    Usage {
        estimated: false,
        input_tokens: n("input_tokens") + cached + n("cache_creation_input_tokens"),
        output_tokens: n("output_tokens"),
        cached_tokens: cached,
    }
}

fn finish_of(reason: &str) -> FinishReason {
    match reason {
        "max_tokens" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        _ => FinishReason::Stop,
    }
}

/// Parses a whole (non-streamed) response.
pub fn parse_response(bytes: &[u8]) -> Result<Vec<ProviderEvent>, ResponseError> {
    let value: Value = serde_json::from_slice(bytes)?;
    if value["type"] == "error" {
        return Err(DecodeError::Upstream(error_text(&value)).into());
    }
    let mut events = Vec::new();
    let mut calls = 0usize;
    for block in value["content"].as_array().into_iter().flatten() {
        match block["type"].as_str() {
            Some("text") => {
                events.push(ProviderEvent::Text(
                    block["text"].as_str().unwrap_or("").into(),
                ));
            }
            Some("thinking") => {
                events.push(ProviderEvent::Reasoning(
                    block["thinking"].as_str().unwrap_or("").into(),
                ));
                if let Some(sig) = block["signature"].as_str() {
                    events.push(ProviderEvent::ReasoningSignature(sig.into()));
                }
            }
            Some("tool_use") => {
                let (id, name) = (block["id"].as_str(), block["name"].as_str());
                let arguments = block["input"].to_string();
                events.push(wire::call_started(calls, id, name, arguments));
                calls += 1;
            }
            _ => {}
        }
    }
    events.push(ProviderEvent::Usage(usage_of(&value["usage"])));
    events.push(ProviderEvent::Finish(finish_of(
        value["stop_reason"].as_str().unwrap_or("end_turn"),
    )));
    Ok(events)
}

fn error_text(value: &Value) -> String {
    let error = &value["error"];
    format!(
        "{}: {}",
        error["type"].as_str().unwrap_or("error"),
        error["message"].as_str().unwrap_or("unknown error")
    )
}

/// Stream decoding state: which content block is which tool call, and usage so far.
#[derive(Default)]
pub struct EventParser {
    /// `(block index, call index)` of tool_use blocks.
    tool_blocks: Vec<(u64, usize)>,
    usage: Usage,
    stopped: bool,
}

impl EventParser {
    /// Turns one SSE `data:` payload into events; `Err` for an `error` event or bad JSON.
    pub fn parse(&mut self, data: &str) -> Result<Vec<ProviderEvent>, DecodeError> {
        let value = wire::parse_json(data)?;
        let mut events = Vec::new();
        match value["type"].as_str().unwrap_or("") {
            "message_start" => self.usage = usage_of(&value["message"]["usage"]),
            "content_block_start" => {
                let block = &value["content_block"];
                let index = value["index"].as_u64().unwrap_or(0);
                match block["type"].as_str() {
                    Some("tool_use") => {
                        let call = self.tool_blocks.len();
                        self.tool_blocks.push((index, call));
                        let (id, name) = (block["id"].as_str(), block["name"].as_str());
                        events.push(wire::call_started(call, id, name, ""));
                    }
                    Some("text") => {
                        if let Some(text) = block["text"].as_str().filter(|t| !t.is_empty()) {
                            events.push(ProviderEvent::Text(text.into()));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = &value["delta"];
                let index = value["index"].as_u64().unwrap_or(0);
                match delta["type"].as_str() {
                    Some("text_delta") => {
                        events.push(ProviderEvent::Text(
                            delta["text"].as_str().unwrap_or("").into(),
                        ));
                    }
                    Some("thinking_delta") => events.push(ProviderEvent::Reasoning(
                        delta["thinking"].as_str().unwrap_or("").into(),
                    )),
                    Some("signature_delta") => {
                        if let Some(sig) = delta["signature"].as_str() {
                            events.push(ProviderEvent::ReasoningSignature(sig.into()));
                        }
                    }
                    Some("input_json_delta") => {
                        if let Some(&(_, call)) = self.tool_blocks.iter().find(|(b, _)| *b == index)
                        {
                            let piece = delta["partial_json"].as_str().unwrap_or("");
                            events.push(wire::call_arguments(call, piece));
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                let output = value["usage"]["output_tokens"].as_u64().unwrap_or(0);
                self.usage.output_tokens = output.max(self.usage.output_tokens);
                if let Some(reason) = value["delta"]["stop_reason"].as_str() {
                    events.push(ProviderEvent::Usage(self.usage));
                    events.push(ProviderEvent::Finish(finish_of(reason)));
                    self.stopped = true;
                }
            }
            "message_stop" => self.stopped = true,
            "error" => return Err(DecodeError::Upstream(error_text(&value))),
            _ => {} // ping, content_block_stop, future event types
        }
        Ok(events)
    }
}

impl SseParser for EventParser {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        out.extend(self.parse(&event.data)?);
        Ok(())
    }

    fn complete(&self) -> bool {
        self.stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ToolSpec;
    use loki_wire::message::ToolCall;

    #[test]
    fn bodies_put_system_on_top_and_tools_in_blocks() {
        let mut assistant = Message::text(Role::Assistant, "");
        assistant.tool_calls.push(ToolCall {
            id: "toolu_1".into(),
            name: "fs_read".into(),
            arguments: r#"{"path":"a"}"#.into(),
            signature: None,
        });
        let mut result = Message::text(Role::Tool, "contents");
        result.tool_call_id = Some("toolu_1".into());
        let request = ChatRequest {
            controls: Default::default(),
            messages: vec![
                Message::text(Role::System, "Be brief."),
                Message::text(Role::User, "read a"),
                assistant,
                result,
            ],
            temperature: Some(0.2),
            top_p: None,
            max_tokens: None,
            stream: true,
            tools: vec![ToolSpec {
                name: "fs_read".into(),
                description: "Read".into(),
                parameters: json!({"type": "object"}),
            }],
        };
        let model = Model::named("claude", "claude-sonnet-4-5");
        assert_eq!(
            build_body(&model, &request),
            json!({
                "model": "claude-sonnet-4-5",
                "max_tokens": 8192,
                "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "read a"}]},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "fs_read", "input": {"path": "a"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "contents", "cache_control": {"type": "ephemeral"}}]}
                ],
                "temperature": 0.2,
                "stream": true,
                "tools": [{"name": "fs_read", "description": "Read", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}]
            })
        );
    }

    #[test]
    fn stream_events_become_provider_events() {
        let mut parser = EventParser::default();
        let frames = [
            r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_9","name":"f","input":{}}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"1}"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}"#,
            r#"{"type":"message_stop"}"#,
        ];
        let events: Vec<ProviderEvent> = frames
            .iter()
            .flat_map(|f| parser.parse(f).unwrap())
            .collect();
        assert_eq!(
            events,
            vec![
                ProviderEvent::Reasoning("hmm".into()),
                ProviderEvent::Text("Hi".into()),
                wire::call_started(0, Some("toolu_9"), Some("f"), ""),
                wire::call_arguments(0, "{\"a\":"),
                wire::call_arguments(0, "1}"),
                ProviderEvent::Usage(Usage {
                    estimated: false,
                    input_tokens: 100,
                    output_tokens: 20,
                    cached_tokens: 90
                }),
                ProviderEvent::Finish(FinishReason::ToolCalls),
            ]
        );
        assert!(parser.stopped);
        let err = EventParser::default()
            .parse(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#)
            .unwrap_err();
        assert_eq!(
            err,
            DecodeError::Upstream("overloaded_error: Overloaded".into())
        );
    }
}
