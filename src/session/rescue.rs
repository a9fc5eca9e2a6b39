//! Rescuing live sessions when loki panics.
//!
//! Owns: a registry of the sessions open in this process, and writing each one with
//! unsaved changes as a new session when the panic hook asks. Release builds abort on a
//! panic, so nothing else would save them: an unsaved REPL session (`-s` with no name)
//! would be gone, and a named one would lose the turn in progress.
//! Does not own: when to rescue (the panic hook in `app`), the normal save path (the
//! store, with its locks and merges). A rescue never touches an existing session's
//! files; it only adds new ones.

use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

use super::handle::Shared;
use super::id::SessionId;

/// Every session opened in this process (dropped ones are pruned as new ones come).
static LIVE: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

/// Registers a session for [`rescue_all`].
pub(super) fn track(shared: &Arc<Shared>) {
    let mut live = LIVE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    live.retain(|weak| weak.strong_count() > 0);
    live.push(Arc::downgrade(shared));
}

/// Writes every live session with unsaved changes and at least one message as a new
/// session `<base>` (then `<base>-2`, …) under `sessions_dir`, in the file store's layout
/// (`by-id/<id>/state.yaml`, `by-name/<name>`, both 0600). Returns the names written.
///
/// Runs inside a panic hook, so it never blocks: a session whose lock is held (perhaps
/// by the panicking thread) is skipped, and errors are ignored.
pub fn rescue_all(sessions_dir: &Path, base: &str) -> Vec<String> {
    let live = match LIVE.try_lock() {
        Ok(live) => live,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return Vec::new(),
    };
    let mut names = Vec::new();
    for shared in live.iter().filter_map(Weak::upgrade) {
        if !shared.dirty.load(std::sync::atomic::Ordering::Acquire) {
            continue;
        }
        let session = match shared.session.try_lock() {
            Ok(session) => session,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => continue,
        };
        if session.messages.is_empty() {
            continue;
        }
        let Ok(yaml) = loki_wire::session_yaml::to_yaml(&session) else {
            continue;
        };
        drop(session);
        // Known secrets never reach a session file, here as on every save.
        let yaml = loki_wire::secrets::redact(&yaml).into_owned();
        let name = free_name(sessions_dir, base, names.len());
        let id = SessionId::new();
        let state = sessions_dir
            .join("by-id")
            .join(id.to_string())
            .join("state.yaml");
        let alias = sessions_dir.join("by-name").join(&name);
        let written =
            crate::atomic_file::write_atomic(&state, yaml.as_bytes(), true).and_then(|()| {
                crate::atomic_file::write_atomic(&alias, id.to_string().as_bytes(), true)
            });
        if written.is_ok() {
            names.push(name);
        }
    }
    names
}

/// `base`, or `base-N` for the first N that no session uses.
fn free_name(sessions_dir: &Path, base: &str, skip: usize) -> String {
    let by_name = sessions_dir.join("by-name");
    (1..)
        .skip(skip)
        .map(|n| {
            if n == 1 {
                base.to_string()
            } else {
                format!("{base}-{n}")
            }
        })
        .find(|name| !by_name.join(name).exists())
        .unwrap_or_else(|| base.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::handle::SessionHandle;

    #[test]
    fn only_sessions_with_unsaved_messages_are_rescued() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = loki_wire::session_file::Session::default();
        session.messages.push(loki_wire::message::Message::text(
            loki_wire::message::Role::User,
            "remember the llamas; token rescue-secret-value-1234",
        ));
        let unsaved = SessionHandle::loaded(SessionId::new(), None, session.clone(), None);
        unsaved.mark_dirty();
        loki_wire::secrets::remember("RESCUE_TOKEN", "rescue-secret-value-1234");
        let saved = SessionHandle::loaded(SessionId::new(), None, session, None);
        // Other tests' sessions may be live in this process too: look for ours.
        let names = rescue_all(dir.path(), "rescued-test");
        assert_eq!(names.first().map(String::as_str), Some("rescued-test"));
        let texts: Vec<String> = names
            .iter()
            .map(|name| {
                let id = std::fs::read_to_string(dir.path().join("by-name").join(name)).unwrap();
                std::fs::read_to_string(dir.path().join(format!("by-id/{id}/state.yaml"))).unwrap()
            })
            .collect();
        assert_eq!(
            texts
                .iter()
                .filter(|t| t.contains("remember the llamas"))
                .count(),
            1,
            "the unsaved session once, the saved one not at all"
        );
        assert!(
            texts
                .iter()
                .all(|t| !t.contains("rescue-secret-value-1234")),
            "a known secret reached the rescued file"
        );
        drop((unsaved, saved));
    }
}
