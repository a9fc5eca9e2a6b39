//! A frozen snapshot of the environment loki reads: the process environment plus the
//! optional `.env` file in the config directory.
//!
//! Everything that consults an environment variable goes through [`Env`], read once at
//! startup. Nothing later calls `std::env::var`, and nothing mutates the process
//! environment (the `.env` values live only in this snapshot; the process environment
//! wins when both define a name, so a shell export always overrides the file).

use std::collections::HashMap;
use std::path::Path;

/// Environment variables visible to loki, captured once.
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: HashMap<String, String>,
}

impl Env {
    /// Captures the process environment.
    pub fn capture() -> Self {
        let vars = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        Self { vars }
    }

    /// Builds a snapshot from explicit pairs (tests).
    pub fn from_pairs<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        Self {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// Adds `KEY=VALUE` lines from a `.env` file without overriding variables that are
    /// already set. A missing file is not an error.
    pub fn load_dotenv(&mut self, path: &Path) -> std::io::Result<()> {
        // Bounded, and only a regular file (a FIFO or `/dev/zero` is refused, not read).
        let text = match crate::atomic_file::read_regular_text(
            path,
            crate::atomic_file::MAX_CONFIG_FILE,
        ) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        for (key, value) in parse_dotenv(&text) {
            self.vars.entry(key).or_insert(value);
        }
        Ok(())
    }

    /// Every variable.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// True when `name` is set to a truthy value (`1`, `true`, `yes`, `on`, any case).
    pub fn flag(&self, name: &str) -> bool {
        self.get(name).is_some_and(is_truthy)
    }

    /// All variables whose name starts with `prefix`.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> {
        self.vars
            .iter()
            .filter(move |(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// `text` with each `{{NAME}}` replaced by what `value` gives for the name (trimmed). A
/// placeholder it gives nothing for stays as written, as does an unclosed `{{`. The one
/// scanner behind the config file's, mcp.json's and the vault's placeholders.
pub fn replace_placeholders<'v>(
    text: &str,
    mut value: impl FnMut(&str) -> Option<&'v str>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        match value(after[..end].trim()) {
            Some(found) => out.push_str(found),
            None => out.push_str(&rest[start..start + 2 + end + 2]),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// `my-agent` → `MY_AGENT`: a name as part of an environment variable's or a vault
/// secret's name (ASCII letters and digits upper-cased, everything else `_`).
pub fn env_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A name as part of a file name: ASCII letters, digits, `-` and `_` kept, anything else
/// (a `/` or `..` among it) `_`.
pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `1`, `true`, `yes`, `on` (any case) are true; everything else is false.
pub fn is_truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// Parses `.env` text: `KEY=VALUE` lines, optional `export ` prefix, `#` comments (whole
/// lines, or after a space following an unquoted value), blank lines skipped, values
/// optionally wrapped in single or double quotes (kept verbatim inside).
fn parse_dotenv(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                return None;
            }
            let line = line.strip_prefix("export ").unwrap_or(line);
            let (key, value) = line.split_once('=')?;
            let key = key.trim();
            if key.is_empty() {
                return None;
            }
            Some((key.to_string(), dotenv_value(value.trim()).to_string()))
        })
        .collect()
}

fn dotenv_value(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(rest) = value.strip_prefix(quote)
            && let Some(end) = rest.find(quote)
        {
            return &rest[..end];
        }
    }
    let comment = [" #", "\t#"].iter().filter_map(|m| value.find(m)).min();
    comment.map_or(value, |at| value[..at].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_or_left_as_written() {
        let value = |name: &str| (name == "KEY").then_some("v");
        assert_eq!(
            replace_placeholders("a {{ KEY }} b {{OTHER}} c {{KEY", value),
            "a v b {{OTHER}} c {{KEY"
        );
        assert_eq!(replace_placeholders("plain", value), "plain");
    }

    #[test]
    fn names_are_spelled_for_variables_and_files() {
        assert_eq!(env_name("my-agent.v2"), "MY_AGENT_V2");
        assert_eq!(file_safe("../a b-c_d"), "___a_b-c_d");
    }

    #[test]
    fn dotenv_parsing_skips_comments_and_strips_quotes() {
        let parsed = parse_dotenv(
            "# c\n\nA=1\nexport B = \"two words\"\nC='x'\n=bad\nnoeq\nD=v # note\nE=\"a # b\" # c\nF=x#y\n",
        );
        assert_eq!(
            parsed,
            vec![
                ("A".into(), "1".into()),
                ("B".into(), "two words".into()),
                ("C".into(), "x".into()),
                ("D".into(), "v".into()),
                ("E".into(), "a # b".into()),
                ("F".into(), "x#y".into()),
            ]
        );
    }

    #[test]
    fn process_env_wins_over_dotenv() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(&path, "A=file\nB=file\n").unwrap();
        let mut env = Env::from_pairs([("A", "proc")]);
        env.load_dotenv(&path).unwrap();
        assert_eq!(env.get("A"), Some("proc"));
        assert_eq!(env.get("B"), Some("file"));
        assert!(env.load_dotenv(&dir.path().join("missing")).is_ok());
    }

    #[test]
    fn truthy_values() {
        for v in ["1", "true", "TRUE", "yes", "on"] {
            assert!(is_truthy(v), "{v}");
        }
        for v in ["0", "false", "no", "", "2"] {
            assert!(!is_truthy(v), "{v}");
        }
    }
}
