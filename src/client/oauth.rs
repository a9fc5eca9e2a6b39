//! OAuth sign-in for `auth: oauth` clients (claude, gemini): the authorization-code flow
//! with PKCE (S256) and a `state` check, tokens kept in
//! `<cache>/oauth/<client>_oauth_tokens.json` (mode 0600) and refreshed when they expire.
//!
//! Claude's authorization page shows a code to paste back (`<code>#<state>`); Google
//! redirects to a listener loki opens on 127.0.0.1. Endpoints and client ids default to
//! the providers' and can be changed per client (`oauth_*` keys).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use super::ProviderError;
use crate::config::clients::{ClientKind, ClientSettings};

/// Which provider's flow a client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Anthropic: paste `<code>#<state>`.
    Claude,
    /// Google: loopback redirect.
    Gemini,
}

impl Flavor {
    /// The flow for a client type, if it has one.
    pub fn of(kind: ClientKind) -> Option<Self> {
        match kind {
            ClientKind::Claude => Some(Self::Claude),
            ClientKind::Gemini => Some(Self::Gemini),
            _ => None,
        }
    }

    /// Display name.
    pub fn provider(self) -> &'static str {
        match self {
            Self::Claude => "Anthropic",
            Self::Gemini => "Google",
        }
    }
}

/// Endpoints and client registration of one client's flow.
#[derive(Clone)]
pub struct OAuthConfig {
    /// Client name (token file name).
    pub client: String,
    /// Flow kind.
    pub flavor: Flavor,
    /// Authorization page.
    pub authorize_url: String,
    /// Token endpoint.
    pub token_url: String,
    /// OAuth client id.
    pub client_id: String,
    /// OAuth client secret (Google's installed-app flow has one; it is not secret).
    pub client_secret: Option<String>,
    /// Scopes, space-separated.
    pub scopes: String,
    /// Token file.
    pub token_file: PathBuf,
}

/// Anthropic's public client id for command-line sign-in.
const CLAUDE_CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
/// Where Anthropic shows the code to paste.
pub const CLAUDE_REDIRECT: &str = "https://console.anthropic.com/oauth/code/callback";

impl OAuthConfig {
    /// The flow of a client with `auth: oauth`; `None` for other clients.
    pub fn for_client(
        name: &str,
        kind: ClientKind,
        settings: &ClientSettings,
        cache_dir: &Path,
    ) -> Option<Self> {
        if settings.auth.as_deref() != Some("oauth") {
            return None;
        }
        let flavor = Flavor::of(kind)?;
        let (authorize, token, client_id, scopes) = match flavor {
            Flavor::Claude => (
                "https://claude.ai/oauth/authorize",
                "https://console.anthropic.com/v1/oauth/token",
                CLAUDE_CLIENT_ID,
                "org:create_api_key user:profile user:inference",
            ),
            Flavor::Gemini => (
                "https://accounts.google.com/o/oauth2/v2/auth",
                "https://oauth2.googleapis.com/token",
                "",
                "https://www.googleapis.com/auth/generative-language.peruserquota https://www.googleapis.com/auth/generative-language.retriever https://www.googleapis.com/auth/userinfo.email",
            ),
        };
        Some(Self {
            client: name.to_string(),
            flavor,
            authorize_url: settings
                .oauth_authorize_url
                .clone()
                .unwrap_or_else(|| authorize.into()),
            token_url: settings
                .oauth_token_url
                .clone()
                .unwrap_or_else(|| token.into()),
            client_id: settings
                .oauth_client_id
                .clone()
                .unwrap_or_else(|| client_id.into()),
            client_secret: settings.oauth_client_secret.clone(),
            scopes: scopes.into(),
            token_file: cache_dir
                .join("oauth")
                .join(format!("{name}_oauth_tokens.json")),
        })
    }
}

/// Saved tokens.
#[derive(Clone, Serialize, Deserialize)]
pub struct Tokens {
    /// Bearer token.
    pub access_token: String,
    /// Used to get a new access token.
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// Unix seconds after which the access token is stale.
    #[serde(default)]
    pub expires_at: Option<u64>,
}

debug_without_secrets!(Tokens, expires_at);

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Why a sign-in step or a token refresh failed; each is one line for the user.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// The system gave no random bytes for the PKCE values.
    #[error("no randomness available")]
    NoRandomness,
    /// The token endpoint cannot be reached.
    #[error("cannot reach {url}: {message}")]
    Unreachable {
        /// The token endpoint.
        url: String,
        /// Why (the error chain).
        message: String,
    },
    /// The token endpoint's answer could not be read.
    #[error(transparent)]
    Body(reqwest::Error),
    /// The token endpoint refused.
    #[error("the token request failed (HTTP {status}): {message}")]
    Refused {
        /// HTTP status.
        status: u16,
        /// The provider's message, redacted.
        message: String,
    },
    /// The answer was not a token.
    #[error("unexpected token response: {0}")]
    Response(serde_json::Error),
    /// The token file's directory cannot be created.
    #[error("{}: {source}", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The tokens cannot be encoded.
    #[error(transparent)]
    Encode(serde_json::Error),
    /// The token file cannot be written.
    #[error("cannot save {}: {source}", path.display())]
    Save {
        /// The token file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// A PKCE verifier and its S256 challenge, plus a random `state`.
#[derive(Debug, Clone)]
pub struct Pkce {
    /// Sent with the code exchange.
    pub verifier: String,
    /// Sent with the authorization request.
    pub challenge: String,
    /// Echoed back by the provider; checked.
    pub state: String,
}

impl Pkce {
    /// Fresh random values.
    pub fn new() -> Result<Self, OAuthError> {
        use ring::rand::SecureRandom;
        let rng = ring::rand::SystemRandom::new();
        let mut bytes = [0u8; 64];
        rng.fill(&mut bytes).map_err(|_| OAuthError::NoRandomness)?;
        let verifier = URL_SAFE_NO_PAD.encode(&bytes[..32]);
        let state = URL_SAFE_NO_PAD.encode(&bytes[32..]);
        let challenge = URL_SAFE_NO_PAD
            .encode(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()).as_ref());
        Ok(Self {
            verifier,
            challenge,
            state,
        })
    }
}

impl OAuthConfig {
    /// The authorization URL to open.
    pub fn authorize_url(&self, pkce: &Pkce, redirect_uri: &str) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        if self.flavor == Flavor::Claude {
            query.append_pair("code", "true");
        }
        query
            .append_pair("client_id", &self.client_id)
            .append_pair("response_type", "code")
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", &self.scopes)
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &pkce.state);
        if self.flavor == Flavor::Gemini {
            query
                .append_pair("access_type", "offline")
                .append_pair("prompt", "consent");
        }
        format!("{}?{}", self.authorize_url, query.finish())
    }

    /// Exchanges an authorization code for tokens and saves them.
    pub async fn exchange(
        &self,
        http: &reqwest::Client,
        code: &str,
        pkce: &Pkce,
        redirect_uri: &str,
    ) -> Result<Tokens, OAuthError> {
        let mut fields = vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", code.to_string()),
            ("redirect_uri", redirect_uri.to_string()),
            ("client_id", self.client_id.clone()),
            ("code_verifier", pkce.verifier.clone()),
        ];
        if self.flavor == Flavor::Claude {
            fields.push(("state", pkce.state.clone()));
        }
        let tokens = self.token_request(http, fields, None).await?;
        self.save(&tokens)?;
        Ok(tokens)
    }

    async fn token_request(
        &self,
        http: &reqwest::Client,
        mut fields: Vec<(&str, String)>,
        keep_refresh: Option<&str>,
    ) -> Result<Tokens, OAuthError> {
        if let Some(secret) = &self.client_secret {
            fields.push(("client_secret", secret.clone()));
        }
        // Anthropic takes JSON; Google takes a form.
        let request = if self.flavor == Flavor::Claude {
            let body: serde_json::Map<String, serde_json::Value> = fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), serde_json::Value::String(v)))
                .collect();
            http.post(&self.token_url).json(&body)
        } else {
            let mut form = form_urlencoded::Serializer::new(String::new());
            for (k, v) in &fields {
                form.append_pair(k, v);
            }
            http.post(&self.token_url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(form.finish())
        };
        let response = request.send().await.map_err(|e| OAuthError::Unreachable {
            url: self.token_url.clone(),
            message: super::http::error_chain(&e),
        })?;
        let status = response.status();
        let body = response.bytes().await.map_err(OAuthError::Body)?;
        if !status.is_success() {
            let message = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| {
                    v["error_description"]
                        .as_str()
                        .or_else(|| v["error"]["message"].as_str())
                        .or_else(|| v["error"].as_str())
                        .map(str::to_string)
                })
                .unwrap_or_else(|| loki_wire::error_text::error_message(&body));
            return Err(OAuthError::Refused {
                status: status.as_u16(),
                message: loki_wire::secrets::redact(&message).into_owned(),
            });
        }
        #[derive(Deserialize)]
        struct Answer {
            access_token: String,
            refresh_token: Option<String>,
            expires_in: Option<u64>,
        }
        let answer: Answer = serde_json::from_slice(&body).map_err(OAuthError::Response)?;
        self.remember(&answer.access_token, answer.refresh_token.as_deref());
        Ok(Tokens {
            access_token: answer.access_token,
            refresh_token: answer
                .refresh_token
                .or_else(|| keep_refresh.map(str::to_string)),
            expires_at: answer.expires_in.map(|s| now() + s),
        })
    }

    /// Writes the token file (0600, atomically).
    pub fn save(&self, tokens: &Tokens) -> Result<(), OAuthError> {
        if let Some(dir) = self.token_file.parent() {
            std::fs::create_dir_all(dir).map_err(|source| OAuthError::CreateDir {
                dir: dir.to_path_buf(),
                source,
            })?;
        }
        let text = serde_json::to_vec_pretty(tokens).map_err(OAuthError::Encode)?;
        crate::atomic_file::write_atomic(&self.token_file, &text, true).map_err(|source| {
            OAuthError::Save {
                path: self.token_file.clone(),
                source,
            }
        })
    }

    fn load(&self) -> Option<Tokens> {
        let text = std::fs::read(&self.token_file).ok()?;
        let tokens: Tokens = serde_json::from_slice(&text).ok()?;
        self.remember(&tokens.access_token, tokens.refresh_token.as_deref());
        Some(tokens)
    }

    /// Adds the tokens to the process-wide secret set, so they are redacted from every
    /// message and log record.
    fn remember(&self, access: &str, refresh: Option<&str>) {
        use crate::config::vendors::client_env_var;
        let secrets = loki_wire::secrets::known();
        secrets.add(&client_env_var(&self.client, "OAUTH_ACCESS_TOKEN"), access);
        secrets.add_opt(
            &client_env_var(&self.client, "OAUTH_REFRESH_TOKEN"),
            refresh,
        );
    }
}

/// Supplies a valid access token to a provider, refreshing it when needed.
#[derive(Debug)]
pub struct OAuthSource {
    config: OAuthConfig,
    /// The tokens and the token file's modification time when they were read.
    cached: Mutex<Option<(Tokens, Option<SystemTime>)>>,
}

impl OAuthSource {
    /// A source reading the client's token file on first use.
    pub fn new(config: OAuthConfig) -> Self {
        Self {
            config,
            cached: Mutex::new(None),
        }
    }

    /// The flow's settings.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// A bearer token: the saved one, refreshed (and saved) when it is about to expire.
    pub async fn bearer(&self, http: &reqwest::Client) -> Result<String, ProviderError> {
        let name = &self.config.client;
        let setup = |message: String| ProviderError::Setup {
            client: name.clone(),
            message,
        };
        let mut cached = self.cached.lock().await;
        // Re-read when the file changed: a sign-in from the REPL or another loki process.
        let modified = std::fs::metadata(&self.config.token_file)
            .and_then(|m| m.modified())
            .ok();
        if cached.as_ref().is_none_or(|(_, seen)| *seen != modified) {
            *cached = self.config.load().map(|t| (t, modified));
        }
        let Some(tokens) = cached.as_ref().map(|(t, _)| t.clone()) else {
            return Err(setup(format!(
                "OAuth configured but no tokens found for '{name}'. Run: 'loki --authenticate {name}' or '.authenticate' in the REPL"
            )));
        };
        let fresh = tokens.expires_at.is_none_or(|t| now() + 60 < t);
        if fresh {
            return Ok(tokens.access_token);
        }
        let Some(refresh) = tokens.refresh_token.as_deref() else {
            return Err(setup(format!(
                "the OAuth token for '{name}' expired; run 'loki --authenticate {name}'"
            )));
        };
        let fields = vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", refresh.to_string()),
            ("client_id", self.config.client_id.clone()),
        ];
        let renewed = self
            .config
            .token_request(http, fields, Some(refresh))
            .await
            .map_err(|e| {
                setup(format!(
                    "{e} — run 'loki --authenticate {name}' to sign in again"
                ))
            })?;
        self.config
            .save(&renewed)
            .map_err(|e| setup(e.to_string()))?;
        let token = renewed.access_token.clone();
        let modified = std::fs::metadata(&self.config.token_file)
            .and_then(|m| m.modified())
            .ok();
        *cached = Some((renewed, modified));
        Ok(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_challenge_is_sha256_of_the_verifier() {
        let p = Pkce::new().unwrap();
        assert_eq!(p.verifier.len(), 43);
        let expected = URL_SAFE_NO_PAD
            .encode(ring::digest::digest(&ring::digest::SHA256, p.verifier.as_bytes()).as_ref());
        assert_eq!(p.challenge, expected);
        assert_ne!(Pkce::new().unwrap().state, p.state);
        let settings = ClientSettings {
            auth: Some("oauth".into()),
            ..ClientSettings::default()
        };
        let config =
            OAuthConfig::for_client("claude", ClientKind::Claude, &settings, Path::new("/c"))
                .unwrap();
        let url = config.authorize_url(&p, CLAUDE_REDIRECT);
        assert!(url.starts_with("https://claude.ai/oauth/authorize?code=true&client_id="));
        assert!(url.contains("code_challenge_method=S256"));
        assert!(url.contains(&format!("state={}", p.state)));
        assert_eq!(
            config.token_file,
            Path::new("/c/oauth/claude_oauth_tokens.json")
        );
        assert!(
            OAuthConfig::for_client("x", ClientKind::Cohere, &settings, Path::new("/c")).is_none()
        );
    }
}

debug_without_secrets!(OAuthConfig, client, flavor, token_url);
