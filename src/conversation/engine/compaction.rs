//! When a session is compacted, and the memory flush that comes first.
//!
//! A session is compacted after a turn once its history reaches the lower of
//! `compression_threshold` and `compaction_share` percent of the model's input window
//! (never more than 80 %: summarising starts at the latest when a fifth of the window is
//! left). Before the older messages are summarised, the facts worth keeping beyond this
//! session are extracted from them (by `small_model`) and appended to MEMORY.md under a
//! dated heading: `memory_flush: ask` shows the lines as a diff and asks first (the
//! conversation's approver: a terminal menu, a headless `tool_call_approval_requested`
//! event), `always` writes, `never` skips.

use super::{Engine, turn};
use crate::conversation::Sink;
use crate::conversation::context::RequestContext;
use crate::tool::approve::ApprovalRequest;
use loki_protocol::event::{self, Event};
use loki_protocol::op::Decision;
use loki_wire::message::{Message, Role};

/// The most of the input window history may fill before it is summarised.
const MAX_SHARE: usize = 80;

/// What the extraction asks for.
const EXTRACT_PROMPT: &str = "Before this conversation is shortened: list the durable facts in it \
worth remembering in later conversations — about the user, their preferences, their projects and \
decisions made. One fact per line, each starting with \"- \". Leave out anything only this \
conversation needs. If there is nothing, answer NONE.";

/// Most facts taken from one extraction.
const MAX_FACTS: usize = 30;

impl Engine {
    /// The history size (tokens) at which the session is compacted after a turn; 0:
    /// never.
    pub(super) fn compaction_limit(&self, ctx: &RequestContext) -> usize {
        let threshold = self.compression_threshold(ctx);
        if threshold == 0 {
            return 0;
        }
        let share = match usize::from(self.state.config.compaction_share) {
            0 => MAX_SHARE,
            share => share.min(MAX_SHARE),
        };
        match ctx.model.config.max_input_tokens.filter(|m| *m > 0) {
            Some(window) => threshold.min((window as usize).saturating_mul(share) / 100),
            None => threshold,
        }
    }

    /// Where the input window goes for the next message (`.context`): the tools counted
    /// are those declared now.
    pub fn context_report(&self, ctx: &RequestContext) -> super::context_parts::ContextReport {
        let tools = super::scope::declared(&self.state, ctx);
        let offered = super::tool_round::declared_tools(&self.state, ctx, &tools);
        super::context_parts::report(&self.state, ctx, &offered, self.compaction_limit(ctx))
    }

    /// Extracts durable facts from `old` and appends them to MEMORY.md, as
    /// `memory_flush` says. Failures are warnings: compaction goes on without them.
    pub(super) async fn flush_memory(
        &self,
        ctx: &RequestContext,
        emitter: &Sink<'_>,
        old: &[Message],
    ) -> Result<(), crate::error::CoreError> {
        let config = &self.state.config;
        // The workspace directory is the opt-in, as for the memory tools.
        if !config.memory
            || ctx.otr.get()
            || config.memory_flush == "never"
            || !self.state.memory.dir().is_dir()
        {
            return Ok(());
        }
        // Asking with no one to answer would waste the extraction.
        let unreviewed = config.memory_flush == "always" || ctx.tool_policy.yolo();
        if !old.iter().any(|m| m.role == Role::User) || !(unreviewed || ctx.approver.can_ask()) {
            return Ok(());
        }
        let mut messages = crate::session::compress::for_summary(old);
        messages.push(Message::text(Role::User, EXTRACT_PROMPT));
        let request = turn::side_request(messages, None, None);
        let small = self.small_model(ctx, emitter);
        let answer = match turn::complete_text_on(ctx, small.as_ref(), &request).await {
            Ok(answer) => answer,
            Err(crate::error::CoreError::Cancelled) => {
                return Err(crate::error::CoreError::Cancelled);
            }
            Err(e) => {
                emitter.emit(Event::Notice(event::Notice::warning(format!(
                    "no facts saved to memory before compressing: {e}"
                ))));
                return Ok(());
            }
        };
        let facts = parse_facts(&loki_wire::openai_wire::strip_think(&answer));
        if facts.is_empty() {
            return Ok(());
        }
        let now = std::time::SystemTime::now();
        let file = self.state.memory.memory_file();
        let write = unreviewed || self.review(ctx, emitter, &file, &facts, now).await?;
        if !write {
            emitter.emit(Event::Notice(event::Notice::info(format!(
                "{} facts not saved to memory",
                facts.len()
            ))));
            return Ok(());
        }
        match self.state.memory.flush(&facts, now) {
            Ok(path) => emitter.emit(Event::Notice(event::Notice::info(format!(
                "saved {} facts to {}",
                facts.len(),
                path.display()
            )))),
            Err(e) => emitter.emit(Event::Notice(event::Notice::warning(format!(
                "cannot write {}: {e}",
                file.display()
            )))),
        }
        emitter.flush();
        Ok(())
    }

    /// Shows the lines the flush adds as a diff and asks the conversation's approver.
    async fn review(
        &self,
        ctx: &RequestContext,
        emitter: &Sink<'_>,
        file: &std::path::Path,
        facts: &[String],
        now: std::time::SystemTime,
    ) -> Result<bool, crate::error::CoreError> {
        let existing = self.state.memory.line_count();
        let added = crate::memory::Memory::flush_lines(facts, now);
        let shown = file.display();
        let count = added.len();
        let mut preview =
            format!("--- {shown}\n+++ {shown}\n@@ -{existing} +{existing},{count} @@\n");
        for line in &added {
            preview.push('+');
            preview.push_str(line);
            preview.push('\n');
        }
        let request = ApprovalRequest {
            call_id: format!("memory-flush-{}", ctx.id),
            tool: "memory".into(),
            summary: format!(
                "append {} facts from the older messages to {}",
                facts.len(),
                file.display()
            ),
            preview: Some(preview),
            allow_always: false,
            from: ctx.id.to_string(),
            why_asked: None,
        };
        // Announced like a tool call's approval, so a headless client can answer it.
        let approver = super::tool_round::Announcing {
            inner: ctx.approver.as_ref(),
            sink: emitter,
            hooks: None,
        };
        match crate::tool::approve::Approver::approve(&approver, &request).await {
            Decision::Approve | Decision::ApproveAlways | Decision::ApproveEdited(_) => Ok(true),
            // Esc at the question is "not now"; only a stopped turn stops compaction.
            Decision::Cancel if ctx.cancel.is_cancelled() => {
                Err(crate::error::CoreError::Cancelled)
            }
            Decision::Cancel
            | Decision::Deny
            | Decision::DenyWithMessage(_)
            | Decision::Refuse(_) => Ok(false),
        }
    }
}

/// The `- ` lines of an extraction (none for `NONE`).
fn parse_facts(answer: &str) -> Vec<String> {
    answer
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("- ")
                .or_else(|| l.strip_prefix("* "))
                .map(str::trim)
        })
        .filter(|f| !f.is_empty())
        .take(MAX_FACTS)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_the_list_items_of_the_answer() {
        assert_eq!(
            parse_facts("Facts:\n- likes tea\n* uses Rust\n\n-  \nNONE"),
            vec!["likes tea", "uses Rust"]
        );
        assert!(parse_facts("NONE").is_empty());
    }
}
