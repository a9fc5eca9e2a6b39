//! [`Tracker`]: one conversation's hold on its session — the version it last saw, the
//! write lock while it holds it, and whether another writer's changes forced it apart.
//!
//! A turn (or a whole one-shot run) takes the lock with [`Tracker::lock`], which reads
//! the stored session once and merges what others appended since the conversation's
//! [`Baseline`]; while the lock is held nobody else writes, so [`Tracker::save`] writes
//! without reading again. A conversation that rewrote its past while another writer
//! appended cannot be merged: it is saved as a new session (a fork) instead of
//! overwriting their work.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use tokio_util::sync::CancellationToken;

use super::TEMP_SESSION;
use super::handle::SessionHandle;
use super::id::{AUTONAME_PREFIX, SessionAlias, slugify};
use super::store::{SessionError, SessionLease, SessionStore};
use super::sync::{Baseline, Merge, merge};
use loki_protocol::command::SavedSession;
use loki_wire::message::Message;
use loki_wire::session_file::Session;
use loki_wire::session_file::UsageTally;

/// Where a conversation reports what happens to its session while it works on it
/// (waiting for another writer, merging what others stored): one line each.
pub type SessionNotify<'a> = &'a (dyn Fn(&str) + Sync);

/// A conversation's messages and usage, which merging rebases.
#[derive(Debug)]
pub struct Transcript<'a> {
    /// The messages.
    pub history: &'a mut Vec<Message>,
    /// Tokens and cost.
    pub usage: &'a mut UsageTally,
}

/// Where a tracker keeps the write lock it holds: shared with the [`SessionHold`] that
/// took it, which empties it when dropped.
type LeaseSlot = Arc<Mutex<Option<SessionLease>>>;

/// The session's write lock as a guard, from [`Tracker::lock`] until dropped: the hold
/// that took the lock releases it when dropped. A hold taken while the lock was already
/// held (a turn of a one-shot run, which holds it from open to close; a save within a
/// turn), or for a session that needs none (the temporary one), releases nothing. A
/// tracker that is replaced (the session closed, forked or another one opened) lets its
/// lock go at once; its holds then release nothing.
#[must_use = "the session's lock is released when the hold is dropped"]
#[derive(Debug, Default)]
pub struct SessionHold {
    taken: Option<Weak<Mutex<Option<SessionLease>>>>,
}

impl SessionHold {
    /// Whether this hold took the lock (and releases it when dropped).
    pub fn took(&self) -> bool {
        self.taken.is_some()
    }
}

impl Drop for SessionHold {
    fn drop(&mut self) {
        if let Some(slot) = self.taken.take().and_then(|slot| slot.upgrade()) {
            slot.lock().unwrap_or_else(PoisonError::into_inner).take();
        }
    }
}

/// One conversation's hold on its open session.
#[derive(Debug, Default)]
pub struct Tracker {
    base: Baseline,
    lease: LeaseSlot,
    /// Another writer changed the session while this conversation rewrote its past: the
    /// next save forks.
    diverged: bool,
}

impl Tracker {
    /// The hold on a session just opened, whose stored content is `stored`.
    pub fn opened(handle: &SessionHandle, stored: &Session) -> Self {
        Self {
            base: Baseline::of(handle.version(), stored),
            ..Self::default()
        }
    }

    /// Whether this conversation holds the session's write lock.
    pub fn is_locked(&self) -> bool {
        self.lease
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Takes the write lock of the session in `slot`, waiting while another writer (a
    /// loki process, another conversation) holds it, then merges what others stored
    /// since the baseline into `transcript`. The [`SessionHold`] releases the lock when
    /// dropped if this call took it; it releases nothing when the lock was held already
    /// or the session needs none (the temporary session, no session). A named session
    /// not stored yet that another writer stored meanwhile is followed: `slot` then holds
    /// theirs.
    pub async fn lock(
        &mut self,
        store: &dyn SessionStore,
        slot: &mut Option<SessionHandle>,
        transcript: Transcript<'_>,
        cancel: &CancellationToken,
        notify: SessionNotify<'_>,
    ) -> Result<SessionHold, SessionError> {
        if self.is_locked() {
            return Ok(SessionHold::default());
        }
        loop {
            let Some(handle) = slot.as_ref() else {
                return Ok(SessionHold::default());
            };
            if handle.alias().is_some_and(|a| a.as_str() == TEMP_SESSION) {
                // Never stored, so the copy in memory is what a panic can rescue
                // (`super::rescue`): keep it up to date with the finished turns.
                handle
                    .lock()
                    .get_mut()
                    .messages
                    .clone_from(transcript.history);
                return Ok(SessionHold::default());
            }
            let lease = match store.try_lock(handle).await? {
                Some(lease) => lease,
                None => {
                    notify(&format!(
                        "waiting for another loki process using session `{}`…",
                        handle.name()
                    ));
                    store.lock(handle, cancel).await?
                }
            };
            if self.follow_stored_alias(store, slot).await? {
                // Lock the session the other writer stored instead.
                continue;
            }
            let Some(handle) = slot.as_ref() else {
                return Ok(SessionHold::default());
            };
            let name = handle.name();
            match self.sync(store, handle, transcript).await? {
                Some(Merge::Merged { theirs }) if theirs > 0 => notify(&format!(
                    "session `{name}`: added {theirs} message(s) another loki process saved meanwhile"
                )),
                Some(Merge::Diverged) => notify(&format!(
                    "session `{name}` was changed by another loki process while this conversation rewrote its past; it will be saved as a new session"
                )),
                _ => {}
            }
            *self.lease.lock().unwrap_or_else(PoisonError::into_inner) = Some(lease);
            return Ok(SessionHold {
                taken: Some(Arc::downgrade(&self.lease)),
            });
        }
    }

    /// A named session this conversation started (not stored yet) that another writer
    /// stored under the same name meanwhile: continue in that one. True if switched.
    async fn follow_stored_alias(
        &mut self,
        store: &dyn SessionStore,
        slot: &mut Option<SessionHandle>,
    ) -> Result<bool, SessionError> {
        let Some(handle) = slot.as_ref() else {
            return Ok(false);
        };
        let Some(alias) = handle.alias() else {
            return Ok(false);
        };
        if store.is_stored(handle.id()).await {
            return Ok(false);
        }
        match store.resolve(alias.as_str()).await? {
            Some((other, found)) if other != handle.id() => {
                let theirs = store.open(other, found).await?;
                if handle.is_dirty() {
                    theirs.mark_dirty();
                }
                *slot = Some(theirs);
                self.base = Baseline::default();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Reads the stored session and merges what others stored since the baseline (call
    /// it under the lock). `None` when nothing changed.
    async fn sync(
        &mut self,
        store: &dyn SessionStore,
        handle: &SessionHandle,
        transcript: Transcript<'_>,
    ) -> Result<Option<Merge>, SessionError> {
        let Some((version, stored)) = store.reload(handle.id(), self.base.key.as_ref()).await?
        else {
            return Ok(None);
        };
        let merged = merge(&self.base, &stored, transcript.history, transcript.usage);
        match merged {
            Merge::Merged { theirs } => {
                tracing::info!("session {}: merged {theirs} stored message(s)", handle.id());
                handle.lock().get_mut_untracked().compressed_messages =
                    stored.compressed_messages.clone();
                handle.set_version(Some(version.clone()));
                self.base = Baseline::of(Some(version), &stored);
            }
            Merge::Diverged => self.diverged = true,
        }
        Ok(Some(merged))
    }

    /// Saves the session in `handle` (renamed to `rename` when given) after `fill` has
    /// written the conversation into it. Call it under the lock ([`Tracker::lock`]).
    ///
    /// The temporary session is saved under an autoname alias (`_/<timestamp>[-<title>]`)
    /// unless a name is given. A conversation that diverged is saved as a new session.
    pub async fn save(
        &mut self,
        store: &dyn SessionStore,
        handle: &mut SessionHandle,
        rename: Option<&str>,
        fill: impl FnOnce(&mut Session) + Send,
    ) -> Result<SavedSession, SessionError> {
        let forked = if self.diverged {
            Some(self.fork(store, handle, rename).await?)
        } else {
            None
        };
        let rename = if forked.is_some() { None } else { rename };
        let is_temp = handle.alias().is_some_and(|a| a.as_str() == TEMP_SESSION);
        let new_name = match rename {
            Some(TEMP_SESSION) => {
                return Err(SessionError::Reserved {
                    name: TEMP_SESSION.into(),
                });
            }
            Some(name) => Some(name.to_string()),
            None if is_temp => Some(autoname_alias(handle.lock().get().autoname.as_deref())),
            None => None,
        };
        match new_name {
            Some(name) if is_temp && rename.is_none() => {
                rename_unique(store, handle, &name).await?;
            }
            Some(name) => store.rename(handle, SessionAlias::new(name)?).await?,
            None => {}
        }
        fill(handle.lock().get_mut());
        let stored = store.save(handle).await?;
        self.base = Baseline::of(Some(stored.version.clone()), handle.lock().get());
        Ok(SavedSession {
            location: stored.location,
            version: stored.version,
            forked,
        })
    }

    /// Moves the conversation to a new session (named `rename`, else after the old one
    /// under `_/`), leaving the stored one to the writer who changed it. Returns the
    /// explanation for the user.
    async fn fork(
        &mut self,
        store: &dyn SessionStore,
        handle: &mut SessionHandle,
        rename: Option<&str>,
    ) -> Result<String, SessionError> {
        let old_name = handle.name();
        let alias = match rename {
            Some(name) => name.to_string(),
            None => autoname_alias(Some(&old_name)),
        };
        let copy = handle.lock().get().clone();
        let fresh = store
            .create(Some(SessionAlias::new(alias.clone())?), copy)
            .await?;
        fresh.mark_dirty();
        *handle = fresh;
        *self = Self::default();
        Ok(format!(
            "session `{old_name}` was changed by another loki process while this conversation rewrote its past; saved this conversation as a new session `{alias}` (`{old_name}` keeps the other changes)"
        ))
    }
}

/// Renames a temporary session to the autoname `name`, or `name-2`, `name-3`… when
/// another run saved one under it in the same second (history saves every run).
async fn rename_unique(
    store: &dyn SessionStore,
    handle: &mut SessionHandle,
    name: &str,
) -> Result<(), SessionError> {
    let mut n = 1;
    loop {
        let candidate = if n == 1 {
            name.to_string()
        } else {
            format!("{name}-{n}")
        };
        match store.rename(handle, SessionAlias::new(candidate)?).await {
            Err(SessionError::AliasInUse { .. }) if n < 100 => n += 1,
            other => return other,
        }
    }
}

/// The alias a saved temporary session gets: `_/<UTC timestamp>[-<title slug>]`.
fn autoname_alias(title: Option<&str>) -> String {
    let stamp = crate::role::compact_timestamp(std::time::SystemTime::now());
    match title.map(slugify).filter(|s| !s.is_empty()) {
        Some(slug) => format!("{AUTONAME_PREFIX}{stamp}-{slug}"),
        None => format!("{AUTONAME_PREFIX}{stamp}"),
    }
}

#[cfg(test)]
mod tests {
    use loki_protocol::command::Version;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::session::file_store::FileSessionStore;
    use crate::session::id::SessionId;
    use crate::session::store::{SessionMeta, Stored};
    use loki_wire::message::Role;

    /// The YAML store, counting how often a session is read back.
    struct Counting {
        files: FileSessionStore,
        reloads: AtomicUsize,
    }

    #[async_trait::async_trait]
    impl SessionStore for Counting {
        async fn resolve(
            &self,
            key: &str,
        ) -> Result<Option<(SessionId, Option<SessionAlias>)>, SessionError> {
            SessionStore::resolve(&self.files, key).await
        }
        async fn open(
            &self,
            id: SessionId,
            alias: Option<SessionAlias>,
        ) -> Result<SessionHandle, SessionError> {
            SessionStore::open(&self.files, id, alias).await
        }
        async fn create(
            &self,
            alias: Option<SessionAlias>,
            initial: Session,
        ) -> Result<SessionHandle, SessionError> {
            SessionStore::create(&self.files, alias, initial).await
        }
        async fn save(&self, handle: &SessionHandle) -> Result<Stored, SessionError> {
            SessionStore::save(&self.files, handle).await
        }
        async fn rename(
            &self,
            handle: &mut SessionHandle,
            alias: SessionAlias,
        ) -> Result<(), SessionError> {
            SessionStore::rename(&self.files, handle, alias).await
        }
        async fn delete(&self, id: SessionId) -> Result<(), SessionError> {
            SessionStore::delete(&self.files, id).await
        }
        async fn list(&self) -> Result<Vec<SessionMeta>, SessionError> {
            SessionStore::list(&self.files).await
        }
        async fn is_stored(&self, id: SessionId) -> bool {
            SessionStore::is_stored(&self.files, id).await
        }
        async fn reload(
            &self,
            id: SessionId,
            known: Option<&Version>,
        ) -> Result<Option<(Version, Session)>, SessionError> {
            self.reloads.fetch_add(1, Ordering::SeqCst);
            SessionStore::reload(&self.files, id, known).await
        }
        async fn try_lock(
            &self,
            handle: &SessionHandle,
        ) -> Result<Option<SessionLease>, SessionError> {
            SessionStore::try_lock(&self.files, handle).await
        }
        async fn lock(
            &self,
            handle: &SessionHandle,
            cancel: &CancellationToken,
        ) -> Result<SessionLease, SessionError> {
            SessionStore::lock(&self.files, handle, cancel).await
        }
    }

    fn store(dir: &std::path::Path) -> Counting {
        Counting {
            files: FileSessionStore::new(dir.join("sessions")),
            reloads: AtomicUsize::new(0),
        }
    }

    fn push(history: &mut Vec<Message>, text: &str) {
        history.push(Message::text(Role::User, text));
    }

    fn texts(session: &Session) -> Vec<String> {
        session.messages.iter().map(Message::text_content).collect()
    }

    /// A conversation on session `name`: its handle, tracker and transcript.
    async fn open(store: &Counting, name: &str) -> (Option<SessionHandle>, Tracker, Vec<Message>) {
        let handle = match store.open_key(name).await.unwrap() {
            Some(handle) => handle,
            None => store
                .create(Some(SessionAlias::new(name).unwrap()), Session::default())
                .await
                .unwrap(),
        };
        let stored = handle.lock().get().clone();
        let tracker = Tracker::opened(&handle, &stored);
        (Some(handle), tracker, stored.messages)
    }

    async fn lock(
        store: &Counting,
        slot: &mut Option<SessionHandle>,
        tracker: &mut Tracker,
        history: &mut Vec<Message>,
    ) -> SessionHold {
        let mut usage = UsageTally::default();
        let transcript = Transcript {
            history,
            usage: &mut usage,
        };
        tracker
            .lock(store, slot, transcript, &CancellationToken::new(), &|_| {})
            .await
            .unwrap()
    }

    async fn save(
        store: &Counting,
        slot: &mut Option<SessionHandle>,
        tracker: &mut Tracker,
        history: &[Message],
    ) -> SavedSession {
        let messages = history.to_vec();
        let handle = slot.as_mut().unwrap();
        tracker
            .save(store, handle, None, move |s| s.messages = messages)
            .await
            .unwrap()
    }

    /// One whole write of a conversation: the lock taken, `text` appended, the session
    /// saved and the lock let go.
    async fn write_locked(
        store: &Counting,
        slot: &mut Option<SessionHandle>,
        tracker: &mut Tracker,
        history: &mut Vec<Message>,
        text: &str,
    ) {
        let held = lock(store, slot, tracker, history).await;
        push(history, text);
        save(store, slot, tracker, history).await;
        drop(held);
    }

    /// Another loki process (its own store over `dir`) opens session `name` and appends
    /// `text` to it under its own lock.
    async fn another_writer_appends(dir: &std::path::Path, name: &str, text: &str) {
        let other = store_over(dir);
        let (mut slot, mut tracker, mut history) = open(&other, name).await;
        write_locked(&other, &mut slot, &mut tracker, &mut history, text).await;
    }

    #[tokio::test]
    async fn a_lock_reads_the_session_once_and_a_save_under_it_reads_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path());
        let (mut slot, mut tracker, mut history) = open(&store, "work").await;
        let held = lock(&store, &mut slot, &mut tracker, &mut history).await;
        assert!(held.took());
        assert_eq!(store.reloads.load(Ordering::SeqCst), 1);
        // Locking again while held is free.
        assert!(
            !lock(&store, &mut slot, &mut tracker, &mut history)
                .await
                .took()
        );
        assert!(tracker.is_locked());
        push(&mut history, "q1");
        let first = save(&store, &mut slot, &mut tracker, &history).await;
        push(&mut history, "q2");
        let second = save(&store, &mut slot, &mut tracker, &history).await;
        assert_eq!(store.reloads.load(Ordering::SeqCst), 1);
        assert_ne!(first.version, second.version);
        assert_eq!(slot.as_ref().unwrap().version(), Some(second.version));
        drop(held);
        assert!(!tracker.is_locked());
    }

    #[tokio::test]
    async fn what_another_writer_appended_is_merged_at_the_next_lock() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path());
        let (mut slot, mut tracker, mut history) = open(&store, "shared").await;
        write_locked(&store, &mut slot, &mut tracker, &mut history, "ours 1").await;
        another_writer_appends(dir.path(), "shared", "theirs").await;

        push(&mut history, "ours 2");
        let _held = lock(&store, &mut slot, &mut tracker, &mut history).await;
        let saved = save(&store, &mut slot, &mut tracker, &history).await;
        assert!(saved.forked.is_none());
        let stored = store_over(dir.path())
            .files
            .open_key("shared")
            .unwrap()
            .unwrap();
        assert_eq!(
            texts(&stored.lock().get().clone()),
            ["ours 1", "theirs", "ours 2"]
        );
    }

    #[tokio::test]
    async fn a_rewritten_past_is_saved_as_a_new_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path());
        let (mut slot, mut tracker, mut history) = open(&store, "base").await;
        write_locked(&store, &mut slot, &mut tracker, &mut history, "kept").await;
        another_writer_appends(dir.path(), "base", "theirs").await;

        // This conversation cleared its history meanwhile.
        history.clear();
        push(&mut history, "fresh start");
        let _held = lock(&store, &mut slot, &mut tracker, &mut history).await;
        let saved = save(&store, &mut slot, &mut tracker, &history).await;
        let note = saved.forked.expect("a fork");
        assert!(
            note.contains("saved this conversation as a new session"),
            "{note}"
        );
        let forked = slot.as_ref().unwrap();
        assert!(forked.name().starts_with("_/"), "{}", forked.name());
        let base = store_over(dir.path())
            .files
            .open_key("base")
            .unwrap()
            .unwrap();
        assert_eq!(texts(&base.lock().get().clone()), ["kept", "theirs"]);
        assert_eq!(texts(&forked.lock().get().clone()), ["fresh start"]);
    }

    #[tokio::test]
    async fn the_temporary_session_takes_no_lock_and_is_saved_under_an_autoname() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path());
        let handle = store
            .create(
                Some(SessionAlias::new(TEMP_SESSION).unwrap()),
                Session::default(),
            )
            .await
            .unwrap();
        let mut slot = Some(handle);
        let mut tracker = Tracker::default();
        let mut history = Vec::new();
        assert!(
            !lock(&store, &mut slot, &mut tracker, &mut history)
                .await
                .took()
        );
        push(&mut history, "hello");
        save(&store, &mut slot, &mut tracker, &history).await;
        assert!(slot.as_ref().unwrap().name().starts_with(AUTONAME_PREFIX));
        let renamed = slot.as_mut().unwrap();
        let refused = tracker
            .save(&store, renamed, Some(TEMP_SESSION), |_| {})
            .await;
        assert!(matches!(refused, Err(SessionError::Reserved { .. })));
    }

    /// A second store over the same directory: another loki process.
    fn store_over(dir: &std::path::Path) -> Counting {
        store(dir)
    }
}
