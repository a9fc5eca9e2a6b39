//! A conversation's tool scope: which tools it offers the model, resolved in one place.
//!
//! Precedence, for `enabled_tools` and `enabled_mcp_servers` alike: the open session's own
//! setting, else the active role's, else the conversation's (`.set`), else the
//! configuration's; names go through `mapping_tools` / `mapping_mcp_servers`. The MCP
//! servers a conversation uses are leased ([`crate::mcp::McpLease`]) and the lease is kept
//! on the conversation, so servers live exactly as long as some conversation needs them.
//! Conversation tools (`user__*`) are added where the front end offers them.

use std::sync::Arc;

use crate::conversation::Sink;
use crate::conversation::context::RequestContext;
use crate::error::CoreError;
use crate::state::AppState;
use crate::tool::Tool;
use loki_protocol::event::{Event, Notice};

/// What a conversation asks for, after precedence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wanted {
    /// `enabled_tools` in force.
    pub enabled_tools: Option<String>,
    /// `enabled_mcp_servers` in force, when MCP is on.
    pub mcp_servers: Option<String>,
}

/// Resolves `enabled_tools` and `enabled_mcp_servers` for `ctx`: an active agent's
/// `global_tools` and `mcp_servers` alone; otherwise session > role > conversation >
/// configuration.
pub fn wanted(ctx: &RequestContext) -> Wanted {
    if let Some(agent) = &ctx.agent {
        let config = &agent.def.config;
        return Wanted {
            enabled_tools: Some(config.global_tools.join(",")),
            mcp_servers: (ctx.mcp_server_support && !config.mcp_servers.is_empty())
                .then(|| config.mcp_servers.join(",")),
        };
    }
    let stored = ctx.session.as_ref().map(|s| {
        let guard = s.lock();
        let session = guard.get();
        (
            session.enabled_tools.clone(),
            session.enabled_mcp_servers.clone(),
        )
    });
    let (session_tools, session_mcp) = stored.unwrap_or_default();
    let role = ctx.role.as_ref();
    let enabled_tools = session_tools.or_else(|| {
        role.and_then(|r| r.enabled_tools.clone())
            .or_else(|| ctx.enabled_tools.clone())
    });
    let mcp_servers = if ctx.mcp_server_support {
        session_mcp
            .or_else(|| {
                role.and_then(|r| r.enabled_mcp_servers.clone())
                    .or_else(|| ctx.enabled_mcp_servers.clone())
            })
            .filter(|e| !e.trim().is_empty())
    } else {
        None
    };
    Wanted {
        enabled_tools,
        mcp_servers,
    }
}

/// Whether the conversation offers tools at all (function calling on, and a model that
/// can call functions).
pub fn offers_tools(ctx: &RequestContext) -> bool {
    ctx.function_calling_support && ctx.model.config.supports_function_calling
}

/// The MCP servers the conversation uses, and the names among them that `mcp.json` does
/// not define.
pub fn mcp_servers(state: &AppState, ctx: &RequestContext) -> (Vec<String>, Vec<String>) {
    let (mut names, unknown) = match wanted(ctx).mcp_servers {
        Some(e) => state.mcp.expand(&e, &state.config.mapping_mcp_servers),
        None => (Vec::new(), Vec::new()),
    };
    for name in &ctx.client_mcp_servers {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    (names, unknown)
}

/// The tools the conversation offers right now (MCP servers that are running), without
/// starting anything: for `.info` and `.set` confirmations.
pub fn declared(state: &AppState, ctx: &RequestContext) -> Vec<Tool> {
    if !offers_tools(ctx) {
        return Vec::new();
    }
    // An agent's own tools come first; its global tools must not shadow them.
    let mut tools: Vec<Tool> = ctx
        .agent
        .iter()
        .flat_map(|agent| agent.def.tools.iter())
        .map(|tool| Tool::Script(Arc::clone(tool)))
        .collect();
    if let Some(e) = wanted(ctx).enabled_tools.filter(|e| !e.trim().is_empty()) {
        for tool in crate::tool::enabled_tools(&state.config, &state.script_tools().tools, Some(&e))
        {
            if !tools.iter().any(|t| t.name() == tool.name()) {
                tools.push(tool);
            }
        }
    }
    let (servers, _) = mcp_servers(state, ctx);
    if !servers.is_empty() {
        let mode = state.config.mcp_tool_exposure.as_deref().unwrap_or("auto");
        for mut f in crate::tool::mcp_tools::functions(&state.mcp.running(&servers), mode) {
            // Function names must be unique; sanitising can make two collide.
            let base = f.name.clone();
            let mut n = 2;
            while tools.iter().any(|t| t.name() == f.name) {
                let suffix = format!("_{n}");
                let keep = base.len().min(64 - suffix.len());
                f.name = format!("{}{suffix}", &base[..keep]);
                n += 1;
            }
            tools.push(Tool::Mcp(Arc::new(f)));
        }
    }
    if ctx.auto_continue
        || ctx
            .agent
            .as_ref()
            .is_some_and(|a| a.def.config.auto_continue)
    {
        tools.extend(crate::tool::todo::ALL.into_iter().map(Tool::Todo));
    }
    if let Some(supervisor) = &ctx.supervisor {
        let offered = supervisor.tools();
        // `task` comes with the tools a conversation has: one without tools delegates
        // nothing (its sub-agents' tools are worked out from its own).
        if !tools.is_empty() || offered != crate::tool::agents::DELEGATING {
            tools.extend(offered.into_iter().map(Tool::Agent));
        }
    }
    tools.retain(|t| usable_here(state, ctx, t));
    // Skills, read on demand (an agent keeps to its own tools).
    if ctx.agent.is_none() && ctx.function_calling_support {
        let (skills, notes) =
            crate::skill::discover_noting(&state.paths.config_dir.join("skills"), &ctx.cwd);
        let tool = crate::tool::skills::SkillsTool::new(skills).with_notes(notes);
        if !tool.is_empty() {
            tools.push(Tool::Skills(tool));
        }
    }
    // Agents can always ask their user (a headless run refuses the question).
    if ctx.user_tools || ctx.agent.is_some() {
        for tool in crate::tool::user::ALL {
            if !tools.iter().any(|t| t.name() == tool.name()) {
                tools.push(Tool::User(tool));
            }
        }
    }
    tools
}

/// Prepares the conversation's tools for a turn: leases its MCP servers (starting those
/// not running, waiting at most `mcp_start_wait`; the lease replaces the conversation's
/// previous one, so servers both use keep running), reports what is unavailable as
/// warnings — to this conversation only — and returns the tools to offer.
pub async fn prepare(
    state: &AppState,
    ctx: &mut RequestContext,
    sink: &Sink<'_>,
) -> Result<Vec<Tool>, CoreError> {
    if !offers_tools(ctx) {
        return Ok(Vec::new());
    }
    let (servers, unknown) = mcp_servers(state, ctx);
    if let Some(error) = state.mcp.load_error()
        && wanted(ctx).mcp_servers.is_some()
    {
        sink.emit(Event::Notice(Notice::warning(format!(
            "MCP servers are unavailable: {error}"
        ))));
    }
    for name in unknown {
        sink.emit(Event::Notice(Notice::warning(format!(
            "unknown MCP server `{name}` (not in functions/mcp.json)"
        ))));
    }
    if servers.is_empty() {
        ctx.mcp_lease = None;
    } else {
        let running = state.mcp.running(&servers);
        let waiting: Vec<&str> = servers
            .iter()
            .filter(|n| !running.iter().any(|r| &r.spec.name == *n))
            .map(String::as_str)
            .collect();
        if !waiting.is_empty() {
            sink.emit(Event::Notice(Notice::status(format!(
                "Starting MCP servers: {}",
                waiting.join(", ")
            ))));
        }
        let (lease, warnings) = tokio::select! {
            _ = ctx.cancel.cancelled() => return Err(CoreError::Cancelled),
            acquired = state.mcp.acquire(&servers) => acquired,
        };
        // The new lease is taken before the old one goes: shared servers keep running.
        ctx.mcp_lease = Some(lease);
        if !waiting.is_empty() {
            sink.emit(Event::Notice(Notice::status("Generating")));
        }
        for warning in warnings {
            sink.emit(Event::Notice(Notice::warning(warning)));
        }
    }
    let tools = declared(state, ctx);
    for tool in &tools {
        if let Tool::Skills(skills) = tool {
            for note in skills.notes() {
                super::context_parts::warn_once(sink, note);
            }
        }
    }
    if tools.iter().any(|t| !matches!(t, Tool::User(_))) {
        for error in &state.script_tools().errors {
            sink.emit(Event::Notice(Notice::warning(format!(
                "tool not available: {error}"
            ))));
        }
    }
    Ok(tools)
}

/// Whether `tool` may run in this conversation whatever was enabled: memory tools need a
/// workspace (creating `workspace/`, or `.memory edit`, opts in), and off the record only
/// tools that read run.
pub(super) fn usable_here(state: &AppState, ctx: &RequestContext, tool: &Tool) -> bool {
    if matches!(tool, Tool::Memory(_)) && !state.memory.dir().is_dir() {
        return false;
    }
    if !ctx.otr.get() {
        return true;
    }
    match tool {
        Tool::Builtin(b) => b.effect == crate::tool::Effect::Read,
        Tool::Script(_) | Tool::Mcp(_) => false,
        Tool::Memory(m) => m.reads_only(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::role::Role;
    use crate::session::id::SessionAlias;
    use crate::test_support::Fixture;
    use loki_wire::session_file::Session;

    /// Where each setting comes from in one case, and what is in force.
    struct Case {
        conversation: Option<&'static str>,
        role: Option<&'static str>,
        session: Option<&'static str>,
        support: bool,
        tools: Option<&'static str>,
        servers: Option<&'static str>,
    }

    #[test]
    fn the_session_beats_the_role_beats_the_conversation_beats_the_configuration() {
        let cases = [
            // The configuration's (copied into the conversation at its start).
            Case {
                conversation: None,
                role: None,
                session: None,
                support: true,
                tools: Some("fs_ls"),
                servers: Some("alpha"),
            },
            Case {
                conversation: Some("web_search"),
                role: None,
                session: None,
                support: true,
                tools: Some("web_search"),
                servers: Some("web_search"),
            },
            Case {
                conversation: Some("web_search"),
                role: Some("fs_cat"),
                session: None,
                support: true,
                tools: Some("fs_cat"),
                servers: Some("fs_cat"),
            },
            Case {
                conversation: Some("web_search"),
                role: Some("fs_cat"),
                session: Some("fs_write"),
                support: true,
                tools: Some("fs_write"),
                servers: Some("fs_write"),
            },
            // No MCP at all when support is off; a blank list means none.
            Case {
                conversation: None,
                role: Some("fs_cat"),
                session: None,
                support: false,
                tools: Some("fs_cat"),
                servers: None,
            },
            Case {
                conversation: Some("  "),
                role: None,
                session: None,
                support: true,
                tools: Some("  "),
                servers: None,
            },
        ];
        let fixture = Fixture::with_config("enabled_tools: fs_ls\nenabled_mcp_servers: alpha\n");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for (n, c) in cases.iter().enumerate() {
            let mut ctx = fixture.context();
            if let Some(value) = c.conversation {
                ctx.enabled_tools = Some(value.into());
                ctx.enabled_mcp_servers = Some(value.into());
            }
            if let Some(value) = c.role {
                let mut role = Role::temp("x");
                role.enabled_tools = Some(value.into());
                role.enabled_mcp_servers = Some(value.into());
                ctx.role = Some(role);
            }
            if let Some(value) = c.session {
                let stored = Session {
                    enabled_tools: Some(value.into()),
                    enabled_mcp_servers: Some(value.into()),
                    ..Session::default()
                };
                let alias = SessionAlias::new("s").unwrap();
                let create = fixture.state.sessions.create(Some(alias), stored);
                ctx.session = Some(runtime.block_on(create).unwrap());
            }
            ctx.mcp_server_support = c.support;
            let wanted = wanted(&ctx);
            assert_eq!(wanted.enabled_tools.as_deref(), c.tools, "case {n}");
            assert_eq!(wanted.mcp_servers.as_deref(), c.servers, "case {n}");
        }
    }
}
