//! Undoing turns: which files a rewind restores, which of them were changed since by
//! someone else (not overwritten without asking), and putting their content back.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Store, TurnRecord};

/// Why a rewind cannot be done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewindError {
    /// No turn to undo.
    #[error("there is no turn to rewind (checkpoints are kept from the first change a turn makes)")]
    Nothing,
    /// Zero turns asked for: turns count from 1.
    #[error("0 is not a number of turns to undo; turns count from 1 (the last turn is 1)")]
    ZeroTurns,
    /// The conversation no longer holds the turn as it was (compressed or cleared
    /// since), so it cannot be cut back to before it; the files alone still can be.
    #[error(
        "the conversation no longer holds turn {turn} as it was (it was compressed or cleared since), so it cannot be cut back to before it"
    )]
    ConversationChanged {
        /// The oldest turn the rewind would undo.
        turn: usize,
    },
    /// Files changed after loki's turn, by someone else.
    #[error("changed since the turn, not overwritten: {}", .0.join(", "))]
    ChangedSince(Vec<String>),
    /// Content a rewind needs is no longer kept (pruned by `checkpoint_max_mb`).
    #[error("nothing was changed: the content of {} is no longer kept (checkpoint_max_mb pruned it)", .0.join(", "))]
    Missing(Vec<String>),
    /// A file could not be written back.
    #[error("cannot restore {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
}

/// One file a rewind puts back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restoring {
    /// The content it gets back (`None`: it is removed).
    pub before: Option<String>,
    /// What loki left there (to see whether someone changed it since).
    pub after: Option<String>,
    /// It was too large or unreadable to keep.
    pub unkept: bool,
    /// Its permission bits before.
    pub mode: Option<u32>,
}

/// The files undoing `records` (oldest first) would restore.
pub fn files_of(records: &[TurnRecord]) -> BTreeMap<PathBuf, Restoring> {
    let mut files: BTreeMap<PathBuf, Restoring> = BTreeMap::new();
    for record in records {
        for change in &record.files {
            files
                .entry(change.path.clone())
                .and_modify(|f| {
                    f.after = change.after.clone();
                    f.unkept |= change.unkept;
                })
                .or_insert(Restoring {
                    before: change.before.clone(),
                    after: change.after.clone(),
                    unkept: change.unkept,
                    mode: change.mode,
                });
        }
    }
    files
}

/// Files changed since loki's turn (their content is not what the turn left).
pub fn changed_since(store: &Store, records: &[TurnRecord]) -> Vec<String> {
    files_of(records)
        .into_iter()
        .filter(|(path, f)| store.current(path, false).ok().flatten() != f.after)
        .map(|(path, _)| path.display().to_string())
        .collect()
}

/// What must hold before a rewind touches any file: nobody changed the files since the
/// turns (unless `force`), and every content it needs is still kept.
pub fn preflight(store: &Store, records: &[TurnRecord], force: bool) -> Result<(), RewindError> {
    if !force {
        let changed = changed_since(store, records);
        if !changed.is_empty() {
            return Err(RewindError::ChangedSince(changed));
        }
    }
    let missing: Vec<String> = files_of(records)
        .into_iter()
        .filter(|(_, f)| !f.unkept && f.before.as_ref().is_some_and(|h| store.get(h).is_err()))
        .map(|(path, _)| path.display().to_string())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(RewindError::Missing(missing))
    }
}

/// Puts the files of `records` back as they were before the first of them — content and
/// permissions; one line per file (`restored a.rs`, `removed new.rs`, `not restored
/// …`). Unless `force`, refuses when one was changed since. Checks first that every
/// content it needs is still kept, so it never stops half way for want of one.
pub fn restore(
    store: &Store,
    records: &[TurnRecord],
    force: bool,
) -> Result<Vec<String>, RewindError> {
    preflight(store, records, force)?;
    let files = files_of(records);
    let mut lines = Vec::new();
    for (path, file) in files {
        let shown = path.display().to_string();
        if file.unkept {
            lines.push(format!(
                "not restored (too large or unreadable when changed): {shown}"
            ));
            continue;
        }
        let io = |e: std::io::Error| RewindError::Io {
            path: shown.clone(),
            message: e.to_string(),
        };
        match file.before {
            Some(hash) => {
                let bytes = store.get(&hash).map_err(io)?;
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(io)?;
                }
                match file.mode {
                    Some(mode) => crate::atomic_file::write_atomic_with_mode(&path, &bytes, mode),
                    None => crate::atomic_file::write_atomic(&path, &bytes, false),
                }
                .map_err(io)?;
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
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
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
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&a).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "the mode came back");
        }
        assert!(!b.exists());
    }
}
