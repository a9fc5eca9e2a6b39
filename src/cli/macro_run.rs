//! `--macro NAME args…`: runs a macro ([`crate::macros`]) in a fresh conversation built
//! from the flags (`-m`, `--yolo`), answers on stdout. Exit status: 0 when every step
//! ran, 2 for a usage error (unknown macro, missing argument), 1 when a step failed, the
//! signal's status when stopped.

use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::Context as _;

use super::args::Args;
use crate::context::RequestContext;
use crate::macros::{self, MacroError};
use crate::render::Display;
use crate::render::theme::Theme;
use crate::state::AppState;
use crate::term;

/// Runs the macro `args.macro_name` with `macro_args`; returns the exit status.
pub async fn run(state: &Arc<AppState>, args: &Args, macro_args: &[String]) -> anyhow::Result<u8> {
    let Some(name) = args.macro_name.as_deref() else {
        return Ok(2);
    };
    let no_color = state.env.get("NO_COLOR").is_some();
    let stderr_theme = Theme::detect(std::io::stderr().is_terminal(), no_color, true, false);
    let mut ctx = RequestContext::resolve(state, args.model.as_deref())?;
    crate::app::set_approver(&mut ctx, args);
    if args.dry_run {
        ctx.dry_run = true;
    }
    if args.no_stream {
        ctx.stream = false;
    }

    let stopped = Arc::new(std::sync::OnceLock::new());
    let mut signals =
        crate::signals::StopSignals::listen(true).context("cannot listen for signals")?;
    let listener = {
        let cancel = ctx.cancel.clone();
        let stopped = Arc::clone(&stopped);
        tokio::spawn(async move {
            let signal = signals.recv().await;
            let _ = stopped.set(signal);
            cancel.cancel();
            loop {
                signals.recv().await;
            }
        })
    };
    let terminal = macros::Terminal {
        display: Display::from_config(&state.config),
        no_color,
    };
    let result = macros::run(state, &mut ctx, name, macro_args, &terminal).await;
    listener.abort();
    Ok(match result {
        Ok(()) => 0,
        Err(MacroError::Cancelled(_)) => {
            crate::signals::restore_terminal();
            stopped
                .get()
                .map_or(130, |s: &crate::signals::StopSignal| s.exit_code())
        }
        Err(e) => {
            term::report_error(&stderr_theme, &e.to_string());
            if e.is_usage() { 2 } else { 1 }
        }
    })
}
