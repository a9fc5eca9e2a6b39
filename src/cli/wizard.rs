//! The first-run wizard: shown when there is no config file, no API key in the
//! environment and no local model server, and both stdin and stdout are terminals.
//!
//! Asks for a provider, its key (or base URL) and a default model, then writes
//! `config.yaml` atomically with mode 0600 (it may hold an API key).

use serde_yaml::{Mapping, Value};

use crate::atomic_file::write_atomic;
use crate::client::vendors::{VENDORS, Vendor};
use crate::config::{self, AppConfig, ConfigError, Env, Paths};

const OTHER: &str = "other OpenAI-compatible server";

/// Runs the wizard and returns the configuration it wrote.
pub(super) async fn run(paths: &Paths, env: &Env) -> Result<(AppConfig, String), ConfigError> {
    let answers = ask().map_err(|message| ConfigError::Invalid {
        path: paths.config_file.clone(),
        key: "(setup)".into(),
        message,
    })?;
    let text = render_config(&answers);
    write_atomic(&paths.config_file, text.as_bytes(), true).map_err(|source| {
        ConfigError::Write {
            path: paths.config_file.clone(),
            source,
        }
    })?;
    eprintln_saved(&paths.config_file);
    let loaded = config::load::parse(&text, &paths.config_file, env)?;
    Ok((loaded.config, paths.config_file.display().to_string()))
}

#[allow(clippy::print_stderr)]
fn eprintln_saved(path: &std::path::Path) {
    eprintln!("✓ Saved {}", path.display());
}

/// What the user chose.
#[derive(Debug, Clone, PartialEq)]
struct Answers {
    client_type: &'static str,
    name: String,
    api_base: Option<String>,
    api_key: Option<String>,
    model: String,
}

fn ask() -> Result<Answers, String> {
    let cancelled = |e: inquire::InquireError| match e {
        inquire::InquireError::OperationCanceled | inquire::InquireError::OperationInterrupted => {
            "setup cancelled; nothing was written".to_string()
        }
        other => other.to_string(),
    };
    let mut choices: Vec<&str> = VENDORS.iter().map(|v| v.name).collect();
    choices.push(OTHER);
    let picked = inquire::Select::new("No config file yet. Which provider do you use?", choices)
        .with_page_size(12)
        .prompt()
        .map_err(cancelled)?;
    let vendor: Option<&Vendor> = VENDORS.iter().find(|v| v.name == picked);

    let (name, api_base) = match vendor {
        Some(v) if !v.local => (v.name.to_string(), None),
        Some(v) => {
            let base = inquire::Text::new("API base URL:")
                .with_default(v.api_base)
                .prompt()
                .map_err(cancelled)?;
            (v.name.to_string(), Some(base))
        }
        None => {
            let name = inquire::Text::new("Client name (used as the model prefix):")
                .with_default("local")
                .prompt()
                .map_err(cancelled)?;
            let base = inquire::Text::new("API base URL (up to /v1):")
                .with_default("http://127.0.0.1:8080/v1")
                .prompt()
                .map_err(cancelled)?;
            (name, Some(base))
        }
    };
    let api_key = match vendor {
        Some(v) if v.local => None,
        _ => {
            let key = inquire::Password::new("API key (leave empty for none):")
                .without_confirmation()
                .with_display_mode(inquire::PasswordDisplayMode::Masked)
                .prompt()
                .map_err(cancelled)?;
            Some(key).filter(|k| !k.trim().is_empty())
        }
    };
    let default_model = vendor.map(|v| v.default_model).unwrap_or("");
    let model = inquire::Text::new("Default model:")
        .with_default(default_model)
        .with_validator(|text: &str| {
            Ok(if text.trim().is_empty() {
                inquire::validator::Validation::Invalid(
                    "a model name is needed, e.g. llama3.2".into(),
                )
            } else {
                inquire::validator::Validation::Valid
            })
        })
        .prompt()
        .map_err(cancelled)?;
    Ok(Answers {
        client_type: if vendor.is_some_and(|v| v.name == "openai") {
            "openai"
        } else {
            "openai-compatible"
        },
        name,
        api_base,
        api_key,
        model,
    })
}

fn render_config(a: &Answers) -> String {
    let mut client = Mapping::new();
    client.insert("type".into(), a.client_type.into());
    client.insert("name".into(), a.name.clone().into());
    if let Some(base) = &a.api_base {
        client.insert("api_base".into(), base.clone().into());
    }
    if let Some(key) = &a.api_key {
        client.insert("api_key".into(), key.clone().into());
    }
    let mut root = Mapping::new();
    root.insert(
        "model".into(),
        format!("{}:{}", a.name, a.model.trim()).into(),
    );
    root.insert(
        "clients".into(),
        Value::Sequence(vec![Value::Mapping(client)]),
    );
    let body = serde_yaml::to_string(&Value::Mapping(root)).unwrap_or_default();
    format!(
        "# Written by loki's first-run setup. Every key is described in config.example.yaml.\n{body}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendered_config_parses_back() {
        let a = Answers {
            client_type: "openai-compatible",
            name: "groq".into(),
            api_base: None,
            api_key: Some("k: with colon".into()),
            model: "llama".into(),
        };
        let text = render_config(&a);
        let loaded =
            config::load::parse(&text, std::path::Path::new("c"), &Env::default()).unwrap();
        assert_eq!(loaded.config.model.as_deref(), Some("groq:llama"));
        assert_eq!(loaded.config.clients[0].name(), "groq");
        assert!(loaded.warnings.is_empty());
    }
}
