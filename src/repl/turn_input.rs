//! Keys typed while an answer streams: kept for the next prompt, never shown on the way.
//!
//! Owns: switching the terminal's line discipline for the length of one turn so that typed
//! keys are not echoed (onto the spinner or the answer), Enter stays a carriage return (so
//! the next prompt submits what was typed, instead of inserting a new line), and bytes are
//! passed on as typed (no line buffering). Ctrl-C still raises SIGINT. The saved mode is
//! restored when the guard is dropped, without discarding what was typed.

/// Restores the terminal mode saved when it was made.
pub(crate) struct QuietInput {
    #[cfg(unix)]
    saved: Option<rustix::termios::Termios>,
}

impl QuietInput {
    /// Turns echo and line editing off on stdin, if it is a terminal.
    pub(crate) fn start() -> Self {
        #[cfg(unix)]
        {
            use rustix::termios::{InputModes, LocalModes, OptionalActions, tcgetattr, tcsetattr};
            let stdin = std::io::stdin();
            let Ok(saved) = tcgetattr(&stdin) else {
                return Self { saved: None };
            };
            let mut quiet = saved.clone();
            quiet.local_modes.remove(
                LocalModes::ECHO
                    | LocalModes::ECHONL
                    | LocalModes::ICANON
                    | LocalModes::ECHOCTL
                    | LocalModes::IEXTEN,
            );
            quiet
                .input_modes
                .remove(InputModes::ICRNL | InputModes::INLCR);
            if tcsetattr(&stdin, OptionalActions::Now, &quiet).is_err() {
                return Self { saved: None };
            }
            Self { saved: Some(saved) }
        }
        #[cfg(not(unix))]
        Self {}
    }
}

impl Drop for QuietInput {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(saved) = self.saved.take() {
            let _ = rustix::termios::tcsetattr(
                std::io::stdin(),
                rustix::termios::OptionalActions::Now,
                &saved,
            );
        }
    }
}
