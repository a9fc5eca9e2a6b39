//! How a conversation's work ended, mapped to the process's exit status in one place.

use crate::error::CoreError;
use crate::signals::StopSignal;
use loki_protocol::command::Applied;

/// How a run failed, as far as the exit status cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Stopped (Ctrl-C, a signal, a budget, a disconnected client).
    Stopped,
    /// Failed, with this exit status.
    Failed(u8),
}

impl Failure {
    /// How `error` ends a run.
    pub fn of(error: &CoreError) -> Self {
        match error {
            CoreError::Cancelled => Self::Stopped,
            other => Self::Failed(other.exit_code()),
        }
    }
}

/// How a conversation ended, from [`super::Conversation::close`]: the first of its runs
/// that failed, what closing it saved, and the session it had.
#[derive(Debug)]
pub struct Closed {
    /// The first run that failed.
    pub failure: Option<Failure>,
    /// What the closing save wrote (its warnings must be seen), or why it failed.
    pub saved: Result<Applied, CoreError>,
    /// The session it had at the end: id and name.
    pub session: Option<(String, String)>,
}

impl Closed {
    /// The save's outcome as a result (for drivers that report it as their own).
    pub fn into_saved(self) -> Result<Applied, CoreError> {
        self.saved
    }

    /// The process's exit status, given what only the driver knows.
    pub fn exit_status(&self, outside: Outside) -> u8 {
        exit_status(&Ending {
            failure: self.failure,
            finish_failed: self.saved.is_err(),
            stopped: outside.stopped,
            broken_pipe: outside.broken_pipe,
            bad_input: outside.bad_input,
        })
    }
}

/// A driver's work and the close after it, merged in one place: what `--run-tool`, a
/// one-shot prompt, `-e` or a server's run reports. The work's error comes first, then
/// the closing save's; [`Finished::exit_status`] and [`Finished::http_status`] are the
/// mappings every driver uses.
#[derive(Debug)]
pub struct Finished<T> {
    /// What the work gave (a run's outcome, a command's effect, a tool's result).
    pub ran: Result<T, CoreError>,
    /// How the conversation closed.
    pub closed: Closed,
}

impl<T> Finished<T> {
    /// The error that decides how it ended: the work's, else the closing save's.
    pub fn error(&self) -> Option<&CoreError> {
        self.ran.as_ref().err().or(self.closed.saved.as_ref().err())
    }

    /// The work's value unless it or the closing save failed (the work's error first).
    pub fn into_result(self) -> Result<T, CoreError> {
        match (self.ran, self.closed.saved) {
            (Ok(value), Ok(_)) => Ok(value),
            (Err(e), _) | (Ok(_), Err(e)) => Err(e),
        }
    }

    /// The process's exit status (see [`Closed::exit_status`]); a failed op that is not
    /// a prompt (a tool call, a command) counts as the run's failure.
    pub fn exit_status(&self, outside: Outside) -> u8 {
        let failure = self
            .closed
            .failure
            .or_else(|| self.ran.as_ref().err().map(Failure::of));
        exit_status(&Ending {
            failure,
            finish_failed: self.closed.saved.is_err(),
            stopped: outside.stopped,
            broken_pipe: outside.broken_pipe,
            bad_input: outside.bad_input,
        })
    }

    /// The HTTP status a server answers with: 200, else the deciding error's class.
    pub fn http_status(&self) -> u16 {
        self.error().map_or(200, |e| e.class().http_status())
    }
}

/// What only the driver knows about how its work ended.
#[derive(Debug, Default, Clone, Copy)]
pub struct Outside {
    /// The stop signal received, if any.
    pub stopped: Option<StopSignal>,
    /// stdout was closed by its reader (`| head`): not a failure.
    pub broken_pipe: bool,
    /// A line of input could not be used (`--input-format stream-json`).
    pub bad_input: bool,
}

/// Everything the exit status depends on.
#[derive(Debug)]
struct Ending {
    failure: Option<Failure>,
    finish_failed: bool,
    stopped: Option<StopSignal>,
    broken_pipe: bool,
    bad_input: bool,
}

/// The exit status: 0 when everything ran; the signal's status (130 SIGINT, 143 SIGTERM,
/// 129 SIGHUP) when stopped; 1 for a failure, including a failed save after a successful
/// run; 0 when the reader of stdout went away.
fn exit_status(ending: &Ending) -> u8 {
    let stop_code = |fallback: u8| ending.stopped.map_or(fallback, StopSignal::exit_code);
    match ending.failure {
        Some(_) if ending.broken_pipe => u8::from(ending.finish_failed),
        Some(Failure::Stopped) => stop_code(130),
        Some(Failure::Failed(code)) => code,
        None if ending.finish_failed => 1,
        None if ending.stopped.is_some() => stop_code(0),
        None if ending.bad_input => 1,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closed(failure: Option<Failure>, saved: Result<(), CoreError>) -> Closed {
        Closed {
            failure,
            saved: saved.map(|()| Applied::default()),
            session: None,
        }
    }

    #[test]
    fn the_work_fails_before_the_save() {
        let saving = || Err(CoreError::NoSession);
        let both = Finished {
            ran: Err::<(), _>(CoreError::InvalidRequest("bad".into())),
            closed: closed(None, saving()),
        };
        assert_eq!(both.http_status(), 400);
        assert_eq!(both.exit_status(Outside::default()), 1);
        assert!(matches!(
            both.into_result(),
            Err(CoreError::InvalidRequest(_))
        ));
        let saved_badly = Finished {
            ran: Ok(7),
            closed: closed(None, saving()),
        };
        assert_eq!(saved_badly.http_status(), 409);
        assert_eq!(saved_badly.exit_status(Outside::default()), 1);
        assert!(matches!(
            saved_badly.into_result(),
            Err(CoreError::NoSession)
        ));
        let fine = Finished {
            ran: Ok(7),
            closed: closed(None, Ok(())),
        };
        assert_eq!(fine.http_status(), 200);
        assert_eq!(fine.exit_status(Outside::default()), 0);
        let stopped_tool = Finished {
            ran: Err::<(), _>(CoreError::Cancelled),
            closed: closed(None, Ok(())),
        };
        assert_eq!(stopped_tool.exit_status(Outside::default()), 130);
        assert_eq!(stopped_tool.http_status(), 499);
    }

    fn status(
        result: Result<(), CoreError>,
        finish_failed: bool,
        stopped: Option<StopSignal>,
        broken_pipe: bool,
        bad_input: bool,
    ) -> u8 {
        exit_status(&Ending {
            failure: result.as_ref().err().map(Failure::of),
            finish_failed,
            stopped,
            broken_pipe,
            bad_input,
        })
    }

    /// Expected status, result, finish failed, signal, broken pipe, bad input.
    type Row = (
        u8,
        Result<(), CoreError>,
        bool,
        Option<StopSignal>,
        bool,
        bool,
    );

    #[test]
    fn every_ending_has_its_status() {
        let failed = || Err(CoreError::InvalidRequest("x".into()));
        let rows: &[Row] = &[
            (0, Ok(()), false, None, false, false),
            (1, Ok(()), true, None, false, false),
            (1, Ok(()), false, None, false, true),
            (
                143,
                Ok(()),
                false,
                Some(StopSignal::Terminate),
                false,
                false,
            ),
            (1, failed(), false, None, false, false),
            (1, failed(), true, None, false, false),
            (0, failed(), false, None, true, false),
            (1, failed(), true, None, true, false),
            (130, Err(CoreError::Cancelled), false, None, false, false),
            (130, Err(CoreError::Cancelled), true, None, false, false),
            (
                129,
                Err(CoreError::Cancelled),
                false,
                Some(StopSignal::Hangup),
                false,
                false,
            ),
            (
                143,
                Err(CoreError::Cancelled),
                true,
                Some(StopSignal::Terminate),
                false,
                false,
            ),
            (0, Err(CoreError::Cancelled), false, None, true, false),
        ];
        for (want, result, finish, stop, broken, bad) in rows {
            let result = match result {
                Ok(()) => Ok(()),
                Err(CoreError::Cancelled) => Err(CoreError::Cancelled),
                Err(_) => failed(),
            };
            assert_eq!(
                status(result, *finish, *stop, *broken, *bad),
                *want,
                "finish_failed={finish} stop={stop:?} broken={broken} bad={bad}"
            );
        }
    }
}
