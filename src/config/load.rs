//! Reading `config.yaml`: `{{NAME}}` interpolation, YAML parsing with file/line/column
//! errors, unknown-key warnings, `LOKI_<KEY>` overrides and client validation.
//!
//! The result is an [`AppConfig`] that nothing mutates afterwards. Missing config files
//! are not handled here (see [`super::zero`]).

use std::path::Path;

use serde::Deserialize;
use serde_yaml::{Mapping, Value};

use super::keys::{KEYS, LEGACY_KEYS, env_var_for, parse_override};
use super::{AppConfig, ConfigError, Env, Paths};
use crate::config::clients::{ClientConfig, KNOWN_CLIENT_TYPES};

/// A parsed config and the warnings worth showing the user.
#[derive(Debug)]
pub struct LoadedConfig {
    /// The frozen configuration.
    pub config: AppConfig,
    /// Non-fatal problems: unknown keys, skipped clients, legacy spellings.
    pub warnings: Vec<String>,
}

/// Why a secret store could not supply a file's placeholders: the store's own error
/// (the vault's, which this layer cannot name), shown as it is.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct SecretsError(Box<dyn std::error::Error + Send + Sync>);

impl SecretsError {
    /// Wraps the store's error.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(Box::new(error))
    }
}

/// Where `{{NAME}}` placeholders find secrets before the environment (the vault).
pub trait Secrets {
    /// `env` with the secrets `text`'s placeholders name laid over it; `None` to use
    /// `env` as it is. `file` names the file in errors.
    fn overlay(&self, text: &str, env: &Env, file: &str) -> Result<Option<Env>, SecretsError>;
}

/// No secret store: placeholders come from the environment alone.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSecrets;

impl Secrets for NoSecrets {
    fn overlay(&self, _text: &str, _env: &Env, _file: &str) -> Result<Option<Env>, SecretsError> {
        Ok(None)
    }
}

/// The text of `paths.config_file`; `Ok(None)` when it does not exist.
pub fn read(paths: &Paths) -> Result<Option<String>, ConfigError> {
    let path = &paths.config_file;
    // Only a regular file, and not without bound: a FIFO or a link to a device would
    // block or never end.
    match crate::atomic_file::read_regular_text(path, crate::atomic_file::MAX_OWN_FILE) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read {
            path: path.clone(),
            source,
        }),
    }
}

/// Loads `paths.config_file` with placeholders from `secrets`, then the environment;
/// `Ok(None)` when it does not exist.
pub fn load(
    paths: &Paths,
    env: &Env,
    secrets: &dyn Secrets,
) -> Result<Option<LoadedConfig>, ConfigError> {
    match read(paths)? {
        Some(text) => parse_with(&text, &paths.config_file, env, secrets).map(Some),
        None => Ok(None),
    }
}

/// Parses config text read from `path`, its `{{NAME}}` placeholders taking `secrets`
/// before environment variables.
pub fn parse_with(
    text: &str,
    path: &Path,
    env: &Env,
    secrets: &dyn Secrets,
) -> Result<LoadedConfig, ConfigError> {
    let label = path.display().to_string();
    match secrets
        .overlay(text, env, &label)
        .map_err(|e| ConfigError::Secrets(e.to_string()))?
    {
        Some(with_secrets) => parse(text, path, &with_secrets),
        None => parse(text, path, env),
    }
}

/// Parses config text as if read from `path` (used for messages only).
pub fn parse(text: &str, path: &Path, env: &Env) -> Result<LoadedConfig, ConfigError> {
    let text = interpolate(super::yaml::strip_bom(text), env);
    super::yaml::check_nesting(&text).map_err(|deep| ConfigError::Parse {
        path: path.to_path_buf(),
        line: deep.line,
        column: deep.column,
        message: deep.message(),
    })?;
    let mut warnings = Vec::new();
    let mut config = if is_blank_yaml(&text) {
        AppConfig::default()
    } else {
        let de = serde_yaml::Deserializer::from_str(&text);
        let mut unknown = Vec::new();
        let parsed: AppConfig = serde_ignored::deserialize(de, |p| unknown.push(p.to_string()))
            .map_err(|e| match duplicate_top_level_key(&text) {
                // serde reports a repeated key without a place; point at the repeat.
                Some((key, line, first)) if e.to_string().contains("duplicate field") => {
                    ConfigError::Parse {
                        path: path.to_path_buf(),
                        line,
                        column: 1,
                        message: format!("duplicate key `{key}` (first at line {first})"),
                    }
                }
                _ => parse_error(path, &e),
            })?;
        warnings.extend(
            unknown
                .into_iter()
                .map(|key| format!("{}: unknown key `{key}` (ignored)", path.display())),
        );
        parsed
    };
    for (legacy, current) in LEGACY_KEYS {
        if has_top_level_key(&text, legacy) {
            warnings.push(format!(
                "{}: `{legacy}` is the old name of `{current}`; it still works, but please rename it",
                path.display()
            ));
        }
    }

    let overrides = collect_overrides(env)?;
    let overridden: Vec<&'static str> = overrides.iter().map(|(key, _)| *key).collect();
    if !overrides.is_empty() {
        config = apply_overrides(&text, overrides, path)?;
    }

    let raw_clients = std::mem::take(&mut config.raw_clients);
    config.clients = parse_clients(raw_clients, path, &mut warnings)?;
    validate(&config, path).map_err(|e| match e {
        // A value that came from the environment: name the variable, not the file.
        ConfigError::Invalid { key, message, .. } if overridden.contains(&key.as_str()) => {
            ConfigError::EnvOverride {
                var: super::keys::env_var_for(&key),
                message: format!("invalid value for `{key}`: {message}"),
            }
        }
        other => other,
    })?;
    warnings.extend(
        config
            .hooks
            .notes()
            .into_iter()
            .map(|note| format!("{}: {note}", path.display())),
    );
    Ok(LoadedConfig { config, warnings })
}

/// Replaces `{{NAME}}` with the value of environment variable `NAME` on lines that are not
/// comments. Unknown names are left as they are so the client that needs them can say
/// which variable is missing.
pub fn interpolate(text: &str, env: &Env) -> String {
    if !text.contains("{{") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('#') {
            out.push_str(line);
        } else {
            out.push_str(&interpolate_line(line, env));
        }
    }
    out
}

fn interpolate_line(line: &str, env: &Env) -> String {
    super::env::replace_placeholders(line, move |name| {
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        env.get(name).filter(|_| valid)
    })
}

fn is_blank_yaml(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t == "---"
    })
}

/// The first top-level key that appears twice: (key, line of the repeat, first line),
/// 1-based.
fn duplicate_top_level_key(text: &str) -> Option<(String, usize, usize)> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with([' ', '\t', '#', '-']) {
            continue;
        }
        let Some((key, _)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().trim_matches(['"', '\'']);
        if key.is_empty() || key.contains(char::is_whitespace) {
            continue;
        }
        if let Some(first) = seen.insert(key, i + 1) {
            return Some((key.to_string(), i + 1, first));
        }
    }
    None
}

fn has_top_level_key(text: &str, key: &str) -> bool {
    text.lines().any(|line| {
        line.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    })
}

fn parse_error(path: &Path, e: &serde_yaml::Error) -> ConfigError {
    let (line, column) = e
        .location()
        .map(|l| (l.line(), l.column()))
        .unwrap_or((0, 0));
    let message = e.to_string();
    // serde_yaml appends " at line X column Y" to its message; we print the location first.
    let message = message
        .split(" at line ")
        .next()
        .unwrap_or(&message)
        .to_string();
    ConfigError::Parse {
        path: path.to_path_buf(),
        line,
        column,
        message,
    }
}

fn collect_overrides(env: &Env) -> Result<Vec<(&'static str, Value)>, ConfigError> {
    let mut out = Vec::new();
    for (key, kind) in KEYS {
        let var = env_var_for(key);
        if let Some(raw) = env.get(&var) {
            let value = parse_override(*kind, raw).map_err(|e| ConfigError::EnvOverride {
                var: var.clone(),
                message: e.to_string(),
            })?;
            out.push((*key, value));
        }
    }
    Ok(out)
}

fn apply_overrides(
    text: &str,
    overrides: Vec<(&'static str, Value)>,
    path: &Path,
) -> Result<AppConfig, ConfigError> {
    let mut map = if is_blank_yaml(text) {
        Mapping::new()
    } else {
        match serde_yaml::from_str::<Value>(text).map_err(|e| parse_error(path, &e))? {
            Value::Mapping(m) => m,
            Value::Null => Mapping::new(),
            _ => {
                return Err(ConfigError::Invalid {
                    path: path.to_path_buf(),
                    key: "(top level)".into(),
                    message: "expected a mapping of keys to values".into(),
                });
            }
        }
    };
    let overrides: Vec<(&'static str, Value)> = overrides;
    for (key, value) in overrides.iter().cloned() {
        for (legacy, current) in LEGACY_KEYS {
            if *current == key {
                map.remove(*legacy);
            }
        }
        map.insert(Value::String(key.to_string()), value);
    }
    let keys: Vec<&'static str> = overrides.iter().map(|(key, _)| *key).collect();
    AppConfig::deserialize(Value::Mapping(map.clone())).map_err(|e| {
        // Name the variable: the override whose value the file's own would not fail on.
        let culprit = keys.iter().find(|key| {
            let mut without = map.clone();
            without.remove(**key);
            AppConfig::deserialize(Value::Mapping(without)).is_ok()
        });
        ConfigError::EnvOverride {
            var: culprit.map_or_else(|| "LOKI_*".into(), |key| super::keys::env_var_for(key)),
            message: e.to_string(),
        }
    })
}

fn parse_clients(
    raw: Vec<Value>,
    path: &Path,
    warnings: &mut Vec<String>,
) -> Result<Vec<ClientConfig>, ConfigError> {
    let mut clients: Vec<ClientConfig> = Vec::with_capacity(raw.len());
    for (index, value) in raw.into_iter().enumerate() {
        let name = value
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string);
        let client_error = |message: String| ConfigError::Client {
            path: path.to_path_buf(),
            index,
            name: name.clone(),
            message,
        };
        let Some(kind) = value.get("type").and_then(Value::as_str) else {
            return Err(client_error(
                "missing `type` (for example `type: openai` or `type: openai-compatible`)".into(),
            ));
        };
        if !KNOWN_CLIENT_TYPES.contains(&kind) {
            warnings.push(format!(
                "{}: clients[{index}]: client type `{kind}` is not supported by this build (skipped); supported: {}",
                path.display(),
                KNOWN_CLIENT_TYPES.join(", ")
            ));
            continue;
        }
        let mut unknown = Vec::new();
        let client = ClientConfig::from_yaml(kind, value.clone(), &mut |p| unknown.push(p))
            .map_err(|e| client_error(e.to_string()))?
            .ok_or_else(|| client_error(format!("client type `{kind}` cannot be loaded")))?;
        for key in unknown {
            warnings.push(format!(
                "{}: clients[{index}]: unknown key `{key}` (ignored)",
                path.display()
            ));
        }
        if clients.iter().any(|c| c.name() == client.name()) {
            return Err(client_error(format!(
                "duplicate client name `{}`; give each client a distinct `name`",
                client.name()
            )));
        }
        clients.push(client);
    }
    Ok(clients)
}

fn validate(config: &AppConfig, path: &Path) -> Result<(), ConfigError> {
    let invalid = |key: &str, message: String| ConfigError::Invalid {
        path: path.to_path_buf(),
        key: key.to_string(),
        message,
    };
    if !matches!(config.keybindings.as_str(), "emacs" | "vi") {
        return Err(invalid(
            "keybindings",
            format!("expected `emacs` or `vi`, got `{}`", config.keybindings),
        ));
    }
    if !matches!(config.memory_flush.as_str(), "ask" | "always" | "never") {
        return Err(invalid(
            "memory_flush",
            format!(
                "expected `ask`, `always` or `never`, got `{}`",
                config.memory_flush
            ),
        ));
    }
    if config.compaction_share > 100 {
        return Err(invalid(
            "compaction_share",
            format!(
                "expected a percentage (0-100), got {}",
                config.compaction_share
            ),
        ));
    }
    if let Some(theme) = config.theme.as_deref()
        && !matches!(theme, "dark" | "light")
    {
        return Err(invalid(
            "theme",
            format!("expected `dark` or `light`, got `{theme}`"),
        ));
    }
    if let Some(mode) = config.permission_mode.as_deref()
        && crate::config::permissions::PermissionMode::parse(mode).is_none()
    {
        return Err(invalid(
            "permission_mode",
            format!("expected `default`, `accept-edits`, `plan` or `yolo`, got `{mode}`"),
        ));
    }
    let rules = config.permissions.problems();
    if !rules.is_empty() {
        return Err(invalid("permissions", rules.join("; ")));
    }
    let hooks = config.hooks.problems();
    if !hooks.is_empty() {
        return Err(invalid("hooks", hooks.join("; ")));
    }
    for (key, value) in [("temperature", config.temperature), ("top_p", config.top_p)] {
        if let Some(v) = value
            && !(0.0..=2.0).contains(&v)
        {
            return Err(invalid(
                key,
                format!("expected a number from 0 to 2, got {v}"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Wrap;
    use std::path::PathBuf;

    fn p() -> PathBuf {
        PathBuf::from("/cfg/config.yaml")
    }

    #[test]
    fn parses_loki_config_unchanged() {
        let text = r#"
model: openai:gpt-4o
temperature: 0.2
stream: false
wrap: 80
wrap_code: true
highlight: false
light_theme: true
user_agent: auto
clients:
  - type: openai
    api_key: sk-test
    models:
      - name: gpt-4o
        max_input_tokens: 128000
        supports_vision: true
        supports_function_calling: true
      - name: text-embedding-3-small
        type: embedding
  - type: openai-compatible
    name: local
    api_base: http://127.0.0.1:8080/v1
"#;
        let loaded = parse(text, &p(), &Env::default()).unwrap();
        let c = loaded.config;
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        assert_eq!(c.model.as_deref(), Some("openai:gpt-4o"));
        assert_eq!(c.temperature, Some(0.2));
        assert!(!c.stream);
        assert_eq!(c.wrap, Some(Wrap::Width(80)));
        assert!(c.is_light_theme());
        assert_eq!(c.clients.len(), 2);
        assert_eq!(c.clients[1].name(), "local");
        assert_eq!(
            c.user_agent().unwrap(),
            format!("loki/{}", env!("CARGO_PKG_VERSION"))
        );
    }

    #[test]
    fn unknown_keys_warn_with_path() {
        let text = "model: a:b\nbogus: 1\nclients:\n  - type: openai\n    nonsense: 2\n  - type: martian\n";
        let loaded = parse(text, &p(), &Env::default()).unwrap();
        assert_eq!(loaded.config.clients.len(), 1);
        let w = loaded.warnings.join("\n");
        assert!(w.contains("unknown key `bogus`"), "{w}");
        assert!(w.contains("clients[0]: unknown key `nonsense`"), "{w}");
        assert!(w.contains("client type `martian`"), "{w}");
    }

    #[test]
    fn malformed_yaml_reports_line_and_column() {
        let text = "model: a:b\nstream: [unclosed\n";
        let err = parse(text, &p(), &Env::default()).unwrap_err().to_string();
        assert!(err.starts_with("/cfg/config.yaml:"), "{err}");
        assert!(err.contains(":3:") || err.contains(":2:"), "{err}");
    }

    #[test]
    fn wrong_type_reports_location() {
        let err = parse("model: x\ntemperature: hot\n", &p(), &Env::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("config.yaml:2:"), "{err}");
    }

    #[test]
    fn env_overrides_apply_and_replace_legacy_keys() {
        let env = Env::from_pairs([
            ("LOKI_MODEL", "x:y"),
            ("LOKI_STREAM", "false"),
            ("LOKI_FUNCTION_CALLING_SUPPORT", "false"),
            ("LOKI_WRAP", "auto"),
        ]);
        let text = "model: a:b\nfunction_calling: true\n";
        let loaded = parse(text, &p(), &env).unwrap();
        assert_eq!(loaded.config.model.as_deref(), Some("x:y"));
        assert!(!loaded.config.stream);
        assert!(!loaded.config.function_calling_support);
        assert_eq!(loaded.config.wrap, Some(Wrap::Auto));
        assert!(
            loaded
                .warnings
                .iter()
                .any(|w| w.contains("`function_calling`"))
        );
    }

    #[test]
    fn bad_env_override_is_an_error() {
        let env = Env::from_pairs([("LOKI_TEMPERATURE", "warm")]);
        let err = parse("", &p(), &env).unwrap_err().to_string();
        assert!(err.contains("LOKI_TEMPERATURE"), "{err}");
    }

    #[test]
    fn placeholders_resolve_from_env_outside_comments() {
        let env = Env::from_pairs([("KEY", "secret")]);
        let out = interpolate(
            "a: '{{KEY}}'\n# b: {{KEY}}\nc: {{MISSING}}\nd: {{ KEY }}",
            &env,
        );
        assert_eq!(out, "a: 'secret'\n# b: {{KEY}}\nc: {{MISSING}}\nd: secret");
    }

    #[test]
    fn duplicate_client_names_rejected() {
        let text = "clients:\n  - type: openai\n  - type: openai\n";
        let err = parse(text, &p(), &Env::default()).unwrap_err().to_string();
        assert!(err.contains("duplicate client name"), "{err}");
    }

    #[test]
    fn validation_errors_name_the_key() {
        let err = parse(
            "model: a\nstream: true\nsave: true\nstream: false\n",
            &p(),
            &Env::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains(":4:1: duplicate key `stream` (first at line 2)"),
            "{err}"
        );
        let err = parse("memory_flush: sometimes\n", &p(), &Env::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("`memory_flush`"), "{err}");
        let err = parse("keybindings: nano\n", &p(), &Env::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("`keybindings`"), "{err}");
    }

    #[test]
    fn empty_file_is_default() {
        let loaded = parse("# nothing\n", &p(), &Env::default()).unwrap();
        assert!(loaded.config.stream);
        assert_eq!(loaded.config.compression_threshold, 4000);
    }

    /// The example config documents every key and parses cleanly.
    #[test]
    fn example_config_is_complete_and_valid() {
        let text = include_str!("../../config.example.yaml");
        let loaded = parse(text, &p(), &Env::default()).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        for (key, _) in KEYS {
            let documented = text
                .lines()
                .any(|l| l.trim_start_matches("# ").starts_with(&format!("{key}:")));
            assert!(documented, "config.example.yaml does not document `{key}`");
        }
    }
}
