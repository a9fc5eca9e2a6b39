//! The HTTP client behind the streamable HTTP transport, wrapped to remember why an answer
//! was refused. rmcp enforces its size limits (set from `mcp_max_message_size`) by ending
//! the whole connection, and the call then sees only "Transport closed"; with the reason
//! recorded here the call can say which limit was hit and which key raises it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

type HttpError = StreamableHttpError<reqwest::Error>;
type SseEvents = BoxStream<'static, Result<Sse, SseError>>;

/// A reqwest client that records answers refused for their size.
#[derive(Clone)]
pub struct WatchedClient {
    inner: reqwest::Client,
    refused: Arc<Mutex<Option<String>>>,
}

impl WatchedClient {
    /// Wraps `inner`.
    pub fn new(inner: reqwest::Client) -> Self {
        Self {
            inner,
            refused: Arc::default(),
        }
    }

    /// Where refusals are recorded (taken by whoever reports them).
    pub fn refusals(&self) -> Arc<Mutex<Option<String>>> {
        Arc::clone(&self.refused)
    }

    fn watch(&self, events: SseEvents) -> SseEvents {
        let refused = Arc::clone(&self.refused);
        events
            .inspect(move |event| {
                if let Err(e) = event {
                    let reason = crate::client::http::error_chain(e);
                    if reason.contains("maximum size") {
                        record(&refused, reason);
                    }
                }
            })
            .boxed()
    }
}

fn record(slot: &Mutex<Option<String>>, reason: String) {
    tracing::warn!("MCP answer refused: {reason}");
    if let Ok(mut slot) = slot.lock() {
        *slot = Some(reason);
    }
}

impl StreamableHttpClient for WatchedClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut custom_headers = custom_headers;
        super::headers::complete(&message, &mut custom_headers);
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        match response {
            Ok(StreamableHttpPostResponse::Sse(events, session)) => {
                Ok(StreamableHttpPostResponse::Sse(self.watch(events), session))
            }
            Err(e @ StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                record(&self.refused, e.to_string());
                Err(e)
            }
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseEvents, HttpError> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
            .map(|events| self.watch(events))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseEvents, HttpError> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map(|events| self.watch(events))
    }
}

/// The client of a streamable HTTP server: [`WatchedClient`] itself, or wrapped in rmcp's
/// OAuth client for a server the user signed in to. One type for both, so rmcp's
/// transport worker (generic over the client) is compiled once (issue 40).
#[derive(Clone)]
pub enum McpHttpClient {
    Plain(WatchedClient),
    SignedIn(rmcp::transport::auth::AuthClient<WatchedClient>),
}

/// Runs the same call on whichever client `self` holds.
macro_rules! either {
    ($self:ident, |$c:ident| $call:expr) => {
        match $self {
            Self::Plain($c) => $call,
            Self::SignedIn($c) => $call,
        }
    };
}

impl StreamableHttpClient for McpHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        either!(self, |c| c
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        either!(self, |c| c
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        either!(self, |c| c
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        either!(self, |c| c
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseEvents, HttpError> {
        either!(self, |c| c
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseEvents, HttpError> {
        either!(self, |c| c
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await)
    }
}
