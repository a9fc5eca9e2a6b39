//! Which sandbox a conversation's commands run in: the mode asked for (`--sandbox`,
//! `sandbox:`, a server's `api.tools`), else `workspace-write` where the kernel can
//! confine; what it may write (the working directory, `--add-dir`,
//! `additional_directories`, `sandbox.writable`); what it may never read (loki's own
//! files, `sandbox.deny_read`, the paths of `Read(…)` deny rules).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::permissions::Rules;
use crate::sandbox::{PolicyInput, Sandbox, SandboxMode};
use crate::state::AppState;

/// Most entries of the working tree looked at to find what a glob `Read(…)` rule denies.
const MAX_WALK: usize = 50_000;

/// The mode when nothing asks for one: `workspace-write` where the kernel can confine,
/// else none (said once at start by the front end: see [`default_note`]).
pub(crate) fn default_mode() -> SandboxMode {
    if crate::sandbox::likely_available() {
        SandboxMode::WorkspaceWrite
    } else {
        SandboxMode::DangerFullAccess
    }
}

/// What to tell the user at start when the default leaves commands unconfined.
pub fn default_note(state: &AppState) -> Option<String> {
    (state.config.sandbox.mode.is_none() && default_mode() == SandboxMode::DangerFullAccess).then(
        || {
            "loki: this system cannot sandbox commands (no user namespaces, no Landlock): \
             they run with your rights (sandbox: danger-full-access silences this)"
                .to_string()
        },
    )
}

/// The sandbox for a conversation in `cwd`; none for `danger-full-access` unless file
/// tools are `held` to `cwd` (a server's root), which needs one whatever the mode.
pub(crate) fn build(
    state: &AppState,
    cwd: &Path,
    mode: SandboxMode,
    add_dirs: &[PathBuf],
    rules: &Rules,
    held: bool,
) -> Result<Option<Arc<Sandbox>>, crate::sandbox::SandboxError> {
    if mode == SandboxMode::DangerFullAccess && !held {
        return Ok(None);
    }
    let config = &state.config;
    let resolve = |p: &String| crate::tool::paths::resolve(cwd, p).path;
    let writable: Vec<PathBuf> = add_dirs
        .iter()
        .map(|d| crate::tool::paths::resolve(cwd, &d.to_string_lossy()).path)
        .chain(config.additional_directories.iter().map(resolve))
        .chain(
            config
                .permissions
                .additional_directories
                .iter()
                .map(resolve),
        )
        .chain(config.sandbox.writable.iter().map(resolve))
        .collect();
    let mut deny_read = state.paths.private();
    deny_read.extend(config.sandbox.deny_read.iter().map(resolve));
    let home = state
        .env
        .get("HOME")
        .map(PathBuf::from)
        .or_else(dirs::home_dir);
    let walk_cwd = cwd.to_path_buf();
    let walk_rules = rules.clone();
    let input = PolicyInput {
        cwd: cwd.to_path_buf(),
        writable,
        deny_read,
        deny_later: Some(Box::new(move || denied_by_rules(&walk_cwd, &walk_rules))),
        network: config.sandbox.network,
        home,
        reads_held: held,
        no_namespaces: !config.sandbox.namespaces,
    };
    Sandbox::new(mode, input)
        .map(|s| Some(Arc::new(if held { s.holding_tools_to_root() } else { s })))
        .map_err(|e| crate::sandbox::SandboxError::Start(format!("{}: {e}", cwd.display())))
}

/// The paths of the working tree that `Read(…)` deny rules name: literal ones as they
/// are, globs by walking the tree (at most [`MAX_WALK`] entries, `.git` skipped).
fn denied_by_rules(cwd: &Path, rules: &Rules) -> Vec<PathBuf> {
    let patterns = rules.read_denied_patterns();
    if patterns.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<PathBuf> = Vec::new();
    let mut globs = Vec::new();
    for pattern in patterns {
        // Without `/`, a pattern matches at any depth (as in `.gitignore`): walked too.
        let anchored = pattern.trim_end_matches('/').contains('/');
        if anchored && !pattern.contains(['*', '?', '[', '{']) {
            found.push(crate::tool::paths::resolve(cwd, pattern).path);
        } else {
            globs.push(pattern);
        }
    }
    if globs.is_empty() {
        return found;
    }
    let walk = walkdir::WalkDir::new(cwd)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .take(MAX_WALK)
        .flatten();
    for entry in walk {
        let Ok(rel) = entry.path().strip_prefix(cwd) else {
            continue;
        };
        let rel = rel.to_string_lossy();
        if !rel.is_empty() && rules.denies_read_in_tree(&rel) {
            found.push(entry.path().to_path_buf());
        }
    }
    found
}

/// How a sandbox is shown in `.info`, `--info` and `.sandbox`: the mode, the network,
/// the kernel layers in force and what a missing one leaves open.
pub fn describe(sandbox: Option<&Sandbox>, network: bool) -> String {
    let Some(sandbox) = sandbox.filter(|s| s.mode() != SandboxMode::DangerFullAccess) else {
        let unable = default_mode() == SandboxMode::DangerFullAccess;
        return if unable {
            "danger-full-access (this system cannot confine commands)".into()
        } else {
            "danger-full-access (commands run with your rights)".into()
        };
    };
    let net = if network { "network on" } else { "network off" };
    match crate::sandbox::probe() {
        Ok(mut layers) => {
            // `sandbox.namespaces: false` leaves that layer out here.
            layers.namespaces &= sandbox.policy().namespaces;
            let missing = layers.missing();
            if missing.is_empty() {
                format!("{} ({net}; {})", sandbox.mode(), layers.describe())
            } else {
                format!(
                    "{} ({net}; {}; missing: {})",
                    sandbox.mode(),
                    layers.describe(),
                    missing.join("; ")
                )
            }
        }
        Err(why) => format!("{} (commands are refused: {why})", sandbox.mode()),
    }
}

/// The sandbox of the conversation `ctx` in `mode`, from its directories and rules as
/// they are now. One held to a server's root stays at that root, and held (file tools
/// still confined to it); otherwise (a new conversation has none yet) it is made for the
/// working directory.
pub(in crate::conversation) fn sandbox_for(
    state: &AppState,
    ctx: &crate::conversation::context::RequestContext,
    mode: SandboxMode,
) -> Result<Option<Arc<Sandbox>>, crate::error::CoreError> {
    let held = ctx.sandbox.as_ref().is_some_and(|s| s.held_to_root());
    let root = ctx
        .sandbox
        .as_ref()
        .filter(|_| held)
        .map_or(ctx.cwd.as_path(), |s| s.root());
    build(
        state,
        root,
        mode,
        &ctx.add_dirs,
        &ctx.tool_policy.rules,
        held,
    )
    .map_err(|e| crate::error::CoreError::Conflict(e.to_string()))
}

/// `.add-dir DIR` (the REPL's `--add-dir`): one more directory file tools treat as part
/// of the working tree and the sandbox lets commands write, for the rest of the
/// conversation and the sub-agents it starts. Only the user at the root of a tree may
/// widen it (a sub-agent or a server's session held to its root may not), and only to a
/// directory that exists, so a typo does not silently admit nothing.
pub(in crate::conversation) fn add_dir(
    state: &AppState,
    ctx: &mut crate::conversation::context::RequestContext,
    dir: &str,
) -> Result<String, crate::error::CoreError> {
    use crate::error::CoreError;
    let dir = dir.trim();
    if dir.is_empty() {
        return Ok(match ctx.add_dirs.len() {
            0 => "no directories added (.add-dir DIR adds one)".into(),
            _ => format!(
                "added directories: {}",
                ctx.add_dirs
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    let held = ctx.sandbox.as_ref().is_some_and(|s| s.held_to_root());
    if ctx.depth > 0 || held {
        return Err(CoreError::Conflict(
            "only the user at the root of a conversation may add directories".into(),
        ));
    }
    let path = crate::tool::paths::resolve(&ctx.cwd, dir).path;
    if !path.is_dir() {
        return Err(CoreError::InvalidRequest(format!(
            "{} is not a directory",
            path.display()
        )));
    }
    if !ctx.add_dirs.contains(&path) {
        ctx.add_dirs.push(path.clone());
        let shown = path.to_string_lossy().into_owned();
        ctx.tool_policy.additional_directories.push(shown);
    }
    if let Some(mode) = ctx.sandbox.as_ref().map(|s| s.mode()) {
        ctx.sandbox = sandbox_for(state, ctx, mode)?;
    }
    Ok(format!(
        "added {}: file tools may reach it and commands may write it",
        path.display()
    ))
}
