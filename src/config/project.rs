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
use super::permissions::PermissionsConfig;

/// Largest settings file read.
const MAX_SETTINGS: u64 = 1 << 20;

/// The trust file in the config directory.
pub const TRUST_FILE: &str = "trusted-projects.yaml";

/// What one settings file holds that loki uses.
#[derive(Debug, Default, Deserialize)]
struct SettingsFile {
    #[serde(default)]
    hooks: HookSettings,
    #[serde(default)]
    permissions: PermissionsConfig,
}

/// The project's settings, merged.
#[derive(Debug, Default)]
pub struct ProjectSettings {
    /// The project directory (the working directory).
    pub root: PathBuf,
    /// Hooks of its settings files.
    pub hooks: HookSettings,
    /// Permission rules of its settings files.
    pub permissions: PermissionsConfig,
    /// The text of `.mcp.json`.
    pub mcp_json: Option<String>,
    /// The files found, for the question and messages.
    pub files: Vec<String>,
    /// Files that could not be used, each with why.
    pub problems: Vec<String>,
}

impl ProjectSettings {
    /// The settings of the project in `dir`; `None` when it has none.
    pub fn find(dir: &Path) -> Option<Self> {
        let mut found = Self {
            root: dir.to_path_buf(),
            ..Self::default()
        };
        for name in [
            ".loki/settings.yaml",
            ".claude/settings.json",
            ".claude/settings.local.json",
        ] {
            let path = dir.join(name);
            if std::fs::symlink_metadata(&path).is_err() {
                continue;
            }
            found.files.push(name.to_string());
            match read_inside(dir, &path).and_then(|text| {
                // YAML reads JSON too.
                Ok(serde_yaml::from_str::<SettingsFile>(&text)?)
            }) {
                Ok(file) => {
                    let problems = file.hooks.problems();
                    if problems.is_empty() {
                        found.hooks.extend(file.hooks);
                    } else {
                        found
                            .problems
                            .push(format!("{name}: {}", problems.join("; ")));
                    }
                    let rules = file.permissions.problems();
                    if rules.is_empty() {
                        let mut permissions = file.permissions;
                        permissions
                            .set_origin(&format!("the project settings file {}", path.display()));
                        found.permissions.extend(permissions);
                    } else {
                        found.problems.push(format!("{name}: {}", rules.join("; ")));
                    }
                }
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

    /// Whether it holds what needs trust: hooks, MCP servers, allow rules.
    pub fn needs_trust(&self) -> bool {
        !self.hooks.is_empty() || self.mcp_json.is_some() || !self.permissions.allow.is_empty()
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
        if self.root.join(".claude").join("agents").is_dir() {
            parts.push("agents (.claude/agents)".into());
        }
        parts.join(", ")
    }
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
