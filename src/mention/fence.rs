//! Whether a mention may be attached: what the file tools could not read is not
//! attached either — a `Read(…)` deny rule, and, under a sandbox, its deny list
//! (credential files, loki's own directories, `sandbox.deny_read`). `-f` is the user's
//! explicit choice and is not fenced; a mention is a word in a prompt, which may have
//! been pasted or typed in passing, so it gets the model's fences.

use std::path::Path;
use std::sync::Arc;

use crate::config::permissions::Rules;
use crate::sandbox::{Sandbox, SandboxMode};
use crate::state::AppState;

/// The fences of one prompt, worked out once for all its mentions.
pub struct Fence {
    rules: Rules,
    cwd: std::path::PathBuf,
    /// Made on first use: a prompt whose mentions name nothing builds none.
    sandbox: std::sync::OnceLock<Option<Arc<Sandbox>>>,
    mode: SandboxMode,
}

impl Fence {
    /// The fences of a conversation in `cwd` whose sandbox mode is `mode`.
    pub fn new(state: &AppState, cwd: &Path, mode: SandboxMode) -> Self {
        Self {
            rules: Rules::new(&state.config.permissions),
            cwd: cwd.to_path_buf(),
            sandbox: std::sync::OnceLock::new(),
            mode,
        }
    }

    /// Why `absolute` (shown as `shown`) may not be attached, if it may not.
    pub fn refusal(&self, state: &AppState, shown: &str, absolute: &Path) -> Option<String> {
        let relative = crate::tool::paths::display(&self.cwd, absolute);
        if let Some(rule) = self
            .rules
            .denies_read(&relative, absolute)
            .or_else(|| self.rules.denies_read(shown, absolute))
        {
            return Some(format!(
                "reading it is denied by {}",
                self.rules.describe(rule)
            ));
        }
        let sandbox = self.sandbox.get_or_init(|| {
            if self.mode == SandboxMode::DangerFullAccess {
                return None;
            }
            crate::conversation::confinement::build(
                state,
                &self.cwd,
                self.mode,
                &[],
                &self.rules,
                false,
            )
            .ok()
            .flatten()
        });
        match sandbox {
            Some(sandbox) if !sandbox.may_read(absolute) => {
                Some("the sandbox keeps credentials and loki's own files out of reach".to_string())
            }
            _ => None,
        }
    }
}
