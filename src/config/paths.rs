//! The on-disk layout of loki's config and cache directories, decided in one place.
//!
//! Resolution order for the config dir: `$LOKI_CONFIG_DIR`, else `$XDG_CONFIG_HOME/loki`,
//! else the platform config dir + `/loki`. Each well-known file or folder can be moved
//! with its own `LOKI_*` variable (see `docs/environment-variables.md`).

use std::path::{Path, PathBuf};

use super::env::Env;

/// Every path loki reads or writes.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The config directory.
    pub config_dir: PathBuf,
    /// `config.yaml`.
    pub config_file: PathBuf,
    /// `.env` loaded at startup.
    pub env_file: PathBuf,
    /// Role files.
    pub roles_dir: PathBuf,
    /// Session files.
    pub sessions_dir: PathBuf,
    /// RAG indexes.
    pub rags_dir: PathBuf,
    /// Macro files.
    pub macros_dir: PathBuf,
    /// User tools and `mcp.json`.
    pub functions_dir: PathBuf,
    /// Agent definitions.
    pub agents_dir: PathBuf,
    /// A trusted project's Claude Code agents (`.claude/agents/*.md`), if any.
    pub project_agents: Option<PathBuf>,
    /// The project directory trusted for this run (remembered, answered or
    /// `--trust-project`), if any.
    pub trusted_project: Option<PathBuf>,
    /// Optional model metadata overriding the bundled catalogue.
    pub models_override_file: PathBuf,
    /// Cache directory (logs, OAuth tokens, messages log).
    pub cache_dir: PathBuf,
    /// The log file.
    pub log_file: PathBuf,
    /// `messages.md`, appended to when `save: true`.
    pub messages_file: PathBuf,
    /// REPL history.
    pub history_file: PathBuf,
    /// Where this process keeps the unsaved knowledge base `.rag` builds without a name
    /// ([`TEMP_RAG`]); removed when the REPL ends.
    pub temp_rags_dir: PathBuf,
}

/// The vault's file name in the config directory.
pub const VAULT_FILE: &str = "vault.age";

/// The name of the REPL's unsaved knowledge base (`.rag` without a name).
pub const TEMP_RAG: &str = "temp";

impl Paths {
    /// Resolves every path from the environment.
    pub fn resolve(env: &Env) -> Self {
        let config_dir = env
            .get("LOKI_CONFIG_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                env.get("XDG_CONFIG_HOME")
                    .map(|d| PathBuf::from(d).join("loki"))
            })
            .or_else(|| dirs::config_dir().map(|d| d.join("loki")))
            .unwrap_or_else(|| PathBuf::from(".loki"));
        Self::resolve_in(config_dir, env)
    }

    /// Resolves the other paths again after `.env` was read (the config directory, where
    /// `.env` lives, stays; the files and directories in it may be moved by `.env`).
    pub fn reresolve(self, env: &Env) -> Self {
        let env_file = self.env_file.clone();
        Self {
            env_file,
            ..Self::resolve_in(self.config_dir, env)
        }
    }

    fn resolve_in(config_dir: PathBuf, env: &Env) -> Self {
        let cache_dir = env
            .get("XDG_CACHE_HOME")
            .map(|d| PathBuf::from(d).join("loki"))
            .or_else(|| dirs::cache_dir().map(|d| d.join("loki")))
            .unwrap_or_else(|| std::env::temp_dir().join("loki"));
        let pick = |var: &str, default: PathBuf| env.get(var).map(PathBuf::from).unwrap_or(default);
        Self {
            config_file: pick("LOKI_CONFIG_FILE", config_dir.join("config.yaml")),
            env_file: pick("LOKI_ENV_FILE", config_dir.join(".env")),
            roles_dir: pick("LOKI_ROLES_DIR", config_dir.join("roles")),
            sessions_dir: pick("LOKI_SESSIONS_DIR", config_dir.join("sessions")),
            rags_dir: pick("LOKI_RAGS_DIR", config_dir.join("rags")),
            macros_dir: pick("LOKI_MACROS_DIR", config_dir.join("macros")),
            functions_dir: pick("LOKI_FUNCTIONS_DIR", config_dir.join("functions")),
            agents_dir: pick("LOKI_AGENTS_DIR", config_dir.join("agents")),
            project_agents: None,
            trusted_project: None,
            models_override_file: config_dir.join("models-override.yaml"),
            // `LOKI_LOG_PATH` (Loki's code) wins over `LOKI_LOG_FILE` (its docs).
            log_file: env
                .get("LOKI_LOG_PATH")
                .or_else(|| env.get("LOKI_LOG_FILE"))
                .map(PathBuf::from)
                .unwrap_or_else(|| cache_dir.join("loki.log")),
            messages_file: pick("LOKI_MESSAGES_FILE", cache_dir.join("messages.md")),
            history_file: config_dir.join("history.txt"),
            temp_rags_dir: std::env::temp_dir().join(format!("loki-rag-{}", std::process::id())),
            cache_dir,
            config_dir,
        }
    }

    /// The directory of knowledge base `name`: the process's own for [`TEMP_RAG`], else
    /// `rags_dir`.
    pub fn rag_dir(&self, name: &str) -> &std::path::Path {
        if name == TEMP_RAG {
            &self.temp_rags_dir
        } else {
            &self.rags_dir
        }
    }

    /// What sandboxed commands may never read: loki's directories and every file of its
    /// that can hold a secret (listed one by one too, for when the user works inside the
    /// config directory and it gives way to the working tree).
    pub fn private(&self) -> Vec<PathBuf> {
        vec![
            self.config_dir.clone(),
            self.config_file.clone(),
            self.env_file.clone(),
            self.config_dir.join(VAULT_FILE),
            self.sessions_dir.clone(),
            self.functions_dir.join(".env"),
            self.cache_dir.clone(),
            self.log_file.clone(),
            self.messages_file.clone(),
            self.history_file.clone(),
        ]
    }

    /// `(name, path)` rows for `--info`.
    pub fn info_rows(&self) -> Vec<(&'static str, &PathBuf)> {
        vec![
            ("config_dir", &self.config_dir),
            ("config_file", &self.config_file),
            ("env_file", &self.env_file),
            ("roles_dir", &self.roles_dir),
            ("sessions_dir", &self.sessions_dir),
            ("rags_dir", &self.rags_dir),
            ("macros_dir", &self.macros_dir),
            ("functions_dir", &self.functions_dir),
            ("agents_dir", &self.agents_dir),
            ("messages_file", &self.messages_file),
            ("log_path", &self.log_file),
        ]
    }
}

/// The log file records go to, once logging has started (none while it is off).
static ACTIVE_LOG: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Notes the log file records go to (logging's start).
pub fn set_active_log(path: PathBuf) {
    let _ = ACTIVE_LOG.set(path);
}

/// The log file records go to; none when logging is off. For messages that send the
/// user there (a server's stderr is in it).
pub fn active_log() -> Option<&'static Path> {
    ACTIVE_LOG.get().map(PathBuf::as_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loki_config_dir_wins_and_children_follow() {
        let env = Env::from_pairs([("LOKI_CONFIG_DIR", "/tmp/l"), ("XDG_CONFIG_HOME", "/x")]);
        let p = Paths::resolve(&env);
        assert_eq!(p.config_dir, PathBuf::from("/tmp/l"));
        assert_eq!(p.config_file, PathBuf::from("/tmp/l/config.yaml"));
        assert_eq!(p.roles_dir, PathBuf::from("/tmp/l/roles"));
    }

    #[test]
    fn xdg_config_home_and_overrides() {
        let env = Env::from_pairs([
            ("XDG_CONFIG_HOME", "/x"),
            ("LOKI_CONFIG_FILE", "/elsewhere.yaml"),
            ("XDG_CACHE_HOME", "/c"),
        ]);
        let p = Paths::resolve(&env);
        assert_eq!(p.config_dir, PathBuf::from("/x/loki"));
        assert_eq!(p.config_file, PathBuf::from("/elsewhere.yaml"));
        assert_eq!(p.log_file, PathBuf::from("/c/loki/loki.log"));
    }

    #[test]
    fn log_path_beats_log_file() {
        let env = Env::from_pairs([("LOKI_LOG_FILE", "/a.log"), ("LOKI_LOG_PATH", "/b.log")]);
        assert_eq!(Paths::resolve(&env).log_file, PathBuf::from("/b.log"));
        let env = Env::from_pairs([("LOKI_LOG_FILE", "/a.log")]);
        assert_eq!(Paths::resolve(&env).log_file, PathBuf::from("/a.log"));
    }
}
