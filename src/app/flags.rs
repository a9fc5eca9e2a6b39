//! The first conversation of a run, built from the command-line flags: `-s`, `-r`,
//! `--prompt`, `-c`, `-m`, `--empty-session`, `--yolo` and the preludes. Every change goes
//! through the same [`Command`]s the REPL's dot-commands use.

use std::io::IsTerminal;
use std::sync::Arc;

use crate::cli::args::Args;
use crate::context::RequestContext;
use crate::engine::CoreError;
use crate::engine::command::{self, Command};
use crate::render::theme::Theme;
use crate::state::AppState;

/// Who approves tool calls: `--yolo` approves all; with a terminal to ask on, the
/// person there; otherwise calls that need approval are refused.
pub fn set_approver(ctx: &mut RequestContext, args: &Args) {
    if args.yolo {
        ctx.tool_policy.yolo = true;
    }
    let interactive = std::io::stderr().is_terminal() && std::io::stdin().is_terminal();
    if interactive {
        let theme = Theme::detect(true, std::env::var_os("NO_COLOR").is_some(), true, false);
        ctx.approver = Arc::new(crate::term::approval::TerminalApprover::new(theme, &ctx.id));
    }
}

/// `cmd_prelude` / `repl_prelude`: `role:<name>`, `session:<name>` or
/// `<session>:<role>`, applied when no role or session was given on the command line.
fn prelude_commands(prelude: &str) -> Result<Vec<Command>, CoreError> {
    let (session, role) = match prelude.split_once(':') {
        Some(("role", name)) => (None, Some(name)),
        Some(("session", name)) => (Some(name), None),
        Some((session, role)) => (Some(session), Some(role)),
        None => {
            return Err(CoreError::InvalidRequest(format!(
                "invalid prelude `{prelude}`: use role:<name>, session:<name> or <session>:<role>"
            )));
        }
    };
    let mut commands = Vec::new();
    if let Some(name) = session {
        commands.push(Command::OpenSession(name.to_string()));
    }
    if let Some(name) = role {
        // A session with history keeps its role (see `apply_role_flags`).
        commands.push(Command::UseRole(name.to_string()));
    }
    Ok(commands)
}

/// Applies `-s`, then the role flags, then `-m` (or the prelude when none of them is
/// given), as [`Command`]s: `--prompt` (a temporary role) wins over `-r`, which wins over
/// the `code` role of `-c`; `-m` overrides the session's and the role's model.
pub fn apply_role_flags(
    state: &AppState,
    ctx: &mut RequestContext,
    args: &Args,
    prelude: Option<&str>,
) -> Result<(), CoreError> {
    let explicit =
        args.session.is_some() || args.role.is_some() || args.prompt.is_some() || args.code;
    let mut commands = Vec::new();
    if let Some(prelude) = prelude.filter(|p| !explicit && !p.trim().is_empty()) {
        commands = prelude_commands(prelude)?;
    } else {
        if let Some(name) = &args.session {
            commands.push(Command::OpenSession(name.clone()));
        }
        match (&args.prompt, &args.role, args.code) {
            (Some(prompt), _, _) => commands.push(Command::UsePrompt(prompt.clone())),
            (None, Some(name), _) => commands.push(Command::UseRole(name.clone())),
            (None, None, true) => commands.push(Command::UseRole("code".into())),
            _ => {}
        }
    }
    if let Some(model) = &args.model {
        commands.push(Command::SetModel(model.clone()));
    }
    for command in commands {
        let from_prelude = prelude.is_some() && !explicit;
        let keeps_role = matches!(command, Command::UseRole(_)) && !ctx.history.is_empty();
        if from_prelude && keeps_role {
            continue;
        }
        command::apply_now(state, ctx, command)?;
    }
    Ok(())
}

/// `--empty-session`: forget the session's conversation (after taking its lock, when
/// the run holds one, so nobody else's exchange is forgotten unseen).
pub fn empty_session(
    state: &AppState,
    ctx: &mut RequestContext,
    args: &Args,
) -> Result<(), CoreError> {
    if args.empty_session && ctx.session.is_some() {
        command::apply_now(state, ctx, Command::ClearConversation)?;
    }
    Ok(())
}
