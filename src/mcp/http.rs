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
use rmcp::transport::auth::{AuthClient, AuthorizationManager};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

type HttpError = StreamableHttpError<reqwest::Error>;
type SseEvents = BoxStream<'static, Result<Sse, SseError>>;

/// The client of a streamable HTTP server: plain reqwest, or rmcp's OAuth client around
/// it for a server the user signed in to, recording answers refused for their size either
/// way. One type for both, so rmcp's transport worker (generic over the client) is
/// compiled once (issue 40).
#[derive(Clone)]
pub struct McpHttpClient {
    sender: Sender,
    refused: Arc<Mutex<Option<String>>>,
}

/// Who sends the requests.
#[derive(Clone)]
enum Sender {
    Plain(reqwest::Client),
    SignedIn(AuthClient<reqwest::Client>),
}

/// Runs the same call on whichever sender `sender` is.
macro_rules! either {
    ($sender:expr, |$c:ident| $call:expr) => {
        match $sender {
            Sender::Plain($c) => $call,
            Sender::SignedIn($c) => $call,
        }
    };
}

impl McpHttpClient {
    /// Sends with `http`, signed in through `manager` when there is one.
    pub fn new(http: reqwest::Client, manager: Option<AuthorizationManager>) -> Self {
        let sender = match manager {
            Some(manager) => Sender::SignedIn(AuthClient::new(http, manager)),
            None => Sender::Plain(http),
        };
        Self {
            sender,
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

/// Every post goes through `post_message_with_response_limits`, where the limits are
/// enforced and refusals recorded; streams opened by `get_stream*` are watched.
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
        let response = either!(&self.sender, |c| c
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await);
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
        either!(&self.sender, |c| c
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
        either!(&self.sender, |c| c
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await)
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
        either!(&self.sender, |c| c
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await)
        .map(|events| self.watch(events))
    }
}
