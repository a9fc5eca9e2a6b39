//! loki's own REST API: one-shot completions, sessions (create, list, read, delete,
//! post a message, compress, empty, attach a role or knowledge base), approvals, and the
//! listings, health and metrics endpoints.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth::Caller;
use super::cluster;
use super::reply::{ApiError, json_body};
use super::run::{ApprovalPolicy, Decided, Ran, Run, RunKey, Where};
use super::{RequestInfo, Server};
use crate::conversation::{Conversation, ConversationSpec, catalog};
use crate::error::CoreError;
use loki_protocol::command::Command;
use loki_protocol::emitter::{CollectingEmitter, Discard, Emitter};
use loki_protocol::event::Event;
use loki_protocol::op::Decision;
use loki_protocol::op::UserInput;

/// Parses a JSON body (an empty body is `{}`).
pub(super) fn body<T: serde::de::DeserializeOwned>(
    bytes: Result<Bytes, BytesRejection>,
) -> Result<T, ApiError> {
    let bytes = bytes.map_err(|e| {
        let status = e.status();
        let code = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "too_large"
        } else {
            "invalid_request"
        };
        ApiError::new(status, code, e.body_text())
    })?;
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        &bytes
    };
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
}

fn policy(text: Option<&str>, default: ApprovalPolicy) -> Result<ApprovalPolicy, ApiError> {
    match text {
        None => Ok(default),
        Some(text) => ApprovalPolicy::parse(text).ok_or_else(|| {
            ApiError::bad_request(format!("`approval` is ask, auto or deny, not `{text}`"))
        }),
    }
}

/// A prompt sent to `/v1/completions` or a session.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Completion {
    prompt: String,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    rag: Option<String>,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    approval: Option<String>,
}

/// Whether a completion is asked for as events without `"stream": true` in its body: an
/// `Accept: text/event-stream` header (what `EventSource` and SSE clients send) or a
/// `?stream=true` query.
fn wants_stream(headers: &axum::http::HeaderMap, uri: &axum::http::Uri) -> bool {
    let accepts_events = headers
        .get_all(axum::http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.to_ascii_lowercase().contains("text/event-stream"));
    let asked_in_query = uri.query().is_some_and(|query| {
        form_urlencoded::parse(query.as_bytes())
            .any(|(key, value)| key == "stream" && matches!(value.as_ref(), "true" | "1"))
    });
    accepts_events || asked_in_query
}

/// Runs `request`'s prompt in a conversation set up by `commands`: as SSE events when
/// it streams, else as one JSON result. Either way the run is tracked — its status, a
/// cancel and (with several instances) an approval or an answer can reach it from any
/// instance.
pub(super) async fn respond(
    server: &Arc<Server>,
    info: &RequestInfo,
    request: Completion,
    commands: Vec<Command>,
    approvals: ApprovalPolicy,
) -> Response {
    let spec = ConversationSpec {
        model: request.model,
        commands,
        ..ConversationSpec::default()
    };
    let (prompt, stream) = (request.prompt, request.stream);
    let cancel = server.shutdown.child_token();
    let key = run_key(server, info, &spec).await;
    let namespace = caller_namespace(server, &info.caller);
    let started = server
        .track(
            &key.id,
            &key.owner,
            key.session.clone(),
            cancel.clone(),
            namespace,
        )
        .await;
    // Its questions wait on the run's board, where `POST …/questions/{id}` answers them.
    let spec = ConversationSpec {
        escalations: Some(Arc::clone(&started.tracked.questions)),
        ..spec
    };
    let input = UserInput {
        text: prompt,
        ..UserInput::default()
    };
    let run = Run {
        spec,
        input,
        key,
        approvals,
    };
    if stream {
        return stream_run(server, started, run, cancel);
    }
    let collector = Arc::new(CollectingEmitter::new());
    let emitter: Arc<dyn Emitter> = Arc::new(super::streamed::Both(
        Arc::clone(&collector) as _,
        started.emitter,
    ));
    let tracked = Some(started.tracked);
    match server.run_to_end(run, emitter, cancel, tracked).await {
        Ok(ran) => result_json(info, &ran, &collector),
        Err(e) => e.into_response(),
    }
}

/// Who runs what, and in which session (by id, so an approval naming the session by
/// its alias still meets the run).
async fn run_key(server: &Server, info: &RequestInfo, spec: &ConversationSpec) -> RunKey {
    let opened = spec.commands.iter().find_map(|c| match c {
        Command::OpenSession(id) => Some(id.clone()),
        _ => None,
    });
    let session = match opened {
        Some(key) => Some(session_id_of(server, &key).await),
        None => None,
    };
    RunKey {
        id: info.id.clone(),
        owner: info.caller.subject.clone(),
        session,
    }
}

/// A streamed run of loki's API: the client that started it reads its log like any
/// reader that comes back; its questions can be answered (`question_asked`), so the
/// model may ask them.
fn stream_run(
    server: &Arc<Server>,
    started: super::streamed::Stream,
    mut run: Run,
    cancel: tokio_util::sync::CancellationToken,
) -> Response {
    run.spec = ConversationSpec {
        id: Some(started.conversation),
        observer: Some(Arc::clone(&started.emitter)),
        asker: Some(started.asker),
        user_tools: true,
        ..run.spec
    };
    let tracked = started.tracked;
    let Ok(response) = tracked.log.stream(0) else {
        return ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "the run's events are gone",
        )
        .into_response();
    };
    let task = server.start(run, started.emitter, cancel);
    server.hold(&tracked);
    drop(server.end_when_done(task, Some(tracked)));
    response
}

/// The JSON result of a run that is not streamed.
fn result_json(info: &RequestInfo, ran: &Ran, events: &CollectingEmitter) -> Response {
    let request_id = &info.id;
    let own: Vec<Event> = events
        .envelopes()
        .into_iter()
        .filter(|e| e.conversation.to_string() == ran.conversation)
        .map(|e| e.event)
        .collect();
    let mut calls: Vec<Value> = Vec::new();
    let mut answer = String::new();
    let mut usage = Value::Null;
    let mut finish = Value::Null;
    let mut cost = Value::Null;
    for event in own {
        match event {
            Event::AssistantDelta(d) => answer.push_str(&d.text),
            Event::ToolCallStarted(c) => calls.push(json!({
                "id": c.call_id, "name": c.name, "arguments": c.arguments
            })),
            Event::ToolCallFinished(done) => {
                if let Some(call) = calls.iter_mut().find(|c| c["id"] == done.call_id) {
                    call["result"] = json!(done.result);
                    call["ok"] = json!(done.ok);
                }
            }
            Event::TurnFinished(done) => {
                usage = serde_json::to_value(done.usage).unwrap_or_default();
                finish = json!(done.finish_reason);
                cost = json!(done.cost_usd);
            }
            _ => {}
        }
    }
    let session = ran
        .session
        .as_ref()
        .map(|(id, name)| json!({"id": id, "name": shown_alias(&info.caller, name)}));
    match &ran.result {
        Ok(outcome) => json_body(
            StatusCode::OK,
            &json!({
                "request_id": request_id,
                "conversation": ran.conversation,
                "session": session,
                "final_message": outcome.text,
                "tool_calls": calls,
                "usage": usage,
                "finish_reason": finish,
                "cost_usd": cost,
            }),
        ),
        Err(e) => {
            let error = ran.api_error(e);
            let mut body = json!({"error": {
                "code": error.code,
                "message": error.message,
                "request_id": request_id,
            }});
            if !answer.is_empty() {
                body["partial"] = json!(answer);
            }
            json_body(error.status, &body)
        }
    }
}

/// `POST /v1/completions`: a prompt without a session.
pub(super) async fn completions(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let raw: Value = match body(bytes) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    if super::legacy::is_openai(&headers, &raw) {
        let chat = match super::legacy::as_chat(&raw) {
            Ok(chat) => chat,
            Err(why) => return ApiError::bad_request(why).openai().into_response(),
        };
        let stream = chat["stream"] == true;
        let bytes = Ok(Bytes::from(chat.to_string()));
        let answer = super::openai::chat_completions(State(server), Extension(info), bytes).await;
        return super::legacy::as_text_completion(answer, stream);
    }
    let mut request: Completion = match serde_json::from_value(raw) {
        Ok(r) => r,
        Err(e) => {
            return ApiError::bad_request(format!("invalid JSON body: {e}")).into_response();
        }
    };
    request.stream |= wants_stream(&headers, &uri);
    let approvals = match policy(request.approval.as_deref(), ApprovalPolicy::Ask) {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    let mut commands = Vec::new();
    if let Some(agent) = &request.agent {
        commands.push(Command::UseAgent {
            name: agent.clone(),
            variables: Vec::new(),
            session: None,
        });
    }
    if let Some(role) = &request.role {
        commands.push(Command::UseRole(role.clone()));
    }
    if let Some(rag) = &request.rag {
        commands.push(Command::UseRag(rag.clone()));
    }
    if let Some(t) = request.temperature {
        commands.push(Command::Set {
            key: "temperature".into(),
            value: t.to_string(),
        });
    }
    respond(&server, &info, request, commands, approvals).await
}

/// `POST /v1/sessions` body.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NewSession {
    #[serde(default)]
    alias: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    rag: Option<String>,
    #[serde(default)]
    approval: Option<String>,
}

/// Opens session `id` in a conversation of its own, applies `command`, saves it; closed
/// whatever became of the command (the session's lock is let go).
async fn change_session(
    server: &Arc<Server>,
    caller: &Caller,
    id: &str,
    command: Command,
) -> Result<Value, ApiError> {
    owned_session(server, caller, id).await?;
    let spec = ConversationSpec {
        commands: vec![Command::OpenSession(id.to_string())],
        hold_session: true,
        force_save: true,
        ..ConversationSpec::default()
    };
    let mut conversation = Conversation::open(&server.state, spec).await?;
    let applied = conversation.command(command, &Discard).await;
    let applied = conversation
        .finish(applied, &Discard)
        .await
        .into_result()
        .map_err(|e| change_error(caller, id, &e))?;
    let notes: Vec<&str> = applied.notes().collect();
    Ok(json!({"status": "ok", "notes": notes}))
}

/// A change the core refused, in the API's words: the session named as its owner wrote
/// it, and what to do over HTTP rather than in the REPL.
fn change_error(caller: &Caller, id: &str, e: &CoreError) -> ApiError {
    let shown = shown_alias(caller, id);
    match e {
        CoreError::RoleLocked { messages, .. } => ApiError::new(
            StatusCode::CONFLICT,
            "conflict",
            format!(
                "session `{shown}` already has {messages} messages: its role cannot change \
                 (that would rewrite the system prompt of its history); create a session \
                 with the role instead (POST /v1/sessions with `role`)"
            ),
        ),
        other => {
            let mut error = ApiError::from(other);
            error.message = error.message.replace(&namespace(caller), "");
            error
        }
    }
}

/// The stored session `id`, if `caller` may use it: its own, or any with
/// `admin:sessions`. Another subject's, or one made outside the server (the CLI's), is
/// refused as forbidden.
async fn owned_session(
    server: &Server,
    caller: &Caller,
    id: &str,
) -> Result<loki_wire::session_file::Session, ApiError> {
    let Some(session) = catalog::stored_session(&server.state, id).await? else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "session_not_found",
            format!("no session `{}`", shown_alias(caller, id)),
        ));
    };
    if !caller.owns(session.owner.as_deref()) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            match session.owner {
                Some(_) => format!("session `{id}` belongs to another subject"),
                None => format!(
                    "session `{id}` was made outside the server; only an admin key may use it"
                ),
            },
        ));
    }
    Ok(session)
}

/// A session named in a route (`/v1/sessions/{id}/…`), as the store knows it. With keys,
/// each subject's aliases are its own: the store holds them as `<namespace>.<alias>`
/// ([`namespaced`]), so one key neither learns another's names nor takes them first. An
/// id names one session whoever asks (ownership is checked after), and a session named
/// before namespaces keeps its name for its owner.
pub(super) struct SessionKey(pub String);

impl axum::extract::FromRequestParts<Arc<Server>> for SessionKey {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        server: &Arc<Server>,
    ) -> Result<Self, Self::Rejection> {
        let Path(key) = Path::<String>::from_request_parts(parts, server)
            .await
            .map_err(IntoResponse::into_response)?;
        let caller = parts
            .extensions
            .get::<RequestInfo>()
            .map(|i| i.caller.clone());
        Ok(Self(match caller {
            Some(caller) => store_name(server, &caller, &key).await,
            None => key,
        }))
    }
}

/// The store's name for `key` as `caller` says it (see [`SessionKey`]).
async fn store_name(server: &Server, caller: &Caller, key: &str) -> String {
    if server.keys().disabled() {
        return key.to_string();
    }
    let by_id = matches!(
        server.state.sessions.resolve(key).await,
        Ok(Some((id, _))) if id.to_string() == key
    );
    if by_id {
        return key.to_string();
    }
    let own = namespaced(caller, key);
    if matches!(
        catalog::stored_session(&server.state, &own).await,
        Ok(Some(_))
    ) {
        return own;
    }
    match catalog::stored_session(&server.state, key).await {
        Ok(Some(session)) if caller.owns(session.owner.as_deref()) => key.to_string(),
        _ => own,
    }
}

/// `alias` in `caller`'s namespace: `s<8 hex digits of the subject's SHA-256>.<alias>`.
fn namespaced(caller: &Caller, alias: &str) -> String {
    format!("{}{alias}", namespace(caller))
}

/// The prefix of `caller`'s aliases in the store; none when keys are off.
fn caller_namespace(server: &Server, caller: &Caller) -> String {
    if server.keys().disabled() {
        String::new()
    } else {
        namespace(caller)
    }
}

fn namespace(caller: &Caller) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, caller.subject.as_bytes());
    let hex: String = digest.as_ref()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("s{hex}.")
}

/// An alias as its owner wrote it (the namespace taken off).
fn shown_alias(caller: &Caller, stored: &str) -> String {
    stored
        .strip_prefix(&namespace(caller))
        .unwrap_or(stored)
        .to_string()
}

/// `POST /v1/sessions`.
pub(super) async fn create_session(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let request: NewSession = body(bytes)?;
    let approvals = policy(request.approval.as_deref(), ApprovalPolicy::Ask)?;
    let alias = request
        .alias
        .clone()
        .unwrap_or_else(|| format!("api-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]));
    let name = if server.keys().disabled() {
        alias.clone()
    } else {
        namespaced(&info.caller, &alias)
    };
    if catalog::stored_session(&server.state, &name)
        .await?
        .is_some()
    {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "conflict",
            format!("a session `{alias}` exists already"),
        ));
    }
    // With keys, the session is the key's subject's; with auth off, nobody's. Its
    // approval policy is kept in it, so every instance (and a restarted one) applies it.
    let owner = (!server.keys().disabled()).then(|| info.caller.subject.clone());
    let mut commands = vec![
        Command::OpenSession(name.clone()),
        Command::ClaimSession {
            owner,
            approvals: approvals.name().to_string(),
        },
    ];
    if let Some(role) = &request.role {
        commands.push(Command::UseRole(role.clone()));
    }
    if let Some(rag) = &request.rag {
        commands.push(Command::UseRag(rag.clone()));
    }
    let spec = ConversationSpec {
        model: request.model.clone(),
        commands,
        hold_session: true,
        ..ConversationSpec::default()
    };
    let mut conversation = Conversation::open(&server.state, spec).await?;
    let saved = conversation
        .command(Command::SaveSession(None), &Discard)
        .await;
    let status = conversation.status();
    let body = json!({
        "id": status.session.map(|s| s.id).unwrap_or_default(),
        "alias": alias,
        "model": status.model,
        "role": status.role,
        "rag": status.rag,
        "approval": approvals.name(),
    });
    // Closed whether or not the save went through (the session's lock is let go).
    conversation.finish(saved, &Discard).await.into_result()?;
    Ok(json_body(StatusCode::CREATED, &body))
}

/// `GET /v1/sessions`.
pub(super) async fn list_sessions(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
) -> Result<Response, ApiError> {
    let mut listed = catalog::sessions(&server.state).await?;
    if !info.caller.sees_all_sessions() {
        // Only the caller's own: each session says who made it.
        let mut own = Vec::with_capacity(listed.len());
        for meta in listed {
            let owner = catalog::stored_session(&server.state, &meta.name())
                .await
                .ok()
                .flatten()
                .and_then(|s| s.owner);
            if owner.as_deref() == Some(info.caller.subject.as_str()) {
                own.push(meta);
            }
        }
        listed = own;
    }
    let sessions: Vec<Value> = listed
        .into_iter()
        .map(|meta| {
            let modified = httpdate::fmt_http_date(meta.last_modified);
            json!({
                "id": meta.id.as_ref().map(ToString::to_string),
                "alias": meta.alias.as_ref().map(|a| shown_alias(&info.caller, &a.to_string())),
                "name": shown_alias(&info.caller, &meta.name()),
                "last_modified": modified,
            })
        })
        .collect();
    Ok(json_body(StatusCode::OK, &json!({"sessions": sessions})))
}

/// `GET /v1/sessions/{id}`.
pub(super) async fn get_session(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    SessionKey(id): SessionKey,
) -> Result<Response, ApiError> {
    let session = owned_session(&server, &info.caller, &id).await?;
    let mut value = serde_json::to_value(&session).unwrap_or_default();
    // Named by its id or its alias, it answers with both, as the list does.
    use crate::session::store::SessionStore;
    let store: &dyn SessionStore = server.state.sessions.as_ref();
    let (real_id, alias) = match store.resolve(&id).await.map_err(CoreError::from)? {
        Some((real_id, alias)) => (real_id.to_string(), alias.map(|a| a.to_string())),
        None => (id.clone(), None),
    };
    value["id"] = json!(real_id);
    value["alias"] = json!(alias.map(|a| shown_alias(&info.caller, &a)));
    // Where the server keeps its files is the host's business.
    if let Some(fields) = value.as_object_mut() {
        fields.remove("cwd");
    }
    Ok(json_body(StatusCode::OK, &value))
}

/// `DELETE /v1/sessions/{id}`.
pub(super) async fn delete_session(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    SessionKey(id): SessionKey,
) -> Result<Response, ApiError> {
    owned_session(&server, &info.caller, &id).await?;
    delete_stored(&server, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Deletes the stored session `key` names through the store, without opening a
/// conversation. Its lock is taken first — waiting for a run in it to end, as turns on
/// one session follow each other — so a running turn never saves it back afterwards.
async fn delete_stored(server: &Server, key: &str) -> Result<(), CoreError> {
    use crate::session::store::SessionStore;
    let store: &dyn SessionStore = server.state.sessions.as_ref();
    let Some(handle) = store.open_key(key).await? else {
        return Err(crate::session::store::SessionError::NotFound {
            name: key.to_string(),
        }
        .into());
    };
    let _held = store.lock(&handle, &server.shutdown).await?;
    store.delete(handle.id()).await?;
    Ok(())
}

/// `POST /v1/sessions/{id}/completions`.
pub(super) async fn session_completions(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    SessionKey(id): SessionKey,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let mut request: Completion = match body(bytes) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    request.stream |= wants_stream(&headers, &uri);
    let session = match owned_session(&server, &info.caller, &id).await {
        Ok(session) => session,
        Err(e) => return e.into_response(),
    };
    let remembered = session
        .extra
        .get(crate::conversation::API_APPROVAL_KEY)
        .and_then(serde_yaml::Value::as_str)
        .and_then(ApprovalPolicy::parse)
        .unwrap_or_default();
    let approvals = match policy(request.approval.as_deref(), remembered) {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    if request.agent.is_some() || request.role.is_some() || request.rag.is_some() {
        return ApiError::bad_request(
            "a session keeps its role and knowledge base: change them with POST /v1/sessions/{id}/role or /rag",
        )
        .into_response();
    }
    let commands = vec![Command::OpenSession(id.clone())];
    respond(&server, &info, request, commands, approvals).await
}

/// A request that changes a session: the session as the store knows it, and who asks.
pub(super) struct SessionChange {
    server: Arc<Server>,
    caller: Caller,
    id: String,
}

impl axum::extract::FromRequestParts<Arc<Server>> for SessionChange {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        server: &Arc<Server>,
    ) -> Result<Self, Self::Rejection> {
        let SessionKey(id) = SessionKey::from_request_parts(parts, server).await?;
        let caller = parts
            .extensions
            .get::<RequestInfo>()
            .map(|i| i.caller.clone())
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal_error",
                    "the request has no caller",
                )
                .into_response()
            })?;
        Ok(Self {
            server: Arc::clone(server),
            caller,
            id,
        })
    }
}

impl SessionChange {
    /// Applies `command` to the session and says what it did.
    async fn apply(self, command: Command) -> Result<Response, ApiError> {
        let done = change_session(&self.server, &self.caller, &self.id, command).await?;
        Ok(json_body(StatusCode::OK, &done))
    }
}

/// `POST /v1/sessions/{id}/compress`.
pub(super) async fn compress_session(change: SessionChange) -> Result<Response, ApiError> {
    change.apply(Command::CompressSession).await
}

/// `POST /v1/sessions/{id}/empty`.
pub(super) async fn empty_session(change: SessionChange) -> Result<Response, ApiError> {
    change.apply(Command::ClearConversation).await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Named {
    name: String,
}

/// `POST /v1/sessions/{id}/role`.
pub(super) async fn use_role(
    change: SessionChange,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let named: Named = body(bytes)?;
    change.apply(Command::UseRole(named.name)).await
}

/// `DELETE /v1/sessions/{id}/role`.
pub(super) async fn exit_role(change: SessionChange) -> Result<Response, ApiError> {
    change.apply(Command::ExitRole).await
}

/// `POST /v1/sessions/{id}/rag`.
pub(super) async fn use_rag(
    change: SessionChange,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let named: Named = body(bytes)?;
    change.apply(Command::UseRag(named.name)).await
}

/// `DELETE /v1/sessions/{id}/rag`.
pub(super) async fn exit_rag(change: SessionChange) -> Result<Response, ApiError> {
    change.apply(Command::ExitRag).await
}

/// `POST /v1/sessions/{id}/agent`: agents keep their sessions in their own directory,
/// so a session cannot take one later.
pub(super) async fn use_agent(Path(id): Path<String>) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "conflict",
        format!(
            "session `{id}` cannot take an agent: an agent keeps its own sessions; send `agent` with each POST /v1/completions instead"
        ),
    )
}

/// `DELETE /v1/sessions/{id}/agent`.
pub(super) async fn exit_agent(Path(id): Path<String>) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "conflict",
        format!("session `{id}` has no agent"),
    )
}

#[derive(Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Approval {
    decision: String,
    #[serde(default)]
    message: Option<String>,
}

/// An approval another instance received (its body, as JSON) as a decision.
pub(super) fn approval_from_json(text: &str) -> Result<Decision, ApiError> {
    let approval: Approval = serde_json::from_str(text)
        .map_err(|e| ApiError::bad_request(format!("not an approval: {e}")))?;
    decision(approval)
}

fn decision(approval: Approval) -> Result<Decision, ApiError> {
    Ok(match (approval.decision.as_str(), approval.message) {
        ("allow", _) => Decision::Approve,
        ("allow_always", _) => Decision::ApproveAlways,
        ("deny", Some(message)) if !message.trim().is_empty() => Decision::DenyWithMessage(message),
        ("deny", _) => Decision::Deny,
        (other, _) => {
            return Err(ApiError::bad_request(format!(
                "`decision` is allow, allow_always or deny, not `{other}`"
            )));
        }
    })
}

/// `POST /v1/approvals/{call_id}`: the call of any of the caller's runs.
pub(super) async fn approval(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    Path(call_id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    decide(&server, &info, &Where::Any, &call_id, bytes).await
}

/// `POST /v1/runs/{run_id}/approvals/{call_id}`: the call of the run that request
/// `run_id` started.
pub(super) async fn run_approval(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    Path((run_id, call_id)): Path<(String, String)>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    decide(&server, &info, &Where::Run(run_id), &call_id, bytes).await
}

/// `POST /v1/sessions/{id}/approvals/{call_id}`: the call of a run in that session.
pub(super) async fn session_approval(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    Path((id, call_id)): Path<(String, String)>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let id = store_name(&server, &info.caller, &id).await;
    let session = session_id_of(&server, &id).await;
    decide(&server, &info, &Where::Session(session), &call_id, bytes).await
}

/// The id of the stored session `key` names (an alias or an id), so a run and an
/// approval naming the same session differently still meet; `key` itself when none.
async fn session_id_of(server: &Server, key: &str) -> String {
    match server.state.sessions.resolve(key).await {
        Ok(Some((id, _))) => id.to_string(),
        _ => key.to_string(),
    }
}

/// Answers call `call_id` of one of the caller's runs `at`; another subject's waiting
/// call is as good as missing. A call no run here waits on is looked for on the other
/// instances (through the database) when there are any.
async fn decide(
    server: &Server,
    info: &RequestInfo,
    at: &Where,
    call_id: &str,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let approval: Approval = body(bytes)?;
    let sent = serde_json::to_string(&approval).unwrap_or_default();
    let decided = decision(approval)?;
    let mut outcome = server.decide(&info.caller.subject, at, call_id, decided);
    if outcome == Decided::NotWaiting
        && let Some(cluster) = &server.cluster
    {
        let target = match at {
            Where::Any => cluster::Target::Any,
            Where::Run(run) => cluster::Target::Run(run),
            Where::Session(session) => cluster::Target::Session(session),
        };
        outcome = match cluster
            .answer(&info.caller.subject, "approval", call_id, target, &sent)
            .await
            .map_err(|e| ApiError::unavailable(e.to_string()))?
        {
            cluster::Delivered::Sent => Decided::Answered,
            cluster::Delivered::NotWaiting => Decided::NotWaiting,
            cluster::Delivered::Ambiguous(runs) => Decided::Ambiguous(runs),
        };
    }
    match outcome {
        Decided::Answered => Ok(json_body(
            StatusCode::OK,
            &json!({"status": "ok", "call_id": call_id}),
        )),
        Decided::NotWaiting => Err(ApiError::not_found(format!(
            "no call `{call_id}` of yours is waiting for approval"
        ))),
        Decided::Ambiguous(runs) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "ambiguous_call_id",
            format!(
                "runs {} each wait on a call `{call_id}`: answer one at /v1/runs/{{run_id}}/approvals/{call_id}",
                runs.join(", ")
            ),
        )),
    }
}

/// `GET /healthz/live`: the process answers.
pub(super) async fn live() -> Response {
    json_body(StatusCode::OK, &json!({"status": "ok"}))
}

/// `GET /healthz/ready`: 503 while stopping or with every request slot taken.
pub(super) async fn ready(State(server): State<Arc<Server>>) -> Response {
    let status = if server.shutdown.is_cancelled() || server.stopping.is_cancelled() {
        "stopping"
    } else if server.slots.available_permits() == 0 {
        "saturated"
    } else if !server.state.sessions.healthy().await {
        "store_unavailable"
    } else {
        return json_body(StatusCode::OK, &json!({"status": "ok"}));
    };
    json_body(StatusCode::SERVICE_UNAVAILABLE, &json!({"status": status}))
}

/// `GET /metrics`.
pub(super) async fn metrics(State(server): State<Arc<Server>>) -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        server.metrics.render(),
    )
        .into_response()
}

/// `GET /v1/info`.
pub(super) async fn info(State(server): State<Arc<Server>>) -> Response {
    json_body(
        StatusCode::OK,
        &json!({
            "name": "loki",
            "version": env!("CARGO_PKG_VERSION"),
            "model": server.state.config.model,
            "turns_active": server.metrics.active(),
            "endpoints": super::ENDPOINTS,
        }),
    )
}

/// `POST /v1/auth/check` (or `GET`): whether the key is good, whose it is and what it
/// may do. A bad key gets the 401 every route gives.
pub(super) async fn auth_check(Extension(info): Extension<RequestInfo>) -> Response {
    json_body(
        StatusCode::OK,
        &json!({
            "subject": info.caller.subject,
            "scopes": info.caller.scopes,
            "rate_limit": info.caller.rate_limit,
        }),
    )
}

/// `GET /v1/roles`.
pub(super) async fn roles(State(server): State<Arc<Server>>) -> Response {
    let names = crate::role::list(&server.state.paths.roles_dir);
    json_body(StatusCode::OK, &json!({"roles": names}))
}

/// `GET /v1/agents`.
pub(super) async fn agents(State(server): State<Arc<Server>>) -> Response {
    let names = crate::agent::list(&server.state.paths.agents_dir);
    json_body(StatusCode::OK, &json!({"agents": names}))
}

/// `GET /v1/rags`.
pub(super) async fn rags(State(server): State<Arc<Server>>) -> Response {
    let names = crate::rag::list(&server.state.paths.rags_dir);
    json_body(StatusCode::OK, &json!({"rags": names}))
}

/// `POST /v1/rags/{name}/rebuild`: indexes the knowledge base's sources again (changed
/// documents only are embedded), relative sources read from `api.tools.root`.
pub(super) async fn rebuild_rag(
    State(server): State<Arc<Server>>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let state = &server.state;
    crate::rag::validate_name(&name).map_err(|e| ApiError::from(CoreError::from(e)))?;
    if !crate::rag::store::meta_path(state.paths.rag_dir(&name), &name).exists() {
        return Err(ApiError::from(CoreError::from(
            crate::rag::RagError::Unknown { name: name.clone() },
        )));
    }
    let cwd = server
        .api()
        .tools
        .root
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let progress = crate::rag::progress::Silent;
    let build = crate::conversation::retrieval::build_context(
        state,
        &name,
        &cwd,
        &progress,
        server.shutdown.child_token(),
    );
    let report = crate::rag::build::rebuild(&build, &name)
        .await
        .map_err(|e| ApiError::from(CoreError::from(e)))?;
    Ok(json_body(
        StatusCode::OK,
        &json!({"name": name, "files": report.files, "chunks": report.chunks,
                "added": report.added, "removed": report.removed,
                "reused": report.reused, "embedded": report.embedded}),
    ))
}
