//! Requests that fail on a reused keep-alive connection.
//!
//! A server may close a pooled keep-alive connection at any moment: llama.cpp's
//! `llama-server`, for one, closes it shortly after a streamed answer. When the next
//! request (the one after a tool call) is written to that socket just before the close
//! arrives, the connection ends before a single response byte and hyper reports an
//! incomplete message. hyper only retries a request it has not written yet; this one it
//! hands back as an error, and reporting it as "cannot reach" (with a backoff) is wrong:
//! the server is up, a fresh connection answers at once.
//!
//! This module owns the facts needed to retry such a request once, at once and silently
//! (the retry itself is in [`super::http::post_json`]):
//! * [`ConnectionCount`]: a connector layer counting the connections a client opens, in
//!   all and per request ([`count_opened`]: the connector is called from the task that
//!   sends, so a connection another request opens meanwhile is not counted). A request
//!   that opened none went out on a pooled connection.
//! * [`closed_before_response`]: whether a send failed because the server closed the
//!   connection before answering (rather than because it could not be reached).
//! * [`STALE_WITHIN`]: such a failure counts only when it came at once; a server that
//!   worked on the request and then dropped it may have acted on it.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

/// How soon after sending a failure must come to be a stale pooled connection: the
/// close was already on its way, so the answer is immediate.
pub const STALE_WITHIN: Duration = Duration::from_secs(1);

tokio::task_local! {
    /// Connections opened by the request being sent in this task.
    static OPENED_HERE: Cell<u64>;
}

/// Runs `send` and says how many connections it opened itself.
pub async fn count_opened<F: std::future::Future>(send: F) -> (F::Output, u64) {
    OPENED_HERE
        .scope(Cell::new(0), async move {
            let out = send.await;
            (out, OPENED_HERE.with(Cell::get))
        })
        .await
}

/// How many connections a client has opened; shared by the client's connector layer and
/// the code that sends requests on it.
#[derive(Debug, Default, Clone)]
pub struct ConnectionCount(Arc<AtomicU64>);

impl ConnectionCount {
    /// Connections opened so far (attempts, successful or not).
    pub fn opened(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

impl<S> tower_layer::Layer<S> for ConnectionCount {
    type Service = Counted<S>;

    fn layer(&self, inner: S) -> Counted<S> {
        Counted {
            inner,
            count: self.clone(),
        }
    }
}

/// A connector that counts the connections it is asked to open.
#[derive(Debug, Clone)]
pub struct Counted<S> {
    inner: S,
    count: ConnectionCount,
}

impl<S, R> tower_service::Service<R> for Counted<S>
where
    S: tower_service::Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        self.count.0.fetch_add(1, Ordering::SeqCst);
        let _ = OPENED_HERE.try_with(|n| n.set(n.get() + 1));
        self.inner.call(request)
    }
}

/// Whether `error` means the server closed the connection before sending any part of a
/// response: hyper's incomplete message (closed after the request was written), a
/// cancelled send (closed before), or a reset or broken pipe while writing. A refused or
/// timed-out connection is not this: that server cannot be reached. (Whether it was a
/// stale pooled connection also takes [`STALE_WITHIN`] and no connection of its own.)
pub fn closed_before_response(error: &reqwest::Error) -> bool {
    if error.is_connect() || error.is_timeout() || error.is_builder() || error.is_redirect() {
        return false;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(hyper) = current.downcast_ref::<hyper::Error>()
            && (hyper.is_incomplete_message() || hyper.is_canceled())
        {
            return true;
        }
        if let Some(io) = current.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
            )
        {
            return true;
        }
        source = current.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_layer::Layer;
    use tower_service::Service;

    #[derive(Clone)]
    struct Echo;

    impl Service<u8> for Echo {
        type Response = u8;
        type Error = std::convert::Infallible;
        type Future = std::future::Ready<Result<u8, Self::Error>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: u8) -> Self::Future {
            std::future::ready(Ok(request))
        }
    }

    #[test]
    fn every_connection_attempt_is_counted_across_clones() {
        let count = ConnectionCount::default();
        let mut service = count.layer(Echo);
        let mut clone = service.clone();
        assert_eq!(service.call(1).into_inner(), Ok(1));
        assert_eq!(clone.call(2).into_inner(), Ok(2));
        assert_eq!(count.opened(), 2);
    }

    #[tokio::test]
    async fn a_request_counts_only_the_connections_it_opened() {
        let count = ConnectionCount::default();
        let mut elsewhere = count.layer(Echo);
        let mut here = count.layer(Echo);
        let ((), none) = count_opened(async {}).await;
        assert_eq!(none, 0);
        assert_eq!(elsewhere.call(1).into_inner(), Ok(1));
        let (_, mine) = count_opened(async move { here.call(2).into_inner() }).await;
        assert_eq!((mine, count.opened()), (1, 2));
    }
}
