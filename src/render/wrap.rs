//! Word wrapping by terminal display width.
//!
//! Owns: display-width measurement (unicode-width, tabs to 8-column stops), greedy word
//! wrapping of one ANSI-free line into byte ranges or strings, and recognising a list-item
//! prefix so continuation lines can hang under the item text.
//! Does not own: styling, markdown parsing beyond the list marker, or any terminal output.

use std::ops::Range;

use unicode_width::UnicodeWidthChar;

/// Columns between tab stops, as on virtually every terminal.
const TAB_STOP: usize = 8;

/// Display columns of one non-tab character; control and zero-width characters count as 0.
pub fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Columns taken by `s` when it starts at column `col`, with tabs advancing to the next stop.
fn width_from(s: &str, col: usize) -> usize {
    s.chars().fold(col, |at, c| {
        if c == '\t' {
            (at / TAB_STOP + 1) * TAB_STOP
        } else {
            at + char_width(c)
        }
    }) - col
}

/// Display width of `s` (ANSI-free) starting at column 0.
pub fn display_width(s: &str) -> usize {
    width_from(s, 0)
}

/// Byte layout of a list-item prefix such as `  - `, `1. ` or `* `.
pub struct ListPrefix {
    /// Byte range of the bullet or number marker (`-`, `*`, `+`, `12.`, `3)`).
    pub marker: Range<usize>,
    /// Byte offset just past the marker and the spaces after it: where the item text starts.
    pub end: usize,
}

/// Recognise a list-item prefix (any indentation, then a bullet or `N.`/`N)`, then a space
/// or end of line).
pub fn list_prefix(line: &str) -> Option<ListPrefix> {
    let start = line.len() - line.trim_start_matches([' ', '\t']).len();
    let bytes = line.as_bytes();
    let digits = bytes[start..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let marker_end = match bytes.get(start + digits) {
        Some(b'-' | b'*' | b'+') if digits == 0 => start + 1,
        Some(b'.' | b')') if (1..=9).contains(&digits) => start + digits + 1,
        _ => return None,
    };
    let rest = &line[marker_end..];
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let end = marker_end + (rest.len() - rest.trim_start_matches(' ').len());
    Some(ListPrefix {
        marker: start..marker_end,
        end,
    })
}

/// Greedy word wrap of `text` to `width` columns, as byte ranges into `text`.
///
/// Whitespace at a break is dropped, leading indentation stays on the first piece, trailing
/// whitespace of an overflowing line is dropped, words wider than `width` are hard-split
/// between characters (at least one character per piece). `width == 0` means no wrapping.
pub fn wrap_ranges(text: &str, width: usize) -> Vec<Range<usize>> {
    if width == 0 || display_width(text) <= width {
        return std::iter::once(0..text.len()).collect();
    }
    let lead_end = text.len() - text.trim_start().len();
    let lead_w = display_width(&text[..lead_end]);
    let (mut start, mut end, mut col) = if lead_w < width {
        (0, lead_end, lead_w)
    } else {
        (lead_end, lead_end, 0)
    };
    let mut has_word = false;
    let mut pieces = Vec::new();
    let mut i = lead_end;
    while i < text.len() {
        let ws_start = i;
        i = text[i..]
            .find(|c: char| !c.is_whitespace())
            .map_or(text.len(), |n| i + n);
        let word_start = i;
        i = text[i..]
            .find(char::is_whitespace)
            .map_or(text.len(), |n| i + n);
        if word_start == i {
            break;
        }
        let word_w = display_width(&text[word_start..i]);
        if has_word {
            let gap = width_from(&text[ws_start..word_start], col);
            if col + gap + word_w <= width {
                end = i;
                col += gap + word_w;
                continue;
            }
            pieces.push(start..end);
            (start, end, col) = (word_start, word_start, 0);
        }
        has_word = true;
        if col + word_w <= width {
            end = i;
            col += word_w;
            continue;
        }
        if start < word_start {
            // Only indentation is on this piece; a word too long to fit anyway drops it.
            (start, end, col) = (word_start, word_start, 0);
        }
        for (off, c) in text[word_start..i].char_indices() {
            let cw = char_width(c);
            if col + cw > width && end > start {
                pieces.push(start..end);
                (start, col) = (end, 0);
            }
            end = word_start + off + c.len_utf8();
            col += cw;
        }
    }
    if end > start || pieces.is_empty() {
        pieces.push(start..end);
    }
    pieces
}

/// `line` as rows of `width` display columns, its text from byte `at` on wrapped under
/// itself: the rows after the first start with `hang` spaces (the width of `line[..at]`,
/// less than `width`). `at` 0 and `hang` 0 wrap the whole line flush left.
pub fn hanging_wrap(line: &str, at: usize, hang: usize, width: usize) -> Vec<String> {
    let body = &line[at..];
    let mut rows = wrap_ranges(body, width - hang).into_iter();
    let first = rows.next().map_or("", |r| &body[r]);
    let mut out = vec![format!("{}{first}", &line[..at])];
    out.extend(rows.map(|r| format!("{}{}", " ".repeat(hang), &body[r])));
    out
}

/// Word-wrap `line` to `width` display columns (unicode-width aware, ANSI-free input),
/// returning the pieces; long words are hard-split. Continuation lines of a list item are
/// indented to hang under the item text (when that indent is at most half the width).
#[cfg(test)]
pub fn wrap_line(line: &str, width: usize) -> Vec<String> {
    let (at, hang) = list_prefix(line)
        .map(|p| (p.end, display_width(&line[..p.end])))
        .filter(|&(_, w)| w * 2 <= width && display_width(line) > width)
        .unwrap_or((0, 0));
    hanging_wrap(line, at, hang, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_line_is_untouched() {
        assert_eq!(wrap_line("  hello world  ", 40), vec!["  hello world  "]);
        assert_eq!(wrap_line("anything", 0), vec!["anything"]);
        assert_eq!(wrap_line("", 10), vec![""]);
    }

    #[test]
    fn wraps_at_word_boundaries() {
        assert_eq!(
            wrap_line("the quick brown fox jumps over", 10),
            vec!["the quick", "brown fox", "jumps over"]
        );
        assert_eq!(
            wrap_line("  indented text here", 12),
            vec!["  indented", "text here"]
        );
    }

    #[test]
    fn hard_splits_long_words() {
        assert_eq!(
            wrap_line("a abcdefghijkl b", 5),
            vec!["a", "abcde", "fghij", "kl b"]
        );
    }

    #[test]
    fn cjk_counts_two_columns() {
        assert_eq!(display_width("漢字"), 4);
        assert_eq!(
            wrap_line("漢字かな交じり", 6),
            vec!["漢字か", "な交じ", "り"]
        );
        assert_eq!(wrap_line("ab 漢字 cd", 6), vec!["ab", "漢字", "cd"]);
        // A wide character never fits in one column but must still make progress.
        assert_eq!(wrap_line("漢字", 1), vec!["漢", "字"]);
    }

    #[test]
    fn list_items_hang() {
        assert_eq!(
            wrap_line("- one two three four", 10),
            vec!["- one two", "  three", "  four"]
        );
        assert_eq!(
            wrap_line("  12. alpha beta gamma", 14),
            vec!["  12. alpha", "      beta", "      gamma"]
        );
    }

    #[test]
    fn tabs_advance_to_stops() {
        assert_eq!(display_width("\tx"), 9);
        assert_eq!(display_width("ab\tx"), 9);
    }

    #[test]
    fn list_prefix_detection() {
        assert!(list_prefix("- a").is_some());
        assert!(list_prefix("3) a").is_some());
        assert!(list_prefix("**bold**").is_none());
        assert!(list_prefix("-x").is_none());
        assert_eq!(
            list_prefix("  * item").map(|p| (p.marker, p.end)),
            Some((2..3, 4))
        );
    }
}
