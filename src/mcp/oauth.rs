//! Sign-in for remote MCP servers that answer 401 (the MCP authorization spec), on top of
//! rmcp's `auth` module: protected-resource and authorization-server discovery (with the
//! 2025-03-26 fallbacks), pre-registered clients, client ID metadata documents or dynamic
//! registration, PKCE, `iss` checks, resource indicators, refresh and scope step-up.
//!
//! loki's part: where tokens live — `<cache>/oauth/mcp_<server>.json`, mode 0600, written
//! atomically — the `oauth` settings of `mcp.json`, and the status shown by `--info`. The
//! browser part of a sign-in (the loopback redirect) is the front end's
//! (`cli::mcp_login`).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession, CredentialStore,
    ScopeUpgradeConfig, StoredCredentials,
};
use serde::Deserialize;

use super::error::McpError;

/// Most scope step-ups one connection tries before it gives up.
const MAX_STEP_UPS: u32 = 2;

/// The `oauth` object of a server in `mcp.json` (every key optional).
#[derive(Clone, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthSettings {
    /// A client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// Its secret (`{{NAME}}` placeholders come from the environment or the vault).
    pub client_secret: Option<String>,
    /// An HTTPS URL where loki's client metadata document is hosted (used when the
    /// authorization server accepts such client ids).
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for (else: the server's challenge, then what it supports).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The port of the loopback redirect (else: any free port).
    pub redirect_port: Option<u16>,
}

impl std::fmt::Debug for OAuthSettings {
    // The secret is never shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("redirect_port", &self.redirect_port)
            .finish()
    }
}

/// Where server `name`'s tokens are kept.
pub fn token_path(cache_dir: &Path, name: &str) -> PathBuf {
    let safe = crate::config::env::file_safe(name);
    cache_dir.join("oauth").join(format!("mcp_{safe}.json"))
}

/// Where the scopes a server asked for beyond the sign-in are noted (`insufficient_scope`
/// answers), for the next `--mcp-login` to ask for.
fn wanted_path(cache_dir: &Path, name: &str) -> PathBuf {
    token_path(cache_dir, name).with_extension("scopes")
}

/// Notes that server `name` asked for `scope` (space-separated scopes).
pub fn want_scopes(cache_dir: &Path, name: &str, scope: &str) {
    let mut wanted = wanted(cache_dir, name);
    for s in scope.split_whitespace() {
        if !wanted.iter().any(|w| w == s) {
            wanted.push(s.to_string());
        }
    }
    let path = wanted_path(cache_dir, name);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = crate::atomic_file::write_atomic(&path, wanted.join(" ").as_bytes(), true) {
        tracing::warn!(server = name, "cannot note the scopes asked for: {e}");
    }
}

/// The scopes server `name` asked for beyond its sign-in.
pub fn wanted(cache_dir: &Path, name: &str) -> Vec<String> {
    crate::atomic_file::read_regular_text(&wanted_path(cache_dir, name), 64 * 1024)
        .map(|t| t.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Tokens in a 0600 file, replaced atomically.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    /// The store at `path`.
    pub fn new(path: PathBuf) -> Self {
        Self { path }
    }

    /// What the file holds; `None` when there is no (readable) file.
    pub fn read(&self) -> Option<StoredCredentials> {
        let bytes = crate::atomic_file::read_regular(&self.path, 1 << 20).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

fn store_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::InternalError(format!("cannot keep the MCP sign-in: {e}"))
}

impl FileStore {
    fn write(&self, credentials: &StoredCredentials) -> Result<(), AuthError> {
        let text = serde_json::to_vec_pretty(credentials).map_err(store_error)?;
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(store_error)?;
        }
        crate::atomic_file::write_atomic(&self.path, &text, true).map_err(store_error)
    }

    fn remove(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(store_error(e)),
            _ => Ok(()),
        }
    }
}

/// Where sign-ins are kept: the vault when there is one (a secret `MCP_OAUTH_<SERVER>`
/// per server), else a 0600 file per server in `dir` (the cache directory), where the
/// scopes servers asked for are noted too.
#[derive(Clone)]
pub struct Tokens {
    /// The cache directory.
    pub dir: PathBuf,
    /// The vault, when one exists.
    pub vault: Option<std::sync::Arc<crate::vault::Keyring>>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("dir", &self.dir)
            .field("vault", &self.vault.is_some())
            .finish()
    }
}

/// The vault secret holding server `name`'s sign-in.
pub fn secret_name(name: &str) -> String {
    format!("MCP_OAUTH_{}", crate::config::env::env_name(name))
}

impl Tokens {
    /// In `dir`, or in `vault` when it exists.
    pub fn new(dir: PathBuf, vault: Option<std::sync::Arc<crate::vault::Keyring>>) -> Self {
        let vault = vault.filter(|v| v.access().exists());
        Self { dir, vault }
    }

    /// The store of server `name`.
    pub fn store(&self, name: &str) -> TokenStore {
        match &self.vault {
            Some(keyring) => TokenStore::Vault {
                keyring: std::sync::Arc::clone(keyring),
                secret: secret_name(name),
            },
            None => TokenStore::File(FileStore::new(token_path(&self.dir, name))),
        }
    }

    /// Where server `name`'s sign-in is, in words.
    pub fn place(&self, name: &str) -> String {
        match &self.vault {
            Some(_) => format!("the vault, as {}", secret_name(name)),
            None => token_path(&self.dir, name).display().to_string(),
        }
    }
}

/// A server's sign-in, in the vault or in a file.
#[derive(Clone)]
pub enum TokenStore {
    /// A 0600 file.
    File(FileStore),
    /// A vault secret.
    Vault {
        /// The vault.
        keyring: std::sync::Arc<crate::vault::Keyring>,
        /// The secret's name.
        secret: String,
    },
}

impl TokenStore {
    /// What the store holds (opening the vault if need be; blocking).
    pub fn read(&self) -> Option<StoredCredentials> {
        match self {
            Self::File(file) => file.read(),
            Self::Vault { keyring, secret } => keyring
                .with_vault(|v| Ok(v.get(secret).map(str::to_string)))
                .ok()
                .flatten()
                .and_then(|text| serde_json::from_str(&text).ok()),
        }
    }

    /// What the store holds, without opening a vault that is still locked.
    fn peek(&self) -> Option<StoredCredentials> {
        match self {
            Self::File(file) => file.read(),
            Self::Vault { keyring, secret } => {
                if !keyring.opened_names().contains(secret) {
                    return None;
                }
                self.read()
            }
        }
    }

    fn write(&self, credentials: Option<&StoredCredentials>) -> Result<(), AuthError> {
        match self {
            Self::File(file) => match credentials {
                Some(c) => file.write(c),
                None => file.remove(),
            },
            Self::Vault { keyring, secret } => keyring
                .with_vault(|v| {
                    match credentials {
                        Some(c) => {
                            let text = serde_json::to_string(c).unwrap_or_default();
                            if v.get(secret).is_some() {
                                v.update(secret, &text)?;
                            } else {
                                v.add(secret, &text)?;
                            }
                        }
                        None if v.get(secret).is_some() => v.delete(secret)?,
                        None => return Ok(()),
                    }
                    v.save()
                })
                .map_err(store_error),
        }
    }

    async fn read_async(&self) -> Option<StoredCredentials> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.read())
            .await
            .ok()
            .flatten()
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.read_async().await)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.write(Some(&credentials)))
            .await
            .map_err(store_error)?
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.write(None))
            .await
            .map_err(store_error)?
    }
}

/// Whether a server is signed in, for `--info` and `.info mcp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Tokens are stored: their scopes and, when known, seconds until the access token
    /// expires (negative: expired; it is refreshed on the next request).
    SignedIn {
        /// Granted scopes.
        scopes: Vec<String>,
        /// Seconds left.
        expires_in: Option<i64>,
    },
    /// No tokens.
    SignedOut,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The sign-in state of server `name` (a vault still locked is not opened for this: its
/// sign-ins show as signed out).
pub fn status(tokens: &Tokens, name: &str) -> Status {
    let Some(stored) = tokens.store(name).peek() else {
        return Status::SignedOut;
    };
    let Some(token) = &stored.token_response else {
        return Status::SignedOut;
    };
    let lifetime = serde_json::to_value(token)
        .ok()
        .and_then(|t| t["expires_in"].as_i64());
    let expires_in = match (lifetime, stored.token_received_at) {
        (Some(lifetime), Some(received)) => Some(received as i64 + lifetime - now() as i64),
        _ => None,
    };
    Status::SignedIn {
        scopes: stored.granted_scopes,
        expires_in,
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SignedOut => f.write_str("not signed in"),
            Self::SignedIn { scopes, expires_in } => {
                f.write_str("signed in")?;
                match expires_in {
                    Some(s) if *s <= 0 => f.write_str(", token expired (refreshed on use)")?,
                    Some(s) => write!(f, ", token valid {}m", (s + 59) / 60)?,
                    None => {}
                }
                if !scopes.is_empty() {
                    write!(f, ", scopes: {}", scopes.join(" "))?;
                }
                Ok(())
            }
        }
    }
}

fn auth_failed(server: &str, e: impl std::fmt::Display) -> McpError {
    McpError::Auth {
        server: server.to_string(),
        message: e.to_string(),
    }
}

/// The authorization manager of server `name` at `url`, with its stored tokens when
/// there are some (`Ok(None)` when there are none).
pub async fn signed_in_manager(
    name: &str,
    url: &str,
    tokens: &Tokens,
    settings: &OAuthSettings,
) -> Result<Option<AuthorizationManager>, McpError> {
    let store = tokens.store(name);
    if store
        .read_async()
        .await
        .and_then(|s| s.token_response)
        .is_none()
    {
        return Ok(None);
    }
    let mut manager = new_manager(name, url, store).await?;
    if !manager
        .initialize_from_store()
        .await
        .map_err(|e| auth_failed(name, e))?
    {
        return Ok(None);
    }
    if let (Some(id), Some(secret)) = (&settings.client_id, &settings.client_secret) {
        let config = rmcp::transport::auth::OAuthClientConfig::new(id, "http://127.0.0.1/callback")
            .with_client_secret(secret);
        manager
            .configure_client(config)
            .map_err(|e| auth_failed(name, e))?;
    }
    Ok(Some(manager))
}

async fn new_manager(
    name: &str,
    url: &str,
    store: TokenStore,
) -> Result<AuthorizationManager, McpError> {
    crate::client::http::install_crypto_provider();
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| auth_failed(name, e))?;
    manager.set_credential_store(store);
    let mut step_ups = ScopeUpgradeConfig::default();
    step_ups.max_upgrade_attempts = MAX_STEP_UPS;
    manager.set_scope_upgrade_config(step_ups);
    Ok(manager)
}

/// Starts a sign-in to server `name` at `url`: discovers its authorization server from
/// `challenge` (the `WWW-Authenticate` of its 401 or 403, if one was seen), registers or
/// uses the configured client, and returns the session holding the URL to open.
/// `scope` asks for more than the challenge does (a step-up).
pub async fn begin(
    name: &str,
    url: &str,
    tokens: &Tokens,
    settings: &OAuthSettings,
    challenge: Option<&str>,
    redirect_uri: &str,
) -> Result<AuthorizationSession, McpError> {
    let store = tokens.store(name);
    let granted = store
        .read_async()
        .await
        .map(|s| s.granted_scopes)
        .unwrap_or_default();
    let mut manager = new_manager(name, url, store).await?;
    let resolution = manager
        .resolve_metadata_from_challenge(challenge)
        .await
        .map_err(|e| auth_failed(name, e))?;
    manager.set_metadata(resolution.metadata);
    let mut request = AuthorizationRequest::new(redirect_uri).with_client_name("loki");
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    // A step-up: what was granted, and what the server asked for since.
    let extra = wanted(&tokens.dir, name);
    if !settings.scopes.is_empty() || !extra.is_empty() {
        let mut scopes = settings.scopes.clone();
        if !extra.is_empty() {
            scopes.extend(granted);
            if let Some(asked) = challenge
                .and_then(|c| reqwest::Url::parse(url).ok().map(|u| (c, u)))
                .and_then(|(c, u)| rmcp::transport::auth::WWWAuthenticateParams::parse(c, &u).scope)
            {
                scopes.extend(asked.split_whitespace().map(str::to_string));
            }
            scopes.extend(extra);
        }
        let mut seen = std::collections::HashSet::new();
        scopes.retain(|s| seen.insert(s.clone()));
        request = request.with_scopes(scopes);
    } else {
        request = request.with_initial_scope_selection();
    }
    if let Some(id) = &settings.client_id {
        request = request.with_preregistered_client(id);
        if let Some(secret) = &settings.client_secret {
            request = request.with_client_secret(secret);
        }
    }
    if let Some(cimd) = &settings.client_metadata_url {
        request = request.with_client_metadata_url(cimd);
    }
    AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| auth_failed(name, e))
}

/// After a sign-in: the scopes asked for are granted now.
pub fn forget_wanted(cache_dir: &Path, name: &str) {
    let _ = std::fs::remove_file(wanted_path(cache_dir, name));
}

/// Forgets server `name`'s tokens (opening the vault if they are there); whether there
/// were any.
pub fn sign_out(tokens: &Tokens, name: &str) -> Result<bool, McpError> {
    forget_wanted(&tokens.dir, name);
    let store = tokens.store(name);
    let had = store.read().is_some();
    store.write(None).map_err(|e| auth_failed(name, e))?;
    Ok(had)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tokens_are_kept_private_and_their_status_is_shown() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = Tokens::new(dir.path().to_path_buf(), None);
        assert_eq!(status(&tokens, "s"), Status::SignedOut);
        let store = FileStore::new(token_path(dir.path(), "s/../x"));
        assert!(store.path.ends_with("oauth/mcp_s____x.json"));
        let token: rmcp::transport::auth::OAuthTokenResponse = serde_json::from_value(
            serde_json::json!({"access_token": "at", "token_type": "bearer", "expires_in": 600}),
        )
        .unwrap();
        let stored =
            StoredCredentials::new("c".into(), Some(token), vec!["read".into()], Some(now()));
        store.write(&stored).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&store.path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let shown = status(&tokens, "s/../x").to_string();
        assert_eq!(shown, "signed in, token valid 10m, scopes: read");
        assert!(sign_out(&tokens, "s/../x").unwrap());
        assert_eq!(status(&tokens, "s/../x"), Status::SignedOut);
        assert_eq!(secret_name("my-docs.v2"), "MCP_OAUTH_MY_DOCS_V2");
    }
}
