//! One peer for the request/response protocols loki speaks over a byte stream: ACP and
//! the Claude Agent SDK's control channel (newline-delimited JSON on stdio) and LSP
//! (`Content-Length` frames on a language server's stdio).
//!
//! The [`peer::Peer`] numbers loki's requests, keeps each until its answer arrives (or
//! the other side goes away), routes what arrives — an answer to the request waiting for
//! it; a request or a notification back to the driver to dispatch — and queues every
//! outgoing message for one writer task, so messages never interleave. Two things differ
//! per protocol and stay small: the [`Framing`] on the wire, and the [`Envelope`] that
//! says how a request, a response and an error look ([`JsonRpc`] for ACP and LSP; the
//! SDK's `control_request`/`control_response` lives with the SDK mode).
//!
//! This module sits at the lowest layer: it knows JSON and tokio, nothing of loki.

pub mod content_length;
pub mod peer;

use serde_json::{Value, json};

/// How messages are delimited on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One JSON value per line (ACP, the SDK's stream-json).
    Lines,
    /// `Content-Length:` headers, then the body (LSP).
    ContentLength,
}

impl Framing {
    /// `message` as the bytes to write.
    pub fn encode(self, message: &Value) -> Vec<u8> {
        match self {
            Self::Lines => {
                let mut line = message.to_string().into_bytes();
                line.push(b'\n');
                line
            }
            Self::ContentLength => content_length::encode(message),
        }
    }
}

/// JSON-RPC error codes.
pub mod code {
    /// The message is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The parameters are wrong.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The request failed inside.
    pub const INTERNAL: i64 = -32603;
}

/// Why loki could not answer a request: an error code (ignored by protocols without
/// codes) and a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Fault {
    /// One of [`code`] (or a protocol's own).
    pub code: i64,
    /// What went wrong, for the other side.
    pub message: String,
}

impl Fault {
    /// A fault with `code` and `message`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// A request of loki's that got no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The other side went away (or the connection was closed) before answering.
    #[error("the connection closed before the answer came")]
    Closed,
    /// The other side answered with an error.
    #[error("{message}")]
    Refused {
        /// Its error code, when the protocol has them.
        code: Option<i64>,
        /// Its message.
        message: String,
    },
}

impl RequestError {
    /// A refusal without a code (`why` came from loki or from a protocol without codes).
    pub fn refused(why: impl Into<String>) -> Self {
        Self::Refused {
            code: None,
            message: why.into(),
        }
    }
}

/// The outgoing queue is gone: the writer stopped (the other side closed its input).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the connection is closed")]
pub struct Closed;

impl From<Closed> for RequestError {
    fn from(_: Closed) -> Self {
        Self::Closed
    }
}

/// A message the other side sent that the driver dispatches.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request: answer it with [`peer::Peer::respond`].
    Request {
        /// Its id, echoed in the answer.
        id: Value,
        /// What it asks.
        method: String,
        /// Its parameters (`null` when it had none).
        params: Value,
    },
    /// A message that wants no answer.
    Notification {
        /// What it says.
        method: String,
        /// Its parameters (`null` when it had none).
        params: Value,
    },
    /// Not a message of the protocol at all (a number, a batch inside a batch).
    Invalid,
}

/// What an [`Envelope`] makes of an incoming message.
#[derive(Debug, Clone, PartialEq)]
pub enum Classified {
    /// For the driver.
    Incoming(Incoming),
    /// The answer to loki's request `id`.
    Response {
        /// The id loki gave the request.
        id: Value,
        /// Its result, or the error it carried.
        outcome: Result<Value, RequestError>,
    },
}

/// How one protocol shapes its messages (the framing aside).
pub trait Envelope: Send + Sync + 'static {
    /// The id of loki's `n`th request.
    fn id(&self, n: u64) -> Value;
    /// Loki's request `id`.
    fn request(&self, id: &Value, method: &str, params: Value) -> Value;
    /// The answer to the other side's request `id`.
    fn response(&self, id: &Value, outcome: Result<Value, Fault>) -> Value;
    /// What `message` is.
    fn classify(&self, message: Value) -> Classified;
}

/// JSON-RPC 2.0 (ACP, LSP).
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonRpc;

impl JsonRpc {
    /// A notification.
    pub fn notification(method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    }
}

impl Envelope for JsonRpc {
    fn id(&self, n: u64) -> Value {
        json!(n)
    }

    fn request(&self, id: &Value, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    fn response(&self, id: &Value, outcome: Result<Value, Fault>) -> Value {
        match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(fault) => {
                let error = json!({"code": fault.code, "message": fault.message});
                json!({"jsonrpc": "2.0", "id": id, "error": error})
            }
        }
    }

    /// A request has a method and an `id` member (even `null`); a notification a method
    /// and no id; anything else that is an object is taken for an answer.
    fn classify(&self, message: Value) -> Classified {
        let Value::Object(mut fields) = message else {
            return Classified::Incoming(Incoming::Invalid);
        };
        let params = fields.remove("params").unwrap_or(Value::Null);
        let id = fields.remove("id");
        if let Some(Value::String(method)) = fields.remove("method") {
            return Classified::Incoming(match id {
                Some(id) => Incoming::Request { id, method, params },
                None => Incoming::Notification { method, params },
            });
        }
        let outcome = match fields.remove("error") {
            Some(error) if !error.is_null() => Err(RequestError::Refused {
                code: error["code"].as_i64(),
                message: error["message"]
                    .as_str()
                    .map_or_else(|| error.to_string(), str::to_string),
            }),
            _ => Ok(fields.remove("result").unwrap_or(Value::Null)),
        };
        Classified::Response {
            id: id.unwrap_or(Value::Null),
            outcome,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_rpc_messages_are_told_apart() {
        let rpc = JsonRpc;
        assert_eq!(
            rpc.classify(json!({"jsonrpc": "2.0", "id": 3, "method": "m", "params": [1]})),
            Classified::Incoming(Incoming::Request {
                id: json!(3),
                method: "m".into(),
                params: json!([1])
            })
        );
        assert_eq!(
            rpc.classify(json!({"jsonrpc": "2.0", "method": "n"})),
            Classified::Incoming(Incoming::Notification {
                method: "n".into(),
                params: Value::Null
            })
        );
        assert_eq!(
            rpc.classify(json!({"jsonrpc": "2.0", "id": 1, "result": {"a": 1}})),
            Classified::Response {
                id: json!(1),
                outcome: Ok(json!({"a": 1}))
            }
        );
        assert_eq!(
            rpc.classify(json!({"id": 2, "error": {"code": -1, "message": "no"}})),
            Classified::Response {
                id: json!(2),
                outcome: Err(RequestError::Refused {
                    code: Some(-1),
                    message: "no".into()
                })
            }
        );
        assert_eq!(
            rpc.classify(json!(7)),
            Classified::Incoming(Incoming::Invalid)
        );
    }

    #[test]
    fn replies_and_frames_have_their_shapes() {
        let rpc = JsonRpc;
        assert_eq!(
            rpc.response(&json!(1), Err(Fault::new(code::INTERNAL, "x"))),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}})
        );
        assert_eq!(Framing::Lines.encode(&json!({"a": 1})), b"{\"a\":1}\n");
        assert!(
            Framing::ContentLength
                .encode(&json!({}))
                .starts_with(b"Content-Length: 2\r\n\r\n")
        );
    }
}
