//! `.rewind`: the conversation's turns (time, prompt, files changed), newest first; the
//! chosen turn and every later one are undone — files, conversation, or both. A file
//! someone changed after the turn is overwritten only if the user says so.

use crate::checkpoint::rewind::Restore;
use crate::conversation::Op;
use crate::engine::command::Command;
use crate::term::yes_no::{self, Reply};

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
                crate::render::sanitize::display(&format!(
                    "{time}  turn {}: {}  ({files})",
                    t.turn, t.prompt
                ))
                .into_owned()
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
            let op = Op::Command(Command::Rewind { count, what, force });
            match self.conv.submit(op, &crate::engine::Discard).await {
                Ok(reply) => return self.show_applied(&reply.into_applied()),
                Err(e) if !force && e.to_string().contains("changed since") => {
                    self.error(&e.to_string());
                    let answer = self
                        .ask_user(|| yes_no::ask("Overwrite them?", false, "n keeps them"))
                        .await;
                    if !matches!(answer, Ok(Ok(Reply::Yes))) {
                        return;
                    }
                    force = true;
                }
                Err(e) => return self.error(&e.to_string()),
            }
        }
    }
}
