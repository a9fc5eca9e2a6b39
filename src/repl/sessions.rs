//! `.sessions [search TEXT]`: the saved sessions, or those whose messages mention a text.

impl super::Repl {
    /// `.sessions [search TEXT]`: saved sessions, or those mentioning the text with the
    /// line that does.
    pub(super) async fn list_sessions(&mut self, text: Option<&str>) {
        let state = std::sync::Arc::clone(self.state());
        let lines = match text {
            Some(text) => crate::conversation::catalog::search_sessions(&state, text)
                .await
                .map(|found| {
                    found
                        .into_iter()
                        .map(|(name, line)| format!("{name}: {line}"))
                        .collect::<Vec<_>>()
                }),
            None => crate::conversation::catalog::session_names(&state).await,
        };
        match lines {
            Ok(lines) if lines.is_empty() => self.note("no sessions found"),
            Ok(lines) => self.println(&loki_wire::sanitize::display(&lines.join("\n"))),
            Err(e) => self.error(&e.to_string()),
        }
    }
}
