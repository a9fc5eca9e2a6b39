//! Models: a client name plus metadata, and the bundled catalogue they are looked up in.
//!
//! The catalogue (`assets/models.yaml`) is embedded in the binary and parsed only when a
//! lookup needs it, so commands that never touch model metadata do not pay for it.

use serde::Deserialize;

use crate::config::clients::{ModelConfig, ModelKind};

/// A model of a configured client.
#[derive(Debug, Clone)]
pub struct Model {
    /// The client's name.
    pub client: String,
    /// Metadata (name, limits, capabilities, prices).
    pub config: ModelConfig,
}

impl Model {
    /// `client:name`.
    pub fn id(&self) -> String {
        format!("{}:{}", self.client, self.config.name)
    }

    /// The name sent upstream.
    pub fn real_name(&self) -> &str {
        self.config
            .real_name
            .as_deref()
            .unwrap_or(&self.config.name)
    }

    /// What the model is for.
    pub fn kind(&self) -> ModelKind {
        self.config.kind
    }

    /// A one-line summary for listings: context / output limits, prices, capabilities.
    pub fn describe(&self) -> String {
        let c = &self.config;
        let num = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_else(|| "-".into());
        let price = |v: Option<f64>| v.map(|p| format!("{p}")).unwrap_or_else(|| "-".into());
        let mut caps = String::new();
        if c.supports_vision {
            caps.push_str(" vision");
        }
        if c.supports_function_calling {
            caps.push_str(" tools");
        }
        format!(
            "{} / {} | {} / {}{caps}",
            num(c.max_input_tokens),
            num(c.max_output_tokens),
            price(c.input_price),
            price(c.output_price)
        )
    }
}

#[cfg(test)]
impl Model {
    /// Model `name` of `client`, with default metadata: what most provider tests need.
    pub(crate) fn named(client: &str, name: &str) -> Self {
        Self {
            client: client.into(),
            config: ModelConfig {
                name: name.into(),
                ..ModelConfig::default()
            },
        }
    }
}

/// One provider's block in `models.yaml`.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
pub struct CatalogProvider {
    /// Vendor or client type name (`openai`, `deepseek`, …).
    pub provider: String,
    /// Its models.
    #[serde(default)]
    pub models: Vec<ModelConfig>,
}

/// The bundled model catalogue.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    providers: Vec<CatalogProvider>,
}

/// Why the model catalogue cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// The catalogue built into loki does not parse.
    #[error("bundled models.yaml: {0}")]
    Bundled(String),
    /// `models-override.yaml` does not parse.
    #[error("models-override.yaml: {0}")]
    Override(String),
}

/// The catalogue text shipped in the binary.
const BUNDLED: &str = include_str!("../../assets/models.yaml");

impl Catalog {
    /// Parses the bundled catalogue, then layers `override_text` (the `list` of a
    /// `models-override.yaml`) on top: a provider listed there replaces the bundled one.
    pub fn load(override_text: Option<&str>) -> Result<Self, CatalogError> {
        let mut providers: Vec<CatalogProvider> =
            serde_yaml::from_str(BUNDLED).map_err(|e| CatalogError::Bundled(e.to_string()))?;
        if let Some(text) = override_text {
            #[derive(Deserialize)]
            struct Override {
                version: Option<String>,
                list: Vec<CatalogProvider>,
            }
            let extra: Override =
                serde_yaml::from_str(text).map_err(|e| CatalogError::Override(e.to_string()))?;
            // A file synced by another version is stale: that version's catalogue (or
            // this one's) is at least as new.
            let current = extra
                .version
                .as_deref()
                .is_none_or(|v| v == env!("CARGO_PKG_VERSION"));
            for p in extra.list.into_iter().filter(|_| current) {
                providers.retain(|q| q.provider != p.provider);
                providers.push(p);
            }
        }
        Ok(Self { providers })
    }

    /// Models the catalogue lists for a provider.
    pub fn models_for(&self, provider: &str) -> &[ModelConfig] {
        self.providers
            .iter()
            .find(|p| p.provider == provider)
            .map(|p| p.models.as_slice())
            .unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_catalogue_parses_and_has_openai() {
        let c = Catalog::load(None).unwrap();
        let openai = c.models_for("openai");
        assert!(openai.iter().any(|m| m.kind == ModelKind::Chat));
        assert!(openai.iter().any(|m| m.kind == ModelKind::Embedding));
        assert!(c.models_for("nope").is_empty());
    }

    #[test]
    fn override_replaces_a_provider() {
        let c = Catalog::load(Some(
            "list:\n  - provider: openai\n    models:\n      - name: only-one\n",
        ))
        .unwrap();
        assert_eq!(c.models_for("openai").len(), 1);
    }

    #[test]
    fn override_from_another_version_is_ignored() {
        let c = Catalog::load(Some(
            "version: 0.0.0-old\nlist:\n  - provider: openai\n    models:\n      - name: only-one\n",
        ))
        .unwrap();
        assert!(c.models_for("openai").len() > 1);
    }

    #[test]
    fn describe_line() {
        let m = Model {
            client: "c".into(),
            config: ModelConfig {
                name: "m".into(),
                max_input_tokens: Some(1000),
                input_price: Some(0.5),
                supports_vision: true,
                ..ModelConfig::default()
            },
        };
        assert_eq!(m.id(), "c:m");
        assert_eq!(m.describe(), "1000 / - | 0.5 / - vision");
    }
}
