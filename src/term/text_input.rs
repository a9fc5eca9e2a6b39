//! One-line text questions ("Session name:", "Tell the model:") read with the line
//! editor, so the usual editing keys work (Ctrl-U, Ctrl-W, Ctrl-A/E, arrows) instead of
//! being typed as letters. Esc, Ctrl-C and Ctrl-D give up, like `inquire`'s
//! "operation cancelled", so callers treat both the same way.

use reedline::{
    EditCommand, Emacs, KeyCode, KeyModifiers, Reedline, ReedlineEvent, Signal,
    default_emacs_keybindings,
};

use super::line_prompt::LokiPrompt;

/// Why `validate` refused an answer: the message shown beside the next attempt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl From<&str> for Invalid {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

/// Asks `label` until `validate` accepts the (trimmed) answer; its message is shown on
/// the right of the next attempt. `hint` is shown there at first.
pub fn ask(
    label: &str,
    hint: &str,
    validate: impl Fn(&str) -> Result<(), Invalid>,
) -> Result<String, inquire::InquireError> {
    let mut keys = default_emacs_keybindings();
    keys.add_binding(KeyModifiers::NONE, KeyCode::Esc, ReedlineEvent::CtrlC);
    keys.add_binding(
        KeyModifiers::CONTROL,
        KeyCode::Char('u'),
        ReedlineEvent::Edit(vec![EditCommand::CutFromLineStart]),
    );
    let mut editor = Reedline::create().with_edit_mode(Box::new(Emacs::new(keys)));
    let mut prompt = LokiPrompt {
        left: format!("{label} "),
        right: hint.to_string(),
    };
    loop {
        match editor.read_line(&prompt) {
            Ok(Signal::Success(text)) => {
                let text = text.trim().to_string();
                match validate(&text) {
                    Ok(()) => return Ok(text),
                    Err(Invalid(message)) => prompt.right = message,
                }
            }
            Ok(_) => return Err(inquire::InquireError::OperationCanceled),
            Err(e) => return Err(inquire::InquireError::IO(e)),
        }
    }
}
