//! `.role NEW` and `.macro NEW`: a role or macro that does not exist yet is offered to be
//! written in the editor, from a short template, as in Loki. A file left empty or as the
//! template was is not kept.

use crate::term::yes_no::{self, Reply};
use loki_protocol::command::Command;

/// What a new role starts as.
const ROLE_TEMPLATE: &str = "---\n# Optional settings: model, temperature, top_p, enabled_tools, enabled_mcp_servers\n---\nDescribe how the assistant should behave in this role.\n";

/// What a new macro starts as.
const MACRO_TEMPLATE: &str = "# Each step is a REPL line, run in order; {{name}} is replaced by a variable.\nvariables:\n  - name: topic\n    default: Rust\nsteps:\n  - .prompt You are a concise teacher.\n  - Explain {{topic}} in three sentences.\n";

/// Names a new file may take: letters, digits, `-`, `_` and `.`, not hidden.
fn creatable(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl super::Repl {
    /// `.role NAME` for a role that has no file and is not built in: offers to write it,
    /// then uses it. `false` when the role exists (or the name cannot be a file): the
    /// command runs as usual.
    pub(super) async fn offer_new_role(&mut self, name: &str) -> bool {
        let dir = self.state().paths.roles_dir.clone();
        if !creatable(name) || crate::role::list(&dir).iter().any(|r| r == name) {
            return false;
        }
        let path = dir.join(format!("{name}.md"));
        if self
            .create_in_editor("role", name, &path, ROLE_TEMPLATE)
            .await
        {
            self.apply(Command::UseRole(name.to_string())).await;
        }
        true
    }

    /// `.macro NAME` for a macro that does not exist: offers to write it. `false` when it
    /// exists (the macro runs as usual).
    pub(super) async fn offer_new_macro(&mut self, name: &str) -> bool {
        let dir = self.state().paths.macros_dir.clone();
        if !creatable(name) || crate::macros::list(&dir).iter().any(|m| m == name) {
            return false;
        }
        let path = dir.join(format!("{name}.yaml"));
        if self
            .create_in_editor("macro", name, &path, MACRO_TEMPLATE)
            .await
        {
            self.note(&format!(
                "created macro `{name}`; run it with .macro {name}"
            ));
        }
        true
    }

    /// Asks, writes the template and opens the editor; whether a file was kept.
    async fn create_in_editor(
        &mut self,
        what: &'static str,
        name: &str,
        path: &std::path::Path,
        template: &str,
    ) -> bool {
        let question = format!("There is no {what} `{name}`. Create it in the editor?");
        let answer = self
            .ask_user(move || yes_no::ask(&question, true, ""))
            .await;
        if !matches!(answer, Ok(Ok(Reply::Yes))) {
            self.note(&format!("unknown {what} `{name}`"));
            return false;
        }
        if let Some(dir) = path.parent()
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            self.error(&format!("cannot create {}: {e}", dir.display()));
            return false;
        }
        if let Err(e) = crate::atomic_file::write_atomic(path, template.as_bytes(), false) {
            self.error(&format!("cannot write {}: {e}", path.display()));
            return false;
        }
        let edited = self.run_editor(path);
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if !edited || text.trim().is_empty() || text == template {
            let _ = std::fs::remove_file(path);
            self.note(&format!(
                "{what} `{name}` not created (nothing was written)"
            ));
            return false;
        }
        self.note(&format!("wrote {}", path.display()));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_become_files() {
        assert!(creatable("reviewer") && creatable("my-role_2.v1"));
        assert!(!creatable("") && !creatable(".hidden") && !creatable("../x"));
        assert!(!creatable("a/b") && !creatable("a b"));
    }
}
