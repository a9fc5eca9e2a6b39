//! [`FileSessionStore`]: sessions as YAML files under one directory.
//!
//! ```text
//! sessions/by-id/<uuid>/state.yaml     the session (Loki's YAML format)
//! sessions/by-id/<uuid>/state.lock     held while a turn runs (see `super::lock`)
//! sessions/by-name/<alias>             a text file holding the uuid
//! sessions/by-name/.locks/<alias>      the lock of a named session not written yet
//! sessions/<alias>.yaml                a session written by Loki or an older loki
//! ```
//!
//! Old-style `<alias>.yaml` files are migrated lazily: the first time an alias is looked
//! up, the file is copied into the new layout under a fresh id and left in place.
//!
//! Writes go through [`crate::atomic_file`] (temp file + rename, mode 0600 because
//! conversations are private). A file that does not parse is reported with its path,
//! line and column and is never overwritten. A [`Version`] is a hash of the file's bytes.
//!
//! Loading a large session is dominated by YAML parsing, so each save also writes a JSON
//! copy next to the YAML, keyed by a hash of the YAML bytes; a load whose YAML still
//! hashes the same reads the JSON instead. Editing the YAML by hand simply misses the
//! cache.
//!
//! The filesystem calls are quick and local, so the [`SessionStore`] methods run them
//! inline; only waiting for another writer's lock moves to a blocking thread. The same
//! operations are available synchronously as inherent methods (shell completion, tests).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::SystemTime;

use tokio_util::sync::CancellationToken;

use super::handle::{SessionHandle, Shared};
use super::id::{SessionAlias, SessionId};
use super::lock::SessionLock;
use super::store::{SessionError, SessionLease, SessionMeta, SessionStore, Stored};
use loki_protocol::command::Version;
use loki_wire::session_file::Session;

/// Sessions as files under one directory (the global one, or an agent's).
#[derive(Debug)]
pub struct FileSessionStore {
    root: PathBuf,
    live: Mutex<HashMap<SessionId, Weak<Shared>>>,
}

const STATE_FILE: &str = "state.yaml";
const CACHE_FILE: &str = "state.cache.json";
const LOCK_FILE: &str = "state.lock";
/// Temporary files older than this in a session's directory are left over from a crash.
const STALE_TMP: std::time::Duration = std::time::Duration::from_secs(60);

impl FileSessionStore {
    /// A store over `root` (created on first save).
    pub fn new(root: PathBuf) -> Self {
        Self {
            root,
            live: Mutex::new(HashMap::new()),
        }
    }

    fn session_dir(&self, id: SessionId) -> PathBuf {
        self.root.join("by-id").join(id.to_string())
    }

    /// The YAML file of a session.
    pub fn state_path(&self, id: SessionId) -> PathBuf {
        self.session_dir(id).join(STATE_FILE)
    }

    fn alias_path(&self, alias: &SessionAlias) -> PathBuf {
        self.root.join("by-name").join(alias.as_str())
    }

    fn legacy_path(&self, alias: &SessionAlias) -> PathBuf {
        self.root.join(format!("{alias}.yaml"))
    }

    /// The id an alias file points at; a missing, unreadable or dangling alias is `None`.
    fn read_alias(&self, alias: &SessionAlias) -> Option<SessionId> {
        let path = self.alias_path(alias);
        let text = std::fs::read_to_string(&path).ok()?;
        let Some(id) = SessionId::parse(text.trim()) else {
            tracing::warn!("ignoring {}: it does not hold a session id", path.display());
            return None;
        };
        self.state_path(id).is_file().then_some(id)
    }

    /// Stops at a damaged name rather than starting a new session under it (which would
    /// orphan the old one): an alias file that is not a small regular file holding a
    /// session id, or a state file that is not a regular file (a directory, a FIFO, a
    /// link). A missing alias or a missing state file is not damage.
    fn check_alias(&self, alias: &SessionAlias) -> Result<(), SessionError> {
        let path = self.alias_path(alias);
        let damaged = |path: &Path, problem: &str| SessionError::Io {
            path: path.to_path_buf(),
            message: format!(
                "{problem}; the session name `{alias}` is damaged — fix or remove this file"
            ),
        };
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_error(&path, &e)),
            Ok(meta) if !meta.is_file() => return Err(damaged(&path, "not a regular file")),
            Ok(_) => {}
        }
        let text = crate::atomic_file::read_regular_text(&path, 1024)
            .map_err(|e| damaged(&path, &e.to_string()))?;
        let Some(id) = SessionId::parse(text.trim()) else {
            return Err(damaged(&path, "it does not hold a session id"));
        };
        let state = self.state_path(id);
        match std::fs::symlink_metadata(&state) {
            Ok(meta) if !meta.is_file() => Err(damaged(&state, "not a regular file")),
            _ => Ok(()),
        }
    }

    fn write_alias(&self, alias: &SessionAlias, id: SessionId) -> Result<(), SessionError> {
        let path = self.alias_path(alias);
        crate::atomic_file::write_atomic(&path, format!("{id}\n").as_bytes(), true)
            .map_err(|e| io_error(&path, &e))
    }

    fn migrated_marker(&self, alias: &SessionAlias) -> PathBuf {
        self.root
            .join("by-name")
            .join(".migrated")
            .join(alias.as_str().replace('/', "%2F"))
    }

    /// Copies an old-style `<alias>.yaml` into the id layout (the old file stays).
    fn migrate(&self, alias: &SessionAlias) -> Result<Option<SessionId>, SessionError> {
        if self.migrated_marker(alias).exists() {
            return Ok(None);
        }
        let legacy = self.legacy_path(alias);
        let text = match std::fs::read_to_string(&legacy) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error(&legacy, &e)),
        };
        parse_yaml(&legacy, &text)?;
        let id = SessionId::new();
        let state = self.state_path(id);
        crate::atomic_file::write_atomic(&state, text.as_bytes(), true)
            .map_err(|e| io_error(&state, &e))?;
        self.write_alias(alias, id)?;
        // Remember the adoption, so renaming or deleting the session later does not make
        // the (untouched) old file look new again.
        let marker = self.migrated_marker(alias);
        crate::atomic_file::write_atomic(&marker, format!("{id}\n").as_bytes(), true)
            .map_err(|e| io_error(&marker, &e))?;
        tracing::info!("migrated {} to {}", legacy.display(), state.display());
        Ok(Some(id))
    }

    /// Reads a stored session; returns it with its content key.
    fn load(&self, id: SessionId) -> Result<(Version, Session), SessionError> {
        let path = self.state_path(id);
        sweep_stale_temp_files(&self.session_dir(id));
        let text = crate::atomic_file::read_regular_text(&path, crate::atomic_file::MAX_OWN_FILE)
            .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => SessionError::NotFound {
                name: id.to_string(),
            },
            _ => io_error(&path, &e),
        })?;
        let key = content_key(text.as_bytes());
        let session = self.parse_keyed(id, &path, &text, &key)?;
        Ok((key, session))
    }

    /// Parses session text whose content key is `key`, through the JSON cache.
    fn parse_keyed(
        &self,
        id: SessionId,
        path: &Path,
        text: &str,
        key: &Version,
    ) -> Result<Session, SessionError> {
        let cache = self.session_dir(id).join(CACHE_FILE);
        if let Some(session) = read_cache(&cache, key) {
            return Ok(session);
        }
        let session = parse_yaml(path, text)?;
        if text.len() > CACHE_MIN_BYTES {
            write_cache(&cache, key, &session);
        }
        Ok(session)
    }

    /// The lock file of a named session that has not been written yet: two processes
    /// starting the same new session meet on its name.
    fn alias_lock_path(&self, alias: &SessionAlias) -> PathBuf {
        self.root
            .join("by-name")
            .join(".locks")
            .join(alias.as_str().replace('/', "%2F"))
    }

    fn share(&self, id: SessionId, session: Session, version: Option<Version>) -> Arc<Shared> {
        let shared = Arc::new(Shared {
            session: Mutex::new(session),
            version: Mutex::new(version),
            ..Shared::default()
        });
        super::rescue::track(&shared);
        let mut live = self
            .live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        live.retain(|_, weak| weak.strong_count() > 0);
        live.insert(id, Arc::downgrade(&shared));
        shared
    }

    fn live(&self, id: SessionId) -> Option<Arc<Shared>> {
        let live = self
            .live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        live.get(&id).and_then(Weak::upgrade)
    }

    /// Every alias file: `(alias, id it holds)`.
    fn aliases(&self) -> Vec<(SessionAlias, Option<SessionId>)> {
        let mut out = Vec::new();
        let by_name = self.root.join("by-name");
        for (prefix, dir) in [("", by_name.clone()), ("_/", by_name.join("_"))] {
            for name in file_names(&dir, None) {
                if let Ok(alias) = SessionAlias::new(format!("{prefix}{name}")) {
                    let id = std::fs::read_to_string(dir.join(&name))
                        .ok()
                        .and_then(|t| SessionId::parse(t.trim()));
                    out.push((alias, id));
                }
            }
        }
        out
    }
}

/// Below this size YAML parses fast enough that a cache is not worth a second file.
const CACHE_MIN_BYTES: usize = 64 * 1024;

impl FileSessionStore {
    /// See [`SessionStore::resolve`].
    pub fn resolve(
        &self,
        key: &str,
    ) -> Result<Option<(SessionId, Option<SessionAlias>)>, SessionError> {
        if let Some(id) = SessionId::parse(key) {
            if !self.state_path(id).is_file() && self.live(id).is_none() {
                return Ok(None);
            }
            let alias = self
                .aliases()
                .into_iter()
                .find(|(_, target)| *target == Some(id))
                .map(|(alias, _)| alias);
            return Ok(Some((id, alias)));
        }
        let alias = SessionAlias::new(key)?;
        self.check_alias(&alias)?;
        let id = match self.read_alias(&alias) {
            Some(id) => Some(id),
            None => self.migrate(&alias)?,
        };
        Ok(id.map(|id| (id, Some(alias))))
    }

    /// See [`SessionStore::open`].
    pub fn open(
        &self,
        id: SessionId,
        alias: Option<SessionAlias>,
    ) -> Result<SessionHandle, SessionError> {
        if let Some(shared) = self.live(id) {
            return Ok(SessionHandle::new(id, alias, shared));
        }
        let started = std::time::Instant::now();
        let (key, session) = self.load(id)?;
        tracing::debug!(
            "session {id} loaded in {:.2} ms ({} messages)",
            started.elapsed().as_secs_f64() * 1000.0,
            session.messages.len()
        );
        Ok(SessionHandle::new(
            id,
            alias,
            self.share(id, session, Some(key)),
        ))
    }

    /// See [`SessionStore::create`].
    pub fn create(
        &self,
        alias: Option<SessionAlias>,
        initial: Session,
    ) -> Result<SessionHandle, SessionError> {
        if let Some(alias) = &alias
            && self.resolve(alias.as_str())?.is_some()
        {
            return Err(SessionError::AliasInUse {
                name: alias.to_string(),
            });
        }
        let id = SessionId::new();
        Ok(SessionHandle::new(id, alias, self.share(id, initial, None)))
    }

    /// See [`SessionStore::save`]; returns the file written and its version.
    pub fn save(&self, handle: &SessionHandle) -> Result<(PathBuf, Version), SessionError> {
        let started = std::time::Instant::now();
        let path = self.state_path(handle.id());
        // Never take a name another session has (a stale handle, a second process).
        let alias_owner = handle.alias().and_then(|a| self.read_alias(a));
        if let (Some(alias), Some(owner)) = (handle.alias(), alias_owner)
            && owner != handle.id()
        {
            return Err(SessionError::AliasInUse {
                name: alias.to_string(),
            });
        }
        let guard = handle.lock();
        let text =
            loki_wire::session_yaml::to_yaml(guard.get()).map_err(|e| io_error(&path, &e))?;
        // Known secrets are stored as `«secret:NAME»`; such a file gets no JSON cache,
        // which would hold the values.
        let (text, redacted) = match loki_wire::secrets::redact(&text) {
            std::borrow::Cow::Borrowed(_) => (text, false),
            std::borrow::Cow::Owned(redacted) => (redacted, true),
        };
        crate::atomic_file::write_atomic(&path, text.as_bytes(), true)
            .map_err(|e| io_error(&path, &e))?;
        let version = content_key(text.as_bytes());
        let cache = self.session_dir(handle.id()).join(CACHE_FILE);
        // Keys kept for other tools may hold YAML that JSON cannot represent exactly
        // (tags, NaN), so such sessions are always read from the YAML.
        let cached = !redacted && text.len() > CACHE_MIN_BYTES && guard.get().extra.is_empty();
        // The YAML goes before the JSON cache is written: a long session is not held three
        // times at once (its messages, its YAML and its JSON), which set the peak memory
        // of continuing one (docs/benchmarks.md).
        drop(text);
        if cached {
            write_cache(&cache, &version, guard.get());
        } else {
            let _ = std::fs::remove_file(&cache);
        }
        // Clean as of what was written; a change made after this marks it dirty again.
        handle.mark_clean();
        handle.set_version(Some(version.clone()));
        drop(guard);
        if let Some(alias) = handle.alias()
            && alias_owner.is_none()
        {
            self.write_alias(alias, handle.id())?;
        }
        tracing::debug!(
            "session {} saved in {:.2} ms",
            handle.id(),
            started.elapsed().as_secs_f64() * 1000.0
        );
        Ok((path, version))
    }

    /// See [`SessionStore::rename`].
    pub fn rename(
        &self,
        handle: &mut SessionHandle,
        alias: SessionAlias,
    ) -> Result<(), SessionError> {
        if handle.alias() == Some(&alias) {
            return Ok(());
        }
        if let Some((other, _)) = self.resolve(alias.as_str())?
            && other != handle.id()
        {
            return Err(SessionError::AliasInUse {
                name: alias.to_string(),
            });
        }
        if self.state_path(handle.id()).is_file() {
            self.write_alias(&alias, handle.id())?;
            if let Some(old) = handle.alias()
                && self.read_alias(old) == Some(handle.id())
            {
                let path = self.alias_path(old);
                std::fs::remove_file(&path).map_err(|e| io_error(&path, &e))?;
            }
        }
        handle.set_alias(alias);
        Ok(())
    }

    /// See [`SessionStore::delete`].
    pub fn delete(&self, id: SessionId) -> Result<(), SessionError> {
        let dir = self.session_dir(id);
        let existed = dir.is_dir();
        if existed {
            std::fs::remove_dir_all(&dir).map_err(|e| io_error(&dir, &e))?;
        }
        let mut named = false;
        for (alias, target) in self.aliases() {
            if target == Some(id) {
                named = true;
                let _ = std::fs::remove_file(self.alias_path(&alias));
                let _ = std::fs::remove_file(self.legacy_path(&alias));
            }
        }
        self.live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&id);
        if !existed && !named {
            return Err(SessionError::NotFound {
                name: id.to_string(),
            });
        }
        Ok(())
    }

    /// See [`SessionStore::is_stored`].
    pub fn is_stored(&self, id: SessionId) -> bool {
        self.state_path(id).is_file()
    }

    /// See [`SessionStore::reload`].
    pub fn reload(
        &self,
        id: SessionId,
        known: Option<&Version>,
    ) -> Result<Option<(Version, Session)>, SessionError> {
        let path = self.state_path(id);
        let text =
            match crate::atomic_file::read_regular_text(&path, crate::atomic_file::MAX_OWN_FILE) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(io_error(&path, &e)),
            };
        let key = content_key(text.as_bytes());
        if known == Some(&key) {
            return Ok(None);
        }
        let session = self.parse_keyed(id, &path, &text, &key)?;
        Ok(Some((key, session)))
    }

    /// The lock file that serialises writers of this session (see [`super::lock`]): the
    /// session's own, or its name's while it has not been written.
    pub fn lock_path(&self, handle: &SessionHandle) -> PathBuf {
        match handle.alias() {
            Some(alias) if !self.is_stored(handle.id()) => self.alias_lock_path(alias),
            _ => self.session_dir(handle.id()).join(LOCK_FILE),
        }
    }

    /// See [`SessionStore::open_key`].
    pub fn open_key(&self, key: &str) -> Result<Option<SessionHandle>, SessionError> {
        match self.resolve(key)? {
            Some((id, alias)) => self.open(id, alias).map(Some),
            None => Ok(None),
        }
    }

    /// See [`SessionStore::delete_key`].
    pub fn delete_key(&self, key: &str) -> Result<(), SessionError> {
        let (id, _) = self.resolve(key)?.ok_or_else(|| SessionError::NotFound {
            name: key.to_string(),
        })?;
        self.delete(id)
    }

    /// See [`SessionStore::list`].
    pub fn list(&self) -> Vec<SessionMeta> {
        let modified = |path: &Path| {
            std::fs::metadata(path)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH)
        };
        let mut out = Vec::new();
        let mut named_ids = Vec::new();
        for (alias, id) in self.aliases() {
            let Some(id) = id.filter(|id| self.state_path(*id).is_file()) else {
                continue;
            };
            named_ids.push(id);
            out.push(SessionMeta {
                id: Some(id),
                last_modified: modified(&self.state_path(id)),
                is_autoname: alias.is_autoname(),
                alias: Some(alias),
            });
        }
        for name in file_names(&self.root.join("by-id"), None) {
            if let Some(id) = SessionId::parse(&name)
                && !named_ids.contains(&id)
                && self.state_path(id).is_file()
            {
                out.push(SessionMeta {
                    id: Some(id),
                    alias: None,
                    last_modified: modified(&self.state_path(id)),
                    is_autoname: false,
                });
            }
        }
        for (prefix, dir) in [("", self.root.clone()), ("_/", self.root.join("_"))] {
            for stem in file_names(&dir, Some("yaml")) {
                let Ok(alias) = SessionAlias::new(format!("{prefix}{stem}")) else {
                    continue;
                };
                if out.iter().any(|m| m.alias.as_ref() == Some(&alias))
                    || self.migrated_marker(&alias).exists()
                {
                    continue;
                }
                out.push(SessionMeta {
                    id: None,
                    last_modified: modified(&self.legacy_path(&alias)),
                    is_autoname: alias.is_autoname(),
                    alias: Some(alias),
                });
            }
        }
        out.sort_by_key(SessionMeta::name);
        out
    }
}

#[async_trait::async_trait]
impl SessionStore for FileSessionStore {
    async fn resolve(
        &self,
        key: &str,
    ) -> Result<Option<(SessionId, Option<SessionAlias>)>, SessionError> {
        FileSessionStore::resolve(self, key)
    }

    async fn open(
        &self,
        id: SessionId,
        alias: Option<SessionAlias>,
    ) -> Result<SessionHandle, SessionError> {
        FileSessionStore::open(self, id, alias)
    }

    async fn create(
        &self,
        alias: Option<SessionAlias>,
        initial: Session,
    ) -> Result<SessionHandle, SessionError> {
        FileSessionStore::create(self, alias, initial)
    }

    async fn save(&self, handle: &SessionHandle) -> Result<Stored, SessionError> {
        let (path, version) = FileSessionStore::save(self, handle)?;
        Ok(Stored {
            version,
            location: path.display().to_string(),
        })
    }

    async fn rename(
        &self,
        handle: &mut SessionHandle,
        alias: SessionAlias,
    ) -> Result<(), SessionError> {
        FileSessionStore::rename(self, handle, alias)
    }

    async fn delete(&self, id: SessionId) -> Result<(), SessionError> {
        FileSessionStore::delete(self, id)
    }

    async fn list(&self) -> Result<Vec<SessionMeta>, SessionError> {
        Ok(FileSessionStore::list(self))
    }

    async fn stored_bytes(&self, meta: &SessionMeta) -> u64 {
        let Some(id) = meta.id else { return 0 };
        let Ok(entries) = std::fs::read_dir(self.session_dir(id)) else {
            return 0;
        };
        entries
            .flatten()
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum()
    }
    async fn is_stored(&self, id: SessionId) -> bool {
        FileSessionStore::is_stored(self, id)
    }

    async fn reload(
        &self,
        id: SessionId,
        known: Option<&Version>,
    ) -> Result<Option<(Version, Session)>, SessionError> {
        FileSessionStore::reload(self, id, known)
    }

    async fn try_lock(&self, handle: &SessionHandle) -> Result<Option<SessionLease>, SessionError> {
        let path = self.lock_path(handle);
        match SessionLock::try_acquire(&path) {
            Ok(lock) => Ok(lock.map(SessionLease::holding)),
            Err(e) => Err(lock_error(&path, &e)),
        }
    }

    async fn lock(
        &self,
        handle: &SessionHandle,
        cancel: &CancellationToken,
    ) -> Result<SessionLease, SessionError> {
        let path = self.lock_path(handle);
        let shown = path.clone();
        // If the wait is abandoned, the thread still takes the lock once it is free and
        // drops it again at once.
        let wait = tokio::task::spawn_blocking(move || SessionLock::acquire(&path));
        let joined = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                crate::signals::leave_blocked_threads();
                return Err(SessionError::Cancelled);
            }
            joined = wait => joined,
        };
        match joined {
            Ok(Ok(lock)) => Ok(SessionLease::holding(lock)),
            Ok(Err(e)) => Err(lock_error(&shown, &e)),
            Err(e) => Err(lock_error(&shown, &e)),
        }
    }
}

fn lock_error(path: &Path, e: &dyn std::fmt::Display) -> SessionError {
    SessionError::Io {
        path: path.to_path_buf(),
        message: format!("cannot lock the session: {e}"),
    }
}

/// Plain files in `dir` (not hidden); with `ext`, only those with that extension,
/// returned without it. Directories are included when `ext` is `None`.
fn file_names(dir: &Path, ext: Option<&str>) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        match ext {
            Some(ext) => {
                let is_file = entry.file_type().is_ok_and(|t| t.is_file());
                if let Some(stem) = name.strip_suffix(&format!(".{ext}"))
                    && is_file
                {
                    names.push(stem.to_string());
                }
            }
            None => {
                if name != "_" {
                    names.push(name);
                }
            }
        }
    }
    names
}

fn io_error(path: &Path, e: &dyn std::fmt::Display) -> SessionError {
    SessionError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Reads and parses a session file without opening it (to check an edit).
pub fn parse_file(path: &Path) -> Result<Session, SessionError> {
    let text = crate::atomic_file::read_regular_text(path, crate::atomic_file::MAX_OWN_FILE)
        .map_err(|e| io_error(path, &e))?;
    parse_yaml(path, &text)
}

/// Parses a session file's text (`path` names it in errors).
pub(crate) fn parse_yaml(path: &Path, text: &str) -> Result<Session, SessionError> {
    let text = crate::config::yaml::strip_bom(text);
    if text.trim().is_empty() {
        return Ok(Session::default());
    }
    crate::config::yaml::check_nesting(text).map_err(|deep| SessionError::Corrupt {
        path: path.to_path_buf(),
        line: deep.line,
        column: deep.column,
        message: deep.message(),
    })?;
    loki_wire::session_file::from_yaml(text).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        let message = e.to_string();
        SessionError::Corrupt {
            path: path.to_path_buf(),
            line,
            column,
            message: message
                .split(" at line ")
                .next()
                .unwrap_or(&message)
                .to_string(),
        }
    })
}

/// Identifies one exact YAML text (its length and a 64-bit hash).
fn content_key(bytes: &[u8]) -> Version {
    let hash = loki_wire::session_file::content_hash(bytes);
    Version::new(format!("{}-{hash:016x}", bytes.len()))
}

/// The cache file is the content key on the first line, then the session as JSON.
fn read_cache(path: &Path, key: &Version) -> Option<Session> {
    let bytes = std::fs::read(path).ok()?;
    let newline = bytes.iter().position(|&b| b == b'\n')?;
    if bytes[..newline] != *key.as_str().as_bytes() {
        return None;
    }
    loki_wire::session_file::from_json(&bytes[newline + 1..]).ok()
}

fn write_cache(path: &Path, key: &Version, session: &Session) {
    let mut bytes = key.as_str().as_bytes().to_vec();
    bytes.push(b'\n');
    let written = loki_wire::session_file::write_json(&mut bytes, session)
        .map_err(|e| e.to_string())
        .and_then(|()| {
            crate::atomic_file::write_atomic(path, &bytes, true).map_err(|e| e.to_string())
        });
    if let Err(e) = written {
        let _ = std::fs::remove_file(path);
        tracing::debug!("no session cache at {}: {e}", path.display());
    }
}

/// Removes temporary files a crashed save left behind (old enough not to be in use).
fn sweep_stale_temp_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_TMP);
        if name.to_string_lossy().ends_with(".tmp") && stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loki_wire::message::{Message, Role};

    fn store() -> (tempfile::TempDir, FileSessionStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = FileSessionStore::new(dir.path().join("sessions"));
        (dir, store)
    }

    fn alias(name: &str) -> SessionAlias {
        SessionAlias::new(name).unwrap()
    }

    /// A new session named `name`, not saved yet.
    fn created(store: &FileSessionStore, name: &str) -> SessionHandle {
        store.create(Some(alias(name)), Session::default()).unwrap()
    }

    /// Appends a message to the session, as the conversation holding it does.
    fn push(handle: &SessionHandle, role: Role, text: impl Into<String>) {
        handle
            .lock()
            .get_mut()
            .messages
            .push(Message::text(role, text));
    }

    #[test]
    fn create_save_open_by_alias_and_id() {
        let (_dir, store) = store();
        let handle = created(&store, "work");
        push(&handle, Role::User, "hi");
        assert!(handle.is_dirty());
        let (path, version) = store.save(&handle).unwrap();
        assert_eq!(handle.version(), Some(version));
        assert!(!handle.is_dirty());
        assert!(path.ends_with(format!("by-id/{}/state.yaml", handle.id())));
        let alias_file = store.root.join("by-name/work");
        assert_eq!(
            std::fs::read_to_string(alias_file).unwrap().trim(),
            handle.id().to_string()
        );
        let id = handle.id();
        drop(handle);
        let by_name = store.open_key("work").unwrap().unwrap();
        assert_eq!(by_name.id(), id);
        assert_eq!(by_name.lock().get().messages.len(), 1);
        let by_id = store.open_key(&id.to_string()).unwrap().unwrap();
        assert_eq!(by_id.alias(), Some(&alias("work")));
        assert!(store.open_key("missing").unwrap().is_none());
        assert!(matches!(
            store.create(Some(alias("work")), Session::default()),
            Err(SessionError::AliasInUse { .. })
        ));
    }

    #[test]
    fn legacy_files_are_migrated_lazily_and_kept() {
        let (_dir, store) = store();
        std::fs::create_dir_all(store.root.join("_")).unwrap();
        let legacy =
            "model: a:b\nagent_variables:\n  x: 1\nmessages:\n- role: user\n  content: hi\n";
        std::fs::write(store.root.join("old.yaml"), legacy).unwrap();
        std::fs::write(store.root.join("_/20260101T000000-x.yaml"), legacy).unwrap();
        let listed: Vec<_> = store.list().iter().map(SessionMeta::name).collect();
        assert_eq!(listed, ["_/20260101T000000-x", "old"]);
        assert!(store.list()[0].is_autoname && store.list()[0].id.is_none());
        assert!(
            !store.root.join("by-name").exists(),
            "listing writes nothing"
        );

        let handle = store.open_key("old").unwrap().unwrap();
        assert_eq!(handle.lock().get().model.as_deref(), Some("a:b"));
        push(&handle, Role::Assistant, "hello");
        store.save(&handle).unwrap();
        let saved = std::fs::read_to_string(store.state_path(handle.id())).unwrap();
        assert!(saved.contains("agent_variables"), "{saved}");
        assert_eq!(
            std::fs::read_to_string(store.root.join("old.yaml")).unwrap(),
            legacy
        );
        // Idempotent: the alias now wins over the legacy file.
        assert_eq!(store.resolve("old").unwrap().unwrap().0, handle.id());
        let listed = store.list();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[1].id, Some(handle.id()));

        // Renamed away, the old name does not bring the legacy file back.
        let mut renamed = store.open_key("old").unwrap().unwrap();
        store.rename(&mut renamed, alias("newer")).unwrap();
        assert!(store.resolve("old").unwrap().is_none());
        let names: Vec<_> = store.list().iter().map(SessionMeta::name).collect();
        assert_eq!(names, ["_/20260101T000000-x", "newer"]);
        store.rename(&mut renamed, alias("old")).unwrap();

        store.delete_key("old").unwrap();
        assert!(!store.root.join("old.yaml").exists());
        assert!(store.resolve("old").unwrap().is_none());
        assert_eq!(store.list().len(), 1);
    }

    #[test]
    fn corrupt_files_are_reported_and_left_alone() {
        let (_dir, store) = store();
        std::fs::create_dir_all(&store.root).unwrap();
        let bad = "messages: [\n  - role: user\n";
        std::fs::write(store.root.join("bad.yaml"), bad).unwrap();
        let err = store.open_key("bad").unwrap_err().to_string();
        assert!(
            err.contains("bad.yaml:") && err.contains("not changed"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(store.root.join("bad.yaml")).unwrap(),
            bad
        );
        assert!(!store.root.join("by-name/bad").exists());

        let handle = created(&store, "ok");
        store.save(&handle).unwrap();
        let id = handle.id();
        drop(handle);
        std::fs::write(store.state_path(id), bad).unwrap();
        let err = store.open_key("ok").unwrap_err().to_string();
        assert!(err.contains("state.yaml:"), "{err}");
        assert_eq!(std::fs::read_to_string(store.state_path(id)).unwrap(), bad);
    }

    #[test]
    fn a_corrupt_alias_file_is_an_error_naming_it_not_a_new_session() {
        let (_dir, store) = store();
        std::fs::create_dir_all(store.root.join("by-name")).unwrap();
        std::fs::write(store.root.join("by-name/x"), "not a uuid").unwrap();
        let err = store.resolve("x").unwrap_err().to_string();
        assert!(
            err.contains("by-name/x") && err.contains("damaged"),
            "{err}"
        );
        assert!(store.list().is_empty());
    }

    #[test]
    fn rename_moves_the_alias_and_keeps_the_id() {
        let (_dir, store) = store();
        let mut handle = created(&store, "a");
        store.save(&handle).unwrap();
        let other = created(&store, "b");
        store.save(&other).unwrap();
        assert!(matches!(
            store.rename(&mut handle, alias("b")),
            Err(SessionError::AliasInUse { .. })
        ));
        store.rename(&mut handle, alias("c")).unwrap();
        // A stale handle still named `b` cannot take the name back from its owner.
        let stale = store.create(None, Session::default()).unwrap();
        let mut stale = stale;
        stale.set_alias(alias("b"));
        assert!(matches!(
            store.save(&stale),
            Err(SessionError::AliasInUse { .. })
        ));
        assert!(store.resolve("a").unwrap().is_none());
        assert_eq!(store.resolve("c").unwrap().unwrap().0, handle.id());
        let names: Vec<_> = store.list().iter().map(SessionMeta::name).collect();
        assert_eq!(names, ["b", "c"]);
    }

    #[test]
    fn concurrent_writers_do_not_lose_updates() {
        let (_dir, store) = store();
        let handle = created(&store, "busy");
        store.save(&handle).unwrap();
        let store = Arc::new(store);
        let threads: Vec<_> = (0..100)
            .map(|i| {
                let store = Arc::clone(&store);
                std::thread::spawn(move || {
                    let handle = store.open_key("busy").unwrap().unwrap();
                    let mut guard = handle.lock();
                    let messages = &mut guard.get_mut().messages;
                    messages.push(Message::text(Role::User, format!("q{i}")));
                    messages.push(Message::text(Role::Assistant, format!("a{i}")));
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(handle.lock().get().messages.len(), 200);
        store.save(&handle).unwrap();
    }

    #[test]
    fn reload_reports_only_what_changed_and_locks_follow_the_name_until_saved() {
        let (_dir, store) = store();
        let handle = created(&store, "shared");
        let by_name = store.lock_path(&handle);
        assert!(by_name.ends_with("by-name/.locks/shared"), "{by_name:?}");
        assert!(store.reload(handle.id(), None).unwrap().is_none());
        store.save(&handle).unwrap();
        let by_id = store.lock_path(&handle);
        assert_eq!(by_id, store.session_dir(handle.id()).join(LOCK_FILE));
        let key = handle.version().unwrap();
        assert!(store.reload(handle.id(), Some(&key)).unwrap().is_none());

        // Another process (a second store over the same directory) appends.
        let other = FileSessionStore::new(store.root.clone());
        let theirs = other.open_key("shared").unwrap().unwrap();
        push(&theirs, Role::User, "theirs");
        other.save(&theirs).unwrap();
        let (new_key, stored) = store.reload(handle.id(), Some(&key)).unwrap().unwrap();
        assert_ne!(new_key, key);
        assert_eq!(stored.messages.len(), 1);
        assert!(store.reload(handle.id(), Some(&new_key)).unwrap().is_none());
    }

    #[test]
    fn large_sessions_load_from_the_cache_until_the_yaml_changes() {
        let (_dir, store) = store();
        let handle = created(&store, "big");
        for i in 0..400 {
            let text = format!("message {i} {}", "x".repeat(200));
            push(&handle, Role::User, text);
        }
        store.save(&handle).unwrap();
        let id = handle.id();
        let expected = handle.lock().get().clone();
        drop(handle);
        let cache = store.session_dir(id).join(CACHE_FILE);
        assert!(cache.is_file());
        // A cache that does not match its key is never used: poison it and edit the YAML.
        let yaml = std::fs::read_to_string(store.state_path(id)).unwrap();
        let edited = yaml.replace("message 0 ", "edited 0 ");
        std::fs::write(store.state_path(id), &edited).unwrap();
        let reloaded = store.open_key("big").unwrap().unwrap();
        assert!(matches!(
            &reloaded.lock().get().messages[0].content,
            loki_wire::message::Content::Text(t) if t.starts_with("edited 0")
        ));
        drop(reloaded);
        // The miss rewrote the cache for the edited text; a hit returns the same session.
        let hit = read_cache(&cache, &content_key(edited.as_bytes())).unwrap();
        assert_eq!(hit.messages.len(), expected.messages.len());
        assert!(read_cache(&cache, &content_key(yaml.as_bytes())).is_none());
    }

    #[test]
    fn stale_temporary_files_are_swept() {
        let (_dir, store) = store();
        let handle = store.create(None, Session::default()).unwrap();
        store.save(&handle).unwrap();
        let dir = store.session_dir(handle.id());
        let stray = dir.join(".state.yaml.1.0.tmp");
        let fresh = dir.join(".state.yaml.2.0.tmp");
        std::fs::write(&stray, "x").unwrap();
        std::fs::write(&fresh, "x").unwrap();
        let old = SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&stray)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let id = handle.id();
        drop(handle);
        store.open(id, None).unwrap();
        assert!(!stray.exists());
        assert!(fresh.exists(), "a save in progress is left alone");
        assert_eq!(store.list()[0].name(), id.to_string());
    }
}
