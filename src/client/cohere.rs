//! Cohere's v2 chat API (`type: cohere`): OpenAI-like messages (an assistant's text before
//! tool calls travels as `tool_plan`), `p` for nucleus sampling, and named SSE events
//! (`content-delta`, `tool-plan-delta`, `tool-call-start|delta|end`, `message-end`).

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::embed;
use super::http::{HttpSettings, LazyHttp};
use super::message::Usage;
use super::patch::ApiKind;
use super::sse::SseEvent;
use super::wire::{self, DecodeError, Outgoing, ResponseError, Sse, SseParser};
use super::{
    ChatRequest, FinishReason, Model, Provider, ProviderError, ProviderEvent, ProviderStream,
    RetryPolicy,
};

/// Default endpoint.
pub const DEFAULT_API_BASE: &str = "https://api.cohere.ai/v2";

/// What a Cohere client needs.
#[derive(Clone)]
pub struct CohereSetup {
    /// Client name.
    pub name: String,
    /// Base URL up to the version segment.
    pub api_base: String,
    /// Resolved key.
    pub api_key: Option<String>,
    /// When the key is missing: the variable to suggest.
    pub missing_key_env: Option<String>,
    /// Transport settings.
    pub settings: HttpSettings,
}

/// A client speaking Cohere v2.
#[derive(Debug)]
pub struct CohereProvider {
    setup: CohereSetup,
    http: LazyHttp,
}

impl CohereProvider {
    /// Builds the provider; nothing is sent until the first request.
    pub fn new(mut setup: CohereSetup) -> Self {
        setup.api_base = setup.api_base.trim_end_matches('/').to_string();
        Self {
            setup,
            http: LazyHttp::default(),
        }
    }

    async fn send(
        &self,
        model: &Model,
        request: &ChatRequest,
    ) -> Result<ProviderStream, ProviderError> {
        if let Some(env) = &self.setup.missing_key_env {
            return Err(ProviderError::MissingApiKey {
                client: self.setup.name.clone(),
                env: env.clone(),
            });
        }
        let mut outgoing = Outgoing::new(
            format!("{}/chat", self.setup.api_base),
            build_body(model, request),
        );
        if let Some(key) = &self.setup.api_key {
            outgoing = outgoing.header("authorization", format!("Bearer {key}"));
        }
        let settings = &self.setup.settings;
        let http = self.http.get(settings, &outgoing.url)?;
        let response = wire::send(http, settings, model, ApiKind::Chat, outgoing).await?;
        if wire::content_type_is(&response, "text/event-stream") {
            return Ok(wire::stream(
                response,
                settings.clone(),
                Box::new(Sse::new(EventParser::default())),
            ));
        }
        wire::parse_whole(response, settings, parse_response).await
    }
}

impl CohereProvider {
    fn authorize(&self, mut outgoing: Outgoing) -> Result<Outgoing, ProviderError> {
        if let Some(env) = &self.setup.missing_key_env {
            return Err(ProviderError::MissingApiKey {
                client: self.setup.name.clone(),
                env: env.clone(),
            });
        }
        if let Some(key) = &self.setup.api_key {
            outgoing = outgoing.header("authorization", format!("Bearer {key}"));
        }
        Ok(outgoing)
    }

    async fn embed_batch(
        &self,
        model: &Model,
        texts: &[String],
        purpose: embed::Purpose,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        let dialect = embed::Dialect::Cohere;
        let outgoing = self.authorize(embed::embed_request(
            dialect,
            &self.setup.api_base,
            model,
            texts,
            purpose,
        ))?;
        let http = self.http.get(&self.setup.settings, &outgoing.url)?;
        embed::embed_with(http, &self.setup.settings, model, dialect, outgoing).await
    }

    async fn rerank_batch(
        &self,
        model: &Model,
        query: &str,
        documents: &[String],
        top_n: usize,
    ) -> Result<Vec<embed::Ranked>, ProviderError> {
        let outgoing = self.authorize(embed::rerank_request(
            embed::Dialect::Cohere,
            &self.setup.api_base,
            model,
            query,
            documents,
            top_n,
        ))?;
        let http = self.http.get(&self.setup.settings, &outgoing.url)?;
        embed::rerank_with(http, &self.setup.settings, model, outgoing).await
    }
}

impl Provider for CohereProvider {
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
        &self.setup.name
    }

    fn retry_policy(&self) -> RetryPolicy {
        self.setup.settings.retry
    }

    fn chat<'a>(
        &'a self,
        model: &'a Model,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ProviderStream, ProviderError>> {
        self.send(model, request).boxed()
    }
}

/// Builds the request body.
pub fn build_body(model: &Model, request: &ChatRequest) -> Value {
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
    let max = request.max_tokens.or_else(|| {
        model
            .config
            .require_max_tokens
            .then_some(model.config.max_output_tokens)
            .flatten()
    });
    if let Some(max) = max {
        obj.insert("max_tokens".into(), json!(max));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
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
            "tool-call-start" => {
                let call = &delta["tool_calls"];
                out.push(ProviderEvent::ToolCallDelta {
                    index,
                    id: call["id"].as_str().map(str::to_string),
                    name: call["function"]["name"].as_str().map(str::to_string),
                    arguments: call["function"]["arguments"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                });
            }
            "tool-call-delta" => out.push(ProviderEvent::ToolCallDelta {
                index,
                id: None,
                name: None,
                arguments: delta["tool_calls"]["function"]["arguments"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            }),
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
        out.push(ProviderEvent::ToolCallDelta {
            index,
            id: call["id"].as_str().map(str::to_string),
            name: call["function"]["name"].as_str().map(str::to_string),
            arguments: call["function"]["arguments"]
                .as_str()
                .unwrap_or("{}")
                .to_string(),
        });
    }
    out.push(ProviderEvent::Usage(usage_of(&value["usage"])));
    out.push(ProviderEvent::Finish(finish_of(
        value["finish_reason"].as_str().unwrap_or("COMPLETE"),
    )));
    Ok(out)
}

debug_without_secrets!(CohereSetup, name, api_base);
