//! One Claude Code settings file — the user's `~/.claude/settings.json`, a project's
//! `.claude/settings.json` and `.claude/settings.local.json`, loki's own
//! `.loki/settings.yaml` — and what loki takes from it: `hooks`, and under `permissions`
//! the rules, `defaultMode` and `additionalDirectories`.
//!
//! A file is read whole or not at all only when it does not parse: a rule that does not
//! parse, a hook event loki does not know, a key Claude Code has and loki does not use
//! are each a warning, and the rest of the file applies (a copied file must not lose its
//! `PreToolUse` guard or its deny rules over one line loki cannot use).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::hooks::HookSettings;
use super::permissions::{PermissionMode, PermissionsConfig, Rule};

/// Where a settings file sits, lowest precedence first (Claude Code's order: a local
/// file's `defaultMode` wins over the project's, which wins over the user's; rules of
/// every scope add up and a deny anywhere wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// `~/.claude/settings.json`: the user's own, needs no trust.
    User,
    /// `.claude/settings.json`, `.loki/settings.yaml`: shared with the repository.
    Project,
    /// `.claude/settings.local.json`: the project's, not committed.
    Local,
}

impl Scope {
    /// How `--info` names it.
    pub fn name(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
        }
    }
}

/// `permissions` as Claude Code writes it (unknown keys are named, not fatal).
#[derive(Debug, Default, Deserialize)]
struct RawPermissions {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default, rename = "defaultMode")]
    default_mode: Option<String>,
    #[serde(default, rename = "additionalDirectories")]
    additional_directories: Vec<String>,
    #[serde(flatten)]
    other: BTreeMap<String, serde_yaml::Value>,
}

/// The keys of a file loki reads.
#[derive(Debug, Default, Deserialize)]
struct Raw {
    #[serde(default)]
    hooks: HookSettings,
    #[serde(default)]
    permissions: RawPermissions,
}

/// One settings file, read.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its level.
    pub scope: Scope,
    /// Its hooks (every event kept; see [`HookSettings::counts`]).
    pub hooks: HookSettings,
    /// Its rules that parse, each with this file as its origin, and its
    /// `additionalDirectories` made absolute.
    pub permissions: PermissionsConfig,
    /// `permissions.defaultMode`, when it names a mode loki has.
    pub default_mode: Option<PermissionMode>,
    /// What of it is not used, one line each.
    pub problems: Vec<String>,
}

impl SettingsFile {
    /// Parses `text` read from `path` (JSON or YAML); relative `additionalDirectories`
    /// are taken from `base`, `~/…` from `home`.
    pub fn parse(
        text: &str,
        path: &Path,
        scope: Scope,
        base: &Path,
        home: Option<&Path>,
    ) -> Result<Self, serde_yaml::Error> {
        // YAML reads JSON too.
        let raw: Raw = serde_yaml::from_str(text)?;
        let mut problems = raw.hooks.problems();
        problems.extend(raw.hooks.notes());
        let p = raw.permissions;
        let mut kept = |list: &str, rules: Vec<String>| -> Vec<String> {
            rules
                .into_iter()
                .filter(|rule| match Rule::parse(rule) {
                    Ok(_) => true,
                    Err(e) => {
                        problems.push(format!("permissions.{list}: `{rule}`: {e} (ignored)"));
                        false
                    }
                })
                .collect()
        };
        let mut permissions = PermissionsConfig {
            allow: kept("allow", p.allow),
            ask: kept("ask", p.ask),
            deny: kept("deny", p.deny),
            additional_directories: p
                .additional_directories
                .iter()
                .map(|d| absolute(d, base, home))
                .collect(),
            ..PermissionsConfig::default()
        };
        permissions.set_origin(&format!(
            "the {} settings file {}",
            scope.name(),
            path.display()
        ));
        let default_mode = p.default_mode.as_deref().and_then(|mode| {
            let parsed = PermissionMode::parse(mode);
            if parsed.is_none() {
                problems.push(format!(
                    "permissions.defaultMode `{mode}` is not a mode loki has (default, \
                     acceptEdits, plan, bypassPermissions); ignored"
                ));
            }
            parsed
        });
        problems.extend(
            p.other
                .keys()
                .map(|key| format!("permissions.{key} is not used by loki (docs/claude-code.md)")),
        );
        Ok(Self {
            path: path.to_path_buf(),
            scope,
            hooks: raw.hooks,
            permissions,
            default_mode,
            problems,
        })
    }

    /// What it holds, in one line for `--info`: `hooks PreToolUse 1, SessionEnd 1 ·
    /// rules 1 allow, 2 deny · defaultMode acceptEdits · 1 additional directory`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        let hooks = self.hooks.counts();
        if !hooks.is_empty() {
            parts.push(format!("hooks {}", hooks.join(", ")));
        }
        let p = &self.permissions;
        let rules: Vec<String> = [("allow", &p.allow), ("ask", &p.ask), ("deny", &p.deny)]
            .into_iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(name, list)| format!("{} {name}", list.len()))
            .collect();
        if !rules.is_empty() {
            parts.push(format!("rules {}", rules.join(", ")));
        }
        if let Some(mode) = self.default_mode {
            parts.push(format!("defaultMode {}", mode.claude_name()));
        }
        if !p.additional_directories.is_empty() {
            parts.push(format!(
                "additionalDirectories {}",
                p.additional_directories.join(", ")
            ));
        }
        if parts.is_empty() {
            parts.push("nothing loki uses".into());
        }
        parts.join(" · ")
    }
}

/// `dir` as an absolute path: `~/…` under `home`, a relative one under `base`.
fn absolute(dir: &str, base: &Path, home: Option<&Path>) -> String {
    let path = match (dir.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if dir == "~" => home.map_or_else(|| PathBuf::from(dir), Path::to_path_buf),
        _ => base.join(dir),
    };
    path.display().to_string()
}

/// The user's Claude Code directory (`~/.claude`).
pub fn user_dir(home: &Path) -> PathBuf {
    home.join(".claude")
}

/// The user's `~/.claude/settings.json`, if there is one: read, or why it could not be.
pub fn read_user(home: &Path) -> Option<Result<SettingsFile, String>> {
    let path = user_dir(home).join("settings.json");
    std::fs::symlink_metadata(&path).ok()?;
    let read = crate::atomic_file::read_regular_text(&path, super::project::MAX_SETTINGS)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            SettingsFile::parse(&text, &path, Scope::User, home, Some(home))
                .map_err(|e| e.to_string())
        });
    Some(read.map_err(|e| format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bad_line_keeps_the_rest_of_the_file() {
        let text = r#"{
            "hooks": {
                "SessionEnd": [{"hooks": [{"type": "command", "command": "a"}]}],
                "Whatever": [{"hooks": [{"type": "command", "command": "b"}]}],
                "PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "c"}]}]
            },
            "permissions": {
                "deny": ["Bash(rm", "WebFetch(domain:example.com)"],
                "defaultMode": "acceptEdits",
                "additionalDirectories": ["../shared", "~/notes"],
                "disableBypassPermissionsMode": "disable"
            }
        }"#;
        let file = SettingsFile::parse(
            text,
            Path::new("/p/.claude/settings.json"),
            Scope::Project,
            Path::new("/p"),
            Some(Path::new("/h")),
        )
        .unwrap();
        assert_eq!(
            file.hooks
                .commands("PreToolUse", Some(("fs_write", "Write")))
                .len(),
            1
        );
        assert_eq!(file.permissions.deny, ["WebFetch(domain:example.com)"]);
        assert_eq!(file.default_mode, Some(PermissionMode::AcceptEdits));
        assert_eq!(
            file.permissions.additional_directories,
            ["/p/../shared", "/h/notes"]
        );
        assert_eq!(file.problems.len(), 3, "{:?}", file.problems);
        assert!(
            file.summary().contains("SessionEnd 1"),
            "{}",
            file.summary()
        );
    }
}
