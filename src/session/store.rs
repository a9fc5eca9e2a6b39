//! Where sessions live. [`SessionStore`] is the interface the rest of loki uses;
//! [`YamlStore`] keeps one `<name>.yaml` per session in a directory.
//!
//! Writes go through [`crate::atomic_file`] (temp file + rename, mode 0600 because
//! conversations are private). A file that does not parse is reported with its path,
//! line and column and is never overwritten.

use std::path::{Path, PathBuf};

use super::Session;

/// A session that cannot be read, written or named.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The name would escape the sessions directory or is not a valid file name.
    #[error(
        "invalid session name `{name}`: use letters, digits, `-`, `_` and `.` (one `/` allowed)"
    )]
    InvalidName {
        /// The name.
        name: String,
    },
    /// The file is not valid session YAML; it is left untouched.
    #[error("{}:{line}:{column}: {message} (the file was not changed; fix or delete it)", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
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
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// No such session.
    #[error("no session named `{name}`")]
    NotFound {
        /// The name.
        name: String,
    },
}

/// Storage of sessions by name.
pub trait SessionStore: Send + Sync {
    /// Loads a session; `Ok(None)` when it does not exist.
    fn load(&self, name: &str) -> Result<Option<Session>, SessionError>;
    /// Saves a session atomically.
    fn save(&self, name: &str, session: &Session) -> Result<PathBuf, SessionError>;
    /// Session names, sorted.
    fn list(&self) -> Vec<String>;
    /// Deletes a session.
    fn delete(&self, name: &str) -> Result<(), SessionError>;
}

/// One YAML file per session in a directory.
#[derive(Debug, Clone)]
pub struct YamlStore {
    dir: PathBuf,
}

impl YamlStore {
    /// A store over `dir` (created on first save).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The file of a session.
    pub fn path(&self, name: &str) -> Result<PathBuf, SessionError> {
        validate_name(name)?;
        Ok(self.dir.join(format!("{name}.yaml")))
    }
}

/// Names are file names, optionally one sub-directory deep (`_/2026…`).
fn validate_name(name: &str) -> Result<(), SessionError> {
    let bad = || SessionError::InvalidName {
        name: name.to_string(),
    };
    let parts: Vec<&str> = name.split('/').collect();
    if name.is_empty() || parts.len() > 2 {
        return Err(bad());
    }
    for part in parts {
        let ok_chars = part
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' '));
        if part.is_empty() || part.starts_with('.') || !ok_chars {
            return Err(bad());
        }
    }
    Ok(())
}

impl SessionStore for YamlStore {
    fn load(&self, name: &str) -> Result<Option<Session>, SessionError> {
        let path = self.path(name)?;
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(SessionError::Io {
                    path,
                    message: e.to_string(),
                });
            }
        };
        if text.trim().is_empty() {
            return Ok(Some(Session::default()));
        }
        serde_yaml::from_str(&text).map(Some).map_err(|e| {
            let (line, column) = e
                .location()
                .map(|l| (l.line(), l.column()))
                .unwrap_or((0, 0));
            let message = e.to_string();
            SessionError::Corrupt {
                path,
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

    fn save(&self, name: &str, session: &Session) -> Result<PathBuf, SessionError> {
        let path = self.path(name)?;
        let io = |message: String| SessionError::Io {
            path: path.clone(),
            message,
        };
        let text = super::yaml_write::to_yaml(session).map_err(|e| io(e.to_string()))?;
        crate::atomic_file::write_atomic(&path, text.as_bytes(), true)
            .map_err(|e| io(e.to_string()))?;
        Ok(path)
    }

    fn list(&self) -> Vec<String> {
        let mut names = Vec::new();
        collect(&self.dir, "", &mut names);
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    let sub = entry.file_name().to_string_lossy().into_owned();
                    collect(&entry.path(), &format!("{sub}/"), &mut names);
                }
            }
        }
        names.sort();
        names
    }

    fn delete(&self, name: &str) -> Result<(), SessionError> {
        let path = self.path(name)?;
        std::fs::remove_file(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => SessionError::NotFound {
                name: name.to_string(),
            },
            _ => SessionError::Io {
                path,
                message: e.to_string(),
            },
        })
    }
}

fn collect(dir: &Path, prefix: &str, names: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let is_yaml = path.extension().and_then(|e| e.to_str()) == Some("yaml");
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if is_yaml && !stem.starts_with('.') && entry.file_type().is_ok_and(|t| t.is_file()) {
            names.push(format!("{prefix}{stem}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Message, Role};

    #[test]
    fn save_load_round_trip_keeps_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let store = YamlStore::new(dir.path().join("sessions"));
        std::fs::create_dir_all(dir.path().join("sessions")).unwrap();
        std::fs::write(
            dir.path().join("sessions/old.yaml"),
            "model: a:b\nagent_variables:\n  x: 1\nmessages:\n- role: user\n  content: hi\n",
        )
        .unwrap();
        let mut s = store.load("old").unwrap().unwrap();
        assert_eq!(s.model.as_deref(), Some("a:b"));
        s.messages.push(Message::text(Role::Assistant, "hello"));
        store.save("old", &s).unwrap();
        let text = std::fs::read_to_string(dir.path().join("sessions/old.yaml")).unwrap();
        assert!(text.contains("agent_variables"), "{text}");
        assert_eq!(store.load("old").unwrap().unwrap(), s);
        assert_eq!(store.list(), ["old"]);
        assert!(store.load("missing").unwrap().is_none());
    }

    #[test]
    fn corrupt_files_are_reported_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = YamlStore::new(dir.path().to_path_buf());
        std::fs::write(dir.path().join("bad.yaml"), "messages: [\n  - role: user\n").unwrap();
        let err = store.load("bad").unwrap_err().to_string();
        assert!(
            err.contains("bad.yaml:") && err.contains("not changed"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("bad.yaml")).unwrap(),
            "messages: [\n  - role: user\n"
        );
    }

    #[test]
    fn names_cannot_escape_the_directory() {
        for bad in ["../x", "/abs", "a/b/c", "", ".hidden", "a\0b"] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
        for good in ["work", "_/20261122T101010-topic", "my project.v2"] {
            assert!(validate_name(good).is_ok(), "{good:?}");
        }
    }
}
