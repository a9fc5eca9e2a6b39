//! `loki --mcp-server` on stdio: one JSON-RPC message per line each way. Requests run
//! as tasks of their own (a long tool call does not hold up a `ping`), answers go out
//! through one writer as they are ready. Closing stdin is the client's way to shut the
//! server down (the MCP spec's stdio shutdown): the running requests are stopped and their
//! conversations closed — for at most [`SHUTDOWN_WAIT`] — before loki exits. A request
//! the client cancelled gets no answer, as the spec asks.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::LokiMcp;
use super::bounded::{self, Line};
use super::rpc::{self, Calls, Incoming, RpcError};

/// How long the requests still running when stdin closes get to close their
/// conversations.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Serves on stdin and stdout until the client closes stdin; the exit status.
pub async fn serve(server: LokiMcp) -> anyhow::Result<u8> {
    let (out, writer) = crate::term::json_lines::stdout_writer();
    let calls = Arc::new(Calls::default());
    let stop = CancellationToken::new();
    let mut running = tokio::task::JoinSet::new();
    let mut input = tokio::io::BufReader::new(tokio::io::stdin());
    loop {
        let line = match bounded::next_line(&mut input).await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!("MCP server: reading stdin failed: {e}");
                break;
            }
        };
        let bytes = match line {
            Line::Message(bytes) => bytes,
            Line::TooLong { id, bytes } => {
                if let Some(id) = id {
                    let error = RpcError::new(rpc::INVALID_REQUEST, bounded::too_large(bytes));
                    out.send(&rpc::failure(&id, &error));
                }
                continue;
            }
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(message) = serde_json::from_slice::<Value>(&bytes) else {
            let error = RpcError::new(rpc::PARSE_ERROR, "not a JSON-RPC message");
            out.send(&rpc::failure(&Value::Null, &error));
            continue;
        };
        match Incoming::classify(message) {
            Incoming::Request { id, method, params } => {
                let (server, out, stop) = (server.clone(), out.clone(), stop.clone());
                let cancel = stop.child_token();
                // Registered before the task runs: a cancellation read next finds it.
                let registered = calls.start(&id, &cancel);
                running.spawn(async move {
                    let _registered = registered;
                    tracing::debug!(%method, "MCP request");
                    let result = server.answer(&method, &params, cancel.clone()).await;
                    if !cancel.is_cancelled() || stop.is_cancelled() {
                        out.send(&rpc::response(&id, result));
                    }
                });
            }
            Incoming::Notification { method, params } => {
                if method == "notifications/cancelled" {
                    calls.cancel(&params);
                }
            }
            Incoming::Other => {}
            Incoming::Invalid => {
                let error = RpcError::new(rpc::INVALID_REQUEST, "not a JSON-RPC request");
                out.send(&rpc::failure(&Value::Null, &error));
            }
        }
        while running.try_join_next().is_some() {}
    }
    // The client is gone: what it asked for stops, and each conversation is closed.
    stop.cancel();
    let closed = tokio::time::timeout(SHUTDOWN_WAIT, async {
        while running.join_next().await.is_some() {}
    })
    .await;
    if closed.is_err() {
        tracing::warn!("MCP server: requests still running after {SHUTDOWN_WAIT:?}; stopped");
    }
    drop(running);
    drop(out);
    let _ = writer.await;
    Ok(0)
}
