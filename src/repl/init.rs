//! `.init`: the REPL's `loki --init`. The model writes `AGENTS.md` from a compact view
//! of the repository in the conversation's working directory ([`crate::agents_md`]),
//! streamed as any answer is; the file is then written atomically, and an existing one
//! only after the user says yes.

use std::sync::Arc;

use crate::render::{TerminalEmitter, TerminalOptions};
use crate::term::yes_no::{self, Reply};
use loki_protocol::op::{RunOptions, UserInput};

impl super::Repl {
    /// `.init`: asks the model for `AGENTS.md`, shows it, writes it.
    pub(super) async fn init_agents_md(&mut self) {
        let cwd = self.conv.status().cwd;
        let path = crate::agents_md::path_in(&cwd);
        let input = UserInput {
            text: crate::agents_md::prompt(&crate::agents_md::survey(&cwd)),
            ..UserInput::default()
        };
        let opts = TerminalOptions::detect(&self.state().terminal, &self.display, false);
        let emitter = TerminalEmitter::with_live_view(
            opts,
            Some(self.cancel.clone()),
            Arc::clone(&self.live),
        );
        let result = self
            .conv
            .prompt(input, RunOptions::default(), None, &emitter)
            .await;
        drop(emitter);
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(e) => return self.report_turn(Err(e)),
        };
        let text = crate::agents_md::from_answer(&outcome.text);
        if text.trim().is_empty() {
            return self.error("the model's answer was empty; AGENTS.md was not written");
        }
        if path.exists() {
            let question = format!("{} exists; replace it with the text above?", path.display());
            let reply = self
                .ask_user(move || yes_no::ask(&question, false, "n keeps the existing file"))
                .await;
            if !matches!(reply, Ok(Ok(Reply::Yes))) {
                return self.note("kept the existing AGENTS.md");
            }
        }
        match crate::agents_md::write(&path, &text) {
            Ok(()) => self.note(&format!("wrote {}", path.display())),
            Err(e) => self.error(&format!("cannot write {}: {e}", path.display())),
        }
    }
}
