//! `--info`: the effective settings and paths, one `name value` row per line.

use crate::state::AppState;

/// Rows describing the agent of `-a`: its directory, model, tools, variables and
/// starters; an unknown agent is an error.
fn agent_rows(state: &AppState, name: &str) -> anyhow::Result<Vec<(&'static str, String)>> {
    let def = crate::agent::AgentDef::load(&state.paths, name, &state.env)?;
    let list = |items: Vec<String>| {
        if items.is_empty() {
            "null".to_string()
        } else {
            items.join(",")
        }
    };
    let config = &def.config;
    Ok(vec![
        ("agent", def.name.clone()),
        ("agent_description", config.description.clone()),
        ("agent_dir", def.dir.display().to_string()),
        (
            "agent_model",
            config.model.clone().unwrap_or_else(|| "null".into()),
        ),
        (
            "agent_tools",
            list(def.tools.iter().map(|t| t.name.clone()).collect()),
        ),
        ("agent_global_tools", list(config.global_tools.clone())),
        ("agent_mcp_servers", list(config.mcp_servers.clone())),
        (
            "agent_variables",
            list(
                config
                    .variables
                    .iter()
                    .map(|v| match &v.default {
                        Some(default) => format!("{}={default}", v.name),
                        None => v.name.clone(),
                    })
                    .collect(),
            ),
        ),
        (
            "agent_starters",
            config.conversation_starters.len().to_string(),
        ),
        ("agent_auto_continue", config.auto_continue.to_string()),
        (
            "agent_can_spawn_agents",
            config.can_spawn_agents.to_string(),
        ),
    ])
}

/// Rows describing the agent of `-a`, the role of `-r` and the session of `-s`; an unknown
/// one is an error.
pub(super) async fn active(
    state: &AppState,
    agent: Option<&str>,
    role: Option<&str>,
    session: Option<&str>,
) -> anyhow::Result<Vec<(&'static str, String)>> {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "null".into());
    let mut rows = Vec::new();
    if let Some(name) = agent {
        rows.extend(agent_rows(state, name)?);
    }
    if let Some(name) = role {
        let cwd = std::env::current_dir().unwrap_or_default();
        let vars = crate::role::SystemVars::detect(&state.env, &cwd);
        let role = crate::role::Role::load(&state.paths.roles_dir, name, &vars)?;
        rows.push(("role", role.name.clone()));
        rows.push(("role_model", opt(role.model.clone())));
        rows.push((
            "role_temperature",
            opt(role.temperature.map(|v| v.to_string())),
        ));
        rows.push(("role_enabled_tools", opt(role.enabled_tools.clone())));
        rows.push(("role_prompt", first_line(&role.prompt)));
    }
    if let Some(name) = session {
        match crate::conversation::catalog::stored_session(state, name).await? {
            Some(stored) => {
                rows.push(("session", name.to_string()));
                rows.push(("session_model", opt(stored.model.clone())));
                rows.push(("session_role", opt(stored.role_name.clone())));
                rows.push(("session_messages", stored.messages.len().to_string()));
            }
            None if name == "temp" => rows.push(("session", "temp (unsaved)".into())),
            None => {
                return Err(crate::session::store::SessionError::NotFound {
                    name: name.to_string(),
                }
                .into());
            }
        }
    }
    Ok(rows)
}

fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let short: String = line.chars().take(70).collect();
    if short.len() < line.len() {
        format!("{short}…")
    } else {
        short
    }
}

/// Renders the info table.
pub(super) fn render(
    state: &AppState,
    model_override: Option<&str>,
    active: Vec<(&'static str, String)>,
) -> String {
    let c = &state.config;
    let opt = |v: Option<String>| v.unwrap_or_else(|| "null".into());
    let model = match model_override {
        Some(id) => state
            .providers
            .resolve(id, crate::client::config::ModelKind::Chat)
            .map(|m| m.id()),
        None => state
            .providers
            .default_chat_model(c.model.as_deref())
            .map(|m| m.id()),
    }
    .unwrap_or_else(|e| format!("(none: {e})"));
    let mut rows: Vec<(&str, String)> = vec![
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
        (
            "wrap",
            opt(c.wrap.map(|w| match w {
                crate::config::Wrap::No => "no".to_string(),
                crate::config::Wrap::Auto => "auto".to_string(),
                crate::config::Wrap::Width(n) => n.to_string(),
            })),
        ),
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
    ];
    rows.extend(active);
    for (name, path) in state.paths.info_rows() {
        rows.push((name, path.display().to_string()));
    }
    let mut out = String::new();
    for (name, value) in rows {
        out.push_str(&format!("{name:<30}{value}\n"));
    }
    out
}
