//! `AppState`: the services shared by every conversation, built once at startup and never
//! mutated per request.
//!
//! Front ends wrap it in an `Arc` and hand it to the [`crate::conversation::engine::Engine`]. What
//! changes per conversation lives in [`crate::conversation::context::RequestContext`].

use std::sync::Arc;

use crate::client::ProviderRegistry;
use crate::config::{AppConfig, Env, Paths};
use crate::session::store::{FileSessionStore, SessionStore};

/// Shared, read-only services.
pub struct AppState {
    /// The frozen configuration.
    pub config: AppConfig,
    /// Where files live.
    pub paths: Paths,
    /// The environment snapshot taken at startup.
    pub env: Env,
    /// Configured providers and model lookup.
    pub providers: ProviderRegistry,
    /// Where the configuration came from (a file path, or a zero-config description).
    pub config_origin: String,
    /// Saved sessions.
    pub sessions: Arc<dyn SessionStore>,
    /// MCP servers from `functions/mcp.json`, shared by every conversation.
    pub mcp: Arc<crate::mcp::McpFactory>,
    /// Knowledge bases loaded so far, shared by every conversation.
    pub rags: Arc<crate::rag::RagCache>,
    /// Language servers of `lsp_servers`, started on first use.
    pub lsp: Arc<crate::lsp::LspPool>,
    /// The workspace files and memory index (`workspace_dir`).
    pub memory: Arc<crate::memory::Memory>,
    /// The process's terminal as captured at start-up (none for a service).
    pub terminal: crate::config::TerminalCaps,
    /// The vault: `{{NAME}}` secrets for MCP servers and tools, `.vault`.
    pub vault: Arc<crate::vault::Keyring>,
    /// Session stores of agents (`agents/<name>/sessions`), one per directory.
    agent_sessions:
        Arc<std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, Arc<dyn SessionStore>>>>,
    /// Script tools of `functions/tools/`, parsed the first time tools are needed.
    scripts: std::sync::OnceLock<ScriptTools>,
}

/// The parsed script tools and the files that could not be declared.
#[derive(Debug, Default)]
pub struct ScriptTools {
    /// Declared tools.
    pub tools: Vec<Arc<crate::tool::script::ScriptTool>>,
    /// Files with errors.
    pub errors: Vec<crate::tool::script::ScriptError>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("config_origin", &self.config_origin)
            .field("providers", &self.providers)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// Builds the shared state from a loaded config. What the terminal says about itself
    /// (a light background, theme files) is the front end's to apply first
    /// ([`crate::render::themes::adopt_terminal`]).
    /// `vault` is the one config.yaml was read with ([`crate::vault::load_config`]).
    pub fn new(
        config: AppConfig,
        paths: Paths,
        env: Env,
        config_origin: String,
        vault: Arc<crate::vault::Keyring>,
    ) -> Self {
        let models_override = std::fs::read_to_string(&paths.models_override_file).ok();
        let providers = ProviderRegistry::new(&config, &env, models_override);
        let sessions = Arc::new(FileSessionStore::new(paths.sessions_dir.clone()));
        let mcp = Arc::new(mcp_factory(&config, &paths, &env, &vault));
        let lsp = Arc::new(lsp_pool(&config));
        let memory = Arc::new(crate::memory::Memory::new(workspace_dir(&config, &paths)));
        Self {
            sessions,
            mcp,
            lsp,
            memory,
            vault,
            terminal: crate::config::TerminalCaps::none(),
            agent_sessions: Arc::default(),
            scripts: std::sync::OnceLock::new(),
            rags: Arc::default(),
            config,
            paths,
            env,
            providers,
            config_origin,
        }
    }

    /// The state with a new configuration (`.edit config`): providers follow it; the
    /// session store, the vault, loaded knowledge bases and — unless the MCP settings
    /// changed — the running MCP servers are kept.
    pub fn reconfigured(&self, config: AppConfig, config_origin: String) -> Self {
        let models_override = std::fs::read_to_string(&self.paths.models_override_file).ok();
        let providers = ProviderRegistry::new(&config, &self.env, models_override);
        let same_mcp = config.mcp_pool == self.config.mcp_pool
            && config.mcp_max_message_size == self.config.mcp_max_message_size
            && config.mcp_start_wait == self.config.mcp_start_wait;
        let mcp = if same_mcp {
            Arc::clone(&self.mcp)
        } else {
            Arc::new(mcp_factory(&config, &self.paths, &self.env, &self.vault))
        };
        let lsp = if config.lsp_servers == self.config.lsp_servers
            && config.lsp_diagnostics_timeout == self.config.lsp_diagnostics_timeout
        {
            Arc::clone(&self.lsp)
        } else {
            Arc::new(lsp_pool(&config))
        };
        let memory = if config.workspace_dir == self.config.workspace_dir {
            Arc::clone(&self.memory)
        } else {
            Arc::new(crate::memory::Memory::new(workspace_dir(
                &config,
                &self.paths,
            )))
        };
        Self {
            sessions: Arc::clone(&self.sessions),
            mcp,
            lsp,
            memory,
            vault: Arc::clone(&self.vault),
            terminal: self.terminal,
            agent_sessions: Arc::clone(&self.agent_sessions),
            scripts: std::sync::OnceLock::new(),
            rags: Arc::clone(&self.rags),
            config,
            paths: self.paths.clone(),
            env: self.env.clone(),
            providers,
            config_origin,
        }
    }

    /// The same state for a process on terminal `caps` (front ends take colour, spinners
    /// and prompts from it).
    pub fn with_terminal(mut self, caps: crate::config::TerminalCaps) -> Self {
        self.terminal = caps;
        self
    }

    /// The same state with sessions kept in `store` instead of the YAML directory.
    pub fn with_sessions(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.sessions = store;
        self
    }

    /// Uses the store `session_store` names (a `postgres://` URL), when set: connects and
    /// makes sure its table exists.
    pub async fn connect_sessions(self) -> Result<Self, crate::session::store::SessionError> {
        let Some(url) = self.config.session_store.clone() else {
            return Ok(self);
        };
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(crate::session::store::SessionError::Database(
                "`session_store` is a postgres://… URL (or unset, for YAML files)".into(),
            ));
        }
        let store = crate::session::pg_store::PgSessionStore::connect(&url).await?;
        Ok(self.with_sessions(Arc::new(store)))
    }

    /// The session store of the directory `dir` (an agent's `sessions/`), shared by
    /// every conversation of the process that uses it.
    pub fn sessions_in(&self, dir: &std::path::Path) -> Arc<dyn SessionStore> {
        let mut stores = self
            .agent_sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(stores.entry(dir.to_path_buf()).or_insert_with(|| {
            Arc::new(FileSessionStore::new(dir.to_path_buf())) as Arc<dyn SessionStore>
        }))
    }

    /// The script tools (parsed once per process).
    pub fn script_tools(&self) -> &ScriptTools {
        self.scripts.get_or_init(|| {
            let (tools, errors) = crate::tool::script::load_dir(
                &self.paths.functions_dir.join("tools"),
                self.config.visible_tools.as_deref(),
            );
            ScriptTools {
                tools: tools.into_iter().map(Arc::new).collect(),
                errors,
            }
        })
    }
}

/// The MCP servers of `functions/mcp.json`. Entries with `{{NAME}}`
/// placeholders are resolved (vault first, then the environment) only when one of them
/// is started, so a run that starts none never opens the vault.
fn mcp_factory(
    config: &AppConfig,
    paths: &Paths,
    env: &Env,
    vault: &Arc<crate::vault::Keyring>,
) -> crate::mcp::McpFactory {
    // Bounded, and only a regular file: a link to `/dev/zero` or a FIFO is one warning
    // naming the file, not a hang.
    let mcp_path = paths.functions_dir.join("mcp.json");
    let (mcp_text, mcp_error) =
        match crate::atomic_file::read_regular_text(&mcp_path, crate::atomic_file::MAX_CONFIG_FILE)
        {
            Ok(text) => (Some(text), None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
            Err(e) => (
                None,
                Some(format!("cannot read {}: {e}", mcp_path.display())),
            ),
        };
    // Entries with `{{NAME}}` are resolved when first started, and again after the
    // vault changes (`.vault add` in the REPL): a vault created or filled while loki
    // runs is seen without a restart. Without a vault they come from the environment.
    let (keyring, text, base) = (Arc::clone(vault), mcp_text.clone(), env.clone());
    let secrets: crate::mcp::factory::Secrets =
        Arc::new(move || match keyring.env_for_mcp(text.as_deref(), &base) {
            (with_vault, None) => Ok(with_vault),
            (_, Some(error)) => Err(error),
        });
    let factory =
        crate::mcp::McpFactory::deferred(mcp_text.as_deref(), env, config.mcp_pool, secrets);
    factory
        .with_load_error(mcp_error)
        .with_max_message_size(config.mcp_max_message_size)
        .with_start_wait(std::time::Duration::from_secs(config.mcp_start_wait))
        .with_tokens(crate::mcp::oauth::Tokens::new(
            paths.cache_dir.clone(),
            Some(Arc::clone(vault)),
        ))
}

/// The language servers of `lsp_servers`, edits waiting `lsp_diagnostics_timeout`.
fn lsp_pool(config: &AppConfig) -> crate::lsp::LspPool {
    crate::lsp::LspPool::new(config.lsp_servers.clone())
        .with_edit_timeout(config.lsp_diagnostics_timeout)
}

/// `workspace_dir`, relative to the config dir; `workspace/` there when unset.
fn workspace_dir(config: &AppConfig, paths: &Paths) -> std::path::PathBuf {
    match config.workspace_dir.as_deref().filter(|d| !d.is_empty()) {
        Some(dir) => match (dir.strip_prefix("~/"), dirs::home_dir()) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => paths.config_dir.join(dir),
        },
        None => paths.config_dir.join("workspace"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::{Access, Keyring, NoPrompt};

    fn state(dir: &std::path::Path) -> AppState {
        let env = Env::from_pairs([("LOKI_CONFIG_DIR", dir.display().to_string())]);
        let paths = Paths::resolve(&env);
        let vault = Arc::new(Keyring::new(Access::new(&paths, None), NoPrompt));
        AppState::new(AppConfig::default(), paths, env, "test".into(), vault)
    }

    #[test]
    fn a_new_configuration_keeps_the_running_services() {
        let dir = tempfile::tempdir().unwrap();
        let old = state(dir.path());
        let mut config = AppConfig {
            temperature: Some(0.5),
            ..AppConfig::default()
        };
        let new = old.reconfigured(config.clone(), "edited".into());
        assert!(Arc::ptr_eq(&old.sessions, &new.sessions));
        assert!(Arc::ptr_eq(&old.vault, &new.vault));
        assert!(Arc::ptr_eq(&old.rags, &new.rags));
        assert!(Arc::ptr_eq(&old.mcp, &new.mcp));
        assert_eq!(new.config.temperature, Some(0.5));
        assert_eq!(new.config_origin, "edited");
        // Other MCP settings need other servers.
        config.mcp_start_wait += 1;
        let restarted = old.reconfigured(config, "edited".into());
        assert!(!Arc::ptr_eq(&old.mcp, &restarted.mcp));
        assert!(Arc::ptr_eq(&old.sessions, &restarted.sessions));
    }
}
