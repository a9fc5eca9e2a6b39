//! The user's editor: `editor:` from the configuration, else `$VISUAL`, `$EDITOR`, else
//! `nano`, run as a command line split like a shell would.

use crate::state::AppState;

/// A process for an editor command line such as `code --wait` (split like a shell would).
pub fn process(editor: &str) -> std::process::Command {
    let mut words = crate::shell_words::split(editor).into_iter();
    let mut cmd = std::process::Command::new(words.next().unwrap_or_else(|| "nano".into()));
    cmd.args(words);
    cmd
}

/// `editor:` from config, else `$VISUAL`, `$EDITOR`, else `nano`.
pub fn command(state: &AppState) -> String {
    state
        .config
        .editor
        .clone()
        .or_else(|| state.env.get("VISUAL").map(str::to_string))
        .or_else(|| state.env.get("EDITOR").map(str::to_string))
        .unwrap_or_else(|| "nano".into())
}
