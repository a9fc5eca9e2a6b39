//! Language servers for the `lsp_diagnostics` and `lsp_references` tools (stub: being
//! written).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

pub use crate::config::LspServer as LspConfig;

/// Why a language server could not answer.
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    /// No configured server handles the file.
    #[error("no language server handles `{0}` (lsp_servers in config.yaml)")]
    NoServer(PathBuf),
    /// Anything else.
    #[error("{0}")]
    Failed(String),
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}

/// The configured language servers, started lazily (one per language and root), stopped
/// with loki.
#[derive(Debug, Default)]
pub struct LspPool {
    servers: BTreeMap<String, LspConfig>,
}

impl LspPool {
    /// A pool of the configured servers; nothing starts yet.
    pub fn new(servers: BTreeMap<String, LspConfig>) -> Self {
        Self { servers }
    }

    /// Whether no server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Diagnostics of `file` (inside `root`), one per line.
    pub async fn diagnostics(
        &self,
        root: &Path,
        file: &Path,
        cancel: &CancellationToken,
    ) -> Result<String, LspError> {
        let _ = (root, cancel);
        Err(LspError::NoServer(file.to_path_buf()))
    }

    /// References of the symbol at `line`:`column` (1-based) of `file`, one per line.
    pub async fn references(
        &self,
        root: &Path,
        file: &Path,
        line: u32,
        column: u32,
        cancel: &CancellationToken,
    ) -> Result<String, LspError> {
        let _ = (root, line, column, cancel);
        Err(LspError::NoServer(file.to_path_buf()))
    }

    /// Stops every running server.
    pub async fn shutdown(&self) {}
}
