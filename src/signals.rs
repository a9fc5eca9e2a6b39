//! The signals that end a run early — Ctrl-C (SIGINT), SIGTERM and SIGHUP — seen as
//! one stream by the front ends.
//!
//! All three stop the running turn the same way: the turn is cancelled, its partial
//! answer is kept, the session is written, the terminal is left as it was found. They
//! differ only in what comes after: in the REPL Ctrl-C returns to the prompt while
//! SIGTERM and SIGHUP end the process; the exit status names the signal (128 + its
//! number, as a shell reports it).
//!
//! Once loki listens for a signal, the system's default action (ending the process at
//! once) no longer happens for it, so every front end that listens must also finish.

use std::sync::atomic::{AtomicBool, Ordering};

/// A signal that stops the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT: Ctrl-C outside raw mode, or `kill -INT`.
    Interrupt,
    /// SIGTERM: a polite request to end (`kill`, a service manager, a container stop).
    Terminate,
    /// SIGHUP: the terminal went away (window closed, SSH connection lost).
    Hangup,
}

impl StopSignal {
    /// The exit status a shell reports for a process ended by this signal.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Interrupt => 130,
            Self::Terminate => 143,
            Self::Hangup => 129,
        }
    }

    /// The signal's name, e.g. `SIGTERM`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
            Self::Hangup => "SIGHUP",
        }
    }
}

/// Listens for the stop signals from creation on.
pub struct StopSignals {
    #[cfg(not(unix))]
    interrupt: bool,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hangup: tokio::signal::unix::Signal,
    /// SIGINT, registered at once (so a Ctrl-C right after start-up is not lost).
    #[cfg(unix)]
    interrupt_signal: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    /// Starts listening for SIGTERM and SIGHUP, and for SIGINT too when `interrupt`
    /// (the REPL handles Ctrl-C on its own). Needs a tokio runtime.
    pub fn listen(interrupt: bool) -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Self {
                terminate: signal(SignalKind::terminate())?,
                hangup: signal(SignalKind::hangup())?,
                interrupt_signal: if interrupt {
                    Some(signal(SignalKind::interrupt())?)
                } else {
                    None
                },
            })
        }
        #[cfg(not(unix))]
        Ok(Self { interrupt })
    }

    /// The next stop signal. From then on, threads blocked on the terminal are not
    /// waited for at exit ([`blocked_threads_left`]).
    pub async fn recv(&mut self) -> StopSignal {
        let signal = self.next().await;
        leave_blocked_threads();
        STOPPING.cancel();
        signal
    }

    async fn next(&mut self) -> StopSignal {
        #[cfg(unix)]
        {
            let Self {
                terminate,
                hangup,
                interrupt_signal,
                ..
            } = self;
            let interrupt = async {
                if let Some(signal) = interrupt_signal.as_mut()
                    && signal.recv().await.is_some()
                {
                    return StopSignal::Interrupt;
                }
                std::future::pending().await
            };
            tokio::select! {
                signal = interrupt => signal,
                Some(()) = terminate.recv() => StopSignal::Terminate,
                Some(()) = hangup.recv() => StopSignal::Hangup,
            }
        }
        #[cfg(not(unix))]
        {
            if self.interrupt && tokio::signal::ctrl_c().await.is_ok() {
                return StopSignal::Interrupt;
            }
            std::future::pending().await
        }
    }
}

/// The one signal listener of the front ends: the first stop signal is recorded and
/// cancels the target token (a conversation's: every op it runs stops, and every later
/// one); later signals are absorbed while the front end finishes.
/// Listening ends when the watch is dropped.
pub struct StopWatch {
    stopped: tokio::sync::watch::Receiver<Option<StopSignal>>,
    task: tokio::task::JoinHandle<()>,
}

impl StopWatch {
    /// Starts listening (for SIGINT too when `interrupt`); a signal cancels `target`.
    pub fn start(
        target: tokio_util::sync::CancellationToken,
        interrupt: bool,
    ) -> std::io::Result<Self> {
        let mut signals = StopSignals::listen(interrupt)?;
        let (tx, stopped) = tokio::sync::watch::channel(None);
        let task = tokio::spawn(async move {
            let signal = signals.recv().await;
            // First the flag, then the token: a turn starting meanwhile sees one or the
            // other.
            let _ = tx.send(Some(signal));
            target.cancel();
            loop {
                signals.recv().await;
            }
        });
        Ok(Self { stopped, task })
    }

    /// The signal received, if any.
    pub fn signal(&self) -> Option<StopSignal> {
        *self.stopped.borrow()
    }

    /// Waits for the first signal (never returns if none comes).
    pub async fn wait(&self) -> StopSignal {
        let mut stopped = self.stopped.clone();
        match stopped.wait_for(Option::is_some).await {
            Ok(signal) => signal.unwrap_or(StopSignal::Terminate),
            Err(_) => std::future::pending().await,
        }
    }

    /// The exit status for `fallback` unless a signal came, whose status wins.
    pub fn exit_code_or(&self, fallback: u8) -> u8 {
        self.signal().map_or(fallback, StopSignal::exit_code)
    }
}

impl Drop for StopWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Cancelled at the first stop signal: questions blocked on the terminal (a thread
/// reading keys cannot be woken) race it, so a signal never waits for an answer.
static STOPPING: std::sync::LazyLock<tokio_util::sync::CancellationToken> =
    std::sync::LazyLock::new(tokio_util::sync::CancellationToken::new);

/// Completes once a stop signal arrived (at once if one already did). A question asked
/// on a thread of its own races this and gives up — the thread is left behind
/// ([`blocked_threads_left`]) and the front end finishes as after any stop signal.
pub async fn stopping() {
    STOPPING.cancelled().await;
}

/// Whether a stop signal arrived (for loops that poll rather than await).
pub fn is_stopping() -> bool {
    STOPPING.is_cancelled()
}

/// Set once a thread may be left blocked (on the terminal, or waiting for a session
/// lock) by a wait that a signal or a cancellation abandoned.
static BLOCKED_THREADS_LEFT: AtomicBool = AtomicBool::new(false);

/// Records that a thread blocked on the terminal or on a lock is left behind: the
/// runtime must not wait for it on the way out.
pub fn leave_blocked_threads() {
    BLOCKED_THREADS_LEFT.store(true, Ordering::Release);
}

/// Whether [`leave_blocked_threads`] was called.
pub fn blocked_threads_left() -> bool {
    BLOCKED_THREADS_LEFT.load(Ordering::Acquire)
}

/// Leaves the terminal as loki found it after a stop signal ended a wait for the user:
/// cooked mode (the line editor and the menus switch to raw mode), bracketed paste
/// off and the cursor shown on whichever of stdout and stderr is a terminal.
pub fn restore_terminal() {
    use std::io::{IsTerminal, Write};
    let _ = crossterm::terminal::disable_raw_mode();
    const RESET: &[u8] = b"\x1b[?2004l\x1b[?25h";
    if std::io::stdout().is_terminal() {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(RESET);
        let _ = out.flush();
    } else if std::io::stderr().is_terminal() {
        let _ = std::io::stderr().lock().write_all(RESET);
    }
}
