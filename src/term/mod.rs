//! Terminal helpers the front ends share: error, warning and note lines on stderr, the
//! clipboard, the user's editor, one-line questions, sign-in (OAuth) prompts and the
//! knowledge-base setup questions. Nothing here knows about conversations or the engine.

pub mod approval;
pub mod ask;
pub mod clipboard;
pub mod editor;
pub mod history_picker;
pub mod json_lines;
pub mod line_prompt;
pub mod pager;
pub mod rag;
mod raw;
pub mod sign_in;
pub mod stdin_lines;
pub mod text_input;
pub mod vault_prompt;
mod withdrawable;
pub mod yes_no;

use std::io::Write;

use crate::render::theme::{Style, Theme};
use loki_wire::sanitize;

/// `error: <message>` on stderr; the message (often a provider's or server's words) has
/// its control characters escaped.
pub fn report_error(theme: &Theme, message: &str) {
    report(theme, Style::Error, "error:", message);
}

/// A message as one line: control characters escaped as everywhere, and line breaks
/// shown as `\n`, so text a server put in an error cannot start a line that looks like
/// loki's own.
pub fn one_line(message: &str) -> String {
    sanitize::display(message.trim_end_matches(['\n', '\r']))
        .replace("\r\n", "\\n")
        .replace('\n', "\\n")
}

/// `warning: <message>` on stderr, redacted and escaped like [`report_error`].
pub fn report_warning(theme: &Theme, message: &str) {
    report(theme, Style::Warning, "warning:", message);
}

/// `<label> <message>` on stderr, the message redacted and on one line.
fn report(theme: &Theme, style: Style, label: &str, message: &str) {
    // Known keys and tokens never reach the terminal, whatever a server echoed.
    let message = loki_wire::secrets::redact(message);
    let _ = writeln!(
        std::io::stderr().lock(),
        "{} {}",
        theme.paint(style, label),
        one_line(&message)
    );
}

/// A one-line note about the session on stderr (waiting for its lock, merges).
pub fn session_note(theme: &Theme, line: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}",
        theme.paint(Style::Dim, line)
    );
}
