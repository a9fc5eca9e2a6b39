//! [`TerminalCaps`]: what the process's terminal is, captured once at start-up with the
//! environment snapshot. Front ends decide colour, spinners and prompts from it instead of
//! asking the process again; a process without a terminal (a server, a library user)
//! uses [`TerminalCaps::none`].

use std::io::IsTerminal;

use super::Env;

/// Which standard streams are terminals, and whether colour is switched off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TerminalCaps {
    /// Standard input is a terminal.
    pub stdin_tty: bool,
    /// Standard output is a terminal.
    pub stdout_tty: bool,
    /// Standard error is a terminal.
    pub stderr_tty: bool,
    /// `NO_COLOR` is set (in the environment snapshot).
    pub no_color: bool,
}

impl TerminalCaps {
    /// The process's streams as they are now, and `NO_COLOR` from `env`.
    pub fn capture(env: &Env) -> Self {
        Self {
            stdin_tty: std::io::stdin().is_terminal(),
            stdout_tty: std::io::stdout().is_terminal(),
            stderr_tty: std::io::stderr().is_terminal(),
            no_color: env.get("NO_COLOR").is_some(),
        }
    }

    /// The terminal's size as `(columns, rows)`, asked with one ioctl on the first of
    /// stdout and stderr that is a terminal; `None` when neither is, or it reports 0
    /// (a pseudo-terminal nobody sized). Never runs a program (crossterm's fallback is
    /// `tput`, two processes per run).
    pub fn size(&self) -> Option<(u16, u16)> {
        #[cfg(unix)]
        {
            let size = if self.stdout_tty {
                rustix::termios::tcgetwinsize(std::io::stdout()).ok()
            } else if self.stderr_tty {
                rustix::termios::tcgetwinsize(std::io::stderr()).ok()
            } else {
                None
            };
            size.map(|s| (s.ws_col, s.ws_row))
                .filter(|(w, h)| *w > 0 && *h > 0)
        }
        #[cfg(not(unix))]
        {
            (self.stdout_tty || self.stderr_tty)
                .then(|| crossterm::terminal::size().ok())
                .flatten()
                .filter(|(w, h)| *w > 0 && *h > 0)
        }
    }

    /// No terminal at all: plain text, no prompts.
    pub fn none() -> Self {
        Self::default()
    }

    /// Someone can be asked: stdin and stderr are terminals.
    pub fn interactive(&self) -> bool {
        self.stdin_tty && self.stderr_tty
    }
}
