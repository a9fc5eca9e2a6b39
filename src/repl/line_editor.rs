//! Building the reedline editor: key bindings (emacs or vi, Alt-Enter / Ctrl-J for a new
//! line, Tab for completion, Ctrl-O for the external editor, Ctrl-V to paste an image),
//! persistent history, the `:::` multi-line validator, dot-command highlighting and
//! history hints.

use std::path::Path;
use std::sync::{Arc, RwLock};

use nu_ansi_term::{Color, Style};
use reedline::{
    ColumnarMenu, DefaultHinter, EditCommand, Emacs, FileBackedHistory, Highlighter, KeyCode,
    KeyModifiers, Keybindings, MenuBuilder, Reedline, ReedlineEvent, ReedlineMenu, StyledText,
    ValidationResult, Validator, Vi, default_emacs_keybindings, default_vi_insert_keybindings,
    default_vi_normal_keybindings, default_vi_visual_keybindings,
};

use super::completer::{CompletionData, LokiCompleter};
use crate::dotcmd::COMMANDS;

const MENU: &str = "completion_menu";
/// Entries kept in the history file.
const HISTORY_SIZE: usize = 2000;

/// How to build the editor.
pub struct EditorOptions<'a> {
    /// `vi` or anything else for emacs.
    pub keybindings: &'a str,
    /// History file (`None`: history in memory only, off the record).
    pub history_file: Option<&'a Path>,
    /// Colour the input.
    pub color: bool,
    /// External editor command for Ctrl-O.
    pub editor: String,
    /// Completion data shared with the REPL.
    pub completion: Arc<RwLock<CompletionData>>,
}

/// Builds the line editor.
pub fn build(opts: EditorOptions<'_>) -> Reedline {
    let menu = ColumnarMenu::default().with_name(MENU);
    let mut editor = Reedline::create()
        .with_completer(Box::new(LokiCompleter::new(Arc::clone(&opts.completion))))
        .with_menu(ReedlineMenu::EngineCompleter(Box::new(menu)))
        .with_validator(Box::new(MultilineValidator))
        .with_highlighter(Box::new(CommandHighlighter {
            color: opts.color,
            data: Arc::clone(&opts.completion),
        }))
        .with_ansi_colors(opts.color)
        .use_bracketed_paste(true)
        .with_quick_completions(true)
        .with_partial_completions(true);
    if opts.color {
        editor = editor.with_hinter(Box::new(
            DefaultHinter::default().with_style(Style::new().fg(Color::DarkGray)),
        ));
    }
    if let Some(history) = opts.history_file.and_then(open_history) {
        editor = editor.with_history(Box::new(super::history::Redacting(history)));
    }
    let temp = std::env::temp_dir().join(format!("loki-{}-repl.md", std::process::id()));
    editor =
        editor.with_buffer_editor(crate::term::editor::line_editor_process(&opts.editor), temp);
    if opts.keybindings == "vi" {
        let mut insert = default_vi_insert_keybindings();
        add_common(&mut insert);
        let mut normal = default_vi_normal_keybindings();
        add_common(&mut normal);
        editor.with_edit_mode(Box::new(Vi::new(
            insert,
            normal,
            default_vi_visual_keybindings(),
        )))
    } else {
        let mut keys = default_emacs_keybindings();
        add_common(&mut keys);
        editor.with_edit_mode(Box::new(Emacs::new(keys)))
    }
}

/// The editor with its history kept in memory only from now on (`.otr`).
pub fn forget_history(editor: Reedline) -> Reedline {
    match FileBackedHistory::new(HISTORY_SIZE) {
        Ok(history) => editor.with_history(Box::new(history)),
        Err(_) => editor,
    }
}

fn open_history(path: &Path) -> Option<FileBackedHistory> {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if !path.exists() {
        // Prompts can contain anything; keep the history private.
        let _ = crate::atomic_file::write_atomic(path, b"", true);
    }
    FileBackedHistory::with_file(HISTORY_SIZE, path.to_path_buf()).ok()
}

/// What Shift-Tab asks the REPL for: the next permission mode.
pub const NEXT_MODE: &str = "loki:next-permission-mode";
/// What Ctrl-V asks the REPL for: the clipboard's image, for the next prompt (text is
/// pasted by the terminal itself, as a bracketed paste).
pub const PASTE: &str = "loki:paste-image";

fn add_common(keys: &mut Keybindings) {
    keys.add_binding(
        KeyModifiers::NONE,
        KeyCode::Tab,
        ReedlineEvent::UntilFound(vec![
            ReedlineEvent::Menu(MENU.into()),
            ReedlineEvent::MenuNext,
        ]),
    );
    // Shift-Tab goes back in an open completion menu; otherwise it cycles the
    // permission mode.
    keys.add_binding(
        KeyModifiers::SHIFT,
        KeyCode::BackTab,
        ReedlineEvent::UntilFound(vec![
            ReedlineEvent::MenuPrevious,
            ReedlineEvent::ExecuteHostCommand(NEXT_MODE.into()),
        ]),
    );
    let newline = ReedlineEvent::Edit(vec![EditCommand::InsertNewline]);
    keys.add_binding(KeyModifiers::ALT, KeyCode::Enter, newline.clone());
    keys.add_binding(KeyModifiers::SHIFT, KeyCode::Enter, newline.clone());
    keys.add_binding(KeyModifiers::CONTROL, KeyCode::Enter, newline.clone());
    keys.add_binding(KeyModifiers::CONTROL, KeyCode::Char('j'), newline);
    keys.add_binding(
        KeyModifiers::CONTROL,
        KeyCode::Char('o'),
        ReedlineEvent::OpenEditor,
    );
    keys.add_binding(
        KeyModifiers::CONTROL,
        KeyCode::Char('v'),
        ReedlineEvent::ExecuteHostCommand(PASTE.into()),
    );
}

/// Keeps the buffer open between `:::` and `:::`.
struct MultilineValidator;

impl Validator for MultilineValidator {
    fn validate(&self, line: &str) -> ValidationResult {
        if is_open_block(line) {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Complete
        }
    }
}

/// True for input that starts a `:::` block without closing it.
pub fn is_open_block(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.starts_with(":::") && !(trimmed.len() >= 6 && trimmed.ends_with(":::"))
}

/// The text inside a `:::` block (or the line unchanged).
pub fn strip_block(line: &str) -> String {
    let trimmed = line.trim();
    match trimmed
        .strip_prefix(":::")
        .and_then(|r| r.strip_suffix(":::"))
    {
        Some(inner) => inner.trim_matches('\n').to_string(),
        None => line.to_string(),
    }
}

/// Colours a leading dot-command.
struct CommandHighlighter {
    color: bool,
    /// Follows `.set highlight`.
    data: Arc<RwLock<CompletionData>>,
}

impl Highlighter for CommandHighlighter {
    fn highlight(&self, line: &str, _cursor: usize) -> StyledText {
        let shown = visible(line);
        let line: &str = &shown;
        let mut text = StyledText::new();
        let plain = self.data.read().map(|d| d.plain_input).unwrap_or(false);
        if !self.color || plain {
            text.push((Style::new(), line.to_string()));
            return text;
        }
        let word_end = line.find(char::is_whitespace).unwrap_or(line.len());
        let word = &line[..word_end];
        if word.starts_with('.') && COMMANDS.iter().any(|c| c.name == word) {
            text.push((Style::new().fg(Color::Green), word.to_string()));
            text.push((Style::new(), line[word_end..].to_string()));
        } else {
            text.push((Style::new(), line.to_string()));
        }
        text
    }
}

/// The input as drawn: a tab is one space (a terminal would give it no width where the
/// editor expects one), other control characters are `?` (`¿` for the two-byte C1
/// ones), so nothing typed or pasted reaches the terminal as a control sequence. Each
/// replacement has the byte length of what it replaces: the editor places the cursor by
/// byte offset.
fn visible(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.chars().any(|c| c.is_control() && c != '\n') {
        return std::borrow::Cow::Borrowed(line);
    }
    let shown: String = line
        .chars()
        .map(|c| match c {
            '\n' => '\n',
            '\t' => ' ',
            c if c.is_ascii_control() => '?',
            c if c.is_control() && c.len_utf8() == 2 => '¿',
            c if c.is_control() => '?',
            c => c,
        })
        .collect();
    std::borrow::Cow::Owned(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_drawn_at_their_byte_length() {
        for line in ["a\tb", "x\x1b[2Jy", "p\u{9b}q", "fine\nline"] {
            let shown = visible(line);
            assert_eq!(shown.len(), line.len(), "{line:?}");
            assert!(!shown.contains(['\t', '\x1b', '\u{9b}']), "{shown:?}");
        }
        assert_eq!(visible("a\tb"), "a b");
        assert_eq!(visible("fine\nline"), "fine\nline");
    }

    #[test]
    fn multiline_blocks() {
        assert!(is_open_block(":::"));
        assert!(is_open_block(":::\nfirst line"));
        assert!(!is_open_block(":::\nfirst\nsecond\n:::"));
        assert!(!is_open_block("hello"));
        assert_eq!(strip_block(":::\nfirst\nsecond\n:::"), "first\nsecond");
        assert_eq!(strip_block("plain"), "plain");
    }
}
