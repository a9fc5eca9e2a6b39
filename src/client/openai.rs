//! The OpenAI chat-completions wire format, used by `type: openai` and every
//! `openai-compatible` vendor.
//!
//! The pure halves ([`build_body`] here, the chunk and response parsers in
//! [`loki_wire::openai_wire`]) are separate from the HTTP call so they can be tested
//! against recorded payloads.

use serde_json::{Value, json};

use loki_wire::openai_wire::{self, parse_response};

use super::api_client::{Api, ApiClient, Credentials, HttpProvider, KeyHeader};
use super::embed::Dialect;
use super::http::HttpSettings;
use super::wire::{self, BODY_HEAD_ROOM, Outgoing, ResponseError, WireFormat};
use super::{AnswerFormat, Controls, ToolChoice, ToolSpec};
use super::{ChatRequest, Model, ProviderError};
use loki_wire::body_stream::Decoder;
use loki_wire::message::Message;
use loki_wire::provider_event::ProviderEvent;

/// What a provider needs to be built; see [`super::registry`].
#[derive(Clone)]
pub struct OpenAiSetup {
    /// Base URL.
    pub api_base: String,
    /// The key, or the variable to set when a needed key is missing.
    pub credentials: Credentials,
    /// `OpenAI-Organization`.
    pub organization: Option<String>,
    /// Speak to api.openai.com conventions (usage option, `max_completion_tokens`).
    pub official: bool,
    /// Ask for usage in streams (`stream_options.include_usage`) though not official: a
    /// server known to accept it (local servers, most hosted OpenAI-compatible APIs).
    pub stream_usage: bool,
    /// Azure OpenAI: the `api-version`; deployments are addressed by model name and the
    /// key goes in `api-key`.
    pub azure_api_version: Option<String>,
    /// Transport settings.
    pub settings: HttpSettings,
}

/// The chat-completions API at `api_base`, or Azure OpenAI's deployments.
#[derive(Debug)]
pub struct OpenAi {
    wire: OpenAiWire,
    azure_api_version: Option<String>,
}

impl OpenAi {
    /// The provider; no network or TLS work happens until the first request.
    pub fn provider(setup: OpenAiSetup) -> HttpProvider<Self> {
        // Azure accepts these from api-version 2024-09-01 on (dates compare as text).
        let current = setup
            .azure_api_version
            .as_deref()
            .is_none_or(|v| v >= "2024-09-01");
        let wire = OpenAiWire {
            stream_usage: (setup.official || setup.stream_usage) && current,
            max_completion_tokens: setup.official && current,
        };
        let mut credentials = setup.credentials;
        if let Some(org) = setup.organization {
            credentials.headers.push(("openai-organization", org));
        }
        let api = OpenAi {
            wire,
            azure_api_version: setup.azure_api_version,
        };
        HttpProvider::new(&setup.api_base, setup.settings, credentials, api)
    }
}

/// The `api-version` Azure's embeddings endpoint is called with.
const AZURE_EMBEDDINGS_VERSION: &str = "2024-10-21";

impl Api for OpenAi {
    fn key_header(&self) -> KeyHeader {
        match self.azure_api_version {
            Some(_) => KeyHeader::Named("api-key"),
            None => KeyHeader::Bearer,
        }
    }

    fn format(&self, _model: &Model) -> &dyn WireFormat {
        &self.wire
    }

    fn request(
        &self,
        client: &ApiClient,
        model: &Model,
        _request: &ChatRequest,
        body: Value,
    ) -> Result<Outgoing, ProviderError> {
        let url = match &self.azure_api_version {
            Some(version) => format!(
                "{}/openai/deployments/{}/chat/completions?api-version={version}",
                client.api_base(),
                model.real_name()
            ),
            None => format!("{}/chat/completions", client.api_base()),
        };
        Ok(Outgoing::new(url, body))
    }

    fn address(&self, client: &ApiClient, model: &Model, mut outgoing: Outgoing) -> Outgoing {
        if self.azure_api_version.is_some() {
            outgoing.url = format!(
                "{}/openai/deployments/{}/embeddings?api-version={AZURE_EMBEDDINGS_VERSION}",
                client.api_base(),
                model.real_name()
            );
        }
        outgoing
    }

    fn embeddings(&self, client: &ApiClient) -> Option<Dialect> {
        let voyage = client.name() == "voyageai" || client.api_base().contains("voyageai.com");
        Some(if voyage {
            Dialect::Voyage
        } else {
            Dialect::OpenAi
        })
    }

    fn reranking(&self, client: &ApiClient) -> Option<Dialect> {
        self.embeddings(client)
    }
}

/// Chat completions, with the options a server is known to take.
#[derive(Debug, Clone, Copy)]
pub struct OpenAiWire {
    /// Ask for usage in a stream (`stream_options.include_usage`).
    pub stream_usage: bool,
    /// Send the limit as `max_completion_tokens` (newer OpenAI models).
    pub max_completion_tokens: bool,
}

impl WireFormat for OpenAiWire {
    fn body(&self, model: &Model, request: &ChatRequest) -> Value {
        build_body(
            model,
            request,
            self.stream_usage,
            self.max_completion_tokens,
        )
    }

    fn body_parts(&self, model: &Model, request: &ChatRequest) -> (Value, Option<Vec<u8>>) {
        body_parts(
            model,
            request,
            self.stream_usage,
            self.max_completion_tokens,
        )
    }

    /// Some servers stream when asked not to, or answer in one piece when asked to
    /// stream; what actually arrived is followed.
    fn streamed(&self, response: &reqwest::Response, request: &ChatRequest) -> bool {
        let is_sse = wire::content_type_is(response, "text/event-stream");
        let is_json = wire::content_type_is(response, "application/json");
        is_sse || (request.stream && !is_json)
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        openai_wire::decoder()
    }

    fn parse(&self, body: &[u8]) -> Result<Vec<ProviderEvent>, ResponseError> {
        Ok(parse_response(body)?)
    }
}

/// Builds the JSON body of a chat-completions request.
pub fn build_body(
    model: &Model,
    request: &ChatRequest,
    stream_usage: bool,
    max_completion_tokens: bool,
) -> Value {
    let mut body = build_head(model, request, stream_usage, max_completion_tokens);
    if let Some(obj) = body.as_object_mut() {
        obj.insert(
            "messages".into(),
            Value::Array(wire_messages(&request.messages, model)),
        );
    }
    body
}

/// The body of a chat-completions request as it is sent: everything but the messages, and
/// the messages written as JSON (the same members as [`build_body`]).
fn body_parts(
    model: &Model,
    request: &ChatRequest,
    stream_usage: bool,
    max_completion_tokens: bool,
) -> (Value, Option<Vec<u8>>) {
    let head = build_head(model, request, stream_usage, max_completion_tokens);
    let messages = super::system_quirks(&request.messages, model);
    let mut out = Vec::with_capacity(BODY_HEAD_ROOM + openai_wire::size_hint(&messages));
    match openai_wire::write_messages(&messages, &mut out) {
        Ok(()) => (head, Some(out)),
        // Writing into memory fails only on a serialiser bug: fall back to the values.
        Err(_) => (
            build_body(model, request, stream_usage, max_completion_tokens),
            None,
        ),
    }
}

/// Everything of a chat-completions body but its `messages`.
fn build_head(
    model: &Model,
    request: &ChatRequest,
    stream_usage: bool,
    max_completion_tokens: bool,
) -> Value {
    let mut body = json!({ "model": model.real_name() });
    let obj = body.as_object_mut();
    let Some(obj) = obj else { return body };
    if let Some(t) = request.temperature {
        obj.insert("temperature".into(), json!(t));
    }
    if let Some(p) = request.top_p {
        obj.insert("top_p".into(), json!(p));
    }
    if let Some(max) = request.output_limit(model) {
        let key = if max_completion_tokens {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        obj.insert(key.into(), json!(max));
    }
    if request.stream {
        obj.insert("stream".into(), json!(true));
        if stream_usage {
            obj.insert("stream_options".into(), json!({"include_usage": true}));
        }
    }
    if !request.tools.is_empty() {
        let tools = function_tools(&request.tools);
        obj.insert("tools".into(), Value::Array(tools));
    }
    add_controls(obj, &request.controls, !request.tools.is_empty());
    if let Some(effort) = request.controls.effort {
        obj.insert("reasoning_effort".into(), json!(effort.name()));
    }
    body
}

/// Tools as chat-completions `function` declarations (also Cohere's and Ollama's shape).
pub(crate) fn function_tools(tools: &[ToolSpec]) -> Vec<Value> {
    let declare = |t: &ToolSpec| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}});
    tools.iter().map(declare).collect()
}

/// `stop`, `seed`, `response_format` and `tool_choice`, as OpenAI's API has them.
fn add_controls(obj: &mut serde_json::Map<String, Value>, controls: &Controls, tools: bool) {
    if !controls.stop.is_empty() {
        obj.insert("stop".into(), json!(controls.stop));
    }
    if let Some(seed) = controls.seed {
        obj.insert("seed".into(), json!(seed));
    }
    match &controls.format {
        Some(AnswerFormat::JsonObject) => {
            obj.insert("response_format".into(), json!({"type": "json_object"}));
        }
        Some(AnswerFormat::JsonSchema {
            name,
            schema,
            strict,
        }) => {
            obj.insert(
                "response_format".into(),
                json!({"type": "json_schema",
                       "json_schema": {"name": name, "schema": schema, "strict": strict}}),
            );
        }
        None => {}
    }
    let choice = match &controls.tool_choice {
        Some(_) if !tools => None,
        Some(ToolChoice::Auto) => Some(json!("auto")),
        Some(ToolChoice::None) => Some(json!("none")),
        Some(ToolChoice::Required) => Some(json!("required")),
        Some(ToolChoice::Function(name)) => {
            Some(json!({"type": "function", "function": {"name": name}}))
        }
        None => None,
    };
    if let Some(choice) = choice {
        obj.insert("tool_choice".into(), choice);
    }
}

/// Converts neutral messages to the wire shape, applying the model's system-message
/// quirks (`system_prompt_prefix`, `no_system_message`).
pub(crate) fn wire_messages(messages: &[Message], model: &Model) -> Vec<Value> {
    openai_wire::message_values(&super::system_quirks(messages, model))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::wire;
    use crate::config::clients::ModelConfig;
    use loki_wire::message::{Content, ContentPart, Role, Usage};
    use loki_wire::message::{ImageUrl, ToolCall};
    use loki_wire::openai_wire::{parse_chunk, strip_think};
    use loki_wire::provider_event::{FinishReason, ProviderEvent};

    fn model(cfg: ModelConfig) -> Model {
        Model {
            client: "openai".into(),
            config: ModelConfig {
                name: "gpt-x".into(),
                ..cfg
            },
        }
    }

    #[test]
    fn body_has_model_messages_and_options() {
        let req = ChatRequest {
            controls: Default::default(),
            messages: vec![
                Message::text(Role::System, "be brief"),
                Message::text(Role::User, "hi"),
            ],
            temperature: Some(0.3),
            top_p: None,
            max_tokens: None,
            stream: true,
            tools: vec![],
        };
        let m = model(ModelConfig {
            real_name: Some("real".into()),
            require_max_tokens: true,
            max_output_tokens: Some(100),
            ..ModelConfig::default()
        });
        let body = build_body(&m, &req, true, false);
        assert_eq!(
            body,
            json!({
                "model": "real",
                "messages": [{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],
                "temperature": 0.3,
                "max_tokens": 100,
                "stream": true,
                "stream_options": {"include_usage": true}
            })
        );
    }

    #[test]
    fn no_system_message_merges_into_first_user_message() {
        let req = ChatRequest {
            messages: vec![
                Message::text(Role::System, "sys"),
                Message::text(Role::User, "hi"),
            ],
            ..ChatRequest::default()
        };
        let m = model(ModelConfig {
            no_system_message: true,
            system_prompt_prefix: Some("P: ".into()),
            ..ModelConfig::default()
        });
        let body = build_body(&m, &req, false, false);
        assert_eq!(
            body["messages"],
            json!([{"role":"user","content":"P: sys\n\nhi"}])
        );
    }

    #[test]
    fn images_tool_calls_and_think_stripping() {
        let mut assistant = Message::text(Role::Assistant, "<think>hmm</think>\n\nanswer");
        assistant.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "f".into(),
            arguments: "{}".into(),
            signature: None,
        });
        let tool = Message {
            role: Role::Tool,
            content: Content::Text("result".into()),
            tool_calls: vec![],
            tool_call_id: Some("c1".into()),
            interrupted: false,
            reasoning: None,
        };
        let user = Message {
            role: Role::User,
            content: Content::Parts(vec![ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: "data:x".into(),
                },
            }]),
            tool_calls: vec![],
            tool_call_id: None,
            interrupted: false,
            reasoning: None,
        };
        let req = ChatRequest {
            messages: vec![user, assistant, tool],
            ..ChatRequest::default()
        };
        let body = build_body(&model(ModelConfig::default()), &req, false, false);
        assert_eq!(
            body["messages"],
            json!([
                {"role":"user","content":[{"type":"image_url","image_url":{"url":"data:x"}}]},
                {"role":"assistant","content":"answer","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
                {"role":"tool","tool_call_id":"c1","content":"result"}
            ])
        );
    }

    #[test]
    fn chunk_with_text_reasoning_tool_and_usage() {
        let events = parse_chunk(r#"{"choices":[{"index":0,"delta":{"reasoning_content":"r","content":"t","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\""}}]},"finish_reason":null}]}"#).unwrap();
        assert_eq!(
            events,
            vec![
                ProviderEvent::Reasoning("r".into()),
                ProviderEvent::Text("t".into()),
                wire::call_started(0, Some("call_1"), Some("f"), "{\"a\""),
            ]
        );
        let usage = parse_chunk(r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":2}}}"#).unwrap();
        assert_eq!(
            usage,
            vec![ProviderEvent::Usage(Usage {
                estimated: false,
                input_tokens: 5,
                output_tokens: 7,
                cached_tokens: 2
            })]
        );
        let fin = parse_chunk(r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#).unwrap();
        assert_eq!(fin, vec![ProviderEvent::Finish(FinishReason::Stop)]);
    }

    #[test]
    fn reasoning_field_variant_and_errors() {
        let events = parse_chunk(r#"{"choices":[{"delta":{"reasoning":"x"}}]}"#).unwrap();
        assert_eq!(events, vec![ProviderEvent::Reasoning("x".into())]);
        assert!(
            parse_chunk("{not json")
                .unwrap_err()
                .to_string()
                .contains("invalid JSON")
        );
        assert!(
            parse_chunk(r#"{"error":{"message":"overloaded"}}"#)
                .unwrap_err()
                .to_string()
                .contains("overloaded")
        );
    }

    #[test]
    fn full_response() {
        let body = br#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello","reasoning_content":"why"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#;
        let events = parse_response(body).unwrap();
        assert_eq!(events[0], ProviderEvent::Reasoning("why".into()));
        assert_eq!(events[1], ProviderEvent::Text("Hello".into()));
        assert!(parse_response(b"{}").is_err());
    }

    #[test]
    fn think_stripping() {
        assert_eq!(strip_think("<think>a</think>\nb"), "b");
        assert_eq!(strip_think("plain"), "plain");
    }
}

debug_without_secrets!(OpenAiSetup, api_base, organization);
