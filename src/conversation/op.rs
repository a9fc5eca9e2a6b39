//! The whole surface between a driver and a conversation: what a driver asks is one
//! [`Op`], sent through [`super::Conversation::submit`] (or, while a turn runs, through a
//! [`Remote`]); what happens comes back as events on the driver's emitter, and the
//! submit's [`Reply`].
//!
//! Some ops must be answered while a turn runs (the turn holds the conversation):
//! approvals, answers to questions and interrupts. A [`Remote`] is a cheap, cloneable
//! handle that takes exactly those, from another task (a stdin reader, an HTTP
//! handler, an ACP or SDK control message).

use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

use crate::tool::approve::Approver;
use crate::tool::escalate::Escalations;
use loki_protocol::op::Op;
use loki_protocol::op::OpError;

/// The turn running now, which [`Op::Interrupt`] cancels.
#[derive(Debug, Default)]
pub(super) struct Interrupter {
    current: Mutex<Option<CancellationToken>>,
}

impl Interrupter {
    /// The turn that `token` stops is the current one.
    pub(super) fn started(&self, token: CancellationToken) {
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = Some(token);
    }

    /// No turn runs.
    pub(super) fn ended(&self) {
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Stops the current turn, if one runs; whether one did.
    pub(super) fn interrupt(&self) -> bool {
        let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        current.as_ref().inspect(|t| t.cancel()).is_some()
    }
}

/// Takes the ops that must be answered while a turn runs: approvals, answers and
/// interrupts. Cloneable and `Send`: a reader task holds one.
#[derive(Clone)]
pub struct Remote {
    pub(super) approver: Arc<dyn Approver>,
    pub(super) questions: Arc<Escalations>,
    pub(super) interrupter: Arc<Interrupter>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote").finish_non_exhaustive()
    }
}

impl Remote {
    /// Takes `op` now: an approval, an answer or an interrupt.
    pub fn submit(&self, op: Op) -> Result<(), OpError> {
        match op {
            Op::Approve { call, decision } => self
                .approver
                .answer_call(&call, decision)
                .map_err(|e| OpError::NotWaiting(e.to_string())),
            Op::Answer { question, reply } => self
                .questions
                .reply(&question, &reply)
                .map_err(|e| OpError::NotWaiting(e.to_string())),
            Op::Interrupt => {
                self.interrupter.interrupt();
                Ok(())
            }
            _ => Err(OpError::NotRemote),
        }
    }

    /// No more answers will come (the driver's input ended): what waits for an approval
    /// or an answer is refused, and so is whatever asks later.
    pub fn input_ended(&self) {
        self.approver.input_ended();
        self.questions.close();
    }
}
