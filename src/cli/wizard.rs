//! The first-run wizard: shown when there is no config file, no API key in the
//! environment and no local model server, and both stdin and stdout are terminals.
//!
//! Asks for a provider, its key (or base URL) and a default model, then writes
//! `config.yaml` atomically with mode 0600 (it may hold an API key).

use serde_yaml::{Mapping, Value};

use crate::atomic_file::write_atomic;
use crate::config::vendors::{VENDORS, Vendor};
use crate::config::{self, AppConfig, ConfigError, Env, Paths};

const OTHER: &str = "other OpenAI-compatible server";

/// How long the setup waits for a server's model list.
const MODELS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs the wizard and returns the configuration it wrote; Esc or Ctrl-C at any
/// question is [`ConfigError::SetupCancelled`] (nothing written).
pub(crate) async fn run(
    paths: &Paths,
    env: &Env,
    vault: &crate::vault::Keyring,
    caps: &crate::config::TerminalCaps,
) -> Result<Setup, ConfigError> {
    let invalid = |message| ConfigError::Invalid {
        path: paths.config_file.clone(),
        key: "(setup)".into(),
        message,
    };
    let client = ask_client().map_err(|e| e.into_error(invalid))?;
    // An OpenAI-compatible server says which models it has: offer those.
    let listed = match &client.api_base {
        Some(base) if client.client_type == "openai-compatible" => {
            server_models(base, client.api_key.as_deref()).await
        }
        _ => Vec::new(),
    };
    let model = ask_model(client.default_model, &listed).map_err(|e| e.into_error(invalid))?;
    let mut new_vault = None;
    let api_key = match client.api_key {
        Some(key) => {
            let kept = offer_vault(paths, vault, caps, &client.name, key)
                .map_err(|e| e.into_error(invalid))?;
            new_vault = kept.keyring;
            Some(kept.api_key)
        }
        None => None,
    };
    let answers = Answers {
        client_type: client.client_type,
        name: client.name,
        api_base: client.api_base,
        api_key,
        model,
        models: listed,
        password_file: new_vault.as_ref().map(|_| PASSWORD_FILE),
    };
    let text = render_config(&answers);
    write_atomic(&paths.config_file, text.as_bytes(), true).map_err(|source| {
        ConfigError::Write {
            path: paths.config_file.clone(),
            source,
        }
    })?;
    eprintln_saved(&paths.config_file);
    // Read back through the vault, which the key may now live in.
    let loaded = match config::load::load(paths, env, new_vault.as_ref().unwrap_or(vault))? {
        Some(loaded) => loaded,
        None => config::load::parse(&text, &paths.config_file, env)?,
    };
    Ok(Setup {
        config: loaded.config,
        origin: paths.config_file.display().to_string(),
        vault: new_vault,
    })
}

/// What the first-run setup made.
pub(crate) struct Setup {
    /// The configuration it wrote.
    pub config: AppConfig,
    /// Where it came from (the file).
    pub origin: String,
    /// The vault, when setup made its password file (the run goes on with it).
    pub vault: Option<crate::vault::Keyring>,
}

/// The password file the setup writes next to config.yaml (as `vault_password_file`).
const PASSWORD_FILE: &str = "vault-password";

/// The API key as config.yaml gets it, and the vault it went into when setup made that
/// vault's password file.
struct Kept {
    api_key: String,
    keyring: Option<crate::vault::Keyring>,
}

/// Offers to keep the API key in the vault (created now if there is none, with a new
/// password); returns what config.yaml gets: the `{{<NAME>_API_KEY}}` placeholder, or
/// the key itself when declined. Without a configured password file, the password typed
/// here is saved in `vault-password` (0600) next to config.yaml, as Loki does, so later
/// runs neither ask nor fail in scripts.
fn offer_vault(
    paths: &Paths,
    vault: &crate::vault::Keyring,
    caps: &crate::config::TerminalCaps,
    client: &str,
    key: String,
) -> Result<Kept, Stop> {
    use crate::vault::Unlock as _;
    use secrecy::ExposeSecret as _;
    let keep =
        inquire::Confirm::new("Keep the API key in loki's encrypted vault instead of config.yaml?")
            .with_default(true)
            .prompt()?;
    if !keep {
        return Ok(Kept {
            api_key: key,
            keyring: None,
        });
    }
    let name: String = client
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect::<String>()
        + "_API_KEY";
    let store = |keyring: &crate::vault::Keyring| {
        keyring.with_vault(|vault| {
            if vault.get(&name).is_some() {
                vault.update(&name, &key)?;
            } else {
                vault.add(&name, &key)?;
            }
            vault.save()
        })
    };
    let api_key = format!("{{{{{name}}}}}");
    if vault.access().password_file.is_some() {
        store(vault).map_err(|e| Stop::Failed(e.to_string()))?;
        return Ok(Kept {
            api_key,
            keyring: None,
        });
    }
    let access = vault.access();
    let typed = crate::term::vault_prompt::TerminalUnlock::new(caps)
        .passphrase(access, !access.exists())
        .map_err(|e| Stop::Failed(e.to_string()))?;
    let file = paths.config_dir.join(PASSWORD_FILE);
    let mut contents = typed.expose_secret().as_bytes().to_vec();
    contents.push(b'\n');
    crate::atomic_file::write_atomic(&file, &contents, true)
        .map_err(|e| Stop::Failed(format!("cannot write {}: {e}", file.display())))?;
    let keyring = crate::vault::Keyring::new(
        crate::vault::Access::new(paths, Some(PASSWORD_FILE)),
        crate::vault::NoPrompt,
    );
    if let Err(e) = store(&keyring) {
        // A wrong password for an existing vault: the file is no use.
        let _ = std::fs::remove_file(&file);
        return Err(Stop::Failed(e.to_string()));
    }
    eprintln_password_saved(&file);
    Ok(Kept {
        api_key,
        keyring: Some(keyring),
    })
}

/// The ids `GET <base>/models` reports; empty when the server cannot be asked.
async fn server_models(base: &str, api_key: Option<&str>) -> Vec<String> {
    let Ok(http) = reqwest::Client::builder()
        .timeout(MODELS_TIMEOUT)
        .connect_timeout(MODELS_TIMEOUT)
        .build()
    else {
        return Vec::new();
    };
    let mut models = crate::client::local_probe::list_models(&http, base, api_key)
        .await
        .unwrap_or_default();
    models.retain(|m| !m.trim().is_empty());
    models.sort();
    models.dedup();
    models
}

#[allow(clippy::print_stderr)]
fn eprintln_saved(path: &std::path::Path) {
    eprintln!("✓ Saved {}", path.display());
}

#[allow(clippy::print_stderr)]
fn eprintln_password_saved(path: &std::path::Path) {
    eprintln!(
        "✓ Saved the vault password in {} (mode 0600, vault_password_file): loki will not ask for it. Anyone who can read that file can open the vault.",
        path.display()
    );
}

/// What the user chose.
#[derive(Debug, Clone, PartialEq)]
struct Answers {
    client_type: &'static str,
    name: String,
    api_base: Option<String>,
    api_key: Option<String>,
    model: String,
    /// The models the server listed, written into the client's `models:`.
    models: Vec<String>,
    /// `vault_password_file`, when setup wrote one.
    password_file: Option<&'static str>,
}

/// The client part of the answers.
struct ClientAnswers {
    client_type: &'static str,
    name: String,
    api_base: Option<String>,
    api_key: Option<String>,
    default_model: &'static str,
}

/// Why the questions stopped.
enum Stop {
    Cancelled,
    Failed(String),
}

impl Stop {
    fn into_error(self, invalid: impl Fn(String) -> ConfigError) -> ConfigError {
        match self {
            Stop::Cancelled => ConfigError::SetupCancelled,
            Stop::Failed(message) => invalid(message),
        }
    }
}

impl From<inquire::InquireError> for Stop {
    fn from(e: inquire::InquireError) -> Self {
        match e {
            inquire::InquireError::OperationCanceled
            | inquire::InquireError::OperationInterrupted => Stop::Cancelled,
            other => Stop::Failed(other.to_string()),
        }
    }
}

fn ask_client() -> Result<ClientAnswers, Stop> {
    let mut choices: Vec<&str> = VENDORS.iter().map(|v| v.name).collect();
    choices.push(OTHER);
    let picked = inquire::Select::new("No config file yet. Which provider do you use?", choices)
        .with_page_size(12)
        .prompt()?;
    let vendor: Option<&Vendor> = VENDORS.iter().find(|v| v.name == picked);

    let (name, api_base) = match vendor {
        Some(v) if !v.local => (v.name.to_string(), None),
        Some(v) => {
            let base = inquire::Text::new("API base URL:")
                .with_default(v.api_base)
                .prompt()?;
            (v.name.to_string(), Some(base))
        }
        None => {
            let name = inquire::Text::new("Client name (used as the model prefix):")
                .with_default("local")
                .prompt()?;
            let base = inquire::Text::new("API base URL (up to /v1):")
                .with_default("http://127.0.0.1:8080/v1")
                .prompt()?;
            (name, Some(base))
        }
    };
    let api_key = match vendor {
        Some(v) if v.local => None,
        _ => {
            let key = inquire::Password::new("API key (leave empty for none):")
                .without_confirmation()
                .with_display_mode(inquire::PasswordDisplayMode::Masked)
                .prompt()?;
            Some(key).filter(|k| !k.trim().is_empty())
        }
    };
    Ok(ClientAnswers {
        client_type: if vendor.is_some_and(|v| v.name == "openai") {
            "openai"
        } else {
            "openai-compatible"
        },
        name,
        api_base,
        api_key,
        default_model: vendor.map(|v| v.default_model).unwrap_or(""),
    })
}

/// The default model: picked from the server's list when there is one, else typed.
fn ask_model(default_model: &str, listed: &[String]) -> Result<String, Stop> {
    if !listed.is_empty() {
        // Embedding models cannot chat: start on the first other one.
        let start = listed
            .iter()
            .position(|m| !m.to_ascii_lowercase().contains("embed"))
            .unwrap_or(0);
        let picked =
            inquire::Select::new("Default model (reported by the server):", listed.to_vec())
                .with_starting_cursor(start)
                .with_page_size(12)
                .prompt()?;
        return Ok(picked);
    }
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
        .prompt()?;
    Ok(model)
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
    if !a.models.is_empty() {
        let models = a
            .models
            .iter()
            .map(|id| {
                let mut entry = Mapping::new();
                entry.insert("name".into(), id.clone().into());
                Value::Mapping(entry)
            })
            .collect();
        client.insert("models".into(), Value::Sequence(models));
    }
    let mut root = Mapping::new();
    root.insert(
        "model".into(),
        format!("{}:{}", a.name, a.model.trim()).into(),
    );
    if let Some(file) = a.password_file {
        root.insert("vault_password_file".into(), file.into());
    }
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
            models: vec!["llama".into(), "nomic-embed".into()],
            password_file: Some(PASSWORD_FILE),
        };
        let text = render_config(&a);
        let loaded =
            config::load::parse(&text, std::path::Path::new("c"), &Env::default()).unwrap();
        assert_eq!(loaded.config.model.as_deref(), Some("groq:llama"));
        assert_eq!(loaded.config.clients[0].name(), "groq");
        assert!(loaded.warnings.is_empty());
        assert!(text.contains("- name: nomic-embed"), "{text}");
        assert_eq!(
            loaded.config.vault_password_file.as_deref(),
            Some(PASSWORD_FILE)
        );
    }
}
