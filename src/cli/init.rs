//! `loki --init`: writes `AGENTS.md` for the repository in the working directory. The
//! model writes it from a compact view of the repository ([`crate::agents_md`]); its
//! answer is shown as it streams, then written atomically. An existing `AGENTS.md` is
//! replaced only when the person at the terminal says yes, or with `--force`; without a
//! terminal to ask on, loki refuses before anything is sent (exit 1).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::args::Args;
use crate::conversation::Conversation;
use crate::render::theme::Theme;
use crate::render::{Display, TerminalEmitter, TerminalOptions};
use crate::state::AppState;
use crate::term::yes_no::{self, Reply};
use loki_protocol::op::{RunOptions, UserInput};

/// Runs `--init`; returns the exit status.
pub async fn run(state: &Arc<AppState>, args: &Args) -> anyhow::Result<u8> {
    let theme = Theme::stderr(&state.terminal);
    let cwd = std::env::current_dir()?;
    let path = crate::agents_md::path_in(&cwd);
    let exists = path.exists();
    if exists && !args.force && !state.terminal.interactive() {
        anyhow::bail!(
            "{} already exists and there is no terminal to ask whether to replace it; \
             loki --init --force replaces it",
            path.display()
        );
    }
    let spec = super::flags::terminal_spec(args, &state.terminal);
    let mut conversation = Conversation::open(state, spec).await?;
    let display = Display::from_config(&state.config);
    let opts = TerminalOptions::detect(&state.terminal, &display, false);
    let emitter = TerminalEmitter::new(opts, Some(CancellationToken::new()));
    let input = UserInput {
        text: crate::agents_md::prompt(&crate::agents_md::survey(&cwd)),
        ..UserInput::default()
    };
    let ran = conversation
        .prompt(input, RunOptions::default(), None, &emitter)
        .await;
    let finished = conversation.finish(ran, &emitter).await;
    let outcome = match super::outcome_or_exit(finished, &theme) {
        Ok(outcome) => outcome,
        Err(status) => return Ok(status),
    };
    let text = crate::agents_md::from_answer(&outcome.text);
    if text.trim().is_empty() {
        anyhow::bail!("the model's answer was empty; {FILE} was not written");
    }
    if exists && !args.force && !confirm_replace(&path).await? {
        crate::term::session_note(&theme, &format!("kept the existing {FILE}"));
        return Ok(0);
    }
    crate::agents_md::write(&path, &text)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    crate::term::session_note(&theme, &format!("wrote {}", path.display()));
    Ok(0)
}

const FILE: &str = crate::agents_md::FILE_NAME;

/// Asks at the terminal whether to replace the existing file (no is the default).
async fn confirm_replace(path: &std::path::Path) -> anyhow::Result<bool> {
    let question = format!("{} exists; replace it with the text above?", path.display());
    let reply = tokio::task::spawn_blocking(move || {
        yes_no::ask(&question, false, "n keeps the existing file")
    })
    .await??;
    Ok(reply == Reply::Yes)
}
