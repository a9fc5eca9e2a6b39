//! What every HTTP provider does the same way: send one prepared request (after patches),
//! then turn the reply into a [`ProviderStream`] — a streamed body through a
//! [`Decoder`], or a whole body parsed at once.
//!
//! A provider module only supplies the pure parts: the request it wants to send and a
//! decoder for its framing (SSE with its own JSON events, or AWS event-stream).

use bytes::Bytes;
use reqwest::header::HeaderName;
use serde_json::Value;

use super::http::{HttpSettings, error_chain, next_chunk, post_json};
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
#[derive(Debug, Clone, PartialEq)]
pub enum DecodeError {
    /// Bytes that do not follow the provider's protocol.
    Malformed(String),
    /// The provider reported an error inside the stream.
    Upstream(String),
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
        self.framing.feed(bytes, &mut self.scratch);
        self.drain(out)
    }

    fn finish(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        self.framing.finish(&mut self.scratch);
        self.drain(out)
    }

    fn complete(&self) -> bool {
        self.parser.complete()
    }
}

/// Signs a final request: given its URL, headers and body bytes, returns headers to add.
pub type Signer<'a> =
    dyn Fn(&str, &[(String, String)], &[u8]) -> Result<Vec<(String, String)>, String> + Sync + 'a;

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
pub async fn send_signed(
    http: &reqwest::Client,
    settings: &HttpSettings,
    model: &Model,
    api: ApiKind,
    mut request: Outgoing,
    signer: &Signer<'_>,
) -> Result<reqwest::Response, ProviderError> {
    if let Some(message) = &settings.broken {
        return Err(ProviderError::Setup {
            client: settings.client.clone(),
            message: message.clone(),
        });
    }
    settings.patches.apply(model, api, &mut request);
    if tracing::enabled!(tracing::Level::DEBUG) {
        tracing::debug!(url = %request.url, body = %super::loggable_body(&request.body), "request");
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
}

/// The response's `Content-Type` starts with `prefix`.
pub fn content_type_is(response: &reqwest::Response, prefix: &str) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with(prefix))
}

/// Reads a whole body within the read timeout.
pub async fn whole_body(
    response: reqwest::Response,
    settings: &HttpSettings,
) -> Result<Bytes, ProviderError> {
    tokio::time::timeout(settings.read_timeout, response.bytes())
        .await
        .map_err(|_| ProviderError::Timeout {
            client: settings.client.clone(),
            after: settings.read_timeout,
        })?
        .map_err(|e| ProviderError::StreamCut {
            client: settings.client.clone(),
            message: error_chain(&e),
        })
}

/// Reads a whole body and parses it with `parse`.
pub async fn parse_whole(
    response: reqwest::Response,
    settings: &HttpSettings,
    parse: fn(&[u8]) -> Result<Vec<ProviderEvent>, String>,
) -> Result<ProviderStream, ProviderError> {
    let bytes = whole_body(response, settings).await?;
    let events = parse(&bytes).map_err(|message| ProviderError::Protocol {
        client: settings.client.clone(),
        message,
    })?;
    Ok(Box::pin(futures_util::stream::once(
        async move { Ok(events) },
    )))
}

type Body = std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<Bytes>> + Send>>;

struct StreamState<D> {
    body: Body,
    decoder: D,
    settings: HttpSettings,
    finished: bool,
    pending_error: Option<ProviderError>,
}

fn decode_error(settings: &HttpSettings, e: DecodeError) -> ProviderError {
    match e {
        DecodeError::Malformed(message) => ProviderError::Protocol {
            client: settings.client.clone(),
            message,
        },
        DecodeError::Upstream(message) => ProviderError::Upstream {
            client: settings.client.clone(),
            message,
        },
    }
}

/// Streams a body through `decoder`: one batch of events per network read. Events that
/// decoded before an error are delivered first; the error follows on the next poll. A body
/// that ends before the decoder saw the end-of-answer marker fails with `StreamCut`.
pub fn stream<D: Decoder>(
    response: reqwest::Response,
    settings: HttpSettings,
    decoder: D,
) -> ProviderStream {
    let state = StreamState {
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
            let decoded = match next_chunk(&mut st.body, &st.settings).await {
                Ok(Some(bytes)) => st.decoder.feed(&bytes, &mut events),
                Ok(None) => {
                    st.finished = true;
                    st.decoder.finish(&mut events)
                }
                Err(e) => {
                    st.finished = true;
                    st.pending_error = Some(e);
                    Ok(())
                }
            };
            if let Err(e) = decoded {
                st.finished = true;
                st.pending_error = Some(decode_error(&st.settings, e));
            }
            if st.pending_error.is_some() {
                break;
            }
            if st.finished {
                if !st.decoder.complete() {
                    st.pending_error = Some(ProviderError::StreamCut {
                        client: st.settings.client.clone(),
                        message: "the stream ended before the answer was complete".into(),
                    });
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
