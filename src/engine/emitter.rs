//! The `Emitter` trait front ends implement, and a collecting emitter for tests.
//!
//! Emitters are called synchronously on the engine's task, in event order. They must not
//! block for long: the terminal emitter buffers and writes on [`Emitter::flush`], which the
//! engine calls after each batch of provider events (one network read), so output is
//! coalesced without ever being held back.

use std::sync::Mutex;

use super::event::Event;

/// Receives engine events.
pub trait Emitter: Send + Sync {
    /// Handles one event.
    fn emit(&self, event: Event);

    /// A batch of events is complete; write out anything buffered.
    fn flush(&self) {}
}

/// Keeps every event in memory (tests, JSON output assembled after the run).
#[derive(Debug, Default)]
pub struct CollectingEmitter {
    events: Mutex<Vec<Event>>,
}

impl CollectingEmitter {
    /// An empty collector.
    pub fn new() -> Self {
        Self::default()
    }

    /// The events so far.
    pub fn events(&self) -> Vec<Event> {
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
    fn emit(&self, event: Event) {
        if let Ok(mut events) = self.events.lock() {
            events.push(event);
        }
    }
}
