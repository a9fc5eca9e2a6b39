//! `.vault add|get|update|delete|list`: the command-line operations, inside the REPL.

use crate::term::vault_prompt::prompt_value;
use crate::vault::commands::{Op, Outcome, perform};

use std::sync::Arc;

impl super::Repl {
    pub(super) fn vault(&mut self, op: &Op) {
        let state = Arc::clone(self.state());
        match perform(op, &state.vault, prompt_value) {
            Ok(Outcome::Value(value)) => self.println(&value),
            Ok(Outcome::Names(names)) if names.is_empty() => self.println("The vault is empty."),
            Ok(Outcome::Names(names)) => self.println(&names.join("\n")),
            Ok(Outcome::Done(line)) => self.println(&line),
            Err(e) => self.error(&e.to_string()),
        }
    }
}
