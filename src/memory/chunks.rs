//! Splitting MEMORY.md into the chunks memory search returns: each list item (with its
//! continuation lines) and each paragraph is one chunk, prefixed with the heading of its
//! section so a recalled fact keeps its context ("## 2026-11-25").

/// Longest chunk, in bytes; a longer paragraph is split at line ends.
const MAX_CHUNK: usize = 1200;

/// The chunks of `text`.
pub fn split(text: &str) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut heading = String::new();
    let mut current = String::new();
    let flush = |current: &mut String, heading: &str, chunks: &mut Vec<String>| {
        let body = current.trim();
        if !body.is_empty() {
            if heading.is_empty() {
                chunks.push(body.to_string());
            } else {
                chunks.push(format!("{heading}\n{body}"));
            }
        }
        current.clear();
    };
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') {
            flush(&mut current, &heading, &mut chunks);
            heading = trimmed.trim_end().to_string();
            continue;
        }
        let item =
            trimmed.starts_with("- ") || trimmed.starts_with("* ") || starts_numbered(trimmed);
        // A new item at the outer level, a blank line or a full chunk ends the chunk.
        let indented = line.starts_with([' ', '\t']);
        if trimmed.is_empty() || (item && !indented) || current.len() + line.len() > MAX_CHUNK {
            flush(&mut current, &heading, &mut chunks);
        }
        if !trimmed.is_empty() {
            current.push_str(line);
            current.push('\n');
        }
    }
    flush(&mut current, &heading, &mut chunks);
    chunks
}

/// `1. ` / `12) ` list items.
fn starts_numbered(line: &str) -> bool {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && matches!(line[digits..].chars().next(), Some('.' | ')'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_and_paragraphs_are_chunks_with_their_heading() {
        let text = "# Memory\n\nIntro line\nsecond line\n\n## 2026-11-25\n\n- one\n  more of one\n- two\n1. three\n";
        assert_eq!(
            split(text),
            vec![
                "# Memory\nIntro line\nsecond line",
                "## 2026-11-25\n- one\n  more of one",
                "## 2026-11-25\n- two",
                "## 2026-11-25\n1. three",
            ]
        );
    }

    #[test]
    fn a_huge_paragraph_is_split() {
        let text = "word word word word\n".repeat(500);
        let chunks = split(&text);
        assert!(chunks.len() > 5);
        assert!(chunks.iter().all(|c| c.len() <= MAX_CHUNK + 40));
    }
}
