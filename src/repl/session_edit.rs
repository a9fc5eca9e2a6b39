//! `.edit session`: the session file in the editor, without ever breaking it. The editor
//! works on a private draft next to the file; only a draft that parses replaces the file
//! (atomically) and is reloaded. A broken draft can be edited again, or is kept aside
//! while the session stays as it was.

use crate::conversation::Op;
use crate::engine::command::Command;
use crate::term::yes_no::{self, Reply};

impl super::Repl {
    /// `.edit session`: saves the open session, edits it, reloads it.
    pub(super) async fn edit_session(&mut self) {
        if self.ctx().session.is_none() {
            return self.error("no session is open");
        }
        let Some(path) = self.save_session(None).await else {
            return;
        };
        // Saving may have moved the conversation to a new session (see `save_session`).
        let Some(name) = self.ctx().session.as_ref().map(|s| s.id().to_string()) else {
            return self.error("no session is open");
        };
        // The saved session stays locked through the editor and the reload, so a run that
        // writes it meanwhile waits instead of being overwritten by the editor's save.
        let locked = match self.conv.lock_session().await {
            Ok(locked) => locked,
            Err(e) => return self.error(&e.to_string()),
        };
        self.edit_saved_session(&path, &name).await;
        if locked {
            self.conv.unlock_session();
        }
    }

    async fn edit_saved_session(&mut self, path: &std::path::Path, name: &str) {
        let draft = sibling(path, "edit");
        let text =
            match crate::atomic_file::read_regular_text(path, crate::atomic_file::MAX_OWN_FILE) {
                Ok(text) => text,
                Err(e) => return self.error(&format!("cannot read {}: {e}", path.display())),
            };
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
                let aside = sibling(path, "rejected");
                match std::fs::rename(&draft, &aside) {
                    Ok(()) => self.note(&format!("your edit is kept in {}", aside.display())),
                    Err(_) => {
                        let _ = std::fs::remove_file(&draft);
                    }
                }
                return;
            }
        }
        let installed =
            crate::atomic_file::read_regular_text(&draft, crate::atomic_file::MAX_OWN_FILE)
                .and_then(|text| crate::atomic_file::write_atomic(path, text.as_bytes(), true));
        let _ = std::fs::remove_file(&draft);
        if let Err(e) = installed {
            return self.error(&format!(
                "cannot write {}: {e}; the session was not changed",
                path.display()
            ));
        }
        let reopen = Command::ReloadSession(name.to_string());
        match self
            .conv
            .submit(Op::Command(reopen), &crate::engine::Discard)
            .await
        {
            Ok(_) => self.note(&format!(
                "reloaded the session ({} messages)",
                self.ctx().history.len()
            )),
            Err(e) => self.error(&e.to_string()),
        }
    }
}

/// `.<stem>.<what>.yaml` next to the session file: hidden, so no listing takes it for a
/// session.
fn sibling(path: &std::path::Path, what: &str) -> std::path::PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "session".into());
    path.with_file_name(format!(".{stem}.{what}.yaml"))
}
