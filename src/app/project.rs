//! The project's settings at start: `deny`/`ask` rules always; hooks, allow rules and
//! `.mcp.json` only for a trusted project (asked once per directory on a terminal,
//! `--trust-project` otherwise). See [`crate::config::project`].

use std::path::Path;

use crate::config::permissions::PermissionMode;
use crate::config::project::{self, ProjectSettings};
use crate::config::{AppConfig, TerminalCaps};
use crate::render::theme::Theme;
use crate::term;

/// What a trusted project brings besides settings.
#[derive(Default)]
pub(super) struct Trusted {
    /// The text of its `.mcp.json`.
    pub mcp_json: Option<String>,
    /// Its `.claude/agents` directory.
    pub agents: Option<std::path::PathBuf>,
    /// The project directory, when trusted.
    pub root: Option<std::path::PathBuf>,
}

/// Merges the settings of the project in `dir` into `config`; what else it brings when
/// it is trusted.
pub(super) fn apply(
    config: &mut AppConfig,
    config_dir: &Path,
    dir: &Path,
    caps: &TerminalCaps,
    ask: bool,
    trust_flag: bool,
) -> Trusted {
    apply_user(config, caps);
    let agents = dir.join(".claude").join("agents");
    // Trusted before, or for this run: what needs no question (a project command's
    // `allowed-tools` looks for it).
    let known = || {
        (trust_flag || project::remembered(config_dir, dir) == Some(true)).then(|| Trusted {
            root: Some(dir.to_path_buf()),
            ..Trusted::default()
        })
    };
    let Some(mut found) = ProjectSettings::find(dir) else {
        // Project agents alone run code too: they need the same trust.
        return known().unwrap_or_default();
    };
    if agents.is_dir() {
        found.files.push(".claude/agents".into());
    }
    let theme = Theme::stderr(caps);
    for problem in &found.problems {
        term::session_note(&theme, &format!("warning: project settings: {problem}"));
    }
    // Deny and ask rules only tighten: they apply trusted or not (allow rules below).
    config
        .permissions
        .extend(crate::config::permissions::PermissionsConfig {
            deny: found.permissions.deny.clone(),
            ask: found.permissions.ask.clone(),
            origins: found.permissions.origins.clone(),
            ..Default::default()
        });
    // `plan` only tightens: it applies trusted or not (a mode that asks less, below).
    if found.default_mode == Some(PermissionMode::Plan) {
        config.permission_mode = Some(PermissionMode::Plan.name().into());
    }
    if !found.needs_trust() && !agents.is_dir() {
        return known().unwrap_or_default();
    }
    let trusted = trust_flag
        || match project::remembered(config_dir, &found.root) {
            Some(answer) => answer,
            None if ask => {
                let question = format!(
                    "{} has project settings that run commands or loosen approvals ({}; from {}). Trust this project?",
                    found.root.display(),
                    found.summary(),
                    found.files.join(", ")
                );
                let answer = matches!(
                    crate::term::yes_no::ask(&question, false, "remembered for this directory"),
                    Ok(crate::term::yes_no::Reply::Yes)
                );
                if let Err(e) = project::remember(config_dir, &found.root, answer) {
                    tracing::warn!("cannot remember the answer: {e}");
                }
                answer
            }
            None => false,
        };
    if !trusted {
        term::session_note(
            &theme,
            &format!(
                "project settings not used ({}): the project is not trusted (--trust-project, or answer the question on a terminal)",
                found.summary()
            ),
        );
        return Trusted::default();
    }
    if let Some(mode) = found.loosening_mode() {
        config.permission_mode = Some(mode.name().into());
    }
    config.hooks.extend(found.hooks);
    config
        .permissions
        .extend(crate::config::permissions::PermissionsConfig {
            allow: found.permissions.allow,
            additional_directories: found.permissions.additional_directories,
            origins: found.permissions.origins,
            ..Default::default()
        });
    Trusted {
        mcp_json: found.mcp_json,
        agents: agents.is_dir().then_some(agents),
        root: Some(found.root),
    }
}

/// Merges the user's own Claude Code settings (`~/.claude/settings.json`) into `config`:
/// the user wrote them, so everything applies without a question — hooks, rules,
/// `additionalDirectories`, and `defaultMode` when config.yaml names no
/// `permission_mode` (loki's own configuration is the more specific).
fn apply_user(config: &mut AppConfig, caps: &TerminalCaps) {
    let Some(home) = dirs::home_dir() else {
        return;
    };
    let Some(read) = crate::config::settings_file::read_user(&home) else {
        return;
    };
    let theme = Theme::stderr(caps);
    let file = match read {
        Ok(file) => file,
        Err(problem) => {
            term::session_note(&theme, &format!("warning: user settings: {problem}"));
            return;
        }
    };
    for problem in &file.problems {
        term::session_note(
            &theme,
            &format!("warning: user settings {}: {problem}", file.path.display()),
        );
    }
    config.hooks.extend(file.hooks);
    config.permissions.extend(file.permissions);
    if config.permission_mode.is_none()
        && let Some(mode) = file.default_mode
    {
        config.permission_mode = Some(mode.name().into());
    }
}
