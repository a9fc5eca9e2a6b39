//! Starting without a config file: `LOKI_PLATFORM`, API keys found in the environment, or
//! a local model server answering on its default port.
//!
//! This module only decides; the first-run wizard (which prompts) lives in the CLI front
//! end, and writing the file is done there with [`crate::atomic_file`].

use super::{AppConfig, ConfigError, Env};
use crate::config::clients::{ClientConfig, ClientKind, ClientSettings};
use crate::config::vendors::{self, VENDORS, Vendor, client_env_var};

/// A configuration synthesised from the environment.
#[derive(Debug)]
pub struct Synthesized {
    /// The configuration to run with.
    pub config: AppConfig,
    /// One line describing where it came from (shown by `--info`).
    pub origin: String,
}

/// The environment variables that would let loki start without a config file, for error
/// messages.
pub fn hint_vars() -> String {
    let mut vars: Vec<&str> = VENDORS
        .iter()
        .filter(|v| !v.local)
        .take(5)
        .map(|v| v.key_envs[0])
        .collect();
    vars.push("LOKI_PLATFORM");
    vars.join(", ")
}

/// Builds a config from `LOKI_PLATFORM`/`LOKI_PROVIDER` or from API keys in the
/// environment. Does no I/O. A platform naming no known vendor is an error, unless
/// `<NAME>_API_BASE` points it at an OpenAI-compatible server and a model is given.
pub fn from_env(env: &Env) -> Result<Option<Synthesized>, ConfigError> {
    let platform_var = ["LOKI_PLATFORM", "LOKI_PROVIDER"]
        .into_iter()
        .find_map(|var| env.get(var).map(|value| (var, value)));
    if let Some((var, platform)) = platform_var {
        let (client, model) = match platform.split_once(':') {
            Some((c, m)) => (c, Some(m.to_string())),
            None => (platform, None),
        };
        let vendor = vendors::find(client);
        let own_base = env.get(&client_env_var(client, "API_BASE")).is_some();
        let has_model = model.as_deref().is_some_and(|m| !m.is_empty());
        if vendor.is_none() && !(own_base && has_model) {
            return Err(unknown_platform(var, client));
        }
        let model = model
            .or_else(|| vendor.map(|v| v.default_model.to_string()))
            .filter(|m| !m.is_empty());
        let mut config = AppConfig {
            model: model.map(|m| format!("{client}:{m}")),
            ..AppConfig::default()
        };
        config.clients.push(client_for(client, vendor, None));
        return Ok(Some(Synthesized {
            config,
            origin: format!("{var}={platform}"),
        }));
    }

    let mut config = AppConfig::default();
    let mut found = Vec::new();
    // Embedding-only vendors (no default chat model) cannot start a conversation.
    for vendor in VENDORS
        .iter()
        .filter(|v| !v.local && !v.default_model.is_empty())
    {
        let Some((var, key)) = vendor
            .key_envs
            .iter()
            .find_map(|var| env.get(var).map(|k| (*var, k)))
        else {
            continue;
        };
        if config.model.is_none() {
            config.model = Some(format!("{}:{}", vendor.name, vendor.default_model));
        }
        config
            .clients
            .push(client_for(vendor.name, Some(vendor), Some(key.to_string())));
        found.push(var);
    }
    if found.is_empty() {
        return Ok(None);
    }
    Ok(Some(Synthesized {
        config,
        origin: format!("API keys from the environment ({})", found.join(", ")),
    }))
}

/// `LOKI_PLATFORM=bogus`: say so, and list what would work.
fn unknown_platform(var: &str, client: &str) -> ConfigError {
    let known: Vec<&str> = VENDORS.iter().map(|v| v.name).collect();
    ConfigError::EnvOverride {
        var: var.to_string(),
        message: format!(
            "unknown vendor `{client}`; known vendors: {} (see docs/providers.md); for another OpenAI-compatible server set {} and use `{client}:<model>`",
            known.join(", "),
            client_env_var(client, "API_BASE")
        ),
    }
}

/// The client entry for vendor `name` (a native client where loki has one).
pub(crate) fn client_for(
    name: &str,
    vendor: Option<&Vendor>,
    api_key: Option<String>,
) -> ClientConfig {
    let inner = ClientSettings {
        name: Some(name.to_string()),
        api_key,
        ..ClientSettings::default()
    };
    // Providers with a native client get it; the rest speak the OpenAI format.
    let kind = match vendor.map(|v| v.name) {
        Some("openai") => ClientKind::OpenAi,
        Some("claude") => ClientKind::Claude,
        Some("gemini") => ClientKind::Gemini,
        _ => ClientKind::OpenAiCompatible,
    };
    ClientConfig::new(kind, inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_env_make_clients_first_one_is_default() {
        let env = Env::from_pairs([("GROQ_API_KEY", "g"), ("OPENAI_API_KEY", "o")]);
        let s = from_env(&env).unwrap().unwrap();
        assert_eq!(s.config.model.as_deref(), Some("openai:gpt-4.1-mini"));
        let names: Vec<_> = s.config.clients.iter().map(ClientConfig::name).collect();
        assert_eq!(names, ["openai", "groq"]);
        assert!(s.origin.contains("GROQ_API_KEY"));
    }

    #[test]
    fn platform_variable_wins() {
        let env = Env::from_pairs([
            ("LOKI_PLATFORM", "deepseek:deepseek-reasoner"),
            ("OPENAI_API_KEY", "o"),
        ]);
        let s = from_env(&env).unwrap().unwrap();
        assert_eq!(
            s.config.model.as_deref(),
            Some("deepseek:deepseek-reasoner")
        );
        assert_eq!(s.config.clients.len(), 1);
    }

    #[test]
    fn an_unknown_platform_is_an_error_unless_it_has_a_base_and_a_model() {
        let e = from_env(&Env::from_pairs([("LOKI_PLATFORM", "bogus")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("LOKI_PLATFORM") && e.contains("unknown vendor `bogus`"),
            "{e}"
        );
        assert!(
            e.contains("openai, claude, gemini") && e.contains("BOGUS_API_BASE"),
            "{e}"
        );
        let env = Env::from_pairs([
            ("LOKI_PROVIDER", "box:m1"),
            ("BOX_API_BASE", "http://127.0.0.1:1/v1"),
        ]);
        let s = from_env(&env).unwrap().unwrap();
        assert_eq!(s.config.model.as_deref(), Some("box:m1"));
        assert_eq!(s.origin, "LOKI_PROVIDER=box:m1");
    }

    #[test]
    fn nothing_in_env() {
        assert!(
            from_env(&Env::from_pairs([("HOME", "/h")]))
                .unwrap()
                .is_none()
        );
    }
}
