//! `-e/--execute`: natural language in, one shell command out.
//!
//! The built-in `shell` role generates the command (without streaming). Without a
//! terminal only the command is printed — that is what the Alt-e shell integrations read.
//! On a terminal a one-line menu (arrows and Enter, or the first letter of an item) offers:
//! execute, revise (say what to change; the command is
//! regenerated in the same conversation), describe (the `explain-shell` role explains
//! it), copy, quit. Executed commands run in the user's shell and, when
//! `save_shell_history` is on, are appended to that shell's history file.
//! On the terminal the command is shown through [`sanitize::approval`]: a carriage
//! return, an escape sequence or a bidi override appears escaped (with a note), so the
//! command that runs is exactly the one the user read.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use crate::config::Env;
use crate::conversation::{Conversation, ConversationSpec};
use crate::error::CoreError;
use crate::render::theme::{Style, Theme};
use crate::render::{Display, TerminalEmitter, TerminalOptions};
use crate::state::AppState;
use loki_protocol::command::Command;
use loki_protocol::emitter::CollectingEmitter;
use loki_protocol::op::{RunOptions, UserInput};
use loki_wire::sanitize;

const MENU: &[&str] = &["execute", "revise", "describe", "copy", "quit"];

/// The menu for a command taller than the screen, until it was viewed whole.
const MENU_UNSEEN: &[&str] = &["view", "revise", "describe", "copy", "quit"];

/// `-e` from the command line: the conversation (with `-s` and `--empty-session`) framed
/// by the `shell` role, the shell assistant, and the session saved per the save policy.
pub async fn start(
    state: &Arc<AppState>,
    args: &crate::cli::args::Args,
    text: String,
) -> anyhow::Result<u8> {
    let mut commands = Vec::new();
    if let Some(name) = &args.session {
        commands.push(Command::OpenSession(name.clone()));
    }
    commands.push(Command::ForceRole("shell".into()));
    let spec = ConversationSpec {
        commands,
        // Held until the session is written, so a concurrent run on it waits.
        hold_session: true,
        ..super::flags::terminal_spec(args, &state.terminal)
    };
    let mut conversation = Conversation::open(state, spec).await?;
    let theme = stderr_theme(state);
    for warning in conversation.take_warnings() {
        crate::term::report_warning(&theme, &warning);
    }
    let input = UserInput {
        text,
        files: args.files.clone(),
        ..UserInput::default()
    };
    let status = run(state, &mut conversation, input).await;
    let saved = conversation
        .close(&CollectingEmitter::new())
        .await
        .into_saved()?;
    for warning in saved.warnings() {
        crate::term::report_warning(&theme, warning);
    }
    status
}

fn stderr_theme(state: &AppState) -> Theme {
    Theme::stderr(&state.terminal)
}

/// Runs `-e` for `request`; returns the exit status.
async fn run(
    state: &Arc<AppState>,
    conversation: &mut Conversation,
    request: UserInput,
) -> anyhow::Result<u8> {
    let mut command = generate(conversation, request).await?;
    let stdout_tty = state.terminal.stdout_tty;
    if conversation.status().dry_run || !stdout_tty {
        let shown = sanitize::for_terminal(&command, stdout_tty);
        writeln!(std::io::stdout().lock(), "{shown}")?;
        return Ok(0);
    }
    let theme = Theme::prompt(&state.terminal);
    let mut viewed = false;
    loop {
        let hidden = show_command(&theme, &command)?.filter(|_| !viewed);
        let menu = if hidden.is_some() { MENU_UNSEEN } else { MENU };
        let choice = super::menu::choose(&theme, menu);
        match choice {
            "view" => {
                crate::term::pager::show_whole(&hidden.unwrap_or_default());
                viewed = true;
            }
            "execute" => return Ok(execute(state, &command)),
            "revise" => {
                let Ok(change) = inquire::Text::new("What should change?").prompt() else {
                    return Ok(0);
                };
                let change = UserInput {
                    text: change,
                    ..UserInput::default()
                };
                command = generate(conversation, change).await?;
                viewed = false;
            }
            "describe" => {
                let model = conversation.status().model;
                describe(state, &model, &command).await?;
            }
            "copy" => match crate::term::clipboard::copy(&command) {
                Ok(tool) => {
                    writeln!(
                        std::io::stderr().lock(),
                        "{}",
                        theme.paint(Style::Dim, &format!("copied ({tool})"))
                    )?;
                    return Ok(0);
                }
                Err(e) => writeln!(
                    std::io::stderr().lock(),
                    "{} {}",
                    theme.paint(Style::Error, "error:"),
                    crate::term::one_line(&e.to_string())
                )?,
            },
            _ => return Ok(0),
        }
    }
}

/// The command as it will run: control, bidi and invisible characters escaped, with a
/// note when there are any. A command taller than the screen shows its head and a count
/// of the rest; its whole text comes back, to be viewed before it can run.
fn show_command(theme: &Theme, command: &str) -> std::io::Result<Option<String>> {
    let shown = sanitize::approval(command);
    let (cols, rows) = crossterm::terminal::size()
        .map(|(c, r)| (usize::from(c), usize::from(r)))
        .unwrap_or((80, 24));
    let head = crate::render::screenful::fit(&shown, rows.saturating_sub(10).max(3), cols);
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", theme.paint(Style::Warning, &head.shown))?;
    if let Some(note) = head.hidden_note() {
        writeln!(
            out,
            "{}",
            theme.paint(
                Style::Warning,
                &format!("{note}: view it whole before it can run")
            )
        )?;
    }
    if matches!(shown, std::borrow::Cow::Owned(_)) {
        writeln!(
            out,
            "{} {}",
            theme.paint(Style::Warning, "note:"),
            sanitize::HIDDEN_NOTE
        )?;
    }
    Ok((!head.is_whole()).then(|| shown.into_owned()))
}

/// One model call with the shell role; the reply without fences or blank lines.
async fn generate(conversation: &mut Conversation, input: UserInput) -> Result<String, CoreError> {
    let emitter = CollectingEmitter::new();
    let options = RunOptions {
        stream: Some(false),
        ..RunOptions::default()
    };
    let outcome = conversation.prompt(input, options, None, &emitter).await?;
    if conversation.status().dry_run {
        return Ok(outcome.text);
    }
    let command = crate::render::code::extract(&outcome.text)
        .text
        .trim()
        .to_string();
    if command.is_empty() {
        return Err(CoreError::InvalidRequest(
            "the model did not generate a command; try rephrasing".into(),
        ));
    }
    Ok(command)
}

/// Streams an explanation of `command` with the `explain-shell` role, in a conversation
/// of its own, with the model that generated the command.
async fn describe(state: &Arc<AppState>, model: &str, command: &str) -> Result<(), CoreError> {
    let spec = ConversationSpec {
        model: Some(model.to_string()),
        commands: vec![Command::UseRole("explain-shell".into())],
        ..ConversationSpec::default()
    };
    let mut conversation = Conversation::open(state, spec).await?;
    let display = Display::from_config(&state.config);
    let opts = TerminalOptions::detect(&state.terminal, &display, false);
    let emitter = TerminalEmitter::new(opts, None);
    let input = UserInput {
        text: command.to_string(),
        ..UserInput::default()
    };
    let ran = conversation
        .prompt(input, RunOptions::default(), None, &emitter)
        .await;
    conversation
        .finish(ran, &emitter)
        .await
        .into_result()
        .map(drop)
}

/// Runs the command in the user's shell with the terminal attached; returns its status.
fn execute(state: &AppState, command: &str) -> u8 {
    let shell = user_shell(&state.env);
    let status = std::process::Command::new(&shell)
        .arg("-c")
        .arg(command)
        .status();
    let code = match status {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            let _ = writeln!(std::io::stderr().lock(), "error: cannot run {shell}: {e}");
            return 1;
        }
    };
    if code == 0 && state.config.save_shell_history {
        save_history(&state.env, &shell, command);
    }
    u8::try_from(code).unwrap_or(1)
}

/// `$LOKI_SHELL`, else `$SHELL`, else `/bin/sh`.
pub(super) fn user_shell(env: &Env) -> String {
    env.get("LOKI_SHELL")
        .or_else(|| env.get("SHELL"))
        .unwrap_or("/bin/sh")
        .to_string()
}

/// Appends `command` to the history file of the shell, in that shell's format.
fn save_history(env: &Env, shell: &str, command: &str) {
    let name = std::path::Path::new(shell)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let home = env.get("HOME").map(PathBuf::from).unwrap_or_default();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (path, entry) = match name.as_str() {
        "zsh" => (
            env.get("HISTFILE")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".zsh_history")),
            format!(": {now}:0;{command}\n"),
        ),
        "fish" => (
            home.join(".local/share/fish/fish_history"),
            format!("- cmd: {command}\n  when: {now}\n"),
        ),
        "bash" | "sh" => (
            env.get("HISTFILE")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".bash_history")),
            format!("{command}\n"),
        ),
        _ => return,
    };
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
    {
        let _ = file.write_all(entry.as_bytes());
    }
}
