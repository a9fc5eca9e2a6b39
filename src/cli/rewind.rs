//! `loki -s NAME --rewind [N]`: undoes the last N turns (default 1) of a session — the
//! files loki's tools changed in them and the messages — and prints what it restored.
//! A file someone changed after the turn is not overwritten: the rewind is refused and
//! names it (`.rewind` in the REPL asks instead). Changes made by shell commands are not
//! tracked.

use std::io::Write;
use std::sync::Arc;

use super::args::Args;
use crate::checkpoint::rewind::Restore;
use crate::conversation::{Conversation, Op};
use crate::engine::command::{Command, Line};
use crate::render::sanitize;
use crate::render::theme::Theme;
use crate::state::AppState;

/// Runs the rewind; returns the exit status.
pub async fn run(state: &Arc<AppState>, args: &Args) -> anyhow::Result<u8> {
    let count = args.rewind.unwrap_or(1);
    let theme = Theme::stderr(&state.terminal);
    let mut conversation =
        Conversation::open(state, super::flags::spec(args, &state.terminal, None)).await?;
    let op = Op::Command(Command::Rewind {
        count,
        what: Restore::Both,
        force: false,
    });
    let result = conversation.submit(op, &crate::engine::Discard).await;
    crate::term::session_note(
        &theme,
        "changes made by shell commands (execute_command) are not tracked",
    );
    let status = match result {
        Ok(reply) => {
            let mut out = std::io::stdout().lock();
            for line in reply.into_applied().lines {
                let text = match line {
                    Line::Note(text) => text,
                    Line::Warning(text) => format!("warning: {text}"),
                };
                let _ = writeln!(out, "{}", sanitize::display(&text));
            }
            0
        }
        Err(e) => {
            crate::term::report_error(&theme, &format!("cannot rewind: {e}"));
            1
        }
    };
    let closed = conversation.close(&crate::engine::Discard).await;
    if let Err(e) = closed.saved {
        crate::term::report_error(&theme, &e.to_string());
        return Ok(1);
    }
    Ok(status)
}
