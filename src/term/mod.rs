//! Terminal helpers the front ends share: error, warning and note lines on stderr, the
//! clipboard, the user's editor, one-line questions, sign-in (OAuth) prompts and the
//! knowledge-base setup questions. Nothing here knows about conversations or the engine.

pub mod approval;
pub mod ask;
pub mod clipboard;
pub mod editor;
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

use crate::render::sanitize;
use crate::render::theme::{Style, Theme};

/// `error: <message>` on stderr; the message (often a provider's or server's words) has
/// its control characters escaped.
pub fn report_error(theme: &Theme, message: &str) {
    // Known keys and tokens never reach the terminal, whatever a server echoed.
    let message = crate::secrets::redact(message);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "{} {}",
        theme.paint(Style::Error, "error:"),
        one_line(&message)
    );
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
    let message = crate::secrets::redact(message);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "{} {}",
        theme.paint(Style::Warning, "warning:"),
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
