//! `loki --mcp-server` on stdio: one JSON-RPC message per line each way. Requests run
//! as tasks of their own (a long tool call does not hold up a `ping`), answers go out
//! through one writer as they are ready, and when stdin closes the running requests are
//! stopped and their conversations closed before loki exits.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::LokiMcp;
use super::bounded::{self, Line};
use super::rpc::{self, Calls, Incoming, RpcError};

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
                let (server, calls, out) = (server.clone(), Arc::clone(&calls), out.clone());
                let cancel = stop.child_token();
                running.spawn(async move {
                    let _running = calls.start(&id, &cancel);
                    tracing::debug!(%method, "MCP request");
                    let result = server.answer(&method, &params, cancel).await;
                    out.send(&rpc::response(&id, result));
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
    while running.join_next().await.is_some() {}
    drop(out);
    let _ = writer.await;
    Ok(0)
}
