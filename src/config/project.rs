//! A project's own settings, read from the working directory: `.loki/settings.yaml`,
//! Claude Code's `.claude/settings.json` and `.claude/settings.local.json` (`hooks`,
//! `permissions`), and `.mcp.json` (project MCP servers).
//!
//! Hooks, MCP servers and allow rules run code or loosen approvals, so they need the
//! user's trust: asked once per directory on a terminal and remembered in
//! `trusted-projects.yaml` of the config directory; a run without a terminal ignores
//! them unless `--trust-project` is given. `deny` and `ask` rules only tighten, and always
//! apply.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::hooks::HookSettings;
use super::permissions::{PermissionMode, PermissionsConfig};
use super::settings_file::{Scope, SettingsFile};

/// Largest settings file read.
pub(crate) const MAX_SETTINGS: u64 = 1 << 20;

/// The trust file in the config directory.
pub const TRUST_FILE: &str = "trusted-projects.yaml";

/// The project's settings files, lowest precedence first.
const FILES: [(&str, Scope); 3] = [
    (".loki/settings.yaml", Scope::Project),
    (".claude/settings.json", Scope::Project),
    (".claude/settings.local.json", Scope::Local),
];

/// The project's settings, merged.
#[derive(Debug, Default)]
pub struct ProjectSettings {
    /// The project directory (the working directory).
    pub root: PathBuf,
    /// Hooks of its settings files.
    pub hooks: HookSettings,
    /// Permission rules of its settings files, and their `additionalDirectories`.
    pub permissions: PermissionsConfig,
    /// `permissions.defaultMode` of the file that wins (`settings.local.json` over
    /// `settings.json`).
    pub default_mode: Option<PermissionMode>,
    /// The text of `.mcp.json`.
    pub mcp_json: Option<String>,
    /// The files found, for the question and messages.
    pub files: Vec<String>,
    /// Each settings file read, for `--info`.
    pub sources: Vec<SettingsFile>,
    /// What of its files could not be used, each with why.
    pub problems: Vec<String>,
}

impl ProjectSettings {
    /// The settings of the project in `dir`; `None` when it has none.
    pub fn find(dir: &Path) -> Option<Self> {
        let mut found = Self {
            root: dir.to_path_buf(),
            ..Self::default()
        };
        let home = dirs::home_dir();
        for (name, scope) in FILES {
            let path = dir.join(name);
            if std::fs::symlink_metadata(&path).is_err() {
                continue;
            }
            found.files.push(name.to_string());
            let read = read_inside(dir, &path).and_then(|text| {
                Ok(SettingsFile::parse(
                    &text,
                    &path,
                    scope,
                    dir,
                    home.as_deref(),
                )?)
            });
            match read {
                Ok(file) => found.add(name, file),
                Err(e) => found.problems.push(format!("{name}: {e}")),
            }
        }
        let mcp = dir.join(".mcp.json");
        if std::fs::symlink_metadata(&mcp).is_ok() {
            found.files.push(".mcp.json".into());
            match read_inside(dir, &mcp) {
                Ok(text) => found.mcp_json = Some(text),
                Err(e) => found.problems.push(format!(".mcp.json: {e}")),
            }
        }
        let agents = dir.join(".claude").join("agents");
        (!found.files.is_empty() || agents.is_dir()).then_some(found)
    }

    /// Adds one file read as `name`: its problems are warnings, everything else of it
    /// applies; its `defaultMode` wins over an earlier file's.
    fn add(&mut self, name: &str, file: SettingsFile) {
        self.problems
            .extend(file.problems.iter().map(|p| format!("{name}: {p}")));
        self.hooks.extend(file.hooks.clone());
        self.permissions.extend(file.permissions.clone());
        if file.default_mode.is_some() {
            self.default_mode = file.default_mode;
        }
        self.sources.push(file);
    }

    /// Whether it holds what needs trust: hooks, MCP servers, allow rules, a mode that
    /// asks less, more directories to write.
    pub fn needs_trust(&self) -> bool {
        !self.hooks.is_empty()
            || self.mcp_json.is_some()
            || !self.permissions.allow.is_empty()
            || self.loosening_mode().is_some()
            || !self.permissions.additional_directories.is_empty()
    }

    /// Its `defaultMode` when that lets more run than `default` (needs trust; `plan`
    /// only tightens and applies without).
    pub fn loosening_mode(&self) -> Option<PermissionMode> {
        self.default_mode
            .filter(|m| m.stricter(PermissionMode::Default) == PermissionMode::Default)
            .filter(|m| *m != PermissionMode::Default)
    }

    /// What needs trust, in a few words (`2 hooks, .mcp.json, 1 allow rule`).
    pub fn summary(&self) -> String {
        let hooks: usize = self
            .hooks
            .0
            .values()
            .flat_map(|m| m.iter().map(|m| m.hooks.len()))
            .sum();
        let mut parts = Vec::new();
        if hooks > 0 {
            parts.push(format!("{hooks} hook command(s)"));
        }
        if self.mcp_json.is_some() {
            parts.push("MCP servers (.mcp.json)".into());
        }
        if !self.permissions.allow.is_empty() {
            parts.push(format!("{} allow rule(s)", self.permissions.allow.len()));
        }
        if let Some(mode) = self.loosening_mode() {
            parts.push(format!("defaultMode {}", mode.claude_name()));
        }
        if !self.permissions.additional_directories.is_empty() {
            parts.push(format!(
                "{} additional director(ies)",
                self.permissions.additional_directories.len()
            ));
        }
        if self.root.join(".claude").join("agents").is_dir() {
            parts.push("agents (.claude/agents)".into());
        }
        parts.join(", ")
    }
}

/// What `--info` shows of Claude Code's files: each settings file read (user, project,
/// local) with its hooks by event (inactive ones marked), rules, `defaultMode` and
/// `additionalDirectories`; whether the project is trusted (its hooks, allow rules and
/// loosening settings apply only then); the skill, command and agent directories found;
/// and what of the files is not used. Rows in `--info`'s table shape.
pub fn describe(home: Option<&Path>, cwd: &Path, config_dir: &Path) -> String {
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut problems = Vec::new();
    if let Some(home) = home {
        match super::settings_file::read_user(home) {
            Some(Ok(file)) => {
                problems.extend(file.problems.iter().map(|p| format!("user: {p}")));
                rows.push(source_row(&file));
            }
            Some(Err(e)) => problems.push(e),
            None => {}
        }
    }
    if let Some(found) = ProjectSettings::find(cwd) {
        rows.extend(found.sources.iter().map(source_row));
        problems.extend(found.problems.iter().cloned());
        if found.needs_trust() {
            let trusted = match remembered(config_dir, &found.root) {
                Some(true) => "yes".to_string(),
                Some(false) => format!("no: not used: {}", found.summary()),
                None => format!("not asked yet (needed for {})", found.summary()),
            };
            rows.push(("claude:project trusted".into(), trusted));
        }
    }
    let mut dirs = Vec::new();
    let user = home.map(super::settings_file::user_dir);
    for base in user.iter().chain(std::iter::once(&cwd.join(".claude"))) {
        for kind in ["skills", "commands", "agents"] {
            let dir = base.join(kind);
            if let Ok(entries) = std::fs::read_dir(&dir) {
                dirs.push(format!("{} ({})", dir.display(), entries.count()));
            }
        }
    }
    if !dirs.is_empty() {
        rows.push(("claude:directories".into(), dirs.join(", ")));
    }
    rows.extend(
        problems
            .into_iter()
            .map(|p| ("claude:not used".to_string(), p)),
    );
    rows.into_iter()
        .map(|(name, value)| format!("{name:<30}{value}\n"))
        .collect()
}

/// One settings file as an `--info` row: `claude:local  /p/.claude/settings.local.json:
/// defaultMode acceptEdits`.
fn source_row(file: &SettingsFile) -> (String, String) {
    (
        format!("claude:{}", file.scope.name()),
        format!("{}: {}", file.path.display(), file.summary()),
    )
}

/// Why a project file was left out (shown after its name).
#[derive(Debug, thiserror::Error)]
enum Unread {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A link out of the project: the project cannot speak for the file.
    #[error("it resolves outside the project; skipped")]
    Outside,
    #[error("{0}")]
    Syntax(#[from] serde_yaml::Error),
}

/// A regular file of a bounded size whose resolved path stays inside `root`.
fn read_inside(root: &Path, path: &Path) -> Result<String, Unread> {
    let resolved = std::fs::canonicalize(path)?;
    let root = std::fs::canonicalize(root)?;
    if !resolved.starts_with(&root) {
        return Err(Unread::Outside);
    }
    Ok(crate::atomic_file::read_regular_text(path, MAX_SETTINGS)?)
}

/// The remembered answers: directory → trusted.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
struct Trusted(BTreeMap<String, bool>);

/// What the user answered for `root` before, if anything.
pub fn remembered(config_dir: &Path, root: &Path) -> Option<bool> {
    let text =
        crate::atomic_file::read_regular_text(&config_dir.join(TRUST_FILE), MAX_SETTINGS).ok()?;
    let trusted: Trusted = serde_yaml::from_str(&text).ok()?;
    trusted.0.get(&root.display().to_string()).copied()
}

/// Remembers the answer for `root`.
pub fn remember(config_dir: &Path, root: &Path, trusted: bool) -> std::io::Result<()> {
    let path = config_dir.join(TRUST_FILE);
    let mut all: Trusted = crate::atomic_file::read_regular_text(&path, MAX_SETTINGS)
        .ok()
        .and_then(|t| serde_yaml::from_str(&t).ok())
        .unwrap_or_default();
    all.0.insert(root.display().to_string(), trusted);
    let text = serde_yaml::to_string(&all).map_err(std::io::Error::other)?;
    crate::atomic_file::write_atomic(&path, text.as_bytes(), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_merge_and_trust_is_remembered() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
        std::fs::write(
            dir.path().join(".claude/settings.json"),
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}, "permissions": {"deny": ["Bash(rm:*)"]}}"#,
        )
        .unwrap();
        let found = ProjectSettings::find(dir.path()).unwrap();
        assert!(found.needs_trust());
        assert_eq!(found.permissions.deny, ["Bash(rm:*)"]);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
        assert_eq!(remembered(dir.path(), dir.path()), None);
        remember(dir.path(), dir.path(), true).unwrap();
        assert_eq!(remembered(dir.path(), dir.path()), Some(true));
    }
}
