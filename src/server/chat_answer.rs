//! An answer in the shape of OpenAI's chat completions: `chat.completion.chunk` events
//! then `[DONE]` while it runs, or one `chat.completion` object. The conversation's own
//! events only (sub-agents are internal); a call of one of the client's tools ends the
//! answer with `finish_reason: tool_calls`.

use std::sync::Mutex;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::answer::Shape;
use super::openai::{calls_json, usage_json};
use super::reply::{ApiError, json_body, sse_event};
use super::run::Ran;
use loki_protocol::event::{Envelope, Event, TurnFinished};

/// The chat completions shape of one answer.
pub(super) struct ChatShape {
    id: String,
    created: u64,
    model: String,
    /// Send the usage as a last chunk (`stream_options.include_usage`).
    include_usage: bool,
    /// The names of the client's own tools.
    client_names: Vec<String>,
    streamed: Mutex<Streamed>,
}

/// What a streamed answer has sent so far.
#[derive(Default)]
struct Streamed {
    /// The conversation that answers (the first to speak).
    root: Option<String>,
    /// Calls of the client's tools sent.
    calls: usize,
    /// The model's reasoning so far, for the whole answer's `reasoning_content`.
    reasoning: String,
}

impl ChatShape {
    /// An answer of `model`.
    pub(super) fn new(model: String, include_usage: bool, client_names: Vec<String>) -> Self {
        Self {
            id: format!("chatcmpl-{}", uuid::Uuid::new_v4().simple()),
            created: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            model,
            include_usage,
            client_names,
            streamed: Mutex::default(),
        }
    }

    fn streamed(&self) -> std::sync::MutexGuard<'_, Streamed> {
        self.streamed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// One `chat.completion.chunk`.
    fn chunk(&self, delta: Value, finish: Value) -> Value {
        json!({
            "id": self.id, "object": "chat.completion.chunk", "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    }

    fn send(&self, delta: Value, finish: Value) -> String {
        sse_event(None, &self.chunk(delta, finish).to_string())
    }

    /// Whether `envelope` is the answering conversation's own (the first to speak).
    fn own(&self, envelope: &Envelope) -> bool {
        if envelope.parent.is_some() {
            return false;
        }
        let me = envelope.conversation.to_string();
        let root = &mut self.streamed().root;
        match root {
            Some(id) => *id == me,
            None => {
                *root = Some(me);
                true
            }
        }
    }

    /// The last chunks: the finish reason, the usage when asked for, `[DONE]`.
    fn finished(&self, done: &TurnFinished) -> Vec<String> {
        let reason = if self.streamed().calls > 0 {
            "tool_calls".to_string()
        } else {
            done.finish_reason.clone().unwrap_or_else(|| "stop".into())
        };
        let mut out = vec![self.send(json!({}), json!(reason))];
        if self.include_usage {
            let mut last = self.chunk(json!({}), Value::Null);
            last["choices"] = json!([]);
            last["usage"] = usage_json(done.usage);
            out.push(sse_event(None, &last.to_string()));
        }
        out.push(sse_event(None, "[DONE]"));
        out
    }
}

impl Shape for ChatShape {
    fn opening(&self) -> Vec<String> {
        vec![self.send(json!({"role": "assistant", "content": ""}), Value::Null)]
    }

    fn event(&self, envelope: &Envelope) -> Vec<String> {
        if !self.own(envelope) {
            return Vec::new();
        }
        match &envelope.event {
            Event::ToolCallStarted(call) if self.client_names.contains(&call.name) => {
                let index = {
                    let mut streamed = self.streamed();
                    streamed.calls += 1;
                    streamed.calls - 1
                };
                let delta = json!({"tool_calls": [{"index": index, "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments}}]});
                vec![self.send(delta, Value::Null)]
            }
            Event::AssistantDelta(d) => vec![self.send(json!({"content": d.text}), Value::Null)],
            // Reasoning as DeepSeek-style `reasoning_content` (the Responses endpoint
            // makes it a reasoning item); clients that do not know it ignore it.
            Event::ReasoningDelta(d) => {
                self.streamed().reasoning.push_str(&d.text);
                vec![self.send(json!({"reasoning_content": d.text}), Value::Null)]
            }
            Event::TurnFinished(done) => self.finished(done),
            Event::TurnAborted(aborted) => {
                let message = aborted.error.clone().unwrap_or_else(|| "cancelled".into());
                // The code the same failure gets in a whole answer's error body.
                let code = aborted.code.unwrap_or("cancelled");
                let error = json!({"error": {"message": message, "type": code, "code": code}});
                vec![
                    sse_event(None, &error.to_string()),
                    sse_event(None, "[DONE]"),
                ]
            }
            _ => Vec::new(),
        }
    }

    fn failed(&self, error: &ApiError) -> Vec<String> {
        let body =
            json!({"error": {"message": error.message, "type": error.code, "code": error.code}});
        vec![
            sse_event(None, &body.to_string()),
            sse_event(None, "[DONE]"),
        ]
    }

    fn whole(&self, ran: Result<Ran, ApiError>) -> Response {
        let ran = match ran {
            Ok(ran) => ran,
            Err(e) => return e.openai().into_response(),
        };
        let outcome = match ran.result {
            Ok(outcome) => outcome,
            Err(e) => {
                return super::run::run_error(ran.timed_out, &e)
                    .openai()
                    .into_response();
            }
        };
        let (message, finish) = if outcome.client_calls.is_empty() {
            (
                json!({"role": "assistant", "content": outcome.text}),
                outcome.finish_reason.unwrap_or_else(|| "stop".into()),
            )
        } else {
            (
                json!({"role": "assistant",
                       "content": (!outcome.text.is_empty()).then_some(outcome.text.clone()),
                       "tool_calls": calls_json(&outcome.client_calls)}),
                "tool_calls".into(),
            )
        };
        let mut message = message;
        let reasoning = std::mem::take(&mut self.streamed().reasoning);
        if !reasoning.is_empty() {
            message["reasoning_content"] = json!(reasoning);
        }
        json_body(
            StatusCode::OK,
            &json!({
                "id": self.id,
                "object": "chat.completion",
                "created": self.created,
                "model": self.model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage_json(outcome.usage),
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loki_protocol::event::{TextDelta, ToolCallStarted};

    fn envelope(conversation: &str, parent: Option<&str>, event: Event) -> Envelope {
        Envelope {
            conversation: conversation.into(),
            parent: parent.map(Into::into),
            agent: None,
            run: None,
            event,
        }
    }

    fn data(text: &str) -> Value {
        let data = text
            .strip_prefix("data: ")
            .map(str::trim_end)
            .unwrap_or_default();
        serde_json::from_str(data).unwrap_or(Value::String(data.to_string()))
    }

    fn delta(text: &str) -> Event {
        Event::AssistantDelta(TextDelta { text: text.into() })
    }

    fn finished(reason: &str) -> Event {
        Event::TurnFinished(TurnFinished {
            usage: Default::default(),
            finish_reason: Some(reason.into()),
            cost_usd: None,
            speed: None,
        })
    }

    #[test]
    fn only_the_answering_conversation_speaks() {
        let shape = ChatShape::new("m".into(), false, Vec::new());
        let opening = shape.opening();
        assert_eq!(
            data(&opening[0])["choices"][0]["delta"]["role"],
            "assistant"
        );
        let mine = shape.event(&envelope("c1", None, delta("hi")));
        assert_eq!(data(&mine[0])["choices"][0]["delta"]["content"], "hi");
        assert!(shape.event(&envelope("c2", None, delta("x"))).is_empty());
        assert!(
            shape
                .event(&envelope("c3", Some("c1"), delta("x")))
                .is_empty()
        );
        let end = shape.event(&envelope("c1", None, finished("stop")));
        assert_eq!(data(&end[0])["choices"][0]["finish_reason"], "stop");
        assert_eq!(end.last().map(String::as_str), Some("data: [DONE]\n\n"));
    }

    #[test]
    fn a_call_of_a_client_tool_ends_with_tool_calls_and_usage_when_asked() {
        let shape = ChatShape::new("m".into(), true, vec!["lookup".into()]);
        let call = Event::ToolCallStarted(ToolCallStarted {
            call_id: "call_1".into(),
            name: "lookup".into(),
            arguments: "{}".into(),
        });
        let sent = shape.event(&envelope("c1", None, call));
        let calls = &data(&sent[0])["choices"][0]["delta"]["tool_calls"];
        assert_eq!(calls[0]["index"], 0);
        assert_eq!(calls[0]["function"]["name"], "lookup");
        let end = shape.event(&envelope("c1", None, finished("stop")));
        assert_eq!(data(&end[0])["choices"][0]["finish_reason"], "tool_calls");
        assert!(data(&end[1])["usage"].is_object(), "{end:?}");
        assert_eq!(end.len(), 3);
    }

    #[test]
    fn a_failure_before_the_run_is_an_error_then_done() {
        let shape = ChatShape::new("m".into(), false, Vec::new());
        let sent = shape.failed(&ApiError::not_found("no model `x`"));
        assert_eq!(data(&sent[0])["error"]["code"], "not_found");
        assert_eq!(sent[1], "data: [DONE]\n\n");
    }
}
