//! `/name args`: a skill or a Claude Code command (`.claude/commands/*.md`,
//! `~/.claude/commands/*.md`) run as a prompt. Its front matter holds for that turn only:
//! `model` runs it with another model, `allowed-tools` lets the calls those rules cover
//! run unasked (deny and ask rules still win; a project's command only once the project
//! is trusted). Both are put back when the turn ends.

use std::sync::Arc;

use super::Conversation;
use super::context::UnavailableModel;
use crate::client::Model;
use crate::client::Provider;
use crate::config::permissions::Rules;
use loki_protocol::emitter::Emitter;
use loki_protocol::event::{Event, Notice};
use loki_protocol::op::UserInput;

/// What a command's turn changed, to put back after it.
#[derive(Default)]
pub(super) struct CommandTurn {
    /// The model, provider and remembered session model before the turn.
    model: Option<(Model, Arc<dyn Provider>, Option<UnavailableModel>)>,
    /// The rules before the turn.
    rules: Option<Arc<Rules>>,
}

impl Conversation {
    /// When `input` is `/name args` of a skill or command a person may run: its prompt
    /// replaces the text, and its model and allowed tools apply until
    /// [`Conversation::end_command_turn`].
    pub(super) fn start_command_turn(
        &mut self,
        input: &mut UserInput,
        emitter: &dyn Emitter,
    ) -> CommandTurn {
        let mut turn = CommandTurn::default();
        if !input.text.starts_with('/') {
            return turn;
        }
        let skills =
            crate::skill::discover(&self.state().paths.config_dir.join("skills"), &self.ctx.cwd);
        let Some(invocation) = crate::skill::invocation(&skills, input.text.trim()) else {
            return turn;
        };
        input.text = invocation.prompt;
        if let Some(id) = invocation.model.as_deref() {
            let before = (
                self.ctx.model.clone(),
                Arc::clone(&self.ctx.provider),
                self.ctx.session_model.clone(),
            );
            let state = Arc::clone(self.state());
            match self.ctx.set_model(&state, id) {
                Ok(()) => turn.model = Some(before),
                Err(e) => {
                    let sink = crate::conversation::Sink::for_context(&self.ctx, emitter);
                    sink.emit(Event::Notice(Notice::warning(format!(
                        "the command's model `{id}` cannot be used ({e}); the turn runs with {}",
                        self.ctx.model.id()
                    ))));
                    sink.flush();
                }
            }
        }
        let untrusted = invocation.project.as_deref().is_some_and(|project| {
            !self
                .state()
                .paths
                .trusted_project
                .as_deref()
                .is_some_and(|t| t.starts_with(project) || project.starts_with(t))
        });
        if untrusted && !invocation.allowed_tools.is_empty() {
            // A project's `allowed-tools` loosens approvals, as its settings' allow rules
            // do: only once the project is trusted.
            let sink = crate::conversation::Sink::for_context(&self.ctx, emitter);
            sink.emit(Event::Notice(Notice::warning(
                "the command's allowed-tools are not used: the project is not trusted \
                 (--trust-project trusts it for a run)"
                    .to_string(),
            )));
            sink.flush();
        } else if !invocation.allowed_tools.is_empty() {
            let rules = Arc::clone(&self.ctx.tool_policy.rules);
            self.ctx.tool_policy.rules = Arc::new(
                rules.with_allowed(&invocation.allowed_tools, "the command's allowed-tools"),
            );
            turn.rules = Some(rules);
        }
        turn
    }

    /// Puts back what [`Conversation::start_command_turn`] changed.
    pub(super) fn end_command_turn(&mut self, turn: CommandTurn) {
        if let Some((model, provider, session_model)) = turn.model {
            self.ctx.model = model;
            self.ctx.provider = provider;
            self.ctx.session_model = session_model;
        }
        if let Some(rules) = turn.rules {
            self.ctx.tool_policy.rules = rules;
        }
    }
}
