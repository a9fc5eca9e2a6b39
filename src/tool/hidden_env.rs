//! Which environment variables tools do not inherit: loki's own credentials.
//!
//! `execute_command` and script tools run with loki's environment minus the secrets loki
//! itself uses to reach its providers: the `<CLIENT>_API_KEY` variable of every configured
//! client, the vendor's usual key variables (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, …),
//! `AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN` (and the client-specific spellings) for
//! Bedrock clients, the key of the configured `web_search` backend, and any variable whose
//! value is one of the keys loki resolved (which catches `api_key: '{{MY_TOKEN}}'`).
//! A variable listed in `tool_env_passthrough`, or declared by a script tool with `@env`,
//! is passed on anyway.

use std::collections::BTreeSet;

use crate::config::clients::ClientKind;
use crate::config::vendors::{self, client_env_var};
use crate::config::{AppConfig, Env};

/// Values shorter than this are never treated as secrets when matching by value (so a
/// key such as `1` does not hide every variable set to `1`).
const MIN_SECRET_LEN: usize = 8;

/// The variables withheld from tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HiddenEnv {
    names: BTreeSet<String>,
}

impl HiddenEnv {
    /// The credentials `config` makes loki read from `env`, minus `tool_env_passthrough`.
    pub fn new(config: &AppConfig, env: &Env) -> Self {
        let mut candidates: BTreeSet<String> = BTreeSet::new();
        let mut secrets: BTreeSet<String> = BTreeSet::new();
        for client in &config.clients {
            let name = client.name();
            candidates.insert(client_env_var(name, "API_KEY"));
            let vendor = match client.kind {
                ClientKind::OpenAi => vendors::find("openai"),
                ClientKind::Claude => vendors::find("claude"),
                ClientKind::Gemini => vendors::find("gemini"),
                _ => vendors::find(name),
            };
            if let Some(vendor) = vendor {
                candidates.extend(vendor.key_envs.iter().map(ToString::to_string));
            }
            let settings = &client.settings;
            if client.kind == ClientKind::Bedrock {
                for field in ["SECRET_ACCESS_KEY", "SESSION_TOKEN"] {
                    candidates.insert(client_env_var(name, field));
                    candidates.insert(format!("AWS_{field}"));
                }
            }
            for value in [
                &settings.api_key,
                &settings.secret_access_key,
                &settings.session_token,
            ]
            .into_iter()
            .flatten()
            {
                if !value.contains("{{") {
                    secrets.insert(value.trim().to_string());
                }
            }
        }
        match config.web_search.as_deref() {
            Some("tavily") => {
                candidates.insert("TAVILY_API_KEY".into());
            }
            Some("perplexity") => {
                candidates.insert("PERPLEXITY_API_KEY".into());
            }
            _ => {}
        }
        let mut names: BTreeSet<String> = BTreeSet::new();
        for name in candidates {
            if let Some(value) = env.get(&name) {
                secrets.insert(value.trim().to_string());
                names.insert(name);
            }
        }
        secrets.retain(|s| s.len() >= MIN_SECRET_LEN);
        for (name, value) in env.pairs() {
            if secrets.contains(value.trim()) {
                names.insert(name.to_string());
            }
        }
        for allowed in &config.tool_env_passthrough {
            names.remove(allowed);
        }
        Self { names }
    }

    /// Hides `names` (tests and callers that already know them).
    pub fn from_names<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        Self {
            names: names.into_iter().map(Into::into).collect(),
        }
    }

    /// The withheld names, except those in `declared` (a script tool's `@env` variables).
    pub fn withheld<'a>(&'a self, declared: &'a [String]) -> impl Iterator<Item = &'a str> {
        self.names
            .iter()
            .filter(move |name| !declared.contains(name))
            .map(String::as_str)
    }

    /// Whether `name` is withheld (before per-tool declarations).
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(yaml: &str, env: &Env) -> AppConfig {
        crate::config::load::parse(yaml, std::path::Path::new("c.yaml"), env)
            .unwrap()
            .config
    }

    #[test]
    fn keys_of_configured_clients_are_hidden_and_others_kept() {
        let env = Env::from_pairs([
            ("ANTHROPIC_API_KEY", "sk-ant-0123456789"),
            ("WORK_API_KEY", "work-0123456789"),
            ("MY_TOKEN", "placeholder-0123456789"),
            ("COPY_OF_TOKEN", "placeholder-0123456789"),
            ("AWS_SECRET_ACCESS_KEY", "aws-secret-0123456789"),
            ("AWS_SESSION_TOKEN", "aws-token-0123456789"),
            ("OPENAI_API_KEY", "sk-unused-0123456789"),
            ("SHORT", "1"),
            ("HOME", "/home/u"),
        ]);
        let yaml = "clients:\n  - type: claude\n  - type: openai-compatible\n    name: work\n    api_base: http://127.0.0.1:1/v1\n  - type: openai-compatible\n    name: mine\n    api_base: http://127.0.0.1:2/v1\n    api_key: '{{MY_TOKEN}}'\n  - type: bedrock\n    api_key: '1'\n";
        let hidden = HiddenEnv::new(&config(yaml, &env), &env);
        let names: Vec<&str> = hidden.withheld(&[]).collect();
        assert_eq!(
            names,
            [
                "ANTHROPIC_API_KEY",
                "AWS_SECRET_ACCESS_KEY",
                "AWS_SESSION_TOKEN",
                "COPY_OF_TOKEN",
                "MY_TOKEN",
                "WORK_API_KEY"
            ]
        );
        let declared = vec!["WORK_API_KEY".to_string()];
        assert!(!hidden.withheld(&declared).any(|n| n == "WORK_API_KEY"));
        let allowed = config(
            &format!("tool_env_passthrough: [AWS_SESSION_TOKEN]\n{yaml}"),
            &env,
        );
        assert!(!HiddenEnv::new(&allowed, &env).contains("AWS_SESSION_TOKEN"));
    }
}
