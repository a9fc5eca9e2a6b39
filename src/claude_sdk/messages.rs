//! A turn's events as Claude Code's stream-json messages: one `assistant` message per
//! model response (text, thinking and `tool_use` blocks, tools by their Claude names),
//! one `user` message per tool result, `stream_event`s while the answer streams (with
//! `--include-partial-messages`), and the closing `result`.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

use super::control::Program;
use loki_protocol::emitter::Emitter;
use loki_protocol::event::Envelope;
use loki_protocol::event::Event;
use loki_wire::message::Usage;

/// What one model response has said so far.
#[derive(Default)]
struct Response {
    text: String,
    thinking: String,
    tools: Vec<Value>,
    /// A `stream_event` text block is open.
    streaming: bool,
}

/// What a turn did, as its events told: the `result` of a turn that ended in an error
/// (`max_turns` reached, an interrupt) reports it too.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct Tally {
    /// Model calls made.
    pub steps: usize,
    /// What they used.
    pub usage: Usage,
}

/// The turn's messages, written as they happen.
pub(super) struct Messages {
    pub program: Arc<Program>,
    pub model: String,
    pub partial: bool,
    response: Mutex<Response>,
    tally: Mutex<Tally>,
}

impl Messages {
    pub(super) fn new(program: Arc<Program>, model: String, partial: bool) -> Self {
        Self {
            program,
            model,
            partial,
            response: Mutex::new(Response::default()),
            tally: Mutex::new(Tally::default()),
        }
    }

    /// What the turn did so far.
    pub(super) fn tally(&self) -> Tally {
        *self.tally.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn count(&self, change: impl FnOnce(&mut Tally)) {
        change(&mut self.tally.lock().unwrap_or_else(PoisonError::into_inner));
    }

    fn send(&self, mut message: Value) {
        message["session_id"] = json!(self.program.session_id);
        message["uuid"] = json!(uuid());
        self.program.send(&message);
    }

    fn stream(&self, event: Value) {
        if self.partial {
            self.send(json!({"type": "stream_event", "event": event, "parent_tool_use_id": null}));
        }
    }

    /// Writes the model response gathered so far as one `assistant` message.
    pub(super) fn flush_response(&self) {
        let response =
            std::mem::take(&mut *self.response.lock().unwrap_or_else(PoisonError::into_inner));
        if response.streaming {
            self.stream(json!({"type": "content_block_stop", "index": 0}));
            self.stream(json!({"type": "message_stop"}));
        }
        let mut content = Vec::new();
        if !response.thinking.is_empty() {
            content
                .push(json!({"type": "thinking", "thinking": response.thinking, "signature": ""}));
        }
        if !response.text.is_empty() {
            content.push(json!({"type": "text", "text": response.text}));
        }
        let stop = if response.tools.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        content.extend(response.tools);
        if content.is_empty() {
            return;
        }
        self.send(json!({
            "type": "assistant",
            "message": {
                "id": format!("msg_{}", uuid()),
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": content,
                "stop_reason": stop,
            },
            "parent_tool_use_id": null,
        }));
    }

    fn text(&self, text: &str) {
        let opened = {
            let mut response = self.response.lock().unwrap_or_else(PoisonError::into_inner);
            response.text.push_str(text);
            !std::mem::replace(&mut response.streaming, true)
        };
        if opened {
            self.stream(json!({"type": "message_start", "message": {"role": "assistant", "model": self.model, "content": []}}));
            self.stream(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
        }
        self.stream(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}));
    }

    fn tool_use(&self, id: &str, name: &str, arguments: &str) {
        let input: Value = serde_json::from_str(arguments).unwrap_or_else(|_| json!({}));
        self.program
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_string(), (name.to_string(), input.clone()));
        // In Claude's shape under Claude's name (`Write` with `file_path`, `content`).
        let shown = crate::claude_names::shapes::to_claude(name, &input);
        let block = json!({"type": "tool_use", "id": id, "name": self.program.claude_name(name), "input": shown});
        self.response
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .tools
            .push(block);
    }

    fn tool_result(&self, id: &str, result: &str, ok: bool) {
        self.flush_response();
        self.send(json!({
            "type": "user",
            "message": {"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": id, "content": result, "is_error": !ok,
            }]},
            "parent_tool_use_id": null,
        }));
    }
}

impl Emitter for Messages {
    fn emit(&self, envelope: Envelope) {
        // Sub-agents work inside their `Task` call; their messages are not the program's.
        if envelope.parent.is_some() {
            return;
        }
        match envelope.event {
            Event::ModelCallStarted(call) => {
                self.count(|t| t.steps = call.round);
                self.flush_response();
            }
            Event::AssistantDelta(delta) => self.text(&delta.text),
            Event::ReasoningDelta(delta) => self
                .response
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .thinking
                .push_str(&delta.text),
            Event::ToolCallStarted(call) => {
                self.tool_use(&call.call_id, &call.name, &call.arguments)
            }
            // The program sees the model's message before it is asked about its calls.
            Event::ToolCallApprovalRequested(_) => self.flush_response(),
            Event::ToolCallFinished(done) => self.tool_result(&done.call_id, &done.result, done.ok),
            Event::TurnFinished(done) => {
                self.count(|t| t.usage = done.usage);
                self.flush_response();
            }
            Event::TurnAborted(aborted) => {
                self.count(|t| t.usage = aborted.usage.unwrap_or_default());
                self.flush_response();
            }
            _ => {}
        }
    }
}

/// A random id in UUID form.
pub(super) fn uuid() -> String {
    let a = fastrand::u64(..);
    let b = fastrand::u64(..);
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        (b >> 48) & 0x3fff | 0x8000,
        b & 0xffff_ffff_ffff
    )
}
