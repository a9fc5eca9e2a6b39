//! Where sessions live: [`SessionStore`] is the interface the rest of loki uses, so the
//! YAML directory ([`super::file_store::FileSessionStore`], the default) and a database
//! are interchangeable. It is async because a database store waits on the network.
//!
//! A store hands out [`SessionHandle`]s (every handle to one session in a process shares
//! one copy), serialises writers through [`SessionStore::lock`] (a [`SessionLease`] held
//! until dropped), and identifies what it holds with a [`Version`]: `save` returns the
//! new one and `reload` returns nothing while the stored version is still the one known.

use std::time::SystemTime;

use tokio_util::sync::CancellationToken;

use super::handle::SessionHandle;
use super::id::{SessionAlias, SessionId};
use loki_protocol::command::Version;
use loki_wire::session_file::Session;

pub use super::file_store::{FileSessionStore, parse_file};

/// A session that cannot be read, written or named.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The name would escape the sessions directory or is not a valid file name.
    #[error(
        "invalid session name `{name}`: use letters, digits, `-`, `_`, `.` and spaces (not starting with `.`)"
    )]
    InvalidName {
        /// The name.
        name: String,
    },
    /// Another session already has this name.
    #[error("a session named `{name}` already exists; pick another name or delete it first")]
    AliasInUse {
        /// The name.
        name: String,
    },
    /// The file is not valid session YAML; it is left untouched.
    #[error("{}:{line}:{column}: {message} (the file was not changed; fix or delete it)", path.display())]
    Corrupt {
        /// The file.
        path: std::path::PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing failed.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        message: String,
    },
    /// The database storing sessions failed.
    #[error("session database: {0}")]
    Database(String),
    /// No such session.
    #[error("no session named `{name}`")]
    NotFound {
        /// The name or id asked for.
        name: String,
    },
    /// The name belongs to loki.
    #[error("`{name}` is reserved for the unsaved session; choose another name")]
    Reserved {
        /// The name.
        name: String,
    },
    /// The wait for another writer's lock was cancelled.
    #[error("interrupted while waiting for the session")]
    Cancelled,
}

/// A stored session, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionMeta {
    /// Its id; `None` for an old-style file not migrated yet.
    pub id: Option<SessionId>,
    /// Its name, if it has one.
    pub alias: Option<SessionAlias>,
    /// When it was last written.
    pub last_modified: SystemTime,
    /// A saved temporary session named by loki (`_/…`).
    pub is_autoname: bool,
}

impl SessionMeta {
    /// What to show and what to type to open it: the alias, else the id.
    pub fn name(&self) -> String {
        match (&self.alias, &self.id) {
            (Some(alias), _) => alias.to_string(),
            (None, Some(id)) => id.to_string(),
            (None, None) => String::new(),
        }
    }
}

/// What [`SessionStore::save`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// The version now stored.
    pub version: Version,
    /// Where, for the user: a file path, or a database row.
    pub location: String,
}

/// The exclusive right to write one session, held until dropped.
pub struct SessionLease {
    _held: Option<Box<dyn Send + Sync>>,
}

impl SessionLease {
    /// A lease that releases the lock when `held` is dropped.
    pub fn holding(held: impl Send + Sync + 'static) -> Self {
        Self {
            _held: Some(Box::new(held)),
        }
    }

    /// A lease of a store that needs no lock.
    pub fn unneeded() -> Self {
        Self { _held: None }
    }
}

impl std::fmt::Debug for SessionLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionLease")
    }
}

/// Storage of sessions by id, with names as aliases.
#[async_trait::async_trait]
pub trait SessionStore: Send + Sync {
    /// Finds the session `key` names: a UUID, or an alias (migrating an old-style file).
    async fn resolve(
        &self,
        key: &str,
    ) -> Result<Option<(SessionId, Option<SessionAlias>)>, SessionError>;
    /// Opens a stored session. Handles to the same id share one copy.
    async fn open(
        &self,
        id: SessionId,
        alias: Option<SessionAlias>,
    ) -> Result<SessionHandle, SessionError>;
    /// Starts a session in memory (stored on the first [`SessionStore::save`]).
    async fn create(
        &self,
        alias: Option<SessionAlias>,
        initial: Session,
    ) -> Result<SessionHandle, SessionError>;
    /// Stores the handle's session atomically and points its alias at it.
    async fn save(&self, handle: &SessionHandle) -> Result<Stored, SessionError>;
    /// Renames a session; its id and contents stay.
    async fn rename(
        &self,
        handle: &mut SessionHandle,
        alias: SessionAlias,
    ) -> Result<(), SessionError>;
    /// Deletes a session and the names pointing at it.
    async fn delete(&self, id: SessionId) -> Result<(), SessionError>;
    /// Every stored session, sorted by name.
    async fn list(&self) -> Result<Vec<SessionMeta>, SessionError>;
    /// Whether the session has been stored.
    async fn is_stored(&self, id: SessionId) -> bool;
    /// Roughly how many bytes the session takes in storage, for `history_max_mb`; 0 when
    /// the store cannot tell cheaply (a database counts sessions only).
    async fn stored_bytes(&self, _meta: &SessionMeta) -> u64 {
        0
    }
    /// Whether the store answers now (a server's readiness).
    async fn healthy(&self) -> bool {
        true
    }
    /// The session as stored now and its version — unless the version is still `known`,
    /// or the session is not stored (`None` then). Read from storage, past the handles
    /// this process shares.
    async fn reload(
        &self,
        id: SessionId,
        known: Option<&Version>,
    ) -> Result<Option<(Version, Session)>, SessionError>;
    /// Takes the session's write lock if nobody holds it (`None` if somebody does).
    async fn try_lock(&self, handle: &SessionHandle) -> Result<Option<SessionLease>, SessionError>;
    /// Waits for the session's write lock; cancelling `cancel` ends the wait with
    /// [`SessionError::Cancelled`].
    async fn lock(
        &self,
        handle: &SessionHandle,
        cancel: &CancellationToken,
    ) -> Result<SessionLease, SessionError>;

    /// Opens the session `key` names, if there is one.
    async fn open_key(&self, key: &str) -> Result<Option<SessionHandle>, SessionError> {
        match self.resolve(key).await? {
            Some((id, alias)) => self.open(id, alias).await.map(Some),
            None => Ok(None),
        }
    }

    /// Deletes the session `key` names.
    async fn delete_key(&self, key: &str) -> Result<(), SessionError> {
        let (id, _) = self
            .resolve(key)
            .await?
            .ok_or_else(|| SessionError::NotFound {
                name: key.to_string(),
            })?;
        self.delete(id).await
    }
}
