//! `CoreError`: every way a run can fail, with the exit code the CLI uses.

use crate::client::ProviderError;
use crate::client::registry::ModelError;
use crate::config::ConfigError;

use crate::input::InputError;

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
    /// A session could not be loaded or saved (a cancelled wait for it is `Cancelled`).
    #[error(transparent)]
    Session(crate::session::store::SessionError),
    /// A role could not be loaded.
    #[error(transparent)]
    Role(#[from] crate::role::RoleError),
    /// Files, URLs or stdin could not be turned into input.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A knowledge base could not be built, opened or searched.
    #[error(transparent)]
    Rag(#[from] crate::rag::RagError),
    /// An agent could not be used.
    #[error(transparent)]
    Agent(#[from] crate::agent::AgentError),
    /// A rewind cannot be done (nothing to undo, files changed since, …); front ends
    /// match on it to say what they offer instead.
    #[error(transparent)]
    Rewind(#[from] crate::checkpoint::rewind::RewindError),
    /// The user cancelled the turn.
    #[error("interrupted")]
    Cancelled,
    /// A `UserPromptSubmit` hook blocked the prompt; its reason.
    #[error("a hook blocked the prompt: {0}")]
    Blocked(String),
    /// The command needs an open session.
    #[error("no session is open (use `-s <name>` or `.session <name>`)")]
    NoSession,
    /// The command needs something that is not active (a role, a knowledge base).
    #[error("no {what} is active")]
    NotActive {
        /// What: "role", "knowledge base".
        what: &'static str,
    },
    /// The request contradicts the conversation's state (a session already open, nothing
    /// to continue yet). Says what to do.
    #[error("{0}")]
    Conflict(String),
    /// A role or prompt asked of a session that already has messages: it would rewrite
    /// the system prompt of that history. Each driver says what to do instead.
    #[error(
        "session `{session}` already has {messages} messages: its role cannot change ({what} \
         would rewrite the system prompt of that history); use it in a new session \
         (`.exit session` in the REPL, another `-s` name on the command line)"
    )]
    RoleLocked {
        /// The session's stored name.
        session: String,
        /// How many messages it has.
        messages: usize,
        /// What was asked (`` role `coder` ``, `a prompt`).
        what: String,
    },
    /// `.set` of a key loki does not have.
    #[error("unknown setting `{key}`; settable: {known}")]
    UnknownSetting {
        /// The key given.
        key: String,
        /// The keys that exist, comma-separated.
        known: String,
    },
    /// A setting's value is not one it accepts.
    #[error("invalid value `{value}` for {key}: expected {expected}")]
    InvalidSetting {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What it accepts.
        expected: String,
    },
    /// The input is larger than the model accepts.
    #[error("{0}")]
    TooLarge(String),
    /// A file the command writes or deletes could not be.
    #[error("cannot {action} {path}: {message}")]
    Io {
        /// "write", "delete".
        action: &'static str,
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
    /// The request is malformed (a bad prelude, template or answer).
    #[error("{0}")]
    InvalidRequest(String),
    /// An agent run spent its budget (`max_tokens`, `max_cost`); the tree was stopped.
    #[error("{0}")]
    Budget(String),
    /// A turn reached `max_tool_rounds` while the model kept calling tools.
    #[error("{0}")]
    TurnLimit(String),
    /// The model called a tool this conversation does not have, in a run that treats
    /// that as a failure (a one-shot run).
    #[error(
        "the model called `{0}`, which is not a tool of this conversation; enable it (enabled_tools, -r with a role that has it) or ask again"
    )]
    UnknownTool(String),
}

impl From<crate::session::store::SessionError> for CoreError {
    fn from(e: crate::session::store::SessionError) -> Self {
        match e {
            crate::session::store::SessionError::Cancelled => Self::Cancelled,
            other => Self::Session(other),
        }
    }
}

/// How a failure is classed for a caller that maps it onto a protocol (HTTP statuses
/// in the server, error codes in events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The request is malformed or names a setting wrongly (400).
    BadRequest,
    /// The provider refused the credentials (401 at the provider; 502 to a client).
    Unauthorized,
    /// A named thing does not exist (404).
    NotFound,
    /// The request contradicts current state (409).
    Conflict,
    /// The input is too large (413).
    TooLarge,
    /// A rate limit upstream (429).
    RateLimited,
    /// The upstream provider failed or answered wrongly (502).
    Upstream,
    /// The upstream provider did not answer in time (504).
    Timeout,
    /// The caller cancelled (499 in nginx's terms).
    Cancelled,
    /// A spending limit was reached (402).
    BudgetSpent,
    /// Loki's own side failed: files, configuration (500).
    Internal,
}

impl ErrorClass {
    /// The HTTP status a server answers with.
    pub fn http_status(self) -> u16 {
        match self {
            Self::BadRequest => 400,
            Self::NotFound => 404,
            Self::Conflict => 409,
            Self::TooLarge => 413,
            Self::RateLimited => 429,
            Self::Cancelled => 499,
            Self::BudgetSpent => 402,
            Self::Internal => 500,
            Self::Unauthorized | Self::Upstream => 502,
            Self::Timeout => 504,
        }
    }

    /// The stable `snake_case` code of the class, in error bodies and aborted turns.
    pub fn code(self) -> &'static str {
        match self {
            Self::BadRequest => "invalid_request",
            Self::Unauthorized => "upstream_unauthorized",
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::TooLarge => "too_large",
            Self::RateLimited => "upstream_rate_limited",
            Self::Upstream => "upstream_error",
            Self::Timeout => "upstream_timeout",
            Self::Cancelled => "cancelled",
            Self::BudgetSpent => "budget_spent",
            Self::Internal => "internal_error",
        }
    }
}

impl CoreError {
    /// What kind of failure this is, for a server's status code.
    pub fn class(&self) -> ErrorClass {
        use crate::checkpoint::rewind::RewindError;
        use crate::session::store::SessionError;
        match self {
            Self::Cancelled
            | Self::Provider(ProviderError::Cancelled)
            | Self::Rag(crate::rag::RagError::Cancelled) => ErrorClass::Cancelled,
            Self::Provider(e) => provider_class(e),
            Self::Model(_) | Self::Role(crate::role::RoleError::Unknown { .. }) => {
                ErrorClass::NotFound
            }
            Self::Agent(crate::agent::AgentError::Unknown { .. })
            | Self::Session(SessionError::NotFound { .. })
            | Self::Rag(crate::rag::RagError::Unknown { .. })
            | Self::Input(InputError::NotFound { .. }) => ErrorClass::NotFound,
            Self::Session(SessionError::AliasInUse { .. })
            | Self::Conflict(_)
            | Self::RoleLocked { .. }
            | Self::Rewind(
                RewindError::Nothing
                | RewindError::ChangedSince(_)
                | RewindError::Missing(_)
                | RewindError::ConversationChanged { .. },
            )
            | Self::NoSession
            | Self::NotActive { .. }
            | Self::Blocked(_) => ErrorClass::Conflict,
            Self::Agent(
                crate::agent::AgentError::InvalidName { .. }
                | crate::agent::AgentError::MissingVariables { .. }
                | crate::agent::AgentError::UnknownVariable { .. },
            )
            | Self::Session(SessionError::InvalidName { .. } | SessionError::Reserved { .. })
            | Self::Rag(crate::rag::RagError::InvalidName { .. })
            | Self::Input(_)
            | Self::UnknownSetting { .. }
            | Self::InvalidSetting { .. }
            | Self::Rewind(RewindError::ZeroTurns)
            | Self::InvalidRequest(_) => ErrorClass::BadRequest,
            Self::TooLarge(_) => ErrorClass::TooLarge,
            Self::Budget(_) => ErrorClass::BudgetSpent,
            Self::TurnLimit(_) | Self::UnknownTool(_) => ErrorClass::Upstream,
            Self::Config(_)
            | Self::Agent(_)
            | Self::Session(_)
            | Self::Role(_)
            | Self::Rag(_)
            | Self::Rewind(RewindError::Io { .. })
            | Self::Io { .. } => ErrorClass::Internal,
        }
    }

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

fn provider_class(e: &ProviderError) -> ErrorClass {
    match e {
        ProviderError::MissingApiKey { .. } | ProviderError::Setup { .. } => ErrorClass::Internal,
        ProviderError::Auth { .. } => ErrorClass::Unauthorized,
        ProviderError::NotFound { .. } => ErrorClass::NotFound,
        ProviderError::RateLimited { .. } => ErrorClass::RateLimited,
        ProviderError::TooLarge { .. } => ErrorClass::TooLarge,
        ProviderError::Rejected { .. } => ErrorClass::BadRequest,
        ProviderError::Timeout { .. }
        | ProviderError::IdleTimeout { .. }
        | ProviderError::RequestTimeout { .. } => ErrorClass::Timeout,
        ProviderError::Cancelled => ErrorClass::Cancelled,
        ProviderError::Server { .. }
        | ProviderError::Connect { .. }
        | ProviderError::Closed { .. }
        | ProviderError::UnexpectedContent { .. }
        | ProviderError::StreamCut { .. }
        | ProviderError::Protocol { .. }
        | ProviderError::Upstream { .. } => ErrorClass::Upstream,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::store::SessionError;

    #[test]
    fn each_failure_has_a_class_and_a_status() {
        let cases: Vec<(CoreError, u16, u8)> = vec![
            (CoreError::Cancelled, 499, 130),
            (CoreError::from(SessionError::Cancelled), 499, 130),
            (CoreError::NoSession, 409, 1),
            (CoreError::NotActive { what: "role" }, 409, 1),
            (CoreError::Conflict("already in session".into()), 409, 1),
            (
                CoreError::UnknownSetting {
                    key: "x".into(),
                    known: "a, b".into(),
                },
                400,
                1,
            ),
            (
                CoreError::InvalidSetting {
                    key: "temperature".into(),
                    value: "hot".into(),
                    expected: "a number".into(),
                },
                400,
                1,
            ),
            (CoreError::TooLarge("too big".into()), 413, 1),
            (
                CoreError::Session(SessionError::NotFound { name: "x".into() }),
                404,
                1,
            ),
            (
                CoreError::Session(SessionError::AliasInUse { name: "x".into() }),
                409,
                1,
            ),
            (CoreError::Provider(ProviderError::Cancelled), 499, 130),
            (
                CoreError::Io {
                    action: "write",
                    path: "/x".into(),
                    message: "denied".into(),
                },
                500,
                1,
            ),
            (CoreError::InvalidRequest("bad".into()), 400, 1),
        ];
        for (error, status, exit) in cases {
            assert_eq!(error.class().http_status(), status, "{error:?}");
            assert_eq!(error.exit_code(), exit, "{error:?}");
        }
        assert_eq!(
            CoreError::NoSession.to_string(),
            "no session is open (use `-s <name>` or `.session <name>`)"
        );
    }
}
