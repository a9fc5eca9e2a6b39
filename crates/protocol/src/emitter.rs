//! The `Emitter` trait every front end implements, and two emitters any driver can use:
//! one that drops everything and one that collects it.
//!
//! Emitters are called synchronously on the engine's task, in event order. They must not
//! block for long: the terminal emitter buffers and writes on [`Emitter::flush`], which the
//! engine calls after each batch of provider events (one network read), so output is
//! coalesced without ever being held back. One emitter may serve several conversations at
//! once (the envelope says which).

use std::sync::Mutex;

use crate::event::{Envelope, Event};

/// Receives engine events.
pub trait Emitter: Send + Sync {
    /// Handles one event.
    fn emit(&self, envelope: Envelope);

    /// A batch of events is complete; write out anything buffered.
    fn flush(&self) {}
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
