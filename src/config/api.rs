//! The `api:` block of `config.yaml`: how `loki --serve` listens, who may call it, and
//! its limits. Only `--serve` reads it.

use serde::Deserialize;

/// Default `api.listen_addr`.
pub const DEFAULT_LISTEN_ADDR: &str = "127.0.0.1:3400";

/// `api:`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ApiConfig {
    /// `false` refuses `--serve` (a switch to keep a shared config from serving).
    pub enabled: bool,
    /// `host:port`; else `serve_addr`, else 127.0.0.1:3400.
    pub listen_addr: Option<String>,
    /// Who may call it; unset: `--serve` refuses to start.
    pub auth: Option<AuthConfig>,
    /// Browsers allowed to call it.
    pub cors: CorsConfig,
    /// Sizes and rates.
    pub limits: LimitsConfig,
    /// The longest a request may run, in seconds.
    pub request_timeout_seconds: u64,
    /// How long shutdown waits for running turns before cancelling them.
    pub shutdown_grace_seconds: u64,
    /// How long a tool call waits for an HTTP approval, in seconds.
    pub approval_timeout_seconds: u64,
    /// Tools that touch files or run commands (off unless enabled, confined to `root`).
    pub tools: ToolsConfig,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            listen_addr: None,
            auth: None,
            cors: CorsConfig::default(),
            limits: LimitsConfig::default(),
            request_timeout_seconds: 300,
            shutdown_grace_seconds: 30,
            approval_timeout_seconds: 300,
            tools: ToolsConfig::default(),
        }
    }
}

/// `api.auth`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "mode", deny_unknown_fields)]
pub enum AuthConfig {
    /// Anyone (only on a loopback address).
    Disabled,
    /// Bearer keys, checked against their argon2id hashes.
    StaticKeys {
        /// The keys.
        keys: Vec<KeyEntry>,
    },
}

/// One API key.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    /// Who it belongs to (in logs).
    pub subject: String,
    /// `$argon2id$…` (`loki --api-key-hash` makes one).
    pub key_hash: String,
    /// `read` (GET), `write` (everything else); default both.
    #[serde(default = "default_scopes")]
    pub scopes: Vec<String>,
    /// Requests per minute for this key, over `limits.rate_limit_per_minute`.
    #[serde(default)]
    pub rate_limit_per_minute: Option<u32>,
}

fn default_scopes() -> Vec<String> {
    vec!["read".into(), "write".into()]
}

/// `api.cors`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CorsConfig {
    /// Origins allowed (`*` for any); empty: no CORS headers.
    pub allowed_origins: Vec<String>,
    /// Allow credentials.
    pub allow_credentials: bool,
}

/// `api.limits`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// The largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Requests served at once; more wait.
    pub max_concurrent_requests: usize,
    /// Requests per minute per key (unset: no limit).
    pub rate_limit_per_minute: Option<u32>,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 1024 * 1024,
            max_concurrent_requests: 64,
            rate_limit_per_minute: None,
        }
    }
}

/// `api.tools`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    /// Offer tools at all.
    pub enabled: bool,
    /// The directory they work in (and are confined to); required when enabled.
    pub root: Option<std::path::PathBuf>,
}
