//! `-C` and `--resume`: which saved conversation a run continues. `-C` takes the newest
//! started in this directory; `--resume NAME` the one named; `--resume` alone asks with
//! a searchable picker. Agent sessions are included (`-a NAME` keeps to that agent's),
//! and choosing one of an agent's opens it with its agent.

use crate::cli::args::Args;
use crate::conversation::history::{self, Found, Scope};
use crate::state::AppState;

/// Sets `args.session` (and `args.agent` for an agent's session) from `-C` or
/// `--resume`; does nothing when neither was given. `Ok(false)`: the user left the
/// picker, and the run ends quietly.
pub async fn choose(state: &AppState, args: &mut Args) -> anyhow::Result<bool> {
    let scope = Scope::of(args.agent.as_deref());
    let found = if args.continue_last {
        let here = std::env::current_dir()?;
        match history::newest_in(state, scope, &here).await? {
            Some(found) => found,
            None => anyhow::bail!(
                "no session was started in {} yet; start one with -s NAME",
                here.display()
            ),
        }
    } else if let Some(key) = args.resume.clone().filter(|k| !k.is_empty()) {
        named(state, scope, &key).await?
    } else if args.resume.is_some() {
        match picked(state, scope).await? {
            Some(found) => found,
            None => return Ok(false),
        }
    } else {
        return Ok(true);
    };
    args.session = Some(found.name.clone());
    if found.agent.is_some() {
        args.agent = found.agent;
    }
    Ok(true)
}

/// The session `--resume KEY` names.
async fn named(state: &AppState, scope: Scope<'_>, key: &str) -> anyhow::Result<Found> {
    if history::read(state, scope, key).await?.is_none() {
        anyhow::bail!("no session `{key}` (loki --list-sessions shows them)");
    }
    let (agent, name) = match scope {
        Scope::Agent(agent) => (Some(agent), key),
        Scope::All => history::split_key(key),
    };
    Ok(Found {
        agent: agent.map(str::to_string),
        name: name.to_string(),
        modified: std::time::SystemTime::UNIX_EPOCH,
    })
}

/// The session chosen in the picker; `None` when the user left it. Without a terminal
/// to ask on it is an error that says how to choose instead.
async fn picked(state: &AppState, scope: Scope<'_>) -> anyhow::Result<Option<Found>> {
    if !(state.terminal.interactive() && state.terminal.stdout_tty) {
        anyhow::bail!(
            "--resume without a name needs a terminal to pick from; name the session instead: \
             `loki --resume NAME` (or `agent:NAME`), `loki -C` for the latest in this directory, \
             `loki --list-sessions` or `loki --search-sessions TEXT` to find one"
        );
    }
    let rows = history::rows(state, scope).await?;
    if rows.is_empty() {
        anyhow::bail!("no saved conversations yet");
    }
    let width = crate::render::screenful::terminal_width();
    let lines = rows.iter().map(|r| r.line(width)).collect();
    let chosen =
        tokio::task::spawn_blocking(move || crate::term::history_picker::pick(lines)).await?;
    Ok(chosen
        .and_then(|i| rows.into_iter().nth(i))
        .map(|r| r.found))
}
