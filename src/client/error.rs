//! What can go wrong talking to a provider, classified so the engine knows whether to
//! retry and the front end can say what to do.

use std::time::Duration;

/// A failed provider call. Messages are one line and end with advice where there is any.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderError {
    /// No key configured or found in the environment.
    #[error(
        "no API key for client `{client}`: set {env} or `api_key` for this client in config.yaml"
    )]
    MissingApiKey {
        /// Client name.
        client: String,
        /// The variable that would provide it.
        env: String,
    },
    /// HTTP 401/403.
    #[error("`{client}` rejected the credentials (HTTP {status}): {message} — check the API key")]
    Auth {
        /// Client name.
        client: String,
        /// 401 or 403.
        status: u16,
        /// Provider's message.
        message: String,
    },
    /// HTTP 404: usually an unknown model or a wrong `api_base`.
    #[error(
        "`{client}` answered 404 for model `{model}`: {message} — check the model name (`loki --list-models`) and the client's api_base"
    )]
    NotFound {
        /// Client name.
        client: String,
        /// Model sent upstream.
        model: String,
        /// Provider's message.
        message: String,
    },
    /// HTTP 429.
    #[error("`{client}` is rate limiting requests (HTTP 429): {message}{}", retry_after.map(|d| format!(" — retry after {}s", d.as_secs().max(1))).unwrap_or_else(|| " — wait a moment and try again".into()))]
    RateLimited {
        /// Client name.
        client: String,
        /// Provider's message.
        message: String,
        /// From `Retry-After`.
        retry_after: Option<Duration>,
    },
    /// HTTP 5xx.
    #[error("`{client}` had a server error (HTTP {status}): {message} — try again later")]
    Server {
        /// Client name.
        client: String,
        /// Status code.
        status: u16,
        /// Provider's message.
        message: String,
        /// From `Retry-After`, when sent.
        retry_after: Option<Duration>,
    },
    /// Any other non-success status (400, 413, 422 …).
    #[error("`{client}` refused the request (HTTP {status}): {message}")]
    Rejected {
        /// Client name.
        client: String,
        /// Status code.
        status: u16,
        /// Provider's message.
        message: String,
    },
    /// Could not connect, or the connection failed before a response.
    #[error("cannot reach `{client}` at {url}: {message}")]
    Connect {
        /// Client name.
        client: String,
        /// Endpoint.
        url: String,
        /// Cause.
        message: String,
    },
    /// The server closed the connection before sending any part of a response (after a
    /// silent retry when it was a reused keep-alive connection): the server is reachable.
    #[error("`{client}` closed the connection before answering ({url}): {message}")]
    Closed {
        /// Client name.
        client: String,
        /// Endpoint.
        url: String,
        /// Cause.
        message: String,
    },
    /// No data for longer than the read timeout.
    #[error("`{client}` sent nothing for {}s — the request timed out (raise `extra.read_timeout` for slow models)", .after.as_secs())]
    Timeout {
        /// Client name.
        client: String,
        /// The timeout that elapsed.
        after: Duration,
    },
    /// Bytes kept arriving (or only keep-alives), but no answer content for longer than
    /// `stream_idle_timeout`.
    #[error("`{client}` sent no answer content for {}s (only keep-alives or incomplete data) — the `stream_idle_timeout` limit; raise it for slow models", .after.as_secs())]
    IdleTimeout {
        /// Client name.
        client: String,
        /// The limit that elapsed.
        after: Duration,
    },
    /// The whole request, from sending it to the end of the answer, took longer than
    /// `request_timeout`.
    #[error("`{client}` did not finish the answer within {}s — the `request_timeout` limit for one request; raise it (0 = no limit) for very long answers", .after.as_secs())]
    RequestTimeout {
        /// Client name.
        client: String,
        /// The limit that elapsed.
        after: Duration,
    },
    /// One streamed event (an SSE event, an NDJSON line, an event-stream frame) or a whole
    /// non-streamed body grew past `max_stream_event_size`.
    #[error("`{client}` sent a single {what} larger than {} — the `max_stream_event_size` limit; the answer so far is kept", super::http::human_size(*.limit))]
    TooLarge {
        /// Client name.
        client: String,
        /// What grew too large ("stream event", "response body").
        what: &'static str,
        /// The limit in bytes.
        limit: usize,
    },
    /// A success status with a body that is not what the protocol sends (an HTML login
    /// page, a plain-text notice from a proxy).
    #[error(
        "`{client}` answered HTTP {status} with `{content_type}` instead of {expected}: {snippet} — check the client's api_base and any proxy in between"
    )]
    UnexpectedContent {
        /// Client name.
        client: String,
        /// Status code.
        status: u16,
        /// The `Content-Type` that arrived (`none` when absent).
        content_type: String,
        /// What was expected ("an event stream", "JSON").
        expected: &'static str,
        /// The page title or the start of the text.
        snippet: String,
    },
    /// The connection closed before the answer was complete.
    #[error("the connection to `{client}` was cut before the answer finished: {message}")]
    StreamCut {
        /// Client name.
        client: String,
        /// Cause.
        message: String,
    },
    /// The provider sent something that does not follow its protocol.
    #[error("`{client}` sent a malformed response: {message}")]
    Protocol {
        /// Client name.
        client: String,
        /// What was wrong.
        message: String,
    },
    /// The provider reported an error inside a streamed answer.
    #[error("`{client}` stopped with an error: {message}")]
    Upstream {
        /// Client name.
        client: String,
        /// Provider's message.
        message: String,
    },
    /// The user cancelled.
    #[error("cancelled")]
    Cancelled,
    /// Misconfiguration detected when building the HTTP client (bad proxy URL …).
    #[error("client `{client}`: {message}")]
    Setup {
        /// Client name.
        client: String,
        /// What is wrong.
        message: String,
    },
}

impl ProviderError {
    /// Whether sending the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. }
                | Self::Server { .. }
                | Self::Connect { .. }
                | Self::Closed { .. }
        )
    }

    /// The delay the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } | Self::Server { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }
}
