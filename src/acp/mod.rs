//! `loki --acp`: loki as an agent of the Agent Client Protocol (Zed, JetBrains IDEs,
//! Neovim and other editors), JSON-RPC over stdio. A driver like the others: each ACP
//! session is a [`Conversation`] kept in a loki session of the same id; a prompt is an
//! [`Op::Prompt`], `session/cancel` an [`Op::Interrupt`] through the conversation's
//! [`crate::conversation::Remote`], approvals are `session/request_permission` requests,
//! and the conversation is closed (saved) when the editor goes away. See `docs/acp.md`.

mod prompt;
mod updates;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::conversation::{Conversation, ConversationSpec, Remote, catalog};
use crate::jsonrpc::peer::Peer;
use crate::jsonrpc::{Fault, Incoming, JsonRpc, code};
use crate::state::AppState;
use crate::term::stdin_lines::{Read, key_in, stdin_lines};
use loki_protocol::command::Command;
use loki_protocol::emitter::Discard;
use loki_protocol::op::Op;
use loki_wire::message::Role;

/// The protocol version spoken.
const PROTOCOL_VERSION: u64 = 1;

/// The editor's side of the connection.
type Editor = Peer<JsonRpc>;

/// One ACP session.
struct Session {
    conversation: tokio::sync::Mutex<Option<Conversation>>,
    remote: Remote,
    updates: Arc<updates::Updates>,
}

/// The agent: the editor, the sessions, and what the user decided at start.
struct Agent {
    state: Arc<AppState>,
    peer: Arc<Editor>,
    yolo: bool,
    sessions: std::sync::Mutex<HashMap<String, Arc<Session>>>,
    /// The editor's `fs` capabilities from `initialize`: read, write.
    files: std::sync::Mutex<(bool, bool)>,
}

/// Serves ACP on stdio until the editor closes stdin; the exit status.
pub async fn serve(state: Arc<AppState>, yolo: bool) -> anyhow::Result<u8> {
    let (peer, writer) = Peer::stdio(JsonRpc);
    let agent = Arc::new(Agent {
        state,
        peer: Arc::new(peer),
        yolo,
        sessions: std::sync::Mutex::new(HashMap::new()),
        files: std::sync::Mutex::new((false, false)),
    });
    // Each line is bounded (`max_input_size`): an over-long or broken one is answered
    // with an error and skipped, and the sessions open go on.
    let max_bytes = agent.state.config.max_input_size;
    let mut lines = stdin_lines(max_bytes);
    while let Some(Ok(read)) = lines.recv().await {
        match read {
            Read::Line(line) if line.trim().is_empty() => {}
            Read::Line(line) => match serde_json::from_str::<Value>(&line) {
                Ok(message) => agent.take(message),
                Err(_) => agent.fail(&Value::Null, code::PARSE_ERROR, "not a JSON-RPC message"),
            },
            Read::TooLong { bytes, head } => {
                let text = format!(
                    "a message of {} is over max_input_size ({}); skipped",
                    crate::input::human_size(bytes),
                    crate::input::human_size(max_bytes)
                );
                // An answer to a request of loki's (a file read for a tool) fails that
                // request rather than leave it waiting; a request is refused by its id.
                let id = key_in(&head, "id", 1).unwrap_or(Value::Null);
                if !agent.peer.fail_pending(&id, &text) {
                    agent.fail(&id, code::INVALID_REQUEST, &text);
                }
            }
            Read::NotUtf8 => {
                let text = "a message that is not UTF-8; skipped";
                agent.fail(&Value::Null, code::PARSE_ERROR, text);
            }
        }
    }
    agent.peer.close();
    agent.close_all().await;
    drop(agent);
    let _ = writer.await;
    Ok(0)
}

impl Agent {
    /// The editor's request `id` failed (`id` null: the request could not be read).
    fn fail(&self, id: &Value, code: i64, message: &str) {
        self.peer.respond(id, Err(Fault::new(code, message)));
    }

    /// One message from the editor: an answer to loki's request, a notification, a
    /// request answered from a task of its own (a prompt runs while others arrive), or
    /// a batch of those (JSON-RPC 2.0 allows them; editors do not send them, but one
    /// that does gets its answers as one array).
    fn take(self: &Arc<Self>, message: Value) {
        if let Value::Array(batch) = message {
            self.take_batch(batch);
            return;
        }
        if let Some(request) = self.request_of(message) {
            let agent = Arc::clone(self);
            tokio::spawn(async move {
                let (reply, opened) = agent.reply(request).await;
                let _ = agent.peer.send(&reply);
                agent.announce(opened);
            });
        }
    }

    /// A batch: every element handled as a message of its own, the replies to its
    /// requests sent together as one array once all are answered (none when it held
    /// only notifications and answers). An empty batch is one `Invalid Request`.
    fn take_batch(self: &Arc<Self>, batch: Vec<Value>) {
        if batch.is_empty() {
            self.fail(&Value::Null, code::INVALID_REQUEST, "an empty batch");
            return;
        }
        let requests: Vec<Incoming> = batch
            .into_iter()
            .filter_map(|message| match message {
                // A batch inside a batch is not a request.
                Value::Array(_) => Some(Incoming::Invalid),
                message => self.request_of(message),
            })
            .collect();
        if requests.is_empty() {
            return;
        }
        let agent = Arc::clone(self);
        tokio::spawn(async move {
            let (replies, opened): (Vec<Value>, Vec<Option<Arc<Session>>>) =
                futures_util::future::join_all(requests.into_iter().map(|r| agent.reply(r)))
                    .await
                    .into_iter()
                    .unzip();
            let _ = agent.peer.send(&Value::Array(replies));
            for session in opened {
                agent.announce(session);
            }
        });
    }

    /// Handles an answer or a notification at once; a request (or something that is no
    /// JSON-RPC message at all) is returned to be answered.
    fn request_of(&self, message: Value) -> Option<Incoming> {
        match self.peer.route(message)? {
            Incoming::Notification { method, params } => {
                self.notified(&method, &params);
                None
            }
            request => Some(request),
        }
    }

    /// The reply to one request, and the session it opened (`session/new`,
    /// `session/load`), to [`Agent::announce`] once the reply is out.
    async fn reply(self: &Arc<Self>, request: Incoming) -> (Value, Option<Arc<Session>>) {
        match request {
            Incoming::Request { id, method, params } => {
                let (answer, opened) = match method.as_str() {
                    "session/new" | "session/load" => {
                        match self.open_session(&method, &params).await {
                            Ok((answer, session)) => (Ok(answer), Some(session)),
                            Err(fault) => (Err(fault), None),
                        }
                    }
                    _ => (self.answer(&method, params).await, None),
                };
                (self.peer.response(&id, answer), opened)
            }
            _ => {
                let fault = Fault::new(code::INVALID_REQUEST, "not a JSON-RPC request object");
                (self.peer.response(&Value::Null, Err(fault)), None)
            }
        }
    }

    /// What a new or loaded session tells the editor once its answer is out: the `/`
    /// commands it offers, and a loaded session's todo list as the plan. Sent earlier,
    /// they would name a session the editor does not know yet (the TypeScript SDK routes
    /// a session's updates only from its `session/new` answer on, and drops them before).
    fn announce(&self, opened: Option<Arc<Session>>) {
        let Some(session) = opened else { return };
        session
            .updates
            .update(prompt::available_commands(&self.state, &session));
        session.updates.plan();
    }

    fn notified(&self, method: &str, params: &Value) {
        if method == "session/cancel"
            && let Some(session) = self.session(params)
        {
            let _ = session.remote.submit(Op::Interrupt);
        }
    }

    fn session(&self, params: &Value) -> Option<Arc<Session>> {
        let id = params["sessionId"].as_str()?;
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    async fn answer(self: &Arc<Self>, method: &str, params: Value) -> Result<Value, Fault> {
        match method {
            "initialize" => {
                let fs = &params["clientCapabilities"]["fs"];
                *self
                    .files
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = (
                    fs["readTextFile"] == json!(true),
                    fs["writeTextFile"] == json!(true),
                );
                Ok(initialized(&params))
            }
            "authenticate" => Ok(json!({})),
            "session/prompt" => {
                let session = self.session(&params).ok_or_else(unknown_session)?;
                prompt::run(&self.state, &session, &params).await
            }
            "session/set_mode" => {
                let session = self.session(&params).ok_or_else(unknown_session)?;
                self.set_mode(&session, &params).await
            }
            other => Err(Fault::new(
                code::METHOD_NOT_FOUND,
                format!("unknown method `{other}`"),
            )),
        }
    }

    /// `session/new`, or `session/load` of the session its `sessionId` names.
    async fn open_session(
        &self,
        method: &str,
        params: &Value,
    ) -> Result<(Value, Arc<Session>), Fault> {
        let load = (method == "session/load")
            .then(|| params["sessionId"].as_str().unwrap_or_default().to_string());
        self.open(params, load).await
    }

    /// `session/new` (a new loki session) or `session/load` (an existing one, its
    /// conversation replayed as updates).
    async fn open(
        &self,
        params: &Value,
        load: Option<String>,
    ) -> Result<(Value, Arc<Session>), Fault> {
        let cwd = PathBuf::from(params["cwd"].as_str().unwrap_or_default());
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(Fault::new(
                code::INVALID_PARAMS,
                format!("cwd `{}` is not an absolute directory", cwd.display()),
            ));
        }
        let mcp_servers = self.editor_servers(&params["mcpServers"]);
        let id = match &load {
            Some(id) => {
                let stored = catalog::stored_session(&self.state, id).await;
                if !matches!(stored, Ok(Some(_))) {
                    return Err(Fault::new(
                        code::INVALID_PARAMS,
                        format!("no session `{id}`"),
                    ));
                }
                id.clone()
            }
            None => new_session_id(),
        };
        let approver: Option<Arc<dyn crate::tool::approve::Approver>> = (!self.yolo).then(|| {
            Arc::new(updates::EditorApprover {
                peer: Arc::clone(&self.peer),
                session: id.clone(),
            }) as _
        });
        let (read, write) = *self
            .files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let editor_files: Option<Arc<dyn crate::tool::EditorFiles>> = (read || write).then(|| {
            Arc::new(updates::EditorFiles {
                peer: Arc::clone(&self.peer),
                session: id.clone(),
                read,
                write,
            }) as _
        });
        let todo = Arc::default();
        let spec = ConversationSpec {
            commands: vec![Command::OpenSession(id.clone())],
            project_permissions: project_permissions(&self.state.paths.config_dir, &cwd),
            cwd: Some(cwd.clone()),
            approver,
            editor_files,
            yolo: self.yolo,
            mcp_servers,
            // The todo tools, the list sent as the plan when one changed it; the agent
            // goes on while items are open, as a coding agent in an editor does.
            todo: Some(Arc::clone(&todo)),
            auto_continue: true,
            ..ConversationSpec::default()
        };
        let conversation = Conversation::open(&self.state, spec)
            .await
            .map_err(|e| Fault::new(code::INTERNAL, e.to_string()))?;
        let updates = Arc::new(updates::Updates::new(
            Arc::clone(&self.peer),
            id.clone(),
            cwd,
            todo,
        ));
        if load.is_some() {
            replay(&updates, &conversation);
        }
        let mode = conversation.status().permission_mode;
        let session = Arc::new(Session {
            remote: conversation.remote(),
            conversation: tokio::sync::Mutex::new(Some(conversation)),
            updates,
        });
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id.clone(), Arc::clone(&session));
        let mut result = json!({"modes": modes(mode)});
        if load.is_none() {
            result["sessionId"] = json!(id);
        }
        Ok((result, session))
    }

    /// The editor's MCP servers for a session; one it describes in a way loki cannot use
    /// is left out, with a warning in the log.
    fn editor_servers(&self, servers: &Value) -> Vec<crate::mcp::config::ServerSpec> {
        servers
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(
                |server| match crate::mcp::config::from_acp(server, &self.state.env) {
                    Ok(spec) => Some(spec),
                    Err((name, why)) => {
                        tracing::warn!("acp: the editor's MCP server `{name}` is not used: {why}");
                        None
                    }
                },
            )
            .collect()
    }

    /// `session/set_mode`: one of loki's permission modes.
    async fn set_mode(&self, session: &Session, params: &Value) -> Result<Value, Fault> {
        let mode = params["modeId"]
            .as_str()
            .and_then(crate::config::permissions::PermissionMode::parse)
            .ok_or_else(|| {
                Fault::new(
                    code::INVALID_PARAMS,
                    format!("unknown mode {}", params["modeId"]),
                )
            })?;
        let mut guard = session.conversation.lock().await;
        let conversation = guard.as_mut().ok_or_else(unknown_session)?;
        let set = Command::Set {
            key: "permission_mode".into(),
            value: mode.name().into(),
        };
        conversation
            .submit(Op::Command(set), &Discard)
            .await
            .map_err(|e| Fault::new(code::INTERNAL, e.to_string()))?;
        Ok(json!({}))
    }

    /// The editor went away: every conversation is closed (its session saved).
    async fn close_all(&self) {
        let sessions: Vec<Arc<Session>> = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain()
            .map(|(_, s)| s)
            .collect();
        for session in sessions {
            session.remote.input_ended();
            let conversation = session.conversation.lock().await.take();
            if let Some(conversation) = conversation {
                let closed = conversation.close(&Discard).await;
                if let Err(e) = closed.saved {
                    tracing::warn!("acp: cannot save a session: {e}");
                }
            }
        }
    }
}

fn unknown_session() -> Fault {
    Fault::new(code::INVALID_PARAMS, "unknown sessionId")
}

/// The answer to `initialize`.
fn initialized(params: &Value) -> Value {
    let asked = params["protocolVersion"]
        .as_u64()
        .unwrap_or(PROTOCOL_VERSION);
    json!({
        "protocolVersion": asked.min(PROTOCOL_VERSION),
        "agentCapabilities": {
            "loadSession": true,
            "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
            "mcpCapabilities": {"http": true, "sse": true},
        },
        "authMethods": [],
        "agentInfo": {"name": "loki", "title": "loki", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// The modes an editor can switch between.
fn modes(current: &str) -> Value {
    json!({
        "currentModeId": current,
        "availableModes": [
            {"id": "default", "name": "Ask", "description": "Ask before tools that write files or run commands"},
            {"id": "accept-edits", "name": "Accept edits", "description": "File edits in the project run without asking; commands still ask"},
            {"id": "plan", "name": "Plan", "description": "Only tools that read run: investigate and propose a plan"},
            {"id": "yolo", "name": "Yolo", "description": "Run every tool without asking"},
        ],
    })
}

/// A new session's id: `acp-` and the time, unique enough for one user.
fn new_session_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("acp-{}-{:04x}", now.as_secs(), fastrand::u16(..))
}

/// A loaded session's conversation, sent as user and agent message chunks.
fn replay(updates: &updates::Updates, conversation: &Conversation) {
    for (role, text) in conversation.transcript() {
        let kind = if role == Role::User {
            "user_message_chunk"
        } else {
            "agent_message_chunk"
        };
        updates.update(json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}}));
    }
}

/// The rules of the project a session works in: its deny and ask rules always, its allow
/// rules when the user trusted the project (as the CLI does; no one is asked here).
fn project_permissions(
    config_dir: &std::path::Path,
    cwd: &std::path::Path,
) -> Option<crate::config::permissions::PermissionsConfig> {
    use crate::config::project::{ProjectSettings, remembered};
    let found = ProjectSettings::find(cwd)?;
    let trusted = remembered(config_dir, &found.root) == Some(true);
    Some(crate::config::permissions::PermissionsConfig {
        deny: found.permissions.deny,
        ask: found.permissions.ask,
        allow: if trusted {
            found.permissions.allow
        } else {
            Vec::new()
        },
        origins: found.permissions.origins,
        ..Default::default()
    })
}
