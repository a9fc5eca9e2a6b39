//! The information commands: `--info`, `--list-models`, `--list-roles`,
//! `--list-sessions`, `--list-rags`, `--list-macros`, `--sync-models`, `--authenticate`, `--build-tools`.
//! They never write anything but what they are asked to.

use std::io::Write;

use crate::cli::args::{Args, ModelListing};
use crate::config::clients::ModelKind;
use crate::role;
use crate::state::AppState;
use loki_wire::sanitize;

/// Runs the information command `args` asks for; returns the exit status.
pub async fn run(state: &AppState, args: &Args) -> anyhow::Result<u8> {
    if let Some(status) = accounts(state, args).await? {
        return Ok(status);
    }
    if args.build_tools {
        return match &args.agent {
            Some(agent) => super::build_tools::run_agent(state, agent),
            None => super::build_tools::run(state),
        };
    }
    if let Some(names) = names_asked(state, args).await? {
        print_lines(state, names)?;
        return Ok(0);
    }
    if let Some(name) = &args.export_session {
        export_session(state, args, name).await?;
        return Ok(0);
    }
    if let Some(listing) = args.list_models {
        list_models(state, listing)?;
        return Ok(0);
    }
    if args.info {
        // A model asked for with `-m` that does not exist is an error, as an unknown
        // role or session is; without `-m`, a missing default is a row of the table.
        if let Some(id) = args.model.as_deref() {
            state
                .providers
                .resolve(id, crate::config::clients::ModelKind::Chat)?;
        }
        let active = super::info::active(
            state,
            args.agent.as_deref(),
            args.role.as_deref(),
            args.session.as_deref(),
        )
        .await?;
        let text = super::info::render(state, args.model.as_deref(), active);
        let text = sanitize::for_terminal(&text, state.terminal.stdout_tty);
        std::io::stdout().lock().write_all(text.as_bytes())?;
    }
    Ok(0)
}

/// The commands that change the user's accounts or catalogue (`--authenticate`,
/// `--mcp-login`, `--mcp-logout`, `--sync-models`); their one line goes to stderr.
/// `None` when none was asked.
async fn accounts(state: &AppState, args: &Args) -> anyhow::Result<Option<u8>> {
    let line = if let Some(name) = &args.authenticate {
        let config = crate::term::sign_in::choose(state, name.as_deref())?;
        crate::term::sign_in::run(&config).await?
    } else if let Some(name) = &args.mcp_login {
        crate::term::sign_in::mcp_login(state, name).await?
    } else if let Some(name) = &args.mcp_logout {
        let tokens = state
            .mcp
            .tokens()
            .ok_or_else(|| anyhow::anyhow!("no place for MCP sign-ins"))?;
        if crate::mcp::oauth::sign_out(tokens, name)? {
            format!("✓ MCP server `{name}`: signed out")
        } else {
            format!("MCP server `{name}` was not signed in")
        }
    } else if args.sync_models {
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
        return Ok(Some(0));
    } else {
        return Ok(None);
    };
    writeln!(std::io::stderr().lock(), "{}", sanitize::display(&line))?;
    Ok(Some(0))
}

/// The lines of the listing asked for (`--list-roles`, `-rags`, `-macros`, `-skills`,
/// `-agents`, `-sessions`, `--search-sessions`); `None` when none was asked.
async fn names_asked(state: &AppState, args: &Args) -> anyhow::Result<Option<Vec<String>>> {
    let paths = &state.paths;
    let names = if args.list_roles {
        role::list(&paths.roles_dir)
    } else if args.list_rags {
        crate::rag::list(&paths.rags_dir)
    } else if args.list_macros {
        crate::macros::list(&paths.macros_dir)
    } else if args.list_skills {
        let cwd = std::env::current_dir().unwrap_or_default();
        crate::skill::discover(&paths.config_dir.join("skills"), &cwd)
            .into_iter()
            .map(|skill| format!("{}\t{}", skill.name, skill.summary()))
            .collect()
    } else if args.list_agents {
        crate::agent::list(&paths.agents_dir)
    } else if args.list_sessions {
        known_agent(state, args)?;
        crate::conversation::history::names(state, sessions_scope(args)).await?
    } else if let Some(text) = &args.search_sessions {
        known_agent(state, args)?;
        crate::conversation::history::search(state, sessions_scope(args), text)
            .await?
            .into_iter()
            .map(|(name, line)| format!("{name}: {line}"))
            .collect()
    } else {
        return Ok(None);
    };
    Ok(Some(names))
}

/// The sessions a listing covers: `-a NAME`'s, else the user's and every agent's.
fn sessions_scope(args: &Args) -> crate::conversation::history::Scope<'_> {
    crate::conversation::history::Scope::of(args.agent.as_deref())
}

/// `-a NAME` names an agent that exists (its sessions are listed, not nobody's).
fn known_agent(state: &AppState, args: &Args) -> anyhow::Result<()> {
    if let Some(name) = &args.agent {
        crate::agent::AgentDef::load(&state.paths, name, &state.env)?;
    }
    Ok(())
}

/// Prints `lines` to stdout, one each, made safe for a terminal.
fn print_lines(state: &AppState, lines: Vec<String>) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    for line in lines {
        writeln!(
            out,
            "{}",
            sanitize::for_terminal(&line, state.terminal.stdout_tty)
        )?;
    }
    Ok(())
}

/// `--export-session NAME [--format json]`: the stored session, as Markdown or JSON.
async fn export_session(state: &AppState, args: &Args, name: &str) -> anyhow::Result<()> {
    let found = crate::conversation::history::read(state, sessions_scope(args), name).await?;
    let Some(session) = found else {
        anyhow::bail!("no session `{name}` (loki --list-sessions shows them)");
    };
    let text = match args.format.as_deref() {
        Some("json") => crate::session::export::json(&session)?,
        _ => crate::session::export::markdown(name, &session),
    };
    print_lines(state, vec![text])?;
    Ok(())
}

/// `--list-models[=TYPE]`: chat models one per line (ready for `-m`). Other types are
/// asked for by name, or all of them with `=all`, marked with their type in a
/// tab-separated column so `cut -f1` leaves plain ids.
fn list_models(state: &AppState, listing: ModelListing) -> anyhow::Result<()> {
    let (kinds, marked): (&[ModelKind], bool) = match listing {
        ModelListing::Chat => (&[ModelKind::Chat], false),
        ModelListing::Embedding => (&[ModelKind::Embedding], false),
        ModelListing::Reranker => (&[ModelKind::Reranker], false),
        ModelListing::All => (
            &[ModelKind::Chat, ModelKind::Embedding, ModelKind::Reranker],
            true,
        ),
    };
    let mut lines = Vec::new();
    for &kind in kinds {
        for model in state.providers.models(kind)? {
            let id = model.id();
            if marked && kind != ModelKind::Chat {
                lines.push(format!("{id}\t{}", kind.as_str()));
            } else {
                lines.push(id);
            }
        }
    }
    print_lines(state, lines)?;
    Ok(())
}
