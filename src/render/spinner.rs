//! A stderr spinner shown while waiting for the first token, on terminals only.
//!
//! It runs as a task on the caller's tokio runtime and is stopped synchronously; stopping
//! clears its line before anything else is written, so it never delays or garbles output.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const FRAMES: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const INTERVAL: Duration = Duration::from_millis(80);

/// A running spinner; dropping it stops it.
#[derive(Debug)]
pub struct Spinner {
    stopped: Arc<AtomicBool>,
    /// Serialises spinner frames with the clearing write.
    lock: Arc<Mutex<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Spinner {
    /// Starts a spinner labelled `message` on stderr; `None` outside a tokio runtime.
    pub fn start(message: &str) -> Option<Self> {
        let handle = tokio::runtime::Handle::try_current().ok()?;
        let stopped = Arc::new(AtomicBool::new(false));
        let lock = Arc::new(Mutex::new(()));
        let (s, l) = (Arc::clone(&stopped), Arc::clone(&lock));
        let message = message.to_string();
        let task = handle.spawn(async move {
            let mut interval = tokio::time::interval(INTERVAL);
            for frame in FRAMES.iter().cycle() {
                interval.tick().await;
                let Ok(_guard) = l.lock() else { return };
                if s.load(Ordering::Acquire) {
                    return;
                }
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[2m{frame} {message}\x1b[0m\x1b[K");
                let _ = err.flush();
            }
        });
        Some(Self {
            stopped,
            lock,
            task: Some(task),
        })
    }

    /// Stops the spinner and clears its line.
    pub fn stop(&mut self) {
        let Some(task) = self.task.take() else { return };
        task.abort();
        if let Ok(_guard) = self.lock.lock() {
            self.stopped.store(true, Ordering::Release);
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop();
    }
}
