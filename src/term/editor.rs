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

/// The editor for Ctrl-O in the line editor, which runs it itself and has no way to
/// report an editor that cannot start (it would end the REPL and lose the line): on Unix
/// it is started through `/bin/sh`, which says so on the terminal and leaves the file —
/// the line being typed — as it was.
pub fn line_editor_process(editor: &str) -> std::process::Command {
    if !cfg!(unix) {
        return process(editor);
    }
    let mut words = crate::shell_words::split(editor);
    if words.is_empty() {
        words.push("nano".into());
    }
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(
            "command -v \"$0\" >/dev/null 2>&1 || { printf 'error: could not run the editor `%s` (set `editor:` in config.yaml, or $VISUAL or $EDITOR)\n' \"$0\" >&2; exit 127; }; exec \"$0\" \"$@\"",
        )
        .args(words);
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
