//! The OpenAI chat-completions wire format, used by `type: openai` and every
//! `openai-compatible` vendor.
//!
//! Pure halves ([`build_body`], [`parse_chunk`], [`parse_response`]) are separate from the
//! HTTP call so they can be tested against recorded payloads.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

pub use loki_hotpath::openai_wire::{
    self, ChunkError, ChunkParser, parse_chunk, parse_response, strip_think,
};

use super::embed;
use super::http::{HttpSettings, LazyHttp};
use super::message::Message;
use super::patch::ApiKind;
use super::wire::{self, Outgoing};
use super::{AnswerFormat, Controls, ToolChoice};
use super::{ChatRequest, Model, Provider, ProviderError, ProviderStream, RetryPolicy};

/// A client speaking the OpenAI chat-completions API.
pub struct OpenAiProvider {
    name: String,
    api_base: String,
    api_key: Option<String>,
    /// Set when a key is required but none was configured: the variable to suggest.
    missing_key_env: Option<String>,
    organization: Option<String>,
    /// `stream_options.include_usage` is only sent where it is known to be accepted.
    stream_usage: bool,
    /// Newer OpenAI models take `max_completion_tokens` instead of `max_tokens`.
    max_completion_tokens: bool,
    azure_api_version: Option<String>,
    settings: HttpSettings,
    http: LazyHttp,
}

/// What a provider needs to be built; see [`super::registry`].
#[derive(Clone)]
pub struct OpenAiSetup {
    /// Client name.
    pub name: String,
    /// Base URL without a trailing slash.
    pub api_base: String,
    /// Resolved key.
    pub api_key: Option<String>,
    /// When the key is missing but required: the env var to suggest.
    pub missing_key_env: Option<String>,
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

impl OpenAiProvider {
    /// Builds the provider; no network or TLS work happens until the first request.
    pub fn new(setup: OpenAiSetup) -> Self {
        Self {
            name: setup.name,
            api_base: setup.api_base.trim_end_matches('/').to_string(),
            api_key: setup.api_key,
            missing_key_env: setup.missing_key_env,
            organization: setup.organization,
            // Azure accepts these from api-version 2024-09-01 on (dates compare as text).
            stream_usage: (setup.official || setup.stream_usage)
                && setup
                    .azure_api_version
                    .as_deref()
                    .is_none_or(|v| v >= "2024-09-01"),
            max_completion_tokens: setup.official
                && setup
                    .azure_api_version
                    .as_deref()
                    .is_none_or(|v| v >= "2024-09-01"),
            azure_api_version: setup.azure_api_version,
            settings: setup.settings,
            http: LazyHttp::default(),
        }
    }

    async fn send(
        &self,
        model: &Model,
        request: &ChatRequest,
    ) -> Result<ProviderStream, ProviderError> {
        if let Some(env) = &self.missing_key_env {
            return Err(ProviderError::MissingApiKey {
                client: self.name.clone(),
                env: env.clone(),
            });
        }
        let body = build_body(
            model,
            request,
            self.stream_usage,
            self.max_completion_tokens,
        );
        let mut outgoing = match &self.azure_api_version {
            Some(version) => {
                let url = format!(
                    "{}/openai/deployments/{}/chat/completions?api-version={version}",
                    self.api_base,
                    model.real_name()
                );
                let mut out = Outgoing::new(url, body);
                if let Some(key) = &self.api_key {
                    out = out.header("api-key", key.clone());
                }
                out
            }
            None => {
                let mut out = Outgoing::new(format!("{}/chat/completions", self.api_base), body);
                if let Some(key) = &self.api_key {
                    out = out.header("authorization", format!("Bearer {key}"));
                }
                out
            }
        };
        if let Some(org) = &self.organization {
            outgoing = outgoing.header("openai-organization", org.clone());
        }
        let http = self.http.get(&self.settings, &outgoing.url)?;
        let response = wire::send(http, &self.settings, model, ApiKind::Chat, outgoing).await?;
        // Some servers stream when asked not to, or answer in one piece when asked to
        // stream; follow what actually arrived.
        let is_sse = wire::content_type_is(&response, "text/event-stream");
        let is_json = wire::content_type_is(&response, "application/json");
        if is_sse || (request.stream && !is_json) {
            Ok(wire::stream(
                response,
                self.settings.clone(),
                openai_wire::decoder(),
            ))
        } else {
            wire::parse_whole(response, &self.settings, parse_response).await
        }
    }
}

impl OpenAiProvider {
    fn dialect(&self) -> embed::Dialect {
        if self.name == "voyageai" || self.api_base.contains("voyageai.com") {
            embed::Dialect::Voyage
        } else {
            embed::Dialect::OpenAi
        }
    }

    /// Adds the client's credentials, or says which are missing.
    fn authorize(&self, mut outgoing: Outgoing) -> Result<Outgoing, ProviderError> {
        if let Some(env) = &self.missing_key_env {
            return Err(ProviderError::MissingApiKey {
                client: self.name.clone(),
                env: env.clone(),
            });
        }
        if let Some(key) = &self.api_key {
            outgoing = if self.azure_api_version.is_some() {
                outgoing.header("api-key", key.clone())
            } else {
                outgoing.header("authorization", format!("Bearer {key}"))
            };
        }
        if let Some(org) = &self.organization {
            outgoing = outgoing.header("openai-organization", org.clone());
        }
        Ok(outgoing)
    }

    async fn embed_batch(
        &self,
        model: &Model,
        texts: &[String],
        purpose: embed::Purpose,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        let dialect = self.dialect();
        let mut outgoing = embed::embed_request(dialect, &self.api_base, model, texts, purpose);
        if self.azure_api_version.is_some() {
            outgoing.url = format!(
                "{}/openai/deployments/{}/embeddings?api-version={AZURE_EMBEDDINGS_VERSION}",
                self.api_base,
                model.real_name()
            );
        }
        let outgoing = self.authorize(outgoing)?;
        let http = self.http.get(&self.settings, &outgoing.url)?;
        embed::embed_with(http, &self.settings, model, dialect, outgoing).await
    }

    async fn rerank_batch(
        &self,
        model: &Model,
        query: &str,
        documents: &[String],
        top_n: usize,
    ) -> Result<Vec<embed::Ranked>, ProviderError> {
        let outgoing = embed::rerank_request(
            self.dialect(),
            &self.api_base,
            model,
            query,
            documents,
            top_n,
        );
        let outgoing = self.authorize(outgoing)?;
        let http = self.http.get(&self.settings, &outgoing.url)?;
        embed::rerank_with(http, &self.settings, model, outgoing).await
    }
}

/// The `api-version` Azure's embeddings endpoint is called with.
const AZURE_EMBEDDINGS_VERSION: &str = "2024-10-21";

impl Provider for OpenAiProvider {
    fn embed<'a>(
        &'a self,
        model: &'a Model,
        texts: &'a [String],
        purpose: embed::Purpose,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, ProviderError>> {
        self.embed_batch(model, texts, purpose).boxed()
    }

    fn rerank<'a>(
        &'a self,
        model: &'a Model,
        query: &'a str,
        documents: &'a [String],
        top_n: usize,
    ) -> BoxFuture<'a, Result<Vec<embed::Ranked>, ProviderError>> {
        self.rerank_batch(model, query, documents, top_n).boxed()
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn retry_policy(&self) -> RetryPolicy {
        self.settings.retry
    }

    fn chat<'a>(
        &'a self,
        model: &'a Model,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ProviderStream, ProviderError>> {
        self.send(model, request).boxed()
    }
}

/// Builds the JSON body of a chat-completions request.
pub fn build_body(
    model: &Model,
    request: &ChatRequest,
    stream_usage: bool,
    max_completion_tokens: bool,
) -> Value {
    let mut body = json!({
        "model": model.real_name(),
        "messages": wire_messages(&request.messages, model),
    });
    let obj = body.as_object_mut();
    let Some(obj) = obj else { return body };
    if let Some(t) = request.temperature {
        obj.insert("temperature".into(), json!(t));
    }
    if let Some(p) = request.top_p {
        obj.insert("top_p".into(), json!(p));
    }
    let model_limit = model
        .config
        .max_output_tokens
        .filter(|_| model.config.require_max_tokens);
    if let Some(max) = request.max_tokens.or(model_limit) {
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
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
        obj.insert("tools".into(), Value::Array(tools));
    }
    add_controls(obj, &request.controls, !request.tools.is_empty());
    body
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
    use crate::client::config::ModelConfig;
    use crate::client::message::{Content, ContentPart, Role, Usage};
    use crate::client::message::{ImageUrl, ToolCall};
    use crate::client::{FinishReason, ProviderEvent};

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
                ProviderEvent::ToolCallDelta {
                    index: 0,
                    id: Some("call_1".into()),
                    name: Some("f".into()),
                    arguments: "{\"a\"".into()
                }
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

debug_without_secrets!(OpenAiSetup, name, api_base);

debug_without_secrets!(OpenAiProvider, name, api_base);
