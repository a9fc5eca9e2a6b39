//! `--info`: the effective settings and paths, one `name value` row per line.

use crate::conversation::info;
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
        let stored = match agent {
            Some(agent) => {
                crate::conversation::catalog::stored_agent_session(state, agent, name).await?
            }
            None => crate::conversation::catalog::stored_session(state, name).await?,
        };
        match stored {
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
    let resolved = match model_override {
        Some(id) => state
            .providers
            .resolve(id, crate::config::clients::ModelKind::Chat),
        None => state.providers.default_chat_model(c.model.as_deref()),
    };
    let (model, cap) = match &resolved {
        Ok(m) => (m.id(), info::output_cap(state, m)),
        Err(e) => (format!("(none: {e})"), "none".into()),
    };
    let mut rows = info::settings(state, model);
    rows.push(("max_tokens_sent", cap));
    rows.extend(active);
    let mut out = info::render(rows);
    out.push_str(&info::mcp(state));
    if let Ok(cwd) = std::env::current_dir() {
        out.push_str(&crate::config::project::describe(
            dirs::home_dir().as_deref(),
            &cwd,
            &state.paths.config_dir,
        ));
    }
    out.push_str(&info::render(info::paths(state)));
    out
}
