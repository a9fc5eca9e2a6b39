//! Why a command could not be confined: one line for the user, and nothing ran.

/// What stopped a sandbox.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// This system cannot confine in the mode asked for (no user namespaces and no
    /// Landlock, another operating system).
    #[error("{0}")]
    Unconfinable(String),
    /// One layer could not be put in place.
    #[error("{layer}: {message}")]
    Layer {
        /// `Landlock`, `seccomp`, `namespaces`, …
        layer: &'static str,
        /// What the system said.
        message: String,
    },
    /// The wrapper was started with arguments it does not understand.
    #[error("{0}")]
    Usage(String),
    /// The program could not be started once confined.
    #[error("cannot run {program}: {message}")]
    Exec {
        /// The program.
        program: String,
        /// What the system said.
        message: String,
    },
    /// The private temporary directory could not be made.
    #[error("cannot make {path}: {message}")]
    TempDir {
        /// The directory.
        path: String,
        /// What the system said.
        message: String,
    },
    /// The wrapper could not be started or said nothing that could be read.
    #[error("cannot start the sandbox: {0}")]
    Start(String),
}

impl SandboxError {
    /// A layer's failure.
    pub(super) fn layer(layer: &'static str, message: impl std::fmt::Display) -> Self {
        Self::Layer {
            layer,
            message: message.to_string(),
        }
    }
}
