//! Forking a session (`.fork [name]`, `--fork-session`): a new session that starts with a
//! copy of another's content — its settings, role, messages, usage and the keys loki
//! does not know — so the conversation can go on there while the original stays as it
//! was stored.

use super::TEMP_SESSION;
use super::handle::SessionHandle;
use super::id::{AUTONAME_PREFIX, SessionAlias};
use super::store::{SessionError, SessionStore};

/// Creates session `alias` (else one named after `source`) holding a copy of `source`'s
/// content, and returns it, marked to be saved. `source` is not written.
pub async fn fork(
    store: &dyn SessionStore,
    source: &SessionHandle,
    alias: Option<&str>,
) -> Result<SessionHandle, SessionError> {
    let alias = match alias {
        Some(TEMP_SESSION) => {
            return Err(SessionError::Reserved {
                name: TEMP_SESSION.into(),
            });
        }
        Some(name) => name.to_string(),
        None => fork_alias(&source.name()),
    };
    let copy = source.lock().get().clone();
    let fresh = store.create(Some(SessionAlias::new(alias)?), copy).await?;
    fresh.mark_dirty();
    Ok(fresh)
}

/// The name a fork gets when none is given: `<name>-fork-<UTC timestamp>`, and for the
/// unsaved temporary session an autoname (`_/<timestamp>-fork`).
pub fn fork_alias(name: &str) -> String {
    let stamp = crate::role::compact_timestamp(std::time::SystemTime::now());
    if name == TEMP_SESSION {
        format!("{AUTONAME_PREFIX}{stamp}-fork")
    } else {
        format!("{name}-fork-{stamp}")
    }
}
