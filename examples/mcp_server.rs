//! A small MCP server for loki's tests, built with `rmcp`'s server side and spoken to over
//! stdio: read-only and writing tools, structured content, tool errors, a slow tool with
//! progress, one that reads its environment (secret injection), and one that crashes.
//! Its stderr lines show up in loki's log, not on the terminal.

#![allow(clippy::print_stderr, clippy::print_stdout)]

use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ElicitResult,
    InputRequests as InputRequestsMap, InputRequiredResult, ProgressNotificationParam,
    RequestMetaObject,
};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// Text to send back.
    text: String,
    /// How many times (default once; tests use it for huge results).
    times: Option<usize>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EnvArgs {
    /// Variable name.
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoteArgs {
    /// Line to append to $MCP_TEST_NOTES.
    line: String,
}

#[derive(Clone)]
struct TestServer;

#[tool_router]
impl TestServer {
    #[tool(description = "Echo the text back", annotations(read_only_hint = true))]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        format!("echo: {}", args.text.repeat(args.times.unwrap_or(1)))
    }

    #[tool(description = "Add two integers", annotations(read_only_hint = true))]
    async fn add(&self, Parameters(args): Parameters<AddArgs>) -> Json<Sum> {
        Json(Sum {
            sum: args.a + args.b,
        })
    }

    #[tool(description = "Append a line to the notes file (changes state)")]
    async fn note(&self, Parameters(args): Parameters<NoteArgs>) -> Result<String, String> {
        let path = std::env::var("MCP_TEST_NOTES").map_err(|_| "MCP_TEST_NOTES not set")?;
        let mut old = std::fs::read_to_string(&path).unwrap_or_default();
        old.push_str(&args.line);
        old.push('\n');
        std::fs::write(&path, old).map_err(|e| e.to_string())?;
        Ok("noted".into())
    }

    #[tool(description = "Always fails", annotations(read_only_hint = true))]
    async fn fail(&self) -> Result<String, String> {
        Err("boom: the tool failed on purpose".into())
    }

    #[tool(
        description = "Read an environment variable of the server",
        annotations(read_only_hint = true)
    )]
    async fn env_value(&self, Parameters(args): Parameters<EnvArgs>) -> String {
        std::env::var(&args.name).unwrap_or_else(|_| "(unset)".into())
    }

    #[tool(
        description = "Takes a while and reports progress",
        annotations(read_only_hint = true)
    )]
    async fn slow(&self, meta: RequestMetaObject, peer: Peer<RoleServer>) -> String {
        let token = meta.get_progress_token();
        for i in 0..3u32 {
            if let Some(token) = &token {
                let _ = peer
                    .notify_progress(
                        ProgressNotificationParam::new(token.clone(), f64::from(i))
                            .with_total(3.0)
                            .with_message("working"),
                    )
                    .await;
            }
            tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        }
        "slow done".into()
    }

    #[tool(
        description = "Reveals the `secret` tool (announces a tool-list change)",
        annotations(read_only_hint = true)
    )]
    async fn unlock(&self, peer: Peer<RoleServer>) -> String {
        UNLOCKED.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = peer.notify_tool_list_changed().await;
        let _ = peer.notify_prompt_list_changed().await;
        "unlocked".into()
    }

    #[tool(
        description = "Only listed after unlock",
        annotations(read_only_hint = true)
    )]
    async fn secret(&self) -> String {
        "the secret is 42".into()
    }

    #[tool(description = "Returns a 1x1 PNG", annotations(read_only_hint = true))]
    async fn picture(&self) -> rmcp::model::CallToolResult {
        rmcp::model::CallToolResult::success(vec![
            rmcp::model::ContentBlock::text("a tiny picture"),
            rmcp::model::ContentBlock::image("iVBORw0KGgo=", "image/png"),
        ])
    }

    #[tool(
        description = "Asks for the user's name with a form",
        annotations(read_only_hint = true)
    )]
    async fn ask_name(
        &self,
        peer: Peer<RoleServer>,
        InputResponses(responses): InputResponses,
        RequestState(state): RequestState,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        let form = serde_json::json!({
            "mode": "form",
            "message": "What should I call you?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "title": "Name"},
                    "tea": {"type": "boolean", "title": "Tea", "default": true}
                },
                "required": ["name"]
            }
        });
        let answer = match responses {
            // A 2026-07-28 retry: the answer comes with the state we asked it to echo.
            Some(responses) => {
                if state.as_deref() != Some("asked-name") {
                    return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                        "request state not echoed: {state:?}"
                    ))])
                    .into());
                }
                serde_json::from_value::<ElicitResult>(responses["name"].clone())
                    .map_err(|e| rmcp::ErrorData::invalid_params(e.to_string(), None))?
            }
            None => {
                let params = serde_json::from_value(form.clone())
                    .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
                match peer.create_elicitation(params).await {
                    Ok(answer) => answer,
                    // 2026-07-28 forbids server-to-client requests: ask in the result.
                    Err(_) => {
                        let request = serde_json::from_value(serde_json::json!({
                            "method": "elicitation/create", "params": form
                        }))
                        .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
                        let mut requests = InputRequestsMap::new();
                        requests.insert("name".to_string(), request);
                        return Ok(InputRequiredResult::new(
                            Some(requests),
                            Some("asked-name".into()),
                        )
                        .into());
                    }
                }
            }
        };
        let text = match answer.action {
            rmcp::model::ElicitationAction::Accept => {
                let content = answer.content.unwrap_or_default();
                format!(
                    "hello {} (tea: {})",
                    content["name"].as_str().unwrap_or("?"),
                    content["tea"]
                )
            }
            other => format!("no name: {other:?}"),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }

    #[tool(
        description = "Has the client's model summarise a text",
        annotations(read_only_hint = true)
    )]
    #[allow(deprecated)]
    async fn summarize(
        &self,
        peer: Peer<RoleServer>,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        let request = serde_json::json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "Summarise: llamas hum when content."}}],
            "systemPrompt": "You summarise in five words.",
            "maxTokens": 50
        });
        // MCP_TEST_SAMPLE_TIMES=N: ask N times in a row (a server that keeps sampling).
        let times: usize = std::env::var("MCP_TEST_SAMPLE_TIMES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        if times > 1 {
            let mut answered = 0;
            for _ in 0..times {
                let params = serde_json::from_value(request.clone())
                    .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
                if let Err(e) = peer.create_message(params).await {
                    let text = format!("stopped after {answered} answers: {e}");
                    return Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into());
                }
                answered += 1;
            }
            let text = format!("{answered} answers");
            return Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into());
        }
        let answer = match responses {
            Some(responses) => serde_json::from_value::<rmcp::model::CreateMessageResult>(
                responses["sample"].clone(),
            )
            .map_err(|e| rmcp::ErrorData::invalid_params(e.to_string(), None)),
            None => {
                let params = serde_json::from_value(request.clone())
                    .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
                match peer.create_message(params).await {
                    Ok(answer) => Ok(answer),
                    // The client said no.
                    Err(rmcp::ServiceError::McpError(e)) if e.message.contains("rejected") => {
                        Err(e)
                    }
                    // 2026-07-28 forbids server-to-client requests: ask in the result.
                    Err(_) => {
                        let input = serde_json::from_value(serde_json::json!({
                            "method": "sampling/createMessage", "params": request
                        }))
                        .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
                        let mut requests = InputRequestsMap::new();
                        requests.insert("sample".to_string(), input);
                        return Ok(InputRequiredResult::new(Some(requests), None).into());
                    }
                }
            }
        };
        let text = match answer {
            Ok(result) => {
                let content = serde_json::to_value(&result.message.content).unwrap_or_default();
                let text = content["text"]
                    .as_str()
                    .or_else(|| content[0]["text"].as_str())
                    .unwrap_or("?")
                    .to_string();
                format!("summary by {}: {text}", result.model)
            }
            Err(e) => format!("no summary: {}", e.message),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }

    #[tool(
        description = "Lists the client's roots",
        annotations(read_only_hint = true)
    )]
    #[allow(deprecated)]
    async fn roots(
        &self,
        peer: Peer<RoleServer>,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        let listed = match responses {
            Some(responses) => {
                serde_json::from_value::<rmcp::model::ListRootsResult>(responses["roots"].clone())
                    .map_err(|e| rmcp::ErrorData::invalid_params(e.to_string(), None))?
            }
            None => match peer.list_roots().await {
                Ok(listed) => listed,
                Err(_) => {
                    let request =
                        serde_json::from_value(serde_json::json!({"method": "roots/list"}))
                            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
                    let mut requests = InputRequestsMap::new();
                    requests.insert("roots".to_string(), request);
                    return Ok(InputRequiredResult::new(Some(requests), None).into());
                }
            },
        };
        let uris: Vec<String> = listed.roots.into_iter().map(|r| r.uri).collect();
        Ok(CallToolResult::success(vec![ContentBlock::text(uris.join(" "))]).into())
    }

    #[tool(
        description = "Exits the server process",
        annotations(read_only_hint = true)
    )]
    async fn crash(&self) -> String {
        std::process::exit(3)
    }
}

/// Whether `unlock` has been called (the `secret` tool is listed from then on).
static UNLOCKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[tool_handler(name = "loki-test-server", version = "1.0.0")]
impl ServerHandler for TestServer {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        let capabilities = rmcp::model::ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_resources()
            .build();
        rmcp::model::ServerConfig::new(capabilities).with_server_info(
            rmcp::model::Implementation::new("loki-test-server", "1.0.0"),
        )
    }

    async fn list_prompts(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, rmcp::ErrorData> {
        let mut prompts = vec![rmcp::model::Prompt::new(
            "greet",
            Some("Greets someone"),
            Some(vec![
                rmcp::model::PromptArgument::new("name").with_required(true),
            ]),
        )];
        // `unlock` adds one (and says the list changed).
        if UNLOCKED.load(std::sync::atomic::Ordering::SeqCst) {
            prompts.push(rmcp::model::Prompt::new(
                "farewell",
                Some("Says goodbye"),
                None,
            ));
        }
        Ok(rmcp::model::ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        _context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, rmcp::ErrorData> {
        if request.name == "farewell" && UNLOCKED.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(rmcp::model::GetPromptResult::new(vec![
                rmcp::model::PromptMessage::new_text(rmcp::model::Role::User, "Say goodbye."),
            ])
            .into());
        }
        if request.name != "greet" {
            return Err(rmcp::ErrorData::invalid_params("no such prompt", None));
        }
        let name = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("name"))
            .and_then(|n| n.as_str())
            .ok_or_else(|| rmcp::ErrorData::invalid_params("`name` is required", None))?
            .to_string();
        Ok(
            rmcp::model::GetPromptResult::new(vec![rmcp::model::PromptMessage::new_text(
                rmcp::model::Role::User,
                format!("Write a warm greeting for {name}."),
            )])
            .into(),
        )
    }

    async fn list_resources(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, rmcp::ErrorData> {
        Ok(rmcp::model::ListResourcesResult::with_all_items(vec![
            rmcp::model::Resource::new("test://readme", "readme"),
        ]))
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, rmcp::ErrorData> {
        match request.uri.as_str() {
            "test://readme" => {
                Ok(
                    rmcp::model::ReadResourceResult::new(vec![
                        rmcp::model::ResourceContents::text(
                            "The readme of the test server: llamas hum.",
                            "test://readme",
                        ),
                    ])
                    .into(),
                )
            }
            _ => Err(rmcp::ErrorData::resource_not_found(
                "no such resource",
                None,
            )),
        }
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        let unlocked = UNLOCKED.load(std::sync::atomic::Ordering::SeqCst);
        // The tools that ask the client back are listed with MCP_TEST_ASKS=1 only, so the
        // other tests keep a list `auto` exposure offers directly.
        let asks = std::env::var_os("MCP_TEST_ASKS").is_some();
        let tools = Self::tool_router()
            .list_all()
            .into_iter()
            .filter(|t| unlocked || t.name != "secret")
            .filter(|t| asks || !matches!(t.name.as_ref(), "ask_name" | "roots" | "summarize"))
            .collect();
        Ok(rmcp::model::ListToolsResult::with_all_items(tools))
    }
}

/// The token remote modes require as `Authorization: Bearer <token>` (from the first
/// argument after the mode).
fn expected_token() -> Option<String> {
    std::env::args().nth(2).filter(|t| !t.is_empty())
}

fn authorized(headers: &axum::http::HeaderMap) -> bool {
    match expected_token() {
        None => true,
        Some(token) => {
            headers
                .get(axum::http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                == Some(format!("Bearer {token}").as_str())
        }
    }
}

/// With `MCP_HEADER_LOG` set, appends `method<TAB>name<TAB>version` of every POST's
/// `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version` headers (`-` when absent) to it.
fn log_standard_headers(request: &axum::extract::Request) {
    use std::io::Write;
    let Some(path) = std::env::var_os("MCP_HEADER_LOG") else {
        return;
    };
    if request.method() != axum::http::Method::POST {
        return;
    }
    let get = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_string()
    };
    let line = format!(
        "{}\t{}\t{}\n",
        get("mcp-method"),
        get("mcp-name"),
        get("mcp-protocol-version")
    );
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = file.write_all(line.as_bytes());
    }
}

/// `--http [token]`: streamable HTTP at `/mcp`. Prints the URL, then serves.
async fn serve_http() -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let service = StreamableHttpService::new(
        || Ok(TestServer),
        std::sync::Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(
            |request: axum::extract::Request, next: axum::middleware::Next| async move {
                log_standard_headers(&request);
                if authorized(request.headers()) {
                    next.run(request).await
                } else {
                    axum::http::StatusCode::UNAUTHORIZED.into_response()
                }
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("http://127.0.0.1:{}/mcp", listener.local_addr()?.port());
    axum::serve(listener, app).await?;
    Ok(())
}

type Sessions = std::sync::Arc<
    tokio::sync::Mutex<
        std::collections::HashMap<String, tokio::io::WriteHalf<tokio::io::DuplexStream>>,
    >,
>;

/// `--sse [token]`: the legacy HTTP+SSE transport. `GET /sse` opens a session (the
/// `endpoint` event names `/messages?sessionId=<n>`); `POST` there delivers a message; the
/// server's messages come back as `message` events. Prints the SSE URL, then serves.
async fn serve_sse() -> Result<(), Box<dyn std::error::Error>> {
    let app = sse_app();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("http://127.0.0.1:{}/sse", listener.local_addr()?.port());
    axum::serve(listener, app).await?;
    Ok(())
}

/// The routes of the legacy transport: `GET /sse`, `POST /messages`.
fn sse_app() -> axum::Router {
    use axum::extract::{Query, State};
    use futures_util::StreamExt;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    async fn open(
        State(sessions): State<Sessions>,
        headers: axum::http::HeaderMap,
    ) -> axum::response::Response {
        if !authorized(&headers) {
            return axum::http::StatusCode::UNAUTHORIZED.into_response();
        }
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(theirs);
        tokio::spawn(async move {
            if let Ok(running) = TestServer.serve((server_read, server_write)).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(ours);
        let mut guard = sessions.lock().await;
        let id = (guard.len() + 1).to_string();
        guard.insert(id.clone(), write);
        drop(guard);
        let endpoint = futures_util::stream::once(async move {
            Ok::<_, std::io::Error>(format!(
                "event: endpoint\ndata: /messages?sessionId={id}\n\n"
            ))
        });
        let lines = tokio_stream_lines(tokio::io::BufReader::new(read))
            .map(|line| Ok(format!("event: message\ndata: {line}\n\n")));
        axum::response::Response::builder()
            .header("content-type", "text/event-stream")
            .body(axum::body::Body::from_stream(endpoint.chain(lines)))
            .unwrap_or_default()
    }

    fn tokio_stream_lines<R: tokio::io::AsyncBufRead + Unpin + Send + 'static>(
        reader: R,
    ) -> impl futures_util::Stream<Item = String> + Send {
        futures_util::stream::unfold(reader.lines(), |mut lines| async move {
            match lines.next_line().await {
                Ok(Some(line)) => Some((line, lines)),
                _ => None,
            }
        })
    }

    async fn post(
        State(sessions): State<Sessions>,
        Query(query): Query<std::collections::HashMap<String, String>>,
        headers: axum::http::HeaderMap,
        body: String,
    ) -> axum::http::StatusCode {
        if !authorized(&headers) {
            return axum::http::StatusCode::UNAUTHORIZED;
        }
        let id = query.get("sessionId").cloned().unwrap_or_default();
        let mut guard = sessions.lock().await;
        let Some(write) = guard.get_mut(&id) else {
            return axum::http::StatusCode::NOT_FOUND;
        };
        let line = format!("{}\n", body.trim());
        if write.write_all(line.as_bytes()).await.is_err() {
            return axum::http::StatusCode::GONE;
        }
        axum::http::StatusCode::ACCEPTED
    }

    let sessions: Sessions = Sessions::default();
    axum::Router::new()
        .route("/sse", axum::routing::get(open))
        .route("/messages", axum::routing::post(post))
        .with_state(sessions)
}

use axum::response::IntoResponse;

/// What the `--oauth` authorization server remembers.
#[derive(Default)]
struct Issuer {
    base: String,
    /// code → (PKCE challenge, redirect URI, scope)
    codes: std::collections::HashMap<String, (String, String, String)>,
    /// access token → scope
    tokens: std::collections::HashMap<String, String>,
    /// refresh token → scope
    refresh: std::collections::HashMap<String, String>,
    next: u32,
    /// The scope of the last authorization request.
    last_scope: String,
    /// Requests per endpoint, for `/stats`.
    stats: std::collections::BTreeMap<String, u32>,
}

type Shared = std::sync::Arc<std::sync::Mutex<Issuer>>;

fn count(issuer: &Shared, what: &str) {
    if let Ok(mut i) = issuer.lock() {
        *i.stats.entry(what.to_string()).or_default() += 1;
    }
}

/// `--oauth [--wrong-iss]`: the streamable HTTP server behind OAuth, with its own
/// authorization server on the same port: protected-resource and authorization-server
/// metadata, dynamic registration, `/authorize` (answers at once with a redirect, as a
/// browser session that is already signed in would), `/token` (authorization code with
/// a PKCE S256 check, refresh) and `/stats`. Tokens live `MCP_TOKEN_TTL` seconds
/// (default 3600). `--wrong-iss` puts another issuer in the redirect.
async fn serve_oauth() -> Result<(), Box<dyn std::error::Error>> {
    use axum::extract::{Form, Query, State};
    use axum::http::{HeaderMap, StatusCode, header};
    use axum::response::Response;
    use axum::routing::{get, post};
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    use serde_json::json;
    type Params = std::collections::HashMap<String, String>;

    let wrong_iss = std::env::args().any(|a| a == "--wrong-iss");
    // `--open-start`: the session starts without a token; its first listing is challenged.
    let open_start = std::env::args().any(|a| a == "--open-start");
    let ttl: u64 = std::env::var("MCP_TOKEN_TTL")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(3600);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://127.0.0.1:{}", listener.local_addr()?.port());
    let issuer: Shared = std::sync::Arc::new(std::sync::Mutex::new(Issuer {
        base: base.clone(),
        ..Issuer::default()
    }));

    async fn resource(State(issuer): State<Shared>, uri: axum::http::Uri) -> Response {
        count(&issuer, "resource_metadata");
        let base = issuer.lock().map(|i| i.base.clone()).unwrap_or_default();
        let path = if uri.path().ends_with("/sse") {
            "sse"
        } else {
            "mcp"
        };
        axum::Json(json!({
            "resource": format!("{base}/{path}"),
            "authorization_servers": [base],
            "scopes_supported": ["mcp:read", "mcp:write"],
            "bearer_methods_supported": ["header"]
        }))
        .into_response()
    }
    async fn metadata(State(issuer): State<Shared>) -> Response {
        count(&issuer, "metadata");
        let base = issuer.lock().map(|i| i.base.clone()).unwrap_or_default();
        // `--foreign-authorize`: a sign-in page on plain http elsewhere (refused by loki).
        let authorize = if std::env::args().any(|a| a == "--foreign-authorize") {
            "http://auth.example.invalid/authorize".to_string()
        } else {
            format!("{base}/authorize")
        };
        axum::Json(json!({
            "issuer": base,
            "authorization_endpoint": authorize,
            "token_endpoint": format!("{base}/token"),
            "registration_endpoint": format!("{base}/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": ["mcp:read", "mcp:write"],
            "authorization_response_iss_parameter_supported": true
        }))
        .into_response()
    }
    async fn register(
        State(issuer): State<Shared>,
        axum::Json(body): axum::Json<serde_json::Value>,
    ) -> Response {
        count(&issuer, "register");
        let id = issuer
            .lock()
            .map(|mut i| {
                i.next += 1;
                format!("client-{}", i.next)
            })
            .unwrap_or_default();
        (
            StatusCode::CREATED,
            axum::Json(json!({
                "client_id": id,
                "redirect_uris": body["redirect_uris"],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"]
            })),
        )
            .into_response()
    }
    let authorize = move |State(issuer): State<Shared>, Query(q): Query<Params>| async move {
        count(&issuer, "authorize");
        let get = |k: &str| q.get(k).cloned().unwrap_or_default();
        let Ok(mut i) = issuer.lock() else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        if get("code_challenge_method") != "S256"
            || get("response_type") != "code"
            || ![format!("{}/mcp", i.base), format!("{}/sse", i.base)].contains(&get("resource"))
        {
            return (StatusCode::BAD_REQUEST, "bad authorization request").into_response();
        }
        i.next += 1;
        let code = format!("code-{}", i.next);
        let scope = q.get("scope").cloned().unwrap_or_else(|| "mcp:read".into());
        i.last_scope.clone_from(&scope);
        i.codes.insert(
            code.clone(),
            (get("code_challenge"), get("redirect_uri"), scope),
        );
        let iss = if wrong_iss {
            "http://issuer.invalid".to_string()
        } else {
            i.base.clone()
        };
        let Ok(mut target) = reqwest::Url::parse(&get("redirect_uri")) else {
            return (StatusCode::BAD_REQUEST, "bad redirect_uri").into_response();
        };
        target
            .query_pairs_mut()
            .append_pair("code", &code)
            .append_pair("state", &get("state"))
            .append_pair("iss", &iss);
        (StatusCode::FOUND, [(header::LOCATION, target.to_string())]).into_response()
    };
    let token = move |State(issuer): State<Shared>, Form(f): Form<Params>| async move {
        use base64::Engine;
        use sha2::Digest;
        let get = |k: &str| f.get(k).cloned().unwrap_or_default();
        let Ok(mut i) = issuer.lock() else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let scope = match get("grant_type").as_str() {
            "authorization_code" => {
                *i.stats.entry("token".into()).or_default() += 1;
                let Some((challenge, redirect, scope)) = i.codes.remove(&get("code")) else {
                    return (
                        StatusCode::BAD_REQUEST,
                        axum::Json(json!({"error": "invalid_grant"})),
                    )
                        .into_response();
                };
                let verifier = sha2::Sha256::digest(get("code_verifier").as_bytes());
                let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(verifier);
                if computed != challenge || redirect != get("redirect_uri") {
                    return (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "invalid_grant", "error_description": "PKCE check failed"})))
                        .into_response();
                }
                scope
            }
            "refresh_token" => {
                *i.stats.entry("refresh".into()).or_default() += 1;
                let Some(scope) = i.refresh.get(&get("refresh_token")).cloned() else {
                    return (
                        StatusCode::BAD_REQUEST,
                        axum::Json(json!({"error": "invalid_grant"})),
                    )
                        .into_response();
                };
                scope
            }
            _ => {
                return (
                    StatusCode::BAD_REQUEST,
                    axum::Json(json!({"error": "unsupported_grant_type"})),
                )
                    .into_response();
            }
        };
        i.next += 1;
        let access = format!("at-{}", i.next);
        let refresh = format!("rt-{}", i.next);
        i.tokens.insert(access.clone(), scope.clone());
        i.refresh.insert(refresh.clone(), scope.clone());
        axum::Json(json!({
            "access_token": access, "token_type": "Bearer", "expires_in": ttl,
            "refresh_token": refresh, "scope": scope
        }))
        .into_response()
    };
    async fn stats(State(issuer): State<Shared>) -> Response {
        let (mut stats, scope) = issuer
            .lock()
            .map(|i| {
                (
                    serde_json::to_value(&i.stats).unwrap_or_default(),
                    i.last_scope.clone(),
                )
            })
            .unwrap_or_default();
        stats["last_scope"] = json!(scope);
        axum::Json(stats).into_response()
    }

    let service = StreamableHttpService::new(
        || Ok(TestServer),
        std::sync::Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let guard = issuer.clone();
    let mcp = axum::Router::new()
        .nest_service("/mcp", service)
        .merge(sse_app())
        .layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let issuer = guard.clone();
                async move {
                    let headers: &HeaderMap = request.headers();
                    let token = headers
                        .get(header::AUTHORIZATION)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.strip_prefix("Bearer "))
                        .map(str::to_string);
                    let (scope, base) = issuer
                        .lock()
                        .map(|i| {
                            (
                                token.as_ref().and_then(|t| i.tokens.get(t).cloned()),
                                i.base.clone(),
                            )
                        })
                        .unwrap_or_default();
                    let (parts, body) = request.into_parts();
                    let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
                        return StatusCode::BAD_REQUEST.into_response();
                    };
                    let message: serde_json::Value =
                        serde_json::from_slice(&bytes).unwrap_or_default();
                    let starting = matches!(
                        message["method"].as_str(),
                        Some("initialize" | "notifications/initialized" | "server/discover")
                    );
                    let request =
                        axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
                    if scope.is_none() && open_start && starting {
                        return next.run(request).await;
                    }
                    if let Some(scope) = scope {
                        // `note` changes state: it needs mcp:write (a step-up).
                        if message["method"] == "tools/call"
                            && message["params"]["name"] == "note"
                            && !scope.split(' ').any(|s| s == "mcp:write")
                        {
                            count(&issuer, "insufficient_scope");
                            let challenge = format!(
                                "Bearer error=\"insufficient_scope\", scope=\"mcp:read mcp:write\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                            );
                            return (StatusCode::FORBIDDEN, [(header::WWW_AUTHENTICATE, challenge)])
                                .into_response();
                        }
                        return next.run(request).await;
                    }
                    count(&issuer, "unauthorized");
                    let path = if request.uri().path().starts_with("/mcp") { "mcp" } else { "sse" };
                    let challenge = format!(
                        "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/{path}\", scope=\"mcp:read\""
                    );
                    (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response()
                }
            },
        ));
    let app = axum::Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(resource))
        .route("/.well-known/oauth-protected-resource/sse", get(resource))
        .route("/.well-known/oauth-protected-resource", get(resource))
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/stats", get(stats))
        .with_state(issuer)
        .merge(mcp);
    println!("{base}/mcp");
    axum::serve(listener, app).await?;
    Ok(())
}

/// `--browse URL`: a browser that is already signed in — follows the authorization
/// server's redirect to loki's loopback address and prints the page it gets.
async fn browse(url: &str) -> Result<(), Box<dyn std::error::Error>> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let first = http.get(url).send().await?;
    let Some(next) = first
        .headers()
        .get("location")
        .and_then(|l| l.to_str().ok())
    else {
        return Err(format!("no redirect: HTTP {}", first.status()).into());
    };
    let page = http.get(next).send().await?.text().await?;
    println!("{page}");
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    match std::env::args().nth(1).as_deref() {
        Some("--fail-to-start") => {
            eprintln!("test server: refusing to start");
            std::process::exit(2);
        }
        Some("--http") => return serve_http().await,
        Some("--oauth") => return serve_oauth().await,
        Some("--browse") => return browse(&std::env::args().nth(2).unwrap_or_default()).await,
        Some("--sse") => return serve_sse().await,
        _ => {}
    }
    eprintln!("test server: starting");
    if let Ok(path) = std::env::var("MCP_TEST_PIDS") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{}", std::process::id());
        }
    }
    TestServer
        .serve(rmcp::transport::stdio())
        .await?
        .waiting()
        .await?;
    Ok(())
}
