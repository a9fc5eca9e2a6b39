//! The legacy HTTP+SSE MCP transport, as an `rmcp` transport (rmcp 3 ships none): GET the
//! SSE stream, wait for the `endpoint` event (a URL, possibly relative), then POST each
//! JSON-RPC message there; answers and notifications arrive as `message` events.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{mpsc, oneshot};

use loki_wire::sse::{SseDecoder, SseEvent};

/// How long the server has to announce its endpoint.
const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(15);

/// Why a URL does not parse (`url::ParseError`, which reqwest does not re-export).
type UrlError = <reqwest::Url as std::str::FromStr>::Err;

/// A failure of the SSE transport: connecting, or sending a message.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    /// A configured header name is not valid.
    #[error("header `{0}` is not a valid name")]
    HeaderName(String),
    /// A configured header value is not valid.
    #[error("header `{0}` has characters that are not allowed")]
    HeaderValue(String),
    /// The server URL does not parse.
    #[error("bad url: {0}")]
    Url(#[source] UrlError),
    /// The server cannot be reached.
    #[error("cannot reach {url}: {message}")]
    Unreachable {
        /// The URL as configured.
        url: String,
        /// Why (the error chain).
        message: String,
    },
    /// Opening the stream was refused.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL as configured.
        url: String,
        /// HTTP status.
        status: u16,
    },
    /// No `endpoint` event in time.
    #[error("{0} sent no `endpoint` event")]
    NoEndpoint(String),
    /// The stream ended before the `endpoint` event.
    #[error("{0} closed the stream before sending its endpoint")]
    Closed(String),
    /// The `endpoint` event is not a URL.
    #[error("bad endpoint `{data}`: {source}")]
    BadEndpoint {
        /// The event's data.
        data: String,
        /// The parse error.
        source: UrlError,
    },
    /// The endpoint is on another origin than the stream.
    #[error(
        "{stream} named an endpoint on another origin ({endpoint}); refusing to send it credentials"
    )]
    ForeignEndpoint {
        /// The stream's URL (shown form).
        stream: String,
        /// The endpoint's URL (shown form).
        endpoint: String,
    },
    /// A message could not be posted.
    #[error("{0}")]
    Post(String),
    /// The server refused a posted message.
    #[error("the server answered HTTP {0}")]
    Refused(u16),
}

/// A connected SSE session.
pub struct SseTransport {
    http: reqwest::Client,
    endpoint: reqwest::Url,
    headers: reqwest::header::HeaderMap,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
}

/// Whether a POST status means the session is gone.
fn session_gone(status: reqwest::StatusCode) -> bool {
    matches!(status.as_u16(), 404 | 410)
}

fn header_map(headers: &BTreeMap<String, String>) -> Result<reqwest::header::HeaderMap, SseError> {
    let mut map = reqwest::header::HeaderMap::new();
    for (k, v) in headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| SseError::HeaderName(k.clone()))?;
        let value = reqwest::header::HeaderValue::from_str(v)
            .map_err(|_| SseError::HeaderValue(k.clone()))?;
        map.insert(name, value);
    }
    Ok(map)
}

impl SseTransport {
    /// Opens the stream and waits for the endpoint.
    pub async fn connect(
        http: reqwest::Client,
        url: &str,
        headers: &BTreeMap<String, String>,
        max_message_size: usize,
    ) -> Result<Self, super::McpError> {
        Self::open(http, url, headers, max_message_size)
            .await
            .map_err(|e| super::McpError::Start(e.to_string()))
    }

    async fn open(
        http: reqwest::Client,
        url: &str,
        headers: &BTreeMap<String, String>,
        max_message_size: usize,
    ) -> Result<Self, SseError> {
        let base = reqwest::Url::parse(url).map_err(SseError::Url)?;
        let headers = header_map(headers)?;
        let response = http
            .get(base.clone())
            .headers(headers.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| SseError::Unreachable {
                url: url.to_string(),
                message: crate::client::http::error_chain(&e),
            })?;
        if !response.status().is_success() {
            return Err(SseError::Status {
                url: url.to_string(),
                status: response.status().as_u16(),
            });
        }
        let (tx, incoming) = mpsc::channel(64);
        let (endpoint_tx, endpoint_rx) = oneshot::channel();
        let reader = tokio::spawn(read_events(
            response,
            base.clone(),
            tx,
            endpoint_tx,
            max_message_size,
        ));
        let shown = shown_url(&base);
        let endpoint = tokio::time::timeout(ENDPOINT_TIMEOUT, endpoint_rx)
            .await
            .map_err(|_| SseError::NoEndpoint(shown.clone()))?
            .map_err(|_| SseError::Closed(shown.clone()))??;
        // Headers (tokens) go only where the stream came from.
        if endpoint.origin() != base.origin() {
            return Err(SseError::ForeignEndpoint {
                stream: shown,
                endpoint: shown_url(&endpoint),
            });
        }
        Ok(Self {
            http,
            endpoint,
            headers,
            incoming,
            reader,
        })
    }
}

/// [`shown_url`] of a URL given as text (cut at `?` when it does not parse).
pub(super) fn shown_url_str(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(parsed) => shown_url(&parsed),
        Err(_) => url.split(['?', '#']).next().unwrap_or(url).to_string(),
    }
}

/// A URL for messages: no query string or user info (where tokens hide).
fn shown_url(url: &reqwest::Url) -> String {
    format!(
        "{}://{}{}",
        url.scheme(),
        url.host_str().unwrap_or_default(),
        url.port().map(|p| format!(":{p}")).unwrap_or_default()
    ) + url.path()
}

async fn read_events(
    response: reqwest::Response,
    base: reqwest::Url,
    tx: mpsc::Sender<ServerJsonRpcMessage>,
    endpoint_tx: oneshot::Sender<Result<reqwest::Url, SseError>>,
    max_message_size: usize,
) {
    let mut endpoint_tx = Some(endpoint_tx);
    let mut body = response.bytes_stream();
    let mut decoder = SseDecoder::new();
    decoder.set_max_event((max_message_size > 0).then_some(max_message_size));
    let mut events: Vec<SseEvent> = Vec::new();
    loop {
        let ended = match body.next().await {
            Some(Ok(chunk)) => {
                // One message over `mcp_max_message_size` ends the connection at once
                // (its call fails) instead of being buffered without bound.
                let over = decoder.feed(&chunk, &mut events).is_err();
                if over {
                    tracing::warn!(
                        "MCP SSE: a message larger than mcp_max_message_size ({max_message_size} bytes); closing the connection"
                    );
                }
                over
            }
            Some(Err(e)) => {
                tracing::warn!(
                    "MCP SSE stream failed: {}",
                    crate::client::http::error_chain(&e)
                );
                decoder.finish(&mut events);
                true
            }
            None => {
                decoder.finish(&mut events);
                true
            }
        };
        for event in events.drain(..) {
            if event.event == "endpoint" {
                let data = event.data.trim();
                let resolved = base.join(data).map_err(|source| SseError::BadEndpoint {
                    data: event.data.clone(),
                    source,
                });
                if let Some(sender) = endpoint_tx.take() {
                    let _ = sender.send(resolved);
                }
                continue;
            }
            match serde_json::from_str::<ServerJsonRpcMessage>(&event.data) {
                Ok(message) => {
                    if tx.send(message).await.is_err() {
                        return;
                    }
                }
                Err(e) => tracing::warn!("MCP SSE: ignoring a message that is not JSON-RPC: {e}"),
            }
        }
        if ended {
            return; // dropping `tx` tells the client the connection closed
        }
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let http = self.http.clone();
        let endpoint = self.endpoint.clone();
        let mut headers = self.headers.clone();
        let mut standard = std::collections::HashMap::new();
        super::headers::complete(&item, &mut standard);
        for (name, value) in standard {
            headers.entry(name).or_insert(value);
        }
        let reader = self.reader.abort_handle();
        async move {
            let response = http
                .post(endpoint)
                .headers(headers)
                .json(&item)
                .send()
                .await
                .map_err(|e| SseError::Post(crate::client::http::error_chain(&e)))?;
            if response.status().is_success() {
                Ok(())
            } else {
                if session_gone(response.status()) {
                    // The server forgot this session: end the stream so the server counts
                    // as exited and is started afresh on next use.
                    reader.abort();
                }
                Err(SseError::Refused(response.status().as_u16()))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.reader.abort();
        std::future::ready(Ok(()))
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}
