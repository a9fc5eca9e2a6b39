//! How a conversation's work ended, mapped to the process's exit status in one place.

use crate::engine::CoreError;
use crate::engine::command::Applied;
use crate::signals::StopSignal;

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
