//! `.edit message N`: one of your earlier prompts in the editor; the conversation goes
//! back to before it and the edited prompt is sent — a fork point inside the
//! conversation (`.fork` first keeps the original line in a session of its own).

use loki_protocol::command::Command;
use loki_protocol::op::UserInput;

impl super::Repl {
    /// Edits prompt `n` (1-based), cuts the conversation there and sends the edit. An
    /// edit left empty changes nothing.
    pub(super) async fn edit_message(&mut self, n: usize) {
        let Some(text) = self.conv.user_message(n) else {
            let prompts = self.conv.status().user_messages;
            return self.error(&format!(
                "there is no message {n}: the conversation has {prompts} prompt(s)"
            ));
        };
        let cache = self.state().paths.cache_dir.clone();
        let draft = cache.join(format!("message-edit-{}.md", std::process::id()));
        if let Err(e) = std::fs::create_dir_all(&cache)
            .and_then(|()| crate::atomic_file::write_atomic(&draft, text.as_bytes(), true))
        {
            return self.error(&format!("cannot write {}: {e}", draft.display()));
        }
        let edited = if self.run_editor(&draft) {
            crate::atomic_file::read_regular_text(&draft, crate::atomic_file::MAX_OWN_FILE).ok()
        } else {
            None
        };
        let _ = std::fs::remove_file(&draft);
        let Some(edited) = edited.filter(|t| !t.trim().is_empty()) else {
            return self.note("message not edited; the conversation is unchanged");
        };
        if !self
            .apply(Command::CutConversation { user_message: n })
            .await
        {
            return;
        }
        self.ask(UserInput {
            text: edited.trim_end().to_string(),
            ..UserInput::default()
        })
        .await;
    }
}
