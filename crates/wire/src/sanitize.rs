//! Terminal-safe text: the one place that decides which characters from a model, a tool,
//! a file or a server may reach a terminal as they are.
//!
//! Owns: neutralising control characters in foreign text before loki adds its own styling.
//! Every C0 control except tab and newline (so ESC, and with it every CSI, OSC, DCS, APC,
//! PM and SOS sequence: clipboard writes, window titles, screen clears, hyperlinks), DEL
//! and the C1 controls U+0080–U+009F is replaced by a visible escape: `\x1b`, `\x07`,
//! `\x7f`, `\u{9b}`; a carriage return by `\r`. Breaking the introducer is enough to
//! neutralise a whole sequence: what follows it is printed as ordinary text, so nothing is
//! hidden and no state has to be carried across sequences.
//! Does not own: deciding when to sanitise (callers skip it when stdout is not a terminal,
//! so piped answers keep their bytes), styling.
//!
//! Two strengths:
//! - [`display`] (answers, reasoning, notices, errors, REPL output) keeps a `\r` directly
//!   followed by `\n`, which cannot hide anything, so Windows line endings render as usual.
//! - [`approval`] (what a user approves: the `-e` command, tool approvals, the `⚙`/`↳`
//!   lines) also escapes every `\r`, the bidirectional overrides, embeddings, isolates and
//!   marks (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069) and invisible characters
//!   (U+200B–U+200D, U+2028–U+2029, U+2060–U+2064, U+FEFF): what is shown is, character
//!   for character, what runs.
//!
//! What is approved must also fit on the screen: in both approval strengths a run of
//! [`FOLD_SPACES`] or more spaces and tabs, and (in [`approval`]) a run of
//! [`FOLD_LINES`] or more blank lines, is folded into one marker with its count
//! (`⟪5000 spaces⟫`, `⟪60 blank lines⟫`), so that a command cannot push the part that
//! runs off the screen above the question.
//!
//! [`StreamSanitizer`] applies [`display`] to streamed deltas, carrying a trailing `\r` to
//! the next delta so a `\r\n` split across two network reads is still a line ending. The
//! check is one pass over the bytes; text without control characters is not copied.

use std::borrow::Cow;

/// How strict escaping is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Controls escaped; `\r\n` kept.
    Display,
    /// Controls, every `\r`, bidi and invisible formatting characters escaped.
    Approval,
    /// As `Approval`, and newlines too: the text must stay on one line.
    ApprovalLine,
}

/// `text` with control characters shown as escapes; `\t`, `\n` and `\r\n` are kept.
/// Borrowed (no copy) when there is nothing to escape.
pub fn display(text: &str) -> Cow<'_, str> {
    if !needs_display_escape(text.as_bytes()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    escape_into(text, Mode::Display, &mut out);
    Cow::Owned(out)
}

/// `text` for a terminal when `tty`, unchanged otherwise (a pipe or a file gets the bytes).
pub fn for_terminal(text: &str, tty: bool) -> Cow<'_, str> {
    if tty {
        display(text)
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` as it must be shown for approval: every control character (`\r` included),
/// bidirectional control and invisible character escaped; tabs and newlines kept.
pub fn approval(text: &str) -> Cow<'_, str> {
    escape_all(text, Mode::Approval)
}

/// [`approval`] for text that must stay on one line (the question of a tool approval,
/// the `⚙`/`↳` lines): newlines are escaped too, so a model cannot start a line that
/// looks like loki's own.
pub fn approval_line(text: &str) -> Cow<'_, str> {
    escape_all(text, Mode::ApprovalLine)
}

fn escape_all(text: &str, mode: Mode) -> Cow<'_, str> {
    let escaped_text = if text.chars().any(|c| escaped(c, None, mode)) {
        let mut out = String::with_capacity(text.len() + 16);
        escape_into(text, mode, &mut out);
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    };
    match fold_blanks(&escaped_text, mode == Mode::Approval) {
        Some(folded) => Cow::Owned(folded),
        None => escaped_text,
    }
}

/// Spaces and tabs in a row from which they are folded into a marker.
pub const FOLD_SPACES: usize = 64;
/// Blank lines in a row from which they are folded into a marker.
pub const FOLD_LINES: usize = 5;

/// `text` with long runs of blanks folded into counted markers; `None` when there are
/// none.
fn fold_blanks(text: &str, lines: bool) -> Option<String> {
    let has_space_run = text
        .as_bytes()
        .split(|b| *b != b' ' && *b != b'\t')
        .any(|run| run.len() >= FOLD_SPACES);
    let has_line_run = lines && text.contains(&"\n".repeat(FOLD_LINES));
    if !has_space_run && !has_line_run {
        return None;
    }
    let mut out = String::with_capacity(text.len().min(4096));
    let mut blank_lines = 0usize;
    let flush_lines = |out: &mut String, n: &mut usize| {
        if *n >= FOLD_LINES {
            out.push_str(&format!("⟪{n} blank lines⟫\n"));
        } else {
            for _ in 0..*n {
                out.push('\n');
            }
        }
        *n = 0;
    };
    let total = text.matches('\n').count();
    for (i, line) in text.split('\n').enumerate() {
        let last = i == total;
        if lines && line.trim().is_empty() && !last {
            blank_lines += 1;
            continue;
        }
        flush_lines(&mut out, &mut blank_lines);
        fold_spaces(line, &mut out);
        if !last {
            out.push('\n');
        }
    }
    flush_lines(&mut out, &mut blank_lines);
    Some(out)
}

/// Copies `line` into `out`, folding runs of [`FOLD_SPACES`] or more blanks.
fn fold_spaces(line: &str, out: &mut String) {
    let mut run = String::new();
    let flush = |out: &mut String, run: &mut String| {
        let n = run.chars().count();
        if n >= FOLD_SPACES {
            out.push_str(&format!(" ⟪{n} spaces⟫ "));
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in line.chars() {
        if c == ' ' || c == '\t' {
            run.push(c);
        } else {
            flush(out, &mut run);
            out.push(c);
        }
    }
    flush(out, &mut run);
}

/// The note shown under an approval whose text had to be escaped (the `Cow` returned by
/// [`approval`] or [`approval_line`] is `Owned`).
pub const HIDDEN_NOTE: &str = "it contains characters a terminal would not show as they \
     are, shown escaped (\\n, \\r, \\x1b, \\u{202e}, …), or long runs of blanks, shown \
     folded (⟪64 spaces⟫); they are part of what runs";

/// [`display`] for a stream of deltas.
#[derive(Debug, Default)]
pub struct StreamSanitizer {
    /// The previous delta ended with `\r`, not yet known to start a `\r\n`.
    pending_cr: bool,
    /// Scratch for deltas that need escaping.
    buf: String,
}

impl StreamSanitizer {
    /// A sanitiser with no pending state.
    pub fn new() -> Self {
        Self::default()
    }

    /// The safe form of `delta` (the delta itself when it needs nothing).
    pub fn push<'a>(&'a mut self, delta: &'a str) -> &'a str {
        if delta.is_empty() {
            return delta;
        }
        let pending = std::mem::take(&mut self.pending_cr);
        let body = match delta.strip_suffix('\r') {
            Some(body) => {
                self.pending_cr = true;
                body
            }
            None => delta,
        };
        if !pending && !needs_display_escape(body.as_bytes()) {
            return body;
        }
        self.buf.clear();
        if pending {
            self.buf
                .push_str(if body.starts_with('\n') { "\r" } else { "\\r" });
        }
        escape_into(body, Mode::Display, &mut self.buf);
        &self.buf
    }

    /// The end of the stream: a `\r` still pending is shown escaped.
    pub fn finish(&mut self) -> &'static str {
        if std::mem::take(&mut self.pending_cr) {
            "\\r"
        } else {
            ""
        }
    }
}

/// One pass over the bytes: does `display` have anything to do? (C1 controls are
/// `0xC2 0x80..=0x9F` in UTF-8.)
fn needs_display_escape(bytes: &[u8]) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\t' | b'\n' => {}
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {}
            0..=0x1f | 0x7f => return true,
            0xc2 if matches!(bytes.get(i + 1), Some(0x80..=0x9f)) => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// Whether `c` (followed by `next`) is escaped in `mode`.
fn escaped(c: char, next: Option<char>, mode: Mode) -> bool {
    match c {
        '\t' => false,
        '\n' => mode == Mode::ApprovalLine,
        '\r' => mode != Mode::Display || next != Some('\n'),
        '\0'..='\x1f' | '\x7f'..='\u{9f}' => true,
        _ => mode != Mode::Display && is_bidi_or_invisible(c),
    }
}

/// Bidirectional controls and marks, zero-width and other invisible characters (format
/// characters and default-ignorable code points: soft hyphen, fillers, variation
/// selectors, tags, …): harmless in prose, but able to make a command read differently
/// from what it does.
fn is_bidi_or_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{061c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fffb}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// Appends `text` to `out` with the characters `mode` escapes written as escapes; runs of
/// safe text are copied whole.
fn escape_into(text: &str, mode: Mode, out: &mut String) {
    let mut safe_from = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        if !escaped(c, next, mode) {
            continue;
        }
        out.push_str(&text[safe_from..i]);
        safe_from = i + c.len_utf8();
        match c {
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\0'..='\x7f' => {
                out.push_str("\\x");
                push_hex(out, u32::from(c), 2);
            }
            _ => {
                out.push_str("\\u{");
                push_hex(out, u32::from(c), 1);
                out.push('}');
            }
        }
    }
    out.push_str(&text[safe_from..]);
}

/// Appends `value` in lower-case hex, at least `min_digits` long.
fn push_hex(out: &mut String, value: u32, min_digits: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digits = (8 - value.leading_zeros() as usize / 4).max(min_digits);
    for i in (0..digits).rev() {
        out.push(char::from(HEX[(value >> (4 * i)) as usize & 0xf]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_runs_of_blanks_are_folded_for_approval() {
        let spaces = format!("touch X{}ls -la", " ".repeat(5000));
        let shown = approval(&spaces);
        assert_eq!(shown, "touch X ⟪5000 spaces⟫ ls -la");
        assert_eq!(approval_line(&spaces), "touch X ⟪5000 spaces⟫ ls -la");
        let lines = format!("touch X{}ls -la", "\n".repeat(61));
        assert_eq!(approval(&lines), "touch X\n⟪60 blank lines⟫\nls -la");
        // Ordinary indentation and paragraphs are left alone.
        let code = "fn main() {\n        let x = 1;\n\n    x\n}\n";
        assert!(matches!(approval(code), Cow::Borrowed(_)));
        // Display text is never folded.
        assert!(matches!(display(&spaces), Cow::Borrowed(_)));
    }

    #[test]
    fn text_unicode_tabs_and_newlines_are_kept_without_copying() {
        for text in [
            "plain",
            "tab\there\nnext line\r\n",
            "漢字 · émoji 🦀 \u{202e}",
            "",
        ] {
            assert!(
                matches!(display(text), Cow::Borrowed(t) if t == text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn every_terminal_control_is_neutralised() {
        let cases = [
            ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),
            ("\x1b]0;title\x1b\\", "\\x1b]0;title\\x1b\\"),
            ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),
            (
                "\x1b]8;;http://x\x07link\x1b]8;;\x07",
                "\\x1b]8;;http://x\\x07link\\x1b]8;;\\x07",
            ),
            ("\x1bP+q\x1b\\", "\\x1bP+q\\x1b\\"),
            (
                "a\u{9b}31mb\u{9d}0;t\u{9c}",
                "a\\u{9b}31mb\\u{9d}0;t\\u{9c}",
            ),
            ("del\x7f nul\0 bs\x08", "del\\x7f nul\\x00 bs\\x08"),
            ("touch X; \r\x1b[2Kls -la", "touch X; \\r\\x1b[2Kls -la"),
        ];
        for (raw, shown) in cases {
            assert_eq!(display(raw), shown, "{raw:?}");
            assert!(!display(raw).contains(['\x1b', '\x07', '\u{9b}', '\r']));
        }
    }

    #[test]
    fn approval_escapes_every_cr_and_bidi_but_keeps_layout() {
        assert_eq!(approval("ls\r\nrm -rf x"), "ls\\r\nrm -rf x");
        assert_eq!(approval("a\tb\nc"), "a\tb\nc");
        assert_eq!(approval_line("a\tb\nc\r\n"), "a\tb\\nc\\r\\n");
        assert_eq!(
            approval("rm \u{202e}txt.exe\u{202c} \u{200b}x\u{feff}"),
            "rm \\u{202e}txt.exe\\u{202c} \\u{200b}x\\u{feff}"
        );
        assert_eq!(approval("ünïcode 漢字"), "ünïcode 漢字");
        assert_eq!(
            approval("r\u{00ad}m \u{3164}x\u{fe0f}\u{e0041}"),
            "r\\u{ad}m \\u{3164}x\\u{fe0f}\\u{e0041}"
        );
        assert!(matches!(approval("ok\n"), Cow::Borrowed(_)));
        // Prose keeps bidi marks: right-to-left text needs them.
        assert_eq!(display("שלום\u{200f}"), "שלום\u{200f}");
    }

    #[test]
    fn a_stream_gives_the_same_text_for_every_split() {
        let text = "a\r\nb\rc\x1b[31md\u{9b}e\r\r\n\rf\r";
        let whole = {
            let mut s = StreamSanitizer::new();
            let mut out = s.push(text).to_string();
            out.push_str(s.finish());
            out
        };
        assert_eq!(whole, "a\r\nb\\rc\\x1b[31md\\u{9b}e\\r\r\n\\rf\\r");
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        for size in 1..=4 {
            let mut s = StreamSanitizer::new();
            let mut out = String::new();
            for piece in chars.chunks(size) {
                let start = piece[0].0;
                let end = piece.last().map_or(start, |(i, c)| i + c.len_utf8());
                out.push_str(s.push(&text[start..end]));
            }
            out.push_str(s.finish());
            assert_eq!(out, whole, "split by {size}");
        }
    }

    #[test]
    fn linear_time_on_hostile_input() {
        // Best of five, so a busy machine does not fail the test; quadratic work would
        // make the eight-times-longer input 64 times slower.
        let time = |n: usize| {
            let hostile = "\x1b[\u{9b}".repeat(n) + &"\r".repeat(n);
            (0..5)
                .map(|_| {
                    let start = std::time::Instant::now();
                    let shown = display(&hostile);
                    assert!(!shown.contains(['\x1b', '\r', '\u{9b}']));
                    start.elapsed()
                })
                .min()
                .unwrap_or_default()
        };
        let (short, long) = (time(20_000), time(160_000));
        assert!(long < short * 24, "{short:?} → {long:?}");
    }
}
