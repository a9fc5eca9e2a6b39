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

use crate::engine::command::{Applied, Command};
use crate::engine::{RunOptions, RunOutcome, ToolOutcome, UserInput};
use crate::state::AppState;
use crate::tool::approve::{Approver, Decision};
use crate::tool::escalate::Escalations;

/// Everything a driver can ask of a conversation.
#[derive(Debug)]
pub enum Op {
    /// A prompt; with `role`, one message with that role (`.role NAME text`), the
    /// conversation's own role and model restored afterwards.
    Prompt {
        /// What the user sent.
        input: UserInput,
        /// Streaming and tool-call options.
        options: RunOptions,
        /// A role for this prompt only.
        role: Option<String>,
    },
    /// A change that is not a prompt: a dot-command or a flag, normalised.
    Command(Command),
    /// The decision for a tool call waiting for approval, by call id.
    Approve {
        /// The call's id, as the approval event gave it.
        call: String,
        /// What the user decided.
        decision: Decision,
    },
    /// The reply to a question (an agent's, an MCP server's form), by id.
    Answer {
        /// The question's id, as the `question_asked` event gave it.
        question: String,
        /// The reply.
        reply: String,
    },
    /// Stop the running turn and its sub-agents; the conversation goes on.
    Interrupt,
    /// Continue over a reloaded configuration (`.edit config`): what the conversation
    /// chose stays, its model follows the new configuration where it was the default.
    Reconfigure(Arc<AppState>),
    /// One tool call as the model would have it run (`loki --run-tool`).
    RunTool {
        /// The tool.
        name: String,
        /// Its arguments, as JSON.
        arguments: String,
    },
}

impl Op {
    /// A plain prompt with the default options.
    pub fn prompt(input: UserInput) -> Self {
        Self::Prompt {
            input,
            options: RunOptions::default(),
            role: None,
        }
    }
}

/// What a submitted op did (events carry the rest): one variant per op kind, matched by
/// a driver that submits ops it does not know in advance (a queue of `stream-json`
/// lines); a driver that knows its op calls the op's typed entry point on the
/// conversation instead.
#[derive(Debug)]
pub enum Reply {
    /// A prompt ran.
    Ran(RunOutcome),
    /// A command was applied.
    Applied(Applied),
    /// A tool ran.
    Tool(ToolOutcome),
    /// Done; nothing more to say.
    Done,
}

/// An op a [`Remote`] could not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpError {
    /// Nothing waits under that id.
    #[error("{0}")]
    NotWaiting(String),
    /// Only the conversation itself takes this op, between turns.
    #[error("only the conversation takes this between turns")]
    NotRemote,
}

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
