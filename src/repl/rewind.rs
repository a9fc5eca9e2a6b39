//! `.rewind`: the conversation's turns (time, prompt, files changed), newest first; the
//! chosen turn and every later one are undone — files, conversation, or both. A file
//! someone changed after the turn is overwritten only if the user says so.

use crate::checkpoint::rewind::RewindError;
use crate::error::CoreError;
use crate::term::yes_no::{self, Reply};
use loki_protocol::command::Command;
use loki_protocol::command::Restore;

const BOTH: &str = "Files and conversation";
const FILES: &str = "Files only";
const CONVERSATION: &str = "Conversation only";

impl super::Repl {
    pub(super) async fn rewind(&mut self) {
        let turns = self.conv.checkpoints();
        if turns.is_empty() {
            return self.note("nothing to rewind yet");
        }
        self.note("changes made by shell commands (execute_command) are not tracked");
        let width = crate::render::screenful::terminal_width();
        let shown: Vec<String> = turns
            .iter()
            .rev()
            .map(|t| {
                let time = t.time.get(11..16).unwrap_or(&t.time);
                let files = match t.files.len() {
                    0 => "no files".to_string(),
                    1 => "1 file".to_string(),
                    n => format!("{n} files"),
                };
                use crate::render::screenful::{cut, display_width};
                let head = format!("{time}  turn {}: ", t.turn);
                let tail = format!("  ({files})");
                // One row per turn, the prompt cut to what is left of the width: the
                // menu's pointer takes two columns, and a row the terminal wrapped would
                // throw the menu's redrawing off.
                let room = width
                    .saturating_sub(2 + display_width(&head) + display_width(&tail))
                    .max(8);
                let prompt = loki_wire::sanitize::display(&t.prompt);
                format!("{head}{}{tail}", cut(&prompt, room))
            })
            .collect();
        let chosen = self
            .ask_user(move || {
                let picked = inquire::Select::new("Rewind to before:", shown)
                    .without_help_message()
                    .raw_prompt();
                let picked = picked.ok()?;
                let what = inquire::Select::new("Restore:", vec![BOTH, FILES, CONVERSATION])
                    .without_help_message()
                    .prompt()
                    .ok()?;
                Some((picked.index, what))
            })
            .await;
        let Ok(Some((index, what))) = chosen else {
            return;
        };
        let what = match what {
            FILES => Restore::Files,
            CONVERSATION => Restore::Conversation,
            _ => Restore::Both,
        };
        // The list is newest first: the chosen turn and the ones after it are undone.
        let count = index + 1;
        let mut force = false;
        loop {
            let rewind = Command::Rewind { count, what, force };
            match self
                .conv
                .command(rewind, &loki_protocol::emitter::Discard)
                .await
            {
                Ok(applied) => return self.show_applied(&applied),
                Err(e @ CoreError::Rewind(RewindError::ChangedSince(_))) if !force => {
                    self.error(&e.to_string());
                    let answer = self
                        .ask_user(|| yes_no::ask("Overwrite them?", false, "n keeps them"))
                        .await;
                    if !matches!(answer, Ok(Ok(Reply::Yes))) {
                        return;
                    }
                    force = true;
                }
                Err(e @ CoreError::Rewind(RewindError::ConversationChanged { .. })) => {
                    return self.error(&format!(
                        "{e}; choose \"{FILES}\" to restore just the files"
                    ));
                }
                Err(e) => return self.error(&e.to_string()),
            }
        }
    }
}
