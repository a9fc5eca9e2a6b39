//! JSON-RPC 2.0 over newline-delimited JSON on stdio: one writer task owns stdout, and
//! requests loki sends to the editor (permission questions, file reads and writes) wait
//! for the answer that carries their id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::term::json_lines::LineSender;

/// JSON-RPC error codes used here.
pub(super) const METHOD_NOT_FOUND: i64 = -32601;
pub(super) const INVALID_PARAMS: i64 = -32602;
pub(super) const INTERNAL: i64 = -32603;
pub(super) const PARSE_ERROR: i64 = -32700;
pub(super) const INVALID_REQUEST: i64 = -32600;

/// The reply carrying `result` for the request `id`.
pub(super) fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// The reply saying the request `id` failed.
pub(super) fn error(id: &Value, code: i64, message: &str) -> Value {
    let error = json!({"code": code, "message": message});
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

/// A request to the editor that got no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum RequestError {
    /// The editor went away first.
    #[error("the editor closed the connection")]
    Closed,
    /// The editor answered with an error.
    #[error("{0}")]
    Refused(String),
}

/// The editor's side of the connection.
pub(super) struct Peer {
    out: LineSender,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RequestError>>>>,
}

impl Peer {
    /// A peer writing to stdout through a task of its own; the task ends when every
    /// sender is gone.
    pub(super) fn stdio() -> (Self, tokio::task::JoinHandle<()>) {
        let (out, writer) = crate::term::json_lines::stdout_writer();
        let peer = Self {
            out,
            next_id: AtomicU64::new(0),
            pending: Mutex::new(HashMap::new()),
        };
        (peer, writer)
    }

    /// One message (or batch of replies) to the editor, as one line.
    pub(super) fn send(&self, message: &Value) {
        self.out.send(message);
    }

    /// A notification to the editor.
    pub(super) fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The editor's request `id` failed (`id` null: the request could not be read).
    pub(super) fn fail(&self, id: &Value, code: i64, message: &str) {
        self.send(&error(id, code, message));
    }

    /// Asks the editor; its result, or its error's message.
    pub(super) async fn request(&self, method: &str, params: Value) -> Result<Value, RequestError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, tx);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx.await.unwrap_or(Err(RequestError::Closed))
    }

    /// An answer from the editor arrived.
    pub(super) fn resolve(&self, message: &Value) {
        let Some(id) = message["id"].as_u64() else {
            return;
        };
        let waiting = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        if let Some(waiting) = waiting {
            let outcome = match message.get("error") {
                Some(error) => Err(RequestError::Refused(
                    error["message"]
                        .as_str()
                        .unwrap_or("the editor answered with an error")
                        .to_string(),
                )),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = waiting.send(outcome);
        }
    }

    /// An answer to request `id` came but could not be read (over `max_input_size`):
    /// the request fails with `why`. Whether a request of loki's was waiting on it.
    pub(super) fn fail_pending(&self, id: &Value, why: &str) -> bool {
        let Some(id) = id.as_u64() else {
            return false;
        };
        let waiting = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        waiting.is_some_and(|waiting| {
            let _ = waiting.send(Err(RequestError::Refused(why.to_string())));
            true
        })
    }

    /// The editor is gone: every request still waiting fails.
    pub(super) fn close(&self) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}
