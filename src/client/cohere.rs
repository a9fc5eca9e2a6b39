//! Cohere's v2 chat API (`type: cohere`): OpenAI-like messages (an assistant's text before
//! tool calls travels as `tool_plan`), `p` for nucleus sampling, and named SSE events
//! (`content-delta`, `tool-plan-delta`, `tool-call-start|delta|end`, `message-end`).

use serde_json::{Value, json};

use super::api_client::{Api, ApiClient};
use super::embed::Dialect;
use super::wire::{self, ResponseError, SseFormat, WireFormat};
use super::{ChatRequest, Model};
use loki_wire::body_stream::{DecodeError, SseParser};
use loki_wire::message::Usage;
use loki_wire::provider_event::{FinishReason, ProviderEvent};
use loki_wire::sse::SseEvent;

/// Default endpoint.
pub const DEFAULT_API_BASE: &str = "https://api.cohere.ai/v2";

/// Cohere v2: `/chat`, `/embed` and `/rerank` with a bearer key.
#[derive(Debug)]
pub struct Cohere;

impl Api for Cohere {
    fn format(&self, _model: &Model) -> &dyn WireFormat {
        &COHERE_WIRE
    }

    fn chat_path(&self) -> &str {
        "/chat"
    }

    fn embeddings(&self, _client: &ApiClient) -> Option<Dialect> {
        Some(Dialect::Cohere)
    }

    fn reranking(&self, _client: &ApiClient) -> Option<Dialect> {
        Some(Dialect::Cohere)
    }
}

/// The v2 chat format: OpenAI-like messages, named SSE events.
pub const COHERE_WIRE: SseFormat<EventParser> = SseFormat::new(build_body, parse_response);

/// Builds the request body.
pub fn build_body(model: &Model, request: &ChatRequest) -> Value {
    super::effort::ignored(request.controls.effort, "Cohere");
    let mut messages = super::openai::wire_messages(&request.messages, model);
    for m in &mut messages {
        if m["role"] == "assistant"
            && m.get("tool_calls").is_some()
            && let Some(obj) = m.as_object_mut()
        {
            match obj.remove("content") {
                Some(Value::String(plan)) if !plan.is_empty() => {
                    obj.insert("tool_plan".into(), Value::String(plan));
                }
                _ => {}
            }
        }
    }
    let mut body = json!({"model": model.real_name(), "messages": messages});
    let Some(obj) = body.as_object_mut() else {
        return body;
    };
    if request.stream {
        obj.insert("stream".into(), json!(true));
    }
    if let Some(t) = request.temperature {
        obj.insert("temperature".into(), json!(t));
    }
    if let Some(p) = request.top_p {
        obj.insert("p".into(), json!(p));
    }
    if let Some(max) = request.output_limit(model) {
        obj.insert("max_tokens".into(), json!(max));
    }
    if !request.tools.is_empty() {
        let tools = super::openai::function_tools(&request.tools);
        obj.insert("tools".into(), Value::Array(tools));
    }
    body
}

fn usage_of(usage: &Value) -> Usage {
    // Billed units are what prices apply to; raw token counts are the fallback.
    let counts = if usage["billed_units"].is_object() {
        &usage["billed_units"]
    } else {
        &usage["tokens"]
    };
    Usage {
        estimated: false,
        input_tokens: counts["input_tokens"].as_f64().unwrap_or(0.0) as u64,
        output_tokens: counts["output_tokens"].as_f64().unwrap_or(0.0) as u64,
        cached_tokens: 0,
    }
}

fn finish_of(reason: &str) -> FinishReason {
    match reason {
        "COMPLETE" | "STOP_SEQUENCE" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "TOOL_CALL" => FinishReason::ToolCalls,
        other => FinishReason::Other(other.to_string()),
    }
}

/// Stream decoding state.
#[derive(Debug, Default)]
pub struct EventParser {
    ended: bool,
}

impl SseParser for EventParser {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        let value = wire::parse_json(&event.data)?;
        let delta = &value["delta"]["message"];
        let index = value["index"].as_u64().unwrap_or(0) as usize;
        match value["type"].as_str().unwrap_or(event.event.as_str()) {
            "content-delta" => {
                if let Some(text) = delta["content"]["text"].as_str() {
                    out.push(ProviderEvent::Text(text.to_string()));
                }
            }
            "tool-plan-delta" => {
                if let Some(text) = delta["tool_plan"].as_str() {
                    out.push(ProviderEvent::Reasoning(text.to_string()));
                }
            }
            "tool-call-start" => out.push(call_delta(index, &delta["tool_calls"], "")),
            "tool-call-delta" => {
                let piece = delta["tool_calls"]["function"]["arguments"].as_str();
                out.push(wire::call_arguments(index, piece.unwrap_or_default()));
            }
            "message-end" => {
                let end = &value["delta"];
                out.push(ProviderEvent::Usage(usage_of(&end["usage"])));
                out.push(ProviderEvent::Finish(finish_of(
                    end["finish_reason"].as_str().unwrap_or("COMPLETE"),
                )));
                if let Some(error) = end["error"].as_str().filter(|e| !e.is_empty()) {
                    return Err(DecodeError::Upstream(error.to_string()));
                }
                self.ended = true;
            }
            _ => {} // message-start, content-start/end, tool-call-end, citations
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        self.ended
    }
}

/// Parses a whole (non-streamed) v2 chat response.
pub fn parse_response(bytes: &[u8]) -> Result<Vec<ProviderEvent>, ResponseError> {
    let value: Value = serde_json::from_slice(bytes)?;
    let message = &value["message"];
    let mut out = Vec::new();
    if let Some(plan) = message["tool_plan"].as_str() {
        out.push(ProviderEvent::Reasoning(plan.to_string()));
    }
    for part in message["content"].as_array().into_iter().flatten() {
        if let Some(text) = part["text"].as_str() {
            out.push(ProviderEvent::Text(text.to_string()));
        }
    }
    for (index, call) in message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        out.push(call_delta(index, call, "{}"));
    }
    out.push(ProviderEvent::Usage(usage_of(&value["usage"])));
    out.push(ProviderEvent::Finish(finish_of(
        value["finish_reason"].as_str().unwrap_or("COMPLETE"),
    )));
    Ok(out)
}

/// A tool call (`{id, function: {name, arguments}}`, whole or its start) as the first
/// delta of call `index`; `missing` stands for absent arguments.
fn call_delta(index: usize, call: &Value, missing: &str) -> ProviderEvent {
    let function = &call["function"];
    let (id, name) = (call["id"].as_str(), function["name"].as_str());
    let arguments = function["arguments"].as_str().unwrap_or(missing);
    wire::call_started(index, id, name, arguments)
}
