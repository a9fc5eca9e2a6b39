//! The `clients:` entries of `config.yaml` and the model metadata shared with the bundled
//! catalogue (`assets/models.yaml`).
//!
//! Only the shape of the data lives here; turning a `ClientConfig` into a provider is
//! [`super::registry`]'s job.

use serde::{Deserialize, Serialize};

/// Client `type:` values this build understands.
pub const KNOWN_CLIENT_TYPES: &[&str] = &["openai", "openai-compatible", "claude"];

/// One entry of `clients:`, tagged by `type`.
#[derive(Debug, Clone)]
pub enum ClientConfig {
    /// `type: openai` — api.openai.com or anything at `api_base` speaking its API.
    OpenAi(OpenAiConfig),
    /// `type: openai-compatible` — a named vendor or local server speaking the OpenAI
    /// chat-completions format.
    OpenAiCompatible(OpenAiConfig),
    /// `type: claude` — Anthropic's Messages API (same settings as an OpenAI client).
    Claude(OpenAiConfig),
}

impl ClientConfig {
    /// Deserialises the entry for `kind` (its `type:`), reporting unknown keys through
    /// `on_unknown`. Dispatching by hand (rather than with serde's internal tagging) keeps
    /// unknown-key reporting working inside each client.
    pub fn from_yaml(
        kind: &str,
        mut value: serde_yaml::Value,
        on_unknown: &mut dyn FnMut(String),
    ) -> Result<Option<Self>, serde_yaml::Error> {
        if let serde_yaml::Value::Mapping(map) = &mut value {
            map.remove("type");
        }
        let mut parse = |v| serde_ignored::deserialize(v, |p| on_unknown(p.to_string()));
        Ok(Some(match kind {
            "openai" => Self::OpenAi(parse(value)?),
            "openai-compatible" => Self::OpenAiCompatible(parse(value)?),
            "claude" => Self::Claude(parse(value)?),
            _ => return Ok(None),
        }))
    }

    /// The client's name: `name:` when given, else the type.
    pub fn name(&self) -> &str {
        match self {
            Self::OpenAi(c) => c.name.as_deref().unwrap_or("openai"),
            Self::OpenAiCompatible(c) => c.name.as_deref().unwrap_or("openai-compatible"),
            Self::Claude(c) => c.name.as_deref().unwrap_or("claude"),
        }
    }

    /// The `type:` value.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::OpenAi(_) => "openai",
            Self::OpenAiCompatible(_) => "openai-compatible",
            Self::Claude(_) => "claude",
        }
    }

    /// Models listed under the client.
    pub fn models(&self) -> &[ModelConfig] {
        match self {
            Self::OpenAi(c) | Self::OpenAiCompatible(c) | Self::Claude(c) => &c.models,
        }
    }
}

/// Settings of an OpenAI-format client.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct OpenAiConfig {
    /// Client name, used as the model prefix and the env-var prefix.
    pub name: Option<String>,
    /// Base URL up to and including the version segment, e.g. `https://api.openai.com/v1`.
    pub api_base: Option<String>,
    /// API key, or a `{{NAME}}` placeholder.
    pub api_key: Option<String>,
    /// Sent as `OpenAI-Organization`.
    pub organization_id: Option<String>,
    /// `oauth` or absent.
    pub auth: Option<String>,
    /// Models offered by this client; empty means the catalogue's list for the vendor.
    #[serde(default)]
    pub models: Vec<ModelConfig>,
    /// Request patches (applied from the patches issue on).
    pub patch: Option<serde_json::Value>,
    /// HTTP settings.
    pub extra: Option<ExtraConfig>,
}

/// HTTP transport settings of a client (`extra:`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct ExtraConfig {
    /// `http://`, `https://` or `socks5://` proxy URL; `-` disables proxies entirely.
    pub proxy: Option<String>,
    /// Seconds to wait for a TCP/TLS connection (default 10).
    pub connect_timeout: Option<u64>,
    /// Seconds without a byte from the server before a request is abandoned (default 300).
    pub read_timeout: Option<u64>,
    /// Retries after 429, 5xx and connection failures (default 3).
    pub max_retries: Option<u32>,
    /// First backoff delay in milliseconds, doubled each retry (default 1000).
    pub retry_base_delay_ms: Option<u64>,
}

/// What a model is for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    /// Chat completions.
    #[default]
    Chat,
    /// Embeddings.
    Embedding,
    /// Reranking.
    Reranker,
}

impl ModelKind {
    /// Lower-case name as written in YAML.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Embedding => "embedding",
            Self::Reranker => "reranker",
        }
    }
}

/// Metadata of one model, from a client's `models:` list or the catalogue.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct ModelConfig {
    /// Name used in `client:name`.
    pub name: String,
    /// Name sent upstream when `name` is an alias.
    pub real_name: Option<String>,
    /// chat, embedding or reranker.
    #[serde(rename = "type")]
    pub kind: ModelKind,
    /// Context window.
    pub max_input_tokens: Option<u64>,
    /// Output limit.
    pub max_output_tokens: Option<u64>,
    /// Always send `max_tokens`.
    pub require_max_tokens: bool,
    /// USD per million input tokens.
    pub input_price: Option<f64>,
    /// USD per million output tokens.
    pub output_price: Option<f64>,
    /// Accepts images.
    pub supports_vision: bool,
    /// Accepts tool declarations.
    pub supports_function_calling: bool,
    /// Streaming is not available.
    pub no_stream: bool,
    /// System messages are not accepted (merged into the first user message).
    pub no_system_message: bool,
    /// Prepended to every system prompt.
    pub system_prompt_prefix: Option<String>,
    /// Embedding: maximum tokens per chunk.
    pub max_tokens_per_chunk: Option<u64>,
    /// Embedding: default chunk size.
    pub default_chunk_size: Option<u64>,
    /// Embedding: maximum batch size.
    pub max_batch_size: Option<u64>,
    /// Per-model request patch.
    pub patch: Option<serde_json::Value>,
}
