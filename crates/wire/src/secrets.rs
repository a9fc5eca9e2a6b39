//! The secret values this process knows, and the one function that hides them.
//!
//! Every API key, OAuth or cloud access token, AWS secret and bearer token loki resolves is
//! registered here under a name (`OPENAI_API_KEY`, `BEDROCK_SECRET_ACCESS_KEY`, …). Text
//! that leaves the process as a diagnostic — every error line, every warning about a
//! provider, every log record — passes through [`redact`], which replaces each known value
//! with `«secret:NAME»`. A provider that echoes the key in its 401 body, or a proxy that
//! quotes the request, cannot get it onto the terminal or into the log file.
//!
//! The set is process-wide and append-only on purpose, like the log subscriber it feeds:
//! tokens are learnt mid-run (an OAuth refresh, a Google access token), and the log writer,
//! installed before the configuration is read, must see them. The vault adds every entry
//! it decrypts the same way. Besides diagnostics, [`redact`] is applied to session files,
//! `messages.md`, `--dry-run` output and tool results before they become messages for the
//! model; any other writer (a machine-readable event stream) should call it too. What is
//! deliberately *not* done here: scrubbing child environments (that uses
//! [`Secrets::names`]/[`Secrets::contains_value`] from the tool layer).
//!
//! Values shorter than [`MIN_SECRET_LEN`] are ignored: redacting `abc` would mangle
//! ordinary text and such a value protects nothing anyway (`--add-secret` says so when it
//! stores one).

use std::borrow::Cow;
use std::sync::RwLock;

/// The shortest value worth redacting.
pub const MIN_SECRET_LEN: usize = 8;

/// One known secret.
#[derive(Clone)]
struct Entry {
    name: String,
    value: String,
}

/// A set of named secret values.
#[derive(Default)]
pub struct Secrets {
    /// Longest value first, so a secret that contains another is replaced whole.
    entries: RwLock<Vec<Entry>>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets")
            .field("names", &self.names())
            .finish_non_exhaustive()
    }
}

/// How a redacted value appears: `«secret:NAME»`.
pub fn marker(name: &str) -> String {
    format!("«secret:{name}»")
}

impl Secrets {
    /// An empty set.
    pub const fn new() -> Self {
        Self {
            entries: RwLock::new(Vec::new()),
        }
    }

    /// Remembers `value` under `name`, with the forms it takes when a server or a proxy
    /// quotes it encoded: base64 (standard and URL-safe, with and without padding) and
    /// percent-encoding. Blank, short or already known values are ignored (the first name
    /// given to a value is kept).
    pub fn add(&self, name: &str, value: &str) {
        use base64::Engine as _;
        let value = value.trim();
        if value.chars().count() < MIN_SECRET_LEN {
            return;
        }
        let b64 = base64::engine::general_purpose::STANDARD.encode(value);
        let url_b64 = base64::engine::general_purpose::URL_SAFE.encode(value);
        let percent: String = form_urlencoded::byte_serialize(value.as_bytes()).collect();
        let forms = [
            value.to_string(),
            b64.trim_end_matches('=').to_string(),
            url_b64.trim_end_matches('=').to_string(),
            percent,
        ];
        for form in forms {
            self.add_form(name, &form);
        }
    }

    fn add_form(&self, name: &str, value: &str) {
        let mut entries = self
            .entries
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if entries.iter().any(|e| e.value == value) {
            return;
        }
        let at = entries
            .iter()
            .position(|e| e.value.len() < value.len())
            .unwrap_or(entries.len());
        entries.insert(
            at,
            Entry {
                name: name.to_string(),
                value: value.to_string(),
            },
        );
    }

    /// [`Secrets::add`] for an optional value.
    pub fn add_opt(&self, name: &str, value: Option<&str>) {
        if let Some(value) = value {
            self.add(name, value);
        }
    }

    /// `text` with every known value replaced by its [`marker`]. Borrowed when nothing
    /// matched (the common case costs one substring search per secret).
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let entries = self
            .entries
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut out = Cow::Borrowed(text);
        for entry in entries.iter() {
            if out.contains(entry.value.as_str()) {
                out = Cow::Owned(out.replace(entry.value.as_str(), &marker(&entry.name)));
            }
        }
        out
    }

    /// Whether `value` is one of the known secrets (exactly).
    pub fn contains_value(&self, value: &str) -> bool {
        self.entries
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .any(|e| e.value == value.trim())
    }

    /// The names of the known secrets, for `--info`-style listings (never the values).
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for entry in self
            .entries
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
        {
            if !names.contains(&entry.name) {
                names.push(entry.name.clone());
            }
        }
        names
    }
}

static KNOWN: Secrets = Secrets::new();

/// The process-wide set.
pub fn known() -> &'static Secrets {
    &KNOWN
}

/// Registers a secret in the process-wide set.
pub fn remember(name: &str, value: &str) {
    KNOWN.add(name, value);
}

/// `text` with every secret this process knows replaced by `«secret:NAME»`.
pub fn redact(text: &str) -> Cow<'_, str> {
    KNOWN.redact(text)
}

/// `message` with known secrets replaced by `«secret:NAME»`.
pub fn redacted(message: String) -> String {
    match redact(&message) {
        std::borrow::Cow::Borrowed(_) => message,
        std::borrow::Cow::Owned(clean) => clean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_forms_are_redacted_too() {
        use base64::Engine as _;
        let s = Secrets::new();
        s.add("KEY", "sk-live+/secret=value");
        let b64 = base64::engine::general_purpose::STANDARD.encode("sk-live+/secret=value");
        let url: String = form_urlencoded::byte_serialize(b"sk-live+/secret=value").collect();
        for text in [format!("auth {b64} bad"), format!("?key={url}&x=1")] {
            let out = s.redact(&text);
            assert!(out.contains("«secret:KEY»"), "{out}");
            assert!(
                !out.contains(b64.trim_end_matches('=')) && !out.contains(&url),
                "{out}"
            );
        }
        assert_eq!(s.names(), ["KEY"]);
    }

    #[test]
    fn known_values_become_named_markers() {
        let s = Secrets::new();
        s.add("OPENAI_API_KEY", "sk-test-1234567890");
        s.add("TOKEN", "  ya29.abcdefgh  ");
        assert_eq!(
            s.redact("Incorrect API key provided: sk-test-1234567890 (twice: sk-test-1234567890)"),
            "Incorrect API key provided: «secret:OPENAI_API_KEY» (twice: «secret:OPENAI_API_KEY»)"
        );
        assert_eq!(s.redact("Bearer ya29.abcdefgh"), "Bearer «secret:TOKEN»");
        assert!(matches!(s.redact("nothing here"), Cow::Borrowed(_)));
        assert!(s.contains_value("ya29.abcdefgh"));
        assert_eq!(s.names(), ["OPENAI_API_KEY", "TOKEN"]);
    }

    #[test]
    fn short_blank_and_repeated_values_are_ignored() {
        let s = Secrets::new();
        s.add("A", "short");
        s.add("B", "        ");
        s.add("C", "long-enough-value");
        s.add("D", "long-enough-value");
        assert_eq!(s.names(), ["C"]);
        assert_eq!(s.redact("short"), "short");
    }

    #[test]
    fn a_secret_containing_another_is_replaced_whole() {
        let s = Secrets::new();
        s.add("INNER", "abcdefgh");
        s.add("OUTER", "xx-abcdefgh-yy");
        assert_eq!(
            s.redact("xx-abcdefgh-yy abcdefgh"),
            "«secret:OUTER» «secret:INNER»"
        );
    }
}
