//! [`SessionHandle`]: a shared, lockable reference to one live session.
//!
//! Every handle to the same session in a process shares one mutex (the store hands out
//! clones of the same `Arc`), so concurrent writers — a turn and a background
//! compression, or two API requests — serialise instead of losing each other's updates.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::Session;
use super::id::{SessionAlias, SessionId};

/// The state shared by all handles to one session.
#[derive(Debug, Default)]
pub(super) struct Shared {
    pub(super) session: Mutex<Session>,
    pub(super) dirty: AtomicBool,
    /// Identifies the file's content as last read or written (`None`: not on disk).
    pub(super) disk_key: Mutex<Option<String>>,
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

    /// The stable id.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// The human name, if it has one.
    pub fn alias(&self) -> Option<&SessionAlias> {
        self.alias.as_ref()
    }

    pub(crate) fn set_alias(&mut self, alias: SessionAlias) {
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

    pub(super) fn mark_clean(&self) {
        self.shared.dirty.store(false, Ordering::Release);
    }

    /// Identifies the file's content as this process last read or wrote it (`None` when
    /// it was never written); see [`super::sync::Baseline`].
    pub fn disk_key(&self) -> Option<String> {
        self.shared
            .disk_key
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_disk_key(&self, key: Option<String>) {
        *self
            .shared
            .disk_key
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = key;
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
