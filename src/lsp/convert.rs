//! File paths as `file://` URIs and columns as LSP position units, both ways.

use std::path::{Path, PathBuf};

/// How a server counts columns (`positionEncoding`; UTF-16 unless it chose otherwise).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Encoding {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units (the protocol's default).
    #[default]
    Utf16,
    /// Characters.
    Utf32,
}

impl Encoding {
    /// The encoding a server announced in its capabilities.
    pub fn from_capability(name: Option<&str>) -> Self {
        match name {
            Some("utf-8") => Self::Utf8,
            Some("utf-32") => Self::Utf32,
            _ => Self::Utf16,
        }
    }

    fn units(self, c: char) -> usize {
        match self {
            Self::Utf8 => c.len_utf8(),
            Self::Utf16 => c.len_utf16(),
            Self::Utf32 => 1,
        }
    }
}

/// The position units before the `chars`-th character of `line` (0-based, clamped to the
/// end of the line).
pub fn to_units(line: &str, chars: usize, encoding: Encoding) -> usize {
    line.chars().take(chars).map(|c| encoding.units(c)).sum()
}

/// The characters before position `units` of `line` (0-based; past the end counts on as
/// if the line went on with one-unit characters).
pub fn to_chars(line: &str, units: usize, encoding: Encoding) -> usize {
    let mut seen = 0;
    for (count, c) in line.chars().enumerate() {
        if seen >= units {
            return count;
        }
        seen += encoding.units(c);
    }
    line.chars().count() + units.saturating_sub(seen)
}

/// Line `index` (0-based) of `text`, without its line ending.
pub fn line_of(text: &str, index: usize) -> Option<&str> {
    text.split('\n')
        .nth(index)
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
}

/// `path` (absolute) as a `file://` URI.
pub fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy();
    #[cfg(windows)]
    let text = {
        let slashed = text.replace('\\', "/");
        if slashed.starts_with('/') {
            slashed
        } else {
            format!("/{slashed}")
        }
    };
    let mut uri = String::from("file://");
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The path a `file://` URI names; `None` for any other URI.
pub fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri
        .strip_prefix("file://")
        .or_else(|| uri.strip_prefix("FILE://"))?;
    // `file://localhost/x` and `file:///x` name the same file; other hosts are not local.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let bytes = percent_decode(rest)?;
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
    }
    #[cfg(not(unix))]
    {
        let text = String::from_utf8(bytes).ok()?;
        // `/C:/x` is `C:/x`.
        let text = match text.get(1..3) {
            Some(drive) if drive.ends_with(':') => text[1..].to_string(),
            _ => text,
        };
        Some(PathBuf::from(text))
    }
}

fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn uris_round_trip() {
        for path in ["/tmp/a.txt", "/tmp/with space/é.rs", "/x/100%/[a]#b?c.rs"] {
            let uri = file_uri(Path::new(path));
            assert!(uri.starts_with("file:///"), "{uri}");
            assert!(!uri.contains([' ', '#', '?']), "{uri}");
            assert_eq!(uri_path(&uri), Some(PathBuf::from(path)), "{uri}");
        }
        assert_eq!(file_uri(Path::new("/a b")), "file:///a%20b");
        assert_eq!(uri_path("file:///a%3A/b"), Some(PathBuf::from("/a:/b")));
        assert_eq!(
            uri_path("file://localhost/etc/x"),
            Some(PathBuf::from("/etc/x"))
        );
        assert_eq!(uri_path("untitled:Untitled-1"), None);
        assert_eq!(uri_path("file://server/share/x"), None);
        assert_eq!(uri_path("file:///bad%zz"), None);
    }

    #[test]
    fn columns_convert_between_encodings() {
        let line = "aé😀b";
        assert_eq!(to_units(line, 3, Encoding::Utf16), 4);
        assert_eq!(to_units(line, 3, Encoding::Utf8), 7);
        assert_eq!(to_units(line, 3, Encoding::Utf32), 3);
        assert_eq!(to_units(line, 99, Encoding::Utf16), 5);
        assert_eq!(to_chars(line, 4, Encoding::Utf16), 3);
        assert_eq!(to_chars(line, 7, Encoding::Utf8), 3);
        assert_eq!(to_chars(line, 0, Encoding::Utf16), 0);
        assert_eq!(to_chars(line, 7, Encoding::Utf16), 6);
        assert_eq!(line_of("a\r\nb\nc", 1), Some("b"));
        assert_eq!(line_of("a\r\nb\nc", 0), Some("a"));
        assert_eq!(line_of("a", 3), None);
    }
}
