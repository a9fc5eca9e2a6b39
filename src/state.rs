//! `AppState`: the services shared by every conversation, built once at startup and never
//! mutated per request.
//!
//! Front ends wrap it in an `Arc` and hand it to the [`crate::engine::Engine`]. What
//! changes per conversation lives in [`crate::context::RequestContext`].

use crate::client::ProviderRegistry;
use crate::config::{AppConfig, Env, Paths};

/// Shared, read-only services.
#[derive(Debug)]
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
}

impl AppState {
    /// Builds the shared state from a loaded config.
    pub fn new(config: AppConfig, paths: Paths, env: Env, config_origin: String) -> Self {
        let models_override = std::fs::read_to_string(&paths.models_override_file).ok();
        let providers = ProviderRegistry::new(&config, &env, models_override);
        Self {
            config,
            paths,
            env,
            providers,
            config_origin,
        }
    }
}
