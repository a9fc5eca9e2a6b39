//! Starting without a config file when a local model server answers: Ollama or
//! llama-server on their default ports (or `OLLAMA_API_BASE` / `LLAMACPP_API_BASE`).
//! The configuration it makes is [`crate::config::zero`]'s kind; the asking is here.

use std::time::Duration;

use crate::config::clients::ClientKind;
use crate::config::vendors::{self, Vendor, client_env_var};
use crate::config::zero::{Synthesized, client_for};
use crate::config::{AppConfig, Env};

/// How long a local server gets to answer `GET /models` before it is considered absent.
const PROBE_TIMEOUT: Duration = Duration::from_millis(400);

/// Probes Ollama and llama-server on their default ports (or `OLLAMA_API_BASE` /
/// `LLAMACPP_API_BASE`) and uses the first chat model of the first one that answers.
pub async fn probe_local(env: &Env) -> Option<Synthesized> {
    super::http::install_crypto_provider();
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
            let model = models.iter().find(|m| !is_embedding(m))?.clone();
            Some((*vendor, base.clone(), model, models))
        }
    });
    let results = futures_util::future::join_all(probes).await;
    let (vendor, base, model, models) = results.into_iter().flatten().next()?;
    let mut config = AppConfig {
        model: Some(format!("{}:{model}", vendor.name)),
        ..AppConfig::default()
    };
    let mut client = client_for(vendor.name, Some(vendor), None);
    if client.kind == ClientKind::OpenAiCompatible {
        client.settings.api_base = Some(base.clone());
    }
    // What the server serves is what `--list-models` and `-m` know (a local server's
    // models are in no catalogue).
    client.settings.models = models
        .into_iter()
        .map(|name| crate::config::clients::ModelConfig {
            kind: if is_embedding(&name) {
                crate::config::clients::ModelKind::Embedding
            } else {
                crate::config::clients::ModelKind::Chat
            },
            name,
            ..Default::default()
        })
        .collect();
    config.clients.push(client);
    Some(Synthesized {
        config,
        origin: format!("local {} server at {base}", vendor.name),
    })
}

/// Whether a served model's name says it makes embeddings.
fn is_embedding(name: &str) -> bool {
    name.to_ascii_lowercase().contains("embed")
}

/// The model ids an OpenAI-compatible server reports at `GET <base>/models`.
pub async fn list_models(
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
