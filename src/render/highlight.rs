//! Syntax highlighting of fenced code blocks with syntect.
//!
//! Owns: lazily loading syntect's default syntaxes (once per process, shared by every
//! `Highlighter`), using the theme
//! [`super::themes`] provides (the user's custom one, else the built-in), mapping fence info strings to syntaxes, carrying parse state across the lines
//! of one block, and turning highlighted spans into 24-bit foreground ANSI escapes.
//! Does not own: deciding what is a code block, fence lines, wrapping, or writing to a terminal.

use std::ops::Range;
use std::sync::Arc;

use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, HighlightState, Theme};
use syntect::parsing::{ParseState, SyntaxReference, SyntaxSet};

/// Syntect syntax name for fence languages its token lookup does not resolve by itself.
fn alias(token: &str) -> Option<&'static str> {
    Some(match token {
        "sh" | "bash" | "shell" | "zsh" | "console" => "Bourne Again Shell (bash)",
        "py" | "python3" => "Python",
        "js" | "ts" | "typescript" | "jsx" | "tsx" => "JavaScript",
        "yml" => "YAML",
        "rs" => "Rust",
        "json" => "JSON",
        _ => return None,
    })
}

/// Foreground style of one highlighted span of code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CodeStyle {
    /// 24-bit foreground colour.
    pub(crate) fg: (u8, u8, u8),
    /// Bold font.
    pub(crate) bold: bool,
    /// Italic font.
    pub(crate) italic: bool,
    /// Underlined.
    pub(crate) underline: bool,
}

impl CodeStyle {
    /// Append the SGR sequence selecting this style (resetting everything else first).
    pub(crate) fn write_sgr(&self, out: &mut Vec<u8>) {
        let (r, g, b) = self.fg;
        let attrs = [
            (self.bold, ";1"),
            (self.italic, ";3"),
            (self.underline, ";4"),
        ];
        let extra: String = attrs.iter().filter(|a| a.0).map(|a| a.1).collect();
        out.extend_from_slice(format!("\x1b[0;38;2;{r};{g};{b}{extra}m").as_bytes());
    }
}

/// Syntect wrapper owning a lazily loaded `SyntaxSet`, the chosen `Theme`, and the
/// parse/highlight state of the code block in progress.
pub(crate) struct Highlighter {
    /// Use the light theme instead of the dark one.
    light: bool,
    /// Default syntaxes (newline mode), loaded on the first `start_block` of the process.
    syntaxes: Option<&'static SyntaxSet>,
    /// The chosen theme: the user's, given at construction, else the built-in one loaded
    /// on the first `start_block`.
    theme: Option<Arc<Theme>>,
    /// State of the block in progress; `None` outside a block.
    block: Option<(HighlightState, ParseState)>,
}

impl Highlighter {
    /// Create a highlighter; cheap, nothing is loaded until the first code block. `custom`
    /// is the user's theme, if any (see [`super::themes::custom`]).
    pub(crate) fn new(light: bool, custom: Option<Arc<Theme>>) -> Self {
        Self {
            light,
            syntaxes: None,
            theme: custom,
            block: None,
        }
    }

    /// Start a code block for a fence info string like "rust", "py", "sh", "" — unknown
    /// languages fall back to plain text.
    pub(crate) fn start_block(&mut self, lang: &str) {
        let syntaxes = *self.syntaxes.get_or_insert_with(default_syntaxes);
        let light = self.light;
        let theme = self
            .theme
            .get_or_insert_with(|| super::themes::builtin(light));
        let syntax = find_syntax(syntaxes, lang);
        self.block = Some(HighlightLines::new(syntax, theme).state());
    }

    /// Highlight `line` (no trailing newline) in the current block, as styled byte ranges of
    /// `line`. `None` when no block is active or syntect failed: show the line unstyled.
    pub(crate) fn highlight_spans(&mut self, line: &str) -> Option<Vec<(CodeStyle, Range<usize>)>> {
        let (Some(syntaxes), Some(theme)) = (self.syntaxes, self.theme.as_ref()) else {
            return None;
        };
        let (hl_state, parse_state) = self.block.take()?;
        let mut lines = HighlightLines::from_state(theme, hl_state, parse_state);
        let with_newline = format!("{line}\n");
        let spans = lines
            .highlight_line(&with_newline, syntaxes)
            .ok()
            .map(|regions| {
                let mut at = 0;
                let mut spans = Vec::with_capacity(regions.len());
                for (style, text) in regions {
                    let end = (at + text.len()).min(line.len());
                    if end > at {
                        let fg = style.foreground;
                        let font = style.font_style;
                        let code_style = CodeStyle {
                            fg: (fg.r, fg.g, fg.b),
                            bold: font.contains(FontStyle::BOLD),
                            italic: font.contains(FontStyle::ITALIC),
                            underline: font.contains(FontStyle::UNDERLINE),
                        };
                        spans.push((code_style, at..end));
                    }
                    at += text.len();
                }
                spans
            });
        self.block = Some(lines.state());
        spans
    }

    /// Highlight one line of code (without trailing newline) in the current block, append
    /// 24-bit ANSI colored text + reset to out.
    pub(crate) fn highlight_line(&mut self, line: &str, out: &mut Vec<u8>) {
        match self.highlight_spans(line) {
            Some(spans) => {
                let mut current = None;
                for (style, range) in spans {
                    if current != Some(style) {
                        style.write_sgr(out);
                        current = Some(style);
                    }
                    out.extend_from_slice(line[range].as_bytes());
                }
            }
            None => out.extend_from_slice(line.as_bytes()),
        }
        out.extend_from_slice(b"\x1b[0m");
    }

    /// End the current code block, dropping its parse state.
    pub(crate) fn end_block(&mut self) {
        self.block = None;
    }
}

/// Syntax for a fence info string: first word, lower-cased, through the alias table, then
/// syntect's token lookup (name or extension), else plain text.
/// syntect's default syntaxes, loaded once per process: every answer (each REPL turn has
/// its own renderer) shares them, and with them the regexes compiled so far.
fn default_syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: std::sync::OnceLock<SyntaxSet> = std::sync::OnceLock::new();
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn find_syntax<'a>(syntaxes: &'a SyntaxSet, info: &str) -> &'a SyntaxReference {
    let word = info.split_whitespace().next().unwrap_or("");
    let token = word.trim_matches(['{', '}', '.']).to_ascii_lowercase();
    alias(&token)
        .and_then(|name| syntaxes.find_syntax_by_name(name))
        .or_else(|| (token == "json").then(|| syntaxes.find_syntax_by_name("JavaScript"))?)
        .or_else(|| (!token.is_empty()).then(|| syntaxes.find_syntax_by_token(&token))?)
        .unwrap_or_else(|| syntaxes.find_syntax_plain_text())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_loads_nothing() {
        let h = Highlighter::new(false, None);
        assert!(h.syntaxes.is_none() && h.theme.is_none());
    }

    #[test]
    fn highlights_rust_with_truecolor_and_reset() {
        let mut h = Highlighter::new(false, None);
        h.start_block("rust");
        let mut out = Vec::new();
        h.highlight_line("fn main() { let s = \"/* not a comment\"; }", &mut out);
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains("\x1b[0;38;2;"), "{text:?}");
        assert!(text.ends_with("\x1b[0m"));
        assert!(!text.contains("48;2"), "no background painting");
        h.end_block();
    }

    #[test]
    fn state_carries_across_lines() {
        let mut h = Highlighter::new(true, None);
        h.start_block("rs");
        let first = h.highlight_spans("/* start of a").unwrap_or_default();
        let second = h
            .highlight_spans("comment */ fn x() {}")
            .unwrap_or_default();
        assert_eq!(first.first().map(|s| s.0), second.first().map(|s| s.0));
    }

    #[test]
    fn aliases_and_fallbacks() {
        let set = SyntaxSet::load_defaults_newlines();
        assert_eq!(find_syntax(&set, "sh").name, "Bourne Again Shell (bash)");
        assert_eq!(find_syntax(&set, "py").name, "Python");
        assert_eq!(find_syntax(&set, "ts").name, "JavaScript");
        assert_eq!(find_syntax(&set, "yml").name, "YAML");
        assert!(["JSON", "JavaScript"].contains(&find_syntax(&set, "json").name.as_str()));
        assert_eq!(find_syntax(&set, "Rust ignore").name, "Rust");
        assert_eq!(find_syntax(&set, "nosuchlang").name, "Plain Text");
        assert_eq!(find_syntax(&set, "").name, "Plain Text");
    }

    #[test]
    fn no_block_means_plain() {
        let mut h = Highlighter::new(false, None);
        let mut out = Vec::new();
        h.highlight_line("x", &mut out);
        assert_eq!(out, b"x\x1b[0m");
    }
}
