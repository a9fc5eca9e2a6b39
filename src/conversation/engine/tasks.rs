//! Running several conversations at once.
//!
//! One-shot runs keep their own conversation on a single-threaded runtime, where streaming
//! is cheapest (no cross-thread wake-up per network read). Conversations started beside it
//! (sub-agents, macros, the server, programs using the library) go through [`spawn`]: on a
//! multi-threaded runtime (the REPL's, the server's) they are ordinary tasks; from a
//! single-threaded one they run on a small worker pool started the first time it is
//! needed, so they run in parallel without slowing the plain path, which never starts it.

use std::future::Future;
use std::sync::OnceLock;

/// Worker threads of the pool for conversations started from a single-threaded runtime.
const POOL_WORKERS: usize = 2;

static POOL: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();

/// Runs `future` (typically a conversation's [`super::Engine::run`]) as a task that can
/// make progress in parallel with the caller; await the handle for its output.
pub fn spawn<F>(future: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    use tokio::runtime::{Handle, RuntimeFlavor};
    if let Ok(handle) = Handle::try_current()
        && handle.runtime_flavor() == RuntimeFlavor::MultiThread
    {
        return handle.spawn(future);
    }
    let pool = POOL.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(POOL_WORKERS)
            .thread_name("loki-conversation")
            .enable_all()
            .build()
            .map_err(|e| tracing::warn!("cannot start the conversation pool: {e}"))
            .ok()
    });
    match pool {
        Some(runtime) => runtime.spawn(future),
        // Without a pool the task still runs, concurrently on the caller's runtime.
        None => tokio::spawn(future),
    }
}

/// Whether the worker pool was started (the plain one-shot path never starts it).
pub fn pool_started() -> bool {
    POOL.get().is_some_and(Option::is_some)
}
