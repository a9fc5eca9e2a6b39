//! The one response path every model endpoint takes: the request is parsed into a
//! [`Run`], the run is started ([`Server::start`]: open the conversation, submit the
//! prompt, close it), and its answer is written in the shape of the endpoint's API — as
//! server-sent events while it runs, or whole once it has ended. OpenAI's chat
//! completions are a [`Shape`] (the Responses and legacy endpoints rewrite that shape);
//! loki's own API streams through the run's log instead ([`super::streamed`]) and shares
//! the rest ([`Server::run_to_end`], [`Server::end_when_done`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::http::StatusCode;
use axum::response::Response;
use tokio::task::{JoinError, JoinHandle};
use tokio_util::sync::CancellationToken;

use super::Server;
use super::reply::{ApiError, sse};
use super::run::{ChannelEmitter, Ran, Run};
use super::streamed::Tracked;
use loki_protocol::emitter::Emitter;
use loki_protocol::event::Envelope;

/// How one API writes a run's answer.
pub(super) trait Shape: Send + Sync + 'static {
    /// What a streamed answer opens with, before any event.
    fn opening(&self) -> Vec<String> {
        Vec::new()
    }

    /// What one event of a streamed run sends (SSE text); most send nothing.
    fn event(&self, envelope: &Envelope) -> Vec<String>;

    /// What a streamed run that failed before its first event sends.
    fn failed(&self, error: &ApiError) -> Vec<String>;

    /// The whole answer of a run that has ended (or the error that ended the request).
    fn whole(&self, ran: Result<Ran, ApiError>) -> Response;
}

/// Shows a whole answer's events to its shape, dropping what the shape would stream.
struct Listener<S>(Arc<S>);

impl<S: Shape> Emitter for Listener<S> {
    fn emit(&self, envelope: Envelope) {
        drop(self.0.event(&envelope));
    }
}

/// The error of a run whose task ended without a result (it panicked).
fn lost(e: &JoinError) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal_error",
        format!("the run's task ended without a result: {e}"),
    )
}

impl Server {
    /// Runs `run` and answers in `shape`: streamed as its events come when `stream`,
    /// else whole once it has ended.
    pub(super) async fn answer(
        self: &Arc<Self>,
        run: Run,
        stream: bool,
        shape: impl Shape,
    ) -> Response {
        let cancel = self.shutdown.child_token();
        if !stream {
            // The shape sees the events too (it may keep some for the whole answer, such
            // as the reasoning); what it would stream is dropped.
            let shape = Arc::new(shape);
            let listener = Arc::new(Listener(Arc::clone(&shape)));
            let ran = self.run_to_end(run, listener, cancel, None).await;
            return shape.whole(ran);
        }
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        for text in shape.opening() {
            let _ = tx.send(text);
        }
        let shape = Arc::new(shape);
        let started = Arc::new(AtomicBool::new(false));
        let (seen, format) = (Arc::clone(&started), Arc::clone(&shape));
        let emitter = Arc::new(ChannelEmitter::new(
            tx,
            move |envelope: &Envelope| {
                seen.store(true, Ordering::Relaxed);
                format.event(envelope)
            },
            cancel.clone(),
        ));
        let task = self.start(run, Arc::clone(&emitter) as Arc<dyn Emitter>, cancel);
        tokio::spawn(async move {
            let error = match task.await {
                Ok(ran) => ran.result.as_ref().err().map(|e| ran.api_error(e)),
                Err(e) => Some(lost(&e)),
            };
            // Failed before the run: no event said so.
            if let Some(error) = error
                && !started.load(Ordering::Relaxed)
            {
                for text in shape.failed(&error) {
                    emitter.send(text);
                }
            }
        });
        sse(rx)
    }

    /// Runs `run` to its end while the request waits, its events to `emitter`. The
    /// client going away cancels it (its session is still saved); `tracked` is ended
    /// whatever becomes of the request.
    pub(super) async fn run_to_end(
        self: &Arc<Self>,
        run: Run,
        emitter: Arc<dyn Emitter>,
        cancel: CancellationToken,
        tracked: Option<Arc<Tracked>>,
    ) -> Result<Ran, ApiError> {
        let guard = cancel.clone().drop_guard();
        let task = self.start(run, emitter, cancel);
        let ran = self.end_when_done(task, tracked).await;
        guard.disarm();
        match ran {
            Ok(Ok(ran)) => Ok(ran),
            Ok(Err(e)) | Err(e) => Err(lost(&e)),
        }
    }

    /// Waits for the run's `task`, then ends `tracked` with what it left (its last
    /// events, its status here and for the other instances) — in a task of its own, so
    /// the end is recorded even when nobody waits for it.
    pub(super) fn end_when_done(
        self: &Arc<Self>,
        task: JoinHandle<Ran>,
        tracked: Option<Arc<Tracked>>,
    ) -> JoinHandle<Result<Ran, JoinError>> {
        let server = Arc::clone(self);
        tokio::spawn(async move {
            let ran = task.await;
            if let Some(tracked) = tracked {
                server.end(&tracked, &ran).await;
            }
            ran
        })
    }
}
