//! What of a long text fits on the screen: its head, never only its tail, and a count of
//! what was left out. An approval or an `-e` command taller than the screen would scroll
//! its beginning away — `touch X;` followed by screens of `:;` would show only the
//! harmless end — so what is shown always starts at the beginning, and a text that does
//! not fit must be viewed whole before it can run.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The part of a text that fits, and what did not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screenful {
    /// The beginning of the text, at most the rows given.
    pub shown: String,
    /// Lines not shown (a line cut short counts).
    pub hidden_lines: usize,
    /// Bytes not shown.
    pub hidden_bytes: usize,
}

impl Screenful {
    /// Whether all of it was shown.
    pub fn is_whole(&self) -> bool {
        self.hidden_bytes == 0
    }

    /// `… 80 more lines (9,000 bytes) not shown`, or nothing when all of it was.
    pub fn hidden_note(&self) -> Option<String> {
        (!self.is_whole()).then(|| {
            format!(
                "… {} more line{} ({} bytes) not shown",
                self.hidden_lines,
                if self.hidden_lines == 1 { "" } else { "s" },
                self.hidden_bytes
            )
        })
    }
}

/// The head of `text` that fits in `rows` terminal rows of `cols` columns (long lines
/// wrap). `text` should already be escaped for the terminal.
pub fn fit(text: &str, rows: usize, cols: usize) -> Screenful {
    let cols = cols.max(10);
    let mut left = rows.max(1);
    let mut shown = String::new();
    let lines: Vec<&str> = text.split('\n').collect();
    let mut whole_lines = 0;
    for line in &lines {
        if left == 0 {
            break;
        }
        let width = UnicodeWidthStr::width(*line);
        let needs = width.div_ceil(cols).max(1);
        if !shown.is_empty() {
            shown.push('\n');
        }
        if needs <= left {
            shown.push_str(line);
            left -= needs;
            whole_lines += 1;
            continue;
        }
        // The line is cut to the rows that are left.
        let budget = left * cols;
        let mut used = 0;
        for c in line.chars() {
            let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if used + w > budget {
                break;
            }
            used += w;
            shown.push(c);
        }
        left = 0;
    }
    Screenful {
        hidden_lines: lines.len() - whole_lines,
        hidden_bytes: text.len().saturating_sub(shown.len()),
        shown,
    }
}

/// Columns `text` takes on a terminal.
pub fn display_width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `text` cut to fit in `width - 1` columns (never touching the last column, so the
/// terminal does not wrap), with `…` when cut.
pub fn cut(text: &str, width: usize) -> String {
    let room = width.saturating_sub(1).max(1);
    if display_width(text) <= room {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > room {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// The terminal's width; 80 when it cannot be told (a pseudo-terminal nobody sized
/// reports 0).
pub fn terminal_width() -> usize {
    match crossterm::terminal::size() {
        Ok((w, _)) if w > 0 => usize::from(w),
        _ => 80,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_is_shown_and_the_rest_counted() {
        let short = fit("ls -la", 10, 80);
        assert!(short.is_whole() && short.shown == "ls -la" && short.hidden_note().is_none());
        // Filler after a harmful head: the head is what shows.
        let spoof = format!("touch X;{}; ls -la", ":;".repeat(3000));
        let cut = fit(&spoof, 5, 80);
        assert!(cut.shown.starts_with("touch X;"), "{}", cut.shown);
        assert_eq!(cut.shown.len(), 400);
        assert_eq!(cut.hidden_lines, 1);
        assert_eq!(cut.hidden_bytes, spoof.len() - 400);
        let tall = format!("touch X\n{}ls -la", ":\n".repeat(80));
        let cut = fit(&tall, 10, 80);
        assert!(cut.shown.starts_with("touch X\n:"), "{}", cut.shown);
        assert_eq!(cut.shown.lines().count(), 10);
        assert_eq!(cut.hidden_lines, 72);
        assert_eq!(
            cut.hidden_note().unwrap(),
            format!(
                "… 72 more lines ({} bytes) not shown",
                tall.len() - cut.shown.len()
            )
        );
    }
}
