//! `.edit session`: the session in the editor, without ever breaking it, whatever store
//! holds it (files or PostgreSQL). The editor works on a private draft of the session's
//! YAML in the cache directory; only a draft that parses replaces the session, through
//! the conversation (`Command::ReplaceSession`, saved by the store), and only if no other
//! loki wrote the session while the editor was open. A broken or late draft is kept
//! aside while the session stays as it was.

use crate::term::yes_no::{self, Reply};
use loki_protocol::command::Command;

impl super::Repl {
    /// `.edit session`: saves the open session, edits it, replaces it.
    pub(super) async fn edit_session(&mut self) {
        if self.conv.status().session.is_none() {
            return self.error("no session is open");
        }
        if self.save_session(None).await.is_none() {
            return;
        }
        self.edit_saved_session().await;
    }

    async fn edit_saved_session(&mut self) {
        let text = match self.conv.session_yaml() {
            Some(Ok(text)) => text,
            Some(Err(e)) => return self.error(&e.to_string()),
            None => return self.error("no session is open"),
        };
        let cache = self.state().paths.cache_dir.clone();
        let draft = draft_path(&cache, "edit");
        if let Err(e) = std::fs::create_dir_all(&cache) {
            return self.error(&format!("cannot create {}: {e}", cache.display()));
        }
        if let Err(e) = crate::atomic_file::write_atomic(&draft, text.as_bytes(), true) {
            return self.error(&format!("cannot write {}: {e}", draft.display()));
        }
        loop {
            if !self.run_editor(&draft) {
                let _ = std::fs::remove_file(&draft);
                return;
            }
            // Validate before touching the session, so a broken edit loses nothing.
            let Err(e) = crate::session::store::parse_file(&draft) else {
                break;
            };
            self.error(&format!("{e}; the session was not changed"));
            let again = self
                .ask_user(|| yes_no::ask("Edit it again?", true, "n keeps the session as it was"))
                .await;
            if !matches!(again, Ok(Ok(Reply::Yes))) {
                let aside = draft_path(&cache, "rejected");
                match std::fs::rename(&draft, &aside) {
                    Ok(()) => self.note(&format!("your edit is kept in {}", aside.display())),
                    Err(_) => {
                        let _ = std::fs::remove_file(&draft);
                    }
                }
                return;
            }
        }
        let edited =
            crate::atomic_file::read_regular_text(&draft, crate::atomic_file::MAX_OWN_FILE);
        let _ = std::fs::remove_file(&draft);
        let edited = match edited {
            Ok(edited) => edited,
            Err(e) => {
                return self.error(&format!(
                    "cannot read {}: {e}; the session was not changed",
                    draft.display()
                ));
            }
        };
        // Nothing is locked while the editor is open: the replacement is refused if
        // another loki wrote the session meanwhile, and the edit is kept aside.
        let replace = Command::ReplaceSession {
            yaml: edited.clone(),
            base: text,
        };
        match self
            .conv
            .command(replace, &loki_protocol::emitter::Discard)
            .await
        {
            Ok(applied) => self.show_applied(&applied),
            Err(e) => {
                self.error(&format!("{e}; the session was not changed"));
                let aside = draft_path(&cache, "rejected");
                if crate::atomic_file::write_atomic(&aside, edited.as_bytes(), true).is_ok() {
                    self.note(&format!("your edit is kept in {}", aside.display()));
                }
            }
        }
    }
}

/// A private draft in the cache directory: `session-<what>-<pid>.yaml`.
fn draft_path(cache: &std::path::Path, what: &str) -> std::path::PathBuf {
    cache.join(format!("session-{what}-{}.yaml", std::process::id()))
}
