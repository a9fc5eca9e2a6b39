//! How a conversation's work ended, mapped to the process's exit status in one place.

use crate::engine::CoreError;
use crate::signals::StopSignal;

/// How a front end's work on a conversation ended.
#[derive(Debug)]
pub struct Ending<'a> {
    /// The runs' result (the first failure decides).
    pub result: &'a Result<(), CoreError>,
    /// Whether the closing save (or another step after the runs) failed.
    pub finish_failed: bool,
    /// The stop signal received, if any.
    pub stopped: Option<StopSignal>,
    /// stdout was closed by its reader (`| head`): not a failure.
    pub broken_pipe: bool,
    /// A line of input could not be used (`--input-format stream-json`).
    pub bad_input: bool,
}

/// The exit status: 0 when everything ran; the signal's status (130 SIGINT, 143 SIGTERM,
/// 129 SIGHUP) when stopped; 1 for a failure, including a failed save after a successful
/// run; 0 when the reader of stdout went away.
pub fn exit_status(ending: &Ending<'_>) -> u8 {
    let stop_code = |fallback: u8| ending.stopped.map_or(fallback, StopSignal::exit_code);
    match ending.result {
        Err(_) if ending.broken_pipe => {
            if ending.finish_failed {
                1
            } else {
                0
            }
        }
        Err(CoreError::Cancelled) => stop_code(130),
        Err(e) => e.exit_code(),
        Ok(()) if ending.finish_failed => 1,
        Ok(()) if ending.stopped.is_some() => stop_code(0),
        Ok(()) if ending.bad_input => 1,
        Ok(()) => 0,
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
            result: &result,
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
