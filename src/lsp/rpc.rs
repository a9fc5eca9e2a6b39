//! The JSON-RPC traffic with a server: a reader task that routes what the server sends,
//! a writer task that owns its stdin, and a task that keeps the last line of its stderr.
//!
//! Responses go to the request waiting for them, published diagnostics are kept by
//! document, and the server's own requests (`workspace/configuration`,
//! `client/registerCapability`, …) are answered at once so it never waits on loki. When
//! stdout ends, or a message breaks the framing, the server counts as gone: pending
//! requests fail and waiters are woken.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot, watch};

use super::framing;

/// Diagnostics kept per document.
const MAX_DIAGNOSTICS: usize = 2_000;
/// The most of a stderr line read at once (a longer one is taken in pieces).
const MAX_STDERR_READ: u64 = 64 * 1024;
/// The longest stderr line kept for error messages.
pub(super) const MAX_STDERR_LINE: usize = 300;

/// Diagnostics a server published for one document.
#[derive(Debug, Clone)]
pub(super) struct Published {
    /// Increases with every publication (of any document).
    pub(super) seq: u64,
    /// The document version they are for, when the server said.
    pub(super) version: Option<i64>,
    /// The diagnostics, as sent.
    pub(super) items: Vec<Value>,
}

/// What the reader task and the callers share.
#[derive(Debug)]
pub(super) struct Shared {
    /// Requests waiting for their answer (the result, or the error object), by id.
    pub(super) pending: Mutex<HashMap<i64, oneshot::Sender<Result<Value, Value>>>>,
    published: Mutex<HashMap<String, Published>>,
    seq: AtomicU64,
    /// Bumped on every publication and when the server goes away.
    pub(super) changes: watch::Sender<u64>,
    /// Cleared when its output ends.
    pub(super) alive: AtomicBool,
    /// Why reading stopped, if it was not a clean end of stream.
    pub(super) failure: Mutex<Option<String>>,
    /// The last line the server wrote to stderr.
    pub(super) stderr: Mutex<String>,
    /// Set once its stderr ended.
    pub(super) stderr_done: watch::Sender<bool>,
    /// The workspace folders (answer to `workspace/workspaceFolders`).
    pub(super) folders: Value,
}

/// A lock whose holder panicking does not matter (the data stays consistent).
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// The state of a server just started in the workspace `folders`.
    pub(super) fn new(folders: Value) -> Self {
        Self {
            pending: Mutex::default(),
            published: Mutex::default(),
            seq: AtomicU64::new(0),
            changes: watch::channel(0).0,
            alive: AtomicBool::new(true),
            failure: Mutex::default(),
            stderr: Mutex::default(),
            stderr_done: watch::channel(false).0,
            folders,
        }
    }

    /// Keeps a `textDocument/publishDiagnostics` and wakes the waiters.
    fn publish(&self, params: Option<&Value>) {
        let Some(uri) = params.and_then(|p| p["uri"].as_str()) else {
            return;
        };
        let items = params
            .and_then(|p| p["diagnostics"].as_array())
            .map(|items| items.iter().take(MAX_DIAGNOSTICS).cloned().collect())
            .unwrap_or_default();
        let published = Published {
            seq: self.seq.fetch_add(1, Ordering::SeqCst) + 1,
            version: params.and_then(|p| p["version"].as_i64()),
            items,
        };
        lock(&self.published).insert(uri.to_string(), published);
        self.changes.send_modify(|n| *n += 1);
    }

    /// The diagnostics last published for `uri`.
    pub(super) fn latest(&self, uri: &str) -> Option<Published> {
        lock(&self.published).get(uri).cloned()
    }

    /// The server is gone: requests fail, waiters wake.
    fn close(&self, failure: Option<String>) {
        self.alive.store(false, Ordering::SeqCst);
        if failure.is_some() {
            *lock(&self.failure) = failure;
        }
        lock(&self.pending).clear();
        self.changes.send_modify(|n| *n += 1);
    }
}

/// Takes the server's messages off its stdout until it ends.
pub(super) async fn read_loop(
    stdout: ChildStdout,
    shared: Arc<Shared>,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut reader = BufReader::new(stdout);
    let failure = loop {
        match framing::read_message(&mut reader).await {
            Ok(Some(message)) => dispatch(&message, &shared, &outgoing),
            Ok(None) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    shared.close(failure);
}

/// Routes one message from the server.
fn dispatch(message: &Value, shared: &Shared, outgoing: &mpsc::UnboundedSender<Vec<u8>>) {
    let method = message["method"].as_str();
    let id = message.get("id").filter(|id| !id.is_null());
    match (method, id) {
        (Some(method), Some(id)) => {
            let reply = match answer(method, message.get("params"), shared) {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
            };
            let _ = outgoing.send(framing::encode(&reply));
        }
        (Some("textDocument/publishDiagnostics"), None) => shared.publish(message.get("params")),
        (Some(_), None) => {}
        (None, Some(id)) => {
            let waiting = id.as_i64().and_then(|id| lock(&shared.pending).remove(&id));
            if let Some(waiting) = waiting {
                let outcome = match message.get("error") {
                    Some(error) if !error.is_null() => Err(error.clone()),
                    _ => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = waiting.send(outcome);
            }
        }
        (None, None) => {}
    }
}

/// The answer to a request from the server: nothing is configured, nothing is edited.
fn answer(method: &str, params: Option<&Value>, shared: &Shared) -> Result<Value, Value> {
    match method {
        "workspace/configuration" => {
            let items = params
                .and_then(|p| p["items"].as_array())
                .map_or(0, Vec::len)
                .min(1_000);
            Ok(Value::Array(vec![Value::Null; items]))
        }
        "workspace/workspaceFolders" => Ok(shared.folders.clone()),
        "workspace/applyEdit" => Ok(json!({"applied": false, "failureReason": "read-only client"})),
        "window/showDocument" => Ok(json!({"success": false})),
        "window/workDoneProgress/create"
        | "window/showMessageRequest"
        | "client/registerCapability"
        | "client/unregisterCapability"
        | "workspace/codeLens/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/inlineValue/refresh"
        | "workspace/diagnostic/refresh" => Ok(Value::Null),
        _ => Err(json!({"code": -32601, "message": format!("loki does not handle {method}")})),
    }
}

/// Feeds queued messages to the server's stdin.
pub(super) async fn write_loop(mut stdin: ChildStdin, mut queue: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(bytes) = queue.recv().await {
        if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
            break;
        }
    }
}

/// Keeps the server's last stderr line (for error messages) and logs every line.
pub(super) async fn stderr_loop(stderr: ChildStderr, shared: Arc<Shared>, name: String) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        // Bounded: a line without an end is taken in pieces.
        match (&mut reader)
            .take(MAX_STDERR_READ)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        tracing::debug!(target: "loki::lsp::stderr", server = %name, "{text}");
        let mut kept: String = text.chars().take(MAX_STDERR_LINE).collect();
        if kept.len() < text.len() {
            kept.push('…');
        }
        *lock(&shared.stderr) = crate::secrets::redact(&kept).into_owned();
    }
    shared.stderr_done.send_replace(true);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> Value {
        let text = std::str::from_utf8(bytes).unwrap();
        serde_json::from_str(text.split_once("\r\n\r\n").unwrap().1).unwrap()
    }

    #[test]
    fn server_requests_are_answered_and_the_rest_routed() {
        let shared = Shared::new(json!([{"uri": "file:///w", "name": "w"}]));
        let (outgoing, mut sent) = mpsc::unbounded_channel();
        let mut replies = Vec::new();
        for (id, method, params) in [
            (1, "workspace/configuration", json!({"items": [{}, {}]})),
            (2, "client/registerCapability", json!({"registrations": []})),
            (3, "workspace/workspaceFolders", Value::Null),
            (4, "workspace/applyEdit", json!({"edit": {}})),
            (5, "something/else", Value::Null),
        ] {
            let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            dispatch(&request, &shared, &outgoing);
            replies.push(decode(&sent.try_recv().unwrap()));
        }
        assert_eq!(replies[0]["result"], json!([null, null]));
        assert_eq!(
            replies[1],
            json!({"jsonrpc": "2.0", "id": 2, "result": null})
        );
        assert_eq!(replies[2]["result"][0]["uri"], "file:///w");
        assert_eq!(replies[3]["result"]["applied"], false);
        assert_eq!(replies[4]["error"]["code"], -32601);

        // A response reaches its request; notifications are kept or ignored, never answered.
        let (reply, mut answer) = oneshot::channel();
        lock(&shared.pending).insert(7, reply);
        dispatch(
            &json!({"jsonrpc": "2.0", "id": 7, "result": [1]}),
            &shared,
            &outgoing,
        );
        assert_eq!(answer.try_recv().unwrap(), Ok(json!([1])));
        let publish = json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
            "params": {"uri": "file:///w/a", "version": 2, "diagnostics": [{"message": "m"}]}});
        dispatch(&publish, &shared, &outgoing);
        dispatch(
            &json!({"jsonrpc": "2.0", "method": "window/logMessage"}),
            &shared,
            &outgoing,
        );
        assert!(sent.try_recv().is_err());
        let published = shared.latest("file:///w/a").unwrap();
        assert_eq!((published.seq, published.version), (1, Some(2)));
        assert_eq!(published.items, [json!({"message": "m"})]);

        // When the server goes away, waiting requests learn it.
        let (reply, mut answer) = oneshot::channel();
        lock(&shared.pending).insert(8, reply);
        shared.close(Some("broken".into()));
        assert!(answer.try_recv().is_err() && !shared.alive.load(Ordering::SeqCst));
    }
}
