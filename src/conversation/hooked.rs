//! Where a conversation's hooks fire around a prompt (see [`crate::hooks`]): the
//! `UserPromptSubmit` hooks may block the prompt or add context (with what the
//! `SessionStart` hooks gave), and the `Stop` hooks may send a finished turn on — a
//! sub-agent's turn by `SubagentStop` hooks. Only the user's conversation runs the
//! prompt hooks, not its sub-agents.

use super::Conversation;
use crate::error::CoreError;
use loki_protocol::emitter::Emitter;
use loki_protocol::op::{RunOptions, RunOutcome, UserInput};

/// Most times `Stop` hooks may send one turn on.
const MAX_STOP_CONTINUATIONS: usize = 3;

impl Conversation {
    /// `UserPromptSubmit`: a blocked prompt is an error that names the hook's reason; the
    /// context hooks give goes with the prompt.
    pub(super) async fn prompt_hooks(&mut self, input: &mut UserInput) -> Result<(), CoreError> {
        let Some(hooks) = self.ctx.tool_hooks.clone().filter(|_| self.ctx.depth == 0) else {
            return Ok(());
        };
        let said = hooks.prompt(&input.text).await;
        if let Some(reason) = said.blocked {
            return Err(CoreError::Blocked(reason));
        }
        let mut context = std::mem::take(&mut self.hook_context);
        context.extend(said.context);
        if !context.is_empty() {
            input.text = format!(
                "{}\n\n<hook-context>\n{}\n</hook-context>",
                input.text,
                context.join("\n")
            );
        }
        Ok(())
    }

    /// `Stop`: while a hook gives a reason to go on (at most a few times), the reason is
    /// the next prompt; the last turn's outcome comes back.
    pub(super) async fn stop_hooks(
        &mut self,
        mut outcome: RunOutcome,
        options: RunOptions,
        emitter: &dyn Emitter,
    ) -> Result<RunOutcome, CoreError> {
        let Some(hooks) = self.ctx.tool_hooks.clone() else {
            return Ok(outcome);
        };
        // A sub-agent's end is `SubagentStop`, the user's conversation's `Stop`.
        let child = self.ctx.depth > 0;
        for again in 0..MAX_STOP_CONTINUATIONS {
            let said = if child {
                hooks.subagent_stop(again > 0).await
            } else {
                hooks.stop(again > 0).await
            };
            let Some(reason) = said else {
                break;
            };
            outcome = self.run_again(reason, options, emitter).await?;
        }
        Ok(outcome)
    }
}
