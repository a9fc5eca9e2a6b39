//! `--sync-models`: fetch a newer model catalogue and keep it as `models-override.yaml`,
//! tagged with this version so a later upgrade (with its own, newer catalogue) ignores it.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;

use crate::client::model::CatalogProvider;

/// Where the catalogue is fetched from when `sync_models_url` is not set.
pub const DEFAULT_URL: &str =
    "https://raw.githubusercontent.com/Dark-Alex-17/loki/refs/heads/main/models.yaml";

/// Fetches `url`, checks it is a catalogue, and writes `target`. Returns the number of
/// providers in it.
pub async fn sync(url: &str, target: &Path, user_agent: Option<&str>) -> anyhow::Result<usize> {
    crate::client::http::install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(60));
    if let Some(agent) = user_agent {
        builder = builder.user_agent(agent);
    }
    let client = builder.build()?;
    let fail = |e: &reqwest::Error| {
        anyhow::anyhow!(
            "cannot fetch {url}: {} — the bundled catalogue stays in use",
            crate::client::http::error_chain(e)
        )
    };
    let response = client.get(url).send().await.map_err(|e| fail(&e))?;
    let status = response.status();
    if !status.is_success() {
        anyhow::bail!(
            "cannot fetch {url}: HTTP {} — the bundled catalogue stays in use",
            status.as_u16()
        );
    }
    let text = response.text().await.map_err(|e| fail(&e))?;
    let list: Vec<CatalogProvider> = serde_yaml::from_str(&text)
        .with_context(|| format!("{url} is not a model catalogue; nothing was changed"))?;
    if list.is_empty() {
        anyhow::bail!("{url} lists no providers; nothing was changed");
    }
    let document = serde_yaml::to_string(&serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "list": serde_json::to_value(&list)?,
    }))?;
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)?;
    }
    crate::atomic_file::write_atomic(target, document.as_bytes(), false)
        .with_context(|| format!("cannot write {}", target.display()))?;
    Ok(list.len())
}
