//! The engine's [`Sink`]: it stamps a conversation's events with their conversation and
//! run, and keeps the start/end contract (every run ends with exactly one `turn_finished`
//! or `turn_aborted`). The `Emitter` trait it writes to is `loki_protocol::emitter`'s.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use loki_protocol::emitter::Emitter;
use loki_protocol::event::{AbortReason, ConversationId, Envelope, Event, RunId, TurnAborted};

/// Where the engine sends one conversation's events: stamps each with the conversation
/// and remembers whether the run's closing event went out, so every run ends with
/// exactly one `turn_finished` or `turn_aborted`.
pub struct Sink<'a> {
    conversation: ConversationId,
    parent: Option<ConversationId>,
    agent: Option<std::sync::Arc<str>>,
    run: Option<RunId>,
    out: &'a dyn Emitter,
    ended: AtomicBool,
    partial: Mutex<String>,
    /// What the run's model calls (and MCP sampling) have cost so far, for an abort.
    spent: Mutex<loki_wire::message::Usage>,
}

impl<'a> Sink<'a> {
    /// A sink for `conversation` writing to `out`.
    pub fn new(conversation: ConversationId, out: &'a dyn Emitter) -> Self {
        Self {
            conversation,
            parent: None,
            agent: None,
            run: None,
            out,
            ended: AtomicBool::new(false),
            partial: Mutex::new(String::new()),
            spent: Mutex::new(loki_wire::message::Usage::default()),
        }
    }

    /// A sink for the conversation `ctx` (its id, parent and agent) writing to `out`.
    pub(in crate::conversation) fn for_context(
        ctx: &crate::conversation::context::RequestContext,
        out: &'a dyn Emitter,
    ) -> Self {
        let mut sink = Self::new(ctx.id.clone(), out).with_parent(ctx.parent.clone());
        sink.agent = ctx.agent.as_ref().map(|a| a.def.name.as_str().into());
        sink
    }

    /// Stamps events with `parent`, the conversation that started this one.
    #[must_use]
    pub fn with_parent(mut self, parent: Option<ConversationId>) -> Self {
        self.parent = parent;
        self
    }

    /// Stamps events with the run they belong to.
    #[must_use]
    pub fn with_run(mut self, run: RunId) -> Self {
        self.run = Some(run);
        self
    }

    /// Emits `event` for this conversation.
    pub fn emit(&self, event: Event) {
        if matches!(event, Event::TurnFinished(_) | Event::TurnAborted(_)) {
            self.ended.store(true, Ordering::Release);
        }
        self.out.emit(Envelope {
            conversation: self.conversation.clone(),
            parent: self.parent.clone(),
            agent: self.agent.clone(),
            run: self.run.clone(),
            event,
        });
    }

    /// Writes out what is buffered.
    pub fn flush(&self) {
        self.out.flush();
    }

    /// Whether the run's closing event was emitted.
    pub fn ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Remembers the answer text received before a failure (for `turn_aborted`).
    pub fn set_partial(&self, text: &str) {
        if let Ok(mut partial) = self.partial.lock() {
            text.clone_into(&mut partial);
        }
    }

    /// Emits `turn_aborted` for `err` with the partial answer remembered, unless the
    /// run already ended.
    /// Counts what one model call (or a round's sampling) cost, reported if the run is
    /// aborted.
    pub fn spent(&self, usage: loki_wire::message::Usage) {
        if let Ok(mut spent) = self.spent.lock() {
            spent.add(usage);
        }
    }

    pub fn abort(&self, err: &crate::error::CoreError) {
        if self.ended() {
            return;
        }
        let partial = self
            .partial
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default();
        let (reason, error, code) = match err {
            crate::error::CoreError::Cancelled => (AbortReason::Cancelled, None, None),
            other => (
                AbortReason::Error,
                Some(loki_wire::secrets::redacted(other.to_string())),
                Some(other.class().code()),
            ),
        };
        let usage = self.spent.lock().map(|u| *u).unwrap_or_default();
        self.emit(Event::TurnAborted(TurnAborted {
            reason,
            error,
            code,
            partial,
            usage: (usage != loki_wire::message::Usage::default()).then_some(usage),
        }));
        self.flush();
    }
}
