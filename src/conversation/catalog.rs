//! What front ends list and describe without opening a conversation: saved sessions by
//! name (`--list-sessions`, Tab completion) and one session's stored settings (`--info
//! -s NAME`). Read-only; writing a session is a [`super::Conversation`]'s.

use crate::error::CoreError;
use crate::state::AppState;
use loki_wire::session_file::Session;

/// Saved sessions, by name (or id when unnamed), sorted.
pub async fn session_names(state: &AppState) -> Result<Vec<String>, CoreError> {
    names_in(&state.sessions).await
}

/// Saved sessions of agent `agent` (in its directory), by name.
pub async fn agent_session_names(state: &AppState, agent: &str) -> Result<Vec<String>, CoreError> {
    let def = crate::agent::AgentDef::load(&state.paths, agent, &state.env)?;
    names_in(&state.sessions_in(&def.sessions_dir())).await
}

async fn names_in(
    sessions: &std::sync::Arc<dyn crate::session::store::SessionStore>,
) -> Result<Vec<String>, CoreError> {
    Ok(sessions
        .list()
        .await?
        .iter()
        .map(crate::session::store::SessionMeta::name)
        .collect())
}

/// The stored session `name` names; `None` when there is none.
pub async fn stored_session(state: &AppState, name: &str) -> Result<Option<Session>, CoreError> {
    read_session(&state.sessions, name).await
}

/// The stored session `name` of agent `agent` (in the agent's directory).
pub async fn stored_agent_session(
    state: &AppState,
    agent: &str,
    name: &str,
) -> Result<Option<Session>, CoreError> {
    let def = crate::agent::AgentDef::load(&state.paths, agent, &state.env)?;
    read_session(&state.sessions_in(&def.sessions_dir()), name).await
}

async fn read_session(
    sessions: &std::sync::Arc<dyn crate::session::store::SessionStore>,
    name: &str,
) -> Result<Option<Session>, CoreError> {
    let Some((id, _)) = sessions.resolve(name).await? else {
        return Ok(None);
    };
    Ok(sessions.reload(id, None).await?.map(|(_, session)| session))
}

/// Saved sessions in the YAML directory `sessions_dir`, by name, where no shared state
/// is built (shell completion).
pub fn saved_session_names(sessions_dir: &std::path::Path) -> Vec<String> {
    crate::session::store::FileSessionStore::new(sessions_dir.to_path_buf())
        .list()
        .iter()
        .map(crate::session::store::SessionMeta::name)
        .collect()
}

/// Saved sessions with their ids and when they were written (the server's listing).
pub async fn sessions(
    state: &AppState,
) -> Result<Vec<crate::session::store::SessionMeta>, CoreError> {
    Ok(state.sessions.list().await?)
}

/// Copies every session between the YAML files of `sessions/` and the configured store
/// (`into_store`: files → store; else store → files), keeping ids and names; how many.
pub async fn migrate_sessions(state: &AppState, into_store: bool) -> Result<usize, CoreError> {
    use crate::session::store::SessionStore;
    let files = crate::session::store::FileSessionStore::new(state.paths.sessions_dir.clone());
    let store = state.sessions.as_ref();
    let (from, to): (&dyn SessionStore, &dyn SessionStore) = if into_store {
        (&files, store)
    } else {
        (store, &files)
    };
    let mut copied = 0;
    for meta in from.list().await? {
        let Some(id) = meta.id else { continue };
        let handle = from.open(id, meta.alias.clone()).await?;
        let session = handle.lock().get().clone();
        let copy = crate::session::handle::SessionHandle::loaded(id, meta.alias, session, None);
        to.save(&copy).await?;
        copied += 1;
    }
    Ok(copied)
}

/// How many of the newest sessions `-C` and `--search-sessions` look through.
const RECENT: usize = 500;

/// Saved sessions, newest first (at most [`RECENT`]), with their content.
async fn recent_sessions(state: &AppState) -> Result<Vec<(String, Session)>, CoreError> {
    let mut metas = state.sessions.list().await?;
    metas.sort_by_key(|m| std::cmp::Reverse(m.last_modified));
    let mut out = Vec::new();
    for meta in metas.into_iter().take(RECENT) {
        let name = meta.name();
        if let Some(session) = read_session(&state.sessions, &name).await? {
            out.push((name, session));
        }
    }
    Ok(out)
}

/// The newest saved session started in `dir` (`loki -C`).
pub async fn newest_session_in(
    state: &AppState,
    dir: &std::path::Path,
) -> Result<Option<String>, CoreError> {
    let dir = dir.display().to_string();
    Ok(recent_sessions(state)
        .await?
        .into_iter()
        .find(|(_, s)| s.cwd.as_deref() == Some(dir.as_str()))
        .map(|(name, _)| name))
}

/// Sessions whose messages contain `text` (case-insensitively), newest first, each with
/// its first matching line (at most 160 characters).
pub async fn search_sessions(
    state: &AppState,
    text: &str,
) -> Result<Vec<(String, String)>, CoreError> {
    let needle = text.to_lowercase();
    Ok(recent_sessions(state)
        .await?
        .into_iter()
        .filter_map(|(name, session)| Some((name, first_matching_line(&session, &needle)?)))
        .collect())
}

/// The first line of `session` (compressed messages first) that contains `needle`
/// (lowercase), trimmed to 160 characters.
pub(crate) fn first_matching_line(session: &Session, needle: &str) -> Option<String> {
    let line = session
        .compressed_messages
        .iter()
        .chain(&session.messages)
        .flat_map(|m| {
            m.text_content()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .find(|l| l.to_lowercase().contains(needle))?;
    Some(line.trim().chars().take(160).collect())
}
