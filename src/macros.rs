//! Macros: `macros/<name>.yaml` files holding REPL lines (`steps`) with `{{var}}`
//! placeholders filled from positional arguments (`variables`). A macro runs in a
//! conversation of its own, given by the caller, so the caller's conversation (its model,
//! role, session and history) is left as it was. Each step is parsed by the dot-command
//! table ([`crate::dotcmd`]): conversation changes go through
//! [`crate::conversation::engine::command::apply`], prompts through [`Engine::run`]. The first step that
//! fails stops the macro and is named in the error.
//!
//! Both front ends use this module (`--macro` in `app`, `.macro` in the REPL); it imports
//! neither.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::conversation::{Conversation, Report};
use crate::dotcmd::{self, Action};
use crate::error::CoreError;
use crate::render::{Display, TerminalEmitter, TerminalOptions};
use loki_protocol::command::Command;
use loki_protocol::op::{RunOptions, UserInput};
use loki_wire::sanitize;

/// Macros shipped with loki, installed into the macros directory on first run.
pub const BUILTIN: &[(&str, &str)] = &[(
    "generate-commit-message",
    include_str!("../assets/macros/generate-commit-message.yaml"),
)];

/// A macro file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Macro {
    /// Positional variables, in argument order.
    #[serde(default)]
    pub variables: Vec<Variable>,
    /// REPL lines, run in order.
    #[serde(default)]
    pub steps: Vec<String>,
}

/// One variable of a macro.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variable {
    /// Referenced in steps as `{{name}}`.
    pub name: String,
    /// Used when no argument is given; without one the argument is required.
    #[serde(default)]
    pub default: Option<String>,
    /// The last variable may take all remaining arguments, joined by spaces.
    #[serde(default)]
    pub rest: bool,
}

/// Why a macro could not run or stopped.
#[derive(Debug, thiserror::Error)]
pub enum MacroError {
    /// No such file.
    #[error("unknown macro `{name}` (no {path}); --list-macros shows the macros")]
    Unknown {
        /// The name asked for.
        name: String,
        /// Where it was looked for.
        path: String,
    },
    /// A name that is not a plain file name.
    #[error("invalid macro name `{0}`: use letters, digits, `-`, `_` and `.`")]
    BadName(String),
    /// The file is not a valid macro.
    #[error("invalid macro file {path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Wrong arguments.
    #[error("{0}")]
    Usage(String),
    /// A step failed; the macro stopped there.
    #[error("macro `{name}` stopped at step {number} (`{step}`): {message}")]
    Step {
        /// The macro.
        name: String,
        /// 1-based step number.
        number: usize,
        /// The step after substitution.
        step: String,
        /// What went wrong.
        message: String,
    },
    /// Stopped by Ctrl-C or a signal.
    #[error("macro `{0}` was interrupted")]
    Cancelled(String),
}

impl MacroError {
    /// Whether this is a usage error (bad name, missing argument) rather than a failure.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Self::Unknown { .. } | Self::BadName(_) | Self::Usage(_)
        )
    }
}

/// Macro names: `*.yaml` files in `dir` plus the built-ins, sorted, without duplicates.
pub fn list(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = BUILTIN.iter().map(|(n, _)| (*n).to_string()).collect();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) == Some("yaml")
                && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
                && !stem.starts_with('.')
            {
                names.push(stem.to_string());
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Writes the built-in macros that are not in `dir` yet (the user's files are never
/// overwritten).
pub fn install_builtins(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, text) in BUILTIN {
        let path = dir.join(format!("{name}.yaml"));
        if !path.exists() {
            crate::atomic_file::write_atomic(&path, text.as_bytes(), false)?;
        }
    }
    Ok(())
}

/// Deletes `macros/<name>.yaml`; the path deleted.
pub fn delete(dir: &Path, name: &str) -> Result<PathBuf, MacroError> {
    if !valid_name(name) {
        return Err(MacroError::BadName(name.to_string()));
    }
    let path = dir.join(format!("{name}.yaml"));
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(MacroError::Unknown {
            name: name.to_string(),
            path: path.display().to_string(),
        }),
        Err(e) => Err(MacroError::Invalid {
            path: path.display().to_string(),
            message: format!("cannot delete it: {e}"),
        }),
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Reads `dir/<name>.yaml` (a built-in one if the file is missing).
pub fn load(dir: &Path, name: &str) -> Result<Macro, MacroError> {
    if !valid_name(name) {
        return Err(MacroError::BadName(name.to_string()));
    }
    let path: PathBuf = dir.join(format!("{name}.yaml"));
    let text = match crate::atomic_file::read_regular_text(&path, crate::atomic_file::MAX_OWN_FILE)
    {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            match BUILTIN.iter().find(|(n, _)| *n == name) {
                Some((_, text)) => (*text).to_string(),
                None => {
                    return Err(MacroError::Unknown {
                        name: name.to_string(),
                        path: path.display().to_string(),
                    });
                }
            }
        }
        Err(e) => {
            return Err(MacroError::Invalid {
                path: path.display().to_string(),
                message: e.to_string(),
            });
        }
    };
    let invalid = |message: String| MacroError::Invalid {
        path: path.display().to_string(),
        message,
    };
    let def: Macro = serde_yaml::from_str(&text).map_err(|e| invalid(e.to_string()))?;
    if def.steps.is_empty() {
        return Err(invalid("it has no `steps`".into()));
    }
    for (i, var) in def.variables.iter().enumerate() {
        if var.name.trim().is_empty() {
            return Err(invalid(format!("variable {} has no name", i + 1)));
        }
        if var.rest && i + 1 != def.variables.len() {
            return Err(invalid(format!(
                "only the last variable may have `rest: true` (not `{}`)",
                var.name
            )));
        }
    }
    Ok(def)
}

/// `name <a> [b] <c>...`: how to call the macro.
pub fn usage(name: &str, def: &Macro) -> String {
    let mut out = name.to_string();
    for var in &def.variables {
        let (open, close) = if var.default.is_some() {
            ("[", "]")
        } else {
            ("<", ">")
        };
        let dots = if var.rest { "..." } else { "" };
        out.push_str(&format!(" {open}{}{close}{dots}", var.name));
    }
    out
}

/// Binds positional `args` to the macro's variables.
pub fn bind(
    name: &str,
    def: &Macro,
    args: &[String],
) -> Result<HashMap<String, String>, MacroError> {
    let mut values = HashMap::new();
    let mut rest = args.iter();
    for var in &def.variables {
        let value = if var.rest {
            let all: Vec<&str> = rest.by_ref().map(String::as_str).collect();
            (!all.is_empty()).then(|| all.join(" "))
        } else {
            rest.next().cloned()
        };
        let Some(value) = value.or_else(|| var.default.clone()) else {
            return Err(MacroError::Usage(format!(
                "missing value for variable `{}`; usage: {}",
                var.name,
                usage(name, def)
            )));
        };
        values.insert(var.name.clone(), value);
    }
    let extra = rest.count();
    if extra > 0 {
        return Err(MacroError::Usage(format!(
            "{extra} argument(s) too many; usage: {}",
            usage(name, def)
        )));
    }
    Ok(values)
}

/// Replaces `{{name}}` (spaces inside the braces allowed) by the variable's value;
/// placeholders naming no variable are left as they are.
pub fn substitute(step: &str, values: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(step.len());
    let mut rest = step;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => match values.get(after[..end].trim()) {
                Some(value) => {
                    out.push_str(value);
                    rest = &after[end + 2..];
                }
                None => {
                    out.push_str("{{");
                    rest = after;
                }
            },
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// How a macro's output is shown.
pub struct Terminal {
    /// Display settings for answers.
    pub display: Display,
    /// The terminal, as captured at start-up.
    pub caps: crate::config::TerminalCaps,
}

/// Where a macro's output goes: the terminal ([`Terminal`]), or a caller that collects
/// it (`loki --mcp-server`'s macro tools).
pub trait Output: Sync {
    /// Where a step's events go (`cancel`: the token the answer's Ctrl-C stops).
    fn events(
        &self,
        cancel: Option<tokio_util::sync::CancellationToken>,
    ) -> Box<dyn loki_protocol::emitter::Emitter + '_>;
    /// Shows the step about to run.
    fn echo(&self, step: &str);
    /// A command's confirmation or warning.
    fn note(&self, line: &str);
    /// A read-only command's report (`.info`, `.context`), shown like an answer.
    fn report(&self, text: &str);
    /// The display rows of `.info`.
    fn info_rows(&self) -> Vec<crate::conversation::info::Row>;
}

impl Output for Terminal {
    fn events(
        &self,
        cancel: Option<tokio_util::sync::CancellationToken>,
    ) -> Box<dyn loki_protocol::emitter::Emitter + '_> {
        Box::new(TerminalEmitter::new(
            TerminalOptions::detect(&self.caps, &self.display, false),
            cancel,
        ))
    }

    fn echo(&self, step: &str) {
        echo(step);
    }

    fn note(&self, line: &str) {
        note(line);
    }

    fn report(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", sanitize::display(text.trim_end_matches('\n')));
        let _ = out.flush();
    }

    fn info_rows(&self) -> Vec<crate::conversation::info::Row> {
        self.display.info_rows()
    }
}

/// Runs macro `name` of `macros_dir` with `args` in `conversation` (a fresh one the
/// caller opened, with `cancel` as its token: a cancelled token stops it between steps).
/// Each step is echoed as `>> <step>` on stderr, confirmations follow as notes, answers
/// stream on stdout. The conversation is finished at the end: a session opened by a step
/// is saved per the save policy.
pub async fn run(
    mut conversation: Conversation,
    macros_dir: &Path,
    name: &str,
    args: &[String],
    term: &dyn Output,
    cancel: tokio_util::sync::CancellationToken,
) -> Result<(), MacroError> {
    let def = load(macros_dir, name)?;
    let values = bind(name, &def, args)?;
    let mut result = Ok(());
    for (i, raw) in def.steps.iter().enumerate() {
        // A signal stops a long macro between steps, not only inside a prompt. Steps
        // that never wait (`.set …`) would keep the one-shot runtime's signal listener
        // from running at all: each step lets it in first.
        tokio::task::yield_now().await;
        if cancel.is_cancelled() {
            result = Err(MacroError::Cancelled(name.to_string()));
            break;
        }
        let step = substitute(raw, &values);
        if step.trim().is_empty() {
            continue;
        }
        term.echo(&step);
        // Whether a step is a dot-command is decided by the file, never by an argument:
        // `"{{text}}"` given `.delete session x` stays a prompt.
        let command = raw.trim_start().starts_with('.');
        if let Err(message) = run_step(&mut conversation, &step, command, term, &cancel).await {
            result = Err(match message {
                StepError::Cancelled => MacroError::Cancelled(name.to_string()),
                StepError::Failed(message) => MacroError::Step {
                    name: name.to_string(),
                    number: i + 1,
                    step: short(&step),
                    message,
                },
            });
            break;
        }
    }
    let emitter = term.events(None);
    if let Err(e) = conversation.close(emitter.as_ref()).await.into_saved()
        && result.is_ok()
    {
        result = Err(MacroError::Step {
            name: name.to_string(),
            number: def.steps.len(),
            step: "(saving the session)".into(),
            message: e.to_string(),
        });
    }
    result
}

/// A step as named in an error: its first line, at most 80 characters, redacted.
fn short(step: &str) -> String {
    let first = step.trim().lines().next().unwrap_or_default();
    let mut out: String = first.chars().take(80).collect();
    if out.len() < first.len() || step.trim().lines().nth(1).is_some() {
        out.push('…');
    }
    loki_wire::secrets::redact(&out).into_owned()
}

enum StepError {
    Cancelled,
    Failed(String),
}

impl From<CoreError> for StepError {
    fn from(e: CoreError) -> Self {
        match e {
            CoreError::Cancelled => Self::Cancelled,
            e => Self::Failed(e.to_string()),
        }
    }
}

async fn run_step(
    conversation: &mut Conversation,
    step: &str,
    command: bool,
    term: &dyn Output,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<(), StepError> {
    let action = if command {
        dotcmd::parse(step)
    } else {
        Action::Ask(UserInput {
            text: step.to_string(),
            ..UserInput::default()
        })
    };
    let command = match action {
        Action::Apply(cmd) => cmd,
        Action::OpenSession(name) => Command::OpenSession(name),
        Action::SaveSession(name) => Command::SaveSession(name),
        Action::ExitSession => {
            let save = conversation.status().saves_unattended;
            Command::CloseSession { save, rename: None }
        }
        Action::CompressSession => Command::CompressSession,
        Action::SaveRole(name) => Command::SaveRole(name),
        Action::DeleteRole(name) => Command::DeleteRole(name),
        Action::DeleteSession(name) => Command::DeleteSession(name),
        Action::UseRag { name, documents } if documents.is_empty() => Command::UseRag(name),
        Action::ExitRag => Command::ExitRag,
        Action::Ask(input) => {
            let emitter = term.events(Some(cancel.clone()));
            let result = conversation
                .prompt(input, RunOptions::default(), None, emitter.as_ref())
                .await;
            drop(emitter);
            result?;
            return Ok(());
        }
        Action::AskWithRole { role, input } => {
            let emitter = term.events(Some(cancel.clone()));
            let result = conversation
                .prompt(input, RunOptions::default(), Some(role), emitter.as_ref())
                .await;
            drop(emitter);
            result?;
            return Ok(());
        }
        Action::Info
        | Action::InfoRole
        | Action::InfoSession
        | Action::InfoAgent
        | Action::InfoPermissions
        | Action::ToolResults
        | Action::Context
        | Action::RagSources => return report(conversation, &action, term),
        Action::Usage(message) => return Err(StepError::Failed(message)),
        Action::Macro { .. } => {
            return Err(StepError::Failed("a macro cannot run another macro".into()));
        }
        _ => {
            let word = step.split_whitespace().next().unwrap_or(step);
            return Err(StepError::Failed(format!(
                "`{word}` cannot be used in a macro (it needs the interactive REPL)"
            )));
        }
    };
    // A command's confirmations go to stderr.
    let emitter = term.events(None);
    let applied = conversation.command(command, emitter.as_ref()).await?;
    for line in &applied.lines {
        match line {
            loki_protocol::command::Line::Note(text) => term.note(text),
            loki_protocol::command::Line::Warning(text) => term.note(&format!("warning: {text}")),
        }
    }
    Ok(())
}

/// A read-only dot-command in a macro (`.info`, `.info session`, `.context`, …): its
/// report goes to stdout like an answer.
fn report(
    conversation: &Conversation,
    action: &Action,
    term: &dyn Output,
) -> Result<(), StepError> {
    let none = |what: &str| StepError::Failed(format!("no {what} is active"));
    let text = match action {
        Action::Info => conversation
            .report(Report::Info(term.info_rows()))
            .unwrap_or_default(),
        Action::InfoRole => conversation.role().ok_or_else(|| none("role"))?.export(),
        Action::InfoSession => conversation
            .report(Report::Session)
            .ok_or_else(|| none("session"))?,
        Action::InfoAgent => conversation
            .report(Report::Agent)
            .ok_or_else(|| none("agent"))?,
        Action::InfoPermissions => conversation.report(Report::Permissions).unwrap_or_default(),
        Action::ToolResults => conversation
            .report(Report::ToolResults)
            .unwrap_or_else(|| "the last turn called no tools".into()),
        Action::Context => conversation.context_report().render(),
        Action::RagSources => {
            let status = conversation.status();
            status.rag.ok_or_else(|| none("knowledge base"))?;
            status.rag_sources.join("\n")
        }
        _ => return Ok(()),
    };
    term.report(&text);
    Ok(())
}

/// `>> step`, continuation lines as `.. line` (the first ten), on stderr.
fn echo(step: &str) {
    const SHOWN: usize = 10;
    let mut err = std::io::stderr().lock();
    let lines: Vec<&str> = step.trim().lines().collect();
    for (i, line) in lines.iter().take(SHOWN).enumerate() {
        let lead = if i == 0 { ">>" } else { ".." };
        let line = loki_wire::secrets::redact(line);
        let _ = writeln!(err, "{lead} {}", sanitize::display(&line));
    }
    if lines.len() > SHOWN {
        let _ = writeln!(err, ".. ({} more lines)", lines.len() - SHOWN);
    }
    let _ = err.flush();
}

fn note(line: &str) {
    let line = loki_wire::secrets::redact(line);
    let _ = writeln!(std::io::stderr().lock(), "{}", sanitize::display(&line));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(yaml: &str) -> Macro {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn binds_required_default_and_rest() {
        let m = def(
            "variables:\n- name: a\n- name: b\n  default: B\n- name: c\n  rest: true\n  default: C\nsteps: [x]\n",
        );
        let args = |v: &[&str]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
        let got = bind("m", &m, &args(&["1", "2", "3", "4"])).unwrap();
        assert_eq!(got["a"], "1");
        assert_eq!(got["b"], "2");
        assert_eq!(got["c"], "3 4");
        let got = bind("m", &m, &args(&["1"])).unwrap();
        assert_eq!((got["b"].as_str(), got["c"].as_str()), ("B", "C"));
        let err = bind("m", &m, &[]).unwrap_err().to_string();
        assert!(
            err.contains("`a`") && err.contains("m <a> [b] [c]..."),
            "{err}"
        );
    }

    #[test]
    fn substitutes_known_variables_only() {
        let values = HashMap::from([("x".to_string(), "1".to_string())]);
        assert_eq!(
            substitute("a {{x}} {{ x }} {{y}} {{", &values),
            "a 1 1 {{y}} {{"
        );
    }

    #[test]
    fn builtins_parse_and_names_are_checked() {
        for (name, _) in BUILTIN {
            let dir = tempfile::tempdir().unwrap();
            assert!(!load(dir.path(), name).unwrap().steps.is_empty());
        }
        assert!(matches!(
            load(Path::new("/"), "../x"),
            Err(MacroError::BadName(_))
        ));
    }
}
