//! `AppState`: the services shared by every conversation, built once at startup and never
//! mutated per request.
//!
//! Front ends wrap it in an `Arc` and hand it to the [`crate::engine::Engine`]. What
//! changes per conversation lives in [`crate::context::RequestContext`].

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
    pub mcp: crate::mcp::McpFactory,
    /// Knowledge bases loaded so far, shared by every conversation.
    pub rags: crate::rag::RagCache,
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
    pub fn new(config: AppConfig, paths: Paths, env: Env, config_origin: String) -> Self {
        let models_override = std::fs::read_to_string(&paths.models_override_file).ok();
        let providers = ProviderRegistry::new(&config, &env, models_override);
        let sessions = Arc::new(FileSessionStore::new(paths.sessions_dir.clone()));
        let mcp_text = std::fs::read_to_string(paths.functions_dir.join("mcp.json")).ok();
        let (mcp_env, vault_error) = crate::vault::env_for_mcp(&paths, mcp_text.as_deref(), &env);
        let mcp = crate::mcp::McpFactory::new(mcp_text.as_deref(), &mcp_env, config.mcp_pool)
            .with_load_error(vault_error)
            .with_max_message_size(config.mcp_max_message_size)
            .with_start_wait(std::time::Duration::from_secs(config.mcp_start_wait));
        Self {
            sessions,
            mcp,
            scripts: std::sync::OnceLock::new(),
            rags: crate::rag::RagCache::default(),
            config,
            paths,
            env,
            providers,
            config_origin,
        }
    }

    /// The same state with sessions kept in `store` instead of the YAML directory.
    pub fn with_sessions(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.sessions = store;
        self
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
