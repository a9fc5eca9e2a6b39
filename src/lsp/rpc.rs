//! The traffic with a server, over a [`Peer`]: a reader task that routes what the server
//! sends, and a task that keeps the last line of its stderr (the peer's writer task owns
//! its stdin).
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
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{ChildStderr, ChildStdout};
use tokio::sync::watch;

use crate::jsonrpc::peer::Peer;
use crate::jsonrpc::{Fault, Incoming, JsonRpc, code, content_length};

/// The server's side of the connection.
pub(super) type ServerPeer = Peer<JsonRpc>;

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
    fn publish(&self, params: &Value) {
        let Some(uri) = params["uri"].as_str() else {
            return;
        };
        let items = params["diagnostics"]
            .as_array()
            .map(|items| items.iter().take(MAX_DIAGNOSTICS).cloned().collect())
            .unwrap_or_default();
        let published = Published {
            seq: self.seq.fetch_add(1, Ordering::SeqCst) + 1,
            version: params["version"].as_i64(),
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
    fn close(&self, peer: &ServerPeer, failure: Option<String>) {
        self.alive.store(false, Ordering::SeqCst);
        if failure.is_some() {
            *lock(&self.failure) = failure;
        }
        peer.close();
        self.changes.send_modify(|n| *n += 1);
    }
}

/// Takes the server's messages off its stdout until it ends.
pub(super) async fn read_loop(stdout: ChildStdout, shared: Arc<Shared>, peer: Arc<ServerPeer>) {
    let mut reader = BufReader::new(stdout);
    let failure = loop {
        match content_length::read_message(&mut reader).await {
            Ok(Some(message)) => dispatch(message, &shared, &peer),
            Ok(None) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    shared.close(&peer, failure);
}

/// Routes one message from the server.
fn dispatch(message: Value, shared: &Shared, peer: &ServerPeer) {
    match peer.route(message) {
        Some(Incoming::Request { id, method, params }) => {
            peer.respond(&id, answer(&method, &params, shared));
        }
        Some(Incoming::Notification { method, params })
            if method == "textDocument/publishDiagnostics" =>
        {
            shared.publish(&params);
        }
        Some(_) | None => {}
    }
}

/// The answer to a request from the server: nothing is configured, nothing is edited.
fn answer(method: &str, params: &Value, shared: &Shared) -> Result<Value, Fault> {
    match method {
        "workspace/configuration" => {
            let items = params["items"].as_array().map_or(0, Vec::len).min(1_000);
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
        _ => Err(Fault::new(
            code::METHOD_NOT_FOUND,
            format!("loki does not handle {method}"),
        )),
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
        *lock(&shared.stderr) = loki_wire::secrets::redact(&kept).into_owned();
    }
    shared.stderr_done.send_replace(true);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::Framing;
    use crate::jsonrpc::peer::Outbox;

    fn decode(bytes: &[u8]) -> Value {
        let text = std::str::from_utf8(bytes).unwrap();
        serde_json::from_str(text.split_once("\r\n\r\n").unwrap().1).unwrap()
    }

    fn peer() -> (ServerPeer, Outbox) {
        Peer::new(JsonRpc, Framing::ContentLength)
    }

    #[tokio::test]
    async fn server_requests_are_answered_and_the_rest_routed() {
        let shared = Shared::new(json!([{"uri": "file:///w", "name": "w"}]));
        let (peer, mut sent) = peer();
        let mut replies = Vec::new();
        for (id, method, params) in [
            (1, "workspace/configuration", json!({"items": [{}, {}]})),
            (2, "client/registerCapability", json!({"registrations": []})),
            (3, "workspace/workspaceFolders", Value::Null),
            (4, "workspace/applyEdit", json!({"edit": {}})),
            (5, "something/else", Value::Null),
        ] {
            let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            dispatch(request, &shared, &peer);
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
        let call = peer.call("m", Value::Null).unwrap();
        let _request = sent.try_recv().unwrap();
        dispatch(
            json!({"jsonrpc": "2.0", "id": call.id, "result": [1]}),
            &shared,
            &peer,
        );
        assert_eq!(call.answer().await, Ok(json!([1])));
        let publish = json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
            "params": {"uri": "file:///w/a", "version": 2, "diagnostics": [{"message": "m"}]}});
        dispatch(publish, &shared, &peer);
        dispatch(
            json!({"jsonrpc": "2.0", "method": "window/logMessage"}),
            &shared,
            &peer,
        );
        assert!(sent.try_recv().is_err());
        let published = shared.latest("file:///w/a").unwrap();
        assert_eq!((published.seq, published.version), (1, Some(2)));
        assert_eq!(published.items, [json!({"message": "m"})]);

        // When the server goes away, waiting requests learn it.
        let call = peer.call("m", Value::Null).unwrap();
        shared.close(&peer, Some("broken".into()));
        assert!(call.answer().await.is_err() && !shared.alive.load(Ordering::SeqCst));
    }
}
