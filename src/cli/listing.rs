//! The information commands: `--info`, `--list-models`, `--list-roles`,
//! `--list-sessions`, `--list-rags`, `--list-macros`, `--sync-models`, `--authenticate`, `--build-tools`.
//! They never write anything but what they are asked to.

use std::io::Write;

use crate::cli::args::{Args, ModelListing};
use crate::client::config::ModelKind;
use crate::render::sanitize;
use crate::role;
use crate::state::AppState;

/// Runs the information command `args` asks for; returns the exit status.
pub async fn run(state: &AppState, args: &Args) -> anyhow::Result<u8> {
    let stdout_tty = state.terminal.stdout_tty;
    if let Some(name) = &args.authenticate {
        let config = crate::term::sign_in::choose(state, name.as_deref())?;
        let done = crate::term::sign_in::run(&config).await?;
        writeln!(std::io::stderr().lock(), "{}", sanitize::display(&done))?;
        return Ok(0);
    }
    if let Some(name) = &args.mcp_login {
        let done = crate::term::sign_in::mcp_login(state, name).await?;
        writeln!(std::io::stderr().lock(), "{}", sanitize::display(&done))?;
        return Ok(0);
    }
    if let Some(name) = &args.mcp_logout {
        let tokens = state
            .mcp
            .tokens()
            .ok_or_else(|| anyhow::anyhow!("no place for MCP sign-ins"))?;
        let line = if crate::mcp::oauth::sign_out(tokens, name)? {
            format!("✓ MCP server `{name}`: signed out")
        } else {
            format!("MCP server `{name}` was not signed in")
        };
        writeln!(std::io::stderr().lock(), "{}", sanitize::display(&line))?;
        return Ok(0);
    }
    if args.sync_models {
        let url = state
            .config
            .sync_models_url
            .clone()
            .unwrap_or_else(|| super::sync_models::DEFAULT_URL.to_string());
        let target = &state.paths.models_override_file;
        super::sync_models::sync(&url, target, state.config.user_agent().as_deref()).await?;
        let mut err = std::io::stderr().lock();
        writeln!(err, "✓ Fetched '{url}'")?;
        writeln!(err, "✓ Updated '{}'", target.display())?;
        return Ok(0);
    }
    if args.list_roles {
        let mut out = std::io::stdout().lock();
        for name in role::list(&state.paths.roles_dir) {
            writeln!(out, "{}", sanitize::for_terminal(&name, stdout_tty))?;
        }
        return Ok(0);
    }
    if args.build_tools {
        return match &args.agent {
            Some(agent) => super::build_tools::run_agent(state, agent),
            None => super::build_tools::run(state),
        };
    }
    if args.list_rags {
        let mut out = std::io::stdout().lock();
        for name in crate::rag::list(&state.paths.rags_dir) {
            writeln!(out, "{}", sanitize::for_terminal(&name, stdout_tty))?;
        }
        return Ok(0);
    }
    if args.list_macros {
        let mut out = std::io::stdout().lock();
        for name in crate::macros::list(&state.paths.macros_dir) {
            writeln!(out, "{}", sanitize::for_terminal(&name, stdout_tty))?;
        }
        return Ok(0);
    }
    if args.list_skills {
        let cwd = std::env::current_dir().unwrap_or_default();
        let mut out = std::io::stdout().lock();
        for skill in crate::skill::discover(&state.paths.config_dir.join("skills"), &cwd) {
            let line = format!("{}\t{}", skill.name, skill.description);
            writeln!(out, "{}", sanitize::for_terminal(&line, stdout_tty))?;
        }
        return Ok(0);
    }
    if args.list_agents {
        let mut out = std::io::stdout().lock();
        for name in crate::agent::list(&state.paths.agents_dir) {
            writeln!(out, "{}", sanitize::for_terminal(&name, stdout_tty))?;
        }
        return Ok(0);
    }
    if args.list_sessions {
        let mut out = std::io::stdout().lock();
        let names = match &args.agent {
            Some(agent) => crate::conversation::catalog::agent_session_names(state, agent).await?,
            None => crate::conversation::catalog::session_names(state).await?,
        };
        for name in names {
            writeln!(out, "{}", sanitize::for_terminal(&name, stdout_tty))?;
        }
        return Ok(0);
    }
    if let Some(text) = &args.search_sessions {
        let mut out = std::io::stdout().lock();
        for (name, line) in crate::conversation::catalog::search_sessions(state, text).await? {
            let name = sanitize::for_terminal(&name, stdout_tty);
            let line = sanitize::for_terminal(&line, stdout_tty);
            writeln!(out, "{name}: {line}")?;
        }
        return Ok(0);
    }
    if let Some(name) = &args.export_session {
        let Some(session) = crate::conversation::catalog::stored_session(state, name).await? else {
            anyhow::bail!("no session `{name}` (loki --list-sessions shows them)");
        };
        let text = match args.format.as_deref() {
            Some("json") => crate::session::export::json(&session)?,
            _ => crate::session::export::markdown(name, &session),
        };
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", sanitize::for_terminal(&text, stdout_tty))?;
        return Ok(0);
    }
    if let Some(listing) = args.list_models {
        let mut out = std::io::stdout().lock();
        // Chat models one per line (ready for `-m`). Other types are asked for by name,
        // or all of them with `=all`, marked with their type in a tab-separated column so
        // `cut -f1` leaves plain ids.
        let (kinds, marked): (&[ModelKind], bool) = match listing {
            ModelListing::Chat => (&[ModelKind::Chat], false),
            ModelListing::Embedding => (&[ModelKind::Embedding], false),
            ModelListing::Reranker => (&[ModelKind::Reranker], false),
            ModelListing::All => (
                &[ModelKind::Chat, ModelKind::Embedding, ModelKind::Reranker],
                true,
            ),
        };
        for &kind in kinds {
            for model in state.providers.models(kind)? {
                let id = model.id();
                let id = sanitize::for_terminal(&id, stdout_tty);
                if marked && kind != ModelKind::Chat {
                    writeln!(out, "{id}\t{}", kind.as_str())?;
                } else {
                    writeln!(out, "{id}")?;
                }
            }
        }
        return Ok(0);
    }
    if args.info {
        let active = super::info::active(
            state,
            args.agent.as_deref(),
            args.role.as_deref(),
            args.session.as_deref(),
        )
        .await?;
        let text = super::info::render(state, args.model.as_deref(), active);
        let text = sanitize::for_terminal(&text, stdout_tty);
        std::io::stdout().lock().write_all(text.as_bytes())?;
        return Ok(0);
    }

    Ok(0)
}
