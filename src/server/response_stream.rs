//! A streamed chat completion rewritten, chunk by chunk, into the Responses API's
//! events: `response.created` and `.in_progress`, then each output item as it comes —
//! the provider's reasoning (`response.reasoning_text.delta`), the message
//! (`response.output_text.delta`), each function call — between its
//! `response.output_item.added` and `.done`, and `response.completed` (or
//! `.incomplete`) with the whole response.

use std::sync::Arc;

use serde_json::{Value, json};

use super::responses::{
    Ending, Meta, answer_messages, call_item, keep, message_item, reasoning_item,
};

/// The item being written, whose deltas are still coming.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Reasoning(usize),
    Text(usize),
}

/// The state of a streamed answer being rewritten into Responses events.
pub(super) struct Streamed {
    meta: Meta,
    sent: Vec<Value>,
    owner: String,
    server: Arc<super::Server>,
    sequence: u64,
    reasoning: String,
    text: String,
    calls: Vec<Value>,
    /// The items done, in output order.
    items: Vec<Value>,
    open: Option<Open>,
    usage: Value,
    /// The chat completion's `finish_reason`, once sent.
    finish_reason: Option<String>,
    done: bool,
    /// The exchange being kept for other instances: the last event waits for it.
    pub(super) keeping: Option<futures_util::future::BoxFuture<'static, ()>>,
}

impl Streamed {
    pub(super) fn new(
        meta: Meta,
        sent: Vec<Value>,
        owner: String,
        server: Arc<super::Server>,
    ) -> Self {
        Self {
            meta,
            sent,
            owner,
            server,
            sequence: 0,
            reasoning: String::new(),
            text: String::new(),
            calls: Vec::new(),
            items: Vec::new(),
            open: None,
            usage: Value::Null,
            finish_reason: None,
            done: false,
            keeping: None,
        }
    }

    fn event(&mut self, mut data: Value) -> String {
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        let name = data["type"]
            .as_str()
            .unwrap_or("response.event")
            .to_string();
        format!("event: {name}\ndata: {data}\n\n")
    }

    /// The output index of the next item.
    fn next_index(&self) -> usize {
        self.items.len() + usize::from(self.open.is_some())
    }

    /// The events of one chunk of the chat completion's stream.
    pub(super) fn rewrite(&mut self, bytes: &[u8]) -> String {
        let mut out = String::new();
        if self.sequence == 0 {
            let response = self.meta.object(None, Vec::new(), &self.usage);
            out.push_str(&self.event(json!({"type": "response.created", "response": response})));
            let response = self.meta.object(None, Vec::new(), &self.usage);
            out.push_str(
                &self.event(json!({"type": "response.in_progress", "response": response})),
            );
        }
        for line in String::from_utf8_lossy(bytes).lines() {
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            if data.trim() == "[DONE]" {
                out.push_str(&self.finish());
                continue;
            }
            let Ok(chunk) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            out.push_str(&self.chunk(&chunk));
        }
        out
    }

    /// The events of one `chat.completion.chunk`.
    fn chunk(&mut self, chunk: &Value) -> String {
        if !chunk["error"].is_null() {
            let failed = json!({"type": "error", "message": chunk["error"]["message"],
                "code": chunk["error"]["code"]});
            return self.event(failed);
        }
        if !chunk["usage"].is_null() {
            self.usage = chunk["usage"].clone();
        }
        if let Some(reason) = chunk["choices"][0]["finish_reason"].as_str() {
            self.finish_reason = Some(reason.to_string());
        }
        let mut out = String::new();
        let delta = &chunk["choices"][0]["delta"];
        if let Some(piece) = delta["reasoning_content"]
            .as_str()
            .filter(|p| !p.is_empty())
        {
            out.push_str(&self.reasoning_delta(piece));
        }
        if let Some(piece) = delta["content"].as_str().filter(|p| !p.is_empty()) {
            out.push_str(&self.text_delta(piece));
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            out.push_str(&self.call(call));
        }
        out
    }

    fn reasoning_delta(&mut self, piece: &str) -> String {
        let mut out = String::new();
        let index = match self.open {
            Some(Open::Reasoning(index)) => index,
            _ => {
                out.push_str(&self.close("completed"));
                let index = self.next_index();
                self.open = Some(Open::Reasoning(index));
                let mut item = reasoning_item(&self.meta.id, "", "in_progress");
                item["content"] = json!([]);
                out.push_str(&self.event(json!({"type": "response.output_item.added",
                    "output_index": index, "item": item})));
                index
            }
        };
        self.reasoning.push_str(piece);
        let delta = json!({"type": "response.reasoning_text.delta",
            "item_id": format!("rs_{}", self.meta.id), "output_index": index,
            "content_index": 0, "delta": piece});
        out.push_str(&self.event(delta));
        out
    }

    fn text_delta(&mut self, piece: &str) -> String {
        let mut out = String::new();
        let item = format!("msg_{}", self.meta.id);
        let index = match self.open {
            Some(Open::Text(index)) => index,
            _ => {
                out.push_str(&self.close("completed"));
                let index = self.next_index();
                self.open = Some(Open::Text(index));
                let added = json!({"type": "response.output_item.added", "output_index": index,
                    "item": {"type": "message", "id": item, "status": "in_progress",
                             "role": "assistant", "content": []}});
                out.push_str(&self.event(added));
                let part = json!({"type": "response.content_part.added", "item_id": item,
                    "output_index": index, "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []}});
                out.push_str(&self.event(part));
                index
            }
        };
        self.text.push_str(piece);
        let delta = json!({"type": "response.output_text.delta", "item_id": item,
            "output_index": index, "content_index": 0, "delta": piece, "logprobs": []});
        out.push_str(&self.event(delta));
        out
    }

    /// Ends the open item; a message with `status` (`incomplete` for an answer cut off).
    fn close(&mut self, status: &str) -> String {
        match self.open.take() {
            None => String::new(),
            Some(Open::Reasoning(index)) => self.close_reasoning(index),
            Some(Open::Text(index)) => self.close_text(index, status),
        }
    }

    fn close_reasoning(&mut self, index: usize) -> String {
        let item = reasoning_item(&self.meta.id, &self.reasoning, "completed");
        let done = json!({"type": "response.reasoning_text.done", "item_id": item["id"],
            "output_index": index, "content_index": 0, "text": self.reasoning});
        let mut out = self.event(done);
        out.push_str(&self.event(json!({"type": "response.output_item.done",
            "output_index": index, "item": item})));
        self.items.push(item);
        out
    }

    fn close_text(&mut self, index: usize, status: &str) -> String {
        let item = message_item(&self.meta.id, &self.text, status);
        let text = self.text.clone();
        let mut out = String::new();
        let done = json!({"type": "response.output_text.done", "item_id": item["id"],
            "output_index": index, "content_index": 0, "text": text, "logprobs": []});
        out.push_str(&self.event(done));
        let part = json!({"type": "response.content_part.done", "item_id": item["id"],
            "output_index": index, "content_index": 0,
            "part": {"type": "output_text", "text": text, "annotations": []}});
        out.push_str(&self.event(part));
        out.push_str(&self.event(json!({"type": "response.output_item.done",
            "output_index": index, "item": item})));
        self.items.push(item);
        out
    }

    fn call(&mut self, call: &Value) -> String {
        let mut out = self.close("completed");
        let index = self.next_index();
        self.calls
            .push(json!({"id": call["id"], "type": "function", "function": call["function"]}));
        let item = call_item(call, &self.meta.names);
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        added["arguments"] = json!("");
        out.push_str(&self.event(
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        ));
        out.push_str(
            &self.event(json!({"type": "response.function_call_arguments.delta",
            "item_id": item["id"], "output_index": index, "delta": item["arguments"]})),
        );
        out.push_str(
            &self.event(json!({"type": "response.function_call_arguments.done",
            "item_id": item["id"], "output_index": index, "arguments": item["arguments"]})),
        );
        out.push_str(&self.event(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        ));
        self.items.push(item);
        out
    }

    fn finish(&mut self) -> String {
        if self.done {
            return String::new();
        }
        self.done = true;
        // A cut-off answer ends with `response.incomplete`, not `response.completed`,
        // and its message item says so too.
        let ending = Ending::of(self.finish_reason.as_deref());
        let mut out = self.close(ending.status());
        if self.text.is_empty() && self.calls.is_empty() {
            // An empty answer still has its (empty) message.
            self.items
                .push(message_item(&self.meta.id, "", ending.status()));
        }
        let mut messages = std::mem::take(&mut self.sent);
        messages.extend(answer_messages(&self.reasoning, &self.text, &self.calls));
        self.keeping = Some(keep(
            &self.server,
            self.meta.id.clone(),
            self.owner.clone(),
            messages,
        ));
        let name = match ending {
            Ending::Completed => "response.completed",
            Ending::Incomplete(_) => "response.incomplete",
        };
        let response = self
            .meta
            .object(Some(ending), self.items.clone(), &self.usage);
        out.push_str(&self.event(json!({"type": name, "response": response})));
        out
    }
}
