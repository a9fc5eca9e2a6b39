//! The terminal's [`Approver`]: shows what a tool call would do (the command, the URL,
//! a coloured diff for file changes) on stderr and asks. Everything shown goes through
//! [`sanitize::approval`]: control, bidirectional and invisible characters appear as
//! escapes, so what is approved reads exactly as what runs.

use std::borrow::Cow;
use std::io::Write;

use futures_util::future::BoxFuture;

use crate::render::sanitize;
use crate::render::theme::{Style, Theme};
use crate::tool::approve::{ApprovalRequest, Approver, Decision};

/// Lines of a preview shown before the question.
const PREVIEW_LINES: usize = 400;

const YES: &str = "yes";
const ALWAYS: &str = "yes, and don't ask again for this tool in this conversation";
const NO: &str = "no";
const NO_TELL: &str = "no, and tell the model why";

/// Asks the person at the terminal.
#[derive(Debug, Clone)]
pub struct TerminalApprover {
    theme: Theme,
    /// The front end's own conversation: its calls are not labelled.
    own: String,
}

impl TerminalApprover {
    /// An approver painting with `theme` (stderr's) for a front end whose own
    /// conversation is `own`; calls of other conversations are labelled with theirs.
    pub fn new(theme: Theme, own: &str) -> Self {
        Self {
            theme,
            own: own.into(),
        }
    }

    /// `[c7] ` for a call of another conversation than the front end's own.
    fn label(&self, request: &ApprovalRequest) -> String {
        if request.from == self.own || request.from.is_empty() {
            String::new()
        } else {
            format!("[{}] ", sanitize::approval_line(&request.from))
        }
    }

    fn show(&self, request: &ApprovalRequest) {
        let mut err = std::io::stderr().lock();
        if let Some(preview) = &request.preview {
            let total = preview.lines().count();
            for line in preview.lines().take(PREVIEW_LINES) {
                let line = &sanitize::approval(line);
                let style = match line.chars().next() {
                    Some('+') if !line.starts_with("+++") => Some(Style::Success),
                    Some('-') if !line.starts_with("---") => Some(Style::Error),
                    Some('@') => Some(Style::Dim),
                    _ => None,
                };
                let _ = match style {
                    Some(style) => writeln!(err, "{}", self.theme.paint(style, line)),
                    None => writeln!(err, "{line}"),
                };
            }
            if total > PREVIEW_LINES {
                let _ = writeln!(
                    err,
                    "{}",
                    self.theme.paint(
                        Style::Warning,
                        &format!("… {} more lines not shown", total - PREVIEW_LINES)
                    )
                );
            }
        }
        let tool = sanitize::approval_line(&request.tool);
        let summary = sanitize::approval_line(&request.summary);
        let label = self.label(request);
        let _ = writeln!(
            err,
            "{} {label}{tool} wants to {summary}",
            self.theme.paint(Style::Warning, "approve?"),
        );
        if matches!(tool, Cow::Owned(_)) || matches!(summary, Cow::Owned(_)) {
            let _ = writeln!(
                err,
                "{} {}",
                self.theme.paint(Style::Warning, "note:"),
                sanitize::HIDDEN_NOTE
            );
        }
    }
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        let allow_always = request.allow_always;
        Box::pin(async move {
            // One question on the terminal at a time, whichever conversation asks.
            let _turn = crate::term::ask::one_at_a_time().await;
            self.show(request);
            let asked = tokio::task::spawn_blocking(move || ask(allow_always)).await;
            asked.unwrap_or(Decision::Deny)
        })
    }
}

fn ask(allow_always: bool) -> Decision {
    let options = if allow_always {
        vec![YES, ALWAYS, NO, NO_TELL]
    } else {
        vec![YES, NO, NO_TELL]
    };
    let choice = inquire::Select::new("Run it?", options)
        .without_help_message()
        .prompt();
    match choice {
        Err(
            inquire::InquireError::OperationInterrupted | inquire::InquireError::OperationCanceled,
        ) => Decision::Cancel,
        Ok(YES) => Decision::Approve,
        Ok(ALWAYS) => Decision::ApproveAlways,
        Ok(NO_TELL) => match crate::term::text_input::ask("Tell the model:", "", |_| Ok(())) {
            Ok(message) if !message.trim().is_empty() => Decision::DenyWithMessage(message),
            _ => Decision::Deny,
        },
        _ => Decision::Deny,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_of_other_conversations_are_labelled() {
        let approver = TerminalApprover::new(Theme::plain(), "c1");
        let request = |from: &str| ApprovalRequest {
            call_id: "call_1".into(),
            tool: "fs_write".into(),
            summary: "write notes.txt".into(),
            preview: None,
            allow_always: true,
            from: from.into(),
        };
        assert_eq!(approver.label(&request("c1")), "");
        assert_eq!(approver.label(&request("c7")), "[c7] ");
    }
}
