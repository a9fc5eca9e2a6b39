//! Checkpoints: before a turn's first change to a file through loki's tools (`fs_write`,
//! `fs_edit`, `fs_patch`, `fs_rm` — a sub-agent's included), the file's content is kept,
//! content-addressed under `<cache>/checkpoints/objects`, and the turn's record (its
//! number, time, prompt, where the conversation stood, and each file's content before
//! and after) is appended to the journal of its session (or conversation). Rewinding
//! undoes turns: files get their earlier content back, the conversation is cut to
//! before the turn. The objects are bounded (`checkpoint_max_mb`): the oldest go first.
//! Changes made by shell commands are not tracked.

pub mod diff;
pub mod rewind;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// How the journal key of a session begins (others are kept in memory).
pub const SESSION_KEY: &str = "session-";

/// Files larger than this are not kept (a rewind cannot restore them, and says so).
const MAX_FILE: u64 = 16 * 1024 * 1024;

/// Most files one `fs_rm` of a directory records.
const MAX_FILES_PER_DELETE: usize = 2000;

/// One file a turn changed: its content before the turn's first change and after its
/// last, by hash (`None`: the file did not exist; `Some("")` never occurs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Absolute path.
    pub path: PathBuf,
    /// Before the turn.
    pub before: Option<String>,
    /// After the turn.
    pub after: Option<String>,
    /// The file was too large (or unreadable) to keep: it cannot be restored.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unkept: bool,
    /// Its permission bits before the turn (Unix), given back with its content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
}

/// One turn that changed files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnRecord {
    /// 1 for the conversation's first prompt.
    pub turn: usize,
    /// When it began (RFC 3339).
    pub time: String,
    /// The prompt's first line.
    pub prompt: String,
    /// How many messages the conversation had before it.
    pub messages_before: usize,
    /// The files it changed, in the order first changed.
    pub files: Vec<FileChange>,
}

/// Where checkpoints are kept.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    max_bytes: u64,
}

impl Store {
    /// Checkpoints under `cache_dir/checkpoints`, objects bounded by `max_bytes`.
    pub fn new(cache_dir: &Path, max_bytes: u64) -> Self {
        Self {
            dir: cache_dir.join("checkpoints"),
            max_bytes,
        }
    }

    fn object(&self, hash: &str) -> PathBuf {
        self.dir.join("objects").join(hash)
    }

    /// Keeps `bytes`; their hash.
    pub fn put(&self, bytes: &[u8]) -> std::io::Result<String> {
        let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
        let hash: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        let path = self.object(&hash);
        if !path.exists() {
            std::fs::create_dir_all(self.dir.join("objects"))?;
            crate::atomic_file::write_atomic(&path, bytes, true)?;
        }
        Ok(hash)
    }

    /// The bytes kept under `hash`.
    pub fn get(&self, hash: &str) -> std::io::Result<Vec<u8>> {
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not a checkpoint hash",
            ));
        }
        crate::atomic_file::read_regular(&self.object(hash), MAX_FILE)
    }

    /// The hash of what `path` holds now (`None`: it does not exist); `Err` when it
    /// cannot be read or is too large to keep.
    fn current(&self, path: &Path, keep: bool) -> Result<Option<String>, ()> {
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(_) => Err(()),
            Ok(meta) if !meta.is_file() || meta.len() > MAX_FILE => Err(()),
            Ok(_) => {
                let bytes = crate::atomic_file::read_regular(path, MAX_FILE).map_err(|_| ())?;
                if keep {
                    self.put(&bytes).map(Some).map_err(|_| ())
                } else {
                    let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
                    Ok(Some(
                        digest.as_ref().iter().map(|b| format!("{b:02x}")).collect(),
                    ))
                }
            }
        }
    }

    fn journal(&self, key: &str) -> PathBuf {
        let safe = crate::config::env::file_safe(key);
        self.dir.join("journals").join(format!("{safe}.jsonl"))
    }

    /// The turns of `key` that changed files, oldest first.
    pub fn records(&self, key: &str) -> Vec<TurnRecord> {
        crate::atomic_file::read_regular_text(&self.journal(key), crate::atomic_file::MAX_OWN_FILE)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Replaces the journal of `key` with `records`.
    pub fn write_records(&self, key: &str, records: &[TurnRecord]) -> std::io::Result<()> {
        let path = self.journal(key);
        if records.is_empty() {
            return match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            };
        }
        std::fs::create_dir_all(self.dir.join("journals"))?;
        let mut text = String::new();
        for record in records {
            text.push_str(&serde_json::to_string(record).map_err(std::io::Error::other)?);
            text.push('\n');
        }
        crate::atomic_file::write_atomic(&path, text.as_bytes(), true)
    }

    /// Appends `record` to the journal of `key`: one line, no rewrite (a turn must not
    /// pay for reading and rewriting the whole journal).
    pub fn append_record(&self, key: &str, record: &TurnRecord) -> std::io::Result<()> {
        use std::io::Write;
        std::fs::create_dir_all(self.dir.join("journals"))?;
        let mut line = serde_json::to_string(record).map_err(std::io::Error::other)?;
        line.push('\n');
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options.open(self.journal(key))?.write_all(line.as_bytes())
    }

    /// Drops the oldest objects while they take more than the bound.
    pub fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(self.dir.join("objects")) else {
            return;
        };
        let mut objects: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
            .flatten()
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        let mut total: u64 = objects.iter().map(|o| o.1).sum();
        if total <= self.max_bytes {
            return;
        }
        objects.sort();
        for (_, len, path) in objects {
            if total <= self.max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(len);
            }
        }
    }
}

/// The permission bits of `path` (Unix), when it exists.
fn permission_bits(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// A rewind written down before it starts, so one that was interrupted (killed, the
/// disk full) is finished by the next: what it undoes and what the journal keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingRewind {
    /// The turns it undoes, oldest first.
    pub undone: Vec<TurnRecord>,
    /// The journal once it is done.
    pub remaining: Vec<TurnRecord>,
    /// Files are restored.
    pub files: bool,
    /// The conversation is cut to before the first undone turn.
    pub conversation: bool,
}

impl Store {
    fn pending_path(&self, key: &str) -> PathBuf {
        self.journal(key).with_extension("rewind.json")
    }

    /// The rewind of `key` that was started and not finished, if any.
    pub fn pending_rewind(&self, key: &str) -> Option<PendingRewind> {
        let text = crate::atomic_file::read_regular_text(
            &self.pending_path(key),
            crate::atomic_file::MAX_OWN_FILE,
        )
        .ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes down the rewind about to start.
    pub fn begin_rewind(&self, key: &str, pending: &PendingRewind) -> std::io::Result<()> {
        let text = serde_json::to_vec(pending).map_err(std::io::Error::other)?;
        crate::atomic_file::write_atomic(&self.pending_path(key), &text, true)
    }

    /// The rewind of `key` is done.
    pub fn end_rewind(&self, key: &str) -> std::io::Result<()> {
        match std::fs::remove_file(self.pending_path(key)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// The turn being recorded: its journal key, its record, and where each path is in it.
type Open = Option<(String, TurnRecord, BTreeMap<PathBuf, usize>)>;

/// Records the files a conversation tree's turn changes. Shared by the tree: a
/// sub-agent's changes belong to the turn of the conversation the user prompted.
#[derive(Debug)]
pub struct Recorder {
    store: Store,
    turn: Mutex<Open>,
    /// The journal of a conversation without a session: kept in memory, it ends with
    /// the process (the contents it points to are in the store).
    unsaved: Mutex<Vec<TurnRecord>>,
}

impl Recorder {
    /// A recorder keeping checkpoints in `store`.
    pub fn new(store: Store) -> Self {
        Self {
            store,
            turn: Mutex::new(None),
            unsaved: Mutex::new(Vec::new()),
        }
    }

    /// The turns journaled under `key` (a session's `session-<id>`, else the
    /// conversation's, kept in memory), oldest first.
    pub fn records(&self, key: &str) -> Vec<TurnRecord> {
        if key.starts_with(SESSION_KEY) {
            self.store.records(key)
        } else {
            self.unsaved
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone()
        }
    }

    /// Replaces the journal of `key`.
    pub fn write_records(&self, key: &str, records: &[TurnRecord]) -> std::io::Result<()> {
        if key.starts_with(SESSION_KEY) {
            return self.store.write_records(key, records);
        }
        *self
            .unsaved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = records.to_vec();
        Ok(())
    }

    /// Where it keeps them.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// A turn begins: changes from now on are its own, kept under `key`.
    pub fn begin(&self, key: &str, turn: usize, prompt: &str, messages_before: usize) {
        // Known secrets never reach the journal.
        let prompt = loki_wire::secrets::redact(prompt);
        let record = TurnRecord {
            turn,
            time: crate::role::SystemVars::now_rfc3339(),
            prompt: prompt
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or_default()
                .chars()
                .take(100)
                .collect(),
            messages_before,
            files: Vec::new(),
        };
        *self.lock() = Some((key.to_string(), record, BTreeMap::new()));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.turn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `path` is about to change: its content is kept, if this is the turn's first
    /// change to it. Nothing happens outside a turn.
    pub fn before_change(&self, path: &Path) {
        let mut guard = self.lock();
        let Some((_, record, seen)) = guard.as_mut() else {
            return;
        };
        if seen.contains_key(path) {
            return;
        }
        let (before, unkept) = match self.store.current(path, true) {
            Ok(hash) => (hash, false),
            Err(()) => (None, true),
        };
        seen.insert(path.to_path_buf(), record.files.len());
        record.files.push(FileChange {
            path: path.to_path_buf(),
            before,
            after: None,
            unkept,
            mode: permission_bits(path),
        });
    }

    /// Everything below directory `dir` is about to be deleted.
    pub fn before_delete_tree(&self, dir: &Path) {
        for entry in walkdir::WalkDir::new(dir)
            .follow_links(false)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .take(MAX_FILES_PER_DELETE)
        {
            self.before_change(entry.path());
        }
    }

    /// `path` changed: what it holds now is the turn's "after".
    pub fn after_change(&self, path: &Path) {
        let mut guard = self.lock();
        let Some((_, record, seen)) = guard.as_mut() else {
            return;
        };
        let Some(&i) = seen.get(path) else {
            return;
        };
        let after = self.store.current(path, false).ok().flatten();
        record.files[i].after = after;
    }

    /// The turn ended: its record is appended to the journal (every turn is, so a rewind
    /// can cut the conversation before any of them); returned when it changed files.
    pub fn finish(&self) -> Option<TurnRecord> {
        let (key, record, _) = self.lock().take()?;
        let written = if key.starts_with(SESSION_KEY) {
            self.store.append_record(&key, &record)
        } else {
            self.unsaved
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(record.clone());
            Ok(())
        };
        if let Err(e) = written {
            tracing::warn!("cannot write the checkpoint journal: {e}");
        }
        if record.files.is_empty() {
            return None;
        }
        self.store.prune();
        Some(record)
    }
}
