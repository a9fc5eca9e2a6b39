//! What every HTTP provider does the same way: send one prepared request (after patches),
//! then turn the reply into a [`ProviderStream`] — a streamed body through a
//! [`Decoder`], or a whole body parsed at once.
//!
//! A provider module only supplies the pure parts: the request it wants to send and a
//! decoder for its framing (SSE with its own JSON events, or AWS event-stream).

use futures_util::future::BoxFuture;
use std::time::Instant;

use bytes::Bytes;
use reqwest::header::HeaderName;
use serde_json::Value;

use super::bedrock::SigningError;
use super::http::{
    HttpSettings, RequestStarted, body_snippet, content_type_of, error_chain, next_chunk,
    next_wait, post_json, time_left, waited_error,
};
use super::patch::ApiKind;
use super::sse::{SseDecoder, SseEvent};
use super::{Model, ProviderError, ProviderEvent, ProviderStream};

/// A request about to be sent: what patches and the debug log see.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// Full URL, query included.
    pub url: String,
    /// Extra headers (`Content-Type: application/json` is always sent).
    pub headers: Vec<(String, String)>,
    /// JSON body.
    pub body: Value,
}

impl Outgoing {
    /// A request to `url` with `body` and no extra headers.
    pub fn new(url: impl Into<String>, body: Value) -> Self {
        Self {
            url: url.into(),
            headers: Vec::new(),
            body,
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }
}

/// Why a streamed body could not be decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// Bytes that do not follow the provider's protocol.
    #[error("{0}")]
    Malformed(String),
    /// The provider reported an error inside the stream.
    #[error("{0}")]
    Upstream(String),
    /// One event is larger than the limit (bytes) set with [`Decoder::set_max_event`].
    #[error("an event larger than {0} bytes")]
    TooLarge(usize),
}

/// Why a whole (non-streamed) body gave no events.
#[derive(Debug, thiserror::Error)]
pub enum ResponseError {
    /// The body is not JSON.
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The body does not follow the protocol, or reports an error.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

/// Parses one event's JSON; the error quotes the start of the offending data.
pub fn parse_json(data: &str) -> Result<Value, DecodeError> {
    serde_json::from_str(data).map_err(|e| {
        let preview: String = data.chars().take(80).collect();
        DecodeError::Malformed(format!("invalid JSON ({e}) in `{preview}`"))
    })
}

/// Turns the bytes of a streamed reply into events.
pub trait Decoder: Send + 'static {
    /// Feeds one network read.
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError>;
    /// The body ended; flush anything buffered.
    fn finish(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError>;
    /// Whether the provider's end-of-answer marker has been seen.
    fn complete(&self) -> bool;
    /// Sets the largest single event (SSE event, NDJSON line, event-stream frame) the
    /// decoder accepts; a larger one makes `feed` fail with [`DecodeError::TooLarge`] as
    /// soon as it is known, so one endless line cannot eat memory.
    fn set_max_event(&mut self, max: Option<usize>);
}

/// The JSON half of an SSE protocol: one dispatched event at a time.
pub trait SseParser: Send + 'static {
    /// Decodes one event.
    fn event(&mut self, event: &SseEvent, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError>;
    /// Whether the end-of-answer marker has been seen.
    fn complete(&self) -> bool;
}

/// A [`Decoder`] for SSE bodies, delegating each event to `P`.
pub struct Sse<P> {
    framing: SseDecoder,
    parser: P,
    scratch: Vec<SseEvent>,
}

impl<P: SseParser> Sse<P> {
    /// Wraps an event parser.
    pub fn new(parser: P) -> Self {
        Self {
            framing: SseDecoder::new(),
            parser,
            scratch: Vec::new(),
        }
    }

    fn drain(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        let mut result = Ok(());
        for event in self.scratch.drain(..) {
            if let Err(e) = self.parser.event(&event, out) {
                result = Err(e);
                break;
            }
        }
        self.scratch.clear();
        result
    }
}

impl<P: SseParser> Decoder for Sse<P> {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        let fed = self.framing.feed(bytes, &mut self.scratch);
        // Events completed before an oversized one are still delivered.
        self.drain(out)?;
        fed.map_err(|e| DecodeError::TooLarge(e.limit))
    }

    fn finish(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        self.framing.finish(&mut self.scratch);
        self.drain(out)
    }

    fn complete(&self) -> bool {
        self.parser.complete()
    }

    fn set_max_event(&mut self, max: Option<usize>) {
        self.framing.set_max_event(max);
    }
}

/// Signs a final request: given its URL, headers and body bytes, returns headers to add.
pub type Signer<'a> = dyn Fn(&str, &[(String, String)], &[u8]) -> Signed + Sync + 'a;

/// What a [`Signer`] returns: the headers to add.
pub type Signed = Result<Vec<(String, String)>, SigningError>;

/// Applies patches, logs the final request at debug level, and POSTs it. Non-success
/// statuses become classified errors.
pub async fn send(
    http: &reqwest::Client,
    settings: &HttpSettings,
    model: &Model,
    api: ApiKind,
    request: Outgoing,
) -> Result<reqwest::Response, ProviderError> {
    send_signed(http, settings, model, api, request, &|_, _, _| {
        Ok(Vec::new())
    })
    .await
}

/// [`send`], with `signer` run on the final (patched) request.
#[inline(never)]
pub fn send_signed<'a>(
    http: &'a reqwest::Client,
    settings: &'a HttpSettings,
    model: &'a Model,
    api: ApiKind,
    mut request: Outgoing,
    signer: &'a Signer<'_>,
) -> BoxFuture<'a, Result<reqwest::Response, ProviderError>> {
    Box::pin(async move {
        if let Some(message) = &settings.broken {
            return Err(ProviderError::Setup {
                client: settings.client.clone(),
                message: message.clone(),
            });
        }
        settings.patches.apply(model, api, &mut request);
        if tracing::enabled!(tracing::Level::DEBUG) {
            tracing::debug!(url = %request.url, body = %super::loggable::request_body(&request.body), "request");
        }
        let setup = |message: String| ProviderError::Setup {
            client: settings.client.clone(),
            message,
        };
        let body = serde_json::to_vec(&request.body).map_err(|e| setup(e.to_string()))?;
        let signed = signer(&request.url, &request.headers, &body)
            .map_err(|e| setup(format!("cannot sign the request: {e}")))?;
        request.headers.extend(signed);
        let mut headers = Vec::with_capacity(request.headers.len());
        for (name, value) in request.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| setup(format!("`{name}` is not a valid header name")))?;
            headers.push((name, value));
        }
        post_json(
            http,
            settings,
            &request.url,
            &headers,
            body,
            model.real_name(),
        )
        .await
    })
}

/// The response's `Content-Type` starts with `prefix`.
pub fn content_type_is(response: &reqwest::Response, prefix: &str) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with(prefix))
}

/// Reads a whole body within the read timeout (and what is left of `request_timeout`),
/// refusing one larger than `max_stream_event_size`.
pub async fn whole_body(
    mut response: reqwest::Response,
    settings: &HttpSettings,
) -> Result<Bytes, ProviderError> {
    let started = response.extensions().get::<RequestStarted>().map(|s| s.0);
    let (wait, waited) = next_wait(settings, None, time_left(started, &settings.limits));
    let max = settings.limits.max_event;
    let read = async {
        let mut body = bytes::BytesMut::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| ProviderError::StreamCut {
                client: settings.client.clone(),
                message: error_chain(&e),
            })?
        {
            if let Some(max) = max
                && body.len() + chunk.len() > max
            {
                return Err(ProviderError::TooLarge {
                    client: settings.client.clone(),
                    what: "response body",
                    limit: max,
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body.freeze())
    };
    tokio::time::timeout(wait, read)
        .await
        .map_err(|_| waited_error(settings, waited))?
}

/// Reads a whole body and parses it with `parse`. A body that does not parse and was not
/// sent as JSON is reported for what it is (an HTML page, a plain-text notice).
pub async fn parse_whole<E: std::fmt::Display>(
    response: reqwest::Response,
    settings: &HttpSettings,
    parse: fn(&[u8]) -> Result<Vec<ProviderEvent>, E>,
) -> Result<ProviderStream, ProviderError> {
    let content_type = content_type_of(&response);
    let status = response.status().as_u16();
    let bytes = whole_body(response, settings).await?;
    let events = parse(&bytes).map_err(|e| {
        if content_type.contains("json") {
            ProviderError::Protocol {
                client: settings.client.clone(),
                message: crate::secrets::redact(&e.to_string()).into_owned(),
            }
        } else {
            unexpected(settings, status, content_type.clone(), "JSON", &bytes)
        }
    })?;
    Ok(Box::pin(futures_util::stream::once(
        async move { Ok(events) },
    )))
}

fn unexpected(
    settings: &HttpSettings,
    status: u16,
    content_type: String,
    expected: &'static str,
    body: &[u8],
) -> ProviderError {
    ProviderError::UnexpectedContent {
        client: settings.client.clone(),
        status,
        content_type,
        expected,
        snippet: crate::secrets::redact(&body_snippet(body)).into_owned(),
    }
}

type Body = std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// How much of a streamed body is kept to describe it when it turns out not to be a stream.
const HEAD_BYTES: usize = 2048;

struct StreamState<D> {
    body: Body,
    decoder: D,
    settings: HttpSettings,
    finished: bool,
    pending_error: Option<ProviderError>,
    /// When the request was sent (for `request_timeout`).
    started: Instant,
    /// When the last event was decoded, or the stream began (for `stream_idle_timeout`).
    last_content: Instant,
    /// Whether any event was decoded at all.
    decoded_any: bool,
    /// The response's status and content type, and the first bytes of its body.
    status: u16,
    content_type: String,
    head: Vec<u8>,
}

impl<D: Decoder> StreamState<D> {
    fn decode_error(&self, e: DecodeError) -> ProviderError {
        if let Some(err) = self.not_a_stream() {
            return err;
        }
        let client = self.settings.client.clone();
        match e {
            DecodeError::Malformed(message) => ProviderError::Protocol {
                client,
                message: crate::secrets::redact(&message).into_owned(),
            },
            DecodeError::Upstream(message) => ProviderError::Upstream {
                client,
                message: crate::secrets::redact(&message).into_owned(),
            },
            DecodeError::TooLarge(limit) => ProviderError::TooLarge {
                client,
                what: "stream event",
                limit,
            },
        }
    }

    /// A body that yielded nothing and came as a document (`text/html`, `text/plain`)
    /// rather than a stream: say what arrived instead of "the connection was cut".
    fn not_a_stream(&self) -> Option<ProviderError> {
        let document = self.content_type.starts_with("text/")
            && !self.content_type.starts_with("text/event-stream");
        (document && !self.decoded_any).then(|| {
            unexpected(
                &self.settings,
                self.status,
                self.content_type.clone(),
                "an event stream",
                &self.head,
            )
        })
    }

    /// Feeds one read to the decoder.
    fn feed(&mut self, bytes: &[u8], events: &mut Vec<ProviderEvent>) -> Result<(), ProviderError> {
        if self.head.len() < HEAD_BYTES {
            let take = bytes.len().min(HEAD_BYTES - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
        }
        let fed = self.decoder.feed(bytes, events);
        self.decoded_any |= !events.is_empty();
        fed.map_err(|e| self.decode_error(e))
    }

    /// Waits for the next read, bounded by the silence, idle and total limits.
    async fn next(&mut self) -> Result<Option<Bytes>, ProviderError> {
        let limits = self.settings.limits;
        let now = Instant::now();
        let idle_left = limits
            .idle
            .map(|d| d.saturating_sub(now.duration_since(self.last_content)));
        let total_left = limits
            .total
            .map(|d| d.saturating_sub(now.duration_since(self.started)));
        let wait = next_wait(&self.settings, idle_left, total_left);
        if wait.0.is_zero() {
            return Err(waited_error(&self.settings, wait.1));
        }
        next_chunk(&mut self.body, &self.settings, wait).await
    }
}

/// Streams a body through `decoder`: one batch of events per network read. Events that
/// decoded before an error are delivered first; the error follows on the next poll. A body
/// that ends before the decoder saw the end-of-answer marker fails with `StreamCut` (or,
/// when nothing decodable arrived in a `text/*` body, with `UnexpectedContent`).
///
/// Three limits apply on top of `extra.read_timeout` (see [`super::http::RequestLimits`]):
/// no decoded event for `stream_idle_timeout` (keep-alive comments and a trickle of bytes
/// that never completes an event do not reset it), the whole request longer than
/// `request_timeout`, and one event larger than `max_stream_event_size`.
pub fn stream<D: Decoder>(
    response: reqwest::Response,
    settings: HttpSettings,
    mut decoder: D,
) -> ProviderStream {
    decoder.set_max_event(settings.limits.max_event);
    let now = Instant::now();
    let state = StreamState {
        started: response
            .extensions()
            .get::<RequestStarted>()
            .map_or(now, |s| s.0),
        last_content: now,
        decoded_any: false,
        status: response.status().as_u16(),
        content_type: content_type_of(&response),
        head: Vec::new(),
        body: Box::pin(response.bytes_stream()),
        decoder,
        settings,
        finished: false,
        pending_error: None,
    };
    Box::pin(futures_util::stream::unfold(state, |mut st| async move {
        if let Some(err) = st.pending_error.take() {
            return Some((Err(err), st));
        }
        if st.finished {
            return None;
        }
        let mut events = Vec::new();
        loop {
            let decoded = match st.next().await {
                Ok(Some(bytes)) => st.feed(&bytes, &mut events),
                Ok(None) => {
                    st.finished = true;
                    let finished = st.decoder.finish(&mut events);
                    st.decoded_any |= !events.is_empty();
                    finished.map_err(|e| st.decode_error(e))
                }
                Err(e) => Err(e),
            };
            if !events.is_empty() {
                st.decoded_any = true;
                st.last_content = Instant::now();
            }
            if let Err(e) = decoded {
                st.finished = true;
                st.pending_error = Some(e);
                break;
            }
            if st.finished {
                if !st.decoder.complete() {
                    st.pending_error =
                        Some(
                            st.not_a_stream()
                                .unwrap_or_else(|| ProviderError::StreamCut {
                                    client: st.settings.client.clone(),
                                    message: "the stream ended before the answer was complete"
                                        .into(),
                                }),
                        );
                }
                break;
            }
            if !events.is_empty() {
                break;
            }
        }
        if events.is_empty() {
            let err = st.pending_error.take()?;
            return Some((Err(err), st));
        }
        Some((Ok(events), st))
    }))
}
