//! One running MCP server: started over stdio (its own process group, stderr to the log)
//! or streamable HTTP with the official `rmcp` client, initialised as loki, its tool list
//! kept fresh on `notifications/tools/list_changed`, and calls made with a timeout and
//! cancellation (dropping a call sends `notifications/cancelled`).

// Sampling and roots are deprecated by SEP-2577 but still what servers use.
#![allow(deprecated)]

use super::error::McpError;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest,
    ContentBlock, ElicitRequestParams, ElicitResult, Implementation, ProgressNotificationParam,
    ProtocolVersion, ServerResult, Tool,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Map, Value};
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

use super::client_side::{CallRoutes, ClientSide, Question};
use super::config::{ServerSpec, Transport};

/// How long a server may take to start and list its tools.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long re-listing tools may take.
/// Most `tools/list` pages read from one server.
const MAX_TOOL_PAGES: usize = 100;

const LIST_TIMEOUT: Duration = Duration::from_secs(15);

/// Environment variables a stdio server inherits from loki; everything else (provider
/// keys among it) stays out unless `env` in mcp.json passes it.
const INHERITED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "NVM_DIR",
    "NODE_PATH",
    "VIRTUAL_ENV",
    "UV_CACHE_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// Process groups of the stdio servers alive in this process (for the panic hook).
static LIVE_GROUPS: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

fn terminate_group(pid: u32) {
    #[cfg(unix)]
    {
        let _ = std::process::Command::new("kill")
            .args(["-s", "TERM", "--", &format!("-{pid}")])
            .stderr(std::process::Stdio::null())
            .status();
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Terminates every stdio server's process group. Called on panic (release builds abort,
/// so no destructor would run).
pub fn terminate_all() {
    let groups = LIVE_GROUPS
        .lock()
        .map(|mut g| std::mem::take(&mut *g))
        .unwrap_or_default();
    for pid in groups {
        terminate_group(pid);
    }
}

/// Terminates a stdio server's whole process group (npx, uvx and docker start children)
/// when dropped: on stop, exit, and a start that fails half-way.
#[derive(Debug)]
struct GroupGuard(Option<u32>);

impl GroupGuard {
    fn new(pid: Option<u32>) -> Self {
        if let Some(pid) = pid
            && let Ok(mut groups) = LIVE_GROUPS.lock()
        {
            groups.push(pid);
        }
        Self(pid)
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            if let Ok(mut groups) = LIVE_GROUPS.lock() {
                groups.retain(|p| *p != pid);
            }
            terminate_group(pid);
        }
    }
}

/// Where a running call reports progress: `(call id, one line)`.
pub type ProgressSender = tokio::sync::mpsc::UnboundedSender<(String, String)>;

/// Where progress notifications of running calls go: each call registers its progress
/// token with the conversation's progress channel and its call id, so progress reaches
/// only the conversation whose call caused it. Notifications that arrive before their
/// call registered are kept until it does (a few at most).
#[derive(Default)]
struct ProgressRoutes {
    routes: std::sync::Mutex<HashMap<String, Route>>,
}

enum Route {
    To(ProgressSender, String),
    Early(Vec<String>),
}

/// Most early progress lines kept for calls that have not registered yet.
const MAX_EARLY: usize = 64;

impl ProgressRoutes {
    fn deliver(&self, token: String, line: String) {
        let Ok(mut routes) = self.routes.lock() else {
            return;
        };
        if !routes.contains_key(&token) && routes.len() >= MAX_EARLY {
            return;
        }
        match routes
            .entry(token)
            .or_insert_with(|| Route::Early(Vec::new()))
        {
            Route::To(tx, call_id) => {
                let _ = tx.send((call_id.clone(), line));
            }
            Route::Early(lines) if lines.len() < MAX_EARLY => lines.push(line),
            Route::Early(_) => {}
        }
    }

    fn register(&self, token: String, tx: ProgressSender, call_id: String) {
        let Ok(mut routes) = self.routes.lock() else {
            return;
        };
        if let Some(Route::Early(lines)) = routes.remove(&token) {
            for line in lines {
                let _ = tx.send((call_id.clone(), line));
            }
        }
        routes.insert(token, Route::To(tx, call_id));
    }

    fn remove(&self, token: &str) {
        if let Ok(mut routes) = self.routes.lock() {
            routes.remove(token);
        }
    }
}

/// The token's text, as the key of [`ProgressRoutes`].
fn token_key(token: &rmcp::model::ProgressToken) -> String {
    serde_json::to_string(&token.0).unwrap_or_default()
}

/// Receives the server's notifications and serves its requests (through the route of
/// the call they belong to).
#[derive(Clone)]
pub struct Handler {
    server: String,
    tools_changed: Arc<AtomicBool>,
    progress: Arc<ProgressRoutes>,
    calls: Arc<CallRoutes>,
    /// The version proposed in `initialize`.
    version: ProtocolVersion,
    /// The prompts last listed (Tab completion), listed again when they change.
    prompts: Arc<std::sync::RwLock<Vec<rmcp::model::Prompt>>>,
}

/// What loki offers servers: forms and pages for the user, completions of the
/// conversation's model, and the conversation's directories.
#[allow(deprecated)] // sampling and roots: deprecated by SEP-2577, still in wide use
fn capabilities() -> ClientCapabilities {
    use rmcp::model::{
        ElicitationCapability, FormElicitationCapability, RootsCapabilities, SamplingCapability,
        UrlElicitationCapability,
    };
    let mut caps = ClientCapabilities::default();
    caps.elicitation = Some(
        ElicitationCapability::new()
            .with_form(FormElicitationCapability::default())
            .with_url(UrlElicitationCapability::new()),
    );
    caps.sampling = Some(SamplingCapability::default());
    let mut roots = RootsCapabilities::default();
    roots.list_changed = Some(false);
    caps.roots = Some(roots);
    caps
}

impl Handler {
    /// Hands `question` to the call it belongs to and waits for the answer; `None` when
    /// no call can take it.
    async fn route<T>(
        &self,
        extensions: &rmcp::model::Extensions,
        question: impl FnOnce(tokio::sync::oneshot::Sender<T>) -> Question,
    ) -> Option<T> {
        let origin = match extensions.get::<rmcp::service::InboundStreamOrigin>() {
            Some(rmcp::service::InboundStreamOrigin::OutboundRequest(id)) => Some(id),
            _ => None,
        };
        let route = self.calls.find(origin)?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        route.send(question(tx)).ok()?;
        rx.await.ok()
    }
}

impl rmcp::ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            capabilities(),
            Implementation::new("loki", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(self.version.clone())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let answer = self
            .route(&context.extensions, |tx| {
                Question::Elicit(Box::new(request), tx)
            })
            .await;
        Ok(answer.unwrap_or_else(|| {
            tracing::info!(server = %self.server, "elicitation outside a call: declined");
            ElicitResult::new(rmcp::model::ElicitationAction::Decline)
        }))
    }

    async fn create_message(
        &self,
        request: rmcp::model::CreateMessageRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let answer = self
            .route(&context.extensions, |tx| {
                Question::Sample(Box::new(request), tx)
            })
            .await
            .unwrap_or(Err(super::client_side::SamplingError::NoConversation));
        answer.map_err(|e| rmcp::ErrorData::new(rmcp::model::ErrorCode(-1), e.to_string(), None))
    }

    async fn list_roots(
        &self,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let roots = self
            .route(&context.extensions, Question::Roots)
            .await
            .unwrap_or_else(process_roots);
        Ok(rmcp::model::ListRootsResult::new(roots))
    }

    async fn on_prompt_list_changed(&self, cx: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.server, "prompt list changed");
        let prompts = Arc::clone(&self.prompts);
        tokio::spawn(async move {
            if let Ok(Ok(listed)) =
                tokio::time::timeout(LIST_TIMEOUT, cx.peer.list_all_prompts()).await
                && let Ok(mut slot) = prompts.write()
            {
                *slot = listed;
            }
        });
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.server, "tool list changed");
        self.tools_changed.store(true, Ordering::Release);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        tracing::info!(
            server = %self.server,
            progress = params.progress,
            total = ?params.total,
            message = ?params.message,
            "progress"
        );
        let amount = match params.total {
            Some(total) => format!("{}/{total}", params.progress),
            None => params.progress.to_string(),
        };
        let message = params.message.map(|m| format!(" {m}")).unwrap_or_default();
        self.progress.deliver(
            token_key(&params.progress_token),
            format!("MCP `{}`: {amount}{message}", self.server),
        );
    }
}

/// A started server.
pub struct McpServer {
    /// How it was configured.
    pub spec: ServerSpec,
    service: RunningService<RoleClient, Handler>,
    tools: std::sync::RwLock<Vec<Tool>>,
    tools_changed: Arc<AtomicBool>,
    /// Process group of a stdio server.
    group: GroupGuard,
    /// Why the HTTP client refused an answer (size limits end the connection).
    refusals: Option<Arc<std::sync::Mutex<Option<String>>>>,
    /// `mcp_max_message_size`.
    max_message_size: usize,
    /// Where progress of running calls goes.
    progress: Arc<ProgressRoutes>,
    /// Where the server's questions during running calls go.
    calls: Arc<CallRoutes>,
    /// Where sign-ins are kept.
    tokens: Option<super::oauth::Tokens>,
    /// The prompts last listed (for Tab completion).
    prompt_cache: Arc<std::sync::RwLock<Vec<rmcp::model::Prompt>>>,
    /// What the user should hear about it (tools left out), taken once.
    notes: std::sync::Mutex<Vec<String>>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.spec.name)
            .field("pid", &self.group.0)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// Starts the server, initialises the session and lists its tools.
    /// `tokens` is where sign-ins are kept (none: servers that ask for one cannot
    /// be used).
    pub async fn start(
        spec: ServerSpec,
        http: reqwest::Client,
        max_message_size: usize,
        tokens: Option<&super::oauth::Tokens>,
    ) -> Result<Self, McpError> {
        let tools_changed = Arc::new(AtomicBool::new(false));
        let progress = Arc::new(ProgressRoutes::default());
        let calls = Arc::new(CallRoutes::default());
        let prompt_cache = Arc::default();
        let (mode, version) = lifecycle(&spec);
        let handler = Handler {
            server: spec.name.clone(),
            tools_changed: Arc::clone(&tools_changed),
            progress: Arc::clone(&progress),
            calls: Arc::clone(&calls),
            version,
            prompts: Arc::clone(&prompt_cache),
        };
        let opening = Opening {
            spec: &spec,
            handler,
            mode,
            max_message_size,
            tokens,
        };
        let Connected {
            service,
            group,
            refusals,
        } = match &spec.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => opening.stdio(command, args, env, cwd.as_deref()).await?,
            Transport::Http { url, headers } => opening.http(http, url, headers).await?,
            Transport::Sse { url, headers } => opening.sse(http, url, headers.clone()).await?,
            Transport::Carried(carrier) => {
                let transport = super::carried::CarriedTransport::new(&spec.name, carrier.clone());
                opening.serve(transport, GroupGuard(None)).await?
            }
        };
        let server = Self {
            spec,
            service,
            tools: std::sync::RwLock::new(Vec::new()),
            tools_changed,
            group,
            refusals,
            max_message_size,
            progress,
            calls,
            tokens: tokens.cloned(),
            prompt_cache,
            notes: std::sync::Mutex::default(),
        };
        server.reload_tools().await?;
        server.list_prompts_in_background();
        server.listen_for_changes().await;
        if let Some(info) = server.service.peer_info() {
            tracing::info!(
                server = %server.spec.name,
                protocol = %info.protocol_version.as_str(),
                "MCP server started"
            );
        }
        Ok(server)
    }

    /// The revision the session speaks.
    pub fn protocol_version(&self) -> Option<String> {
        self.service
            .peer_info()
            .map(|info| info.protocol_version.as_str().to_string())
    }

    /// On a 2026-07-28 session the server's list changes come only on a subscription:
    /// opens one when the server says its tools can change, and marks the list stale on
    /// each change.
    async fn listen_for_changes(&self) {
        let Some(info) = self.service.peer_info() else {
            return;
        };
        if info.protocol_version.has_initialize() {
            return;
        }
        let tools_listed = info
            .capabilities
            .tools
            .as_ref()
            .is_some_and(|t| t.list_changed == Some(true));
        if !tools_listed {
            return;
        }
        let filter = rmcp::model::SubscriptionFilter::builder()
            .tools_list_changed()
            .build();
        let subscription =
            tokio::time::timeout(LIST_TIMEOUT, self.service.peer().listen(filter)).await;
        let mut subscription = match subscription {
            Ok(Ok(subscription)) => subscription,
            Ok(Err(e)) => {
                tracing::warn!(server = %self.spec.name, "cannot subscribe to list changes: {e}");
                return;
            }
            Err(_) => {
                tracing::warn!(server = %self.spec.name, "subscribing to list changes timed out");
                return;
            }
        };
        let changed = Arc::clone(&self.tools_changed);
        let name = self.spec.name.clone();
        tokio::spawn(async move {
            while let Ok(Some(notification)) = subscription.next().await {
                if let rmcp::model::ServerNotification::ToolListChangedNotification(_) =
                    notification
                {
                    tracing::info!(server = %name, "tool list changed");
                    changed.store(true, Ordering::Release);
                }
            }
        });
    }

    async fn reload_tools(&self) -> Result<(), McpError> {
        let listed = tokio::time::timeout(LIST_TIMEOUT, async {
            match self.service.peer().list_all_tools().await {
                // One malformed tool makes the typed list unreadable: read it tool by
                // tool, leaving out (and naming) the ones that are not tools.
                Err(rmcp::ServiceError::UnexpectedResponse) => self.list_tools_leniently().await,
                other => other,
            }
        })
        .await;
        let tools = listed
            .map_err(|_| McpError::Timeout {
                server: self.spec.name.clone(),
                what: "tools/list".into(),
                seconds: LIST_TIMEOUT.as_secs(),
            })?
            .map_err(|e| match e.auth_challenge() {
                Some(challenge) if self.spec.oauth.is_some() => self.auth_refusal(challenge),
                _ => McpError::Transport(format!("listing tools failed: {e}")),
            })?;
        if let Ok(mut slot) = self.tools.write() {
            *slot = tools;
        }
        Ok(())
    }

    /// `tools/list` page by page as plain JSON: every entry that is a valid tool, and a
    /// warning naming each that is not (no `inputSchema`, say).
    async fn list_tools_leniently(&self) -> Result<Vec<Tool>, rmcp::ServiceError> {
        use rmcp::model::{ClientRequest, ListToolsRequest, PaginatedRequestParams, ServerResult};
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_TOOL_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
            let page = match self.service.peer().send_request(request).await? {
                ServerResult::ListToolsResult(result) => {
                    tools.extend(result.tools);
                    result.next_cursor
                }
                ServerResult::CustomResult(custom) => {
                    let value = custom.0;
                    for entry in value["tools"].as_array().into_iter().flatten() {
                        match serde_json::from_value::<Tool>(entry.clone()) {
                            Ok(tool) => tools.push(tool),
                            Err(e) => {
                                let note = format!(
                                    "MCP server `{}`: tool `{}` left out, it is not a valid MCP tool ({e})",
                                    self.spec.name,
                                    entry["name"].as_str().unwrap_or("?")
                                );
                                tracing::warn!("{note}");
                                if let Ok(mut notes) = self.notes.lock() {
                                    notes.push(note);
                                }
                            }
                        }
                    }
                    value["nextCursor"].as_str().map(str::to_string)
                }
                _ => return Err(rmcp::ServiceError::UnexpectedResponse),
            };
            match page {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => break,
            }
        }
        Ok(tools)
    }

    /// What the user should hear about the server since it was last asked.
    pub fn take_notes(&self) -> Vec<String> {
        self.notes
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }

    /// The server's tools, re-listed first when it said they changed.
    pub async fn tools(&self) -> Vec<Tool> {
        if self.tools_changed.swap(false, Ordering::AcqRel)
            && let Err(e) = self.reload_tools().await
        {
            tracing::warn!(server = %self.spec.name, "{e}");
            self.tools_changed.store(true, Ordering::Release);
        }
        self.tools.read().map(|t| t.clone()).unwrap_or_default()
    }

    /// The cached tool list (no request).
    pub fn cached_tools(&self) -> Vec<Tool> {
        self.tools.read().map(|t| t.clone()).unwrap_or_default()
    }

    /// Whether the connection is still up.
    pub fn is_alive(&self) -> bool {
        !self.service.peer().is_transport_closed()
    }

    /// Calls a tool; the result rendered as text for the model, `Err` for errors. What the
    /// server asks while the call runs (a form, a completion, the roots) is answered by
    /// `side`; time spent answering does not count against `timeout`.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
        cancel: &CancellationToken,
        progress: Option<(&ProgressSender, &str)>,
        side: &dyn ClientSide,
    ) -> Result<(String, Vec<String>), McpError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let asking = Asking {
            what: tool,
            timeout,
            cancel,
            progress,
            side,
        };
        match self.ask(params, asking).await? {
            ServerResult::CallToolResult(result) => render(&result),
            _ => Err(self.unexpected("tools/call")),
        }
    }

    /// Reads resource `uri`: its text parts, and its binary parts as `(mime, base64)`.
    pub async fn read_resource(
        &self,
        uri: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        side: &dyn ClientSide,
    ) -> Result<(String, Vec<(String, String)>), McpError> {
        use rmcp::model::{ReadResourceRequestParams, ResourceContents};
        let asking = Asking {
            what: uri,
            timeout,
            cancel,
            progress: None,
            side,
        };
        let ServerResult::ReadResourceResult(result) = self
            .ask(ReadResourceRequestParams::new(uri), asking)
            .await?
        else {
            return Err(self.unexpected("resources/read"));
        };
        let mut text = Vec::new();
        let mut blobs = Vec::new();
        for part in result.contents {
            match part {
                ResourceContents::TextResourceContents { text: t, .. } => text.push(t),
                ResourceContents::BlobResourceContents {
                    mime_type, blob, ..
                } => blobs.push((
                    mime_type.unwrap_or_else(|| "application/octet-stream".into()),
                    blob,
                )),
                _ => {}
            }
        }
        Ok((text.join("\n"), blobs))
    }

    /// Gets prompt `name` with `arguments`: its messages as `(role, text)`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
        cancel: &CancellationToken,
        side: &dyn ClientSide,
    ) -> Result<Vec<(String, String)>, McpError> {
        use rmcp::model::GetPromptRequestParams;
        let params = GetPromptRequestParams::new(name).with_arguments(arguments);
        let asking = Asking {
            what: name,
            timeout,
            cancel,
            progress: None,
            side,
        };
        let ServerResult::GetPromptResult(result) = self.ask(params, asking).await? else {
            return Err(self.unexpected("prompts/get"));
        };
        Ok(result
            .messages
            .into_iter()
            .map(|m| {
                let role = role_name(&m.role);
                let text = match m.content {
                    ContentBlock::Text(t) => t.text,
                    ContentBlock::Resource(r) => {
                        serde_json::to_string(&r.resource).unwrap_or_else(|_| "[resource]".into())
                    }
                    ContentBlock::ResourceLink(r) => format!("[resource {}]", r.uri),
                    _ => "[unsupported content]".into(),
                };
                (role, text)
            })
            .collect())
    }

    /// Sends `params` until the server answers with something other than
    /// `input_required`, answering what it asks for in between (at most
    /// `MAX_INPUT_ROUNDS` times).
    async fn ask<P: Retried>(
        &self,
        mut params: P,
        asking: Asking<'_>,
    ) -> Result<ServerResult, McpError> {
        let mut deadline = tokio::time::Instant::now() + asking.timeout;
        for _ in 0..MAX_INPUT_ROUNDS {
            match self.round(params.request(), &asking, &mut deadline).await? {
                ServerResult::InputRequiredResult(needed) => {
                    let responses = self
                        .fulfil(needed.input_requests, asking.side, asking.cancel)
                        .await?;
                    params.answer(
                        (!responses.is_empty()).then_some(responses),
                        needed.request_state,
                    );
                }
                answer => return Ok(answer),
            }
        }
        Err(McpError::Refused(format!(
            "the server asked for more input {MAX_INPUT_ROUNDS} times in a row; gave up"
        )))
    }

    /// Lists the server's prompts for Tab completion, without waiting.
    fn list_prompts_in_background(&self) {
        if !self.offers(|c| c.prompts.is_some()) {
            return;
        }
        let peer = self.service.peer().clone();
        let cache = Arc::clone(&self.prompt_cache);
        tokio::spawn(async move {
            if let Ok(Ok(prompts)) =
                tokio::time::timeout(LIST_TIMEOUT, peer.list_all_prompts()).await
                && let Ok(mut slot) = cache.write()
            {
                *slot = prompts;
            }
        });
    }

    /// The prompts last listed (no request).
    pub fn cached_prompts(&self) -> Vec<rmcp::model::Prompt> {
        self.prompt_cache
            .read()
            .map(|p| p.clone())
            .unwrap_or_default()
    }

    /// The server's prompts (none when it has no prompts capability).
    pub async fn prompts(&self) -> Result<Vec<rmcp::model::Prompt>, McpError> {
        if !self.offers(|c| c.prompts.is_some()) {
            return Ok(Vec::new());
        }
        let prompts = self
            .list_all("prompts", self.service.peer().list_all_prompts())
            .await?;
        if let Ok(mut slot) = self.prompt_cache.write() {
            slot.clone_from(&prompts);
        }
        Ok(prompts)
    }

    /// The server's resources (none when it has no resources capability).
    pub async fn resources(&self) -> Result<Vec<rmcp::model::Resource>, McpError> {
        if !self.offers(|c| c.resources.is_some()) {
            return Ok(Vec::new());
        }
        self.list_all("resources", self.service.peer().list_all_resources())
            .await
    }

    /// Whether the server said at initialisation that it offers what `pick` looks at.
    fn offers(&self, pick: impl Fn(&rmcp::model::ServerCapabilities) -> bool) -> bool {
        self.service
            .peer_info()
            .is_some_and(|info| pick(&info.capabilities))
    }

    /// Waits for `list` (of the server's `what`: prompts, resources) at most
    /// `LIST_TIMEOUT`.
    async fn list_all<T>(
        &self,
        what: &str,
        list: impl Future<Output = Result<Vec<T>, rmcp::ServiceError>>,
    ) -> Result<Vec<T>, McpError> {
        tokio::time::timeout(LIST_TIMEOUT, list)
            .await
            .map_err(|_| McpError::Timeout {
                server: self.spec.name.clone(),
                what: format!("{what}/list"),
                seconds: LIST_TIMEOUT.as_secs(),
            })?
            .map_err(|e| McpError::Transport(format!("listing {what} failed: {e}")))
    }

    fn auth_refusal(&self, challenge: &str) -> McpError {
        auth_refusal(&self.spec, self.tokens.as_ref(), challenge)
    }

    fn unexpected(&self, method: &str) -> McpError {
        McpError::Transport(format!(
            "MCP server `{}` answered {method} with another kind of result",
            self.spec.name
        ))
    }

    /// Answers the requests of an `input_required` result, by key.
    async fn fulfil(
        &self,
        requests: Option<rmcp::model::InputRequests>,
        side: &dyn ClientSide,
        cancel: &CancellationToken,
    ) -> Result<rmcp::model::InputResponses, McpError> {
        use rmcp::model::InputRequest;
        let mut responses = rmcp::model::InputResponses::new();
        for (key, request) in requests.unwrap_or_default() {
            let name = &self.spec.name;
            let answer = async {
                match request {
                    InputRequest::Elicitation(r) => {
                        Ok(serde_json::to_value(side.elicit(name, r.params).await))
                    }
                    InputRequest::CreateMessage(r) => side
                        .sample(name, r.params)
                        .await
                        .map(serde_json::to_value)
                        .map_err(|e| e.to_string()),
                    InputRequest::ListRoots(_) => Ok(serde_json::to_value(
                        rmcp::model::ListRootsResult::new(side.roots()),
                    )),
                    _ => Err("loki does not know this kind of input request".to_string()),
                }
            };
            let answer = tokio::select! {
                _ = cancel.cancelled() => return Err(McpError::Cancelled),
                answer = answer => answer,
            };
            match answer {
                Ok(Ok(value)) => {
                    responses.insert(key, value);
                }
                Ok(Err(e)) => return Err(McpError::Transport(e.to_string())),
                Err(reason) => return Err(McpError::Refused(reason)),
            }
        }
        Ok(responses)
    }

    /// Sends one request and waits for its answer, serving the server's questions in
    /// between; `deadline` moves on by the time they took.
    async fn round(
        &self,
        request: ClientRequest,
        asking: &Asking<'_>,
        deadline: &mut tokio::time::Instant,
    ) -> Result<ServerResult, McpError> {
        let &Asking {
            what,
            timeout,
            cancel,
            progress,
            side,
        } = asking;
        let peer = self.service.peer().clone();
        let sent = peer
            .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
            .await;
        let handle = match sent {
            Ok(handle) => handle,
            Err(e) if !self.is_alive() => {
                return Err(McpError::Stopped {
                    server: self.spec.name.clone(),
                    message: e.to_string(),
                });
            }
            Err(e) => return Err(McpError::Transport(call_error(&e, &self.spec))),
        };
        let token = token_key(&handle.progress_token);
        if let Some((tx, call_id)) = progress {
            self.progress
                .register(token.clone(), tx.clone(), call_id.to_string());
        }
        // The routes go when the call ends, however it ends (a dropped round included).
        let _route = RouteGuard {
            routes: Arc::clone(&self.progress),
            token: token.clone(),
        };
        let (questions, mut asked) = tokio::sync::mpsc::unbounded_channel();
        let _questions = self.calls.register(&handle.id, questions);
        // A call abandoned (cancelled, timed out) tells the server with
        // `notifications/cancelled`.
        let mut guard = CancelOnDrop {
            peer,
            id: Some(handle.id.clone()),
        };
        let response = handle.await_response();
        tokio::pin!(response);
        let result = loop {
            tokio::select! {
                _ = cancel.cancelled() => return Err(McpError::Cancelled),
                r = &mut response => break Ok(r),
                () = tokio::time::sleep_until(*deadline) => break Err(()),
                Some(question) = asked.recv() => {
                    let started = tokio::time::Instant::now();
                    tokio::select! {
                        _ = cancel.cancelled() => return Err(McpError::Cancelled),
                        () = question.serve(&self.spec.name, side) => {}
                    }
                    *deadline += started.elapsed();
                }
            }
        };
        if result.is_ok() {
            guard.id = None;
        }
        let refused = self
            .refusals
            .as_ref()
            .and_then(|slot| slot.lock().ok().and_then(|mut r| r.take()));
        if let (Some(reason), Ok(Err(_))) = (refused, &result) {
            return Err(McpError::TooLarge {
                server: self.spec.name.clone(),
                limit: self.max_message_size,
                reason,
            });
        }
        match result {
            Err(()) => Err(McpError::Timeout {
                server: self.spec.name.clone(),
                what: what.to_string(),
                seconds: timeout.as_secs(),
            }),
            Ok(Err(e)) if !self.is_alive() => Err(McpError::Stopped {
                server: self.spec.name.clone(),
                message: e.to_string(),
            }),
            Ok(Err(rmcp::ServiceError::McpError(e))) => {
                Err(McpError::Refused(e.message.into_owned()))
            }
            Ok(Err(e)) if self.spec.oauth.is_some() && e.auth_challenge().is_some() => {
                Err(self.auth_refusal(e.auth_challenge().unwrap_or_default()))
            }
            Ok(Err(e)) => Err(McpError::Transport(call_error(&e, &self.spec))),
            Ok(Ok(answer)) => Ok(answer),
        }
    }
}

/// How a request is asked: what it is about (for messages), how long it may take, and
/// who hears its progress and answers the server's questions.
struct Asking<'a> {
    what: &'a str,
    timeout: Duration,
    cancel: &'a CancellationToken,
    progress: Option<(&'a ProgressSender, &'a str)>,
    side: &'a dyn ClientSide,
}

/// The parameters of a request the server may answer with `input_required`: sent again
/// with the answers and the state it gave.
trait Retried {
    /// The request to send.
    fn request(&self) -> ClientRequest;
    /// Adds the answers to the server's input requests, and the state to send back.
    fn answer(&mut self, responses: Option<rmcp::model::InputResponses>, state: Option<String>);
}

/// Implements [`Retried`] for `params`, sent as `request`.
macro_rules! retried {
    ($($params:ident => $request:ident),* $(,)?) => {$(
        impl Retried for rmcp::model::$params {
            fn request(&self) -> ClientRequest {
                ClientRequest::$request(rmcp::model::$request::new(self.clone()))
            }

            fn answer(
                &mut self,
                responses: Option<rmcp::model::InputResponses>,
                state: Option<String>,
            ) {
                self.input_responses = responses;
                self.request_state = state;
            }
        }
    )*};
}

retried!(
    CallToolRequestParams => CallToolRequest,
    ReadResourceRequestParams => ReadResourceRequest,
    GetPromptRequestParams => GetPromptRequest,
);

/// Most `input_required` rounds one call may take.
const MAX_INPUT_ROUNDS: usize = 8;

/// How the session starts, and the version `initialize` proposes. A pinned
/// `protocolVersion` is used as it is; otherwise streamable HTTP asks for the 2026-07-28
/// revision with `server/discover` and falls back to `initialize` with 2025-11-25, and
/// stdio and SSE servers (which may exit on a method they do not know) get `initialize`.
fn lifecycle(spec: &ServerSpec) -> (ClientLifecycleMode, ProtocolVersion) {
    let legacy = ProtocolVersion::LATEST_WITH_INITIALIZE;
    let pinned = spec
        .protocol_version
        .as_deref()
        .and_then(|v| serde_json::from_value::<ProtocolVersion>(Value::String(v.into())).ok());
    match pinned {
        Some(v) if v.has_initialize() => (ClientLifecycleMode::Initialize, v),
        Some(v) => (
            ClientLifecycleMode::Discover {
                preferred_versions: vec![v],
            },
            legacy,
        ),
        None if matches!(spec.transport, Transport::Http { .. }) => (
            ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(legacy.clone()),
            },
            legacy,
        ),
        None => (ClientLifecycleMode::Initialize, legacy),
    }
}

/// A 401 the sign-in could not get past (`NeedsSignIn`), or a 403 asking for more scope
/// (`NeedsScope`). The scope a challenge names is noted for the next `--mcp-login`.
fn auth_refusal(
    spec: &ServerSpec,
    tokens: Option<&super::oauth::Tokens>,
    challenge: &str,
) -> McpError {
    let server = spec.name.clone();
    let url = match &spec.transport {
        Transport::Http { url, .. } | Transport::Sse { url, .. } => url.as_str(),
        Transport::Stdio { .. } | Transport::Carried(_) => "",
    };
    let params = reqwest::Url::parse(url)
        .map(|u| rmcp::transport::auth::WWWAuthenticateParams::parse(challenge, &u))
        .unwrap_or_default();
    if let (Some(tokens), Some(scope)) = (tokens, &params.scope) {
        super::oauth::want_scopes(&tokens.dir, &server, scope);
    }
    match (params.is_insufficient_scope(), params.scope) {
        (true, Some(scope)) => McpError::NeedsScope { server, scope },
        _ => McpError::NeedsSignIn { server },
    }
}

/// What a started session is made of, whatever the transport.
struct Connected {
    service: RunningService<RoleClient, Handler>,
    /// The process group of a stdio server (none for the others).
    group: GroupGuard,
    /// Where the HTTP client notes why it refused an answer (streamable HTTP only).
    refusals: Option<Arc<std::sync::Mutex<Option<String>>>>,
}

/// What every transport needs to open a session: one step per transport, so that
/// `McpServer::start` reads as "connect, then list the tools".
struct Opening<'a> {
    spec: &'a ServerSpec,
    handler: Handler,
    mode: ClientLifecycleMode,
    max_message_size: usize,
    tokens: Option<&'a super::oauth::Tokens>,
}

impl Opening<'_> {
    /// Initialises the session over `transport`.
    async fn serve(
        self,
        transport: impl rmcp::transport::Transport<RoleClient> + 'static,
        group: GroupGuard,
    ) -> Result<Connected, McpError> {
        let service = self
            .handler
            .serve_with_lifecycle(super::erased::AnyTransport::new(transport), self.mode)
            .await
            .map_err(|e| McpError::Start(format!("initialisation failed: {e}")))?;
        Ok(Connected {
            service,
            group,
            refusals: None,
        })
    }

    /// The sign-in kept for the server at `url`, when it has OAuth settings and there is a
    /// place for sign-ins.
    async fn sign_in(
        &self,
        url: &str,
    ) -> Result<Option<rmcp::transport::auth::AuthorizationManager>, McpError> {
        match (&self.spec.oauth, self.tokens) {
            (Some(settings), Some(dir)) => {
                super::oauth::signed_in_manager(&self.spec.name, url, dir, settings).await
            }
            _ => Ok(None),
        }
    }

    /// Runs `command` in its own process group, its stderr copied to the log.
    async fn stdio(
        self,
        command: &str,
        args: &[String],
        env: &std::collections::BTreeMap<String, String>,
        cwd: Option<&str>,
    ) -> Result<Connected, McpError> {
        let cmd = stdio_command(command, args, env, cwd);
        let (transport, stderr) =
            super::stdio::StdioTransport::spawn(cmd, &self.spec.name, self.max_message_size)
                .map_err(|e| McpError::Start(format!("cannot run `{command}`: {e}")))?;
        let group = GroupGuard::new(transport.id());
        let exited = transport.exited();
        let last_words = stderr.map(|stderr| log_stderr(self.spec.name.clone(), stderr));
        match self.serve(transport, group).await {
            Err(McpError::Start(reason)) => Err(McpError::Start(
                ended_early(command, &exited, last_words)
                    .await
                    .unwrap_or(reason),
            )),
            other => other,
        }
    }

    /// Streamable HTTP, signed in when the server has OAuth settings and a sign-in is kept.
    async fn http(
        self,
        http: reqwest::Client,
        url: &str,
        headers: &std::collections::BTreeMap<String, String>,
    ) -> Result<Connected, McpError> {
        let spec = self.spec;
        let manager = self.sign_in(url).await?;
        let client = super::http::McpHttpClient::new(http, manager);
        let refusals = Some(client.refusals());
        let started = serve_http(
            &self.handler,
            client,
            url,
            headers,
            self.max_message_size,
            self.mode,
        )
        .await;
        let service = started.map_err(|e| match e {
            StartFailure::Spec(e) => e,
            StartFailure::Init(e) if spec.oauth.is_some() && needs_sign_in(&e) => {
                auth_refusal(spec, self.tokens, e.auth_challenge().unwrap_or_default())
            }
            StartFailure::Init(e) => McpError::Start(start_error(&e, url)),
        })?;
        Ok(Connected {
            service,
            group: GroupGuard(None),
            refusals,
        })
    }

    /// The legacy HTTP+SSE transport. A signed-in server gets the access token (refreshed
    /// first if it expired); the session lasts as long as the token does.
    async fn sse(
        self,
        http: reqwest::Client,
        url: &str,
        mut headers: std::collections::BTreeMap<String, String>,
    ) -> Result<Connected, McpError> {
        let spec = self.spec;
        let needs_sign_in = || McpError::NeedsSignIn {
            server: spec.name.clone(),
        };
        if let Some(manager) = self.sign_in(url).await? {
            let token = manager
                .get_access_token()
                .await
                .map_err(|_| needs_sign_in())?;
            headers.insert("Authorization".into(), format!("Bearer {token}"));
        }
        let transport =
            super::sse::SseTransport::connect(http, url, &headers, self.max_message_size)
                .await
                .map_err(|e| match e {
                    McpError::Start(m) if spec.oauth.is_some() && m.ends_with("HTTP 401") => {
                        needs_sign_in()
                    }
                    other => other,
                })?;
        self.serve(transport, GroupGuard(None)).await
    }
}

/// The command for a stdio server: only `INHERITED_ENV` and the entry's `env` pass, and
/// it leads a process group of its own (so that stopping it stops its children).
fn stdio_command(
    command: &str,
    args: &[String],
    env: &std::collections::BTreeMap<String, String>,
    cwd: Option<&str>,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(command);
    cmd.env_clear();
    for var in INHERITED_ENV {
        if let Some(value) = std::env::var_os(var) {
            cmd.env(var, value);
        }
    }
    cmd.args(args).envs(env).kill_on_drop(true);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    cmd
}

/// Copies a stdio server's stderr to the log, a line at a time, until it closes; what it
/// returns keeps the last line that is not blank.
fn log_stderr(
    name: String,
    stderr: impl tokio::io::AsyncRead + Unpin + Send + 'static,
) -> LastWords {
    let (done, finished) = tokio::sync::watch::channel(false);
    let words = LastWords {
        line: Arc::default(),
        finished,
    };
    let kept = Arc::clone(&words.line);
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::info!(target: "loki::mcp::stderr", server = %name, "{line}");
            if !line.trim().is_empty()
                && let Ok(mut last) = kept.lock()
            {
                *last = line;
            }
        }
        let _ = done.send(true);
    });
    words
}

/// The last line a stdio server wrote to stderr, and whether its stderr has closed.
struct LastWords {
    line: Arc<std::sync::Mutex<String>>,
    finished: tokio::sync::watch::Receiver<bool>,
}

impl LastWords {
    /// The last line, once stderr has closed (waiting a moment for the copier to read
    /// what the process wrote before it exited).
    async fn last(mut self) -> Option<String> {
        let wait = std::time::Duration::from_millis(200);
        let _ = tokio::time::timeout(wait, self.finished.wait_for(|done| *done)).await;
        let line = self.line.lock().ok()?.trim().to_string();
        (!line.is_empty()).then_some(line)
    }
}

/// Most characters of a server's last stderr line quoted in a start failure.
const LAST_WORDS_MAX: usize = 160;

/// Why a stdio server that exited before its session started did not start: its exit
/// status, its last stderr line (shortened; it reaches the terminal through the
/// sanitiser like every warning) and where the rest of its stderr is. None while the
/// process still runs.
async fn ended_early(
    command: &str,
    exited: &super::stdio::Exited,
    last_words: Option<LastWords>,
) -> Option<String> {
    let status = exited.lock().ok().and_then(|s| *s)?;
    let how = match (status.code(), exit_signal(&status)) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "exited".to_string(),
    };
    let mut message = format!("`{command}` {how} before the session started");
    if let Some(words) = last_words
        && let Some(said) = words.last().await
    {
        let short: String = said.chars().take(LAST_WORDS_MAX).collect();
        let more = if short.len() < said.len() { "…" } else { "" };
        message.push_str(&format!(": {short}{more}"));
    }
    if let Some(log) = crate::config::paths::active_log() {
        message.push_str(&format!(" (its stderr is in {})", log.display()));
    }
    Some(message)
}

#[cfg(unix)]
fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

#[cfg(not(unix))]
fn exit_signal(_: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// Why an HTTP server did not start.
enum StartFailure {
    /// Its entry cannot be used.
    Spec(McpError),
    /// The session did not start.
    Init(Box<rmcp::service::ClientInitializeError>),
}

/// Whether a start failed on a 401 (or 403) the server answered.
fn needs_sign_in(e: &rmcp::service::ClientInitializeError) -> bool {
    e.is_authorization_required() || e.auth_challenge().is_some()
}

/// Starts a session with the streamable HTTP server at `url` over `client` (loki's HTTP
/// client, which enforces the size limits, maybe wrapped in rmcp's OAuth client). A
/// server that answers `server/discover` with something else entirely (an empty result)
/// predates it: the session starts again with `initialize`.
async fn serve_http(
    handler: &Handler,
    client: super::http::McpHttpClient,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    max_message_size: usize,
    mode: ClientLifecycleMode,
) -> Result<RunningService<RoleClient, Handler>, StartFailure> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let mut map = HashMap::new();
    for (k, v) in headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes()).map_err(|_| {
            StartFailure::Spec(McpError::Spec(format!("header `{k}` is not a valid name")))
        })?;
        let value = reqwest::header::HeaderValue::from_str(v).map_err(|_| {
            StartFailure::Spec(McpError::Spec(format!(
                "header `{k}` has characters that are not allowed"
            )))
        })?;
        map.insert(name, value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(map)
        .max_sse_event_size(max_message_size)
        .max_json_response_size(max_message_size);
    let auto = matches!(mode, ClientLifecycleMode::Auto { .. });
    let transport = StreamableHttpClientTransport::with_client(client.clone(), config.clone());
    match handler
        .clone()
        .serve_with_lifecycle(super::erased::AnyTransport::new(transport), mode)
        .await
    {
        Err(rmcp::service::ClientInitializeError::ExpectedInitResult(_)) if auto => {
            tracing::info!(server = %handler.server, "no server/discover: initialising");
            let transport = StreamableHttpClientTransport::with_client(client, config);
            handler
                .clone()
                .serve_with_lifecycle(
                    super::erased::AnyTransport::new(transport),
                    ClientLifecycleMode::Initialize,
                )
                .await
        }
        other => other,
    }
    .map_err(|e| StartFailure::Init(Box::new(e)))
}

/// The name of a message's role as MCP writes it (`user`, `assistant`); `user` for one
/// that is not a plain name.
pub fn role_name(role: &impl serde::Serialize) -> String {
    serde_json::to_value(role)
        .ok()
        .and_then(|r| r.as_str().map(str::to_string))
        .unwrap_or_else(|| "user".into())
}

/// The process's working directory as the only root (a question no call can take).
fn process_roots() -> Vec<rmcp::model::Root> {
    std::env::current_dir()
        .ok()
        .and_then(|dir| reqwest::Url::from_directory_path(dir).ok())
        .map(|url| vec![rmcp::model::Root::new(url.to_string())])
        .unwrap_or_default()
}

/// Removes a call's progress route when the call ends.
struct RouteGuard {
    routes: Arc<ProgressRoutes>,
    token: String,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.remove(&self.token);
    }
}

/// Sends `notifications/cancelled` for a request given up on, unless disarmed.
struct CancelOnDrop {
    peer: rmcp::service::Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let _ = peer
                .notify_cancelled(rmcp::model::CancelledNotificationParam::new(
                    Some(id),
                    Some("abandoned by loki (cancelled or timed out)".into()),
                ))
                .await;
        });
    }
}

/// Why an HTTP server could not be initialised, in words: `cannot reach <url>: <reason>`
/// for network failures, the HTTP status for refusals, never rmcp's type names.
fn start_error(e: &rmcp::service::ClientInitializeError, url: &str) -> String {
    use rmcp::service::ClientInitializeError;
    let shown = super::sse::shown_url_str(url);
    match e {
        ClientInitializeError::TransportError { error, .. } => {
            transport_error(error.error.as_ref(), &shown)
        }
        ClientInitializeError::ConnectionClosed(_) => {
            format!("{shown} closed the connection during initialisation")
        }
        other => format!("{shown}: initialisation failed: {other}"),
    }
}

/// A call that failed in the transport, in words.
fn call_error(e: &rmcp::ServiceError, spec: &ServerSpec) -> String {
    match e {
        rmcp::ServiceError::TransportSend(error) => {
            let shown = match &spec.transport {
                Transport::Http { url, .. } | Transport::Sse { url, .. } => {
                    super::sse::shown_url_str(url)
                }
                Transport::Stdio { .. } | Transport::Carried(_) => {
                    format!("MCP server `{}`", spec.name)
                }
            };
            transport_error(error.error.as_ref(), &shown)
        }
        other => other.to_string(),
    }
}

/// The failure inside a transport error, prefixed by `shown` (the server): "cannot reach"
/// and reqwest's cause chain for network errors, the status for HTTP refusals.
fn transport_error(error: &(dyn std::error::Error + Send + Sync + 'static), shown: &str) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let error = match error.downcast_ref::<super::erased::TransportError>() {
        Some(erased) => erased.inner(),
        None => error,
    };
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(e))
            if e.is_connect() || e.is_timeout() || e.is_request() =>
        {
            format!(
                "cannot reach {shown}: {}",
                crate::client::http::error_chain(e)
            )
        }
        Some(StreamableHttpError::Client(e)) => {
            format!("{shown}: {}", crate::client::http::error_chain(e))
        }
        Some(other) => format!("{shown}: {other}"),
        None => format!("{shown}: {error}"),
    }
}

/// A result as text (text blocks, structured content as JSON, images and resources
/// described) and its images as `data:` URLs; `Err` when the server flagged an error.
pub fn render(result: &CallToolResult) -> Result<(String, Vec<String>), McpError> {
    let mut parts: Vec<String> = Vec::new();
    let mut images: Vec<String> = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(i) => {
                parts.push(format!(
                    "[image {}, {} bytes of base64]",
                    i.mime_type,
                    i.data.len()
                ));
                images.push(format!("data:{};base64,{}", i.mime_type, i.data));
            }
            ContentBlock::ResourceLink(r) => parts.push(format!("[resource {}]", r.uri)),
            ContentBlock::Resource(r) => parts
                .push(serde_json::to_string(&r.resource).unwrap_or_else(|_| "[resource]".into())),
            _ => parts.push("[unsupported content]".into()),
        }
    }
    if let Some(structured) = &result.structured_content
        && parts.iter().all(|p| p.trim().is_empty())
    {
        parts = vec![structured.to_string()];
    }
    let text = parts.join("\n");
    if result.is_error.unwrap_or(false) {
        Err(McpError::ToolFailed(if text.is_empty() {
            "the tool reported an error".into()
        } else {
            text
        }))
    } else {
        Ok((text, images))
    }
}
