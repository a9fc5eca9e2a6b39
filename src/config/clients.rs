//! The `clients:` entries of `config.yaml` and the model metadata shared with the bundled
//! catalogue (`assets/models.yaml`).
//!
//! Only the shape of the data lives here; turning a `ClientConfig` into a provider is
//! [`crate::client::registry`]'s job.

use serde::{Deserialize, Serialize};

/// Client `type:` values this build understands.
pub const KNOWN_CLIENT_TYPES: &[&str] = &[
    "openai",
    "openai-compatible",
    "claude",
    "gemini",
    "vertexai",
    "bedrock",
    "azure-openai",
    "cohere",
    "ollama",
    "llama-server",
];

/// The wire protocol a client speaks, from its `type:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    /// `openai` — api.openai.com or anything at `api_base` speaking its API.
    OpenAi,
    /// `openai-compatible` — a named vendor or local server speaking the OpenAI format.
    OpenAiCompatible,
    /// `claude` — Anthropic's Messages API.
    Claude,
    /// `gemini` — Google's Generative Language API.
    Gemini,
    /// `vertexai` — Gemini and Claude models on Google Cloud.
    VertexAi,
    /// `bedrock` — AWS Bedrock Converse API.
    Bedrock,
    /// `azure-openai` — OpenAI deployments on Azure.
    AzureOpenAi,
    /// `cohere` — Cohere v2.
    Cohere,
    /// `ollama` — Ollama's native `/api/chat`.
    Ollama,
    /// `llama-server` — a llama.cpp server loki starts and stops itself.
    LlamaServer,
}

impl ClientKind {
    /// Parses a `type:` value.
    pub fn parse(kind: &str) -> Option<Self> {
        Some(match kind {
            "openai" => Self::OpenAi,
            "openai-compatible" => Self::OpenAiCompatible,
            "claude" => Self::Claude,
            "gemini" => Self::Gemini,
            "vertexai" => Self::VertexAi,
            "bedrock" => Self::Bedrock,
            "azure-openai" => Self::AzureOpenAi,
            "cohere" => Self::Cohere,
            "ollama" => Self::Ollama,
            "llama-server" => Self::LlamaServer,
            _ => return None,
        })
    }

    /// The `type:` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::OpenAiCompatible => "openai-compatible",
            Self::Claude => "claude",
            Self::Gemini => "gemini",
            Self::VertexAi => "vertexai",
            Self::Bedrock => "bedrock",
            Self::AzureOpenAi => "azure-openai",
            Self::Cohere => "cohere",
            Self::Ollama => "ollama",
            Self::LlamaServer => "llama-server",
        }
    }
}

/// One entry of `clients:`: its type and settings.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The `type:`.
    pub kind: ClientKind,
    /// Everything else.
    pub settings: ClientSettings,
}

impl ClientConfig {
    /// A client of `kind` with `settings`.
    pub fn new(kind: ClientKind, settings: ClientSettings) -> Self {
        Self { kind, settings }
    }

    /// Deserialises the entry for `kind` (its `type:`), reporting unknown keys through
    /// `on_unknown`. `Ok(None)` for a type this build does not know.
    pub fn from_yaml(
        kind: &str,
        mut value: serde_yaml::Value,
        on_unknown: &mut dyn FnMut(String),
    ) -> Result<Option<Self>, serde_yaml::Error> {
        let Some(kind) = ClientKind::parse(kind) else {
            return Ok(None);
        };
        if let serde_yaml::Value::Mapping(map) = &mut value {
            map.remove("type");
        }
        let settings = serde_ignored::deserialize(value, |p| on_unknown(p.to_string()))?;
        Ok(Some(Self { kind, settings }))
    }

    /// The client's name: `name:` when given, else the type.
    pub fn name(&self) -> &str {
        self.settings
            .name
            .as_deref()
            .unwrap_or_else(|| self.kind.as_str())
    }

    /// The `type:` value.
    pub fn type_name(&self) -> &'static str {
        self.kind.as_str()
    }

    /// Models listed under the client.
    pub fn models(&self) -> &[ModelConfig] {
        &self.settings.models
    }
}

/// Settings of a client. The common keys apply to every type; the rest only to the types
/// named in their docs.
#[derive(Clone, Default, Deserialize, Serialize)]
pub struct ClientSettings {
    /// Client name, used as the model prefix and the env-var prefix.
    pub name: Option<String>,
    /// Base URL up to and including the version segment, e.g. `https://api.openai.com/v1`.
    pub api_base: Option<String>,
    /// API key, or a `{{NAME}}` placeholder.
    pub api_key: Option<String>,
    /// Sent as `OpenAI-Organization`.
    pub organization_id: Option<String>,
    /// `oauth` or absent (claude, gemini).
    pub auth: Option<String>,
    /// Models offered by this client; empty means the catalogue's list for the vendor.
    #[serde(default)]
    pub models: Vec<ModelConfig>,
    /// Request patches.
    pub patch: Option<serde_json::Value>,
    /// HTTP settings.
    pub extra: Option<ExtraConfig>,
    /// Output limit of the client's models that set none; on a local server it is sent
    /// with every request (`0`: no limit). See `client::output_cap`.
    pub max_output_tokens: Option<u64>,
    /// OAuth (claude, gemini): client id, when not the provider's default.
    pub oauth_client_id: Option<String>,
    /// OAuth: client secret (Google installed-app clients have one).
    pub oauth_client_secret: Option<String>,
    /// OAuth: authorization page, when not the provider's.
    pub oauth_authorize_url: Option<String>,
    /// OAuth: token endpoint, when not the provider's.
    pub oauth_token_url: Option<String>,
    /// azure-openai: `api-version` query parameter.
    pub api_version: Option<String>,
    /// bedrock: AWS access key id.
    pub access_key_id: Option<String>,
    /// bedrock: AWS secret access key.
    pub secret_access_key: Option<String>,
    /// bedrock: temporary-credential session token.
    pub session_token: Option<String>,
    /// bedrock: AWS region.
    pub region: Option<String>,
    /// vertexai: Google Cloud project.
    pub project_id: Option<String>,
    /// vertexai: region, or `global`.
    pub location: Option<String>,
    /// vertexai: service-account or authorized-user JSON file (default: application
    /// default credentials).
    pub adc_file: Option<String>,
    /// llama-server: path of the `llama-server` executable (default: found on `PATH`).
    pub server_path: Option<String>,
    /// llama-server: GGUF model file.
    pub model_path: Option<String>,
    /// llama-server: port (default: a free one).
    pub port: Option<u16>,
    /// llama-server: context size (`--ctx-size`).
    pub context_size: Option<u64>,
    /// llama-server: layers offloaded to the GPU (`--n-gpu-layers`).
    pub gpu_layers: Option<i64>,
    /// llama-server: extra arguments.
    #[serde(default)]
    pub server_args: Vec<String>,
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

debug_without_secrets!(ClientSettings, name, api_base, auth, models, extra);
