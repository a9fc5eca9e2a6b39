//! `.sessions [search TEXT]` and `.resume [name]`: the saved sessions, those whose messages
//! mention a text, and opening one from the history.

impl super::Repl {
    /// `.sessions [search TEXT]`: saved sessions, or those mentioning the text with the
    /// line that does.
    pub(super) async fn list_sessions(&mut self, text: Option<&str>) {
        use crate::conversation::history::Scope::All;
        let state = std::sync::Arc::clone(self.state());
        let lines = match text {
            Some(text) => crate::conversation::history::search(&state, All, text)
                .await
                .map(|found| {
                    found
                        .into_iter()
                        .map(|(name, line)| format!("{name}: {line}"))
                        .collect::<Vec<_>>()
                }),
            None => crate::conversation::history::names(&state, All).await,
        };
        match lines {
            Ok(lines) if lines.is_empty() => self.note("no sessions found"),
            Ok(lines) => self.println(&loki_wire::sanitize::display(&lines.join("\n"))),
            Err(e) => self.error(&e.to_string()),
        }
    }

    /// `.resume [name]`: opens a saved conversation — the one named (`agent:name` for an
    /// agent's), else the one picked from the history (newest first; typing filters).
    /// An agent's session is opened with its agent.
    pub(super) async fn resume(&mut self, key: Option<&str>) {
        use crate::conversation::history::{self, Scope};
        let state = std::sync::Arc::clone(self.state());
        let (agent, name) = match key {
            Some(key) => {
                let (agent, name) = history::split_key(key);
                (agent.map(str::to_string), name.to_string())
            }
            None => {
                let rows = match history::rows(&state, Scope::All).await {
                    Ok(rows) if rows.is_empty() => return self.note("no saved conversations yet"),
                    Ok(rows) => rows,
                    Err(e) => return self.error(&e.to_string()),
                };
                let width = crate::render::screenful::terminal_width();
                let lines: Vec<String> = rows.iter().map(|r| r.line(width)).collect();
                let chosen = self
                    .ask_user(move || crate::term::history_picker::pick(lines))
                    .await;
                let Ok(Some(index)) = chosen else { return };
                let Some(row) = rows.into_iter().nth(index) else {
                    return;
                };
                (row.found.agent, row.found.name)
            }
        };
        match agent {
            None => self.open_session(&name).await,
            Some(agent) => {
                self.apply(loki_protocol::command::Command::UseAgent {
                    name: agent,
                    variables: Vec::new(),
                    session: Some(name),
                })
                .await;
            }
        }
    }
}
