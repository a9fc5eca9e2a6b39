//! Leaving without losing work: the "Save session?" question (Esc goes back), Ctrl-D and
//! `.exit`, and SIGTERM/SIGHUP, which save the session without asking and restore the
//! terminal. Everything that waits for the user runs on a thread of its own
//! ([`Repl::ask_user`]) raced against those signals, so they are noticed even while
//! nobody types.

use std::io::Write;

use super::{Next, Repl};
use crate::conversation::policy::OnLeave;
use crate::render::theme::{Style, Theme};
use crate::signals::StopSignal;
use loki_protocol::command::Command;
use loki_protocol::event::Event;

/// Why waiting for the user ended without an answer.
pub(super) enum Interrupted {
    /// SIGTERM or SIGHUP arrived; the thread asking is left blocked.
    Signal(StopSignal),
    /// The thread asking failed.
    Lost,
}

/// What became of a request to leave the session.
pub(super) enum Leave {
    /// The session is closed (saved or discarded as the user chose).
    Left,
    /// The user went back (Esc): the session stays open, nothing is lost.
    Stayed,
    /// A stop signal arrived while asking.
    Stopped(StopSignal),
}

/// Shows a save's notices as they happen (waiting for another writer's lock) while the
/// conversation is borrowed.
struct SaveNotices {
    theme: Theme,
}

impl loki_protocol::emitter::Emitter for SaveNotices {
    fn emit(&self, envelope: loki_protocol::event::Envelope) {
        if let Event::Notice(notice) = envelope.event {
            dim_line(&self.theme, &notice.message);
        }
    }
}

/// Prints a dim line on stdout (for notices given while the conversation is borrowed).
fn dim_line(theme: &Theme, text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", theme.paint(Style::Dim, text));
    let _ = out.flush();
}

impl Repl {
    /// Runs `ask` (something that blocks on the terminal) on a thread of its own and
    /// waits for it, or for SIGTERM/SIGHUP, whichever comes first.
    pub(super) async fn ask_user<T: Send + 'static>(
        &self,
        ask: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Interrupted> {
        let stop = std::sync::Arc::clone(&self.stop);
        let stopped = async move { Some(stop.wait().await) };
        let asking = tokio::task::spawn_blocking(ask);
        tokio::select! {
            biased;
            // The thread stays blocked on the terminal (see `signals::blocked_threads_left`).
            Some(signal) = stopped => Err(Interrupted::Signal(signal)),
            answer = asking => answer.map_err(|_| Interrupted::Lost),
        }
    }

    /// SIGTERM or SIGHUP: restores the terminal, saves the session (the partial answer
    /// of a stopped turn included) unless `save_session: false`, and returns the exit
    /// status.
    pub(super) async fn terminate(&mut self, signal: StopSignal) -> u8 {
        crate::signals::restore_terminal();
        self.println("");
        tracing::info!("{} received; leaving the REPL", signal.name());
        self.save_on_exit().await;
        signal.exit_code()
    }

    /// Saves a changed session when the REPL ends without asking (a signal, a terminal
    /// gone): nobody can answer "Save session?", so the answer is yes unless
    /// `save_session: false`. The temporary session is saved under an autoname.
    pub(super) async fn save_on_exit(&mut self) {
        if self.conv.status().saves_unattended {
            self.save_session(None).await;
        }
    }

    /// Saves the open session (renamed to `rename`), reporting the outcome; returns the
    /// file written.
    pub(super) async fn save_session(
        &mut self,
        rename: Option<&str>,
    ) -> Option<std::path::PathBuf> {
        let notices = SaveNotices {
            theme: self.theme(),
        };
        let command = Command::SaveSession(rename.map(str::to_string));
        match self.conv.command(command, &notices).await {
            Ok(applied) => {
                self.show_applied(&applied);
                applied
                    .saved
                    .map(|saved| std::path::PathBuf::from(saved.location))
            }
            // Nothing to save: the error says so, with nothing to add about leaving.
            Err(e @ crate::error::CoreError::NoSession) => {
                self.error(&e.to_string());
                None
            }
            Err(e) => {
                self.error(&format!(
                    "{e} (the session stays open; `.set save_session false` leaves without saving)"
                ));
                None
            }
        }
    }

    /// Ctrl-D or `.exit`: leaves the session (asking about saving it) and then the REPL.
    pub(super) async fn quit(&mut self) -> Next {
        match self.close_session().await {
            Leave::Left => Next::Quit(0),
            Leave::Stayed => Next::Stay,
            Leave::Stopped(signal) => Next::Quit(self.terminate(signal).await),
        }
    }

    /// Leaves the session, saving it per `save_session` if it changed: `true` saves (the
    /// temporary session under an autoname), `false` discards, unset asks — and for the
    /// temporary session also asks for a name. Esc (or Ctrl-C) at the question goes back
    /// to the prompt with the session open; Esc at the name asks the question again.
    pub(super) async fn close_session(&mut self) -> Leave {
        let Some(name) = self.conv.status().session.map(|s| s.name) else {
            return Leave::Left;
        };
        let temp = name == crate::session::TEMP_SESSION;
        let mut rename = None;
        let save = match self.conv.status().on_leave {
            OnLeave::Save => true,
            OnLeave::Discard | OnLeave::Unchanged => false,
            OnLeave::Ask => match self.ask_to_save(&name, temp).await {
                Ok(Some(name)) => {
                    rename = name;
                    true
                }
                Ok(None) => false,
                Err(leave) => return leave,
            },
        };
        if save && self.save_session(rename.as_deref()).await.is_none() {
            // Not saved: the session stays open, nothing is lost.
            return Leave::Stayed;
        }
        self.apply(Command::CloseSession {
            save: false,
            rename: None,
        })
        .await;
        Leave::Left
    }

    /// "Save session?": `Ok(Some(rename))` to save (with the name given for the
    /// temporary session), `Ok(None)` to discard, `Err` to stay (Esc) or stop (a
    /// signal). When the terminal cannot ask, the answer is save.
    async fn ask_to_save(
        &mut self,
        name: &str,
        temp: bool,
    ) -> Result<Option<Option<String>>, Leave> {
        use crate::term::yes_no::{self, Reply};
        use inquire::InquireError::{OperationCanceled, OperationInterrupted};
        loop {
            let question = format!("Save session `{name}`?");
            let answer = self
                .ask_user(move || yes_no::ask(&question, true, "Esc to go back"))
                .await;
            match answer {
                Err(Interrupted::Signal(signal)) => return Err(Leave::Stopped(signal)),
                Ok(Ok(Reply::Back)) => {
                    self.note(&format!("still in session `{name}`"));
                    return Err(Leave::Stayed);
                }
                Ok(Ok(Reply::No)) => return Ok(None),
                Ok(Ok(Reply::Yes)) if !temp => return Ok(Some(None)),
                Ok(Ok(Reply::Yes)) => {}
                Ok(Err(e)) => {
                    // Nobody can answer: keep the conversation rather than drop it.
                    self.error(&format!("cannot ask whether to save the session: {e}"));
                    return Ok(Some(None));
                }
                Err(Interrupted::Lost) => return Ok(Some(None)),
            }
            match self.ask_user(ask_session_name).await {
                Ok(Ok(name)) => return Ok(Some(Some(name))),
                // Esc at the name: back to the question.
                Ok(Err(OperationCanceled | OperationInterrupted)) => {}
                Ok(Err(_)) | Err(Interrupted::Lost) => return Ok(Some(None)),
                Err(Interrupted::Signal(signal)) => return Err(Leave::Stopped(signal)),
            }
        }
    }
}

/// Asks what to call the temporary session being saved.
fn ask_session_name() -> Result<String, inquire::InquireError> {
    crate::term::text_input::ask("Session name:", "Esc to go back", |text| {
        if text.is_empty() || text == crate::session::TEMP_SESSION {
            Err("choose a name other than `temp`".into())
        } else {
            crate::session::id::SessionAlias::new(text)
                .map(|_| ())
                .map_err(|e| crate::term::text_input::Invalid(e.to_string()))
        }
    })
}
