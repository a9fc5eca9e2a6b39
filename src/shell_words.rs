//! Splitting a command line or an argument list into words, the way a shell would,
//! without running a shell: used for document loader commands, `$EDITOR`, and REPL
//! command arguments.

/// Splits `s` into words as a POSIX shell would for a simple command: whitespace
/// separates words, single quotes keep everything literally, double quotes group words,
/// and a backslash outside single quotes escapes the next character. No expansion of any
/// kind happens.
pub fn split(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => current.push(c),
            (_, '\\') => {
                if let Some(next) = chars.next() {
                    current.push(next);
                }
                in_word = true;
            }
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            (None, c) => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(current);
    }
    words
}

/// `word` written so that [`split`] gives it back whole: as it is when it has no
/// whitespace, quote or backslash, else in single quotes (a `'` inside as `'\''`).
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && !word
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\'));
    if plain {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::{quote, split};

    #[test]
    fn quoted_words_split_back_whole() {
        let words = ["plain", "the parser", "it's", "", "a\\b", "\"q\""];
        let line: Vec<String> = words.iter().map(|w| quote(w)).collect();
        assert_eq!(line[0], "plain");
        assert_eq!(split(&line.join(" ")), words);
    }

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            split(r#"a "b c" 'd e' f\ g 'h\i' "j\"k""#),
            ["a", "b c", "d e", "f g", "h\\i", "j\"k"]
        );
        assert!(split("   ").is_empty());
        assert_eq!(split("''"), [""]);
    }
}
