//! The other side of a connection: loki's requests waiting for their answers by id,
//! answers and notifications going out through one queue, and what arrives routed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use super::{Classified, Closed, Envelope, Fault, Framing, Incoming, JsonRpc, RequestError};

/// The answer a request of loki's waits for.
type Answer = Result<Value, RequestError>;

/// The bytes queued for the writer task.
pub type Outbox = mpsc::UnboundedReceiver<Vec<u8>>;

/// One connection's peer; shared behind an `Arc` by the tasks that talk to it.
pub struct Peer<E: Envelope> {
    envelope: E,
    framing: Framing,
    out: mpsc::UnboundedSender<Vec<u8>>,
    next_id: AtomicU64,
    /// Loki's requests waiting for their answer, by the JSON text of their id (so `7`
    /// and `"7"` stay apart).
    pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    /// Set by [`Peer::close`]: requests fail at once from then on.
    closed: AtomicBool,
}

impl<E: Envelope> std::fmt::Debug for Peer<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("framing", &self.framing)
            .finish_non_exhaustive()
    }
}

/// A request of loki's on its way: its id, and the answer to wait for.
#[derive(Debug)]
pub struct Call {
    /// The id it was sent with ([`Peer::forget`] takes it).
    pub id: Value,
    answer: oneshot::Receiver<Answer>,
}

impl Call {
    /// Its answer; [`RequestError::Closed`] when the peer closed first.
    pub async fn answer(self) -> Answer {
        self.answer.await.unwrap_or(Err(RequestError::Closed))
    }
}

/// A lock whose holder panicking does not matter (the map stays consistent).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<E: Envelope> Peer<E> {
    /// A peer, and the queue of framed messages for [`write_all`] to write.
    pub fn new(envelope: E, framing: Framing) -> (Self, Outbox) {
        let (out, outbox) = mpsc::unbounded_channel();
        let peer = Self {
            envelope,
            framing,
            out,
            next_id: AtomicU64::new(1),
            pending: Mutex::default(),
            closed: AtomicBool::new(false),
        };
        (peer, outbox)
    }

    /// A peer on stdout, one message per line, written by a task of its own that ends
    /// once the peer is dropped and what it sent is out (or stdout is gone).
    pub fn stdio(envelope: E) -> (Self, tokio::task::JoinHandle<()>) {
        let (peer, outbox) = Self::new(envelope, Framing::Lines);
        let writer = tokio::spawn(write_all(tokio::io::stdout(), outbox));
        (peer, writer)
    }

    /// Sends one message as it is (a batch of replies, a protocol's own message).
    pub fn send(&self, message: &Value) -> Result<(), Closed> {
        self.out
            .send(self.framing.encode(message))
            .map_err(|_| Closed)
    }

    /// The answer to the other side's request `id`, without sending it (for a batch).
    pub fn response(&self, id: &Value, outcome: Result<Value, Fault>) -> Value {
        self.envelope.response(id, outcome)
    }

    /// Answers the other side's request `id`.
    pub fn respond(&self, id: &Value, outcome: Result<Value, Fault>) {
        let _ = self.send(&self.response(id, outcome));
    }

    /// Sends a request; its [`Call`] to wait on (or to [`Peer::forget`]).
    pub fn call(&self, method: &str, params: Value) -> Result<Call, RequestError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(RequestError::Closed);
        }
        let id = self
            .envelope
            .id(self.next_id.fetch_add(1, Ordering::Relaxed));
        let key = id.to_string();
        let (reply, answer) = oneshot::channel();
        lock(&self.pending).insert(key.clone(), reply);
        if let Err(closed) = self.send(&self.envelope.request(&id, method, params)) {
            lock(&self.pending).remove(&key);
            return Err(closed.into());
        }
        Ok(Call { id, answer })
    }

    /// Asks the other side; its result, or why there is none.
    pub async fn request(&self, method: &str, params: Value) -> Answer {
        self.call(method, params)?.answer().await
    }

    /// Stops waiting for the answer to `id` (timed out, cancelled); whether it was still
    /// waited for.
    pub fn forget(&self, id: &Value) -> bool {
        lock(&self.pending).remove(&id.to_string()).is_some()
    }

    /// Takes one message from the other side: an answer goes to the request waiting for
    /// it (an answer nothing waits for is dropped); anything else is returned for the
    /// driver to dispatch.
    pub fn route(&self, message: Value) -> Option<Incoming> {
        match self.envelope.classify(message) {
            Classified::Incoming(incoming) => Some(incoming),
            Classified::Response { id, outcome } => {
                self.settle(&id, outcome);
                None
            }
        }
    }

    /// An answer to request `id` came but could not be read (too large): the request
    /// fails with `why`. Whether a request of loki's was waiting on it.
    pub fn fail_pending(&self, id: &Value, why: &str) -> bool {
        self.settle(id, Err(RequestError::refused(why)))
    }

    fn settle(&self, id: &Value, outcome: Answer) -> bool {
        let waiting = lock(&self.pending).remove(&id.to_string());
        waiting.is_some_and(|waiting| {
            let _ = waiting.send(outcome);
            true
        })
    }

    /// The other side is gone: every request waiting fails, and later ones at once.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        lock(&self.pending).clear();
    }
}

impl Peer<JsonRpc> {
    /// A JSON-RPC notification.
    pub fn notify(&self, method: &str, params: Value) -> Result<(), Closed> {
        self.send(&JsonRpc::notification(method, params))
    }
}

/// Writes the queued messages to `writer` until the queue ends (every sender dropped)
/// or writing fails.
pub async fn write_all<W: AsyncWrite + Unpin>(mut writer: W, mut outbox: Outbox) {
    while let Some(bytes) = outbox.recv().await {
        if writer.write_all(&bytes).await.is_err() || writer.flush().await.is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sent(outbox: &mut Outbox) -> Value {
        let bytes = outbox.try_recv().unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn answers_reach_their_requests_by_id() {
        let (peer, mut outbox) = Peer::new(JsonRpc, Framing::Lines);
        let first = peer.call("a", json!({})).unwrap();
        let second = peer.call("b", Value::Null).unwrap();
        assert_eq!(sent(&mut outbox)["method"], "a");
        let request = sent(&mut outbox);
        assert_eq!(
            (request["id"].clone(), request["method"].clone()),
            (second.id.clone(), json!("b"))
        );
        // A string id that reads like a number is another request's answer.
        let text_id = json!(second.id.to_string());
        assert!(peer.route(json!({"id": text_id, "result": 0})).is_none());
        assert!(
            peer.route(json!({"id": second.id, "error": {"code": 1, "message": "no"}}))
                .is_none()
        );
        assert!(peer.route(json!({"id": first.id, "result": [1]})).is_none());
        assert_eq!(first.answer().await, Ok(json!([1])));
        assert_eq!(
            second.answer().await,
            Err(RequestError::Refused {
                code: Some(1),
                message: "no".into()
            })
        );
    }

    #[tokio::test]
    async fn requests_fail_when_forgotten_failed_or_closed() {
        let (peer, _outbox) = Peer::new(JsonRpc, Framing::Lines);
        let call = peer.call("a", json!({})).unwrap();
        assert!(peer.forget(&call.id) && !peer.forget(&call.id));
        let call = peer.call("b", json!({})).unwrap();
        assert!(peer.fail_pending(&call.id, "too big"));
        assert_eq!(call.answer().await, Err(RequestError::refused("too big")));
        let call = peer.call("c", json!({})).unwrap();
        peer.close();
        assert_eq!(call.answer().await, Err(RequestError::Closed));
        assert_eq!(peer.call("d", json!({})).err(), Some(RequestError::Closed));
    }

    #[test]
    fn requests_and_notifications_go_to_the_driver_and_replies_go_out() {
        let (peer, mut outbox) = Peer::new(JsonRpc, Framing::Lines);
        let request = json!({"jsonrpc": "2.0", "id": "x", "method": "m", "params": {"a": 1}});
        let Some(Incoming::Request { id, method, params }) = peer.route(request) else {
            panic!("not a request");
        };
        assert_eq!((method.as_str(), params), ("m", json!({"a": 1})));
        peer.respond(&id, Ok(json!(true)));
        assert_eq!(
            sent(&mut outbox),
            json!({"jsonrpc": "2.0", "id": "x", "result": true})
        );
        peer.notify("n", json!([])).unwrap();
        assert_eq!(sent(&mut outbox)["method"], "n");
        drop(outbox);
        assert_eq!(peer.notify("n", json!([])), Err(Closed));
        assert_eq!(peer.call("m", json!([])).err(), Some(RequestError::Closed));
    }
}
