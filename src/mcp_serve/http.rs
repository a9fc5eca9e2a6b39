//! `loki --mcp-server ADDR`: MCP's streamable HTTP transport at `http://ADDR/mcp`, on
//! loopback only. A POST carries one JSON-RPC message: a request is answered in the
//! response body (`application/json`), a notification gets `202 Accepted`. `initialize`
//! opens a session (`Mcp-Session-Id`), which a DELETE ends, stopping its running calls;
//! a request without a session header is served without one (and cannot be cancelled:
//! its id is only unique within a session). The server sends nothing on its own, so a
//! GET for an event stream gets `405`. A request runs as a task of its own: a client
//! that hangs up stops it, and its conversation is still closed and saved.
//!
//! A web page the user visits must not reach it: a request naming an `Origin` other than
//! the server's own is refused, and so is a `Host` that is not a loopback name (DNS
//! rebinding).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use anyhow::Context;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::LokiMcp;
use super::bounded;
use super::rpc::{self, Calls, Incoming, RpcError};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

/// Most sessions kept; opening one more ends the least recently used.
const MAX_SESSIONS: usize = 256;

/// One client's session.
#[derive(Default)]
struct Session {
    calls: Arc<Calls>,
    /// Stops every request of the session (DELETE, eviction, shutdown).
    cancel: CancellationToken,
    last_used: Mutex<Option<Instant>>,
}

impl Session {
    fn touch(&self) {
        *self
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
    }

    fn last_used(&self) -> Option<Instant> {
        *self
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

struct Served {
    server: LokiMcp,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    stop: CancellationToken,
}

impl Served {
    fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    fn open_session(&self) -> (String, Arc<Session>) {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let session = Arc::new(Session {
            cancel: self.stop.child_token(),
            ..Session::default()
        });
        session.touch();
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        // The least recently used goes, one with no request running if there is one.
        if sessions.len() >= MAX_SESSIONS
            && let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, s)| (!s.calls.idle(), s.last_used()))
                .map(|(id, _)| id.clone())
            && let Some(evicted) = sessions.remove(&oldest)
        {
            evicted.cancel.cancel();
        }
        sessions.insert(id.clone(), Arc::clone(&session));
        (id, session)
    }

    fn close_session(&self, id: &str) -> bool {
        let removed = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        removed.map(|s| s.cancel.cancel()).is_some()
    }
}

/// Serves at `http://addr/mcp` until Ctrl-C; the exit status.
pub async fn serve(server: LokiMcp, addr: &str) -> anyhow::Result<u8> {
    let terminal = server.state.terminal;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr().context("cannot read the address")?;
    if !local.ip().is_loopback() {
        anyhow::bail!(
            "the MCP server listens on loopback addresses only (127.0.0.1:PORT); it has no authentication"
        );
    }
    let stop = CancellationToken::new();
    let served = Arc::new(Served {
        server,
        sessions: Mutex::default(),
        stop: stop.clone(),
    });
    let app = axum::Router::new()
        .route(
            "/mcp",
            axum::routing::post(post)
                .get(no_stream)
                .delete(delete_session),
        )
        .layer(axum::extract::DefaultBodyLimit::max(bounded::MAX_LINE))
        .layer(axum::middleware::from_fn(same_origin_only))
        .with_state(served);
    let theme = crate::render::theme::Theme::stderr(&terminal);
    crate::term::session_note(
        &theme,
        &format!("loki: MCP server on http://{local}/mcp; Ctrl-C stops"),
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            stop.cancel();
        })
        .await
        .context("the MCP server stopped")?;
    Ok(0)
}

/// A JSON body with `status`.
fn json(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// An error answer outside any request (`id` null) with `status`.
fn refusal(status: StatusCode, code: i64, message: &str) -> Response {
    json(
        status,
        &rpc::failure(&Value::Null, &RpcError::new(code, message)),
    )
}

fn session_header(headers: &HeaderMap) -> Option<&str> {
    headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok())
}

/// Stops a request whose client went away (the handler is dropped mid-call).
struct CancelOnDrop(CancellationToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Why a request's session is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refused {
    /// The session ended (or never was).
    Ended,
    /// Not a protocol revision loki speaks.
    Version,
}

impl Refused {
    fn response(self) -> Response {
        match self {
            Self::Ended => refusal(
                StatusCode::NOT_FOUND,
                rpc::INVALID_REQUEST,
                "no such MCP session (it ended); initialise again",
            ),
            Self::Version => refusal(
                StatusCode::BAD_REQUEST,
                rpc::INVALID_REQUEST,
                &format!(
                    "unsupported MCP-Protocol-Version; loki speaks {}",
                    super::PROTOCOL_VERSIONS.join(", ")
                ),
            ),
        }
    }
}

/// The session a request names (none before `initialize`), kept alive; a session that
/// ended, or a revision other than one loki speaks, is refused.
fn session_of(served: &Served, headers: &HeaderMap) -> Result<Option<Arc<Session>>, Refused> {
    let Some(id) = session_header(headers) else {
        return Ok(None);
    };
    let session = served.session(id).ok_or(Refused::Ended)?;
    // Within a session the client names the revision `initialize` agreed on.
    if let Some(version) = headers.get(VERSION_HEADER)
        && !super::PROTOCOL_VERSIONS
            .iter()
            .any(|v| version.as_bytes() == v.as_bytes())
    {
        return Err(Refused::Version);
    }
    session.touch();
    Ok(Some(session))
}

async fn post(
    State(served): State<Arc<Served>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return refusal(
            StatusCode::BAD_REQUEST,
            rpc::PARSE_ERROR,
            "not a JSON-RPC message",
        );
    };
    let session = match session_of(&served, &headers) {
        Ok(session) => session,
        Err(refused) => return refused.response(),
    };
    let (id, method, params) = match Incoming::classify(message) {
        Incoming::Request { id, method, params } => (id, method, params),
        Incoming::Notification { method, params } => {
            if method == "notifications/cancelled"
                && let Some(session) = &session
            {
                session.calls.cancel(&params);
            }
            return StatusCode::ACCEPTED.into_response();
        }
        Incoming::Other => return StatusCode::ACCEPTED.into_response(),
        Incoming::Invalid => {
            return refusal(
                StatusCode::BAD_REQUEST,
                rpc::INVALID_REQUEST,
                "one JSON-RPC message per request (batches are not supported)",
            );
        }
    };
    let (opened, session) = match session {
        None if method == "initialize" => {
            let (id, session) = served.open_session();
            (Some(id), Some(session))
        }
        other => (None, other),
    };
    let (cancel, registered) = match &session {
        Some(session) => {
            let cancel = session.cancel.child_token();
            let registered = session.calls.start(&id, &cancel);
            (cancel, Some(registered))
        }
        None => (served.stop.child_token(), None),
    };
    // The client hanging up drops this handler: the request stops, but its task goes on
    // to close (and save) its conversation.
    let _hung_up = CancelOnDrop(cancel.clone());
    tracing::debug!(%method, "MCP request");
    let server = served.server.clone();
    let task = tokio::spawn(async move {
        let _registered = registered;
        server.answer(&method, &params, cancel).await
    });
    let result = task.await.unwrap_or_else(|e| {
        Err(RpcError::new(
            rpc::INTERNAL_ERROR,
            format!("the request stopped: {e}"),
        ))
    });
    if let Some(session) = &session {
        session.touch();
    }
    let mut response = json(StatusCode::OK, &rpc::response(&id, result));
    if let Some(opened) = opened
        && let Ok(value) = opened.parse()
    {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

async fn delete_session(State(served): State<Arc<Served>>, headers: HeaderMap) -> Response {
    match session_header(&headers) {
        Some(id) if served.close_session(id) => StatusCode::OK.into_response(),
        Some(_) => StatusCode::NOT_FOUND.into_response(),
        None => StatusCode::BAD_REQUEST.into_response(),
    }
}

async fn no_stream() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "POST, DELETE")],
        "loki's MCP server sends no events of its own",
    )
        .into_response()
}

/// Refuses requests from web pages: an `Origin` other than the server's own, or a `Host`
/// that is not a loopback name (a page on a name that was made to resolve to 127.0.0.1).
async fn same_origin_only(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if host.is_some_and(|h| !crate::origin::is_loopback_host(h)) {
        return (
            StatusCode::FORBIDDEN,
            "loki's MCP server answers only requests for a loopback host name",
        )
            .into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !crate::origin::origin_allowed(&[], origin, host) {
            return (
                StatusCode::FORBIDDEN,
                "requests from web pages are refused by loki's MCP server",
            )
                .into_response();
        }
    }
    next.run(request).await
}
