//! What the file tools may never touch, whatever was approved: the sandbox's deny list
//! (credential files, loki's own directories), the paths of `Read(…)`/`Edit(…)` deny
//! rules, anything at all in a `read-only` sandbox (for writes), and — under
//! `loki --serve` — everything outside `api.tools.root`. Checked before a call is asked
//! about, and again for each file a walk (`fs_grep`) reaches.

use std::path::Path;

use serde_json::Value;

use super::{Effect, Tool, ToolEnv, ToolError, builtin, paths};
use crate::config::permissions::Rules;
use crate::sandbox::SandboxMode;

/// Refuses a call whose paths the fences keep it from.
pub(super) fn check(
    tool: &Tool,
    args: &Value,
    env: &ToolEnv<'_>,
    rules: &Rules,
) -> Result<(), ToolError> {
    let (touched, reads, writes) = match tool {
        Tool::Builtin(b) if matches!(b.effect, Effect::Read | Effect::Write) => {
            let touched = builtin::touched_paths(b, args, env.cwd);
            // Edits read the file they change.
            let reads = b.effect == Effect::Read || matches!(b.name, "fs_edit" | "fs_patch");
            (touched, reads, b.effect == Effect::Write)
        }
        Tool::Lsp(_) => match args["path"].as_str() {
            Some(p) => (vec![paths::resolve(env.cwd, p)], true, false),
            None => return Ok(()),
        },
        _ => return Ok(()),
    };
    for path in touched {
        let shown = paths::display(env.cwd, &path.path);
        if reads && let Some(why) = read_refusal(env, rules, &shown, &path.path) {
            return Err(ToolError::Refused(why));
        }
        if writes && let Some(why) = write_refusal(env, rules, &shown, &path.path) {
            return Err(ToolError::Refused(why));
        }
    }
    Ok(())
}

/// Why reading `absolute` is refused, if it is.
pub(super) fn read_refusal(
    env: &ToolEnv<'_>,
    rules: &Rules,
    shown: &str,
    absolute: &Path,
) -> Option<String> {
    if let Some(rule) = rules.denies_read(shown, absolute) {
        return Some(format!(
            "refused: {shown}: reading it is denied by {}; do not retry it",
            rules.describe(rule)
        ));
    }
    let sandbox = env.sandbox?;
    if !sandbox.may_read(absolute) {
        return Some(format!(
            "refused: {shown} is out of reach: the sandbox keeps credentials and loki's own files from \
             every tool; do not retry it"
        ));
    }
    if sandbox.held_to_root() && !absolute.starts_with(sandbox.root()) {
        return Some(format!(
            "refused: {shown} is outside the tools' root ({}): tools may not touch it",
            sandbox.root().display()
        ));
    }
    None
}

/// Why writing `absolute` is refused, if it is.
fn write_refusal(env: &ToolEnv<'_>, rules: &Rules, shown: &str, absolute: &Path) -> Option<String> {
    if let Some(rule) = rules.denies_write(shown, absolute) {
        return Some(format!(
            "refused: {shown}: changing it is denied by {}; do not retry it",
            rules.describe(rule)
        ));
    }
    let sandbox = env.sandbox?;
    if sandbox.mode() == SandboxMode::ReadOnly {
        return Some(format!(
            "refused: {shown}: the sandbox is read-only; nothing can be changed now (the user can switch \
             with .sandbox workspace-write)"
        ));
    }
    if !sandbox.may_read(absolute) {
        return Some(format!(
            "refused: {shown} is out of reach: the sandbox keeps credentials and loki's own files from \
             every tool; do not retry it"
        ));
    }
    if sandbox.held_to_root() && !sandbox.may_write(absolute) {
        return Some(format!(
            "refused: {shown} is outside the tools' root ({}): tools may not change it",
            sandbox.root().display()
        ));
    }
    None
}

/// Whether a walk over the working tree (`fs_grep`) may read `absolute`.
pub(super) fn walk_may_read(env: &ToolEnv<'_>, rules: &Rules, absolute: &Path) -> bool {
    let shown = paths::display(env.cwd, absolute);
    read_refusal(env, rules, &shown, absolute).is_none()
}

/// Whether a walk from `root` can reach anything the fences keep from readers (so each
/// file it reaches must be checked).
pub(super) fn walk_is_fenced(env: &ToolEnv<'_>, rules: &Rules, root: &Path) -> bool {
    rules.has_read_denials()
        || env.sandbox.is_some_and(|s| {
            s.held_to_root()
                || s.policy()
                    .deny_read
                    .iter()
                    .any(|d| d.starts_with(root) || root.starts_with(d))
        })
}
