//! Commands that change a conversation rather than send a prompt: the REPL's
//! dot-commands (and later CLI flags) normalised into one enum the engine applies.
//!
//! Applying a command never talks to a provider and never prints; it returns a short
//! confirmation for the front end to show.

use crate::client::Role as MessageRole;
use crate::context::RequestContext;
use crate::role::{Role, SystemVars};
use crate::state::AppState;

use super::CoreError;

/// A change to the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Switch model (`.model`).
    SetModel(String),
    /// Use a temporary role made of this prompt (`.prompt`).
    UsePrompt(String),
    /// Activate a role by name (`.role`).
    UseRole(String),
    /// Leave the active role (`.exit role`).
    ExitRole,
    /// Change a runtime setting (`.set key value`).
    Set {
        /// Setting name.
        key: String,
        /// New value; `null` resets it to the configured default.
        value: String,
    },
    /// Forget the conversation so far (`.empty session`).
    ClearConversation,
}

/// Settings `.set` accepts, with the values they take (for help and completion).
pub const SETTABLE: &[(&str, &str)] = &[
    ("model", "<client:model>"),
    ("temperature", "<0..2|null>"),
    ("top_p", "<0..2|null>"),
    ("max_output_tokens", "<number|null>"),
    ("stream", "<true|false>"),
    ("dry_run", "<true|false>"),
    ("save", "<true|false>"),
    ("function_calling_support", "<true|false>"),
    ("enabled_tools", "<all|tool,tool…|null>"),
    ("yolo", "<true|false>"),
    ("mcp_server_support", "<true|false>"),
    ("enabled_mcp_servers", "<all|server,server…|null>"),
    ("rag_top_k", "<number>"),
    ("rag_reranker_model", "<client:model|null>"),
];

/// Applies a command to the conversation; returns a one-line confirmation.
pub fn apply(
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
            ctx.use_role(state, Role::temp(&prompt))?;
            Ok("role: temp".into())
        }
        Command::UseRole(name) => {
            let vars = SystemVars::detect(&state.env);
            let role = Role::load(&state.paths.roles_dir, &name, &vars)?;
            ctx.use_role(state, role)?;
            Ok(format!("role: {name} (model {})", ctx.model.id()))
        }
        Command::ExitRole => {
            if ctx.role.is_none() {
                return Err(CoreError::InvalidRequest("no role is active".into()));
            }
            ctx.exit_role(state);
            Ok("role: none".into())
        }
        Command::ClearConversation => {
            ctx.history.clear();
            if let Some(session) = &ctx.session {
                let mut guard = session.lock();
                let session = guard.get_mut();
                session.compressed_messages.clear();
                session.autoname = None;
                session.extra.remove("data_urls");
            }
            Ok("conversation cleared".into())
        }
        Command::Set { key, value } => set(state, ctx, &key, &value),
    }
}

fn set(
    state: &AppState,
    ctx: &mut RequestContext,
    key: &str,
    value: &str,
) -> Result<String, CoreError> {
    let invalid = |expected: &str| {
        CoreError::InvalidRequest(format!(
            "invalid value `{value}` for {key}: expected {expected}"
        ))
    };
    let null = value == "null";
    match key {
        "model" => return apply(state, ctx, Command::SetModel(value.to_string())),
        "temperature" | "top_p" => {
            let parsed = if null {
                None
            } else {
                let v: f64 = value
                    .parse()
                    .map_err(|_| invalid("a number from 0 to 2, or null"))?;
                if !(0.0..=2.0).contains(&v) {
                    return Err(invalid("a number from 0 to 2, or null"));
                }
                Some(v)
            };
            if key == "temperature" {
                ctx.temperature = if null {
                    state.config.temperature
                } else {
                    parsed
                };
            } else {
                ctx.top_p = if null { state.config.top_p } else { parsed };
            }
        }
        "max_output_tokens" => {
            if null {
                ctx.max_output_tokens = None;
            } else {
                let n: u64 = value
                    .parse()
                    .map_err(|_| invalid("a whole number, or null"))?;
                ctx.max_output_tokens = Some(n);
            }
        }
        "stream" | "dry_run" | "save" | "function_calling_support" | "yolo" => {
            let flag = parse_bool(value).ok_or_else(|| invalid("true or false"))?;
            match key {
                "stream" => ctx.stream = flag,
                "dry_run" => ctx.dry_run = flag,
                "save" => ctx.save = flag,
                "yolo" => ctx.tool_policy.yolo = flag,
                _ => ctx.function_calling_support = flag,
            }
        }
        "mcp_server_support" => {
            ctx.mcp_server_support = parse_bool(value).ok_or_else(|| invalid("true or false"))?;
        }
        "enabled_mcp_servers" => {
            if !null {
                let (_, unknown) = state.mcp.expand(value, &state.config.mapping_mcp_servers);
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
            let setting = (!null).then(|| value.to_string());
            match &ctx.session {
                Some(session) => session.lock().get_mut().enabled_mcp_servers = setting,
                None => ctx.enabled_mcp_servers = setting,
            }
        }
        "enabled_tools" => {
            let setting = (!null).then(|| value.to_string());
            match &ctx.session {
                Some(session) => session.lock().get_mut().enabled_tools = setting,
                None => ctx.enabled_tools = setting,
            }
            let active: Vec<String> = ctx
                .active_tools(state)
                .iter()
                .map(|t| t.name().to_string())
                .collect();
            return Ok(format!(
                "enabled_tools: {value} (active: {})",
                if active.is_empty() {
                    "none".to_string()
                } else {
                    active.join(", ")
                }
            ));
        }
        "rag_top_k" | "rag_reranker_model" => return set_rag(state, ctx, key, value),
        other => {
            let known: Vec<&str> = SETTABLE.iter().map(|(k, _)| *k).collect();
            return Err(CoreError::InvalidRequest(format!(
                "unknown setting `{other}`; settable: {}",
                known.join(", ")
            )));
        }
    }
    Ok(format!("{key}: {value}"))
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
        let n: usize = value.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
            CoreError::InvalidRequest(format!(
                "invalid value `{value}` for rag_top_k: expected a whole number from 1"
            ))
        })?;
        (Some(n), None)
    } else {
        if !null {
            state
                .providers
                .resolve(value, crate::client::config::ModelKind::Reranker)?;
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
    let dir = &state.paths.rags_dir;
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
        .map(crate::client::Message::text_content)
}
