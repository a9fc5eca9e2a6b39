//! `hooks:` in config.yaml (and `hooks` in a trusted project's `.loki/settings.yaml` or
//! `.claude/settings.json`), in Claude Code's shape:
//!
//! ```yaml
//! hooks:
//!   PreToolUse:
//!     - matcher: "fs_write|fs_edit"
//!       hooks:
//!         - type: command
//!           command: "./scripts/check-write.sh"
//!           timeout: 10
//! ```
//!
//! A matcher is a regular expression over the tool's name — loki's (`fs_write`) or
//! Claude's (`Write`, `mcp__server__tool`) — matched whole; empty or `*` matches every
//! tool. Events without a tool (`UserPromptSubmit`, `Stop`, …) ignore it.
//!
//! Every event Claude Code documents is accepted. Those loki has a moment for run
//! ([`EVENTS`]); the others ([`INACTIVE`]) are kept and listed as inactive by `--info`.
//! An event name neither knows is a warning ([`HookSettings::notes`]), never a reason to
//! drop the other hooks of its file: a settings file copied from a newer Claude Code
//! keeps its `PreToolUse` guards.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The events loki runs hooks for (Claude Code's names; `SubagentStop` when a
/// sub-agent's turn ends, `SessionEnd` when a conversation closes, `PermissionRequest`
/// when an approval is asked for).
pub const EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "SessionStart",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "Notification",
    "SessionEnd",
    "PermissionRequest",
];

/// Events Claude Code documents that loki has no moment for: kept, listed as inactive,
/// never run.
pub const INACTIVE: &[&str] = &[
    "PostToolUseFailure",
    "SubagentStart",
    "Setup",
    "TeammateIdle",
    "TaskCompleted",
];

/// Whether loki runs hooks of `event`.
pub fn is_active(event: &str) -> bool {
    EVENTS.contains(&event)
}

/// How long a hook command may run unless it says (seconds).
pub const DEFAULT_TIMEOUT: u64 = 60;

/// Every event's matchers.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct HookSettings(pub BTreeMap<String, Vec<HookMatcher>>);

/// The tools one group of commands is for, and the commands.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct HookMatcher {
    /// Tool names it covers (a regular expression); none or `*`: every tool.
    #[serde(default)]
    pub matcher: Option<String>,
    /// The commands, run in order.
    #[serde(default)]
    pub hooks: Vec<HookCommand>,
}

/// One command.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct HookCommand {
    /// `command`, the kind loki runs. Claude Code's `prompt`, `agent` and `http` hooks
    /// are read (so the file they are in still applies), named in a warning, never run.
    #[serde(rename = "type", default = "command_kind")]
    pub kind: String,
    /// Run with `$SHELL -c` (else `sh -c`) in the working directory.
    #[serde(default)]
    pub command: String,
    /// Seconds before it is stopped (default [`DEFAULT_TIMEOUT`]).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Run it in the conversation's sandbox (a hook is the user's own program and runs
    /// outside unless this says so; docs/sandbox.md).
    #[serde(default)]
    pub sandbox: bool,
}

/// Hook kinds Claude Code runs and loki does not.
const CLAUDE_ONLY_KINDS: &[&str] = &["prompt", "agent", "http"];

fn command_kind() -> String {
    "command".into()
}

impl HookSettings {
    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        self.0
            .values()
            .all(|m| m.iter().all(|m| m.hooks.is_empty()))
    }

    /// Every mistake, one line each (kinds, matchers that are not regular expressions,
    /// empty commands, a zero timeout). Event names are not mistakes: see [`Self::notes`].
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (event, matchers) in &self.0 {
            for m in matchers {
                if let Some(pattern) = m.matcher.as_deref().filter(|p| !is_any(p))
                    && let Err(e) = regex::Regex::new(&format!("^(?:{pattern})$"))
                {
                    problems.push(format!(
                        "hooks.{event}: matcher `{pattern}` is not a regular expression: {e}"
                    ));
                }
                for hook in &m.hooks {
                    if CLAUDE_ONLY_KINDS.contains(&hook.kind.as_str()) {
                        problems.push(format!(
                            "hooks.{event}: a `{}` hook is Claude Code's own: kept, never run \
                             (loki runs `command` hooks)",
                            hook.kind
                        ));
                        continue;
                    }
                    if hook.kind != "command" {
                        problems.push(format!(
                            "hooks.{event}: unknown hook type `{}` (use `command`)",
                            hook.kind
                        ));
                    }
                    if hook.command.trim().is_empty() {
                        problems.push(format!("hooks.{event}: a hook has an empty `command`"));
                    }
                    if hook.timeout == Some(0) {
                        problems.push(format!(
                            "hooks.{event}: `timeout` must be at least 1 second"
                        ));
                    }
                }
            }
        }
        problems
    }

    /// A warning for each event name neither loki nor Claude Code knows (its hooks are
    /// kept and never run; the file's other hooks run as written).
    pub fn notes(&self) -> Vec<String> {
        self.0
            .keys()
            .filter(|event| !is_active(event) && !INACTIVE.contains(&event.as_str()))
            .map(|event| {
                format!(
                    "hooks: unknown event `{event}`: its hooks never run (loki runs {})",
                    EVENTS.join(", ")
                )
            })
            .collect()
    }

    /// How many commands each event has, with whether loki runs them, for `--info`
    /// (`PreToolUse 2`, `SubagentStart 1 (inactive)`).
    pub fn counts(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|(event, matchers)| (event, matchers.iter().map(|m| m.hooks.len()).sum()))
            .filter(|(_, n): &(_, usize)| *n > 0)
            .map(|(event, n)| {
                if is_active(event) {
                    format!("{event} {n}")
                } else {
                    format!("{event} {n} (inactive)")
                }
            })
            .collect()
    }

    /// `other`'s hooks after these.
    pub fn extend(&mut self, other: HookSettings) {
        for (event, matchers) in other.0 {
            self.0.entry(event).or_default().extend(matchers);
        }
    }

    /// The commands of `event` for a call of `tool` (named also as `claude`), in order;
    /// for an event without a tool, all of them.
    pub fn commands(&self, event: &str, tool: Option<(&str, &str)>) -> Vec<&HookCommand> {
        self.0
            .get(event)
            .into_iter()
            .flatten()
            .filter(|m| match (m.matcher.as_deref(), tool) {
                (Some(pattern), Some((loki, claude))) if !is_any(pattern) => {
                    regex::Regex::new(&format!("^(?:{pattern})$"))
                        .is_ok_and(|re| re.is_match(loki) || re.is_match(claude))
                }
                _ => true,
            })
            .flat_map(|m| m.hooks.iter())
            .filter(|h| h.kind == "command")
            .collect()
    }
}

fn is_any(pattern: &str) -> bool {
    pattern.trim().is_empty() || pattern.trim() == "*"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(yaml: &str) -> HookSettings {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn matchers_take_either_name_and_mistakes_are_all_named() {
        let s = settings(
            "PreToolUse:\n  - matcher: 'fs_write|Edit'\n    hooks:\n      - {type: command, command: a}\n  - hooks:\n      - {type: command, command: b}\n",
        );
        let names = |tool| -> Vec<String> {
            s.commands("PreToolUse", Some(tool))
                .iter()
                .map(|h| h.command.clone())
                .collect()
        };
        assert_eq!(names(("fs_write", "Write")), ["a", "b"]);
        assert_eq!(names(("fs_edit", "Edit")), ["a", "b"]);
        assert_eq!(names(("execute_command", "Bash")), ["b"]);
        assert!(s.problems().is_empty());
        let bad = settings(
            "PreTool:\n  - hooks: [{type: command, command: a}]\nStop:\n  - matcher: '('\n    hooks: [{type: bogus, command: '', timeout: 0}]\n",
        );
        assert_eq!(bad.problems().len(), 4, "{:?}", bad.problems());
        assert_eq!(bad.notes().len(), 1, "{:?}", bad.notes());
        // Claude Code's own kinds, without a `command`: read, one warning each, never run.
        let claude = settings(
            "Stop:\n  - hooks: [{type: prompt, prompt: x}, {type: http, url: 'http://h'}, {type: command, command: c}]\n",
        );
        let problems = claude.problems();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].contains("`prompt` hook is Claude Code's own"),
            "{problems:?}"
        );
        let run: Vec<&str> = claude
            .commands("Stop", None)
            .iter()
            .map(|h| h.command.as_str())
            .collect();
        assert_eq!(run, ["c"]);
    }

    #[test]
    fn every_claude_event_is_kept_and_inactive_ones_are_listed() {
        let s = settings(
            "SessionEnd:\n  - hooks: [{type: command, command: a}]\nSubagentStart:\n  - hooks: [{type: command, command: b}]\nPreToolUse:\n  - hooks: [{type: command, command: c}]\n",
        );
        assert!(s.problems().is_empty() && s.notes().is_empty());
        assert_eq!(
            s.counts(),
            ["PreToolUse 1", "SessionEnd 1", "SubagentStart 1 (inactive)"]
        );
        assert_eq!(
            s.commands("PreToolUse", Some(("fs_write", "Write"))).len(),
            1
        );
    }
}
