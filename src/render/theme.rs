//! The only place that decides whether colour is used and which escape codes mean what
//! for diagnostics (errors, warnings, dimmed notes). Markdown palettes live with the
//! markdown renderer.

/// Output styling decisions for one stream (stdout or stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Emit ANSI escapes at all.
    pub color: bool,
    /// Light-background palette.
    pub light: bool,
}

/// Named styles for diagnostic text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Errors.
    Error,
    /// Warnings.
    Warning,
    /// Secondary information (reasoning, tool calls, notes).
    Dim,
    /// Emphasis.
    Bold,
    /// Additions (diffs).
    Success,
}

impl Theme {
    /// Decides colour for a stream: on only when it is a terminal, `NO_COLOR` is unset and
    /// highlighting is enabled.
    pub fn detect(is_tty: bool, no_color: bool, highlight: bool, light: bool) -> Self {
        Self {
            color: is_tty && !no_color && highlight,
            light,
        }
    }

    /// For messages on stderr: colour when stderr is a terminal and `NO_COLOR` is unset.
    pub fn stderr(caps: &crate::config::TerminalCaps) -> Self {
        Self::detect(caps.stderr_tty, caps.no_color, true, false)
    }

    /// For an interactive prompt or menu (drawn only on a terminal): colour unless
    /// `NO_COLOR`.
    pub fn prompt(caps: &crate::config::TerminalCaps) -> Self {
        Self::detect(true, caps.no_color, true, false)
    }

    /// No colour at all.
    pub fn plain() -> Self {
        Self {
            color: false,
            light: false,
        }
    }

    /// `text` wrapped in the style's escapes (or unchanged without colour).
    pub fn paint(&self, style: Style, text: &str) -> String {
        if !self.color {
            return text.to_string();
        }
        format!("{}{text}\x1b[0m", self.code(style))
    }

    /// The opening escape of a style ("" without colour).
    pub fn code(&self, style: Style) -> &'static str {
        if !self.color {
            return "";
        }
        match style {
            Style::Error => "\x1b[1;31m",
            Style::Warning => "\x1b[33m",
            Style::Dim => "\x1b[2m",
            Style::Bold => "\x1b[1m",
            Style::Success => "\x1b[32m",
        }
    }

    /// The reset escape ("" without colour).
    pub fn reset(&self) -> &'static str {
        if self.color { "\x1b[0m" } else { "" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(Theme::detect(true, false, true, false).color);
        assert!(!Theme::detect(false, false, true, false).color);
        assert!(!Theme::detect(true, true, true, false).color);
        assert!(!Theme::detect(true, false, false, false).color);
        assert_eq!(Theme::plain().paint(Style::Error, "x"), "x");
        assert_eq!(
            Theme::detect(true, false, true, false).paint(Style::Warning, "x"),
            "\x1b[33mx\x1b[0m"
        );
    }
}
