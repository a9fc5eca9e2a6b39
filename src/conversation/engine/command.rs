//! Commands that change a conversation rather than send a prompt: the REPL's
//! dot-commands, the CLI flags (`-s`, `-r`, `--prompt`, `-m`, `--empty-session`, …) and
//! later macros and the server, normalised into one enum and applied by one function,
//! [`apply`].
//!
//! Applying a command never prints and never asks; it returns a short confirmation for the
//! front end to show and reports session saves and compressions as events. Questions
//! (whether to save, under which name) are the front end's; what to do by default is the
//! save policy's ([`crate::conversation::policy`]).

use futures_util::future::BoxFuture;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::conversation::context::{RagChoice, RequestContext};
use crate::role::Role;
use crate::state::AppState;
use loki_wire::message::Role as MessageRole;

use crate::conversation::Sink;
use crate::error::CoreError;
use loki_protocol::command::Applied;
use loki_protocol::command::Command;
use loki_protocol::command::Line;
use loki_protocol::emitter::Emitter;
use loki_protocol::event::{Event, SessionSaved};

/// The session key holding the server's approval policy for it.
pub const API_APPROVAL_KEY: &str = "api_approval";

/// `.edit session`: the edited session replaces the stored one, through the store the
/// conversation's session lives in, and the conversation reads it again. A copy that does
/// not parse changes nothing.
async fn replace_session(
    state: &Arc<AppState>,
    ctx: &mut RequestContext,
    yaml: &str,
    base: &str,
) -> Result<Applied, CoreError> {
    let Some(handle) = ctx.session.clone() else {
        return Err(CoreError::NoSession);
    };
    let edited =
        crate::session::file_store::parse_yaml(std::path::Path::new("the edited session"), yaml)?;
    let id = handle.id().to_string();
    // The lock brings in what other writers stored; only a session still as it was when
    // the edit began is replaced (nothing is held while the editor is open).
    let cancel = ctx.cancel.clone();
    let hold = ctx
        .lock_session(state, Some(&cancel), &|_: &str| {})
        .await?;
    let current = ctx
        .session_snapshot()
        .map(|s| loki_wire::session_yaml::to_yaml(&s));
    let unchanged = matches!(current, Some(Ok(ref now)) if now == base);
    let saved = if unchanged {
        {
            let mut guard = handle.lock();
            *guard.get_mut() = edited;
        }
        handle.mark_dirty();
        ctx.sessions(state).save(&handle).await.map(drop)
    } else {
        Ok(())
    };
    drop(hold);
    if !unchanged {
        return Err(CoreError::Conflict(
            "the session changed while it was being edited (another loki wrote to it)".into(),
        ));
    }
    saved?;
    ctx.session = None;
    open_session(state, ctx, &id, false).await?;
    Ok(Applied::note(format!(
        "reloaded the session ({} messages)",
        ctx.history.len()
    )))
}

/// `.otr`: the switch the conversation's tree shares goes on; an agent's supervisor is
/// made again at the next run, off the record, so its sub-agents are too.
fn off_the_record(ctx: &mut RequestContext) -> Result<Applied, CoreError> {
    if ctx.otr.get() {
        return Ok(Applied::note("already off the record"));
    }
    if ctx.session.is_some() {
        return Err(CoreError::Conflict(
            "a session is open: leave it first (.exit session); off the record nothing is saved"
                .into(),
        ));
    }
    ctx.otr.set(true);
    ctx.save = false;
    ctx.supervisor = None;
    Ok(Applied::note(
        "off the record: nothing typed or answered is written from now on (history, log, \
         memory, messages.md), and only tools that read are offered",
    ))
}

/// Display settings `.set` accepts, handled by a terminal front end rather than the
/// conversation.
pub const DISPLAY_SETTINGS: &[(&str, &str)] = &[
    ("highlight", "<true|false>"),
    ("wrap", "<no|auto|width>"),
    ("wrap_code", "<true|false>"),
    ("theme", "<dark|light>"),
    ("light_theme", "<true|false>"),
];

/// Settings `.set` accepts, with the values they take (for help and completion).
pub const SETTABLE: &[(&str, &str)] = &[
    ("model", "<client:model>"),
    ("temperature", "<0..2|null>"),
    ("top_p", "<0..1|null>"),
    ("max_output_tokens", "<number|null>"),
    ("reasoning_effort", "<low|medium|high|null>"),
    ("stream", "<true|false>"),
    ("dry_run", "<true|false>"),
    ("save", "<true|false>"),
    ("function_calling_support", "<true|false>"),
    ("enabled_tools", "<all|tool,tool…|null>"),
    ("yolo", "<true|false>"),
    ("permission_mode", "<default|accept-edits|plan|yolo|next>"),
    ("sandbox", "<read-only|workspace-write|danger-full-access>"),
    ("save_session", "<true|false|null>"),
    ("compression_threshold", "<number|null>"),
    ("mcp_server_support", "<true|false>"),
    ("enabled_mcp_servers", "<all|server,server…|null>"),
    ("rag_top_k", "<number>"),
    ("rag_reranker_model", "<client:model|null>"),
];

/// Applies a command to the conversation; returns what it did. Session saves and
/// compressions are reported to `emitter` as events.
#[inline(never)]
pub fn apply<'a>(
    state: &'a std::sync::Arc<AppState>,
    ctx: &'a mut RequestContext,
    command: Command,
    emitter: &'a dyn Emitter,
) -> BoxFuture<'a, Result<Applied, CoreError>> {
    Box::pin(async move {
        // Off the record, nothing is stored: no session is opened or saved.
        if ctx.otr.get()
            && matches!(
                command,
                Command::SaveSession(_)
                    | Command::ForkSession(_)
                    | Command::OpenSession(_)
                    | Command::OpenSessionWithHistory(_)
                    | Command::DeleteSession(_)
            )
        {
            return Err(CoreError::Conflict(
                "off the record (--otr): sessions are not opened or saved".into(),
            ));
        }
        match command {
            Command::OffTheRecord => off_the_record(ctx),
            Command::Rewind { count, what, force } => {
                super::rewind::rewind(state, ctx, count, what, force, emitter).await
            }
            Command::SaveSession(rename) => {
                save_session(state, ctx, rename.as_deref(), emitter).await
            }
            Command::ForkSession(name) => {
                super::fork::fork_session(state, ctx, name.as_deref(), emitter).await
            }
            Command::CutConversation { user_message } => {
                super::fork::cut_conversation(state, ctx, user_message, emitter).await
            }
            Command::CloseSession { save, rename } => {
                if ctx.session.is_none() {
                    return Err(CoreError::NoSession);
                }
                let mut applied = Applied::default();
                if save {
                    applied = save_session(state, ctx, rename.as_deref(), emitter).await?;
                }
                ctx.leave_session();
                applied.extend(Applied::note("session closed"));
                Ok(applied)
            }
            Command::CompressSession => {
                if ctx.session.is_none() {
                    return Err(CoreError::NoSession);
                }
                let engine = super::Engine::new(std::sync::Arc::clone(state));
                Ok(if engine.compress_now(ctx, emitter).await? {
                    Applied::default()
                } else {
                    Applied::note("nothing to compress yet")
                })
            }
            Command::OpenSession(name) => open_session(state, ctx, &name, false).await,
            Command::ReplaceSession { yaml, base } => {
                replace_session(state, ctx, &yaml, &base).await
            }
            Command::ReloadSession(name) => {
                ctx.session = None;
                open_session(state, ctx, &name, false).await
            }
            Command::OpenSessionWithHistory(name) => open_session(state, ctx, &name, true).await,
            Command::DeleteSession(name) => delete_session(state, ctx, &name).await,
            Command::UseAgent {
                name,
                variables,
                session,
            } => activate_agent(state, ctx, &name, variables, session).await,
            other => {
                let role_change = matches!(other, Command::UseRole(_) | Command::ForceRole(_));
                let mut applied = confirm(state, ctx, other).map(Applied::note)?;
                if role_change && let Some(warning) = unused_role_servers(ctx) {
                    applied.lines.push(Line::Warning(warning));
                }
                Ok(applied)
            }
        }
    })
}

/// `.agent NAME`: the agent with `variables` (the session's saved ones filling the
/// rest), then its session (`session`, else its `agent_session`, else the
/// configuration's), all or nothing.
async fn activate_agent(
    state: &std::sync::Arc<AppState>,
    ctx: &mut RequestContext,
    name: &str,
    variables: Vec<(String, String)>,
    session: Option<String>,
) -> Result<Applied, CoreError> {
    // The agent's `agent_session`, else the configuration's.
    let def = crate::agent::AgentDef::load(&state.paths, name, &ctx.env)?;
    let session = session
        .or_else(|| def.config.agent_session.clone())
        .or_else(|| state.config.agent_session.clone())
        .filter(|_| !ctx.otr.get());
    // The session's saved variables, unless given again (a new value wins).
    let (variables, changed) = match &session {
        Some(key) => with_saved_variables(state, &def, key, variables).await,
        None => (variables, Vec::new()),
    };
    let mut applied = Applied::note(use_agent(state, ctx, name, &variables).await?);
    applied.lines.extend(changed.into_iter().map(Line::Warning));
    applied.lines.extend(
        agent_tool_warnings(state, ctx)
            .into_iter()
            .map(Line::Warning),
    );
    // The agent's instructions with these variables, not the ones the session was
    // last saved with.
    let agent_role = ctx.role.clone();
    if let Some(session) = session {
        match open_session(state, ctx, &session, false).await {
            Ok(opened) => {
                ctx.role = agent_role;
                applied.extend(opened);
            }
            Err(e) => {
                // All or nothing: the agent is left again.
                let _ = confirm(state, ctx, Command::ExitAgent);
                return Err(e);
            }
        }
    }
    Ok(applied)
}

/// A warning when the role names MCP servers that will not run: MCP or function calling
/// is off for this conversation.
fn unused_role_servers(ctx: &RequestContext) -> Option<String> {
    let role = ctx.role.as_ref()?;
    let servers = role
        .enabled_mcp_servers
        .as_deref()
        .filter(|s| !s.trim().is_empty())?;
    let off = if !ctx.mcp_server_support {
        "MCP support is off (mcp_server_support: false)"
    } else if !ctx.function_calling_support {
        "function calling is off (function_calling_support: false)"
    } else {
        return None;
    };
    Some(format!(
        "role `{}` names MCP servers ({servers}), but {off}: they are not started",
        role.name
    ))
}

/// Saves the open session and reports it as a `session_saved` event.
/// Saves the open session as it is now (after a rewind).
pub(super) async fn save_open_session(
    state: &AppState,
    ctx: &mut RequestContext,
    emitter: &dyn Emitter,
) -> Result<Applied, CoreError> {
    save_session(state, ctx, None, emitter).await
}

#[inline(never)]
pub(super) fn save_session<'a>(
    state: &'a AppState,
    ctx: &'a mut RequestContext,
    rename: Option<&'a str>,
    emitter: &'a dyn Emitter,
) -> BoxFuture<'a, Result<Applied, CoreError>> {
    Box::pin(async move {
        if ctx.session.is_none() {
            return Err(CoreError::NoSession);
        }
        let sink = Sink::for_context(ctx, emitter);
        let notify = |line: &str| {
            sink.emit(Event::Notice(loki_protocol::event::Notice::info(line)));
            sink.flush();
        };
        let saved = ctx.save_session(state, rename, &notify).await?;
        let (name, id) = ctx
            .session
            .as_ref()
            .map(|s| (s.name(), s.id().to_string()))
            .unwrap_or_default();
        tracing::info!("saved session to {}", saved.location);
        sink.emit(Event::SessionSaved(SessionSaved {
            name,
            id,
            path: saved.location.clone(),
            forked: saved.forked.clone(),
        }));
        sink.flush();
        let mut applied = Applied::default();
        if let Some(forked) = &saved.forked {
            applied.lines.push(Line::Warning(forked.clone()));
        }
        applied.lines.push(Line::Note(format!(
            "saved the session to {}",
            saved.location
        )));
        applied.saved = Some(saved);
        Ok(applied)
    })
}

/// Deletes a saved session that is not the open one.
async fn delete_session(
    state: &AppState,
    ctx: &RequestContext,
    name: &str,
) -> Result<Applied, CoreError> {
    let open = ctx
        .session
        .as_ref()
        .is_some_and(|s| s.name() == name || s.id().to_string() == name);
    if open {
        return Err(CoreError::Conflict(
            "that session is open; .exit session first".into(),
        ));
    }
    ctx.sessions(state).delete_key(name).await?;
    Ok(Applied::note(format!("deleted session {name}")))
}

/// Applies a command whose outcome is one confirmation line.
fn confirm(
    state: &AppState,
    ctx: &mut RequestContext,
    command: Command,
) -> Result<String, CoreError> {
    match command {
        Command::SetModel(id) => {
            ctx.set_model(state, &id)?;
            Ok(format!("model: {}", ctx.model.id()))
        }
        Command::UsePrompt(prompt) => {
            refuse_inside_agent(ctx, "`.prompt`")?;
            refuse_role_change(ctx, "a prompt")?;
            ctx.use_role(state, Role::temp(&prompt))?;
            Ok("role: temp".into())
        }
        Command::UseRole(name) => {
            refuse_inside_agent(ctx, &format!("`.role {name}`"))?;
            // A role that does not exist is that error, whatever the session holds.
            let role = Role::load(&state.paths.roles_dir, &name, &ctx.system_vars())?;
            refuse_role_change(ctx, &format!("role `{name}`"))?;
            take_role(state, ctx, role)
        }
        Command::ForceRole(name) => {
            let role = Role::load(&state.paths.roles_dir, &name, &ctx.system_vars())?;
            take_role(state, ctx, role)
        }
        Command::UseAgent { .. } => Err(CoreError::InvalidRequest(
            "agents are activated by `command::apply`".into(),
        )),
        Command::ExitAgent => exit_agent(state, ctx),
        Command::ClearTodo => clear_todo(ctx),
        Command::ExitRole => {
            refuse_inside_agent(ctx, "`.exit role`")?;
            if ctx.role.is_none() {
                return Err(CoreError::NotActive { what: "role" });
            }
            ctx.exit_role(state);
            Ok("role: none".into())
        }
        Command::ClearConversation => Ok(clear_conversation(ctx)),
        Command::Set { key, value } => set(state, ctx, &key, &value),
        Command::SaveRole(name) => save_role(state, ctx, name),
        Command::DeleteAgentData(name) => delete_agent_data(state, ctx, &name),
        Command::DeleteRole(name) => delete_role(state, &name),
        Command::UseRag(name) => use_rag(state, ctx, name),
        Command::ExitRag => exit_rag(ctx),
        Command::ClaimSession { owner, approvals } => claim_session(ctx, owner, approvals),
        Command::AddDir(dir) => super::confinement::add_dir(state, ctx, &dir),
        Command::SaveSession(_)
        | Command::ForkSession(_)
        | Command::CutConversation { .. }
        | Command::CloseSession { .. }
        | Command::CompressSession
        | Command::OpenSession(_)
        | Command::OpenSessionWithHistory(_)
        | Command::DeleteSession(_)
        | Command::ReloadSession(_)
        | Command::ReplaceSession { .. }
        | Command::Rewind { .. }
        | Command::OffTheRecord => {
            unreachable!("`apply` handles the session commands before `confirm`")
        }
    }
}

/// The role in the roles directory named `name`, used now (its sandbox tightening the
/// conversation's).
fn take_role(state: &AppState, ctx: &mut RequestContext, role: Role) -> Result<String, CoreError> {
    let name = role.name.clone();
    let sandbox = role.sandbox.clone();
    ctx.use_role(state, role)?;
    tighten_sandbox(state, ctx, sandbox.as_deref())?;
    Ok(format!("role: {name} (model {})", ctx.model.id()))
}

/// `.clear messages`: the conversation starts over (its session keeps no summary,
/// title or attached images of it).
fn clear_conversation(ctx: &mut RequestContext) -> String {
    ctx.history.clear();
    if let Some(session) = &ctx.session {
        let mut guard = session.lock();
        let session = guard.get_mut();
        session.compressed_messages.clear();
        session.autoname = None;
        session.extra.remove("data_urls");
    }
    "conversation cleared".into()
}

/// `.exit rag`: no knowledge base from now on, in the session too.
fn exit_rag(ctx: &mut RequestContext) -> Result<String, CoreError> {
    if ctx.active_rag().is_none() {
        return Err(CoreError::NotActive {
            what: "knowledge base",
        });
    }
    ctx.rag = RagChoice::Off;
    ctx.rag_sources.clear();
    if let Some(session) = &ctx.session {
        session.lock().get_mut().rag = None;
    }
    Ok("rag: none".into())
}

/// A server's run claims its session: the owner (if it has none yet) and the approval
/// policy the server keeps for it.
fn claim_session(
    ctx: &mut RequestContext,
    owner: Option<String>,
    approvals: String,
) -> Result<String, CoreError> {
    let Some(session) = &ctx.session else {
        return Err(CoreError::NotActive { what: "session" });
    };
    let mut held = session.lock();
    let stored = held.get_mut();
    if stored.owner.is_none() {
        stored.owner = owner;
    }
    stored.extra.insert(
        API_APPROVAL_KEY.into(),
        serde_yaml::Value::String(approvals),
    );
    Ok(format!(
        "owner: {}",
        stored.owner.as_deref().unwrap_or("none")
    ))
}

/// `.exit agent`: back to the conversation's own environment, knowledge base and role;
/// its sub-agents are cancelled.
fn exit_agent(state: &AppState, ctx: &mut RequestContext) -> Result<String, CoreError> {
    let Some(agent) = ctx.agent.take() else {
        return Err(CoreError::NotActive { what: "agent" });
    };
    if ctx.session.is_some() {
        let name = agent.def.name.clone();
        ctx.agent = Some(agent);
        return Err(CoreError::Conflict(format!(
            "leave the session of agent `{name}` first (.exit session)"
        )));
    }
    ctx.env = Arc::clone(&agent.base_env);
    if ctx.rag == RagChoice::Use(crate::agent::knowledge_base_name(&agent.def.name)) {
        ctx.rag = RagChoice::Inherit;
        ctx.rag_sources.clear();
    }
    // Dropping the supervisor cancels the agent's sub-agents.
    ctx.supervisor = None;
    ctx.exit_role(state);
    ctx.mcp_lease = None;
    Ok(format!("agent: none (left {})", agent.def.name))
}

/// `.clear todo`.
fn clear_todo(ctx: &RequestContext) -> Result<String, CoreError> {
    let Some(agent) = &ctx.agent else {
        return Err(CoreError::NotActive { what: "agent" });
    };
    if !agent.def.config.auto_continue {
        return Err(CoreError::Conflict(format!(
            "agent `{}` keeps no todo list; set `auto_continue: true` in its config.yaml",
            agent.def.name
        )));
    }
    let mut list = ctx
        .todo
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Ok(if list.items.is_empty() && list.goal.is_empty() {
        "todo list: already empty".into()
    } else {
        *list = Default::default();
        "todo list: cleared".into()
    })
}

/// `.save role [name]`: the active role to `roles/<name>.md`.
fn save_role(
    state: &AppState,
    ctx: &mut RequestContext,
    name: Option<String>,
) -> Result<String, CoreError> {
    let Some(role) = ctx.role.clone() else {
        return Err(CoreError::NotActive { what: "role" });
    };
    let name = name.unwrap_or_else(|| role.name.clone());
    if name == crate::role::TEMP_ROLE {
        return Err(CoreError::InvalidRequest(
            "give the role a name: .save role <name>".into(),
        ));
    }
    let path = state.paths.roles_dir.join(format!("{name}.md"));
    crate::atomic_file::write_atomic(&path, role.export().as_bytes(), false)
        .map_err(|e| io_error("write", &path, &e))?;
    if let Some(active) = ctx.role.as_mut() {
        active.name = name;
    }
    Ok(format!("saved {}", path.display()))
}

/// `.delete role <name>`: its file (a built-in role has none).
fn delete_role(state: &AppState, name: &str) -> Result<String, CoreError> {
    let path = state.paths.roles_dir.join(format!("{name}.md"));
    if !path.is_file() {
        let why = if crate::role::is_builtin(name) {
            "a built-in role, with no file to delete"
        } else {
            "no such role file"
        };
        return Err(CoreError::InvalidRequest(format!(
            "cannot delete role `{name}`: {why} ({})",
            path.display()
        )));
    }
    std::fs::remove_file(&path).map_err(|e| io_error("delete", &path, &e))?;
    Ok(format!("deleted {}", path.display()))
}

/// `.rag <name>`: a built knowledge base answers from now on; an open session remembers it.
fn use_rag(state: &AppState, ctx: &mut RequestContext, name: String) -> Result<String, CoreError> {
    crate::rag::validate_name(&name)?;
    let kb = state.rags.open(state.paths.rag_dir(&name), &name)?;
    ctx.rag = RagChoice::Use(name.clone());
    ctx.rag_sources.clear();
    // The unsaved knowledge base ends with the process: a session does not name it.
    if let Some(session) = &ctx.session
        && name != crate::config::paths::TEMP_RAG
    {
        session.lock().get_mut().rag = Some(name.clone());
    }
    Ok(format!(
        "rag: {name} ({} chunk(s) from {} document(s){})",
        kb.meta.chunks,
        kb.meta.files.len(),
        if kb.meta.dimensions == 0 {
            ", keyword search only"
        } else {
            ""
        }
    ))
}

/// `.delete agent-data <name>`: the agent's sessions and knowledge base.
fn delete_agent_data(
    state: &AppState,
    ctx: &RequestContext,
    name: &str,
) -> Result<String, CoreError> {
    if ctx.agent.as_ref().is_some_and(|a| a.def.name == name) {
        return Err(CoreError::Conflict(format!(
            "agent `{name}` is in use; .exit agent first"
        )));
    }
    let def = crate::agent::AgentDef::load(&state.paths, name, &ctx.env)?;
    let mut deleted = Vec::new();
    let sessions = def.sessions_dir();
    if sessions.is_dir() {
        let count = std::fs::read_dir(&sessions).map_or(0, Iterator::count);
        std::fs::remove_dir_all(&sessions).map_err(|e| io_error("delete", &sessions, &e))?;
        deleted.push(format!("{count} session file(s)"));
    }
    let rag = crate::agent::knowledge_base_name(name);
    if crate::rag::store::meta_path(&state.paths.rags_dir, &rag).exists() {
        crate::rag::delete(&state.paths.rags_dir, &rag)?;
        state.rags.invalidate(&state.paths.rags_dir, &rag);
        deleted.push(format!("knowledge base `{rag}`"));
    }
    Ok(if deleted.is_empty() {
        format!("agent `{name}` keeps no data")
    } else {
        format!("agent `{name}`: deleted {}", deleted.join(" and "))
    })
}

/// An agent's instructions are its role: changing them is leaving the agent.
fn refuse_inside_agent(ctx: &RequestContext, what: &str) -> Result<(), CoreError> {
    match &ctx.agent {
        Some(agent) => Err(CoreError::Conflict(format!(
            "{what} is not available inside agent `{}`; .exit agent first",
            agent.def.name
        ))),
        None => Ok(()),
    }
}

/// Activates an agent: its variables resolved, its tools' environment, its instructions
/// as the conversation's role (with its model and sampling).
async fn use_agent(
    state: &AppState,
    ctx: &mut RequestContext,
    name: &str,
    given: &[(String, String)],
) -> Result<String, CoreError> {
    if let Some(active) = &ctx.agent {
        return Err(CoreError::Conflict(format!(
            "already in agent `{}`; .exit agent first",
            active.def.name
        )));
    }
    if let Some(session) = &ctx.session {
        return Err(CoreError::Conflict(format!(
            "session `{}` is open; an agent keeps its own sessions (.exit session first)",
            session.name()
        )));
    }
    let def = crate::agent::AgentDef::load(&state.paths, name, &ctx.env)?;
    if !def.config.mcp_servers.is_empty() && !ctx.mcp_server_support {
        return Err(CoreError::Conflict(format!(
            "agent `{name}` needs MCP servers ({}), but mcp_server_support is off",
            def.config.mcp_servers.join(", ")
        )));
    }
    let variables = def.resolve_variables(given)?;
    let (variables, from_secrets) =
        def.resolve_secrets(variables, given, &state.vault, &ctx.env)?;
    let env = def.tool_env(&ctx.env, &variables, &state.paths.cache_dir)?;
    if let Some(mode) = def
        .config
        .permission_mode
        .as_deref()
        .and_then(crate::config::permissions::PermissionMode::parse)
    {
        ctx.tool_policy.set_mode(mode);
    }
    let mut listed: Vec<(String, String)> = def
        .tools
        .iter()
        .map(|t| (t.name.clone(), t.description.clone()))
        .collect();
    let globals = def.config.global_tools.join(",");
    for tool in
        crate::tool::enabled_tools(&state.config, &state.script_tools().tools, Some(&globals))
    {
        let spec = tool.spec();
        listed.push((spec.name, spec.description));
    }
    let dynamic = if def.config.dynamic_instructions {
        Some(def.dynamic_instructions(&env, &ctx.cwd).await?)
    } else {
        None
    };
    let mut instructions =
        def.instructions(dynamic.as_deref(), &variables, &ctx.system_vars(), &listed);
    if def.config.auto_continue && def.config.inject_todo_instructions != Some(false) {
        instructions.push_str(crate::tool::todo::INSTRUCTIONS);
    }
    let mut role = Role::temp(&instructions);
    role.name.clone_from(&def.name);
    role.model.clone_from(&def.config.model);
    role.temperature = def.config.temperature;
    role.top_p = def.config.top_p;
    ctx.use_role(state, role)?;
    tighten_sandbox(state, ctx, def.config.sandbox.as_deref())?;
    let base_env = Arc::clone(&ctx.env);
    ctx.env = Arc::new(env);
    let shown = def.name.clone();
    ctx.agent = Some(crate::agent::ActiveAgent {
        def: Arc::new(def),
        variables,
        base_env,
        from_secrets,
    });
    ctx.mcp_lease = None;
    *ctx.todo
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Default::default();
    Ok(format!("agent: {shown} (model {})", ctx.model.id()))
}

/// `given` agent variables completed with those `session` of agent `def` was saved with;
/// a given value that replaces a saved one is said (the second list).
async fn with_saved_variables(
    state: &AppState,
    def: &crate::agent::AgentDef,
    session: &str,
    given: Vec<(String, String)>,
) -> (Vec<(String, String)>, Vec<String>) {
    let store = state.sessions_in(&def.sessions_dir());
    let saved: BTreeMap<String, String> = match store.open_key(session).await {
        Ok(Some(handle)) => handle
            .lock()
            .get()
            .extra
            .get(crate::session::AGENT_VARIABLES)
            .and_then(|v| serde_yaml::from_value(v.clone()).ok())
            .unwrap_or_default(),
        _ => BTreeMap::new(),
    };
    let mut notes = Vec::new();
    let mut merged = given.clone();
    for (name, value) in saved {
        match given.iter().find(|(n, _)| *n == name) {
            Some((_, new)) if *new != value => notes.push(format!(
                "agent variable `{name}`: `{new}` replaces `{value}` saved with session `{session}`"
            )),
            Some(_) => {}
            None => merged.push((name, value)),
        }
    }
    (merged, notes)
}

/// What keeps the agent just started from the tools it names: function calling switched
/// off, or `global_tools` that do not exist or are hidden.
fn agent_tool_warnings(state: &AppState, ctx: &RequestContext) -> Vec<String> {
    let Some(agent) = &ctx.agent else {
        return Vec::new();
    };
    let def = &agent.def;
    let mut warnings = Vec::new();
    let names_tools = !def.tools.is_empty() || !def.config.global_tools.is_empty();
    if names_tools && !ctx.function_calling_support {
        warnings.push(format!(
            "agent `{}` has tools, but function_calling_support is off: it starts without them (.set function_calling_support true)",
            def.name
        ));
    } else if names_tools && !ctx.model.config.supports_function_calling {
        warnings.push(format!(
            "agent `{}` has tools, but model {} does not call functions: it starts without them",
            def.name,
            ctx.model.id()
        ));
    }
    let globals = def.config.global_tools.join(",");
    let found =
        crate::tool::enabled_tools(&state.config, &state.script_tools().tools, Some(&globals));
    let missing =
        crate::tool::missing_global_tools(&state.config, &found, &def.config.global_tools);
    if !missing.is_empty() {
        warnings.push(format!(
            "agent `{}`: global_tools {} do not exist or are not visible (visible_tools); left out",
            def.name,
            missing
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    warnings
}

/// `.role` / `.prompt` in a session that already has messages would rewrite the system
/// prompt of its history: refused, with what to do instead.
fn refuse_role_change(ctx: &RequestContext, what: &str) -> Result<(), CoreError> {
    let Some(session) = ctx.session.as_ref() else {
        return Ok(());
    };
    if ctx.history.is_empty() {
        return Ok(());
    }
    Err(CoreError::RoleLocked {
        session: session.name(),
        messages: ctx.history.len(),
        what: what.to_string(),
    })
}

/// Opens (or starts) a session; with `carry`, a new session starts with the
/// conversation so far.
#[inline(never)]
fn open_session<'a>(
    state: &'a AppState,
    ctx: &'a mut RequestContext,
    name: &'a str,
    carry: bool,
) -> BoxFuture<'a, Result<Applied, CoreError>> {
    Box::pin(async move {
        if let Some(active) = &ctx.session {
            return Err(CoreError::Conflict(format!(
                "already in session `{}`; .exit session first",
                active.name()
            )));
        }
        let before = ctx.history.clone();
        let existed = ctx.open_session(state, name).await?;
        let message = if existed {
            format!("session: {name} ({} messages)", ctx.history.len())
        } else if carry && !before.is_empty() {
            if let Some(session) = &ctx.session {
                session.lock().get_mut().messages.clone_from(&before);
            }
            ctx.history = before;
            format!(
                "session: {name} (new, with the {} messages of this conversation)",
                ctx.history.len()
            )
        } else {
            format!("session: {name} (new)")
        };
        let mut applied = Applied::note(message);
        if let Some(warning) = ctx.session_model_warning() {
            applied.lines.push(Line::Warning(warning));
        }
        Ok(applied)
    })
}

/// Whether `name` names a saved session (for the front end's "carry the conversation?").
pub async fn session_exists(state: &AppState, ctx: &RequestContext, name: &str) -> bool {
    name != crate::session::TEMP_SESSION
        && ctx
            .sessions(state)
            .resolve(name)
            .await
            .ok()
            .flatten()
            .is_some()
}

fn set(
    state: &AppState,
    ctx: &mut RequestContext,
    key: &str,
    value: &str,
) -> Result<String, CoreError> {
    let setting = Setting { key, value };
    match key {
        "model" => confirm(state, ctx, Command::SetModel(value.to_string())),
        "temperature" | "top_p" => set_sampling(state, ctx, &setting),
        "save_session" => set_save_session(state, ctx, &setting),
        "reasoning_effort" => {
            ctx.controls.effort = if setting.null() {
                state.config.reasoning_effort
            } else {
                Some(
                    crate::config::effort::Effort::parse(value)
                        .ok_or_else(|| setting.invalid("low, medium, high, or null"))?,
                )
            };
            Ok(setting.confirmed())
        }
        "compression_threshold" => set_compression_threshold(state, ctx, &setting),
        "max_output_tokens" => {
            ctx.max_output_tokens = if setting.null() {
                None
            } else {
                Some(
                    value
                        .parse()
                        .map_err(|_| setting.invalid("a whole number, or null"))?,
                )
            };
            Ok(setting.confirmed())
        }
        "stream"
        | "dry_run"
        | "save"
        | "function_calling_support"
        | "yolo"
        | "mcp_server_support" => set_switch(state, ctx, &setting),
        "enabled_mcp_servers" => set_mcp_servers(state, ctx, &setting),
        "enabled_tools" => set_enabled_tools(state, ctx, &setting),
        "permission_mode" => {
            use crate::config::permissions::PermissionMode;
            let mode = match value.trim() {
                "" => {
                    let now = ctx.tool_policy.mode().name();
                    return Ok(format!(
                        "permission_mode: {now} (default, accept-edits, plan or yolo)"
                    ));
                }
                "next" => ctx.tool_policy.mode().next(),
                other => PermissionMode::parse(other)
                    .ok_or_else(|| setting.invalid("default, accept-edits, plan, yolo or next"))?,
            };
            ctx.tool_policy.set_mode(mode);
            Ok(format!("permission_mode: {}", mode.name()))
        }
        "sandbox" => set_sandbox(state, ctx, &setting),
        "rag_top_k" | "rag_reranker_model" => set_rag(state, ctx, key, value),
        other => {
            let known: Vec<&str> = SETTABLE
                .iter()
                .chain(DISPLAY_SETTINGS)
                .map(|(k, _)| *k)
                .collect();
            Err(CoreError::UnknownSetting {
                key: other.to_string(),
                known: known.join(", "),
            })
        }
    }
}

/// One `.set key value`.
struct Setting<'a> {
    key: &'a str,
    value: &'a str,
}

impl Setting<'_> {
    fn invalid(&self, expected: &str) -> CoreError {
        CoreError::InvalidSetting {
            key: self.key.to_string(),
            value: self.value.to_string(),
            expected: expected.to_string(),
        }
    }

    /// `null`: back to the configured value.
    fn null(&self) -> bool {
        self.value == "null"
    }

    fn confirmed(&self) -> String {
        format!("{}: {}", self.key, self.value)
    }
}

/// A role's or an agent's `sandbox:`: the conversation's sandbox made again in that mode
/// when it is tighter; a looser one changes nothing (only the user loosens a sandbox).
fn tighten_sandbox(
    state: &AppState,
    ctx: &mut RequestContext,
    wanted: Option<&str>,
) -> Result<(), CoreError> {
    use crate::sandbox::SandboxMode;
    let Some(name) = wanted.map(str::trim).filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    let wanted = SandboxMode::parse(name).ok_or_else(|| CoreError::InvalidSetting {
        key: "sandbox".into(),
        value: name.to_string(),
        expected: "read-only, workspace-write or danger-full-access".into(),
    })?;
    let now = ctx
        .sandbox
        .as_ref()
        .map_or(SandboxMode::DangerFullAccess, |s| s.mode());
    if wanted >= now {
        return Ok(());
    }
    remake_sandbox(state, ctx, wanted)
}

/// Makes the conversation's sandbox again in `mode`, for the same directory (a server's
/// root stays the root, file tools still held to it).
fn remake_sandbox(
    state: &AppState,
    ctx: &mut RequestContext,
    mode: crate::sandbox::SandboxMode,
) -> Result<(), CoreError> {
    ctx.sandbox = super::confinement::sandbox_for(state, ctx, mode)?;
    Ok(())
}

/// `sandbox`: shows the sandbox, or makes it again in another mode. Only the user at the
/// root of a tree may loosen it; a sub-agent or a server's session may only tighten it.
fn set_sandbox(
    state: &AppState,
    ctx: &mut RequestContext,
    setting: &Setting<'_>,
) -> Result<String, CoreError> {
    use crate::sandbox::SandboxMode;
    let network = state.config.sandbox.network;
    let value = setting.value.trim();
    if value.is_empty() {
        return Ok(format!(
            "sandbox: {}",
            super::confinement::describe(ctx.sandbox.as_deref(), network)
        ));
    }
    let wanted = SandboxMode::parse(value)
        .ok_or_else(|| setting.invalid("read-only, workspace-write or danger-full-access"))?;
    let now = ctx
        .sandbox
        .as_ref()
        .map_or(SandboxMode::DangerFullAccess, |s| s.mode());
    let held = ctx.sandbox.as_ref().is_some_and(|s| s.held_to_root());
    let mode = if ctx.depth > 0 || held {
        wanted.tighter(now)
    } else {
        wanted
    };
    if mode != now {
        remake_sandbox(state, ctx, mode)?;
    }
    let shown = super::confinement::describe(ctx.sandbox.as_deref(), network);
    if mode == wanted {
        Ok(format!("sandbox: {shown}"))
    } else {
        Ok(format!(
            "sandbox: {shown} (a sub-agent or a server session can only tighten it)"
        ))
    }
}

/// `temperature` / `top_p`: a number in range, or `null` for the configured value.
fn set_sampling(
    state: &AppState,
    ctx: &mut RequestContext,
    setting: &Setting<'_>,
) -> Result<String, CoreError> {
    let temperature = setting.key == "temperature";
    let (max, expected) = if temperature {
        (2.0, "a number from 0 to 2, or null")
    } else {
        (1.0, "a number from 0 to 1, or null")
    };
    let parsed = if setting.null() {
        None
    } else {
        let v: f64 = setting
            .value
            .parse()
            .map_err(|_| setting.invalid(expected))?;
        if !(0.0..=max).contains(&v) {
            return Err(setting.invalid(expected));
        }
        Some(v)
    };
    match (temperature, setting.null()) {
        (true, true) => ctx.temperature = state.config.temperature,
        (true, false) => ctx.temperature = parsed,
        (false, true) => ctx.top_p = state.config.top_p,
        (false, false) => ctx.top_p = parsed,
    }
    Ok(setting.confirmed())
}

/// `save_session`: the open session's own setting, else the conversation's.
fn set_save_session(
    state: &AppState,
    ctx: &mut RequestContext,
    setting: &Setting<'_>,
) -> Result<String, CoreError> {
    let flag = if setting.null() {
        None
    } else {
        Some(parse_bool(setting.value).ok_or_else(|| setting.invalid("true, false or null"))?)
    };
    Ok(match &ctx.session {
        Some(session) => {
            session.lock().get_mut().save_session = flag;
            let shown = flag.or(ctx.save_session);
            format!("save_session: {} (this session)", show_save(shown))
        }
        None => {
            ctx.save_session = if setting.null() {
                state.config.save_session
            } else {
                flag
            };
            format!("save_session: {}", show_save(ctx.save_session))
        }
    })
}

/// `compression_threshold`: the open session's own setting, else the conversation's.
fn set_compression_threshold(
    state: &AppState,
    ctx: &mut RequestContext,
    setting: &Setting<'_>,
) -> Result<String, CoreError> {
    let n = if setting.null() {
        None
    } else {
        Some(
            setting
                .value
                .parse::<usize>()
                .map_err(|_| setting.invalid("a whole number of tokens (0 disables), or null"))?,
        )
    };
    Ok(match &ctx.session {
        Some(session) => {
            session.lock().get_mut().compression_threshold = n;
            let shown = n.unwrap_or(ctx.compression_threshold);
            format!("compression_threshold: {shown} (this session)")
        }
        None => {
            ctx.compression_threshold = n.unwrap_or(state.config.compression_threshold);
            format!("compression_threshold: {}", ctx.compression_threshold)
        }
    })
}

/// The settings that are `true` or `false`; `null` restores the configured value.
fn set_switch(
    state: &AppState,
    ctx: &mut RequestContext,
    setting: &Setting<'_>,
) -> Result<String, CoreError> {
    let config = &state.config;
    let flag = if setting.null() {
        match setting.key {
            "stream" => config.stream,
            "dry_run" => config.dry_run,
            "save" => config.save && !ctx.otr.get(),
            "yolo" => config.yolo,
            "mcp_server_support" => config.mcp_server_support,
            _ => config.function_calling_support,
        }
    } else {
        parse_bool(setting.value).ok_or_else(|| setting.invalid("true, false or null"))?
    };
    let confirmed = if setting.null() {
        format!("{}: {flag} (the configured value)", setting.key)
    } else {
        setting.confirmed()
    };
    match setting.key {
        "stream" => ctx.stream = flag,
        "dry_run" => ctx.dry_run = flag,
        "save" if flag && ctx.otr.get() => {
            return Err(CoreError::Conflict(
                "off the record (--otr): messages.md is not written".into(),
            ));
        }
        "save" => ctx.save = flag,
        "yolo" => ctx.tool_policy.yolo.set(flag),
        "mcp_server_support" => ctx.mcp_server_support = flag,
        _ => ctx.function_calling_support = flag,
    }
    Ok(confirmed)
}

/// `enabled_mcp_servers`: known servers only; `null` in a session drops the session's
/// own value (the conversation's applies again), outside one it restores the configured
/// value.
fn set_mcp_servers(
    state: &AppState,
    ctx: &mut RequestContext,
    setting: &Setting<'_>,
) -> Result<String, CoreError> {
    let null = setting.null();
    if !null {
        let (_, unknown) = state
            .mcp
            .expand(setting.value, &state.config.mapping_mcp_servers);
        if !unknown.is_empty() {
            let configured = state.mcp.configured();
            return Err(CoreError::InvalidRequest(format!(
                "unknown MCP server(s) {}; configured in functions/mcp.json: {}",
                unknown.join(", "),
                if configured.is_empty() {
                    "none".to_string()
                } else {
                    configured.join(", ")
                }
            )));
        }
    }
    let value = (!null).then(|| setting.value.to_string());
    match &ctx.session {
        Some(session) => session.lock().get_mut().enabled_mcp_servers = value,
        None if null => {
            ctx.enabled_mcp_servers = state.config.enabled_mcp_servers.clone();
        }
        None => ctx.enabled_mcp_servers = value,
    }
    if null {
        return Ok(format!(
            "enabled_mcp_servers: {} (configured value)",
            crate::conversation::engine::scope::wanted(ctx)
                .mcp_servers
                .unwrap_or_else(|| "none".into())
        ));
    }
    Ok(setting.confirmed())
}

/// `enabled_tools`: the session's own value, else the conversation's; says which tools
/// that makes active.
fn set_enabled_tools(
    state: &AppState,
    ctx: &mut RequestContext,
    setting: &Setting<'_>,
) -> Result<String, CoreError> {
    let value = (!setting.null()).then(|| setting.value.to_string());
    match &ctx.session {
        Some(session) => session.lock().get_mut().enabled_tools = value,
        None if setting.null() => ctx.enabled_tools = state.config.enabled_tools.clone(),
        None => ctx.enabled_tools = value,
    }
    let active: Vec<String> = crate::conversation::engine::scope::declared(state, ctx)
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    Ok(format!(
        "enabled_tools: {} (active: {})",
        setting.value,
        if active.is_empty() {
            "none".to_string()
        } else {
            active.join(", ")
        }
    ))
}

/// `rag_top_k` / `rag_reranker_model`: stored in the active knowledge base's file, else
/// kept for the conversation.
fn set_rag(
    state: &AppState,
    ctx: &mut RequestContext,
    key: &str,
    value: &str,
) -> Result<String, CoreError> {
    let null = value == "null";
    let (top_k, reranker) = if key == "rag_top_k" {
        let n: usize =
            value
                .parse()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| CoreError::InvalidSetting {
                    key: key.to_string(),
                    value: value.to_string(),
                    expected: "a whole number from 1".into(),
                })?;
        (Some(n), None)
    } else {
        if !null {
            state
                .providers
                .resolve(value, crate::config::clients::ModelKind::Reranker)?;
        }
        (None, Some((!null).then(|| value.to_string())))
    };
    let Some(name) = ctx.active_rag() else {
        if top_k.is_some() {
            ctx.rag_settings.top_k = top_k;
        }
        if reranker.is_some() {
            ctx.rag_settings.reranker_model = reranker;
        }
        return Ok(format!("{key}: {value}"));
    };
    let dir = state.paths.rag_dir(&name);
    let mut meta = crate::rag::store::read_meta(dir, &name)?;
    if let Some(n) = top_k {
        meta.top_k = n;
    }
    if let Some(model) = reranker {
        meta.reranker_model = model;
    }
    crate::rag::store::write_meta(dir, &name, &meta)?;
    state.rags.invalidate(dir, &name);
    Ok(format!("{key}: {value} (saved in RAG `{name}`)"))
}

fn io_error(action: &'static str, path: &std::path::Path, e: &std::io::Error) -> CoreError {
    CoreError::Io {
        action,
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// `save_session` as shown after `.set`: unset means "ask when leaving".
fn show_save(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "true",
        Some(false) => "false",
        None => "null (ask when leaving)",
    }
}

/// Parses `true`/`false` (and `on`/`off`, `yes`/`no`, `1`/`0`).
pub fn parse_bool(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "on" | "yes" | "1" => Some(true),
        "false" | "off" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// The last user message and answer, for `.copy` and friends.
pub fn last_answer(ctx: &RequestContext) -> Option<String> {
    ctx.history
        .iter()
        .rev()
        .find(|m| m.role == MessageRole::Assistant)
        .map(loki_wire::message::Message::text_content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorClass;
    use crate::test_support::Fixture;

    /// What a step should give: its first line, or the class of its error.
    enum Expect {
        Line(&'static str),
        Fails(ErrorClass),
    }

    fn set(key: &str, value: &str) -> Command {
        Command::Set {
            key: key.into(),
            value: value.into(),
        }
    }

    #[test]
    fn commands_in_sequence_change_the_conversation_or_say_why_not() {
        use Expect::{Fails, Line};
        let steps: Vec<(Command, Expect)> = vec![
            (Command::SetModel("fake:m2".into()), Line("model: fake:m2")),
            (
                Command::SetModel("nope:x".into()),
                Fails(ErrorClass::NotFound),
            ),
            (set("temperature", "0.7"), Line("temperature: 0.7")),
            (set("temperature", "3"), Fails(ErrorClass::BadRequest)),
            (set("top_p", "x"), Fails(ErrorClass::BadRequest)),
            (set("bogus", "1"), Fails(ErrorClass::BadRequest)),
            (set("stream", "false"), Line("stream: false")),
            (
                set("stream", "null"),
                Line("stream: true (the configured value)"),
            ),
            (
                set("yolo", "null"),
                Line("yolo: false (the configured value)"),
            ),
            (
                set("function_calling_support", "null"),
                Line("function_calling_support: true (the configured value)"),
            ),
            (set("stream", "maybe"), Fails(ErrorClass::BadRequest)),
            (Command::ExitRole, Fails(ErrorClass::Conflict)),
            (
                Command::UseRole("missing".into()),
                Fails(ErrorClass::NotFound),
            ),
            (
                Command::UseRole("poet".into()),
                Line("role: poet (model fake:m2)"),
            ),
            (
                Command::UseRole("picky".into()),
                Line("role: picky (model fake:m2)"),
            ),
            (Command::ExitRole, Line("role: none")),
            (Command::SaveSession(None), Fails(ErrorClass::Conflict)),
            (Command::CompressSession, Fails(ErrorClass::Conflict)),
            (Command::ExitRag, Fails(ErrorClass::Conflict)),
            (
                Command::UseRag("missing".into()),
                Fails(ErrorClass::NotFound),
            ),
            (
                Command::OpenSession("work".into()),
                Line("session: work (new)"),
            ),
            (
                Command::OpenSession("other".into()),
                Fails(ErrorClass::Conflict),
            ),
            (
                Command::DeleteSession("work".into()),
                Fails(ErrorClass::Conflict),
            ),
            (
                set("save_session", "false"),
                Line("save_session: false (this session)"),
            ),
            (Command::ClearConversation, Line("conversation cleared")),
            (
                Command::CloseSession {
                    save: false,
                    rename: None,
                },
                Line("session closed"),
            ),
            (
                Command::DeleteSession("work".into()),
                Fails(ErrorClass::NotFound),
            ),
        ];
        let fixture = Fixture::new();
        let mut ctx = fixture.context();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for (n, (command, expect)) in steps.into_iter().enumerate() {
            let shown = format!("{command:?}");
            let outcome = runtime.block_on(apply(
                &fixture.state,
                &mut ctx,
                command,
                &loki_protocol::emitter::Discard,
            ));
            match (outcome, expect) {
                (Ok(applied), Line(line)) => {
                    assert_eq!(applied.notes().next(), Some(line), "step {n}: {shown}");
                }
                (Err(e), Fails(class)) => assert_eq!(e.class(), class, "step {n}: {shown}: {e}"),
                (Ok(applied), Fails(class)) => {
                    panic!(
                        "step {n}: {shown}: expected {class:?}, got {:?}",
                        applied.lines
                    )
                }
                (Err(e), Line(line)) => panic!("step {n}: {shown}: expected `{line}`, got {e}"),
            }
        }
        // Leaving the role brought back the sampling from before it (`.set temperature
        // 0.7`); the chosen model stayed.
        assert_eq!(ctx.model.id(), "fake:m2");
        assert_eq!(ctx.temperature, Some(0.7));
        assert!(ctx.session.is_none() && ctx.role.is_none());
    }

    #[test]
    fn agents_come_and_go_with_their_todo_list() {
        let fixture = Fixture::new();
        let dir = fixture.state.paths.agents_dir.join("planner");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("config.yaml"),
            "instructions: Plan for {{who}}.\nauto_continue: true\nmodel: fake:m2\nvariables:\n  - name: who\n",
        )
        .unwrap();
        let mut ctx = fixture.context();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut run = |command: Command| {
            runtime
                .block_on(apply(
                    &fixture.state,
                    &mut ctx,
                    command,
                    &loki_protocol::emitter::Discard,
                ))
                .map(|a| a.notes().next().unwrap_or_default().to_string())
                .map_err(|e| e.class())
        };
        let use_agent = |variables: Vec<(String, String)>| Command::UseAgent {
            name: "planner".into(),
            variables,
            session: None,
        };
        assert_eq!(run(Command::ClearTodo), Err(ErrorClass::Conflict));
        assert_eq!(run(Command::ExitAgent), Err(ErrorClass::Conflict));
        assert_eq!(run(use_agent(Vec::new())), Err(ErrorClass::BadRequest));
        let who = vec![("who".to_string(), "Ada".to_string())];
        assert_eq!(
            run(use_agent(who.clone())),
            Ok("agent: planner (model fake:m2)".into())
        );
        assert_eq!(run(use_agent(who)), Err(ErrorClass::Conflict));
        assert_eq!(
            run(Command::UseRole("poet".into())),
            Err(ErrorClass::Conflict)
        );
        assert_eq!(
            run(Command::ClearTodo),
            Ok("todo list: already empty".into())
        );
        assert_eq!(
            run(Command::ExitAgent),
            Ok("agent: none (left planner)".into())
        );
        assert!(ctx.agent.is_none() && ctx.role.is_none());
    }
}
