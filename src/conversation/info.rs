//! What `--info` and `.info` show, and the other read-only reports a front end or a
//! macro prints: one table of `name value` rows, the same for both (`.info` shows the
//! conversation's live values where `--info` shows the configured ones).

use crate::config::Wrap;
use crate::conversation::context::RequestContext;
use crate::state::AppState;

/// A row of the info table.
pub type Row = (&'static str, String);

/// The last turn's speed: `first token 0.35s, 42.1 tokens/s`.
pub fn speed_text(speed: Option<loki_protocol::event::Speed>) -> String {
    let Some(speed) = speed else {
        return "none yet".into();
    };
    let first = format!(
        "first token {:.2}s",
        speed.time_to_first_token_ms as f64 / 1000.0
    );
    match speed.output_tokens_per_second {
        Some(rate) => format!("{first}, {rate:.1} tokens/s (last turn)"),
        None => format!("{first} (last turn)"),
    }
}

fn opt(v: Option<String>) -> String {
    v.unwrap_or_else(|| "null".into())
}

/// `no`, `auto` or the width.
pub fn wrap_text(wrap: Option<Wrap>) -> String {
    opt(wrap.map(|w| match w {
        Wrap::No => "no".to_string(),
        Wrap::Auto => "auto".to_string(),
        Wrap::Width(n) => n.to_string(),
    }))
}

/// The configured settings, with `model` as given (the resolved id, or why there is none).
pub fn settings(state: &AppState, model: String) -> Vec<Row> {
    let c = &state.config;
    vec![
        ("model", model),
        ("temperature", opt(c.temperature.map(|v| v.to_string()))),
        ("top_p", opt(c.top_p.map(|v| v.to_string()))),
        ("stream", c.stream.to_string()),
        ("dry_run", c.dry_run.to_string()),
        ("save", c.save.to_string()),
        ("save_session", opt(c.save_session.map(|v| v.to_string()))),
        ("compression_threshold", c.compression_threshold.to_string()),
        ("compaction_share", format!("{}%", c.compaction_share)),
        ("small_model", opt(c.small_model.clone())),
        ("memory", c.memory.to_string()),
        ("workspace_dir", state.memory.dir().display().to_string()),
        ("load_tools_after", c.load_tools_after.to_string()),
        (
            "function_calling_support",
            c.function_calling_support.to_string(),
        ),
        ("mcp_server_support", c.mcp_server_support.to_string()),
        ("keybindings", c.keybindings.clone()),
        ("wrap", wrap_text(c.wrap)),
        ("wrap_code", c.wrap_code.to_string()),
        ("highlight", c.highlight.to_string()),
        (
            "theme",
            if c.is_light_theme() {
                "light".into()
            } else {
                "dark".into()
            },
        ),
        ("enabled_tools", opt(c.enabled_tools.clone())),
        ("enabled_mcp_servers", opt(c.enabled_mcp_servers.clone())),
        (
            "permission_mode",
            crate::tool::Policy::from_config(c)
                .mode()
                .name()
                .to_string(),
        ),
        (
            "permissions",
            none_if_empty(crate::config::permissions::Rules::new(&c.permissions).lines()),
        ),
        ("sandbox", configured_sandbox(state)),
        ("rag_embedding_model", opt(c.rag_embedding_model.clone())),
        ("rag_reranker_model", opt(c.rag_reranker_model.clone())),
        ("rag_top_k", c.rag_top_k.to_string()),
        (
            "rag_chunk_size",
            opt(c.rag_chunk_size.map(|v| v.to_string())),
        ),
        (
            "rag_chunk_overlap",
            opt(c.rag_chunk_overlap.map(|v| v.to_string())),
        ),
        ("editor", opt(c.editor.clone())),
        ("user_agent", opt(c.user_agent())),
        ("save_shell_history", c.save_shell_history.to_string()),
        ("sync_models_url", opt(c.sync_models_url.clone())),
        ("serve_addr", opt(c.serve_addr.clone())),
        ("clients", state.providers.client_names().join(", ")),
        ("config_source", state.config_origin.clone()),
    ]
}

/// The sandbox mode config.yaml asks for (or the default), with the layers this system
/// gives it.
fn configured_sandbox(state: &AppState) -> String {
    use crate::sandbox::SandboxMode;
    let settings = &state.config.sandbox;
    let mode = settings
        .mode
        .unwrap_or_else(crate::conversation::confinement::default_mode);
    let net = if settings.network {
        "network on"
    } else {
        "network off"
    };
    match (mode, crate::sandbox::probe()) {
        (SandboxMode::DangerFullAccess, _) => mode.to_string(),
        (_, Ok(layers)) => format!("{mode} ({net}; {})", layers.describe()),
        (_, Err(why)) => format!("{mode} (commands are refused: {why})"),
    }
}

/// Replaces the value of row `name`, or adds the row after `after` (at the end when
/// `after` is not there).
fn put(rows: &mut Vec<Row>, name: &'static str, value: String, after: &str) {
    if let Some(row) = rows.iter_mut().find(|(n, _)| *n == name) {
        row.1 = value;
        return;
    }
    let at = rows
        .iter()
        .position(|(n, _)| *n == after)
        .map_or(rows.len(), |i| i + 1);
    rows.insert(at, (name, value));
}

/// The output limit each request to `model` carries: a local model that loops streams
/// until `request_timeout` unless something bounds it.
pub fn output_cap(state: &AppState, model: &crate::client::Model) -> String {
    use crate::config::clients::ClientKind;
    let limit = model.config.max_output_tokens;
    let always = state
        .providers
        .client_of(&model.client)
        .is_some_and(|c| matches!(c.kind, ClientKind::Claude | ClientKind::Bedrock));
    let local = state.providers.is_local(&model.client);
    match limit {
        Some(n) if local => {
            format!("{n} (always sent to a local server; max_output_tokens: 0 for none)")
        }
        None if local => "none (max_output_tokens: 0)".into(),
        Some(n) if model.config.require_max_tokens => format!("{n} (require_max_tokens)"),
        Some(n) if always => format!("{n} (this API always takes one)"),
        None if always => "8192 (this API always takes one)".into(),
        _ => {
            "none: the server decides (set max_output_tokens and require_max_tokens to cap)".into()
        }
    }
}

/// `.info`: the `--info` rows with this conversation's values, then what only a
/// conversation has (its tools, usage, role, session, tokens, MCP servers). `display`
/// holds the front end's display settings (`highlight`, `wrap`, …) as they are now.
pub(super) fn conversation(state: &AppState, ctx: &RequestContext, display: Vec<Row>) -> String {
    let mut rows = settings(state, ctx.model.id());
    let live: Vec<(&'static str, String, &str)> = vec![
        (
            "max_input_tokens",
            opt(ctx.model.config.max_input_tokens.map(|v| v.to_string())),
            "model",
        ),
        (
            "max_output_tokens",
            opt(ctx
                .max_output_tokens
                .or(ctx.model.config.max_output_tokens)
                .map(|v| v.to_string())),
            "max_input_tokens",
        ),
        (
            "max_tokens_sent",
            output_cap(state, &ctx.model),
            "max_output_tokens",
        ),
        (
            "temperature",
            opt(ctx.temperature.map(|v| v.to_string())),
            "",
        ),
        ("top_p", opt(ctx.top_p.map(|v| v.to_string())), ""),
        ("stream", ctx.stream.to_string(), ""),
        ("dry_run", ctx.dry_run.to_string(), ""),
        ("save", ctx.save.to_string(), ""),
        (
            "function_calling_support",
            ctx.function_calling_support.to_string(),
            "",
        ),
        ("mcp_server_support", ctx.mcp_server_support.to_string(), ""),
        ("enabled_tools", opt(ctx.enabled_tools.clone()), ""),
        (
            "tools",
            none_if_empty(
                crate::conversation::engine::scope::declared(state, ctx)
                    .iter()
                    .map(|t| t.name().to_string())
                    .collect(),
            ),
            "enabled_tools",
        ),
        ("yolo", ctx.tool_policy.yolo().to_string(), "tools"),
        (
            "permission_mode",
            ctx.tool_policy.mode().name().to_string(),
            "yolo",
        ),
        (
            "permissions",
            none_if_empty(ctx.tool_policy.rules.lines()),
            "permission_mode",
        ),
        (
            "sandbox",
            crate::conversation::confinement::describe(
                ctx.sandbox.as_deref(),
                state.config.sandbox.network,
            ),
            "permissions",
        ),
        (
            "enabled_mcp_servers",
            none_if_empty(crate::conversation::engine::scope::mcp_servers(state, ctx).0),
            "",
        ),
    ];
    for (name, value, after) in live {
        put(&mut rows, name, value, after);
    }
    for (name, value) in display {
        put(&mut rows, name, value, "");
    }
    rows.extend(conversation_rows(ctx));
    let mut out = render(rows);
    out.push_str(&mcp(state));
    out.push_str(&render(paths(state)));
    out
}

/// What only a conversation has: its usage, speed, role, messages, tokens and session.
fn conversation_rows(ctx: &RequestContext) -> Vec<Row> {
    let mut rows = Vec::new();
    let usage = if ctx.usage.is_empty() {
        "none yet".into()
    } else {
        ctx.usage.summary()
    };
    rows.push(("usage", usage));
    rows.push(("speed", speed_text(ctx.last_speed)));
    rows.push((
        "role",
        ctx.role
            .as_ref()
            .map_or_else(|| "none".into(), |r| r.name.clone()),
    ));
    rows.push(("messages", ctx.history.len().to_string()));
    rows.push(("images", images_text(ctx)));
    rows.push(("tokens", token_summary(ctx)));
    rows.push((
        "session",
        ctx.session.as_ref().map_or_else(
            || "none".into(),
            crate::session::handle::SessionHandle::name,
        ),
    ));
    rows
}

/// The images the history holds, and how many each request drops: a model without
/// vision is sent none of them (`messages::leave_out_images`).
fn images_text(ctx: &RequestContext) -> String {
    use loki_wire::message::{Content, ContentPart};
    let count: usize = ctx
        .history
        .iter()
        .map(|m| match &m.content {
            Content::Parts(parts) => parts
                .iter()
                .filter(|p| matches!(p, ContentPart::ImageUrl { .. }))
                .count(),
            Content::Text(_) => 0,
        })
        .sum();
    match count {
        0 => "none".into(),
        n if ctx.model.config.supports_vision => format!("{n} in the history, sent"),
        n => format!(
            "{n} in the history, {n} dropped from each request: `{}` cannot see images",
            ctx.model.id()
        ),
    }
}

fn none_if_empty(items: Vec<String>) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// The rows of loki's directories and files.
/// A line per configured MCP server: `mcp:<name>` and its state (with its sign-in).
pub fn mcp(state: &AppState) -> String {
    state
        .mcp
        .status()
        .into_iter()
        .map(|(name, status)| format!("{:<30}{status}\n", format!("mcp:{name}")))
        .collect()
}

pub fn paths(state: &AppState) -> Vec<Row> {
    state
        .paths
        .info_rows()
        .into_iter()
        .map(|(name, path)| (name, path.display().to_string()))
        .collect()
}

/// The rows as a table: each name padded to 30 columns, then its value.
pub fn render(rows: Vec<Row>) -> String {
    let mut out = String::new();
    for (name, value) in rows {
        out.push_str(&format!("{name:<30}{value}\n"));
    }
    out
}

/// `1234 tokens (0.96% of the 128000-token context, exact)`.
pub(super) fn token_summary(ctx: &RequestContext) -> String {
    let tokens = crate::conversation::engine::session_tokens(ctx);
    let how = match crate::tokens::Counter::for_model(ctx.model.real_name()) {
        crate::tokens::Counter::O200k => "exact",
        crate::tokens::Counter::Estimate => "estimate",
    };
    match ctx.model.config.max_input_tokens.filter(|m| *m > 0) {
        Some(max) => format!(
            "{tokens} tokens ({:.2}% of the {max}-token context, {how})",
            tokens as f64 * 100.0 / max as f64
        ),
        None => format!("{tokens} tokens ({how})"),
    }
}

/// `.info session`: the session as YAML, then its token count.
pub(super) fn session(ctx: &RequestContext) -> Option<String> {
    let snapshot = ctx.session_snapshot()?;
    let yaml = serde_yaml::to_string(&snapshot).unwrap_or_default();
    Some(format!("{yaml}{}", token_summary(ctx)))
}

/// `.info agent`: its name, directory, variables, model and tools, then the instructions
/// in force.
pub(super) fn agent(ctx: &RequestContext) -> Option<String> {
    let agent = ctx.agent.as_ref()?;
    let def = &agent.def;
    let mut lines = vec![
        format!("name: {}", def.name),
        format!("description: {}", def.config.description),
        format!("directory: {}", def.dir.display()),
        format!("model: {}", ctx.model.id()),
    ];
    for (name, value) in &agent.variables {
        lines.push(format!("variable {name}: {value}"));
    }
    let tools: Vec<&str> = def.tools.iter().map(|t| t.name.as_str()).collect();
    lines.push(format!("tools: {}", tools.join(", ")));
    lines.push(format!(
        "global_tools: {}",
        def.config.global_tools.join(", ")
    ));
    lines.push(format!(
        "mcp_servers: {}",
        def.config.mcp_servers.join(", ")
    ));
    if let Some(role) = &ctx.role {
        lines.push(String::new());
        lines.push(role.prompt.clone());
    }
    Some(lines.join("\n"))
}

/// `.tool-results`: the tool calls since the last user message, each with its full
/// result.
pub(super) fn tool_results(ctx: &RequestContext) -> Option<String> {
    use loki_wire::message::Role;
    let start = ctx.history.iter().rposition(|m| m.role == Role::User)?;
    let turn = &ctx.history[start..];
    let mut out = String::new();
    for message in turn.iter().filter(|m| m.role == Role::Tool) {
        let call = turn
            .iter()
            .flat_map(|m| m.tool_calls.iter())
            .find(|c| Some(&c.id) == message.tool_call_id.as_ref());
        let title = call.map_or_else(
            || "tool".to_string(),
            |c| format!("{} {}", c.name, c.arguments),
        );
        out.push_str(&format!("── {title}\n{}\n", message.text_content()));
    }
    (!out.is_empty()).then_some(out)
}
