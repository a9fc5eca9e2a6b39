//! The `--resume` / `.resume` picker: saved conversations, newest first, one line each
//! (date, directory, first prompt, model, cost); typing filters them (inquire's fuzzy
//! match over the whole line).

/// Asks which of `lines` to open; its index, or `None` when the user left (Esc, Ctrl-C).
pub fn pick(lines: Vec<String>) -> Option<usize> {
    inquire::Select::new("Resume which conversation?", lines)
        .with_help_message("type to filter, ↑↓ to move, Enter to open, Esc to leave")
        .with_page_size(12)
        .raw_prompt()
        .ok()
        .map(|chosen| chosen.index)
}
