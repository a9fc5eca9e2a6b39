//! The terminal's [`Approver`]: shows what a tool call would do (the command, the URL,
//! a coloured diff for file changes) on stderr and asks. Everything shown goes through
//! [`sanitize::approval`]: control, bidirectional and invisible characters appear as
//! escapes, so what is approved reads exactly as what runs.

use std::borrow::Cow;
use std::io::Write;

use futures_util::future::BoxFuture;

use crate::render::theme::{Style, Theme};
use crate::tool::approve::{ApprovalRequest, Approver};
use loki_protocol::op::Decision;
use loki_wire::sanitize;

const YES: &str = "yes";
const ALWAYS: &str = "yes, and don't ask again for this tool in this conversation";
const NO: &str = "no";
const NO_TELL: &str = "no, and tell the model why";
const VIEW: &str = "view it whole first";

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

    /// Shows the call, its head first: a question or preview taller than the screen is
    /// cut, what was left out is counted, and the whole text is returned for viewing
    /// (`None` when everything fit).
    fn show(&self, request: &ApprovalRequest) -> Option<String> {
        use crate::render::screenful::fit;
        let (cols, rows) = crossterm::terminal::size()
            .map(|(c, r)| (usize::from(c), usize::from(r)))
            .unwrap_or((80, 24));
        let mut err = std::io::stderr().lock();
        let tool = sanitize::approval_line(&request.tool);
        let summary = sanitize::approval_line(&request.summary);
        let label = self.label(request);
        let question = format!("{label}{tool} wants to {summary}");
        // The question (which holds a command) gets a quarter of the screen, the preview
        // what is left above the menu.
        let asked = fit(&question, (rows / 4).max(2), cols.saturating_sub(9));
        let preview = request.preview.as_deref().map(sanitize::approval);
        let preview_rows = rows.saturating_sub(asked.shown.lines().count() + 8).max(3);
        let previewed = preview.as_deref().map(|p| fit(p, preview_rows, cols));
        if let Some(previewed) = &previewed {
            for line in previewed.shown.lines() {
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
            if let Some(note) = previewed.hidden_note() {
                let _ = writeln!(err, "{}", self.theme.paint(Style::Warning, &note));
            }
        }
        let _ = writeln!(
            err,
            "{} {}",
            self.theme.paint(Style::Warning, "approve?"),
            asked.shown
        );
        if let Some(note) = asked.hidden_note() {
            let _ = writeln!(err, "{}", self.theme.paint(Style::Warning, &note));
        }
        if matches!(tool, Cow::Owned(_)) || matches!(summary, Cow::Owned(_)) {
            let _ = writeln!(
                err,
                "{} {}",
                self.theme.paint(Style::Warning, "note:"),
                sanitize::HIDDEN_NOTE
            );
        }
        let whole = asked.is_whole()
            && previewed
                .as_ref()
                .is_none_or(crate::render::screenful::Screenful::is_whole);
        if whole {
            return None;
        }
        let _ = writeln!(
            err,
            "{}",
            self.theme.paint(
                Style::Warning,
                "it does not fit on the screen: view it whole before it can run"
            )
        );
        let mut all = question;
        if let Some(preview) = preview {
            all = format!("{preview}\n\n{all}");
        }
        Some(all)
    }
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        let allow_always = request.allow_always;
        Box::pin(async move {
            // One question on the terminal at a time, whichever conversation asks.
            let _turn = crate::term::ask::one_at_a_time().await;
            let hidden = self.show(request);
            let asked = tokio::task::spawn_blocking(move || ask(allow_always, hidden));
            // A stop signal denies without waiting for the thread reading keys.
            tokio::select! {
                biased;
                () = crate::signals::stopping() => Decision::Deny,
                asked = asked => asked.unwrap_or(Decision::Deny),
            }
        })
    }
}

/// Asks; `hidden` (the whole text of a call that did not fit) must be viewed before yes
/// is offered.
fn ask(allow_always: bool, mut hidden: Option<String>) -> Decision {
    let choice = loop {
        let options = match (&hidden, allow_always) {
            (Some(_), _) => vec![VIEW, NO, NO_TELL],
            (None, true) => vec![YES, ALWAYS, NO, NO_TELL],
            (None, false) => vec![YES, NO, NO_TELL],
        };
        let choice = inquire::Select::new("Run it?", options)
            .without_help_message()
            .prompt();
        match (choice, hidden.take()) {
            (Ok(VIEW), Some(whole)) => crate::term::pager::show_whole(&whole),
            (choice, _) => break choice,
        }
    };
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
            why_asked: None,
        };
        assert_eq!(approver.label(&request("c1")), "");
        assert_eq!(approver.label(&request("c7")), "[c7] ");
    }
}
