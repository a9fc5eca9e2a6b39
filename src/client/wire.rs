//! What every HTTP provider does the same way: send one prepared request (after patches),
//! then turn the reply into a [`ProviderStream`] — a streamed body through a
//! [`Decoder`], or a whole body parsed at once.
//!
//! A provider's wire format is a [`WireFormat`]: the pure parts only — the request body,
//! the decoder for its framing (SSE with its own JSON events, NDJSON, or AWS
//! event-stream), and the parser of a whole reply. The error shape needs no hook: one
//! reader ([`loki_wire::error_text::error_message`]) understands every provider's error
//! body, and a decoder reports an error event as [`DecodeError::Upstream`].

use futures_util::future::BoxFuture;
use std::time::Instant;

use bytes::Bytes;
use reqwest::header::HeaderName;
use serde_json::Value;

use super::bedrock::SigningError;
use futures_util::StreamExt;
use loki_wire::body_stream::{self, Failure, Stop, Timing};
use loki_wire::body_stream::{DecodeError, Decoder, Sse, SseParser};

use super::http::{
    HttpSettings, RequestStarted, content_type_of, error_chain, next_wait, post_json, time_left,
    waited_error,
};
use super::patch::ApiKind;
use super::{ChatRequest, Model, ProviderError, ProviderStream};
use loki_wire::error_text::body_snippet;
use loki_wire::message::{Content, ContentPart, Message, Role, SignedReasoning, ToolCall};
use loki_wire::provider_event::ProviderEvent;

/// A request about to be sent: what patches and the debug log see.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// Full URL, query included.
    pub url: String,
    /// Extra headers (`Content-Type: application/json` is always sent).
    pub headers: Vec<(String, String)>,
    /// JSON body.
    pub body: Value,
    /// The body's `messages` array, already written as JSON (chat-completions requests:
    /// [`loki_wire::openai_wire::write_messages`]); [`Outgoing::into_bytes`] puts it into
    /// the body. A long history is written once, into bytes with room in front for the
    /// rest of the body, instead of through a `Value` tree.
    pub messages: Option<Vec<u8>>,
}

/// Room kept in front of written messages for the rest of the body (model, options,
/// tool declarations), so that joining them moves the bytes instead of copying them.
pub const BODY_HEAD_ROOM: usize = 64 * 1024;

impl Outgoing {
    /// A request to `url` with `body` and no extra headers.
    pub fn new(url: impl Into<String>, body: Value) -> Self {
        Self {
            url: url.into(),
            headers: Vec::new(),
            body,
            messages: None,
        }
    }

    /// The body as one `Value`, the written messages parsed back into it: for the debug
    /// log and for a patch that changes `messages`.
    pub fn whole_body(&self) -> Value {
        let mut body = self.body.clone();
        if let (Some(messages), Some(obj)) = (&self.messages, body.as_object_mut()) {
            let parsed = serde_json::from_slice(messages).unwrap_or(Value::Null);
            obj.insert("messages".into(), parsed);
        }
        body
    }

    /// Puts the written messages back into [`Outgoing::body`].
    pub fn merge_messages(&mut self) {
        if self.messages.is_some() {
            self.body = self.whole_body();
            self.messages = None;
        }
    }

    /// The body's bytes: the JSON of [`Outgoing::body`], with the written messages as its
    /// last member, joined in the messages' own buffer.
    pub fn body_bytes(&mut self) -> Result<Vec<u8>, serde_json::Error> {
        let head = loki_wire::json::to_vec(&self.body)?;
        let Some(mut messages) = self.messages.take() else {
            return Ok(head);
        };
        let Some((b'}', members)) = head.split_last() else {
            // Not an object: the messages have nowhere to go.
            self.messages = Some(messages);
            self.merge_messages();
            return loki_wire::json::to_vec(&self.body);
        };
        let mut prefix = members.to_vec();
        if members.len() > 1 {
            prefix.push(b',');
        }
        prefix.extend_from_slice(br#""messages":"#);
        messages.splice(0..0, prefix);
        messages.push(b'}');
        Ok(messages)
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }
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
    /// A chat-completions body that does not parse.
    #[error(transparent)]
    Chunk(#[from] loki_wire::openai_wire::ChunkError),
}

/// One provider wire format: how a chat request is written and its answer read.
pub trait WireFormat: Sync {
    /// The JSON body of `request` (before patches).
    fn body(&self, model: &Model, request: &ChatRequest) -> Value;

    /// The body as it is sent: [`WireFormat::body`], or a body without `messages` and the
    /// messages already written as JSON (see [`Outgoing::messages`]).
    fn body_parts(&self, model: &Model, request: &ChatRequest) -> (Value, Option<Vec<u8>>) {
        (self.body(model, request), None)
    }

    /// Whether the reply is a stream for [`WireFormat::decoder`] rather than one body for
    /// [`WireFormat::parse`]; by default, when it comes as `text/event-stream`.
    fn streamed(&self, response: &reqwest::Response, request: &ChatRequest) -> bool {
        let _ = request;
        content_type_is(response, "text/event-stream")
    }

    /// A decoder for one streamed reply.
    fn decoder(&self) -> Box<dyn Decoder>;

    /// The events of a whole reply.
    fn parse(&self, body: &[u8]) -> Result<Vec<ProviderEvent>, ResponseError>;
}

/// A [`WireFormat`] made of plain functions, its streams SSE decoded by a fresh `P`:
/// the shape of the Claude, Gemini and Cohere formats.
pub struct SseFormat<P> {
    body: fn(&Model, &ChatRequest) -> Value,
    parse: fn(&[u8]) -> Result<Vec<ProviderEvent>, ResponseError>,
    parser: std::marker::PhantomData<fn() -> P>,
}

impl<P> SseFormat<P> {
    /// The format that writes bodies with `body` and reads whole replies with `parse`.
    pub const fn new(
        body: fn(&Model, &ChatRequest) -> Value,
        parse: fn(&[u8]) -> Result<Vec<ProviderEvent>, ResponseError>,
    ) -> Self {
        Self {
            body,
            parse,
            parser: std::marker::PhantomData,
        }
    }
}

impl<P: SseParser + Default> WireFormat for SseFormat<P> {
    fn body(&self, model: &Model, request: &ChatRequest) -> Value {
        (self.body)(model, request)
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(Sse::new(P::default()))
    }

    fn parse(&self, body: &[u8]) -> Result<Vec<ProviderEvent>, ResponseError> {
        (self.parse)(body)
    }
}

/// The events of a reply in `format`: decoded as it streams, or parsed whole.
pub async fn reply(
    response: reqwest::Response,
    settings: &HttpSettings,
    request: &ChatRequest,
    format: &dyn WireFormat,
) -> Result<ProviderStream, ProviderError> {
    if format.streamed(&response, request) {
        Ok(stream(response, settings.clone(), format.decoder()))
    } else {
        parse_whole(response, settings, format).await
    }
}

/// A message's content as a format's list of parts: `text` makes a text part, `image`
/// an image part from its URL.
pub fn content_values(
    content: &Content,
    text: fn(&str) -> Value,
    image: fn(&str) -> Value,
) -> Vec<Value> {
    match content {
        Content::Text(t) => vec![text(t)],
        Content::Parts(parts) => parts
            .iter()
            .map(|part| match part {
                ContentPart::Text { text: t } => text(t),
                ContentPart::ImageUrl { image_url } => image(&image_url.url),
            })
            .collect(),
    }
}

/// The media type and base64 data of an inline image (`data:<type>;base64,<data>`, as
/// `-f` attaches files); `None` for a web URL, which each API takes its own way.
pub fn inline_image(url: &str) -> Option<(&str, &str)> {
    url.strip_prefix("data:")?.split_once(";base64,")
}

/// How a content-block format (Anthropic's Messages, Bedrock's Converse) writes each kind
/// of block; [`block_turns`] writes a conversation with them.
pub struct Blocks {
    /// A text block.
    pub text: fn(&str) -> Value,
    /// An image block, from the image's URL.
    pub image: fn(&str) -> Value,
    /// The signed reasoning that leads an assistant's tool-use turn (extended thinking).
    pub reasoning: fn(&SignedReasoning) -> Value,
    /// A tool call, given its arguments as JSON.
    pub tool_use: fn(&ToolCall, Value) -> Value,
    /// A tool result: the id of the call it answers, and its text.
    pub tool_result: fn(&str, String) -> Value,
}

/// Conversation messages as turns of content blocks, system messages left out (the format
/// carries them elsewhere). A tool result is a user turn, and consecutive results join one
/// turn (the API wants them right after the assistant's tool use); an assistant turn leads
/// with its signed reasoning, drops empty text and is left out when nothing remains.
pub fn block_turns(messages: &[Message], blocks: &Blocks) -> Vec<Value> {
    let content = |content: &Content| content_values(content, blocks.text, blocks.image);
    let mut out: Vec<Value> = Vec::new();
    for message in messages {
        let (role, parts) = match message.role {
            Role::System => continue,
            Role::User => ("user", content(&message.content)),
            Role::Tool => {
                let id = message.tool_call_id.as_deref().unwrap_or_default();
                let result = (blocks.tool_result)(id, message.text_content());
                ("user", vec![result])
            }
            Role::Assistant => {
                let mut parts: Vec<Value> =
                    message.reasoning.iter().map(blocks.reasoning).collect();
                let text = content(&message.content).into_iter();
                parts.extend(text.filter(|b| b["text"].as_str().is_none_or(|t| !t.is_empty())));
                let calls = message.tool_calls.iter();
                parts.extend(calls.map(|c| (blocks.tool_use)(c, arguments_value(&c.arguments))));
                if parts.is_empty() {
                    continue;
                }
                ("assistant", parts)
            }
        };
        push_turn(&mut out, role, parts);
    }
    out
}

/// Appends a turn of `role` with `content`; when the previous turn has the same role (tool
/// results after tool results), the content joins it instead, as APIs whose roles must
/// alternate want.
fn push_turn(turns: &mut Vec<Value>, role: &str, content: Vec<Value>) {
    if let Some(last) = turns.last_mut()
        && last["role"] == role
        && let Some(list) = last["content"].as_array_mut()
    {
        list.extend(content);
        return;
    }
    turns.push(serde_json::json!({"role": role, "content": content}));
}

/// A tool call's arguments as a JSON value; `{}` when the model wrote something that is
/// not JSON (the API would refuse the whole history otherwise).
pub fn arguments_value(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| serde_json::json!({}))
}

/// The first fragment of tool call `index`: its id and name as the provider gave them,
/// and its arguments (whole, or empty when they follow in [`call_arguments`] pieces).
pub fn call_started(
    index: usize,
    id: Option<&str>,
    name: Option<&str>,
    arguments: impl Into<String>,
) -> ProviderEvent {
    ProviderEvent::ToolCallDelta {
        index,
        id: id.map(str::to_string),
        name: name.map(str::to_string),
        arguments: arguments.into(),
    }
}

/// A further piece of tool call `index`'s arguments.
pub fn call_arguments(index: usize, arguments: impl Into<String>) -> ProviderEvent {
    ProviderEvent::ToolCallDelta {
        index,
        id: None,
        name: None,
        arguments: arguments.into(),
    }
}

/// Parses one event's JSON; the error quotes the start of the offending data.
pub fn parse_json(data: &str) -> Result<Value, DecodeError> {
    loki_wire::json::value_from_str(data).map_err(|e| {
        let preview: String = data.chars().take(80).collect();
        DecodeError::Malformed(format!("invalid JSON ({e}) in `{preview}`"))
    })
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
            tracing::debug!(url = %request.url, body = %super::loggable::request_body(&request.whole_body()), "request");
        }
        let setup = |message: String| ProviderError::Setup {
            client: settings.client.clone(),
            message,
        };
        let body = request.body_bytes().map_err(|e| setup(e.to_string()))?;
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

/// Reads a whole body and parses it in `format`. A body that does not parse and was not
/// sent as JSON is reported for what it is (an HTML page, a plain-text notice).
async fn parse_whole(
    response: reqwest::Response,
    settings: &HttpSettings,
    format: &dyn WireFormat,
) -> Result<ProviderStream, ProviderError> {
    let content_type = content_type_of(&response);
    let status = response.status().as_u16();
    let bytes = whole_body(response, settings).await?;
    let events = format.parse(&bytes).map_err(|e| {
        if content_type.contains("json") {
            ProviderError::Protocol {
                client: settings.client.clone(),
                message: loki_wire::secrets::redact(&e.to_string()).into_owned(),
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
        snippet: loki_wire::secrets::redact(&body_snippet(body)).into_owned(),
    }
}

/// What a stream's failure means for the user.
fn stream_error(
    settings: &HttpSettings,
    status: u16,
    content_type: &str,
    failure: Failure,
) -> ProviderError {
    let client = settings.client.clone();
    // A body that yielded nothing and came as a document (`text/html`, `text/plain`)
    // rather than a stream: say what arrived instead of "the connection was cut".
    let not_a_stream = || {
        let document =
            content_type.starts_with("text/") && !content_type.starts_with("text/event-stream");
        (document && !failure.decoded_any).then(|| {
            unexpected(
                settings,
                status,
                content_type.to_string(),
                "an event stream",
                &failure.head,
            )
        })
    };
    match failure.stop {
        Stop::Waited(waited) => waited_error(settings, waited),
        Stop::ReadTimeout => ProviderError::Timeout {
            client,
            after: settings.read_timeout,
        },
        Stop::Read(e) => ProviderError::StreamCut {
            client,
            message: error_chain(&e),
        },
        Stop::Cut => not_a_stream().unwrap_or(ProviderError::StreamCut {
            client,
            message: "the stream ended before the answer was complete".into(),
        }),
        Stop::Decode(e) => not_a_stream().unwrap_or_else(|| match e {
            DecodeError::Malformed(message) => ProviderError::Protocol {
                client,
                message: loki_wire::secrets::redact(&message).into_owned(),
            },
            DecodeError::Upstream(message) => ProviderError::Upstream {
                client,
                message: loki_wire::secrets::redact(&message).into_owned(),
            },
            DecodeError::TooLarge(limit) => ProviderError::TooLarge {
                client,
                what: "stream event",
                limit,
            },
        }),
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
/// `request_timeout`, and one event larger than `max_stream_event_size`. The loop itself
/// is [`loki_wire::body_stream::stream`].
pub fn stream(
    response: reqwest::Response,
    settings: HttpSettings,
    decoder: Box<dyn Decoder>,
) -> ProviderStream {
    let timing = Timing {
        read: settings.read_timeout,
        idle: settings.limits.idle,
        total: settings.limits.total,
        started: response
            .extensions()
            .get::<RequestStarted>()
            .map_or_else(Instant::now, |s| s.0),
    };
    let status = response.status().as_u16();
    let content_type = content_type_of(&response);
    let max_event = settings.limits.max_event;
    let batches = body_stream::stream(
        Box::pin(response.bytes_stream()),
        decoder,
        timing,
        max_event,
    );
    Box::pin(batches.map(move |batch| {
        batch.map_err(|failure| stream_error(&settings, status, &content_type, *failure))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with_messages(body: Value, messages: &str) -> Outgoing {
        let mut written = Vec::with_capacity(BODY_HEAD_ROOM + messages.len());
        written.extend_from_slice(messages.as_bytes());
        let mut outgoing = Outgoing::new("http://x/chat", body);
        outgoing.messages = Some(written);
        outgoing
    }

    #[test]
    fn written_messages_join_the_body_as_its_last_member() {
        let mut outgoing = with_messages(
            json!({"model": "m", "stream": true}),
            r#"[{"role":"user","content":"hi"}]"#,
        );
        let whole = outgoing.whole_body();
        let bytes = outgoing.body_bytes().unwrap();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#
        );
        assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap(), whole);
        let mut empty = with_messages(json!({}), "[]");
        assert_eq!(empty.body_bytes().unwrap(), br#"{"messages":[]}"#);
    }

    #[test]
    fn joining_written_messages_reuses_their_buffer() {
        let mut outgoing = with_messages(json!({"model": "m"}), r#"["x"]"#);
        let before = outgoing.messages.as_ref().map(Vec::as_ptr);
        let bytes = outgoing.body_bytes().unwrap();
        assert_eq!(before, Some(bytes.as_ptr()));
    }

    #[test]
    fn a_patch_of_the_messages_sees_them_whole() {
        let mut outgoing = with_messages(json!({"model": "m"}), r#"[{"role":"user"}]"#);
        outgoing.merge_messages();
        assert_eq!(outgoing.messages, None);
        assert_eq!(
            outgoing.body,
            json!({"model": "m", "messages": [{"role": "user"}]})
        );
        assert_eq!(
            outgoing.body_bytes().unwrap(),
            br#"{"model":"m","messages":[{"role":"user"}]}"#
        );
    }

    #[test]
    fn only_base64_data_urls_are_inline_images() {
        assert_eq!(
            inline_image("data:image/png;base64,AAAA"),
            Some(("image/png", "AAAA"))
        );
        assert_eq!(inline_image("https://example.com/a.png"), None);
        assert_eq!(inline_image("https://example.com/x;base64,AAAA"), None);
        assert_eq!(inline_image("data:text/plain,hello"), None);
    }

    #[test]
    fn turns_of_one_role_share_their_parts() {
        let mut turns = Vec::new();
        push_turn(&mut turns, "user", vec![json!("a")]);
        push_turn(&mut turns, "user", vec![json!("b")]);
        push_turn(&mut turns, "assistant", vec![json!("c")]);
        assert_eq!(
            turns,
            vec![
                json!({"role": "user", "content": ["a", "b"]}),
                json!({"role": "assistant", "content": ["c"]}),
            ]
        );
    }

    #[test]
    fn contents_and_arguments_in_a_format_s_shape() {
        let text = |t: &str| json!({"text": t});
        let image = |url: &str| json!({"image": url});
        let parts = Content::Parts(vec![
            ContentPart::Text { text: "hi".into() },
            ContentPart::ImageUrl {
                image_url: loki_wire::message::ImageUrl {
                    url: "https://x/a.png".into(),
                },
            },
        ]);
        assert_eq!(
            content_values(&parts, text, image),
            vec![json!({"text": "hi"}), json!({"image": "https://x/a.png"})]
        );
        assert_eq!(arguments_value(r#"{"a":1}"#), json!({"a": 1}));
        assert_eq!(arguments_value("{not json"), json!({}));
    }
}
