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
    /// Builds the shared state from a loaded config.
    pub fn new(config: AppConfig, paths: Paths, env: Env, config_origin: String) -> Self {
        let models_override = std::fs::read_to_string(&paths.models_override_file).ok();
        let providers = ProviderRegistry::new(&config, &env, models_override);
        let sessions = Arc::new(FileSessionStore::new(paths.sessions_dir.clone()));
        Self {
            sessions,
            config,
            paths,
            env,
            providers,
            config_origin,
        }
    }
}
