//! [`SessionHandle`]: a shared, lockable reference to one live session.
//!
//! Every handle to the same session in a process shares one mutex (the store hands out
//! clones of the same `Arc`), so concurrent writers — a turn and a background
//! compression, or two API requests — serialise instead of losing each other's updates.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::id::{SessionAlias, SessionId};
use loki_protocol::command::Version;
use loki_wire::session_file::Session;

/// The state shared by all handles to one session.
#[derive(Debug, Default)]
pub(super) struct Shared {
    pub(super) session: Mutex<Session>,
    pub(super) dirty: AtomicBool,
    /// The stored version as last read or written (`None`: not stored yet).
    pub(super) version: Mutex<Option<Version>>,
}

/// One session, opened from a [`super::store::SessionStore`].
#[derive(Debug, Clone)]
pub struct SessionHandle {
    id: SessionId,
    alias: Option<SessionAlias>,
    pub(super) shared: Arc<Shared>,
}

impl SessionHandle {
    pub(super) fn new(id: SessionId, alias: Option<SessionAlias>, shared: Arc<Shared>) -> Self {
        Self { id, alias, shared }
    }

    /// A handle to a session a store has just loaded (`version` as stored) or created
    /// (`None`). A store hands out clones of it (or [`SessionHandle::named`]) for later
    /// opens of the same id, so they share one copy.
    pub fn loaded(
        id: SessionId,
        alias: Option<SessionAlias>,
        session: Session,
        version: Option<Version>,
    ) -> Self {
        let shared = Shared {
            session: Mutex::new(session),
            version: Mutex::new(version),
            ..Shared::default()
        };
        let shared = Arc::new(shared);
        super::rescue::track(&shared);
        Self::new(id, alias, shared)
    }

    /// Another handle to the same session, under `alias`.
    pub fn named(&self, alias: Option<SessionAlias>) -> Self {
        Self::new(self.id, alias, Arc::clone(&self.shared))
    }

    /// The stable id.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// The human name, if it has one.
    pub fn alias(&self) -> Option<&SessionAlias> {
        self.alias.as_ref()
    }

    /// Records a new name (a store's `rename` does, after storing it).
    pub fn set_alias(&mut self, alias: SessionAlias) {
        self.alias = Some(alias);
    }

    /// What to show the user: the alias, else the id.
    pub fn name(&self) -> String {
        self.alias
            .as_ref()
            .map_or_else(|| self.id.to_string(), ToString::to_string)
    }

    /// Locks the session for reading or changing it.
    pub fn lock(&self) -> SessionGuard<'_> {
        SessionGuard {
            session: self
                .shared
                .session
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            handle: self,
        }
    }

    /// Whether it changed since it was opened or last saved.
    pub fn is_dirty(&self) -> bool {
        self.shared.dirty.load(Ordering::Acquire)
    }

    /// Records that it changed.
    pub fn mark_dirty(&self) {
        self.shared.dirty.store(true, Ordering::Release);
    }

    /// Records that what it holds is stored (a store's `save` does).
    pub fn mark_clean(&self) {
        self.shared.dirty.store(false, Ordering::Release);
    }

    /// The stored version as this process last read or wrote it (`None` when it was
    /// never stored); see [`super::sync::Baseline`].
    pub fn version(&self) -> Option<Version> {
        self.shared
            .version
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Records the version stored (a store's `save` does).
    pub fn set_version(&self, version: Option<Version>) {
        *self
            .shared
            .version
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = version;
    }
}

/// A locked session. Reading is free; [`SessionGuard::get_mut`] marks it dirty.
#[derive(Debug)]
pub struct SessionGuard<'a> {
    session: MutexGuard<'a, Session>,
    handle: &'a SessionHandle,
}

impl SessionGuard<'_> {
    /// The session.
    pub fn get(&self) -> &Session {
        &self.session
    }

    /// The session, for changing it (marks it dirty).
    pub fn get_mut(&mut self) -> &mut Session {
        self.handle.mark_dirty();
        &mut self.session
    }

    /// The session, for bringing it in line with what is stored (not a change of this
    /// conversation's own, so it does not mark it dirty).
    pub(crate) fn get_mut_untracked(&mut self) -> &mut Session {
        &mut self.session
    }
}
