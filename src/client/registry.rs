//! Turns the configured clients into providers and resolves `client:model` ids.
//!
//! Built once per process from the frozen config and environment snapshot; read-only
//! afterwards. The model catalogue is parsed the first time a lookup needs it.

use std::sync::{Arc, OnceLock};

use super::Provider;
use super::api_client::Credentials;
use super::api_client::HttpProvider;
use super::http::{HttpSettings, RequestLimits};
use super::model::{Catalog, CatalogError, Model};
use super::oauth::{OAuthConfig, OAuthSource};
use super::openai::{OpenAi, OpenAiSetup};
use super::patch::ClientPatches;
use crate::config::clients::{ClientConfig, ClientKind, ClientSettings, ModelConfig, ModelKind};
use crate::config::vendors::{self, client_env_var};
use crate::config::{AppConfig, Env};

/// A model id that cannot be resolved.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ModelError {
    /// `client:` names no configured client.
    #[error(
        "unknown client `{client}` in `{id}`; configured clients: {available} — run `loki --list-models`"
    )]
    UnknownClient {
        /// The id as typed.
        id: String,
        /// The client part.
        client: String,
        /// Configured client names.
        available: String,
    },
    /// No client-qualified match and no client of that name.
    #[error("unknown model `{id}`; use `client:model` (run `loki --list-models` to see them)")]
    UnknownModel {
        /// The id as typed.
        id: String,
    },
    /// The model exists but is not of the requested kind.
    #[error("model `{id}` is of type {actual}, not {wanted}")]
    WrongKind {
        /// The id.
        id: String,
        /// Its kind.
        actual: &'static str,
        /// The kind needed.
        wanted: &'static str,
    },
    /// The client has no models to choose a default from.
    #[error(
        "client `{client}` lists no {kind} models; pass `-m {client}:<model>` or add `models:` to it in config.yaml"
    )]
    NoModels {
        /// The client.
        client: String,
        /// The kind.
        kind: &'static str,
    },
    /// Nothing is configured at all.
    #[error("no model configured: set `model:` in config.yaml or pass `-m client:model`")]
    NoDefault,
    /// The catalogue is broken (a bad `models-override.yaml`).
    #[error(transparent)]
    Catalog(#[from] CatalogError),
}

struct ClientEntry {
    config: ClientConfig,
    /// The sign-in flow of an `auth: oauth` client.
    oauth: Option<OAuthConfig>,
    /// Catalogue key used when the client lists no models.
    catalog_key: String,
    /// The server runs on this machine (Ollama, llama-server, an `api_base` on loopback):
    /// its models always send an output limit (see [`super::output_cap`]).
    local: bool,
    provider: Arc<dyn Provider>,
}

impl ClientEntry {
    /// The entry of a remote client without OAuth, listed in the catalogue under
    /// `catalog_key`.
    fn new(client: &ClientConfig, catalog_key: &str, provider: impl Provider + 'static) -> Self {
        Self {
            config: client.clone(),
            oauth: None,
            catalog_key: catalog_key.to_string(),
            local: false,
            provider: Arc::new(provider),
        }
    }

    /// Fills in the output limit of one of the client's models ([`super::output_cap`]).
    fn cap_output(&self, model: &mut ModelConfig) {
        super::output_cap::apply(model, self.config.settings.max_output_tokens, self.local);
    }
}

/// Configured clients and their providers.
pub struct ProviderRegistry {
    clients: Vec<ClientEntry>,
    catalog: OnceLock<Result<Catalog, CatalogError>>,
    models_override: Option<String>,
}

impl std::fmt::Debug for ProviderRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderRegistry")
            .field("clients", &self.client_names())
            .finish_non_exhaustive()
    }
}

impl ProviderRegistry {
    /// Builds one provider per configured client. `models_override` is the text of
    /// `models-override.yaml`, when present.
    pub fn new(config: &AppConfig, env: &Env, models_override: Option<String>) -> Self {
        let clients = config
            .clients
            .iter()
            .map(|client| build_entry(client, config, env))
            .collect();
        Self {
            clients,
            catalog: OnceLock::new(),
            models_override,
        }
    }

    /// Names of the configured clients, in config order.
    pub fn client_names(&self) -> Vec<&str> {
        self.clients.iter().map(|c| c.config.name()).collect()
    }

    /// Sign-in flows of the clients configured with `auth: oauth`, in config order.
    pub fn oauth_clients(&self) -> Vec<OAuthConfig> {
        self.clients
            .iter()
            .filter_map(|c| c.oauth.clone())
            .collect()
    }

    /// The client of a model id's `client:` part, for messages.
    pub fn client_of(&self, name: &str) -> Option<&ClientConfig> {
        self.entry(name).map(|e| &e.config)
    }

    /// Whether a client's server runs on this machine (its models always send an output
    /// limit, see [`super::output_cap`]).
    pub fn is_local(&self, client: &str) -> bool {
        self.entry(client).is_some_and(|e| e.local)
    }

    /// The provider of a client.
    pub fn provider(&self, client: &str) -> Option<Arc<dyn Provider>> {
        self.entry(client).map(|e| Arc::clone(&e.provider))
    }

    fn entry(&self, client: &str) -> Option<&ClientEntry> {
        self.clients.iter().find(|c| c.config.name() == client)
    }

    fn catalog(&self) -> Result<&Catalog, ModelError> {
        self.catalog
            .get_or_init(|| Catalog::load(self.models_override.as_deref()))
            .as_ref()
            .map_err(|e| ModelError::Catalog(e.clone()))
    }

    fn client_models(&self, entry: &ClientEntry) -> Result<Vec<ModelConfig>, ModelError> {
        let mut models = self.listed_models(entry)?;
        for model in &mut models {
            entry.cap_output(model);
        }
        Ok(models)
    }

    /// The models a client lists, else the catalogue's for its vendor, as configured.
    fn listed_models(&self, entry: &ClientEntry) -> Result<Vec<ModelConfig>, ModelError> {
        let own = entry.config.models();
        if !own.is_empty() {
            return Ok(own.to_vec());
        }
        // A catalogue (possibly downloaded by --sync-models) may shape request bodies but
        // never redirect requests or set headers: those would carry the user's keys.
        let mut models = self.catalog()?.models_for(&entry.catalog_key).to_vec();
        for model in &mut models {
            if let Some(patch) = model.patch.as_mut().and_then(|p| p.as_object_mut()) {
                patch.retain(|key, _| key == "body");
            }
        }
        Ok(models)
    }

    /// Every model of `kind` across clients, in config order.
    pub fn models(&self, kind: ModelKind) -> Result<Vec<Model>, ModelError> {
        let mut out = Vec::new();
        for entry in &self.clients {
            for m in self.client_models(entry)? {
                if m.kind == kind {
                    out.push(Model {
                        client: entry.config.name().to_string(),
                        config: m,
                    });
                }
            }
        }
        Ok(out)
    }

    /// Resolves `client:model`, a bare client name (its first model of `kind`), or a bare
    /// model name found under exactly one client. A model a client does not list is
    /// created on the fly, so new upstream models work before the catalogue knows them.
    pub fn resolve(&self, id: &str, kind: ModelKind) -> Result<Model, ModelError> {
        let id = id.trim();
        // A model id is sent to the provider and printed: no control characters, and no
        // invisible or direction-changing ones (what is shown must be what is sent).
        if id.chars().any(|c| {
            c.is_control()
                || matches!(c, '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
        }) {
            return Err(ModelError::UnknownModel {
                id: id.escape_debug().to_string(),
            });
        }
        if let Some((client, name)) = id.split_once(':') {
            if name.trim().is_empty() {
                return Err(ModelError::UnknownModel { id: id.to_string() });
            }
            let Some(entry) = self.entry(client) else {
                return Err(ModelError::UnknownClient {
                    id: id.to_string(),
                    client: client.to_string(),
                    available: self.available(),
                });
            };
            let models = self.client_models(entry)?;
            let config = match models.into_iter().find(|m| m.name == name) {
                Some(m) if m.kind != kind => {
                    return Err(ModelError::WrongKind {
                        id: id.to_string(),
                        actual: m.kind.as_str(),
                        wanted: kind.as_str(),
                    });
                }
                Some(m) => m,
                None if kind == ModelKind::Embedding => {
                    return Err(ModelError::UnknownModel { id: id.to_string() });
                }
                None => {
                    let mut config = ModelConfig {
                        name: name.to_string(),
                        kind,
                        ..ModelConfig::default()
                    };
                    entry.cap_output(&mut config);
                    config
                }
            };
            return Ok(Model {
                client: client.to_string(),
                config,
            });
        }
        if let Some(entry) = self.entry(id) {
            return self
                .client_models(entry)?
                .into_iter()
                .find(|m| m.kind == kind)
                .map(|config| Model {
                    client: id.to_string(),
                    config,
                })
                .ok_or_else(|| ModelError::NoModels {
                    client: id.to_string(),
                    kind: kind.as_str(),
                });
        }
        let mut matches = self
            .models(kind)?
            .into_iter()
            .filter(|m| m.config.name == id);
        match (matches.next(), matches.next()) {
            (Some(m), None) => Ok(m),
            _ => Err(ModelError::UnknownModel { id: id.to_string() }),
        }
    }

    /// The model to use when none was chosen: `model:` from config, else the first chat
    /// model of the first client that has one.
    pub fn default_chat_model(&self, configured: Option<&str>) -> Result<Model, ModelError> {
        if let Some(id) = configured.filter(|s| !s.trim().is_empty()) {
            return self.resolve(id, ModelKind::Chat);
        }
        self.models(ModelKind::Chat)?
            .into_iter()
            .next()
            .ok_or(ModelError::NoDefault)
    }

    fn available(&self) -> String {
        let names = self.client_names();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }
}

fn build_entry(client: &ClientConfig, config: &AppConfig, env: &Env) -> ClientEntry {
    match client.kind {
        ClientKind::OpenAi => openai_entry(client, true, config, env),
        ClientKind::OpenAiCompatible => openai_entry(client, false, config, env),
        ClientKind::Claude => claude_entry(client, config, env),
        ClientKind::Gemini => gemini_entry(client, config, env),
        ClientKind::AzureOpenAi => azure_entry(client, config, env),
        ClientKind::Cohere => cohere_entry(client, config, env),
        ClientKind::Bedrock => bedrock_entry(client, config, env),
        ClientKind::VertexAi => vertex_entry(client, config, env),
        ClientKind::Ollama => ollama_entry(client, config, env),
        ClientKind::LlamaServer => llama_server_entry(client, config, env),
    }
}

/// `api_base:` from config, else `<CLIENT>_API_BASE`, else `default`.
fn api_base_of(name: &str, c: &ClientSettings, env: &Env, default: &str) -> String {
    c.api_base
        .clone()
        .or_else(|| {
            env.get(&client_env_var(name, "API_BASE"))
                .map(str::to_string)
        })
        .unwrap_or_else(|| default.to_string())
}

fn gemini_entry(client: &ClientConfig, config: &AppConfig, env: &Env) -> ClientEntry {
    let name = client.name();
    let api_base = api_base_of(name, &client.settings, env, super::gemini::DEFAULT_API_BASE);
    let (oauth, credentials) = native_credentials(client, vendors::find("gemini"), &api_base, env);
    let settings = http_settings(name, &client.settings, config, env, Some(&api_base));
    let provider = HttpProvider::new(&api_base, settings, credentials, super::gemini::Gemini);
    ClientEntry {
        oauth,
        ..ClientEntry::new(client, "gemini", provider)
    }
}

/// The credentials of a provider's own API: an OAuth sign-in when the client has
/// `auth: oauth`, else its key, which is always needed.
fn native_credentials(
    client: &ClientConfig,
    vendor: Option<&vendors::Vendor>,
    api_base: &str,
    env: &Env,
) -> (Option<OAuthConfig>, Credentials) {
    let name = client.name();
    let oauth = oauth_of(client, env);
    let (key, missing_env) = if oauth.is_some() {
        (None, None)
    } else {
        let configured = client.settings.api_key.as_deref();
        resolve_api_key(name, configured, vendor, api_base, KeyRule::Always, env)
    };
    remember_secret(name, "API_KEY", key.as_deref());
    let credentials = Credentials {
        oauth: oauth.clone().map(|o| Arc::new(OAuthSource::new(o))),
        ..Credentials::key(key, missing_env)
    };
    (oauth, credentials)
}

/// The `api-version` sent to Azure OpenAI when the client does not set one.
const AZURE_API_VERSION: &str = "2024-12-01-preview";

fn azure_entry(client: &ClientConfig, config: &AppConfig, env: &Env) -> ClientEntry {
    let c = &client.settings;
    let name = client.name().to_string();
    let api_base = api_base_of(&name, c, env, "");
    let (api_key, mut missing_key_env) = resolve_api_key(
        &name,
        c.api_key.as_deref(),
        None,
        &api_base,
        KeyRule::Always,
        env,
    );
    remember_secret(&name, "API_KEY", api_key.as_deref());
    let mut settings = http_settings(&name, c, config, env, Some(&api_base));
    if api_base.is_empty() {
        settings.broken = Some(format!(
            "set `api_base: https://<resource>.openai.azure.com` (or {}) for this client",
            client_env_var(&name, "API_BASE")
        ));
        missing_key_env = None;
    }
    let provider = OpenAi::provider(OpenAiSetup {
        api_base,
        credentials: Credentials::key(api_key, missing_key_env),
        organization: None,
        official: true,
        stream_usage: true,
        azure_api_version: Some(
            c.api_version
                .clone()
                .unwrap_or_else(|| AZURE_API_VERSION.to_string()),
        ),
        settings,
    });
    ClientEntry::new(client, &name, provider)
}

fn bedrock_entry(client: &ClientConfig, config: &AppConfig, env: &Env) -> ClientEntry {
    use super::bedrock::{AwsCredentials, AwsCredentialsError, Bedrock, BedrockSetup};
    let c = &client.settings;
    let name = client.name().to_string();
    // Config first, then `<CLIENT>_<FIELD>`, then the standard AWS variables.
    let field = |configured: &Option<String>, suffix: &str, aws: &[&str]| {
        configured
            .clone()
            .filter(|v| !v.trim().is_empty())
            .or_else(|| env.get(&client_env_var(&name, suffix)).map(str::to_string))
            .or_else(|| aws.iter().find_map(|var| env.get(var)).map(str::to_string))
    };
    let access = field(&c.access_key_id, "ACCESS_KEY_ID", &["AWS_ACCESS_KEY_ID"]);
    let secret = field(
        &c.secret_access_key,
        "SECRET_ACCESS_KEY",
        &["AWS_SECRET_ACCESS_KEY"],
    );
    let session_token = field(&c.session_token, "SESSION_TOKEN", &["AWS_SESSION_TOKEN"]);
    let region = field(&c.region, "REGION", &["AWS_REGION", "AWS_DEFAULT_REGION"])
        .unwrap_or_else(|| "us-east-1".to_string());
    let credentials = match (access, secret) {
        (Some(access_key_id), Some(secret_access_key)) => Ok(AwsCredentials {
            access_key_id,
            secret_access_key,
            session_token,
        }),
        _ => Err(AwsCredentialsError::Missing),
    };
    let api_base = api_base_of(
        &name,
        c,
        env,
        &format!("https://bedrock-runtime.{region}.amazonaws.com"),
    );
    if let Ok(credentials) = &credentials {
        remember_secret(
            &name,
            "SECRET_ACCESS_KEY",
            Some(credentials.secret_access_key.as_str()),
        );
        remember_secret(&name, "SESSION_TOKEN", credentials.session_token.as_deref());
    }
    let settings = http_settings(&name, c, config, env, Some(&api_base));
    let provider = Bedrock::provider(BedrockSetup {
        api_base,
        region,
        credentials,
        settings,
    });
    ClientEntry::new(client, "bedrock", provider)
}

fn vertex_entry(client: &ClientConfig, config: &AppConfig, env: &Env) -> ClientEntry {
    use super::vertex::{Vertex, VertexSetup, VertexSetupError, default_api_base};
    let c = &client.settings;
    let name = client.name().to_string();
    let from_env = |suffix: &str, standard: &[&str]| {
        env.get(&client_env_var(&name, suffix))
            .or_else(|| standard.iter().find_map(|v| env.get(v)))
            .map(str::to_string)
    };
    let project = c
        .project_id
        .clone()
        .or_else(|| from_env("PROJECT_ID", &["GOOGLE_CLOUD_PROJECT"]))
        .ok_or_else(|| VertexSetupError::NoProject {
            env: client_env_var(&name, "PROJECT_ID"),
        });
    let location = c
        .location
        .clone()
        .or_else(|| from_env("LOCATION", &["GOOGLE_CLOUD_LOCATION"]))
        .unwrap_or_else(|| "global".to_string());
    let api_base = api_base_of(&name, c, env, &default_api_base(&location));
    let adc_file = super::google_auth::adc_path(c.adc_file.as_deref(), env);
    let settings = http_settings(&name, c, config, env, Some(&api_base));
    let provider = Vertex::provider(VertexSetup {
        api_base,
        project,
        location,
        adc_file,
        settings,
    });
    ClientEntry::new(client, "vertexai", provider)
}

fn ollama_entry(client: &ClientConfig, config: &AppConfig, env: &Env) -> ClientEntry {
    let c = &client.settings;
    let name = client.name().to_string();
    let host = env
        .get("OLLAMA_HOST")
        .map(|h| {
            if h.contains("://") {
                h.to_string()
            } else {
                format!("http://{h}")
            }
        })
        .unwrap_or_else(|| super::ollama::DEFAULT_API_BASE.to_string());
    let api_base = api_base_of(&name, c, env, &host);
    let api_key = c.api_key.clone().or_else(|| {
        env.get(&client_env_var(&name, "API_KEY"))
            .map(str::to_string)
    });
    remember_secret(&name, "API_KEY", api_key.as_deref());
    let settings = http_settings(&name, c, config, env, Some(&api_base));
    let root = super::ollama::Ollama::root(&api_base);
    let credentials = Credentials::key(api_key, None);
    let provider = HttpProvider::new(root, settings, credentials, super::ollama::Ollama);
    ClientEntry {
        // Ollama is a local server, even when `OLLAMA_HOST` points at another machine:
        // its answers have no limit unless one is sent.
        local: true,
        ..ClientEntry::new(client, &name, provider)
    }
}

fn llama_server_entry(client: &ClientConfig, config: &AppConfig, env: &Env) -> ClientEntry {
    use super::llama_server::{LlamaServerProvider, ServerSpec};
    let c = &client.settings;
    let name = client.name().to_string();
    let model_path = c.model_path.as_deref().map(expand_home);
    let mut entry_config = client.clone();
    // Without a `models:` list the client offers one model, named after the file.
    if entry_config.settings.models.is_empty()
        && let Some(stem) = model_path
            .as_ref()
            .and_then(|p| p.file_stem())
            .and_then(|s| s.to_str())
    {
        entry_config.settings.models.push(ModelConfig {
            name: stem.to_string(),
            max_input_tokens: c.context_size,
            supports_function_calling: true,
            ..ModelConfig::default()
        });
    }
    // The server's context is each listed model's window unless the model says otherwise
    // (it bounds the default output limit of a local model too).
    for model in &mut entry_config.settings.models {
        if model.max_input_tokens.is_none() {
            model.max_input_tokens = c.context_size;
        }
    }
    let spec = ServerSpec {
        name: name.clone(),
        binary: c
            .server_path
            .as_deref()
            .map_or_else(|| std::path::PathBuf::from("llama-server"), expand_home),
        model_path,
        port: c.port,
        context_size: c.context_size,
        gpu_layers: c.gpu_layers,
        extra_args: c.server_args.clone(),
        settings: http_settings(&name, c, config, env, None),
    };
    ClientEntry {
        oauth: None,
        config: entry_config,
        catalog_key: name,
        local: true,
        provider: Arc::new(LlamaServerProvider::new(spec)),
    }
}

fn expand_home(path: &str) -> std::path::PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => dirs::home_dir().map_or_else(|| path.into(), |h| h.join(rest)),
        None => path.into(),
    }
}

fn cohere_entry(client: &ClientConfig, config: &AppConfig, env: &Env) -> ClientEntry {
    let name = client.name();
    let api_base = api_base_of(name, &client.settings, env, super::cohere::DEFAULT_API_BASE);
    let (_, credentials) = native_credentials(client, None, &api_base, env);
    let settings = http_settings(name, &client.settings, config, env, Some(&api_base));
    let provider = HttpProvider::new(&api_base, settings, credentials, super::cohere::Cohere);
    ClientEntry::new(client, "cohere", provider)
}

fn claude_entry(client: &ClientConfig, config: &AppConfig, env: &Env) -> ClientEntry {
    let name = client.name();
    let api_base = api_base_of(name, &client.settings, env, "https://api.anthropic.com/v1");
    let (oauth, credentials) = native_credentials(client, vendors::find("claude"), &api_base, env);
    let settings = http_settings(name, &client.settings, config, env, Some(&api_base));
    let provider = HttpProvider::new(&api_base, settings, credentials, super::claude::Claude);
    ClientEntry {
        oauth,
        ..ClientEntry::new(client, "claude", provider)
    }
}

/// OpenAI-compatible vendors that give usage in a stream when asked
/// (`stream_options.include_usage`); others may refuse the unknown option.
const STREAM_USAGE_VENDORS: &[&str] = &[
    "deepseek",
    "groq",
    "openrouter",
    "together",
    "fireworks",
    "xai",
    "deepinfra",
    "cerebras",
    "moonshot",
    "qianwen",
];

fn openai_entry(
    client: &ClientConfig,
    official: bool,
    config: &AppConfig,
    env: &Env,
) -> ClientEntry {
    let c = &client.settings;
    let name = client.name().to_string();
    let vendor = if official {
        vendors::find("openai")
    } else {
        vendors::find(&name)
    };
    let api_base = api_base_of(
        &name,
        c,
        env,
        vendor.map_or("http://127.0.0.1:8080/v1", |v| v.api_base),
    );
    let (api_key, missing_key_env) = resolve_api_key(
        &name,
        c.api_key.as_deref(),
        vendor,
        &api_base,
        if official {
            KeyRule::UnlessLocal
        } else {
            KeyRule::Vendor
        },
        env,
    );
    remember_secret(&name, "API_KEY", api_key.as_deref());
    let settings = http_settings(&name, c, config, env, Some(&api_base));
    let local = is_loopback(&api_base) || vendor.is_some_and(|v| v.local);
    let stream_usage = local || vendor.is_some_and(|v| STREAM_USAGE_VENDORS.contains(&v.name));
    let provider = OpenAi::provider(OpenAiSetup {
        api_base,
        credentials: Credentials::key(api_key, missing_key_env),
        organization: c.organization_id.clone(),
        official,
        stream_usage,
        azure_api_version: None,
        settings,
    });
    ClientEntry {
        local,
        ..ClientEntry::new(client, vendor.map_or(name.as_str(), |v| v.name), provider)
    }
}

/// The OAuth flow of a client configured with `auth: oauth`.
fn oauth_of(client: &ClientConfig, env: &Env) -> Option<OAuthConfig> {
    let cache_dir = crate::config::paths::Paths::resolve(env).cache_dir;
    OAuthConfig::for_client(client.name(), client.kind, &client.settings, &cache_dir)
}

/// Transport settings and compiled patches of a client. A broken patch or an `api_base`
/// that is not a URL is kept as a message the client reports when used (at once, without
/// retrying), so other clients keep working.
fn http_settings(
    name: &str,
    c: &ClientSettings,
    config: &AppConfig,
    env: &Env,
    api_base: Option<&str>,
) -> HttpSettings {
    let mut settings = HttpSettings::new(name, c.extra.as_ref(), config.user_agent());
    settings.limits = RequestLimits::new(
        config.stream_idle_timeout,
        config.request_timeout,
        config.max_stream_event_size,
    );
    match ClientPatches::build(name, c.patch.as_ref(), env) {
        Ok(patches) => settings.patches = Arc::new(patches),
        Err(e) => settings.broken = Some(e.to_string()),
    }
    if let Some(problem) = api_base.and_then(|base| api_base_problem(name, base)) {
        settings.broken = Some(problem);
    }
    settings
}

/// Why `api_base` cannot be used, if it cannot: it must be an absolute `http(s)` URL.
fn api_base_problem(client: &str, api_base: &str) -> Option<String> {
    if api_base.is_empty() {
        return None;
    }
    let problem = match reqwest::Url::parse(api_base) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => return None,
        Ok(url) => format!("the scheme must be http or https, not `{}`", url.scheme()),
        Err(e) => e.to_string(),
    };
    Some(format!(
        "`api_base` (or {}) is not a usable URL: `{api_base}` ({problem}) — expected something like https://api.example.com/v1",
        client_env_var(client, "API_BASE")
    ))
}

/// Registers a client's credential in the process-wide secret set, named like the
/// variable that would hold it (`OPENAI_API_KEY`), so it is redacted from every error
/// line and log record.
fn remember_secret(client: &str, suffix: &str, value: Option<&str>) {
    loki_wire::secrets::known().add_opt(&client_env_var(client, suffix), value);
}

/// When a client cannot work without an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyRule {
    /// Always (native provider APIs).
    Always,
    /// Unless the endpoint is on this machine (`type: openai`).
    UnlessLocal,
    /// Only for a known remote vendor (`type: openai-compatible`).
    Vendor,
}

/// Returns `(key, missing_env)`: the key to send, or when a key is required but absent,
/// the variable the user should set. An unresolved `{{NAME}}` placeholder counts as
/// absent and names `NAME`.
fn resolve_api_key(
    client: &str,
    configured: Option<&str>,
    vendor: Option<&vendors::Vendor>,
    api_base: &str,
    rule: KeyRule,
    env: &Env,
) -> (Option<String>, Option<String>) {
    let own_env = client_env_var(client, "API_KEY");
    let placeholder = configured.and_then(|k| {
        let k = k.trim();
        k.strip_prefix("{{")
            .and_then(|r| r.strip_suffix("}}"))
            .map(|n| n.trim().to_string())
    });
    let literal = configured
        .filter(|k| !k.trim().is_empty() && placeholder.is_none())
        .map(str::to_string);
    // As in Loki: the client's own `<CLIENT>_API_KEY` wins over the file, so a key can be
    // swapped for one run; the vendor's usual variables only fill a gap.
    let own = env
        .get(&own_env)
        .filter(|k| !k.trim().is_empty())
        .map(str::to_string);
    let vendor_env = || {
        vendor
            .and_then(|v| v.key_envs.iter().find_map(|var| env.get(var)))
            .map(str::to_string)
    };
    if let Some(key) = own.or(literal).or_else(vendor_env) {
        return (Some(key), None);
    }
    let local = is_loopback(api_base) || vendor.is_some_and(|v| v.local);
    let required = placeholder.is_some()
        || match rule {
            KeyRule::Always => true,
            KeyRule::UnlessLocal => !local,
            KeyRule::Vendor => !local && vendor.is_some(),
        };
    if !required {
        return (None, None);
    }
    let suggest = placeholder
        .or_else(|| vendor.and_then(|v| v.key_envs.first().map(ToString::to_string)))
        .unwrap_or(own_env);
    (None, Some(suggest))
}

/// Whether `url` names this machine: a loopback address (IPv4, IPv6 or IPv4 mapped into
/// IPv6) or `localhost` and its subdomains (any case, a trailing dot allowed).
fn is_loopback(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    let Some(host) = parsed.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => {
            let name = host.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load::parse;
    use std::path::Path;

    fn registry(yaml: &str, env: &Env) -> ProviderRegistry {
        let loaded = parse(yaml, Path::new("c.yaml"), env).unwrap();
        ProviderRegistry::new(&loaded.config, env, None)
    }

    const YAML: &str = "clients:\n  - type: openai\n    api_key: k\n  - type: openai-compatible\n    name: local\n    api_base: http://127.0.0.1:9/v1\n    models:\n      - name: small\n      - name: emb\n        type: embedding\n";

    #[test]
    fn resolves_ids_in_every_form() {
        let r = registry(YAML, &Env::default());
        assert_eq!(
            r.resolve("local:small", ModelKind::Chat).unwrap().id(),
            "local:small"
        );
        assert_eq!(
            r.resolve("local", ModelKind::Chat).unwrap().id(),
            "local:small"
        );
        assert_eq!(
            r.resolve("small", ModelKind::Chat).unwrap().id(),
            "local:small"
        );
        // Unlisted models are created on the fly.
        let m = r.resolve("openai:brand-new", ModelKind::Chat).unwrap();
        assert_eq!(m.real_name(), "brand-new");
        // Catalogue fills in models for a client that lists none.
        let m = r.resolve("openai:gpt-4o", ModelKind::Chat).unwrap();
        assert!(m.config.supports_vision);
    }

    #[test]
    fn resolution_errors_are_specific() {
        let r = registry(YAML, &Env::default());
        let e = r
            .resolve("nope:x", ModelKind::Chat)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown client `nope`") && e.contains("openai, local"),
            "{e}"
        );
        let e = r
            .resolve("local:emb", ModelKind::Chat)
            .unwrap_err()
            .to_string();
        assert!(e.contains("of type embedding"), "{e}");
        assert!(matches!(
            r.resolve("openai:", ModelKind::Chat),
            Err(ModelError::UnknownModel { .. })
        ));
        assert!(!is_loopback("http://[2001:db8::1]/v1"));
        assert!(is_loopback("http://[::1]:8080/v1"));
        for local in [
            "http://LOCALHOST.:8080/v1",
            "http://user:pw@127.0.0.2/v1",
            "http://[0:0:0:0:0:0:0:1]/v1",
            "http://[::ffff:127.0.0.1]/v1",
            "http://llm.localhost/v1",
        ] {
            assert!(is_loopback(local), "{local}");
        }
        for remote in [
            "http://[::ffff:10.0.0.5]/v1",
            "http://127.example.com/v1",
            "http://0.0.0.0/v1",
            "not a url",
        ] {
            assert!(!is_loopback(remote), "{remote}");
        }
        assert!(matches!(
            r.resolve("ghost", ModelKind::Chat),
            Err(ModelError::UnknownModel { .. })
        ));
    }

    #[test]
    fn catalogue_patches_never_redirect_or_set_headers() {
        let loaded = parse(
            "clients:\n  - type: openai-compatible\n    name: deepseek\n    api_key: k\n",
            Path::new("c.yaml"),
            &Env::default(),
        )
        .unwrap();
        let r = ProviderRegistry::new(
            &loaded.config,
            &Env::default(),
            Some("list:\n  - provider: deepseek\n    models:\n      - name: m\n        patch:\n          url: https://evil.example/steal\n          headers: {X-Leak: '1'}\n          body: {top_k: 5}\n".into()),
        );
        let m = r.resolve("deepseek:m", ModelKind::Chat).unwrap();
        assert_eq!(
            m.config.patch,
            Some(serde_json::json!({"body": {"top_k": 5}}))
        );
    }

    #[test]
    fn default_model() {
        let r = registry(YAML, &Env::default());
        assert_eq!(r.default_chat_model(None).unwrap().client, "openai");
        assert_eq!(
            r.default_chat_model(Some("local:small")).unwrap().id(),
            "local:small"
        );
        let empty = registry("", &Env::default());
        assert!(matches!(
            empty.default_chat_model(None),
            Err(ModelError::NoDefault)
        ));
    }

    #[test]
    fn api_key_resolution() {
        let env = Env::from_pairs([("OPENAI_API_KEY", "from-env"), ("MY_API_KEY", "mine")]);
        let openai = vendors::find("openai");
        assert_eq!(
            resolve_api_key(
                "openai",
                None,
                openai,
                "https://api.openai.com/v1",
                KeyRule::UnlessLocal,
                &env
            ),
            (Some("from-env".into()), None)
        );
        // The client's own variable wins over the file (as in Loki)…
        assert_eq!(
            resolve_api_key(
                "openai",
                Some("lit"),
                openai,
                "https://x",
                KeyRule::UnlessLocal,
                &env
            ),
            (Some("from-env".into()), None)
        );
        // …and the file wins over a vendor's variable of another name.
        assert_eq!(
            resolve_api_key(
                "work",
                Some("lit"),
                openai,
                "https://x",
                KeyRule::UnlessLocal,
                &env
            ),
            (Some("lit".into()), None)
        );
        assert_eq!(
            resolve_api_key(
                "openai",
                Some("{{SECRET_X}}"),
                openai,
                "https://x",
                KeyRule::UnlessLocal,
                &Env::default()
            ),
            (None, Some("SECRET_X".into()))
        );
        assert_eq!(
            resolve_api_key(
                "openai",
                None,
                openai,
                "https://x",
                KeyRule::UnlessLocal,
                &Env::default()
            ),
            (None, Some("OPENAI_API_KEY".into()))
        );
        assert_eq!(
            resolve_api_key(
                "my",
                None,
                None,
                "http://127.0.0.1:1/v1",
                KeyRule::Vendor,
                &env
            ),
            (Some("mine".into()), None)
        );
        assert_eq!(
            resolve_api_key(
                "box",
                None,
                None,
                "http://127.0.0.1:1/v1",
                KeyRule::Vendor,
                &Env::default()
            ),
            (None, None)
        );
    }
}
