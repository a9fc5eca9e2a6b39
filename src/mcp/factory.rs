//! The servers a process runs, shared by every conversation that enables them: keyed by
//! name and transport (command, args, env / url, headers), so scopes asking for the same
//! server share one process through an `Arc`. `ensure` starts what a scope needs (in
//! parallel, never failing the caller: a server that cannot start becomes a one-line
//! warning) and stops what no scope uses any more (idle timeout 0, as in the REPL).
//! Starts run as tasks of their own: a turn waits for them at most `mcp_start_wait` and goes
//! on without a server still starting (which joins a later turn once it is ready).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use super::config::{McpConfig, ServerSpec};
use super::server::{McpServer, START_TIMEOUT};

/// The default `mcp_max_message_size`: 32 MiB.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 32 * 1024 * 1024;
/// The default `mcp_start_wait`, in seconds.
pub const DEFAULT_START_WAIT_SECS: u64 = 3;
/// How often a waiting turn looks whether its servers are ready.
const READY_POLL: std::time::Duration = std::time::Duration::from_millis(25);

/// What became of a server.
#[derive(Debug, Clone)]
enum Slot {
    Running(Arc<McpServer>),
    /// No conversation uses it; kept for reuse until the pool's idle timeout.
    Idle(Arc<McpServer>, std::time::Instant),
    Failed {
        spec: ServerSpec,
        reason: String,
    },
    /// Being started by a task of its own since the instant.
    Starting(ServerSpec, std::time::Instant),
}

/// The process's MCP servers.
#[derive(Debug, Default)]
pub struct McpFactory {
    config: McpConfig,
    /// Why `mcp.json` could not be read, if it could not.
    error: Option<String>,
    slots: Arc<Mutex<HashMap<String, Slot>>>,
    http: std::sync::OnceLock<reqwest::Client>,
    /// One `ensure` at a time (a background start and a turn must not race).
    ensuring: tokio::sync::Mutex<()>,
    /// Warnings from background starts, reported by the next `ensure`.
    pending: Arc<Mutex<Vec<String>>>,
    /// Servers whose `mcp.json` entry was already reported as not usable (the entry
    /// cannot change while loki runs, so once is enough).
    warned_broken: Mutex<std::collections::HashSet<String>>,
    /// Bumped by every request; a background start that is no longer the latest skips.
    generation: std::sync::atomic::AtomicU64,
    /// Progress notifications of running calls, as display lines.
    progress: std::sync::OnceLock<tokio::sync::broadcast::Sender<String>>,
    /// How long unused servers are kept (zero: stopped at once).
    idle_timeout: std::time::Duration,
    /// Most unused servers kept.
    max_idle: usize,
    /// Largest message a server may send, in bytes (`mcp_max_message_size`; unset: the
    /// default).
    max_message_size: Option<usize>,
    /// How long a turn waits for servers still starting (`mcp_start_wait`; unset: default).
    start_wait: Option<std::time::Duration>,
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
            Some(Err(e)) => (McpConfig::default(), Some(e)),
        };
        Self {
            config,
            error,
            idle_timeout: std::time::Duration::from_secs(pool.idle_timeout_seconds),
            max_idle: pool.max_idle_servers.unwrap_or(50),
            ..Self::default()
        }
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
        let Ok(slots) = self.slots.lock() else {
            return Vec::new();
        };
        names
            .iter()
            .filter(|n| matches!(slots.get(*n), Some(Slot::Starting(..))))
            .cloned()
            .collect()
    }

    fn progress_sender(&self) -> tokio::sync::broadcast::Sender<String> {
        self.progress
            .get_or_init(|| tokio::sync::broadcast::channel(64).0)
            .clone()
    }

    /// Progress lines of MCP calls from now on.
    pub fn subscribe_progress(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.progress_sender().subscribe()
    }

    /// Why `mcp.json` could not be read, if it could not.
    pub fn load_error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Names of the configured servers (usable or not), sorted.
    pub fn configured(&self) -> Vec<String> {
        let mut names: Vec<String> = self.config.servers.keys().cloned().collect();
        names.extend(self.config.broken.iter().map(|b| b.name.clone()));
        names.sort();
        names
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
                    .build()
                    .unwrap_or_default()
            })
            .clone()
    }

    /// Makes exactly `names` run: starts the missing ones (and ones that died), stops the
    /// others. Returns one warning per server that could not be started this time.
    pub async fn ensure(&self, names: &[String]) -> Vec<String> {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut warnings = {
            let _one_at_a_time = self.ensuring.lock().await;
            self.ensure_locked(names).await
        };
        let deadline = tokio::time::Instant::now() + self.start_wait();
        let mut late = self.starting(names);
        while !late.is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(READY_POLL).await;
            late = self.starting(names);
        }
        // Failures of starts that ended while waiting belong to this turn.
        warnings.extend(self.take_pending());
        let secs = self.start_wait().as_secs_f64();
        for name in late {
            warnings.push(format!(
                "MCP server `{name}` is still starting after {secs}s; this answer goes on \
                 without its tools (raise `mcp_start_wait` in config.yaml to wait longer)"
            ));
        }
        warnings
    }

    /// Warnings of background starts not reported yet.
    fn take_pending(&self) -> Vec<String> {
        self.pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default()
    }

    async fn ensure_locked(&self, names: &[String]) -> Vec<String> {
        let mut warnings = self.take_pending();
        self.refresh_changed(names).await;
        if let Some(e) = &self.error
            && !names.is_empty()
        {
            warnings.push(format!("MCP servers are unavailable: {e}"));
            return warnings;
        }
        let mut to_start: Vec<ServerSpec> = Vec::new();
        {
            let Ok(mut slots) = self.slots.lock() else {
                return warnings;
            };
            self.park_unused(&mut slots, names);
            for name in names {
                let Some(spec) = self.config.servers.get(name) else {
                    if let Some(b) = self.config.broken.iter().find(|b| &b.name == name)
                        && !slots.contains_key(name)
                        && self
                            .warned_broken
                            .lock()
                            .is_ok_and(|mut warned| warned.insert(name.clone()))
                    {
                        warnings.push(format!("MCP server `{name}` is not usable: {}", b.reason));
                    }
                    continue;
                };
                // A pooled server comes back if it is still the same and alive.
                if let Some(Slot::Idle(server, _)) = slots.get(name)
                    && server.is_alive()
                    && server.spec == *spec
                {
                    let server = Arc::clone(server);
                    slots.insert(name.clone(), Slot::Running(server));
                }
                let current = match slots.get(name) {
                    Some(Slot::Running(s)) => s.is_alive() && s.spec == *spec,
                    Some(Slot::Idle(..)) => false,
                    // A failure is not retried within the same configuration; a config
                    // change gives a new spec and a new attempt.
                    Some(Slot::Failed { spec: failed, .. }) => failed == spec,
                    Some(Slot::Starting(starting, _)) => starting == spec,
                    None => false,
                };
                if !current {
                    slots.remove(name);
                    to_start.push(spec.clone());
                }
            }
        }
        if to_start.is_empty() {
            return warnings;
        }
        let http = self.http();
        let progress = self.progress_sender();
        let max_message_size = self.max_message_size.unwrap_or(DEFAULT_MAX_MESSAGE_SIZE);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return warnings;
        };
        for spec in to_start {
            let name = spec.name.clone();
            if let Ok(mut slots) = self.slots.lock() {
                slots.insert(
                    name.clone(),
                    Slot::Starting(spec.clone(), std::time::Instant::now()),
                );
            }
            let (http, progress) = (http.clone(), progress.clone());
            let (slots, pending) = (Arc::clone(&self.slots), Arc::clone(&self.pending));
            runtime.spawn(async move {
                let result = tokio::time::timeout(
                    START_TIMEOUT,
                    McpServer::start(spec.clone(), http, progress, max_message_size),
                )
                .await
                .unwrap_or_else(|_| Err(format!("no answer within {}s", START_TIMEOUT.as_secs())));
                let Ok(mut slots) = slots.lock() else { return };
                // Only if this start is still wanted (not stopped or replaced meanwhile);
                // otherwise the new server is dropped, which stops it.
                if !matches!(slots.get(&name), Some(Slot::Starting(s, _)) if *s == spec) {
                    return;
                }
                match result {
                    Ok(server) => {
                        slots.insert(name, Slot::Running(Arc::new(server)));
                    }
                    Err(reason) => {
                        tracing::warn!(server = %name, "MCP server failed: {reason}");
                        if let Ok(mut pending) = pending.lock() {
                            pending.push(format!(
                                "MCP server `{name}` failed to start: {reason} (its tools are left out)"
                            ));
                        }
                        slots.insert(name, Slot::Failed { spec, reason });
                    }
                }
            });
        }
        warnings
    }

    /// [`McpFactory::ensure`] whose warnings wait for the next turn (for starting servers in
    /// the background while the user types).
    pub async fn prepare(&self, names: &[String]) {
        use std::sync::atomic::Ordering;
        let mine = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let _one_at_a_time = self.ensuring.lock().await;
        if self.generation.load(Ordering::SeqCst) != mine {
            return; // a later request decides what runs
        }
        let warnings = self.ensure_locked(names).await;
        if let Ok(mut pending) = self.pending.lock() {
            pending.extend(warnings);
        }
    }

    /// Servers not in `names` are stopped, or parked in the idle pool when it is enabled;
    /// parked ones past the timeout (or beyond the pool's size, oldest first) are stopped.
    fn park_unused(&self, slots: &mut HashMap<String, Slot>, names: &[String]) {
        let now = std::time::Instant::now();
        let pooling = !self.idle_timeout.is_zero();
        slots.retain(|name, slot| {
            if names.contains(name) {
                return true;
            }
            match slot {
                Slot::Running(server) if pooling && server.is_alive() => {
                    *slot = Slot::Idle(Arc::clone(server), now);
                    true
                }
                Slot::Idle(server, since) => {
                    server.is_alive() && now.duration_since(*since) < self.idle_timeout
                }
                _ => false,
            }
        });
        let mut idle: Vec<(String, std::time::Instant)> = slots
            .iter()
            .filter_map(|(n, s)| match s {
                Slot::Idle(_, since) => Some((n.clone(), *since)),
                _ => None,
            })
            .collect();
        if idle.len() > self.max_idle {
            idle.sort_by_key(|(_, since)| *since);
            for (name, _) in idle.iter().take(idle.len() - self.max_idle) {
                slots.remove(name);
            }
        }
    }

    /// Re-lists the tools of running servers that announced a change.
    async fn refresh_changed(&self, names: &[String]) {
        for server in self.running(names) {
            let _ = server.tools().await;
        }
    }

    /// The running servers among `names`, in that order.
    pub fn running(&self, names: &[String]) -> Vec<Arc<McpServer>> {
        let Ok(slots) = self.slots.lock() else {
            return Vec::new();
        };
        names
            .iter()
            .filter_map(|n| match slots.get(n) {
                Some(Slot::Running(s)) => Some(Arc::clone(s)),
                _ => None,
            })
            .collect()
    }

    /// `(name, state)` for every configured server, for `.info`.
    pub fn status(&self) -> Vec<(String, String)> {
        let slots = self.slots.lock().ok();
        let mut rows = Vec::new();
        for name in self.configured() {
            let state = match slots.as_ref().and_then(|s| s.get(&name)) {
                Some(Slot::Running(s)) if s.is_alive() => {
                    format!("running ({} tools)", s.cached_tools().len())
                }
                Some(Slot::Running(_)) => "exited (restarted on next use)".into(),
                Some(Slot::Idle(_, since)) => format!(
                    "idle, kept for reuse ({}s left)",
                    self.idle_timeout.saturating_sub(since.elapsed()).as_secs()
                ),
                Some(Slot::Failed { reason, .. }) => format!("failed: {reason}"),
                Some(Slot::Starting(_, since)) => {
                    format!("starting ({}s so far)", since.elapsed().as_secs())
                }
                None => match self.config.broken.iter().find(|b| b.name == name) {
                    Some(b) => format!("not usable: {}", b.reason),
                    None => "idle".into(),
                },
            };
            rows.push((name, state));
        }
        rows
    }

    /// Stops every server.
    pub fn shutdown(&self) {
        if let Ok(mut slots) = self.slots.lock() {
            slots.clear();
        }
    }
}
