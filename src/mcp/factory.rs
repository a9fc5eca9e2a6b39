//! The servers a process runs, shared by every conversation that enables them: keyed by
//! name and transport (command, args, env / url, headers), so conversations asking for the
//! same server share one process through an `Arc`.
//!
//! A conversation *leases* the servers it needs ([`McpFactory::acquire`] returns an
//! [`McpLease`]): missing ones are started (in parallel, never failing the caller: a server
//! that cannot start becomes a one-line warning for the conversation that asked), and a
//! server is stopped — or parked in the idle pool when `mcp_pool.idle_timeout_seconds` is
//! set — only when the last lease holding it is dropped. Two conversations with different
//! `enabled_mcp_servers` never stop each other's servers.
//! Starts run as tasks of their own: a turn waits for them at most `mcp_start_wait` and goes
//! on without a server still starting (which joins a later turn once it is ready).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use super::config::{McpConfig, ServerSpec, SpecError};
use super::error::McpError;
use super::server::{McpServer, START_TIMEOUT};

/// The default `mcp_max_message_size`: 32 MiB.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = crate::config::DEFAULT_MCP_MAX_MESSAGE_SIZE;
/// The default `mcp_start_wait`, in seconds.
pub const DEFAULT_START_WAIT_SECS: u64 = crate::config::DEFAULT_MCP_START_WAIT_SECS;
/// How often a waiting turn looks whether its servers are ready.
const READY_POLL: std::time::Duration = std::time::Duration::from_millis(25);

/// Why a configured server cannot be started; each is one line.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ServerSpecError {
    /// `functions/mcp.json` names no such server.
    #[error("no MCP server `{name}` in functions/mcp.json (known: {known})")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The configured names, comma-separated.
        known: String,
    },
    /// Its entry cannot be used.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The vault its placeholders need could not be opened.
    #[error("mcp.json: {0}")]
    Vault(Arc<crate::vault::VaultError>),
    /// Reading the secrets stopped (the blocking task panicked or was cancelled).
    #[error("{0}")]
    SecretsTask(Arc<tokio::task::JoinError>),
    /// The factory has no secret source for its deferred entries.
    #[error("no secrets")]
    NoSecrets,
}

/// What became of a server.
#[derive(Debug, Clone)]
enum Slot {
    Running(Arc<McpServer>),
    /// No conversation uses it; kept for reuse until the pool's idle timeout.
    Idle(Arc<McpServer>, std::time::Instant),
    Failed {
        spec: ServerSpec,
        reason: McpError,
    },
    /// Being started by a task of its own since the instant.
    Starting(ServerSpec, std::time::Instant),
}

/// Servers, who holds them, and start failures not reported yet.
#[derive(Debug, Default)]
struct Pool {
    slots: HashMap<String, Slot>,
    /// Leases held per server name.
    holders: HashMap<String, usize>,
    /// Start failures per server, for the next conversation that acquires it.
    pending: HashMap<String, Vec<String>>,
    /// How long unused servers are kept (zero: stopped at once).
    idle_timeout: std::time::Duration,
    /// Most unused servers kept.
    max_idle: usize,
}

impl Pool {
    fn held(&self, name: &str) -> bool {
        self.holders.get(name).is_some_and(|n| *n > 0)
    }

    /// Servers nobody holds are stopped, or parked in the idle pool when it is enabled;
    /// parked ones past the timeout (or beyond the pool's size, oldest first) are stopped.
    fn park_unused(&mut self) {
        let now = std::time::Instant::now();
        let pooling = !self.idle_timeout.is_zero();
        let holders = std::mem::take(&mut self.holders);
        let idle_timeout = self.idle_timeout;
        self.slots.retain(|name, slot| {
            if holders.get(name).is_some_and(|n| *n > 0) {
                return true;
            }
            match slot {
                Slot::Running(server) if pooling && server.is_alive() => {
                    *slot = Slot::Idle(Arc::clone(server), now);
                    true
                }
                Slot::Idle(server, since) => {
                    server.is_alive() && now.duration_since(*since) < idle_timeout
                }
                // A start nobody waits for any more is dropped when it ends.
                Slot::Starting(..) => false,
                _ => false,
            }
        });
        self.holders = holders;
        let mut idle: Vec<(String, std::time::Instant)> = self
            .slots
            .iter()
            .filter_map(|(n, s)| match s {
                Slot::Idle(_, since) => Some((n.clone(), *since)),
                _ => None,
            })
            .collect();
        if idle.len() > self.max_idle {
            idle.sort_by_key(|(_, since)| *since);
            for (name, _) in idle.iter().take(idle.len() - self.max_idle) {
                self.slots.remove(name);
            }
        }
    }

    /// Whether the slot of `name` already serves `spec`. A pooled server that is still
    /// the same and alive goes back to work. A failure is not retried within the same
    /// configuration (a config change gives a new spec and a new attempt), nor is a
    /// start under way.
    fn serves(&mut self, name: &str, spec: &ServerSpec) -> bool {
        let same = |server: &Arc<McpServer>| server.is_alive() && server.spec == *spec;
        match self.slots.get(name) {
            Some(Slot::Idle(server, _)) if same(server) => {
                let server = Arc::clone(server);
                self.slots.insert(name.to_string(), Slot::Running(server));
            }
            Some(Slot::Running(server)) if same(server) => {}
            Some(Slot::Failed { spec: failed, .. }) => return failed == spec,
            Some(Slot::Starting(starting, _)) => return starting == spec,
            Some(Slot::Running(_) | Slot::Idle(..)) | None => return false,
        }
        COUNTS
            .reused
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        true
    }

    /// Puts what a background start gave in its slot, if that start is still wanted (not
    /// released or replaced meanwhile); otherwise the new server is dropped, which stops
    /// it.
    fn finish_start(&mut self, spec: ServerSpec, result: Result<McpServer, McpError>) {
        let name = spec.name.clone();
        if !matches!(self.slots.get(&name), Some(Slot::Starting(s, _)) if *s == spec) {
            return;
        }
        match result {
            Ok(server) => {
                let notes = server.take_notes();
                if !notes.is_empty() {
                    self.pending.entry(name.clone()).or_default().extend(notes);
                }
                self.slots
                    .insert(name.clone(), Slot::Running(Arc::new(server)));
                if !self.held(&name) {
                    self.park_unused();
                }
            }
            Err(reason) => {
                tracing::warn!(server = %name, "MCP server failed: {reason}");
                self.pending.entry(name.clone()).or_default().push(format!(
                    "MCP server `{name}` failed to start: {reason} (its tools are left out)"
                ));
                self.slots.insert(name, Slot::Failed { spec, reason });
            }
        }
    }

    fn release(&mut self, names: &[String]) {
        tracing::debug!(?names, "MCP lease released");
        for name in names {
            if let Some(n) = self.holders.get_mut(name) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.holders.remove(name);
                }
            }
        }
        self.park_unused();
    }
}

/// How often servers were started, and how often a conversation got one already running
/// or kept for reuse (`/metrics`).
#[derive(Debug, Default)]
pub struct Counts {
    pub started: std::sync::atomic::AtomicU64,
    pub reused: std::sync::atomic::AtomicU64,
}

/// The process's counts.
pub static COUNTS: Counts = Counts {
    started: std::sync::atomic::AtomicU64::new(0),
    reused: std::sync::atomic::AtomicU64::new(0),
};

/// A conversation's hold on the MCP servers it uses. Dropping it lets go: a server
/// nobody else holds is stopped (or parked in the idle pool).
#[derive(Debug)]
pub struct McpLease {
    pool: Arc<Mutex<Pool>>,
    names: Vec<String>,
}

impl McpLease {
    /// The servers held.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

impl Drop for McpLease {
    fn drop(&mut self) {
        let parked_for = match self.pool.lock() {
            Ok(mut pool) => {
                pool.release(&self.names);
                let parked = pool.slots.values().any(|s| matches!(s, Slot::Idle(..)));
                (parked && !pool.idle_timeout.is_zero()).then_some(pool.idle_timeout)
            }
            Err(_) => None,
        };
        // A parked server is stopped when its time is up even if nothing else happens
        // (no later release would look at it before).
        if let Some(wait) = parked_for
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let pool = Arc::downgrade(&self.pool);
            runtime.spawn(async move {
                tokio::time::sleep(wait + std::time::Duration::from_millis(50)).await;
                if let Some(pool) = pool.upgrade()
                    && let Ok(mut pool) = pool.lock()
                {
                    pool.park_unused();
                }
            });
        }
    }
}

/// The process's MCP servers.
#[derive(Debug, Default)]
pub struct McpFactory {
    config: McpConfig,
    /// Why `mcp.json` could not be read, if it could not.
    error: Option<String>,
    pool: Arc<Mutex<Pool>>,
    http: std::sync::OnceLock<reqwest::Client>,
    /// One start decision at a time (two conversations must not start one server twice).
    ensuring: tokio::sync::Mutex<()>,
    /// Servers whose `mcp.json` entry was already reported as not usable (the entry
    /// cannot change while loki runs, so once is enough).
    warned_broken: Mutex<std::collections::HashSet<String>>,
    /// Largest message a server may send, in bytes (`mcp_max_message_size`; unset: the
    /// default).
    max_message_size: Option<usize>,
    /// How long a turn waits for servers still starting (`mcp_start_wait`; unset: default).
    start_wait: Option<std::time::Duration>,
    /// Where the placeholders of deferred entries come from (the vault, opened then).
    secrets: SecretSource,
    /// Deferred entries resolved so far.
    resolved: Mutex<BTreeMap<String, Result<ServerSpec, ServerSpecError>>>,
    /// Where MCP sign-ins are kept.
    tokens: Option<super::oauth::Tokens>,
    /// Servers a client brought for its conversations (an editor's `mcpServers` over
    /// ACP, `--mcp-config` of the Claude Agent SDK): they win over `mcp.json` entries
    /// of the same name.
    added: Mutex<BTreeMap<String, ServerSpec>>,
    /// The trusted project's `.mcp.json` servers, used by every conversation.
    project: Mutex<Vec<String>>,
}

/// The environment with the vault's secrets laid over it, or why it cannot be had.
pub type Secrets =
    Arc<dyn Fn() -> Result<crate::config::Env, crate::vault::VaultError> + Send + Sync>;

#[derive(Default)]
struct SecretSource(Option<Secrets>);

impl std::fmt::Debug for SecretSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Secrets" } else { "None" })
    }
}

impl McpFactory {
    /// A factory for the servers in `text` (the contents of `mcp.json`, if any).
    pub fn new(
        text: Option<&str>,
        env: &crate::config::Env,
        pool: crate::config::McpPoolConfig,
    ) -> Self {
        let (config, error) = match text.map(|t| McpConfig::parse(t, env)) {
            None => (McpConfig::default(), None),
            Some(Ok(config)) => (config, None),
            Some(Err(e)) => (McpConfig::default(), Some(e.to_string())),
        };
        Self {
            config,
            error,
            pool: Arc::new(Mutex::new(Pool {
                idle_timeout: std::time::Duration::from_secs(pool.idle_timeout_seconds),
                max_idle: pool.max_idle_servers.unwrap_or(50),
                ..Pool::default()
            })),
            ..Self::default()
        }
    }

    /// A factory whose entries with `{{NAME}}` placeholders are resolved only when such a
    /// server is first started, from `secrets` (which opens the vault): a run that starts
    /// none of them never unlocks it.
    pub fn deferred(
        text: Option<&str>,
        env: &crate::config::Env,
        pool: crate::config::McpPoolConfig,
        secrets: Secrets,
    ) -> Self {
        let mut factory = Self::new(None, env, pool);
        match text.map(|t| McpConfig::parse_deferred(t, env)) {
            None => {}
            Some(Ok(config)) => factory.config = config,
            Some(Err(e)) => factory.error = Some(e.to_string()),
        }
        factory.secrets = SecretSource(Some(secrets));
        factory
    }

    /// The secrets changed (a vault entry added, updated or deleted): entries with
    /// placeholders are resolved again when next used, so a server whose environment
    /// changed is restarted with the new one (a running server is replaced at its next
    /// use, as for any change of its spec).
    pub fn secrets_changed(&self) {
        let names: Vec<String> = match self.resolved.lock() {
            Ok(mut resolved) => std::mem::take(&mut *resolved).into_keys().collect(),
            Err(_) => return,
        };
        if let Ok(mut warned) = self.warned_broken.lock() {
            for name in &names {
                warned.remove(name);
            }
        }
    }

    /// Whether starting any of `names` needs the secrets (a deferred entry not resolved
    /// yet).
    pub fn needs_secrets(&self, names: &[String]) -> bool {
        let resolved = self
            .resolved
            .lock()
            .map(|r| r.keys().cloned().collect::<Vec<_>>());
        let resolved = resolved.unwrap_or_default();
        names
            .iter()
            .any(|n| self.config.deferred.contains_key(n) && !resolved.contains(n))
    }

    /// Resolves the deferred entries among `names` (once each). The secrets are read on
    /// a blocking thread: opening the vault derives a key.
    pub async fn resolve_deferred(&self, names: &[String]) {
        if !self.needs_secrets(names) {
            return;
        }
        let env = match &self.secrets.0 {
            Some(secrets) => {
                let secrets = Arc::clone(secrets);
                match tokio::task::spawn_blocking(move || secrets()).await {
                    Ok(result) => result.map_err(|e| ServerSpecError::Vault(Arc::new(e))),
                    Err(e) => Err(ServerSpecError::SecretsTask(Arc::new(e))),
                }
            }
            None => Err(ServerSpecError::NoSecrets),
        };
        let Ok(mut resolved) = self.resolved.lock() else {
            return;
        };
        for name in names {
            if resolved.contains_key(name) {
                continue;
            }
            let outcome = match &env {
                Ok(env) => self
                    .config
                    .resolve(name, env)
                    .map(|r| r.map_err(ServerSpecError::from)),
                Err(e) => self
                    .config
                    .deferred
                    .contains_key(name)
                    .then(|| Err(e.clone())),
            };
            if let Some(outcome) = outcome {
                resolved.insert(name.clone(), outcome);
            }
        }
    }

    /// The spec of server `name` (its placeholders resolved first): `Err` with the reason
    /// it cannot be used, or that there is no such server.
    pub async fn spec(&self, name: &str) -> Result<ServerSpec, ServerSpecError> {
        self.resolve_deferred(&[name.to_string()]).await;
        self.spec_of(name).unwrap_or_else(|| {
            Err(ServerSpecError::Unknown {
                name: name.to_string(),
                known: self.configured().join(", "),
            })
        })
    }

    /// The spec of server `name`: `Err` with the reason it cannot be used; `None` when it
    /// is not configured or not resolved yet.
    fn spec_of(&self, name: &str) -> Option<Result<ServerSpec, ServerSpecError>> {
        if let Some(spec) = self.added.lock().ok()?.get(name) {
            return Some(Ok(spec.clone()));
        }
        if let Some(spec) = self.config.servers.get(name) {
            return Some(Ok(spec.clone()));
        }
        if let Some(outcome) = self.resolved.lock().ok()?.get(name) {
            return Some(outcome.clone());
        }
        self.config
            .broken
            .iter()
            .find(|b| b.name == name)
            .map(|b| Err(b.reason.clone().into()))
    }

    /// Sets the largest message a server may send (`mcp_max_message_size`).
    #[must_use]
    pub fn with_max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = Some(bytes);
        self
    }

    /// Records why `mcp.json` could not be used (e.g. the vault its placeholders need
    /// could not be opened); reported like a parse error.
    #[must_use]
    pub fn with_load_error(mut self, error: Option<String>) -> Self {
        if error.is_some() {
            self.error = error;
        }
        self
    }

    /// Sets where MCP sign-ins are kept.
    #[must_use]
    pub fn with_tokens(mut self, tokens: super::oauth::Tokens) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// Where MCP sign-ins are kept.
    pub fn tokens(&self) -> Option<&super::oauth::Tokens> {
        self.tokens.as_ref()
    }

    /// Sets how long a turn waits for servers that are still starting (`mcp_start_wait`).
    #[must_use]
    pub fn with_start_wait(mut self, wait: std::time::Duration) -> Self {
        self.start_wait = Some(wait);
        self
    }

    /// How long a turn waits for servers that are still starting.
    pub fn start_wait(&self) -> std::time::Duration {
        self.start_wait
            .unwrap_or(std::time::Duration::from_secs(DEFAULT_START_WAIT_SECS))
    }

    /// Those of `names` that are still starting.
    pub fn starting(&self, names: &[String]) -> Vec<String> {
        let Ok(pool) = self.pool.lock() else {
            return Vec::new();
        };
        names
            .iter()
            .filter(|n| matches!(pool.slots.get(*n), Some(Slot::Starting(..))))
            .cloned()
            .collect()
    }

    /// Why `mcp.json` could not be read, if it could not.
    pub fn load_error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Names of the configured servers (usable or not), sorted.
    pub fn configured(&self) -> Vec<String> {
        let mut names: Vec<String> = self.config.servers.keys().cloned().collect();
        names.extend(self.config.broken.iter().map(|b| b.name.clone()));
        names.extend(self.config.deferred.keys().cloned());
        if let Ok(added) = self.added.lock() {
            names.extend(added.keys().cloned());
        }
        names.sort();
        names.dedup();
        names
    }

    /// Adds the servers of a trusted project's `.mcp.json` (those that cannot be used
    /// are logged); every conversation uses them.
    pub fn add_project(&self, text: &str, env: &crate::config::Env) {
        let config = match McpConfig::parse(text, env) {
            Ok(config) => config,
            Err(e) => {
                tracing::warn!(".mcp.json: {e}");
                return;
            }
        };
        for broken in config.broken {
            tracing::warn!(
                ".mcp.json: server `{}` is not used: {}",
                broken.name,
                broken.reason
            );
        }
        let names: Vec<String> = config.servers.into_values().map(|s| self.add(s)).collect();
        if let Ok(mut project) = self.project.lock() {
            project.extend(names);
        }
    }

    /// The project's servers (see [`McpFactory::add_project`]).
    pub fn project_servers(&self) -> Vec<String> {
        self.project.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Adds a server a client brought (see `added`); its name, now usable in
    /// `enabled_mcp_servers` and leases like any other.
    pub fn add(&self, spec: ServerSpec) -> String {
        let name = spec.name.clone();
        if let Ok(mut added) = self.added.lock() {
            added.insert(name.clone(), spec);
        }
        name
    }

    /// Expands an `enabled_mcp_servers` value: `all`, names, and `mapping_mcp_servers`
    /// aliases. Unknown names are returned separately.
    pub fn expand(
        &self,
        enabled: &str,
        mapping: &BTreeMap<String, String>,
    ) -> (Vec<String>, Vec<String>) {
        let mut names = Vec::new();
        let mut unknown = Vec::new();
        let add = |name: &str, names: &mut Vec<String>| {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        };
        for item in enabled.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if item == "all" {
                for name in self.configured() {
                    add(&name, &mut names);
                }
                continue;
            }
            let targets: Vec<&str> = match mapping.get(item) {
                Some(list) => list.split(',').map(str::trim).collect(),
                None => vec![item],
            };
            for target in targets.into_iter().filter(|t| !t.is_empty()) {
                if self.configured().iter().any(|n| n == target) {
                    add(target, &mut names);
                } else if !unknown.iter().any(|u| u == target) {
                    unknown.push(target.to_string());
                }
            }
        }
        (names, unknown)
    }

    fn http(&self) -> reqwest::Client {
        self.http
            .get_or_init(|| {
                crate::client::http::install_crypto_provider();
                reqwest::Client::builder()
                    .connect_timeout(std::time::Duration::from_secs(10))
                    .redirect(crate::client::http::same_origin_redirects())
                    .build()
                    .unwrap_or_default()
            })
            .clone()
    }

    /// Leases `names` for a conversation: starts the missing ones (and ones that died)
    /// and waits for them at most `mcp_start_wait`. Returns the lease and one warning per
    /// server of `names` that could not be started (or is still starting).
    pub async fn acquire(&self, names: &[String]) -> (McpLease, Vec<String>) {
        let (lease, mut warnings) = self.lease_and_start(names).await;
        let deadline = tokio::time::Instant::now() + self.start_wait();
        let mut late = self.starting(names);
        while !late.is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(READY_POLL).await;
            late = self.starting(names);
        }
        // Failures of starts that ended while waiting belong to this conversation.
        warnings.extend(self.take_pending(names));
        let secs = self.start_wait().as_secs_f64();
        for name in late {
            warnings.push(format!(
                "MCP server `{name}` is still starting after {secs}s; this answer goes on \
                 without its tools (raise `mcp_start_wait` in config.yaml to wait longer)"
            ));
        }
        (lease, warnings)
    }

    /// Leases `names` and starts what is missing in the background without waiting (the
    /// REPL does this while the user types). Start failures are reported to the next
    /// conversation that acquires the server.
    pub async fn prepare(&self, names: &[String]) -> McpLease {
        let (lease, warnings) = self.lease_and_start(names).await;
        if let Ok(mut pool) = self.pool.lock() {
            for warning in warnings {
                // Warnings name their server; keep them for whoever asks for it next.
                let owner = names
                    .iter()
                    .find(|n| warning.contains(&format!("`{n}`")))
                    .cloned()
                    .unwrap_or_default();
                pool.pending.entry(owner).or_default().push(warning);
            }
        }
        lease
    }

    /// Warnings of background starts of `names` not reported yet.
    fn take_pending(&self, names: &[String]) -> Vec<String> {
        let Ok(mut pool) = self.pool.lock() else {
            return Vec::new();
        };
        names
            .iter()
            .filter_map(|n| pool.pending.remove(n))
            .flatten()
            .collect()
    }

    async fn lease_and_start(&self, names: &[String]) -> (McpLease, Vec<String>) {
        let _one_at_a_time = self.ensuring.lock().await;
        tracing::debug!(?names, "MCP lease taken");
        if let Ok(mut pool) = self.pool.lock() {
            for name in names {
                *pool.holders.entry(name.clone()).or_insert(0) += 1;
            }
        }
        let lease = McpLease {
            pool: Arc::clone(&self.pool),
            names: names.to_vec(),
        };
        let warnings = self.start_missing(names).await;
        (lease, warnings)
    }

    async fn start_missing(&self, names: &[String]) -> Vec<String> {
        let mut warnings = self.take_pending(names);
        self.refresh_changed(names).await;
        if let Some(e) = &self.error
            && !names.is_empty()
        {
            warnings.push(format!("MCP servers are unavailable: {e}"));
            return warnings;
        }
        self.resolve_deferred(names).await;
        let to_start = self.missing(names, &mut warnings);
        if to_start.is_empty() {
            return warnings;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return warnings;
        };
        let http = self.http();
        for spec in to_start {
            self.start_in_background(&runtime, spec, http.clone());
        }
        warnings
    }

    /// The specs among `names` that no slot serves yet (their stale slots cleared); an
    /// entry that cannot be used is warned about once.
    fn missing(&self, names: &[String], warnings: &mut Vec<String>) -> Vec<ServerSpec> {
        let Ok(mut pool) = self.pool.lock() else {
            return Vec::new();
        };
        pool.park_unused();
        let mut to_start = Vec::new();
        for name in names {
            let spec = match self.spec_of(name) {
                Some(Ok(spec)) => spec,
                Some(Err(reason)) => {
                    if !pool.slots.contains_key(name)
                        && self
                            .warned_broken
                            .lock()
                            .is_ok_and(|mut warned| warned.insert(name.clone()))
                    {
                        warnings.push(format!("MCP server `{name}` is not usable: {reason}"));
                    }
                    continue;
                }
                None => continue,
            };
            if !pool.serves(name, &spec) {
                pool.slots.remove(name);
                to_start.push(spec);
            }
        }
        to_start
    }

    /// Starts `spec` on a task of its own; the pool takes the server (or the failure)
    /// when it ends.
    fn start_in_background(
        &self,
        runtime: &tokio::runtime::Handle,
        spec: ServerSpec,
        http: reqwest::Client,
    ) {
        COUNTS
            .started
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut pool) = self.pool.lock() {
            pool.slots.insert(
                spec.name.clone(),
                Slot::Starting(spec.clone(), std::time::Instant::now()),
            );
        }
        let max_message_size = self.max_message_size.unwrap_or(DEFAULT_MAX_MESSAGE_SIZE);
        let pool = Arc::clone(&self.pool);
        let tokens = self.tokens.clone();
        runtime.spawn(async move {
            let result = tokio::time::timeout(
                START_TIMEOUT,
                McpServer::start(spec.clone(), http, max_message_size, tokens.as_ref()),
            )
            .await
            .unwrap_or_else(|_| {
                Err(McpError::Start(format!(
                    "no answer within {}s",
                    START_TIMEOUT.as_secs()
                )))
            });
            if let Ok(mut pool) = pool.lock() {
                pool.finish_start(spec, result);
            }
        });
    }

    /// Re-lists the tools of running servers that announced a change.
    async fn refresh_changed(&self, names: &[String]) {
        for server in self.running(names) {
            let _ = server.tools().await;
        }
    }

    /// The running servers among `names`, in that order.
    pub fn running(&self, names: &[String]) -> Vec<Arc<McpServer>> {
        let Ok(pool) = self.pool.lock() else {
            return Vec::new();
        };
        names
            .iter()
            .filter_map(|n| match pool.slots.get(n) {
                Some(Slot::Running(s)) => Some(Arc::clone(s)),
                _ => None,
            })
            .collect()
    }

    /// `(name, state)` for every configured server, for `.info`.
    pub fn status(&self) -> Vec<(String, String)> {
        let pool = self.pool.lock().ok();
        let idle_timeout = pool.as_ref().map(|p| p.idle_timeout).unwrap_or_default();
        let mut rows = Vec::new();
        for name in self.configured() {
            let state = match pool.as_ref().and_then(|p| p.slots.get(&name)) {
                Some(Slot::Running(s)) if s.is_alive() => {
                    format!("running ({} tools)", s.cached_tools().len())
                }
                Some(Slot::Running(_)) => "exited (restarted on next use)".into(),
                Some(Slot::Idle(_, since)) => format!(
                    "idle, kept for reuse ({}s left)",
                    idle_timeout.saturating_sub(since.elapsed()).as_secs()
                ),
                Some(Slot::Failed { reason, .. }) => format!("failed: {reason}"),
                Some(Slot::Starting(_, since)) => {
                    format!("starting ({}s so far)", since.elapsed().as_secs())
                }
                None => match self.spec_of(&name) {
                    Some(Err(reason)) => format!("not usable: {reason}"),
                    _ => "idle".into(),
                },
            };
            let signed_in = match (self.spec_of(&name), &self.tokens) {
                (Some(Ok(spec)), Some(tokens)) if spec.oauth.is_some() => {
                    match super::oauth::status(tokens, &name) {
                        super::oauth::Status::SignedOut => None,
                        status => Some(status),
                    }
                }
                _ => None,
            };
            let state = match signed_in {
                Some(status) => format!("{state}; {status}"),
                None => state,
            };
            rows.push((name, state));
        }
        rows
    }

    /// Stops every server.
    pub fn shutdown(&self) {
        if let Ok(mut pool) = self.pool.lock() {
            pool.slots.clear();
        }
    }

    /// How many leases hold `name` now (tests, `.info`).
    pub fn holders(&self, name: &str) -> usize {
        self.pool
            .lock()
            .ok()
            .and_then(|p| p.holders.get(name).copied())
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(ToString::to_string).collect()
    }

    /// Leases count their holders per server, a failed start is reported to the
    /// conversation that asked, and letting go of every lease leaves nothing held.
    #[tokio::test]
    async fn leases_count_holders_and_report_failed_starts() {
        let text = r#"{"mcpServers": {
            "a": {"command": "/nonexistent/loki-test-server-a"},
            "b": {"command": "/nonexistent/loki-test-server-b"}
        }}"#;
        let factory = McpFactory::new(
            Some(text),
            &crate::config::Env::default(),
            crate::config::McpPoolConfig::default(),
        )
        .with_start_wait(std::time::Duration::from_secs(2));
        let holders = |factory: &McpFactory| (factory.holders("a"), factory.holders("b"));

        let (first, warnings) = factory.acquire(&names(&["a"])).await;
        assert_eq!(first.names(), ["a"]);
        assert_eq!(holders(&factory), (1, 0));
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("`a` failed to start") && w.contains("cannot run")),
            "{warnings:?}"
        );
        let (second, _) = factory.acquire(&names(&["a", "b"])).await;
        assert_eq!(holders(&factory), (2, 1));
        let third = factory.prepare(&names(&["b"])).await;
        assert_eq!(holders(&factory), (2, 2));
        for (lease, after) in [(first, (1, 2)), (second, (0, 1)), (third, (0, 0))] {
            drop(lease);
            assert_eq!(holders(&factory), after);
        }
        assert_eq!(factory.configured(), ["a", "b"]);
    }
}
