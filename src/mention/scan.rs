//! Finding the `@` mentions in a prompt's text, without looking at the disk: what each
//! could name, most likely first. Whether one names anything is decided later; a
//! mention that names nothing stays plain text.

/// Characters that end a sentence or close a bracket right after a mention
/// (`look at @notes.txt.`, `(see @src/)`), tried without when the whole does not exist.
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}', '>', '"', '\''];

/// One `@` mention as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// What it may name, most likely first: the whole token, then the token without
    /// trailing punctuation. A quoted mention has one.
    pub candidates: Vec<String>,
}

/// The mentions of `text`: `@path`, `@"a path"` and `@'a path'`, each at the start of
/// the text or after white space (so `me@example.com` is none).
pub fn mentions(text: &str) -> Vec<Mention> {
    let mut found = Vec::new();
    let mut previous: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let starts = c == '@' && previous.is_none_or(char::is_whitespace);
        previous = Some(c);
        if !starts {
            continue;
        }
        let rest = &text[at + 1..];
        let (mention, taken) = match rest.chars().next() {
            Some(quote @ ('"' | '\'')) => quoted(&rest[1..], quote),
            _ => bare(rest),
        };
        if let Some(mention) = mention {
            found.push(mention);
        }
        // Skip what the mention took, so `@a@b` is one mention.
        let end = at + 1 + taken;
        while chars.peek().is_some_and(|(i, _)| *i < end) {
            previous = chars.next().map(|(_, c)| c);
        }
    }
    found
}

/// `"my notes.txt"` up to the closing quote (none without one); the bytes taken.
fn quoted(rest: &str, quote: char) -> (Option<Mention>, usize) {
    match rest.find(quote) {
        Some(end) if end > 0 => (
            Some(Mention {
                candidates: vec![rest[..end].to_string()],
            }),
            end + 2,
        ),
        _ => (None, 1),
    }
}

/// A token up to white space, with its shorter forms; the bytes taken.
fn bare(rest: &str) -> (Option<Mention>, usize) {
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let token = &rest[..end];
    let mut candidates = Vec::new();
    let mut current = token;
    while !current.is_empty() {
        candidates.push(current.to_string());
        match current.strip_suffix(TRAILING) {
            Some(shorter) => current = shorter,
            None => break,
        }
    }
    let mention = (!candidates.is_empty()).then_some(Mention { candidates });
    (mention, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(text: &str) -> Vec<Vec<String>> {
        mentions(text).into_iter().map(|m| m.candidates).collect()
    }

    #[test]
    fn bare_quoted_and_not_mentions() {
        assert_eq!(first("explain @notes.txt"), [["notes.txt"]]);
        assert_eq!(
            first("see @src/a.rs, then"),
            [vec!["src/a.rs,".to_string(), "src/a.rs".to_string()]]
        );
        assert_eq!(first("read @\"my notes.txt\" now"), [["my notes.txt"]]);
        assert_eq!(first("read @'my notes.txt'"), [["my notes.txt"]]);
        assert!(first("mail me@example.com").is_empty());
        assert!(first("an @ alone, @\"unclosed").is_empty());
        assert_eq!(first("@a@b @c"), [["a@b"], ["c"]]);
        assert_eq!(first("é @ü.txt"), [["ü.txt"]]);
    }
}
