//! `loki --serve`: the same conversations over HTTP. Every request that talks to a model
//! is a [`crate::conversation::Conversation`] run as a task ([`run`]); its events are the
//! engine's events, as server-sent events in the `stream-json` schema (loki's API) or as
//! OpenAI chunks (`/v1/chat/completions`). Sessions are the configured `SessionStore`, so
//! turns on one session follow each other and different sessions run in parallel.
//!
//! Around every route: a request id, bearer-key auth with scopes (`read` for GET,
//! `write` otherwise), a per-key rate limit, a limit on requests at once, CORS, the body
//! size limit, and one structured log line per request. See `docs/server.md`.

mod api;
pub mod auth;
mod metrics;
mod openai;
mod reply;
mod run;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio_util::sync::CancellationToken;

use crate::config::api::{ApiConfig, AuthConfig};
use crate::state::AppState;
use crate::tool::approve::ChannelApprover;
use reply::ApiError;

/// The running server's shared state.
pub struct Server {
    state: Arc<AppState>,
    api: ApiConfig,
    keys: auth::Keys,
    limiter: auth::RateLimiter,
    approvals: Mutex<HashMap<String, Arc<ChannelApprover>>>,
    /// Approval policies of sessions created here, by session id.
    policies: Mutex<HashMap<String, run::ApprovalPolicy>>,
    metrics: metrics::Metrics,
    /// Cancels every running turn (shutdown, after the grace period).
    shutdown: CancellationToken,
    /// Requests served at once.
    slots: tokio::sync::Semaphore,
}

/// Why the server cannot start.
fn refuse(message: &str) -> anyhow::Error {
    anyhow::anyhow!("cannot serve: {message}")
}

/// Where to listen: `--serve ADDR`, else `api.listen_addr`, else `serve_addr`, else
/// 127.0.0.1:3400.
pub fn listen_addr(state: &AppState, flag: Option<&str>) -> String {
    flag.filter(|a| !a.is_empty())
        .map(str::to_string)
        .or_else(|| {
            state
                .config
                .api
                .as_ref()
                .and_then(|a| a.listen_addr.clone())
        })
        .or_else(|| state.config.serve_addr.clone())
        .unwrap_or_else(|| crate::config::api::DEFAULT_LISTEN_ADDR.to_string())
}

/// Runs the server until SIGINT or SIGTERM; returns the exit status.
pub async fn serve(state: Arc<AppState>, addr_flag: Option<&str>) -> anyhow::Result<u8> {
    let api = state.config.api.clone().unwrap_or_default();
    if !api.enabled {
        return Err(refuse("`api.enabled` is false in config.yaml"));
    }
    let addr_text = listen_addr(&state, addr_flag);
    let addr: SocketAddr = addr_text
        .parse()
        .map_err(|_| refuse(&format!("`{addr_text}` is not an address (host:port)")))?;
    let Some(auth) = &api.auth else {
        return Err(refuse(
            "no `api.auth` in config.yaml: add keys (`loki --api-key-hash` makes one) or `mode: Disabled` for a loopback address",
        ));
    };
    match auth {
        AuthConfig::Disabled if !addr.ip().is_loopback() => {
            return Err(refuse(&format!(
                "auth is disabled, which is allowed only on a loopback address, not {addr}"
            )));
        }
        AuthConfig::StaticKeys { keys } if keys.is_empty() => {
            return Err(refuse("`api.auth.keys` is empty"));
        }
        _ => {}
    }
    if api.tools.enabled && api.tools.root.is_none() {
        return Err(refuse(
            "`api.tools.enabled` needs `api.tools.root`, the directory tools are confined to",
        ));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| refuse(&format!("cannot listen on {addr}: {e}")))?;
    let local = listener.local_addr().unwrap_or(addr);
    let server = Arc::new(Server {
        keys: auth::Keys::new(auth, api.limits.rate_limit_per_minute),
        limiter: auth::RateLimiter::default(),
        approvals: Mutex::new(HashMap::new()),
        policies: Mutex::new(HashMap::new()),
        metrics: metrics::Metrics::default(),
        shutdown: CancellationToken::new(),
        slots: tokio::sync::Semaphore::new(api.limits.max_concurrent_requests.max(1)),
        state,
        api,
    });
    let mode = if server.keys.disabled() {
        "auth disabled"
    } else {
        "bearer keys"
    };
    let theme = crate::render::theme::Theme::stderr(&server.state.terminal);
    crate::term::session_note(
        &theme,
        &format!("loki: serving on http://{local} ({mode}); Ctrl-C stops"),
    );
    tracing::info!(%local, mode, "server started");
    let stop = CancellationToken::new();
    let signals = stop.clone();
    let mut listen = crate::signals::StopSignals::listen(true)
        .map_err(|e| refuse(&format!("cannot listen for signals: {e}")))?;
    tokio::spawn(async move {
        let _ = listen.recv().await;
        signals.cancel();
    });
    let app = router(Arc::clone(&server));
    let graceful = stop.clone();
    let serving = axum::serve(listener, app).with_graceful_shutdown(async move {
        graceful.cancelled().await;
    });
    let server_for_grace = Arc::clone(&server);
    let result = tokio::select! {
        result = serving => result,
        // Stopping: running turns get the grace period, then are cancelled (their
        // sessions are saved with what arrived) and the connections are closed.
        () = async {
            stop.cancelled().await;
            let grace = Duration::from_secs(server_for_grace.api.shutdown_grace_seconds);
            let deadline = Instant::now() + grace;
            while server_for_grace.metrics.active() > 0 && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            server_for_grace.shutdown.cancel();
            let saved = Instant::now() + Duration::from_secs(5);
            while server_for_grace.metrics.active() > 0 && Instant::now() < saved {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        } => Ok(()),
    };
    result.map_err(|e| refuse(&e.to_string()))?;
    crate::term::session_note(&theme, "loki: server stopped");
    Ok(0)
}

fn router(server: Arc<Server>) -> Router {
    let body_limit = server.api.limits.max_body_bytes;
    Router::new()
        .route("/", get(page))
        .route("/app.js", get(script))
        .route("/healthz/live", get(|| async { "ok" }))
        .route("/healthz/ready", get(api::ready))
        .route("/metrics", get(api::metrics))
        .route("/v1/info", get(api::info))
        .route("/v1/models", get(openai::models))
        .route("/v1/roles", get(api::roles))
        .route("/v1/agents", get(api::agents))
        .route("/v1/rags", get(api::rags))
        .route("/v1/chat/completions", post(openai::chat_completions))
        .route("/v1/embeddings", post(openai::embeddings))
        .route("/v1/rerank", post(openai::rerank))
        .route("/v1/completions", post(api::completions))
        .route(
            "/v1/sessions",
            post(api::create_session).get(api::list_sessions),
        )
        .route(
            "/v1/sessions/{id}",
            get(api::get_session).delete(api::delete_session),
        )
        .route(
            "/v1/sessions/{id}/completions",
            post(api::session_completions),
        )
        .route("/v1/sessions/{id}/compress", post(api::compress_session))
        .route("/v1/sessions/{id}/empty", post(api::empty_session))
        .route(
            "/v1/sessions/{id}/role",
            post(api::use_role).delete(api::exit_role),
        )
        .route(
            "/v1/sessions/{id}/agent",
            post(api::use_agent).delete(api::exit_agent),
        )
        .route(
            "/v1/sessions/{id}/rag",
            post(api::use_rag).delete(api::exit_rag),
        )
        .route(
            "/v1/sessions/{id}/approvals/{call_id}",
            post(api::session_approval),
        )
        .route("/v1/approvals/{call_id}", post(api::approval))
        .layer(axum::extract::DefaultBodyLimit::max(body_limit))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&server),
            guard,
        ))
        .with_state(server)
}

/// The playground's page (`assets/web/`, shipped in the binary). It asks for the key
/// itself; the API it calls checks it.
const PAGE: &str = include_str!("../../assets/web/index.html");
const SCRIPT: &str = include_str!("../../assets/web/app.js");
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
    img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

async fn page() -> Response {
    asset("text/html; charset=utf-8", PAGE)
}

async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

/// The caller of a request, put there by [`guard`].
#[derive(Debug, Clone)]
pub struct RequestInfo {
    /// `req_…`.
    pub id: String,
    /// Who called.
    pub caller: auth::Caller,
}

/// Request id, CORS, auth, scopes, rate limit, concurrency and the log line.
async fn guard(State(server): State<Arc<Server>>, mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = format!("req_{}", uuid::Uuid::new_v4().simple());
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .map(str::to_string);
    let allowed_origin = origin.filter(|o| {
        let allowed = &server.api.cors.allowed_origins;
        allowed.iter().any(|a| a == "*" || a == o)
    });
    let mut subject = String::from("-");
    let mut response = if method == Method::OPTIONS && allowed_origin.is_some() {
        StatusCode::NO_CONTENT.into_response()
    } else if path.starts_with("/healthz/") || path == "/" || path == "/app.js" {
        next.run(request).await
    } else {
        let bearer = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_string);
        let openai = path.starts_with("/v1/chat/")
            || matches!(
                path.as_str(),
                "/v1/models" | "/v1/embeddings" | "/v1/rerank"
            );
        let shape = |e: ApiError| if openai { e.openai() } else { e };
        match server.keys.check(bearer.as_deref()) {
            None => shape(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a valid API key is needed (Authorization: Bearer <key>)",
            ))
            .into_response(),
            Some(caller) => {
                subject.clone_from(&caller.subject);
                let scope = if method == Method::GET {
                    "read"
                } else {
                    "write"
                };
                if !caller.may(scope) {
                    shape(ApiError::new(
                        StatusCode::FORBIDDEN,
                        "forbidden",
                        format!("this key lacks the `{scope}` scope"),
                    ))
                    .into_response()
                } else if let Err(wait) = server.limiter.admit(&caller) {
                    let mut response = shape(ApiError::new(
                        StatusCode::TOO_MANY_REQUESTS,
                        "rate_limited",
                        format!("rate limit reached; retry in {wait} s"),
                    ))
                    .into_response();
                    if let Ok(value) = HeaderValue::from_str(&wait.to_string()) {
                        response.headers_mut().insert(header::RETRY_AFTER, value);
                    }
                    response
                } else {
                    match server.slots.acquire().await {
                        Ok(_slot) => {
                            request.extensions_mut().insert(RequestInfo {
                                id: id.clone(),
                                caller,
                            });
                            next.run(request).await
                        }
                        Err(_) => StatusCode::SERVICE_UNAVAILABLE.into_response(),
                    }
                }
            }
        }
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&id) {
        headers.insert("x-request-id", value);
    }
    if let Some(origin) = allowed_origin
        && let Ok(value) = HeaderValue::from_str(&origin)
    {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
        headers.insert(header::VARY, HeaderValue::from_static("origin"));
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("authorization, content-type"),
        );
        if server.api.cors.allow_credentials {
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
                HeaderValue::from_static("true"),
            );
        }
    }
    let status = response.status().as_u16();
    server.metrics.request(status, started.elapsed());
    tracing::info!(
        request_id = %id,
        %subject,
        %method,
        %path,
        status,
        ms = started.elapsed().as_millis() as u64,
        "request"
    );
    response
}
