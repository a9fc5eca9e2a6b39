//! Starting without a config file: `LOKI_PLATFORM`, API keys found in the environment, or
//! a local model server answering on its default port.
//!
//! This module only decides; the first-run wizard (which prompts) lives in the CLI front
//! end, and writing the file is done there with [`crate::atomic_file`].

use std::time::Duration;

use super::{AppConfig, Env};
use crate::client::config::{ClientConfig, ClientKind, ClientSettings};
use crate::client::vendors::{self, VENDORS, Vendor, client_env_var};

/// How long a local server gets to answer `GET /models` before it is considered absent.
const PROBE_TIMEOUT: Duration = Duration::from_millis(400);

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
/// environment. Does no I/O.
pub fn from_env(env: &Env) -> Option<Synthesized> {
    if let Some(platform) = env
        .get("LOKI_PLATFORM")
        .or_else(|| env.get("LOKI_PROVIDER"))
    {
        let (client, model) = match platform.split_once(':') {
            Some((c, m)) => (c, Some(m.to_string())),
            None => (platform, None),
        };
        let vendor = vendors::find(client);
        let model = model
            .or_else(|| vendor.map(|v| v.default_model.to_string()))
            .filter(|m| !m.is_empty());
        let mut config = AppConfig {
            model: model.map(|m| format!("{client}:{m}")),
            ..AppConfig::default()
        };
        config.clients.push(client_for(client, vendor, None));
        return Some(Synthesized {
            config,
            origin: format!("LOKI_PLATFORM={platform}"),
        });
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
        return None;
    }
    Some(Synthesized {
        config,
        origin: format!("API keys from the environment ({})", found.join(", ")),
    })
}

/// Probes Ollama and llama-server on their default ports (or `OLLAMA_API_BASE` /
/// `LLAMACPP_API_BASE`) and uses the first chat model of the first one that answers.
pub async fn probe_local(env: &Env) -> Option<Synthesized> {
    crate::client::http::install_crypto_provider();
    let http = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .connect_timeout(PROBE_TIMEOUT)
        .no_proxy()
        .tls_certs_only([])
        .build()
        .ok()?;
    let candidates: Vec<(&Vendor, String)> = ["ollama", "llamacpp"]
        .into_iter()
        .filter_map(vendors::find)
        .map(|v| {
            let base = env
                .get(&client_env_var(v.name, "API_BASE"))
                .unwrap_or(v.api_base)
                .trim_end_matches('/')
                .to_string();
            (v, base)
        })
        .collect();
    let probes = candidates.iter().map(|(vendor, base)| {
        let http = http.clone();
        async move {
            let models = list_models(&http, base, None).await?;
            let model = models
                .into_iter()
                .find(|m| !m.to_ascii_lowercase().contains("embed"))?;
            Some((*vendor, base.clone(), model))
        }
    });
    let results = futures_util::future::join_all(probes).await;
    let (vendor, base, model) = results.into_iter().flatten().next()?;
    let mut config = AppConfig {
        model: Some(format!("{}:{model}", vendor.name)),
        ..AppConfig::default()
    };
    let mut client = client_for(vendor.name, Some(vendor), None);
    if client.kind == ClientKind::OpenAiCompatible {
        client.settings.api_base = Some(base.clone());
    }
    config.clients.push(client);
    Some(Synthesized {
        config,
        origin: format!("local {} server at {base}", vendor.name),
    })
}

/// The model ids an OpenAI-compatible server reports at `GET <base>/models`.
pub(crate) async fn list_models(
    http: &reqwest::Client,
    base: &str,
    api_key: Option<&str>,
) -> Option<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct List {
        data: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        id: String,
    }
    let mut request = http.get(format!("{}/models", base.trim_end_matches('/')));
    if let Some(key) = api_key {
        request = request.bearer_auth(key);
    }
    let resp = request.send().await.ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let list: List = resp.json().await.ok()?;
    Some(list.data.into_iter().map(|e| e.id).collect())
}

fn client_for(name: &str, vendor: Option<&Vendor>, api_key: Option<String>) -> ClientConfig {
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
        let s = from_env(&env).unwrap();
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
        let s = from_env(&env).unwrap();
        assert_eq!(
            s.config.model.as_deref(),
            Some("deepseek:deepseek-reasoner")
        );
        assert_eq!(s.config.clients.len(), 1);
    }

    #[test]
    fn nothing_in_env() {
        assert!(from_env(&Env::from_pairs([("HOME", "/h")])).is_none());
    }
}
