//! Permission modes and rules, in the shape of Claude Code's settings.
//!
//! A mode says how calls are approved in the whole conversation tree:
//! - `default`: tools that write or run ask (what `auto_approve_tools` leaves);
//! - `accept-edits`: file edits inside the working tree run unasked; commands still ask;
//! - `plan`: only tools that read run; the model investigates and proposes;
//! - `yolo`: everything runs unasked.
//!
//! Rules under `permissions:` (`allow`, `ask`, `deny`) name calls (see [`rules`]). A
//! conversation tree is never more permissive than its root: a sub-agent's own mode can
//! only tighten the tree's ([`PermissionMode::stricter`]).

mod commands;
mod rules;

pub use rules::{Rule, RuleCall, RuleError, RuleVerdict, Rules, split_rule_list};

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use serde::Deserialize;

/// Loki's tools that edit files: what `accept-edits` lets run unasked, and what editors
/// are shown as edits. The one list; everything that asks "is this a file edit" uses it.
pub const FILE_EDITS: &[&str] = &["fs_write", "fs_edit", "fs_patch", "fs_mkdir"];

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

    /// Its name in Claude Code (the Agent SDK's `permissionMode`).
    pub fn claude_name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::Yolo => "bypassPermissions",
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

    /// How much runs unasked, from plan (least) to yolo (most).
    fn latitude(self) -> u8 {
        match self {
            Self::Plan => 0,
            Self::Default => 1,
            Self::AcceptEdits => 2,
            Self::Yolo => 3,
        }
    }

    /// The stricter of the two modes.
    pub fn stricter(self, other: Self) -> Self {
        if other.latitude() < self.latitude() {
            other
        } else {
            self
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
    /// Claude Code's `defaultMode`: the mode when `permission_mode` says none (in a
    /// Claude settings file it is read by [`crate::config::settings_file`]).
    #[serde(default, rename = "defaultMode")]
    pub default_mode: Option<String>,
    /// Claude Code's `additionalDirectories`: more directories commands and file tools
    /// may write (as `--add-dir`).
    #[serde(default, rename = "additionalDirectories")]
    pub additional_directories: Vec<String>,
    /// Where rules not written in the user's own configuration came from, by rule text
    /// (`the project settings file /repo/.claude/settings.json`), so a refusal names the
    /// file to change.
    #[serde(skip)]
    pub origins: std::collections::BTreeMap<String, String>,
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

    /// `other`'s rules added to these, with where they came from (a rule these already
    /// hold keeps its own origin).
    pub fn extend(&mut self, other: PermissionsConfig) {
        for (rule, origin) in other.origins {
            if !self.holds(&rule) {
                self.origins.entry(rule).or_insert(origin);
            }
        }
        self.allow.extend(other.allow);
        self.ask.extend(other.ask);
        self.deny.extend(other.deny);
        for dir in other.additional_directories {
            if !self.additional_directories.contains(&dir) {
                self.additional_directories.push(dir);
            }
        }
    }

    /// Marks every rule of these as coming from `origin` (a project's settings file).
    pub fn set_origin(&mut self, origin: &str) {
        for rule in self.allow.iter().chain(&self.ask).chain(&self.deny) {
            self.origins.insert(rule.clone(), origin.to_string());
        }
    }

    /// Whether `rule` is one of these (in any list).
    fn holds(&self, rule: &str) -> bool {
        self.allow
            .iter()
            .chain(&self.ask)
            .chain(&self.deny)
            .any(|r| r == rule)
    }
}
