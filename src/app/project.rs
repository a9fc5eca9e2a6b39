//! The project's settings at start: `deny`/`ask` rules always; hooks, allow rules and
//! `.mcp.json` only for a trusted project (asked once per directory on a terminal,
//! `--trust-project` otherwise). See [`crate::config::project`].

use std::path::Path;

use crate::config::project::{self, ProjectSettings};
use crate::config::{AppConfig, TerminalCaps};
use crate::render::theme::Theme;
use crate::term;

/// Merges the settings of the project in `dir` into `config`; the project's `.mcp.json`
/// text when it is trusted and has one.
pub(super) fn apply(
    config: &mut AppConfig,
    config_dir: &Path,
    dir: &Path,
    caps: &TerminalCaps,
    ask: bool,
    trust_flag: bool,
) -> Option<String> {
    let found = ProjectSettings::find(dir)?;
    let theme = Theme::stderr(caps);
    for problem in &found.problems {
        term::session_note(&theme, &format!("warning: project settings: {problem}"));
    }
    config
        .permissions
        .deny
        .extend(found.permissions.deny.iter().cloned());
    config
        .permissions
        .ask
        .extend(found.permissions.ask.iter().cloned());
    if !found.needs_trust() {
        return None;
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
        return None;
    }
    config.hooks.extend(found.hooks);
    config.permissions.allow.extend(found.permissions.allow);
    found.mcp_json
}
