//! The JSON-RPC 2.0 side of loki's MCP server, shared by stdio and HTTP: what a message
//! is, the answers written back, and the requests running (so `notifications/cancelled`
//! can stop one).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// A request's error: JSON-RPC code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// One message from the client.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// A request: it gets an answer with its id.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// A notification: no answer.
    Notification { method: String, params: Value },
    /// An answer to a request loki made (it makes none), or a message with no method and
    /// no id: ignored.
    Other,
    /// Not a JSON-RPC message (a batch, a string…): answered with an error.
    Invalid,
}

impl Incoming {
    pub fn classify(message: Value) -> Self {
        let Value::Object(mut message) = message else {
            return Self::Invalid;
        };
        let params = message.remove("params").unwrap_or(Value::Null);
        let method = match message.remove("method") {
            Some(Value::String(method)) => method,
            Some(_) => return Self::Invalid,
            None => return Self::Other,
        };
        match message.remove("id") {
            Some(id @ (Value::String(_) | Value::Number(_))) => {
                Self::Request { id, method, params }
            }
            Some(Value::Null) | None => Self::Notification { method, params },
            Some(_) => Self::Invalid,
        }
    }
}

/// The answer to request `id`.
pub fn response(id: &Value, result: Result<Value, RpcError>) -> Value {
    match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => failure(id, &error),
    }
}

/// An error answer to request `id` (`null` when the id could not be read).
pub fn failure(id: &Value, error: &RpcError) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": error.code, "message": error.message}
    })
}

/// Requests running, by id, each with the token that stops it.
#[derive(Debug, Default)]
pub struct Calls {
    running: Mutex<HashMap<String, (u64, CancellationToken)>>,
    /// Tells registrations of a reused id apart.
    started: AtomicU64,
}

impl Calls {
    /// Registers request `id`, stopped by `cancel`; the registration goes when the
    /// returned guard is dropped (however the request ends).
    pub fn start(self: &Arc<Self>, id: &Value, cancel: &CancellationToken) -> Running {
        let key = id.to_string();
        let generation = self.started.fetch_add(1, Ordering::Relaxed);
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), (generation, cancel.clone()));
        Running {
            calls: Arc::clone(self),
            key,
            generation,
        }
    }

    /// `notifications/cancelled`: stops the request it names, if it is still running.
    pub fn cancel(&self, params: &Value) {
        let key = params["requestId"].to_string();
        let running = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
        if let Some((_, token)) = running {
            tracing::info!(request = %key, "the MCP client cancelled a request");
            token.cancel();
        }
    }

    /// Whether no request is running.
    pub fn idle(&self) -> bool {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }
}

/// A running request's registration (see [`Calls::start`]).
pub struct Running {
    calls: Arc<Calls>,
    key: String,
    generation: u64,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut running = self
            .calls
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // A later request may have reused the id: its registration stays.
        if running
            .get(&self.key)
            .is_some_and(|(g, _)| *g == self.generation)
        {
            running.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_told_apart_by_method_and_id() {
        let request = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
        assert_eq!(
            Incoming::classify(request),
            Incoming::Request {
                id: json!(4),
                method: "ping".into(),
                params: Value::Null
            }
        );
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert!(matches!(
            Incoming::classify(note),
            Incoming::Notification { .. }
        ));
        assert_eq!(
            Incoming::classify(json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
            Incoming::Other
        );
        assert_eq!(Incoming::classify(json!([1, 2])), Incoming::Invalid);
        assert_eq!(
            Incoming::classify(json!({"id": {"a": 1}, "method": "ping"})),
            Incoming::Invalid
        );
    }

    #[test]
    fn a_cancellation_stops_the_request_it_names_and_no_other() {
        let calls = Arc::new(Calls::default());
        let (a, b) = (CancellationToken::new(), CancellationToken::new());
        let _a = calls.start(&json!(1), &a);
        let _b = calls.start(&json!("1"), &b);
        calls.cancel(&json!({"requestId": "1"}));
        assert!(b.is_cancelled() && !a.is_cancelled());
        calls.cancel(&json!({"requestId": 1}));
        assert!(a.is_cancelled());
    }

    #[test]
    fn a_finished_request_does_not_unregister_a_later_one_with_its_id() {
        let calls = Arc::new(Calls::default());
        let (first, second) = (CancellationToken::new(), CancellationToken::new());
        let old = calls.start(&json!(9), &first);
        let _new = calls.start(&json!(9), &second);
        drop(old);
        assert!(!calls.idle());
        calls.cancel(&json!({"requestId": 9}));
        assert!(second.is_cancelled() && !first.is_cancelled());
        assert!(calls.idle());
    }
}
