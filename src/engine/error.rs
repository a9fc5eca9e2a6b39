//! `CoreError`: every way a run can fail, with the exit code the CLI uses.

use crate::client::ProviderError;
use crate::client::registry::ModelError;
use crate::config::ConfigError;

use super::input::InputError;

/// A failed run. `Display` is the one-line message shown to the user.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// Configuration problem.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Model id problem.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Provider call failed.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// A session could not be loaded or saved.
    #[error(transparent)]
    Session(#[from] crate::session::store::SessionError),
    /// A role could not be loaded.
    #[error(transparent)]
    Role(#[from] crate::role::RoleError),
    /// Files, URLs or stdin could not be turned into input.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A knowledge base could not be built, opened or searched.
    #[error(transparent)]
    Rag(#[from] crate::rag::RagError),
    /// The user cancelled the turn.
    #[error("interrupted")]
    Cancelled,
    /// The request cannot be served as asked.
    #[error("{0}")]
    InvalidRequest(String),
}

impl CoreError {
    /// Process exit status for the one-shot CLI: 130 for a cancelled turn (as a shell
    /// reports SIGINT), 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Cancelled
            | Self::Provider(ProviderError::Cancelled)
            | Self::Rag(crate::rag::RagError::Cancelled) => 130,
            _ => 1,
        }
    }
}
