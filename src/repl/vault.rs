//! `.vault add|get|update|delete|list`: the command-line operations, inside the REPL.

use crate::term::vault_prompt::prompt_value;
use crate::vault::commands::{Op, Outcome, perform};

use std::sync::Arc;

impl super::Repl {
    pub(super) async fn vault(&mut self, op: &Op) {
        let state = Arc::clone(self.state());
        let (op, op_kind) = (op.clone(), op.clone());
        // A secret is typed on a thread of its own: SIGTERM or SIGHUP ends the wait (and
        // the REPL, at the top of its loop) instead of going unheard.
        let Ok(done) = self
            .ask_user(move || perform(&op, &state.vault, prompt_value))
            .await
        else {
            return;
        };
        if done.is_ok() && matches!(op_kind, Op::Add(_) | Op::Update(_) | Op::Delete(_)) {
            self.state().mcp.secrets_changed();
        }
        match done {
            Ok(Outcome::Value(value)) => self.println(&value),
            Ok(Outcome::Names(names)) if names.is_empty() => self.println("The vault is empty."),
            Ok(Outcome::Names(names)) => self.println(&names.join("\n")),
            Ok(Outcome::Done(line)) => self.println(&line),
            Err(e) => self.error(&e.to_string()),
        }
    }
}
