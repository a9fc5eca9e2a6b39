//! The first conversation of a run, described by the command-line flags: `-m`, `-s`,
//! `-r`, `--prompt`, `-c`, `--empty-session`, `--yolo`, `--dry-run`, `-S`,
//! `--save-session` and the preludes become a [`ConversationSpec`] whose commands are the
//! same [`Command`]s the REPL's dot-commands use.

use crate::config::TerminalCaps;
use std::sync::Arc;

use crate::cli::args::Args;
use crate::conversation::ConversationSpec;
use crate::render::theme::Theme;
use loki_protocol::command::Command;
use loki_protocol::event::ConversationId;

/// The conversation the flags describe. `prelude` (`cmd_prelude` or `repl_prelude`)
/// applies when no session or role flag was given: `--prompt` wins over `-r`, which wins
/// over the `code` role of `-c`; `-m` wins over the session's and the role's model.
pub fn spec(args: &Args, caps: &TerminalCaps, prelude: Option<&str>) -> ConversationSpec {
    let theme = Theme::stderr(caps);
    let explicit = args.session.is_some()
        || args.role.is_some()
        || args.prompt.is_some()
        || args.code
        || args.agent.is_some();
    let mut commands = Vec::new();
    if let Some(name) = &args.agent {
        commands.push(Command::UseAgent {
            name: name.clone(),
            variables: args
                .agent_variable
                .chunks(2)
                .filter_map(|pair| match pair {
                    [name, value] => Some((name.clone(), value.clone())),
                    _ => None,
                })
                .collect(),
            session: args.session.clone(),
        });
    } else if explicit {
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
    if let Some(mode) = &args.permission_mode {
        commands.push(Command::Set {
            key: "permission_mode".into(),
            value: mode.clone(),
        });
    }
    ConversationSpec {
        model: args.model.clone(),
        prelude: prelude.filter(|_| !explicit).map(str::to_string),
        commands,
        empty_session: args.empty_session,
        build_agent_rag: args.build_agent_rag,
        auto_continue: args.auto_continue,
        otr: args.otr,
        yolo: args.yolo,
        sandbox_mode: args
            .sandbox
            .as_deref()
            .and_then(crate::sandbox::SandboxMode::parse),
        add_dirs: args.add_dir.clone(),
        dry_run: args.dry_run,
        no_stream: args.no_stream,
        force_save: args.save_session,
        notices: Some(Arc::new(move |line: &str| {
            crate::term::session_note(&theme, line);
        })),
        ..ConversationSpec::default()
    }
}

/// Who approves tool calls when a person may be there: with a terminal to ask on, that
/// person (the conversation `own` is the front end's: its calls are not labelled);
/// otherwise `None` (calls that need approval are refused, unless `--yolo`).
pub fn terminal_approver(
    caps: &TerminalCaps,
    own: &ConversationId,
) -> Option<Arc<dyn crate::tool::approve::Approver>> {
    if !caps.interactive() {
        return None;
    }
    let theme = Theme::prompt(caps);
    Some(Arc::new(crate::term::approval::TerminalApprover::new(
        theme, own,
    )))
}
