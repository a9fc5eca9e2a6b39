//! [`McpError`]: every way talking to an MCP server fails, so callers decide by kind
//! (a cancelled call is not a failed one; a server that stopped is restarted on next use)
//! instead of by matching message text. `Display` is the one line shown to the user or
//! the model.

/// A failed MCP operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// `functions/mcp.json` is not JSON in the expected shape.
    #[error("mcp.json: {0}")]
    Config(String),
    /// One server's entry cannot be used (missing `command`, unknown type, unset
    /// variables).
    #[error("{0}")]
    Spec(String),
    /// The server could not be started, reached or initialised.
    #[error("{0}")]
    Start(String),
    /// The server stopped while a call was in flight.
    #[error(
        "MCP server `{server}` stopped during the call ({message}); it is restarted on next use"
    )]
    Stopped {
        /// The server.
        server: String,
        /// What the transport said.
        message: String,
    },
    /// A request got no answer in time.
    #[error("`{what}` on MCP server `{server}` did not answer within {seconds}s")]
    Timeout {
        /// The server.
        server: String,
        /// The tool called, or the request ("listing tools").
        what: String,
        /// The limit.
        seconds: u64,
    },
    /// The server sent a message over `mcp_max_message_size`.
    #[error(
        "MCP server `{server}` sent a message larger than {limit} bytes ({reason}); raise `mcp_max_message_size` in config.yaml to accept it"
    )]
    TooLarge {
        /// The server.
        server: String,
        /// The limit in bytes.
        limit: usize,
        /// What was refused.
        reason: String,
    },
    /// The server answered the request with a protocol error.
    #[error("{0}")]
    Refused(String),
    /// The tool ran and reported an error (its text).
    #[error("{0}")]
    ToolFailed(String),
    /// The transport failed (network, HTTP status, a closed pipe).
    #[error("{0}")]
    Transport(String),
    /// The caller cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The server wants a sign-in that has not happened (or no longer holds).
    #[error("MCP server `{server}` needs sign-in: run `loki --mcp-login {server}`")]
    NeedsSignIn {
        /// The server.
        server: String,
    },
    /// The sign-in does not allow what was asked (HTTP 403 `insufficient_scope`).
    #[error(
        "MCP server `{server}` needs more access (scope {scope}): run `loki --mcp-login {server}` to grant it"
    )]
    NeedsScope {
        /// The server.
        server: String,
        /// The scope it asked for.
        scope: String,
    },
    /// Signing in to the server failed.
    #[error("MCP server `{server}`: sign-in failed: {message}")]
    Auth {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
}
