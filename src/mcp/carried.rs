//! A server whose messages a client carries: the Claude Agent SDK runs "SDK MCP servers"
//! inside the program and loki reaches them through the control protocol
//! (`mcp_message`). Each JSON-RPC message loki's MCP client sends is handed to the
//! [`Carrier`]; the answer to a request comes back as the server's message.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::sync::mpsc;

/// Delivers one JSON-RPC message to a server living in the client; the server's answer
/// (for a notification, whatever acknowledgement the client sends, ignored).
pub trait Carry: Send + Sync {
    /// Sends `message` to server `server`.
    fn carry(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, CarryError>>;
}

/// A shared [`Carry`], comparable by identity (so a [`super::config::Transport`] holding
/// one stays a sharing key).
#[derive(Clone)]
pub struct Carrier(pub Arc<dyn Carry>);

impl PartialEq for Carrier {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Carrier {}

impl std::hash::Hash for Carrier {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(Arc::as_ptr(&self.0).cast::<()>(), state);
    }
}

/// A failure to reach the server.
#[derive(Debug, thiserror::Error)]
pub enum CarryError {
    /// The client carrying the server is gone.
    #[error("the program has ended")]
    Gone,
    /// The client did not deliver the message, or refused it.
    #[error("{0}")]
    Refused(String),
    /// The message could not be written as JSON.
    #[error("cannot encode the message: {0}")]
    Encode(#[from] serde_json::Error),
}

/// The transport: requests go out through the carrier, their answers come back on a
/// channel in the order they arrive.
pub struct CarriedTransport {
    server: String,
    carrier: Carrier,
    answers: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
    sender: mpsc::UnboundedSender<ServerJsonRpcMessage>,
}

impl CarriedTransport {
    /// A transport to `server` through `carrier`.
    pub fn new(server: &str, carrier: Carrier) -> Self {
        let (sender, answers) = mpsc::unbounded_channel();
        Self {
            server: server.to_string(),
            carrier,
            answers,
            sender,
        }
    }
}

impl Transport<RoleClient> for CarriedTransport {
    type Error = CarryError;

    fn name() -> std::borrow::Cow<'static, str> {
        "carried".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let message = serde_json::to_value(&item);
        let carrier = Arc::clone(&self.carrier.0);
        let server = self.server.clone();
        let sender = self.sender.clone();
        async move {
            let message = message?;
            let expects_answer = message.get("id").is_some() && message.get("method").is_some();
            let id = message.get("id").cloned().unwrap_or(Value::Null);
            // Answers are awaited apart, so a slow tool does not hold up other messages.
            let answer = carrier.carry(&server, message);
            if !expects_answer {
                return answer.await.map(drop);
            }
            tokio::spawn(async move {
                let reply = match answer.await {
                    Ok(reply) => reply,
                    Err(why) => serde_json::json!({
                        "jsonrpc": "2.0",
                        "id": id.clone(),
                        "error": {"code": -32603, "message": why.to_string()},
                    }),
                };
                // An answer that is not JSON-RPC still ends its request, as an error.
                let reply = serde_json::from_value::<ServerJsonRpcMessage>(reply).or_else(|e| {
                    serde_json::from_value(serde_json::json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": {"code": -32603, "message": format!("not a JSON-RPC answer: {e}")},
                    }))
                });
                if let Ok(reply) = reply {
                    let _ = sender.send(reply);
                }
            });
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.answers.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.answers.close();
        Ok(())
    }
}
