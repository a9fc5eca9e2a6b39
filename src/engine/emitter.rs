//! The `Emitter` trait front ends implement, the engine's [`Sink`] that stamps events with
//! their conversation and keeps the start/end contract, and a collecting emitter.
//!
//! Emitters are called synchronously on the engine's task, in event order. They must not
//! block for long: the terminal emitter buffers and writes on [`Emitter::flush`], which the
//! engine calls after each batch of provider events (one network read), so output is
//! coalesced without ever being held back. One emitter may serve several conversations at
//! once (the envelope says which).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::event::{AbortReason, ConversationId, Envelope, Event, RunId, TurnAborted};

/// Receives engine events.
pub trait Emitter: Send + Sync {
    /// Handles one event.
    fn emit(&self, envelope: Envelope);

    /// A batch of events is complete; write out anything buffered.
    fn flush(&self) {}
}

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
    spent: Mutex<crate::client::Usage>,
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
            spent: Mutex::new(crate::client::Usage::default()),
        }
    }

    /// A sink for the conversation `ctx` (its id, parent and agent) writing to `out`.
    pub fn for_context(ctx: &crate::context::RequestContext, out: &'a dyn Emitter) -> Self {
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
    pub fn spent(&self, usage: crate::client::Usage) {
        if let Ok(mut spent) = self.spent.lock() {
            spent.add(usage);
        }
    }

    pub fn abort(&self, err: &super::CoreError) {
        if self.ended() {
            return;
        }
        let partial = self
            .partial
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default();
        let (reason, error) = match err {
            super::CoreError::Cancelled => (AbortReason::Cancelled, None),
            other => (
                AbortReason::Error,
                Some(super::event::redacted(other.to_string())),
            ),
        };
        let usage = self.spent.lock().map(|u| *u).unwrap_or_default();
        self.emit(Event::TurnAborted(TurnAborted {
            reason,
            error,
            partial,
            usage: (usage != crate::client::Usage::default()).then_some(usage),
        }));
        self.flush();
    }
}

/// Drops every event (commands applied while a conversation is prepared, which report
/// through their outcome instead).
#[derive(Debug, Default, Clone, Copy)]
pub struct Discard;

impl Emitter for Discard {
    fn emit(&self, _envelope: Envelope) {}
}

/// Keeps every event in memory (tests, `-e`, summaries).
#[derive(Debug, Default)]
pub struct CollectingEmitter {
    events: Mutex<Vec<Envelope>>,
}

impl CollectingEmitter {
    /// An empty collector.
    pub fn new() -> Self {
        Self::default()
    }

    /// The events so far.
    pub fn events(&self) -> Vec<Event> {
        self.envelopes().into_iter().map(|e| e.event).collect()
    }

    /// The events so far, with their conversations.
    pub fn envelopes(&self) -> Vec<Envelope> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// Concatenated assistant text.
    pub fn answer(&self) -> String {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::AssistantDelta(d) => Some(d.text),
                _ => None,
            })
            .collect()
    }
}

impl Emitter for CollectingEmitter {
    fn emit(&self, envelope: Envelope) {
        if let Ok(mut events) = self.events.lock() {
            events.push(envelope);
        }
    }
}
