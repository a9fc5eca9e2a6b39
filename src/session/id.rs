//! How sessions are named: a [`SessionId`] (a UUID that never changes) and an optional
//! [`SessionAlias`] (the human name typed in `-s work` or `.session work`, renamable).

use std::fmt;

use super::store::SessionError;

/// The stable identity of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(uuid::Uuid);

impl SessionId {
    /// A fresh random (v4) id.
    pub fn new() -> Self {
        Self(uuid::Uuid::new_v4())
    }

    /// Parses the hyphenated UUID form; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        (text.len() == 36)
            .then(|| uuid::Uuid::try_parse(text).ok())
            .flatten()
            .map(Self)
    }
}

impl Default for SessionId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// The prefix of aliases given to saved temporary sessions (`_/20261122T101010-topic`).
pub const AUTONAME_PREFIX: &str = "_/";

/// A human-readable session name.
///
/// Letters, digits, `-`, `_`, `.` and spaces; no leading dot; at most one `/`, and only in
/// the `_/` prefix of autonamed sessions. So an alias is always a safe file name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionAlias(String);

impl SessionAlias {
    /// Validates `name`.
    pub fn new(name: impl Into<String>) -> Result<Self, SessionError> {
        let name = name.into();
        let rest = name.strip_prefix(AUTONAME_PREFIX).unwrap_or(&name);
        let ok_chars = rest
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' '));
        // A UUID-shaped name would always be read as an id, and `_` is the folder of
        // autonamed sessions.
        let reserved = SessionId::parse(&name).is_some() || name == "_";
        if rest.is_empty() || rest.starts_with('.') || !ok_chars || rest.len() > 200 || reserved {
            return Err(SessionError::InvalidName { name });
        }
        Ok(Self(name))
    }

    /// The name as typed.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether loki chose this name for a saved temporary session.
    pub fn is_autoname(&self) -> bool {
        self.0.starts_with(AUTONAME_PREFIX)
    }
}

impl fmt::Display for SessionAlias {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Turns a generated title into the slug used in autonamed session aliases: runs of
/// anything but ASCII letters and digits become one `-`, lower-cased, at most 40 bytes.
pub fn slugify(title: &str) -> String {
    let mut slug = String::new();
    for c in title.trim().chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 40 {
            break;
        }
    }
    slug.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_are_safe_file_names() {
        for bad in [
            "../x",
            "/abs",
            "a/b",
            "_/a/b",
            "",
            ".hidden",
            "a\0b",
            "_/",
            "x\\y",
            "_",
            "0b6f7f2c-9d7e-4d53-a8a1-6c1f5e0a2b3c",
        ] {
            assert!(SessionAlias::new(bad).is_err(), "{bad:?}");
        }
        for good in ["work", "_/20261122T101010-topic", "my project.v2"] {
            assert!(SessionAlias::new(good).is_ok(), "{good:?}");
        }
        assert!(SessionAlias::new("_/x").unwrap().is_autoname());
    }

    #[test]
    fn ids_round_trip_and_reject_names() {
        let id = SessionId::new();
        assert_eq!(SessionId::parse(&id.to_string()), Some(id));
        assert_eq!(SessionId::parse("work"), None);
        assert_ne!(SessionId::new(), id);
    }

    #[test]
    fn titles_become_slugs() {
        assert_eq!(slugify("  Rust: async traits!? "), "rust-async-traits");
        assert_eq!(slugify("\"Quoted\" title."), "quoted-title");
        assert_eq!(slugify("日本"), "");
    }
}
