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
    if args.fork_session {
        // After the session is opened (`-s`, `-C`, `--resume`, an agent's).
        commands.push(Command::ForkSession(None));
    }
    if let Some(level) = &args.effort {
        commands.push(Command::Set {
            key: "reasoning_effort".into(),
            value: level.clone(),
        });
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
        history: true,
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

/// The conversation the flags describe, run for a person at the terminal (`--init`,
/// `--run-tool`, a macro, `-e`): its own id, under which the terminal approver and
/// asker ask.
pub fn terminal_spec(args: &Args, caps: &TerminalCaps) -> ConversationSpec {
    let id = loki_protocol::event::next_conversation_id();
    // On a terminal, questions (an agent's missing variables, `user__*` tools) are asked.
    let asker = caps.interactive().then(|| {
        Arc::new(crate::term::ask::TerminalAsker::new(&id)) as Arc<dyn crate::tool::ask::Asker>
    });
    ConversationSpec {
        approver: terminal_approver(caps, &id),
        asker,
        id: Some(id),
        ..spec(args, caps, None)
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

/// For `--info`: the flags a run applies to its conversation (`--permission-mode`,
/// `--sandbox`), folded into the configuration it shows, as the run would use them.
pub fn apply_to_info(args: &Args, config: &mut crate::config::AppConfig) {
    if let Some(mode) = &args.permission_mode {
        config.permission_mode = Some(mode.clone());
    }
    if let Some(mode) = args
        .sandbox
        .as_deref()
        .and_then(crate::sandbox::SandboxMode::parse)
    {
        config.sandbox.mode = Some(mode);
    }
}

/// Where the rules of `--allowedTools` and `--disallowedTools` come from, as a refusal
/// names them.
const FLAG_ORIGIN: &str = "the command line (--allowedTools/--disallowedTools)";

/// Claude Code's run flags, applied to this run's configuration before anything opens:
/// `--allowedTools` (allow rules: Claude's names or loki's, `Bash(git:*)` too),
/// `--disallowedTools` (deny rules, and a bare name in `deny_tools`), `--max-turns`
/// (tool rounds: N rounds run, and one more model call may answer), `--max-budget-usd`
/// (`max_cost` for this run) and `--append-system-prompt`.
///
/// A rule that does not parse is refused (as it is in config.yaml), naming it: a typo in
/// a deny rule must not leave the command it meant to stop allowed.
pub fn apply_to_config(args: &Args, config: &mut crate::config::AppConfig) -> Result<(), String> {
    // A directory that is not there would make every confined command fail later.
    if let Some(missing) = args.add_dir.iter().find(|d| !d.is_dir()) {
        return Err(format!("--add-dir {}: not a directory", missing.display()));
    }
    for (flag, values) in [
        ("--allowedTools", &args.allowed_tools),
        ("--disallowedTools", &args.disallowed_tools),
    ] {
        for rule in tool_list(values) {
            if let Err(e) = crate::config::permissions::Rule::parse(&rule) {
                return Err(format!("{flag}: `{rule}`: {e}"));
            }
        }
    }
    // Claude Code offers every tool; loki offers none until `enabled_tools` names them. A
    // run that allows tools by name, where nothing names the tools to offer, is offered
    // those (their loki names), rather than allowing tools the model never sees.
    if config.enabled_tools.is_none() {
        let mut offered: Vec<String> = tool_list(&args.allowed_tools)
            .iter()
            .filter_map(|rule| rule.split('(').next().map(str::trim))
            .filter(|name| !name.is_empty() && !name.starts_with("mcp__"))
            .flat_map(crate::claude_names::loki_tools)
            .collect();
        offered.sort();
        offered.dedup();
        if !offered.is_empty() {
            config.enabled_tools = Some(offered.join(","));
        }
    }
    let permissions = &mut config.permissions;
    for rule in tool_list(&args.allowed_tools) {
        permissions.origins.insert(rule.clone(), FLAG_ORIGIN.into());
        permissions.allow.push(rule);
    }
    for rule in tool_list(&args.disallowed_tools) {
        if !rule.contains('(') {
            config
                .deny_tools
                .extend(crate::claude_names::loki_tools(&rule));
        }
        permissions.origins.insert(rule.clone(), FLAG_ORIGIN.into());
        permissions.deny.push(rule);
    }
    if let Some(turns) = args.max_turns {
        config.max_turns = Some(u64::from(turns));
        // loki counts model calls: N rounds of tools, then the call that answers.
        config.max_tool_rounds = usize::try_from(turns)
            .unwrap_or(usize::MAX)
            .saturating_add(1);
    }
    if let Some(usd) = args.max_budget_usd {
        config.max_cost = Some(usd);
    }
    if let Some(text) = &args.append_system_prompt {
        config.append_system_prompt = Some(text.clone());
    }
    Ok(())
}

/// The tools of `--allowedTools "Bash(git diff:*) Edit,Read"`: separated by commas or
/// spaces, except inside a rule's parentheses.
pub fn tool_list(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|value| {
            crate::config::permissions::split_rule_list(value, |c| c == ',' || c.is_whitespace())
        })
        .collect()
}

/// What ended a run that `--max-turns` or `--max-budget-usd` stopped, in Claude Code's
/// words (`Error: Reached max turns (1)`), with loki's reason after it; `None` for any
/// other error.
pub fn limit_message(args: &Args, error: &crate::error::CoreError) -> Option<String> {
    use crate::error::CoreError;
    match error {
        CoreError::TurnLimit(_) => args.max_turns.map(|n| {
            format!(
                "reached max turns ({n}): the model still wanted to call tools; the work so far is kept (raise --max-turns to let it go on)"
            )
        }),
        CoreError::Budget(why) => args
            .max_budget_usd
            .map(|usd| format!("exceeded USD budget ({usd}): {why}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_lists_split_outside_parentheses() {
        let given = ["Bash(git diff:*) Edit,Read".to_string(), "fs_cat".into()];
        assert_eq!(
            tool_list(&given),
            ["Bash(git diff:*)", "Edit", "Read", "fs_cat"]
        );
        assert!(tool_list(&[" , ".into()]).is_empty());
    }
}
