//! `--macro NAME args…`: runs a macro ([`crate::macros`]) in a fresh conversation built
//! from the flags (`-m`, `--yolo`), answers on stdout. Exit status: 0 when every step
//! ran, 2 for a usage error (unknown macro, missing argument), 1 when a step failed, the
//! signal's status when stopped.

use std::sync::Arc;

use anyhow::Context as _;

use super::args::Args;
use crate::conversation::{Conversation, ConversationSpec};
use crate::macros::{self, MacroError};
use crate::render::Display;
use crate::render::theme::Theme;
use crate::signals::StopWatch;
use crate::state::AppState;
use crate::term;

/// Runs the macro `args.macro_name` with `macro_args`; returns the exit status.
pub async fn run(state: &Arc<AppState>, args: &Args, macro_args: &[String]) -> anyhow::Result<u8> {
    let Some(name) = args.macro_name.as_deref() else {
        return Ok(2);
    };
    let stderr_theme = Theme::stderr(&state.terminal);
    // The macro's token: a signal cancels it, and with it every step.
    let cancel = tokio_util::sync::CancellationToken::new();
    let spec = ConversationSpec {
        cancel: Some(cancel.clone()),
        ..super::flags::terminal_spec(args, &state.terminal)
    };
    let conversation = Conversation::open(state, spec).await?;
    let stop = StopWatch::start(cancel.clone(), true).context("cannot listen for signals")?;
    let terminal = macros::Terminal {
        display: Display::from_config(&state.config),
        caps: state.terminal,
    };
    let result = macros::run(
        conversation,
        &state.paths.macros_dir,
        name,
        macro_args,
        &terminal,
        cancel,
    )
    .await;
    Ok(match result {
        Ok(()) => 0,
        Err(MacroError::Cancelled(_)) => {
            crate::signals::restore_terminal();
            stop.exit_code_or(130)
        }
        Err(e) => {
            term::report_error(&stderr_theme, &e.to_string());
            if e.is_usage() { 2 } else { 1 }
        }
    })
}
