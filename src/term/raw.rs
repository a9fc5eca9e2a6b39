//! The terminal in "raw" mode for loki's own questions: no echo, no line editing, no
//! signal keys — but output processing stays on, so a newline written meanwhile (by
//! another part of loki) still starts its line at the left edge.

/// Drops what was typed before the question was shown.
#[cfg(unix)]
pub fn drop_type_ahead() {
    let _ = rustix::termios::tcflush(std::io::stdin(), rustix::termios::QueueSelector::IFlush);
}

#[cfg(not(unix))]
pub fn drop_type_ahead() {}

/// The terminal without echo, line editing or signal keys while the question is open;
/// restored when dropped.
pub struct Raw {
    #[cfg(unix)]
    saved: rustix::termios::Termios,
}

impl Raw {
    #[cfg(unix)]
    pub fn start() -> std::io::Result<Self> {
        use rustix::termios::{InputModes, LocalModes, OptionalActions, tcgetattr, tcsetattr};
        let stdin = std::io::stdin();
        let saved = tcgetattr(&stdin)?;
        let mut raw = saved.clone();
        raw.local_modes.remove(
            LocalModes::ECHO
                | LocalModes::ECHONL
                | LocalModes::ICANON
                | LocalModes::ISIG
                | LocalModes::IEXTEN,
        );
        raw.input_modes.remove(InputModes::ICRNL | InputModes::IXON);
        tcsetattr(&stdin, OptionalActions::Now, &raw)?;
        Ok(Self { saved })
    }

    #[cfg(not(unix))]
    pub fn start() -> std::io::Result<Self> {
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        #[cfg(unix)]
        let _ = rustix::termios::tcsetattr(
            std::io::stdin(),
            rustix::termios::OptionalActions::Now,
            &self.saved,
        );
    }
}
