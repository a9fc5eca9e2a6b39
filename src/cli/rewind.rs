//! `loki -s NAME --rewind [N]`: undoes the last N turns (default 1) of a session — the
//! files loki's tools changed in them and the messages — and prints what it restored.
//! A file someone changed after the turn is not overwritten: the rewind is refused and
//! names it (`.rewind` in the REPL asks instead). Changes made by shell commands are not
//! tracked.
//!
//! With a prompt (`loki -s NAME --rewind 1 "try it this way"`), the prompt is then asked
//! in the rewound session, as a one-shot run would — the "undo and ask again" of Claude
//! Code's and Codex's rewind/backtrack. A rewind that fails asks nothing.

use std::io::Write;
use std::sync::Arc;

use super::args::Args;
use crate::checkpoint::rewind::RewindError;
use crate::conversation::{Conversation, Outside};
use crate::error::CoreError;
use crate::render::theme::Theme;
use crate::state::AppState;
use loki_protocol::command::Restore;
use loki_protocol::command::{Applied, Command, Line};
use loki_wire::sanitize;

/// Runs the rewind; returns the exit status. When a prompt follows (`asks`: text or files
/// on the command line, or piped stdin), what was restored goes to stderr, leaving
/// stdout to the answer.
pub async fn run(state: &Arc<AppState>, args: &Args, asks: bool) -> anyhow::Result<u8> {
    let count = args.rewind.unwrap_or(1);
    let theme = Theme::stderr(&state.terminal);
    let name = args.session.as_deref().unwrap_or_default();
    // `-s NAME` elsewhere starts a session of that name; here there must be one to undo.
    if let Some(missing) = missing_session(state, args, name).await? {
        crate::term::report_error(&theme, &format!("cannot rewind: {missing}"));
        return Ok(1);
    }
    let mut conversation =
        Conversation::open(state, super::flags::spec(args, &state.terminal, None)).await?;
    let rewind = Command::Rewind {
        count,
        what: Restore::Both,
        force: false,
    };
    let result = conversation
        .command(rewind, &loki_protocol::emitter::Discard)
        .await;
    let finished = conversation
        .finish(result, &loki_protocol::emitter::Discard)
        .await;
    match &finished.ran {
        Ok(applied) => report_restored(&theme, applied, asks),
        Err(e) => {
            crate::term::report_error(&theme, &format!("cannot rewind: {}", explain(e, args)));
        }
    }
    if let Err(e) = &finished.closed.saved {
        crate::term::report_error(&theme, &e.to_string());
    }
    Ok(finished.exit_status(Outside::default()))
}

/// What the rewind restored: on stdout, or on stderr when a prompt follows (`asks`) and
/// stdout is the answer's.
fn report_restored(theme: &Theme, applied: &Applied, asks: bool) {
    let mut out = std::io::stdout().lock();
    for line in &applied.lines {
        let text = match line {
            Line::Note(text) => text.clone(),
            Line::Warning(text) => format!("warning: {text}"),
        };
        let text = sanitize::display(&text);
        if asks {
            crate::term::session_note(theme, &text);
        } else {
            let _ = writeln!(out, "{text}");
        }
    }
    // Only worth saying once files were put back: they may not be all that changed.
    crate::term::session_note(
        theme,
        "changes made by shell commands (execute_command) are not tracked",
    );
}

/// Why the session `name` cannot be rewound because it does not exist, with how to list
/// the ones that do; `None` when it exists.
async fn missing_session(
    state: &AppState,
    args: &Args,
    name: &str,
) -> anyhow::Result<Option<String>> {
    use crate::conversation::catalog;
    let (found, listing) = match &args.agent {
        Some(agent) => (
            catalog::stored_agent_session(state, agent, name).await?,
            format!("loki -a {agent} --list-sessions"),
        ),
        None => (
            catalog::stored_session(state, name).await?,
            "loki --list-sessions".to_string(),
        ),
    };
    Ok(found.is_none().then(|| {
        let name = sanitize::display(name);
        format!("there is no session `{name}` ({listing} shows them)")
    }))
}

/// The error, with what the command line can do instead where that differs from what
/// the engine's message implies.
fn explain(e: &CoreError, args: &Args) -> String {
    match e {
        CoreError::Rewind(RewindError::ConversationChanged { .. }) => {
            let name = sanitize::display(args.session.as_deref().unwrap_or_default());
            let agent = args
                .agent
                .as_deref()
                .map(|a| format!("-a {} ", sanitize::display(a)))
                .unwrap_or_default();
            format!(
                "{e}. --rewind undoes files and conversation together; to restore only the \
                 files, open the session with `loki {agent}-s {name}`, type .rewind and \
                 choose \"Files only\""
            )
        }
        _ => e.to_string(),
    }
}
