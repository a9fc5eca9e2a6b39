//! Errors raised while locating, reading, parsing or validating configuration.
//!
//! Each variant renders as one line that names the file (and line/column when known)
//! and says what to do about it.

use std::path::PathBuf;

/// A configuration problem the user must fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The YAML is malformed or has a value of the wrong type.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What serde_yaml reported.
        message: String,
    },
    /// A key has a value loki cannot use.
    #[error("{}: invalid value for `{key}`: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The config key.
        key: String,
        /// Why, and what is accepted.
        message: String,
    },
    /// One entry of `clients:` is malformed.
    #[error("{}: clients[{index}]{}: {message}", path.display(), name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default())]
    Client {
        /// The file.
        path: PathBuf,
        /// Position in the `clients` list.
        index: usize,
        /// The client's `name`, when it has one.
        name: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A `LOKI_*` variable holds a value of the wrong type.
    #[error("environment variable {var}: {message}")]
    EnvOverride {
        /// The variable.
        var: String,
        /// What is wrong.
        message: String,
    },
    /// The first-run setup was cancelled (Esc or Ctrl-C); nothing was written.
    #[error("setup cancelled; nothing was written")]
    SetupCancelled,
    /// No config file, no API key in the environment and no local model server.
    #[error(
        "no configuration: create {} (run `loki` in a terminal for a guided setup) or set one of {vars}",
        path.display()
    )]
    NoConfig {
        /// Where the config file is expected.
        path: PathBuf,
        /// Environment variables that would work instead.
        vars: String,
    },
    /// Writing a config file failed.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The secret store (the vault) was needed for `{{NAME}}` placeholders and could
    /// not be used; its one-line reason.
    #[error("{0}")]
    Secrets(String),
}
