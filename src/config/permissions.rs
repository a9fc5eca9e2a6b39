//! Permission modes and rules, in the shape of Claude Code's settings.
//!
//! A mode says how calls are approved in the whole conversation tree:
//! - `default`: tools that write or run ask (what `auto_approve_tools` leaves);
//! - `accept-edits`: file edits inside the working tree run unasked; commands still ask;
//! - `plan`: only tools that read run; the model investigates and proposes;
//! - `yolo`: everything runs unasked.
//!
//! Rules under `permissions:` (`allow`, `ask`, `deny`) name calls: `execute_command` or
//! `Bash` (the tool), `execute_command(git diff:*)` (a command that starts with `git
//! diff`), `Bash(npm test)` (exactly that command), `fs_write(src/**)` (a path glob,
//! relative to the working directory), `mcp__github__*` (a name glob). Deny wins —
//! even over yolo —, then ask, then allow. A prefix rule allows a command only when it
//! is one simple command (no `;`, `&&`, `|`, redirections, substitutions or newlines);
//! a deny rule matches any command of a chain.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use serde::Deserialize;
use serde_json::Value;

/// How calls are approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PermissionMode {
    /// Tools that write or run ask.
    #[default]
    Default,
    /// File edits inside the working tree run unasked.
    AcceptEdits,
    /// Only tools that read run.
    Plan,
    /// Everything runs unasked.
    Yolo,
}

impl PermissionMode {
    /// Every mode, in the order Shift-Tab cycles through the first three.
    pub const ALL: [Self; 4] = [Self::Default, Self::AcceptEdits, Self::Plan, Self::Yolo];

    /// `default`, `accept-edits` (or Claude's `acceptEdits`), `plan`, `yolo` (or
    /// `bypassPermissions`).
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim() {
            "default" => Some(Self::Default),
            "accept-edits" | "acceptEdits" | "accept_edits" => Some(Self::AcceptEdits),
            "plan" => Some(Self::Plan),
            "yolo" | "bypassPermissions" => Some(Self::Yolo),
            _ => None,
        }
    }

    /// Its name in config and commands.
    pub fn name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "accept-edits",
            Self::Plan => "plan",
            Self::Yolo => "yolo",
        }
    }

    /// The next mode of Shift-Tab's cycle (default → accept-edits → plan → default;
    /// yolo goes back to default).
    pub fn next(self) -> Self {
        match self {
            Self::Default => Self::AcceptEdits,
            Self::AcceptEdits => Self::Plan,
            Self::Plan | Self::Yolo => Self::Default,
        }
    }

    fn code(self) -> u8 {
        match self {
            Self::Default => 0,
            Self::AcceptEdits => 1,
            Self::Plan => 2,
            Self::Yolo => 3,
        }
    }

    fn of(code: u8) -> Self {
        match code {
            1 => Self::AcceptEdits,
            2 => Self::Plan,
            3 => Self::Yolo,
            _ => Self::Default,
        }
    }
}

/// The mode a conversation tree shares: a change reaches every descendant, running or
/// not. (`yolo` is also the tree's yolo switch; see `tool::Policy::mode`.)
#[derive(Debug, Clone, Default)]
pub struct ModeDial(Arc<AtomicU8>);

impl ModeDial {
    /// A dial of its own, at `mode`.
    pub fn new(mode: PermissionMode) -> Self {
        Self(Arc::new(AtomicU8::new(mode.code())))
    }

    /// The mode now.
    pub fn get(&self) -> PermissionMode {
        PermissionMode::of(self.0.load(Ordering::Relaxed))
    }

    /// Sets it for every holder.
    pub fn set(&self, mode: PermissionMode) {
        self.0.store(mode.code(), Ordering::Relaxed);
    }
}

/// `permissions:` as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PermissionsConfig {
    /// Calls that run without asking.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Calls that are always asked about.
    #[serde(default)]
    pub ask: Vec<String>,
    /// Calls that never run.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Accepted for Claude Code's settings; loki's `permission_mode` says the mode.
    #[serde(default, rename = "defaultMode")]
    pub default_mode: Option<String>,
    /// Accepted for Claude Code's settings and ignored.
    #[serde(default, rename = "additionalDirectories")]
    pub additional_directories: Vec<String>,
}

impl PermissionsConfig {
    /// Every rule that does not parse, one line each.
    pub fn problems(&self) -> Vec<String> {
        [
            ("allow", &self.allow),
            ("ask", &self.ask),
            ("deny", &self.deny),
        ]
        .into_iter()
        .flat_map(|(list, rules)| {
            rules.iter().filter_map(move |rule| {
                Rule::parse(rule)
                    .err()
                    .map(|e| format!("permissions.{list}: `{rule}`: {e}"))
            })
        })
        .collect()
    }

    /// `other`'s rules added to these.
    pub fn extend(&mut self, other: PermissionsConfig) {
        self.allow.extend(other.allow);
        self.ask.extend(other.ask);
        self.deny.extend(other.deny);
    }
}

/// Why a rule cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// Nothing before `(`.
    #[error("no tool name")]
    NoTool,
    /// `(` without the closing `)` at the end.
    #[error("expected `tool` or `tool(what)`")]
    Shape,
    /// A glob that does not parse.
    #[error("bad pattern: {0}")]
    Glob(String),
}

/// One rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// As written, for messages.
    pub text: String,
    /// Tool names it covers (loki's or Claude's), a glob.
    tool: globset::GlobMatcher,
    what: Option<What>,
}

#[derive(Debug, Clone)]
enum What {
    /// `prefix:*`: a command that starts with this.
    Prefix(String),
    /// A path glob for file tools, or an exact command.
    Pattern {
        text: String,
        glob: globset::GlobMatcher,
    },
}

impl Rule {
    /// Parses `tool` or `tool(what)`.
    pub fn parse(text: &str) -> Result<Self, RuleError> {
        let text = text.trim();
        let (name, what) = match text.split_once('(') {
            Some((name, rest)) => {
                let inner = rest.strip_suffix(')').ok_or(RuleError::Shape)?;
                (name.trim(), Some(inner.trim()))
            }
            None => (text, None),
        };
        if name.is_empty() {
            return Err(RuleError::NoTool);
        }
        let glob = |pattern: &str| {
            globset::GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| RuleError::Glob(e.to_string()))
        };
        let what = match what.filter(|w| !w.is_empty() && *w != "*") {
            None => None,
            Some(w) => Some(match w.strip_suffix(":*") {
                Some(prefix) => What::Prefix(prefix.to_string()),
                None => What::Pattern {
                    text: w.to_string(),
                    glob: glob(w)?,
                },
            }),
        };
        let tool = globset::Glob::new(name)
            .map(|g| g.compile_matcher())
            .map_err(|e| RuleError::Glob(e.to_string()))?;
        Ok(Self {
            text: text.to_string(),
            tool,
            what,
        })
    }

    /// Whether the rule covers `call` (`deny`: a command matches if any command of a
    /// chain does).
    fn covers(&self, call: &RuleCall<'_>, deny: bool) -> bool {
        let named = call.names.iter().any(|n| self.tool.is_match(n));
        if !named {
            return false;
        }
        let Some(what) = &self.what else {
            return true;
        };
        if let Some(command) = call.args["command"].as_str().filter(|_| call.is_command) {
            let commands: Vec<&str> = if deny {
                split_chain(command)
            } else if is_simple(command) {
                vec![command.trim()]
            } else {
                return false;
            };
            return commands.iter().any(|c| match what {
                What::Prefix(prefix) => *c == prefix || c.starts_with(&format!("{prefix} ")),
                What::Pattern { text, .. } => c == text,
            });
        }
        let Some(path) = call.path else {
            return false;
        };
        match what {
            What::Prefix(prefix) => path.starts_with(prefix.as_str()),
            What::Pattern { glob, .. } => glob.is_match(path),
        }
    }
}

/// A command with none of the shell's ways to run more than one thing.
fn is_simple(command: &str) -> bool {
    !command.chars().any(|c| {
        matches!(
            c,
            ';' | '&' | '|' | '`' | '$' | '<' | '>' | '\n' | '(' | ')'
        )
    })
}

/// The commands of a chain (`a && b; c | d`), trimmed.
fn split_chain(command: &str) -> Vec<&str> {
    command
        .split([';', '&', '|', '\n', '(', ')', '`'])
        .map(|c| c.trim().trim_start_matches('$').trim())
        .filter(|c| !c.is_empty())
        .collect()
}

/// What a rule looks at in a call.
pub struct RuleCall<'a> {
    /// The tool's names: loki's, Claude's (and `mcp__<server>__<tool>` for MCP tools).
    pub names: Vec<String>,
    /// Its arguments.
    pub args: &'a Value,
    /// It runs a shell command (`args.command`).
    pub is_command: bool,
    /// The path it touches, relative to the working directory when inside it.
    pub path: Option<&'a str>,
}

/// The parsed rules.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    allow: Vec<Rule>,
    ask: Vec<Rule>,
    deny: Vec<Rule>,
}

/// What the rules say of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleVerdict {
    /// A `deny` rule (its text).
    Deny(String),
    /// An `ask` rule.
    Ask(String),
    /// An `allow` rule.
    Allow(String),
}

impl Rules {
    /// The rules of `config` that parse (the others were reported when it was loaded).
    pub fn new(config: &PermissionsConfig) -> Self {
        let parse = |list: &[String]| list.iter().filter_map(|r| Rule::parse(r).ok()).collect();
        Self {
            allow: parse(&config.allow),
            ask: parse(&config.ask),
            deny: parse(&config.deny),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }

    /// Deny, then ask, then allow.
    pub fn decide(&self, call: &RuleCall<'_>) -> Option<RuleVerdict> {
        if let Some(rule) = self.deny.iter().find(|r| r.covers(call, true)) {
            return Some(RuleVerdict::Deny(rule.text.clone()));
        }
        if let Some(rule) = self.ask.iter().find(|r| r.covers(call, false)) {
            return Some(RuleVerdict::Ask(rule.text.clone()));
        }
        self.allow
            .iter()
            .find(|r| r.covers(call, false))
            .map(|rule| RuleVerdict::Allow(rule.text.clone()))
    }

    /// The rules as lines (`deny  execute_command(rm:*)`), for `.info permissions`.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (list, rules) in [
            ("deny", &self.deny),
            ("ask", &self.ask),
            ("allow", &self.allow),
        ] {
            lines.extend(rules.iter().map(|r| format!("{list:<6}{}", r.text)));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn command(c: &str) -> Value {
        json!({"command": c})
    }

    fn bash<'a>(args: &'a Value) -> RuleCall<'a> {
        RuleCall {
            names: vec!["execute_command".into(), "Bash".into()],
            args,
            is_command: true,
            path: None,
        }
    }

    fn rules(allow: &[&str], ask: &[&str], deny: &[&str]) -> Rules {
        let list = |l: &[&str]| l.iter().map(|s| (*s).to_string()).collect();
        Rules::new(&PermissionsConfig {
            allow: list(allow),
            ask: list(ask),
            deny: list(deny),
            ..PermissionsConfig::default()
        })
    }

    #[test]
    fn prefixes_allow_only_simple_commands_and_deny_any_in_a_chain() {
        let r = rules(&["Bash(git diff:*)"], &[], &["execute_command(rm:*)"]);
        let verdict = |c: &str| r.decide(&bash(&command(c)));
        assert_eq!(
            verdict("git diff --stat"),
            Some(RuleVerdict::Allow("Bash(git diff:*)".into()))
        );
        assert_eq!(
            verdict("git diff"),
            Some(RuleVerdict::Allow("Bash(git diff:*)".into()))
        );
        assert_eq!(verdict("git diffx"), None);
        assert_eq!(verdict("git diff && curl x | sh"), None);
        assert_eq!(
            verdict("git diff; rm -rf /"),
            Some(RuleVerdict::Deny("execute_command(rm:*)".into()))
        );
        assert_eq!(
            verdict("echo $(rm -rf x)"),
            Some(RuleVerdict::Deny("execute_command(rm:*)".into()))
        );
        assert_eq!(verdict("ls"), None);
    }

    #[test]
    fn paths_names_and_order() {
        let r = rules(
            &["fs_write(src/**)", "mcp__github__*"],
            &["fs_write(src/secret/**)"],
            &["Write(.env)"],
        );
        let write = |path: &'static str| RuleCall {
            names: vec!["fs_write".into(), "Write".into()],
            args: &Value::Null,
            is_command: false,
            path: Some(path),
        };
        assert!(matches!(
            r.decide(&write("src/a/b.rs")),
            Some(RuleVerdict::Allow(_))
        ));
        assert!(matches!(
            r.decide(&write("src/secret/k")),
            Some(RuleVerdict::Ask(_))
        ));
        assert!(matches!(
            r.decide(&write(".env")),
            Some(RuleVerdict::Deny(_))
        ));
        assert_eq!(r.decide(&write("README.md")), None);
        let mcp = RuleCall {
            names: vec![
                "github_create_issue".into(),
                "mcp__github__create_issue".into(),
            ],
            args: &Value::Null,
            is_command: false,
            path: None,
        };
        assert!(matches!(r.decide(&mcp), Some(RuleVerdict::Allow(_))));
        let bad = PermissionsConfig {
            deny: vec!["Bash(rm".into(), "(x)".into()],
            ..PermissionsConfig::default()
        };
        assert_eq!(bad.problems().len(), 2);
    }

    #[test]
    fn modes_parse_and_cycle() {
        assert_eq!(
            PermissionMode::parse("acceptEdits"),
            Some(PermissionMode::AcceptEdits)
        );
        assert_eq!(PermissionMode::parse("nope"), None);
        assert_eq!(PermissionMode::Plan.next(), PermissionMode::Default);
        let dial = ModeDial::new(PermissionMode::Plan);
        let shared = dial.clone();
        shared.set(PermissionMode::AcceptEdits);
        assert_eq!(dial.get(), PermissionMode::AcceptEdits);
    }
}
