//! Responses: loki's error envelope `{"error":{"code","message","request_id"}}` with the
//! status of the core error's class, OpenAI's error shape for the OpenAI-compatible
//! endpoints, JSON bodies, and server-sent events.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::CoreError;

/// A failed request.
#[derive(Debug)]
pub struct ApiError {
    /// The status.
    pub status: StatusCode,
    /// A stable `snake_case` code.
    pub code: &'static str,
    /// One line; known secrets redacted.
    pub message: String,
    /// Answer in OpenAI's shape.
    pub openai: bool,
    /// Seconds to wait before retrying (`Retry-After`).
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An error of `status` with `code`.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: loki_wire::secrets::redact(&message.into()).into_owned(),
            openai: false,
            retry_after: None,
        }
    }

    /// With a `Retry-After` of `seconds`.
    #[must_use]
    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    /// A malformed request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }

    /// `503 unavailable`: something the server needs (the coordination database) is
    /// down; worth retrying.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message).retry_after(2)
    }

    /// Something that does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// The same error in OpenAI's shape.
    #[must_use]
    pub fn openai(mut self) -> Self {
        self.openai = true;
        self
    }
}

impl From<CoreError> for ApiError {
    fn from(e: CoreError) -> Self {
        Self::from(&e)
    }
}

impl From<&CoreError> for ApiError {
    fn from(e: &CoreError) -> Self {
        let class = e.class();
        let status =
            StatusCode::from_u16(class.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        Self::new(status, class.code(), e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = if self.openai {
            json!({"error": {"message": self.message, "type": self.code, "code": self.code}})
        } else {
            json!({"error": {"code": self.code, "message": self.message}})
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(seconds) = self.retry_after
            && let Ok(value) = HeaderValue::from_str(&seconds.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        response
    }
}

/// A JSON response's body, read back.
pub async fn body_json(response: Response) -> Option<Value> {
    let bytes = axum::body::to_bytes(response.into_body(), 16 * 1024 * 1024)
        .await
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The whole body of a chat completion the server answered itself, read back to be
/// given in another API's shape (legacy completions, Responses); empty when it cannot be
/// read (at most 64 MiB).
pub async fn answer_bytes(body: Body) -> bytes::Bytes {
    axum::body::to_bytes(body, 64 * 1024 * 1024)
        .await
        .unwrap_or_default()
}

/// A JSON body, known secrets redacted.
pub fn json_body(status: StatusCode, value: &Value) -> Response {
    let text = value.to_string();
    let clean = loki_wire::secrets::redact(&text).into_owned();
    let mut response = Response::new(Body::from(clean));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// How often a quiet event stream says it is alive (a comment line): proxies and the
/// server's own idle-connection timer never take a waiting run for a dead connection.
const SSE_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// A server-sent-events response whose events come from `events` (each already
/// `event: …\ndata: …\n\n` text), with a `: keep-alive` comment after
/// [`SSE_KEEP_ALIVE`] of silence.
pub fn sse(events: tokio::sync::mpsc::UnboundedReceiver<String>) -> Response {
    let stream = futures_util::stream::unfold(events, |mut rx| async move {
        let text = match tokio::time::timeout(SSE_KEEP_ALIVE, rx.recv()).await {
            Ok(Some(text)) => text,
            Ok(None) => return None,
            Err(_) => ": keep-alive\n\n".to_string(),
        };
        Some((
            Ok::<_, std::convert::Infallible>(bytes::Bytes::from(text)),
            rx,
        ))
    });
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// One SSE event, `data` redacted.
pub fn sse_event(event: Option<&str>, data: &str) -> String {
    let data = loki_wire::secrets::redact(data);
    match event {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}
