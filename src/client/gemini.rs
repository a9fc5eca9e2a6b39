//! Google's Generative Language API (`type: gemini`), also used for Gemini models on
//! Vertex AI: `contents` with `user`/`model` roles and typed parts, `systemInstruction`,
//! `functionDeclarations`, `functionCall` / `functionResponse` parts, and
//! `streamGenerateContent?alt=sse`, whose every event is a whole `GenerateContentResponse`.
//!
//! Gemini repeats cumulative usage in every chunk, so usage is reported once, with the
//! finish reason. A call's `thoughtSignature` is kept and sent back with the history.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::api_client::{Api, ApiClient, KeyHeader};
use super::embed::Dialect;
use super::wire::{self, Outgoing, ResponseError, SseFormat, WireFormat};
use super::{AnswerFormat, ToolChoice};
use super::{ChatRequest, Model, ProviderError};
use loki_wire::body_stream::{DecodeError, SseParser};
use loki_wire::message::{Content, Message, Role, Usage};
use loki_wire::provider_event::{FinishReason, ProviderEvent};
use loki_wire::sse::SseEvent;

/// Default endpoint of the Generative Language API.
pub const DEFAULT_API_BASE: &str = "https://generativelanguage.googleapis.com/v1beta";

/// The Generative Language API: `models/<name>:<method>` with `x-goog-api-key` or an
/// OAuth sign-in; embeddings through `:batchEmbedContents`.
#[derive(Debug)]
pub struct Gemini;

impl Api for Gemini {
    fn key_header(&self) -> KeyHeader {
        KeyHeader::Named("x-goog-api-key")
    }

    fn format(&self, _model: &Model) -> &dyn WireFormat {
        &GEMINI_WIRE
    }

    fn request(
        &self,
        client: &ApiClient,
        model: &Model,
        request: &ChatRequest,
        body: Value,
    ) -> Result<Outgoing, ProviderError> {
        let url = format!("{}/models/{}", client.api_base(), model.real_name());
        Ok(Outgoing::new(method_url(&url, request.stream), body))
    }

    fn embeddings(&self, _client: &ApiClient) -> Option<Dialect> {
        Some(Dialect::Gemini)
    }
}

/// `<model url>:streamGenerateContent?alt=sse` or `<model url>:generateContent`.
pub fn method_url(model_url: &str, stream: bool) -> String {
    if stream {
        format!("{model_url}:streamGenerateContent?alt=sse")
    } else {
        format!("{model_url}:generateContent")
    }
}

/// The `generateContent` format, shared with Gemini models on Vertex AI.
pub const GEMINI_WIRE: SseFormat<ResponseParser> = SseFormat::new(build_body, parse_response);

/// Builds the request body.
pub fn build_body(model: &Model, request: &ChatRequest) -> Value {
    let messages = super::system_quirks(&request.messages, model);
    let system: Vec<String> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(Message::text_content)
        .collect();
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents(&messages)));
    if !system.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system.join("\n\n")}]}),
        );
    }
    let mut generation = Map::new();
    if let Some(max) = request.output_limit(model) {
        generation.insert("maxOutputTokens".into(), json!(max));
    }
    if let Some(t) = request.temperature {
        generation.insert("temperature".into(), json!(t));
    }
    if let Some(p) = request.top_p {
        generation.insert("topP".into(), json!(p));
    }
    let controls = &request.controls;
    if let Some(effort) = controls.effort {
        super::effort::add_gemini(effort, &mut generation);
    }
    if !controls.stop.is_empty() {
        generation.insert("stopSequences".into(), json!(controls.stop));
    }
    if let Some(seed) = controls.seed {
        generation.insert("seed".into(), json!(seed));
    }
    if let Some(format) = &controls.format {
        generation.insert("responseMimeType".into(), json!("application/json"));
        if let AnswerFormat::JsonSchema { schema: wanted, .. } = format {
            generation.insert("responseSchema".into(), schema(wanted));
        }
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let mut d = json!({"name": t.name, "description": t.description});
                let has_properties = t.parameters["properties"]
                    .as_object()
                    .is_some_and(|p| !p.is_empty());
                if has_properties {
                    d["parameters"] = schema(&t.parameters);
                }
                d
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
        let mode = match &request.controls.tool_choice {
            Some(ToolChoice::Auto) => Some(json!({"mode": "AUTO"})),
            Some(ToolChoice::None) => Some(json!({"mode": "NONE"})),
            Some(ToolChoice::Required) => Some(json!({"mode": "ANY"})),
            Some(ToolChoice::Function(name)) => {
                Some(json!({"mode": "ANY", "allowedFunctionNames": [name]}))
            }
            None => None,
        };
        if let Some(mode) = mode {
            body.insert("toolConfig".into(), json!({"functionCallingConfig": mode}));
        }
    }
    Value::Object(body)
}

/// JSON schema reduced to the OpenAPI subset Gemini accepts (it rejects `$schema`,
/// `additionalProperties` and friends with a 400).
fn schema(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "$schema" | "$id" | "additionalProperties" | "default" | "examples"
                    )
                })
                .map(|(k, v)| {
                    // `properties` maps names to schemas; recurse into each schema.
                    let v = if k == "properties" {
                        match v {
                            Value::Object(props) => Value::Object(
                                props.iter().map(|(n, s)| (n.clone(), schema(s))).collect(),
                            ),
                            other => other.clone(),
                        }
                    } else {
                        schema(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(schema).collect()),
        other => other.clone(),
    }
}

/// The conversation as `contents`. Tool results that follow each other share one `user`
/// turn, as the API requires; each names its function (looked up from the call id).
fn contents(messages: &[Message]) -> Vec<Value> {
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut out: Vec<Value> = Vec::new();
    for message in messages {
        let (role, parts) = match message.role {
            Role::System => continue,
            Role::User => ("user", parts_of(&message.content)),
            Role::Assistant => {
                let mut parts: Vec<Value> = parts_of(&message.content)
                    .into_iter()
                    .filter(|p| p["text"].as_str().is_none_or(|t| !t.is_empty()))
                    .collect();
                for call in &message.tool_calls {
                    names.insert(call.id.as_str(), call.name.as_str());
                    let args = wire::arguments_value(&call.arguments);
                    let mut part = json!({"functionCall": {"name": call.name, "args": args}});
                    if let Some(sig) = &call.signature {
                        part["thoughtSignature"] = json!(sig);
                    }
                    parts.push(part);
                }
                if parts.is_empty() {
                    continue;
                }
                ("model", parts)
            }
            Role::Tool => {
                let id = message.tool_call_id.as_deref().unwrap_or_default();
                let name = names.get(id).copied().unwrap_or(id);
                let text = message.text_content();
                let response = match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(map)) => Value::Object(map),
                    Ok(other) => json!({"content": other}),
                    Err(_) => json!({"content": text}),
                };
                (
                    "user",
                    vec![json!({"functionResponse": {"name": name, "response": response}})],
                )
            }
        };
        // Consecutive turns of one role share a content: tool results after tool results,
        // and a user message right after them (images tools returned, a queued message).
        let merge = out.last().is_some_and(|last: &Value| {
            last["role"] == role
                && last["parts"]
                    .as_array()
                    .is_some_and(|p| p.iter().all(|x| x.get("functionResponse").is_some()))
        });
        if merge && let Some(last) = out.last_mut().and_then(|l| l["parts"].as_array_mut()) {
            last.extend(parts);
            continue;
        }
        out.push(json!({"role": role, "parts": parts}));
    }
    out
}

fn parts_of(content: &Content) -> Vec<Value> {
    wire::content_values(content, |text| json!({"text": text}), image_part)
}

/// `data:` URLs are sent inline; other URLs by reference.
fn image_part(url: &str) -> Value {
    if let Some((mime, data)) = wire::inline_image(url) {
        return json!({"inlineData": {"mimeType": mime, "data": data}});
    }
    json!({"fileData": {"mimeType": super::media_type_of(url), "fileUri": url}})
}

/// Decoding state shared by streamed chunks and whole responses.
#[derive(Debug, Default)]
pub struct ResponseParser {
    calls: usize,
    finished: bool,
}

impl ResponseParser {
    /// Decodes one `GenerateContentResponse`.
    pub fn response(
        &mut self,
        value: &Value,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), DecodeError> {
        if let Some(error) = value.get("error") {
            return Err(DecodeError::Upstream(
                error["message"]
                    .as_str()
                    .map_or_else(|| error.to_string(), str::to_string),
            ));
        }
        if let Some(reason) = value["promptFeedback"]["blockReason"].as_str() {
            return Err(DecodeError::Upstream(format!(
                "the prompt was blocked ({reason}); rephrase it or relax safetySettings with a patch"
            )));
        }
        let candidate = &value["candidates"][0];
        for part in candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(text) = part["text"].as_str() {
                if part["thought"].as_bool() == Some(true) {
                    out.push(ProviderEvent::Reasoning(text.to_string()));
                } else if !text.is_empty() {
                    out.push(ProviderEvent::Text(text.to_string()));
                }
            } else if let Some(call) = part.get("functionCall") {
                let index = self.calls;
                self.calls += 1;
                let arguments = call
                    .get("args")
                    .map_or_else(|| "{}".into(), Value::to_string);
                let (id, name) = (call["id"].as_str(), call["name"].as_str());
                out.push(wire::call_started(index, id, name, arguments));
                if let Some(sig) = part["thoughtSignature"].as_str() {
                    out.push(ProviderEvent::ToolCallSignature {
                        index,
                        signature: sig.to_string(),
                    });
                }
            }
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            out.push(ProviderEvent::Usage(usage_of(&value["usageMetadata"])));
            out.push(ProviderEvent::Finish(match reason {
                "STOP" if self.calls > 0 => FinishReason::ToolCalls,
                "STOP" => FinishReason::Stop,
                "MAX_TOKENS" => FinishReason::Length,
                "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" => {
                    FinishReason::ContentFilter
                }
                other => FinishReason::Other(other.to_string()),
            }));
            self.finished = true;
        }
        Ok(())
    }
}

impl SseParser for ResponseParser {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        let value = wire::parse_json(&event.data)?;
        self.response(&value, out)
    }

    fn complete(&self) -> bool {
        self.finished
    }
}

/// Parses a whole `generateContent` response.
pub fn parse_response(bytes: &[u8]) -> Result<Vec<ProviderEvent>, ResponseError> {
    let value: Value = serde_json::from_slice(bytes)?;
    let mut parser = ResponseParser::default();
    let mut out = Vec::new();
    parser.response(&value, &mut out)?;
    if !parser.finished {
        out.push(ProviderEvent::Usage(usage_of(&value["usageMetadata"])));
        out.push(ProviderEvent::Finish(FinishReason::Stop));
    }
    Ok(out)
}

fn usage_of(meta: &Value) -> Usage {
    let n = |key: &str| meta[key].as_u64().unwrap_or(0);
    Usage {
        estimated: false,
        input_tokens: n("promptTokenCount"),
        output_tokens: n("candidatesTokenCount") + n("thoughtsTokenCount"),
        cached_tokens: n("cachedContentTokenCount"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ToolSpec;
    use loki_wire::message::ToolCall;

    #[test]
    fn answer_controls_are_gemini_s_generation_and_tool_config() {
        let request = ChatRequest {
            messages: vec![Message::text(Role::User, "where?")],
            tools: vec![ToolSpec {
                name: "weather".into(),
                description: "Weather".into(),
                parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
            }],
            controls: crate::client::Controls {
                stop: vec!["END".into()],
                seed: Some(7),
                format: Some(AnswerFormat::JsonSchema {
                    name: "place".into(),
                    schema: json!({"type": "object", "additionalProperties": false,
                        "properties": {"city": {"type": "string"}}}),
                    strict: true,
                }),
                tool_choice: Some(ToolChoice::Function("weather".into())),
                effort: Some(crate::config::effort::Effort::Medium),
            },
            ..ChatRequest::default()
        };
        let model = Model::named("gemini", "gemini-2.5-flash");
        let body = build_body(&model, &request);
        let generation = &body["generationConfig"];
        assert_eq!(
            generation["thinkingConfig"],
            json!({"thinkingBudget": 4096})
        );
        assert_eq!(generation["stopSequences"], json!(["END"]));
        assert_eq!(generation["seed"], 7);
        assert_eq!(generation["responseMimeType"], "application/json");
        assert_eq!(
            generation["responseSchema"],
            json!({"type": "object", "properties": {"city": {"type": "string"}}})
        );
        assert_eq!(
            body["toolConfig"],
            json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["weather"]}})
        );
    }

    #[test]
    fn body_maps_roles_tools_and_results() {
        let mut assistant = Message::text(Role::Assistant, "");
        assistant.tool_calls.push(ToolCall {
            id: "call_0_0".into(),
            name: "fs_read".into(),
            arguments: r#"{"path":"a"}"#.into(),
            signature: Some("sig==".into()),
        });
        let mut r1 = Message::text(Role::Tool, "alpha");
        r1.tool_call_id = Some("call_0_0".into());
        let mut r2 = Message::text(Role::Tool, r#"{"ok":true}"#);
        r2.tool_call_id = Some("call_0_0".into());
        let request = ChatRequest {
            messages: vec![
                Message::text(Role::System, "Be brief."),
                Message::text(Role::User, "read a"),
                assistant,
                r1,
                r2,
            ],
            temperature: Some(0.3),
            tools: vec![
                ToolSpec {
                    name: "fs_read".into(),
                    description: "Read".into(),
                    parameters: json!({"type": "object", "additionalProperties": false,
                        "properties": {"path": {"type": "string", "default": "."}}}),
                },
                ToolSpec {
                    name: "now".into(),
                    description: "Time".into(),
                    parameters: json!({"type": "object", "properties": {}}),
                },
            ],
            ..ChatRequest::default()
        };
        let model = Model::named("gemini", "gemini-2.5-flash");
        assert_eq!(
            build_body(&model, &request),
            json!({
                "contents": [
                    {"role": "user", "parts": [{"text": "read a"}]},
                    {"role": "model", "parts": [{"functionCall": {"name": "fs_read", "args": {"path": "a"}}, "thoughtSignature": "sig=="}]},
                    {"role": "user", "parts": [
                        {"functionResponse": {"name": "fs_read", "response": {"content": "alpha"}}},
                        {"functionResponse": {"name": "fs_read", "response": {"ok": true}}}
                    ]}
                ],
                "systemInstruction": {"parts": [{"text": "Be brief."}]},
                "generationConfig": {"temperature": 0.3},
                "tools": [{"functionDeclarations": [
                    {"name": "fs_read", "description": "Read", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
                    {"name": "now", "description": "Time"}
                ]}]
            })
        );
    }

    #[test]
    fn chunks_become_events_with_usage_once() {
        let mut p = ResponseParser::default();
        let mut out = Vec::new();
        let chunk = |parts: Value, finish: Option<&str>| {
            let mut c = json!({"candidates": [{"content": {"role": "model", "parts": parts}}],
                "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 3, "thoughtsTokenCount": 2, "cachedContentTokenCount": 4}});
            if let Some(f) = finish {
                c["candidates"][0]["finishReason"] = json!(f);
            }
            c
        };
        p.response(
            &chunk(json!([{"text": "hmm", "thought": true}]), None),
            &mut out,
        )
        .unwrap();
        p.response(&chunk(json!([{"text": "Hi"}]), None), &mut out)
            .unwrap();
        p.response(
            &chunk(
                json!([{"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "s"}]),
                Some("STOP"),
            ),
            &mut out,
        )
        .unwrap();
        assert_eq!(
            out,
            vec![
                ProviderEvent::Reasoning("hmm".into()),
                ProviderEvent::Text("Hi".into()),
                wire::call_started(0, None, Some("f"), r#"{"a":1}"#),
                ProviderEvent::ToolCallSignature {
                    index: 0,
                    signature: "s".into()
                },
                ProviderEvent::Usage(Usage {
                    estimated: false,
                    input_tokens: 12,
                    output_tokens: 5,
                    cached_tokens: 4
                }),
                ProviderEvent::Finish(FinishReason::ToolCalls),
            ]
        );
        assert!(p.complete());
        let blocked = ResponseParser::default()
            .response(
                &json!({"promptFeedback": {"blockReason": "SAFETY"}}),
                &mut out,
            )
            .unwrap_err();
        assert!(matches!(blocked, DecodeError::Upstream(m) if m.contains("SAFETY")));
    }
}
