//! `loki --serve`: the same conversations over HTTP. Every request that talks to a model
//! is a [`crate::conversation::Conversation`] run as a task ([`run`]); its events are the
//! engine's events, as server-sent events in the `stream-json` schema (loki's API) or as
//! OpenAI chunks (`/v1/chat/completions`). Sessions are the configured `SessionStore`, so
//! turns on one session follow each other and different sessions run in parallel.
//!
//! Around every route: a request id, bearer-key auth with scopes (`read` for GET,
//! `write` otherwise), a per-key rate limit, a limit on requests at once, CORS, the body
//! size limit, and one structured log line per request. See `docs/server.md`.

mod answer;
mod api;
pub mod auth;
mod chat_answer;
mod cluster;
mod gate;
mod jwt;
mod legacy;
mod listener;
mod metrics;
mod openai;
mod reply;
mod response_stream;
mod response_tools;
mod responses;
mod run;
mod run_log;
mod runs_api;
mod streamed;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
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
use reply::ApiError;

/// The running server's shared state.
pub struct Server {
    state: Arc<AppState>,
    /// `api:` of config.yaml, replaced when SIGHUP reloads it.
    api: RwLock<Arc<ApiConfig>>,
    /// The keys, replaced with `api` (their caches start afresh).
    keys: RwLock<Arc<auth::Keys>>,
    limiter: auth::RateLimiter,
    /// The runs open here, by request id (their approvals and answers go through them).
    live: Mutex<HashMap<String, run::Live>>,
    /// Streamed runs of this instance, by request id.
    streams: Arc<streamed::TrackedRuns>,
    /// The other instances on the same database, when sessions are in PostgreSQL.
    cluster: Option<Arc<cluster::Cluster>>,
    metrics: metrics::Metrics,
    /// Recent Responses API exchanges, for `previous_response_id`.
    responses: responses::Kept,
    /// Cancels every running turn (shutdown, after the grace period).
    shutdown: CancellationToken,
    /// A stop was asked for (SIGTERM, SIGINT): `/healthz/ready` says `stopping` and new
    /// work is refused while running turns get their grace period.
    stopping: CancellationToken,
    /// Requests served at once.
    slots: Arc<tokio::sync::Semaphore>,
    /// Where `execute_command` is confined: `api.tools.root` (made again when a reload
    /// names another root).
    sandbox: Mutex<Option<Arc<crate::sandbox::Sandbox>>>,
}

/// Why `api:` cannot be put in force (a SIGHUP reload), or a run's commands cannot be
/// confined to `api.tools.root`.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// `api.tools.root` cannot be resolved.
    #[error("api.tools.root {}: {source}", root.display())]
    Root {
        /// The root as configured.
        root: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The sandbox cannot be made.
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
    /// config.yaml cannot be read or parsed.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// config.yaml is no longer there.
    #[error("{} is gone", .0.display())]
    ConfigGone(std::path::PathBuf),
    /// The new `api:` has problems.
    #[error("{}", .0.join("; "))]
    Problems(Vec<String>),
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

/// The `api:` settings and the address to serve them on, or why they cannot be served.
fn checked(state: &AppState, addr_flag: Option<&str>) -> anyhow::Result<(ApiConfig, SocketAddr)> {
    let api = state.config.api.clone().unwrap_or_default();
    if !api.enabled {
        return Err(refuse("`api.enabled` is false in config.yaml"));
    }
    let addr_text = listen_addr(state, addr_flag);
    let mut problems = api.problems();
    let addr: Option<SocketAddr> = addr_text.parse().ok();
    if addr.is_none() {
        problems.push(format!("`{addr_text}` is not an address (host:port)"));
    }
    match (&api.auth, addr) {
        (None, _) => problems.push(
            "no `api.auth` in config.yaml: add keys (`loki --api-key-hash` makes one) or `mode: Disabled` for a loopback address".into(),
        ),
        (Some(AuthConfig::Disabled), Some(addr)) if !addr.ip().is_loopback() => {
            problems.push(format!(
                "auth is disabled, which is allowed only on a loopback address, not {addr}"
            ));
        }
        _ => {}
    }
    match addr {
        Some(addr) if problems.is_empty() => Ok((api, addr)),
        _ => Err(refuse(&problems.join("; "))),
    }
}

/// Runs the server until SIGINT or SIGTERM; returns the exit status.
pub async fn serve(state: Arc<AppState>, addr_flag: Option<&str>) -> anyhow::Result<u8> {
    let (api, addr) = checked(&state, addr_flag)?;
    if api.log_format == crate::config::api::LogFormat::Json {
        crate::logging::json::switch_on();
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| refuse(&format!("cannot listen on {addr}: {e}")))?;
    let local = listener.local_addr().unwrap_or(addr);
    let cluster = match state.config.session_store.as_deref() {
        Some(url) => Some(
            cluster::Cluster::join(
                url,
                Duration::from_secs(api.instance_timeout_seconds.max(1)),
            )
            .await
            .map_err(|e| refuse(&e.to_string()))?,
        ),
        None => None,
    };
    let keys = api
        .auth
        .as_ref()
        .map(|auth| auth::Keys::new(auth, api.limits.rate_limit_per_minute))
        .ok_or_else(|| refuse("no `api.auth` in config.yaml"))?;
    let server = Arc::new(Server::new(state, api, keys, cluster));
    let theme = crate::render::theme::Theme::stderr(&server.state.terminal);
    server.announce(local, &theme);
    let stop = server.stopping.clone();
    listen_for_signals(Arc::clone(&server), stop.clone(), local)
        .map_err(|e| refuse(&format!("cannot listen for signals: {e}")))?;
    let app = router(Arc::clone(&server));
    // Connections keep being served through the grace period (a load balancer reads
    // `stopping` from `/healthz/ready`; new work is refused); they close at shutdown.
    let graceful = server.shutdown.clone();
    let app = app.into_make_service_with_connect_info::<listener::ClientAddr>();
    let listener = listener::Deadlined {
        inner: listener,
        header_timeout: Duration::from_secs(server.api().limits.header_read_timeout_seconds),
    };
    let serving = axum::serve(listener, app).with_graceful_shutdown(async move {
        graceful.cancelled().await;
    });
    let result = tokio::select! {
        result = serving => result,
        () = server.wind_down(stop) => Ok(()),
    };
    result.map_err(|e| refuse(&e.to_string()))?;
    crate::term::session_note(&theme, "loki: server stopped");
    Ok(0)
}

impl Server {
    /// The server of `state`, serving `api` to the holders of `keys`.
    fn new(
        state: Arc<AppState>,
        api: ApiConfig,
        keys: auth::Keys,
        cluster: Option<Arc<cluster::Cluster>>,
    ) -> Self {
        Self {
            keys: RwLock::new(Arc::new(keys)),
            limiter: auth::RateLimiter::default(),
            live: Mutex::new(HashMap::new()),
            streams: Arc::default(),
            cluster,
            metrics: metrics::Metrics::default(),
            responses: responses::Kept::default(),
            shutdown: CancellationToken::new(),
            stopping: CancellationToken::new(),
            slots: Arc::new(tokio::sync::Semaphore::new(
                api.limits.max_concurrent_requests.max(1),
            )),
            sandbox: Mutex::new(None),
            state,
            api: RwLock::new(Arc::new(api)),
        }
    }

    /// Says where it serves, and starts what the first requests would each wait for.
    fn announce(self: &Arc<Self>, local: SocketAddr, theme: &crate::render::theme::Theme) {
        let mode = match self.api().auth {
            Some(AuthConfig::Disabled) => "auth disabled",
            Some(AuthConfig::Jwt(_)) => "JWT",
            _ => "bearer keys",
        };
        crate::term::session_note(
            theme,
            &format!("loki: serving on http://{local} ({mode}); Ctrl-C stops"),
        );
        tracing::info!(%local, mode, "server started");
        if let Some(cluster) = &self.cluster {
            self.follow_signals(cluster);
            tracing::info!(
                instance = cluster.instance(),
                "coordinating with other instances through the session database"
            );
        }
        warn_if_unconfinable(&self.api(), theme);
        // What the first requests would each wait for is made at once, off the request
        // threads: the model catalogue and the tokenizer's vocabulary.
        let state = Arc::clone(&self.state);
        drop(tokio::task::spawn_blocking(move || {
            let _ = state
                .providers
                .default_chat_model(state.config.model.as_deref());
            crate::tokens::count_o200k("warm");
        }));
    }

    /// Once `stop` is asked for: running turns get the grace period, then are cancelled
    /// (their sessions are saved with what arrived) and the connections are closed.
    async fn wind_down(&self, stop: CancellationToken) {
        stop.cancelled().await;
        let grace = Duration::from_secs(self.api().shutdown_grace_seconds);
        let deadline = Instant::now() + grace;
        while self.metrics.active() > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.shutdown.cancel();
        let saved = Instant::now() + Duration::from_secs(5);
        while self.metrics.active() > 0 && Instant::now() < saved {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Says at start when `execute_command` would run unconfined or cannot run at all.
fn warn_if_unconfinable(api: &ApiConfig, theme: &crate::render::theme::Theme) {
    if !api.tools.enabled {
        return;
    }
    let note = if !api.tools.confine_commands {
        "loki: api.tools.confine_commands is off: execute_command runs with loki's own rights, outside api.tools.root too".to_string()
    } else {
        match crate::sandbox::probe() {
            Err(why) => format!(
                "loki: execute_command will be refused: {why} (api.tools.confine_commands: false runs it unconfined)"
            ),
            Ok(layers) if !layers.missing().is_empty() => format!(
                "loki: commands are sandboxed with {} only: {}",
                layers.describe(),
                layers.missing().join("; ")
            ),
            Ok(_) => return,
        }
    };
    tracing::warn!("{note}");
    crate::term::session_note(theme, &note);
}

/// SIGINT and SIGTERM stop the server (`stop`); SIGHUP reloads `api:` from config.yaml.
fn listen_for_signals(
    server: Arc<Server>,
    stop: CancellationToken,
    local: SocketAddr,
) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = interrupt.recv() => break,
                _ = terminate.recv() => break,
                Some(()) = hangup.recv() => {
                    let theme = crate::render::theme::Theme::stderr(&server.state.terminal);
                    match server.reload(local) {
                        Ok(()) => {
                            tracing::info!("reloaded api: from config.yaml");
                            crate::term::session_note(&theme, "loki: reloaded keys and limits");
                        }
                        Err(why) => {
                            tracing::warn!(%why, "reload refused; the running settings stay");
                            crate::term::session_note(
                                &theme,
                                &format!("loki: reload refused, the running settings stay: {why}"),
                            );
                        }
                    }
                }
            }
        }
        stop.cancel();
    });
    Ok(())
}

impl Server {
    /// The `api:` settings in force.
    /// The sandbox for `root`: commands confined (`workspace-write`, or the tighter mode
    /// of `sandbox:`) unless `api.tools.confine_commands` is off, and file tools held to
    /// the root either way; kept while the root and the mode stay the same.
    fn sandbox_for(
        &self,
        root: &std::path::Path,
    ) -> Result<Option<Arc<crate::sandbox::Sandbox>>, SetupError> {
        use crate::sandbox::SandboxMode;
        let mode = if self.api().tools.confine_commands {
            self.state
                .config
                .sandbox
                .mode
                .map_or(SandboxMode::WorkspaceWrite, |m| {
                    m.tighter(SandboxMode::WorkspaceWrite)
                })
        } else {
            SandboxMode::DangerFullAccess
        };
        let mut slot = self
            .sandbox
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let canonical = std::fs::canonicalize(root).map_err(|source| SetupError::Root {
            root: root.to_path_buf(),
            source,
        })?;
        if let Some(sandbox) = slot
            .as_ref()
            .filter(|s| s.root() == canonical && s.mode() == mode)
        {
            return Ok(Some(Arc::clone(sandbox)));
        }
        let rules = crate::config::permissions::Rules::new(&self.state.config.permissions);
        let sandbox = crate::conversation::confinement::build(
            &self.state,
            &canonical,
            mode,
            &[],
            &rules,
            true,
        )?;
        *slot = sandbox.clone();
        Ok(sandbox)
    }

    fn api(&self) -> Arc<ApiConfig> {
        Arc::clone(
            &self
                .api
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The keys in force.
    fn keys(&self) -> Arc<auth::Keys> {
        Arc::clone(
            &self
                .keys
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Reads `api:` from config.yaml again and puts its keys, scopes, rate limits, CORS
    /// origins and timeouts in force for the next requests (running ones finish as they
    /// started). A file with a problem changes nothing; the listening address, body
    /// limit and request slots stay as they were started.
    fn reload(&self, local: SocketAddr) -> Result<(), SetupError> {
        let paths = &self.state.paths;
        let text = crate::config::load::read(paths)?
            .ok_or_else(|| SetupError::ConfigGone(paths.config_file.clone()))?;
        let loaded = crate::config::load::parse(&text, &paths.config_file, &self.state.env)?;
        let api = loaded.config.api.unwrap_or_default();
        let mut problems = api.problems();
        match &api.auth {
            None => problems.push("no `api.auth`".into()),
            Some(AuthConfig::Disabled) if !local.ip().is_loopback() => problems.push(format!(
                "auth is disabled, which is allowed only on a loopback address, not {local}"
            )),
            _ => {}
        }
        let Some(auth) = api.auth.as_ref().filter(|_| problems.is_empty()) else {
            return Err(SetupError::Problems(problems));
        };
        let keys = auth::Keys::new(auth, api.limits.rate_limit_per_minute);
        *self
            .keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(keys);
        *self
            .api
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(api);
        Ok(())
    }
}

fn router(server: Arc<Server>) -> Router {
    let body_limit = server.api().limits.max_body_bytes;
    Router::new()
        .route("/", get(page))
        .route("/app.js", get(script))
        .route("/healthz/live", get(api::live))
        .route("/healthz/ready", get(api::ready))
        .route("/metrics", get(api::metrics))
        .route("/v1/info", get(api::info))
        .route("/v1/auth/check", get(api::auth_check).post(api::auth_check))
        .route("/v1/models", get(openai::models))
        .route("/v1/models/{*id}", get(openai::model))
        .route("/v1/roles", get(api::roles))
        .route("/v1/agents", get(api::agents))
        .route("/v1/rags", get(api::rags))
        .route("/v1/rags/{name}/rebuild", post(api::rebuild_rag))
        .route("/v1/chat/completions", post(openai::chat_completions))
        .route("/v1/embeddings", post(openai::embeddings))
        .route("/v1/responses", post(responses::create))
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
        .route(
            "/v1/runs/{run_id}/approvals/{call_id}",
            post(api::run_approval),
        )
        .route("/v1/runs/{run_id}", get(runs_api::status))
        .route("/v1/runs/{run_id}/events", get(runs_api::events))
        .route("/v1/runs/{run_id}/cancel", post(runs_api::cancel))
        .route(
            "/v1/runs/{run_id}/questions/{question_id}",
            post(runs_api::answer),
        )
        .fallback(no_route)
        .layer(axum::extract::DefaultBodyLimit::max(body_limit))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&server),
            guard,
        ))
        .with_state(server)
}

/// What `GET /v1/info` lists: every route of [`router`] but the playground's files, as
/// `METHOD path`. A test calls each of them and checks a route answers it.
pub(super) const ENDPOINTS: &[&str] = &[
    "GET /healthz/live",
    "GET /healthz/ready",
    "GET /metrics",
    "GET /v1/info",
    "POST /v1/auth/check",
    "GET /v1/models",
    "GET /v1/models/{id}",
    "GET /v1/roles",
    "GET /v1/agents",
    "GET /v1/rags",
    "POST /v1/rags/{name}/rebuild",
    "POST /v1/chat/completions",
    "POST /v1/embeddings",
    "POST /v1/responses",
    "POST /v1/rerank",
    "POST /v1/completions",
    "POST /v1/sessions",
    "GET /v1/sessions",
    "GET /v1/sessions/{id}",
    "DELETE /v1/sessions/{id}",
    "POST /v1/sessions/{id}/completions",
    "POST /v1/sessions/{id}/compress",
    "POST /v1/sessions/{id}/empty",
    "POST /v1/sessions/{id}/role",
    "DELETE /v1/sessions/{id}/role",
    "POST /v1/sessions/{id}/agent",
    "DELETE /v1/sessions/{id}/agent",
    "POST /v1/sessions/{id}/rag",
    "DELETE /v1/sessions/{id}/rag",
    "POST /v1/sessions/{id}/approvals/{call_id}",
    "POST /v1/approvals/{call_id}",
    "POST /v1/runs/{run_id}/approvals/{call_id}",
    "GET /v1/runs/{run_id}",
    "GET /v1/runs/{run_id}/events",
    "POST /v1/runs/{run_id}/cancel",
    "POST /v1/runs/{run_id}/questions/{question_id}",
];

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

/// A path no route answers: `404` with the error envelope, never an empty body.
async fn no_route(method: Method, uri: axum::http::Uri) -> Response {
    ApiError::not_found(format!(
        "there is no {method} {} here (GET /v1/info lists the API)",
        uri.path()
    ))
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

/// Request id, the gate (origin, host, body type), CORS, auth, scopes, rate limit,
/// concurrency, the security headers and the log line.
async fn guard(State(server): State<Arc<Server>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = format!("req_{}", uuid::Uuid::new_v4().simple());
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    // The route's template (`/v1/sessions/{id}`), so metrics do not grow per session.
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map_or_else(|| "other".to_string(), |m| m.as_str().to_string());
    let allowed_origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .filter(|o| {
            let allowed = &server.api().cors.allowed_origins;
            allowed
                .iter()
                .any(|a| a == "*" || a.eq_ignore_ascii_case(o))
        })
        .map(str::to_string);
    let openai = path.starts_with("/v1/chat/")
        || path.starts_with("/v1/models")
        || path.starts_with("/v1/responses")
        || matches!(path.as_str(), "/v1/embeddings" | "/v1/rerank");
    let shape = |e: ApiError| if openai { e.openai() } else { e };
    let mut subject = String::from("-");
    let health = path.starts_with("/healthz/") || path == "/metrics";
    let mut response = if let Err(refused) =
        gate::screen(&server.api(), server.keys().disabled(), &request)
    {
        shape(refused).into_response()
    } else if server.stopping.is_cancelled() && !health {
        shape(
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "stopping",
                "the server is stopping; send this to another instance",
            )
            .retry_after(1),
        )
        .into_response()
    } else if method == Method::OPTIONS && allowed_origin.is_some() {
        StatusCode::NO_CONTENT.into_response()
    } else {
        match gate::required_scopes(&method, &path) {
            None => next.run(request).await,
            Some(scopes) => match admit(&server, credentials(&server, &request), scopes).await {
                Err(refused) => shape(refused).into_response(),
                Ok((caller, slot)) => {
                    subject.clone_from(&caller.subject);
                    let mut request = request;
                    request.extensions_mut().insert(RequestInfo {
                        id: id.clone(),
                        caller,
                    });
                    // The slot is held until the answer's last byte, streams included.
                    next.run(request).await.map(|body| {
                        let stream =
                            futures_util::StreamExt::map(body.into_data_stream(), move |chunk| {
                                let _held = &slot;
                                chunk
                            });
                        axum::body::Body::from_stream(stream)
                    })
                }
            },
        }
    };
    if response.status().as_u16() >= 400 {
        response = with_request_id(response, &id).await;
    }
    let headers = response.headers_mut();
    gate::harden(headers);
    if let Ok(value) = HeaderValue::from_str(&id) {
        headers.insert("x-request-id", value);
    }
    if let Some(origin) = allowed_origin {
        cors_headers(&server, headers, &origin);
    }
    let status = response.status().as_u16();
    server.metrics.request(&route, status, started.elapsed());
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

/// An error response whose JSON body names the request (`error.request_id`), so a
/// client can quote it; other bodies are left as they are.
async fn with_request_id(response: Response, id: &str) -> Response {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 256 * 1024).await else {
        return Response::from_parts(parts, axum::body::Body::empty());
    };
    let body = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(mut value) if value["error"].is_object() && value["error"]["request_id"].is_null() => {
            value["error"]["request_id"] = serde_json::Value::String(id.to_string());
            axum::body::Body::from(value.to_string())
        }
        _ => axum::body::Body::from(bytes),
    };
    let mut response = Response::from_parts(parts, body);
    response.headers_mut().remove(header::CONTENT_LENGTH);
    response
}

/// The caller of `request` if its key is good, it holds one of `scopes` and is within
/// its rate, with its slot among the requests served at once.
async fn admit(
    server: &Server,
    (bearer, client): (Option<String>, std::net::IpAddr),
    scopes: &[&str],
) -> Result<(auth::Caller, tokio::sync::OwnedSemaphorePermit), ApiError> {
    let caller = match server.keys().check(bearer.as_deref(), client).await {
        Ok(caller) => caller,
        Err(auth::Refusal::Unknown) => {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a valid API key is needed (Authorization: Bearer <key>)",
            ));
        }
        Err(auth::Refusal::Throttled(wait)) => {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!("too many wrong keys from this address; retry in {wait} s"),
            )
            .retry_after(wait));
        }
    };
    // No scope named (`/v1/auth/check`): any valid key.
    if !scopes.is_empty() && !scopes.iter().any(|scope| caller.may(scope)) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("this key lacks the `{}` scope", scopes.join("` or `")),
        ));
    }
    if let Err(wait) = server.limiter.admit(&caller) {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!("rate limit reached; retry in {wait} s"),
        )
        .retry_after(wait));
    }
    let slot = Arc::clone(&server.slots)
        .acquire_owned()
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "the server is stopping",
            )
        })?;
    Ok((caller, slot))
}

/// The bearer key a request presents and the address it comes from (through the
/// `api.trusted_proxies` in front, the client their `X-Forwarded-For` names).
fn credentials(server: &Server, request: &Request) -> (Option<String>, std::net::IpAddr) {
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token)
        .map(str::to_string);
    let client = request
        .extensions()
        .get::<axum::extract::ConnectInfo<listener::ClientAddr>>()
        .map_or(std::net::IpAddr::from([127, 0, 0, 1]), |c| c.0.0.ip());
    (
        bearer,
        forwarded_client(&server.api(), request.headers(), client),
    )
}

/// The token of an `Authorization: Bearer <token>` value; the scheme is
/// case-insensitive (RFC 9110), as `bearer` from many clients.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// The client behind `peer` when `peer` is a trusted proxy: the last `X-Forwarded-For`
/// address that is not a trusted proxy (each proxy appends the address it saw, so the
/// ones before are the client's own word). `peer` otherwise.
fn forwarded_client(
    api: &crate::config::api::ApiConfig,
    headers: &axum::http::HeaderMap,
    peer: std::net::IpAddr,
) -> std::net::IpAddr {
    let proxies: Vec<crate::config::api::Network> = api
        .trusted_proxies
        .iter()
        .filter_map(|p| crate::config::api::Network::parse(p))
        .collect();
    let trusted = |addr: std::net::IpAddr| proxies.iter().any(|p| p.contains(addr));
    if !trusted(peer) {
        return peer;
    }
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .collect();
    for hop in hops.into_iter().rev() {
        // What a proxy wrote that is not an address ends the walk: the hops before it
        // cannot be told from the client's own.
        let Ok(addr) = hop.trim().parse::<std::net::IpAddr>() else {
            return peer;
        };
        if !trusted(addr) {
            return addr;
        }
    }
    peer
}

fn cors_headers(server: &Server, headers: &mut axum::http::HeaderMap, origin: &str) {
    let Ok(value) = HeaderValue::from_str(origin) else {
        return;
    };
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
    if server.api().cors.allow_credentials {
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
            HeaderValue::from_static("true"),
        );
    }
}
