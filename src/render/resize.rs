//! Noticing terminal resizes (SIGWINCH) cheaply while an answer streams.
//!
//! Owns: a process-wide resize counter, bumped by a background task listening for SIGWINCH
//! (started once, on first use, on the current tokio runtime). The renderer compares one
//! atomic load per delta instead of asking the terminal for its size every time.

use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many resizes were seen since the watch started.
static GENERATION: AtomicU64 = AtomicU64::new(0);
/// Starts the watch at most once.
static WATCH: Once = Once::new();

/// Starts counting resizes (once per process; needs a tokio runtime, else does nothing).
pub(crate) fn watch() {
    #[cfg(unix)]
    {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        WATCH.call_once(|| {
            use tokio::signal::unix::{SignalKind, signal};
            let _guard = handle.enter();
            let Ok(mut winch) = signal(SignalKind::window_change()) else {
                return;
            };
            handle.spawn(async move {
                while winch.recv().await.is_some() {
                    GENERATION.fetch_add(1, Ordering::AcqRel);
                }
            });
        });
    }
}

/// The number of resizes seen so far.
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}
