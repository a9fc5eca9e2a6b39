//! The history as front ends see it: every saved session — the user's and each agent's
//! (`agents/<name>/sessions/`) — newest first, for `--list-sessions`,
//! `--search-sessions`, `--export-session`, `-C` and the `--resume` picker. Read-only.
//!
//! An agent's session is named `<agent>:<session>` outside that agent (a session name
//! cannot hold a `:`), and by its own name with `-a <agent>`.

use std::sync::Arc;
use std::time::SystemTime;

use crate::error::CoreError;
use crate::session::store::SessionStore;
use crate::state::AppState;
use loki_wire::session_file::Session;

/// How many of the newest sessions `-C`, the picker and `--search-sessions` read.
const RECENT: usize = 500;

/// Which sessions a command looks at: all (the user's and every agent's), or one
/// agent's (`-a NAME`).
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// The user's sessions and every agent's.
    All,
    /// Only agent `name`'s.
    Agent(&'a str),
}

impl<'a> Scope<'a> {
    /// `-a NAME` when given, else everything.
    pub fn of(agent: Option<&'a str>) -> Self {
        agent.map_or(Self::All, Self::Agent)
    }
}

/// A saved session, located.
#[derive(Debug, Clone)]
pub struct Found {
    /// The agent whose session it is (`None`: the user's).
    pub agent: Option<String>,
    /// Its name (or id) in its store.
    pub name: String,
    /// When it was last written.
    pub modified: SystemTime,
}

impl Found {
    /// How it is typed: `name`, or `agent:name` for an agent's.
    pub fn key(&self) -> String {
        match &self.agent {
            Some(agent) => format!("{agent}:{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// A key typed by the user: `agent:name` names an agent's session.
pub fn split_key(key: &str) -> (Option<&str>, &str) {
    match key.split_once(':') {
        Some((agent, name)) if !agent.is_empty() && !name.is_empty() => (Some(agent), name),
        _ => (None, key),
    }
}

/// The stores `scope` covers, each with its agent's name.
fn stores(state: &AppState, scope: Scope<'_>) -> Vec<(Option<String>, Arc<dyn SessionStore>)> {
    match scope {
        Scope::Agent(agent) => {
            let dir = agent_sessions_dir(state, agent);
            vec![(Some(agent.to_string()), state.sessions_in(&dir))]
        }
        Scope::All => {
            let mut out = vec![(None, Arc::clone(&state.sessions))];
            let Ok(entries) = std::fs::read_dir(&state.paths.agents_dir) else {
                return out;
            };
            let mut agents: Vec<String> = entries
                .flatten()
                .filter(|e| e.path().join("sessions").is_dir())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| !n.starts_with('.'))
                .collect();
            agents.sort();
            for agent in agents {
                let dir = agent_sessions_dir(state, &agent);
                out.push((Some(agent), state.sessions_in(&dir)));
            }
            out
        }
    }
}

/// Where agent `agent` keeps its sessions: its definition's, else `agents/<agent>/sessions`.
fn agent_sessions_dir(state: &AppState, agent: &str) -> std::path::PathBuf {
    crate::agent::AgentDef::load(&state.paths, agent, &state.env).map_or_else(
        |_| state.paths.agents_dir.join(agent).join("sessions"),
        |def| def.sessions_dir(),
    )
}

/// Every saved session in `scope`, newest first.
pub async fn list(state: &AppState, scope: Scope<'_>) -> Result<Vec<Found>, CoreError> {
    let mut out = Vec::new();
    for (agent, store) in stores(state, scope) {
        for meta in store.list().await? {
            out.push(Found {
                agent: agent.clone(),
                name: meta.name(),
                modified: meta.last_modified,
            });
        }
    }
    out.sort_by_key(|f| std::cmp::Reverse(f.modified));
    Ok(out)
}

/// Names for `--list-sessions`: the user's sorted, then the agents' (`agent:name`); with
/// `-a` only that agent's, by their own names.
pub async fn names(state: &AppState, scope: Scope<'_>) -> Result<Vec<String>, CoreError> {
    let mut found = list(state, scope).await?;
    found.sort_by(|a, b| (&a.agent, &a.name).cmp(&(&b.agent, &b.name)));
    Ok(found
        .iter()
        .map(|f| match scope {
            Scope::Agent(_) => f.name.clone(),
            Scope::All => f.key(),
        })
        .collect())
}

/// The session `key` names in `scope` (`agent:name` for an agent's when the scope is all).
pub async fn read(
    state: &AppState,
    scope: Scope<'_>,
    key: &str,
) -> Result<Option<Session>, CoreError> {
    let (agent, name) = match scope {
        Scope::Agent(agent) => (Some(agent), key),
        Scope::All => split_key(key),
    };
    let store = match agent {
        Some(agent) => state.sessions_in(&agent_sessions_dir(state, agent)),
        None => Arc::clone(&state.sessions),
    };
    let Some((id, _)) = store.resolve(name).await? else {
        return Ok(None);
    };
    Ok(store.reload(id, None).await?.map(|(_, session)| session))
}

/// The newest sessions in `scope` (at most [`RECENT`]), with their contents.
pub async fn recent(
    state: &AppState,
    scope: Scope<'_>,
) -> Result<Vec<(Found, Session)>, CoreError> {
    let mut out = Vec::new();
    for found in list(state, scope).await?.into_iter().take(RECENT) {
        let key = found.key();
        if let Some(session) = read(state, Scope::All, &key).await? {
            out.push((found, session));
        }
    }
    Ok(out)
}

/// The newest session in `scope` started in `dir` (`loki -C`).
pub async fn newest_in(
    state: &AppState,
    scope: Scope<'_>,
    dir: &std::path::Path,
) -> Result<Option<Found>, CoreError> {
    let dir = dir.display().to_string();
    for found in list(state, scope).await?.into_iter().take(RECENT) {
        let Some(session) = read(state, Scope::All, &found.key()).await? else {
            continue;
        };
        if session.cwd.as_deref() == Some(dir.as_str()) {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// Sessions in `scope` whose messages contain `text` (any case), newest first, each
/// with its key and first matching line (at most 160 characters).
pub async fn search(
    state: &AppState,
    scope: Scope<'_>,
    text: &str,
) -> Result<Vec<(String, String)>, CoreError> {
    let needle = text.to_lowercase();
    Ok(recent(state, scope)
        .await?
        .into_iter()
        .filter_map(|(found, session)| {
            let line = super::catalog::first_matching_line(&session, &needle)?;
            let key = match scope {
                Scope::Agent(_) => found.name,
                Scope::All => found.key(),
            };
            Some((key, line))
        })
        .collect())
}

/// One row of the `--resume` picker.
#[derive(Debug, Clone)]
pub struct Row {
    /// The session.
    pub found: Found,
    /// The directory it was started in.
    pub cwd: String,
    /// Its first prompt, on one line.
    pub first_prompt: String,
    /// Its model.
    pub model: String,
    /// What it cost (USD).
    pub cost: f64,
}

/// The picker's rows: the newest sessions in `scope`.
pub async fn rows(state: &AppState, scope: Scope<'_>) -> Result<Vec<Row>, CoreError> {
    Ok(recent(state, scope)
        .await?
        .into_iter()
        .map(|(found, session)| {
            let first_prompt = session
                .compressed_messages
                .iter()
                .chain(&session.messages)
                .find(|m| m.role == loki_wire::message::Role::User)
                .map(|m| {
                    m.text_content()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            Row {
                found,
                cwd: session.cwd.unwrap_or_default(),
                first_prompt,
                model: session.model.unwrap_or_default(),
                cost: session.usage.cost,
            }
        })
        .collect())
}

impl Row {
    /// One line of the picker, at most `width` columns (a wrapped row would throw the menu's
    /// redrawing off).
    pub fn line(&self, width: usize) -> String {
        let row = self;
        let stamp = crate::role::httpdate_rfc3339(row.found.modified);
        let date: String = stamp.replace('T', " ").chars().take(16).collect();
        let dir = shorten_home(&row.cwd);
        let cost = if row.cost > 0.0 {
            format!("  ${:.4}", row.cost)
        } else {
            String::new()
        };
        let agent = row
            .found
            .agent
            .as_ref()
            .map(|a| format!("[{a}] "))
            .unwrap_or_default();
        let tail = format!("  {}{cost}", row.model);
        let head = format!("{date}  {dir}  {agent}");
        let room = width
            .saturating_sub(2 + head.chars().count() + tail.chars().count())
            .max(12);
        let prompt = loki_wire::sanitize::display(&row.first_prompt);
        let prompt: String = if prompt.chars().count() > room {
            let mut cut: String = prompt.chars().take(room.saturating_sub(1)).collect();
            cut.push('…');
            cut
        } else {
            prompt.into_owned()
        };
        loki_wire::sanitize::display(&format!("{head}{prompt}{tail}")).into_owned()
    }
}

/// The last component of a directory (`~` for the home directory): a full path would
/// leave the prompt no room in an 80-column picker.
fn shorten_home(dir: &str) -> String {
    if std::env::var("HOME").is_ok_and(|home| !home.is_empty() && home == dir) {
        return "~".into();
    }
    std::path::Path::new(dir)
        .file_name()
        .map_or_else(|| dir.to_string(), |n| n.to_string_lossy().into_owned())
}
