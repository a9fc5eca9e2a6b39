//! Providers: one trait, one module per wire protocol.
//!
//! A [`Provider`] turns a provider-neutral [`ChatRequest`] into an HTTP call and the reply
//! into a stream of [`ProviderEvent`] batches (one batch per network read, so callers get
//! natural points to flush output). Non-streaming calls return a stream with one batch.
//! Providers never print, prompt, run tools or retry; the engine does those.
//!
//! Every HTTP provider is one [`api_client::HttpProvider`] around its [`api_client::Api`]
//! (URL, credentials, signing) and [`wire::WireFormat`] (body, decoder, whole-reply
//! parser); `llama_server` wraps the OpenAI one around a process it runs.

pub mod api_client;
pub mod bedrock;
pub mod call_id;
pub mod claude;
pub mod cohere;
pub mod effort;
/// Client settings live with the configuration; re-exported where clients use them.
pub mod embed;
pub mod error;
pub mod gemini;
pub mod google_auth;
pub mod http;
pub mod llama_server;
pub mod local_probe;
pub mod loggable;
use loki_wire::message;
pub mod model;
pub mod oauth;
pub mod ollama;
pub mod openai;
pub mod output_cap;
pub mod patch;
pub mod registry;
pub mod retry;
pub mod reuse;
pub mod vertex;
pub mod wire;

use std::pin::Pin;

use futures_util::Stream;
use futures_util::future::BoxFuture;

pub use error::ProviderError;
use message::{Content, ContentPart, Message, Role};
pub use model::Model;
pub use registry::ProviderRegistry;
pub use retry::RetryPolicy;

/// A provider-neutral chat request.
#[derive(Debug, Clone, Default)]
pub struct ChatRequest {
    /// The conversation, system message first when there is one.
    pub messages: Vec<Message>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Output limit; when unset, the model's `max_output_tokens` is sent only if it has
    /// `require_max_tokens`.
    pub max_tokens: Option<u64>,
    /// Stream the answer.
    pub stream: bool,
    /// Tool declarations offered to the model.
    pub tools: Vec<ToolSpec>,
    /// What a caller of loki's OpenAI-compatible API asked of the answer's form.
    pub controls: Controls,
}

impl ChatRequest {
    /// The output limit to send: the request's own, else the model's `max_output_tokens`
    /// when it has `require_max_tokens` (APIs that take no limit are left to choose).
    pub fn output_limit(&self, model: &Model) -> Option<u64> {
        let model_limit = model
            .config
            .max_output_tokens
            .filter(|_| model.config.require_max_tokens);
        self.max_tokens.or(model_limit)
    }
}

/// How the answer must look, as an API caller asks (`stop`, `seed`, `response_format`,
/// `tool_choice`). Each provider sends what its API has; unset is the provider's default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Controls {
    /// Sequences that end the answer.
    pub stop: Vec<String>,
    /// For repeatable sampling, where the provider has it.
    pub seed: Option<u64>,
    /// The answer's format.
    pub format: Option<AnswerFormat>,
    /// Whether and which tool the model must call.
    pub tool_choice: Option<ToolChoice>,
    /// How hard a reasoning model should think (`--effort`, `.set reasoning_effort`).
    pub effort: Option<crate::config::effort::Effort>,
}

/// `response_format`.
#[derive(Debug, Clone, PartialEq)]
pub enum AnswerFormat {
    /// Any JSON object.
    JsonObject,
    /// JSON matching `schema`, named `name`.
    JsonSchema {
        name: String,
        schema: serde_json::Value,
        strict: bool,
    },
}

/// The instruction that asks a provider without a JSON mode for `format`.
pub(crate) fn json_instruction(format: &AnswerFormat) -> String {
    match format {
        AnswerFormat::JsonObject => {
            "Answer with one JSON object and nothing else: no prose, no code fence.".into()
        }
        AnswerFormat::JsonSchema { schema, .. } => format!(
            "Answer with one JSON object matching this JSON schema and nothing else: no prose, no code fence.\n{schema}"
        ),
    }
}

/// `tool_choice`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool.
    None,
    /// Some tool.
    Required,
    /// This tool.
    Function(String),
}

/// A function the model may call.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolSpec {
    /// Function name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON schema of the arguments.
    pub parameters: serde_json::Value,
}

use loki_wire::provider_event::ProviderEvent;

/// Batches of events, ending with `None` after the provider's end-of-answer marker or
/// with an error.
pub type ProviderStream =
    Pin<Box<dyn Stream<Item = Result<Vec<ProviderEvent>, ProviderError>> + Send>>;

/// A configured client able to answer chat requests.
pub trait Provider: Send + Sync {
    /// Client name.
    fn name(&self) -> &str;

    /// How failed requests are retried.
    fn retry_policy(&self) -> RetryPolicy;

    /// Sends one request. Dropping the returned future or stream aborts the HTTP call.
    fn chat<'a>(
        &'a self,
        model: &'a Model,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ProviderStream, ProviderError>>;

    /// Embeds one batch of texts (see [`embed::embed_all`] for batching).
    fn embed<'a>(
        &'a self,
        model: &'a Model,
        texts: &'a [String],
        purpose: embed::Purpose,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, ProviderError>> {
        let _ = (texts, purpose);
        Box::pin(futures_util::future::ready(Err(
            self.unsupported(model, "embeddings")
        )))
    }

    /// Orders `documents` by relevance to `query`, best first, at most `top_n`.
    fn rerank<'a>(
        &'a self,
        model: &'a Model,
        query: &'a str,
        documents: &'a [String],
        top_n: usize,
    ) -> BoxFuture<'a, Result<Vec<embed::Ranked>, ProviderError>> {
        let _ = (query, documents, top_n);
        Box::pin(futures_util::future::ready(Err(
            self.unsupported(model, "reranking")
        )))
    }

    /// The error for an API this client does not offer.
    fn unsupported(&self, model: &Model, what: &str) -> ProviderError {
        ProviderError::Setup {
            client: self.name().to_string(),
            message: format!("this client offers no {what} (model `{}`)", model.id()),
        }
    }
}

/// Applies a model's system-message quirks: `system_prompt_prefix` is put before each
/// system message, and with `no_system_message` the system text moves to the front of the
/// next user message (separated by a blank line). Borrowed when there is nothing to do.
pub fn system_quirks<'a>(
    messages: &'a [Message],
    model: &Model,
) -> std::borrow::Cow<'a, [Message]> {
    let prefix = model.config.system_prompt_prefix.as_deref();
    let has_system = messages.iter().any(|m| m.role == Role::System);
    if !has_system || (prefix.is_none() && !model.config.no_system_message) {
        return std::borrow::Cow::Borrowed(messages);
    }
    let mut out = Vec::with_capacity(messages.len());
    let mut pending: Option<String> = None;
    for m in messages {
        if m.role == Role::System {
            let text = format!("{}{}", prefix.unwrap_or(""), m.text_content());
            if model.config.no_system_message {
                pending = Some(text);
            } else {
                out.push(Message::text(Role::System, text));
            }
            continue;
        }
        let mut m = m.clone();
        if m.role == Role::User
            && let Some(system) = pending.take()
        {
            m.content = match m.content {
                Content::Text(t) => Content::Text(format!("{system}\n\n{t}").into()),
                Content::Parts(mut parts) => {
                    parts.insert(0, ContentPart::Text { text: system });
                    Content::Parts(parts)
                }
            };
        }
        out.push(m);
    }
    std::borrow::Cow::Owned(out)
}

/// The media type of an image URL, guessed from its extension (`image/jpeg` when unknown).
pub fn media_type_of(url: &str) -> &'static str {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let ext = path
        .rsplit('.')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    match ext.as_str() {
        "png" => "image/png",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "heic" => "image/heic",
        _ => "image/jpeg",
    }
}
