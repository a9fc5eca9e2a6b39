//! Undoing turns: which files a rewind restores, which of them were changed since by
//! someone else (not overwritten without asking), and putting their content back.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Store, TurnRecord};

/// What a rewind puts back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restore {
    /// Files and the conversation.
    Both,
    /// Only the files.
    Files,
    /// Only the conversation.
    Conversation,
}

impl Restore {
    /// `both`, `files` or `conversation`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "both" | "" => Some(Self::Both),
            "files" => Some(Self::Files),
            "conversation" | "messages" => Some(Self::Conversation),
            _ => None,
        }
    }

    /// Whether files are restored.
    pub fn files(self) -> bool {
        self != Self::Conversation
    }

    /// Whether the conversation is cut.
    pub fn conversation(self) -> bool {
        self != Self::Files
    }
}

/// Why a rewind cannot be done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewindError {
    /// No turn to undo.
    #[error("there is no turn to rewind (checkpoints are kept from the first change a turn makes)")]
    Nothing,
    /// Files changed after loki's turn, by someone else.
    #[error("changed since the turn, not overwritten: {}", .0.join(", "))]
    ChangedSince(Vec<String>),
    /// A file could not be written back.
    #[error("cannot restore {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
}

/// The files undoing `records` (oldest first) would restore: each path with the content
/// it gets back (`None`: it is removed) and what loki left there (to see whether someone
/// changed it since).
pub fn files_of(
    records: &[TurnRecord],
) -> BTreeMap<PathBuf, (Option<String>, Option<String>, bool)> {
    let mut files: BTreeMap<PathBuf, (Option<String>, Option<String>, bool)> = BTreeMap::new();
    for record in records {
        for change in &record.files {
            files
                .entry(change.path.clone())
                .and_modify(|f| {
                    f.1 = change.after.clone();
                    f.2 |= change.unkept;
                })
                .or_insert((change.before.clone(), change.after.clone(), change.unkept));
        }
    }
    files
}

/// Files changed since loki's turn (their content is not what the turn left).
pub fn changed_since(store: &Store, records: &[TurnRecord]) -> Vec<String> {
    files_of(records)
        .into_iter()
        .filter(|(path, (_, after, _))| store.current(path, false).ok().flatten() != *after)
        .map(|(path, _)| path.display().to_string())
        .collect()
}

/// Puts the files of `records` back as they were before the first of them; one line per
/// file (`restored a.rs`, `removed new.rs`, `cannot restore big.bin: …`). Unless `force`,
/// refuses when one was changed since.
pub fn restore(
    store: &Store,
    records: &[TurnRecord],
    force: bool,
) -> Result<Vec<String>, RewindError> {
    if !force {
        let changed = changed_since(store, records);
        if !changed.is_empty() {
            return Err(RewindError::ChangedSince(changed));
        }
    }
    let mut lines = Vec::new();
    for (path, (before, _, unkept)) in files_of(records) {
        let shown = path.display().to_string();
        if unkept {
            lines.push(format!(
                "not restored (too large or unreadable when changed): {shown}"
            ));
            continue;
        }
        let io = |e: std::io::Error| RewindError::Io {
            path: shown.clone(),
            message: e.to_string(),
        };
        match before {
            Some(hash) => {
                let bytes = store.get(&hash).map_err(io)?;
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(io)?;
                }
                crate::atomic_file::write_atomic(&path, &bytes, false).map_err(io)?;
                lines.push(format!("restored {shown}"));
            }
            None => match std::fs::remove_file(&path) {
                Ok(()) => lines.push(format!("removed {shown}")),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(e)),
            },
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::super::{Recorder, Store};
    use super::*;

    #[test]
    fn a_turn_is_undone_unless_someone_changed_its_files_since() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(&dir.path().join("cache"), 1 << 20);
        let recorder = Recorder::new(store.clone());
        let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        std::fs::write(&a, "one").unwrap();
        recorder.begin("session-s", 1, "change things", 0);
        recorder.before_change(&a);
        std::fs::write(&a, "two").unwrap();
        recorder.after_change(&a);
        recorder.before_change(&b);
        std::fs::write(&b, "new").unwrap();
        recorder.after_change(&b);
        let record = recorder.finish().expect("a record");
        assert_eq!(record.files.len(), 2);
        let records = store.records("session-s");
        assert_eq!(records, [record]);

        std::fs::write(&a, "edited by hand").unwrap();
        assert!(
            matches!(restore(&store, &records, false), Err(RewindError::ChangedSince(f)) if f.len() == 1)
        );
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "edited by hand");
        let lines = restore(&store, &records, true).unwrap();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one");
        assert!(!b.exists());
    }
}
