//! What a driver asks of a conversation ([`Op`]) and what it gets back ([`Reply`]), with
//! the payloads both carry: the user's input and per-run switches, a run's outcome, one
//! tool call's outcome and an approval's [`Decision`]. Commands — changes that are not a
//! prompt — are [`crate::command`]'s.

use crate::command::{Applied, Command};
use crate::event::Speed;
use loki_wire::message::{Message, ToolCall, Usage};

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

/// An op the conversation's remote handle could not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpError {
    /// Nothing waits under that id.
    #[error("{0}")]
    NotWaiting(String),
    /// Only the conversation itself takes this op, between turns.
    #[error("only the conversation takes this between turns")]
    NotRemote,
}

/// What the user typed for this turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserInput {
    /// Prompt text (stdin already merged in by the front end).
    pub text: String,
    /// `-f` arguments: paths, directories, globs, URLs.
    pub files: Vec<String>,
    /// Images sent with the text (`data:` or `https:` URLs), e.g. from
    /// `--input-format stream-json` or the server.
    pub images: Vec<String>,
    /// Ready-made messages that come before this one (a client that sends the whole
    /// exchange, as OpenAI-style APIs do); they join the conversation's history first.
    pub prior: Vec<Message>,
    /// Continue or regenerate the last answer instead of sending `text`.
    pub continuation: Option<Continuation>,
}

/// Re-using the last exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Continuation {
    /// Carry on writing the last answer.
    Continue,
    /// Ask for the last answer again, replacing it.
    Regenerate,
    /// Answer the history as it stands: it ends with the results of tool calls the caller
    /// ran itself (`prior` carries them), with no new user message.
    Resume,
}

/// Per-run switches.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Overrides the context's `stream` for this run.
    pub stream: Option<bool>,
    /// A call of a tool the conversation does not have stops the run with
    /// an unknown-tool error (nothing of that response runs). Otherwise the model is
    /// told and goes on.
    pub unknown_tool_fails: bool,
}

/// The result of a completed run.
#[derive(Debug, Clone, Default)]
pub struct RunOutcome {
    /// The final answer text.
    pub text: String,
    /// Usage over every model call of the run.
    pub usage: Usage,
    /// Model calls made.
    pub steps: usize,
    /// The provider's finish reason of the last response.
    pub finish_reason: Option<String>,
    /// Calls of the caller's own tools (`RequestContext::client_tools`) the model asked
    /// for: the turn stopped for the caller to run them.
    pub client_calls: Vec<ToolCall>,
    /// How fast the model answered (time to first token, output tokens per second).
    pub speed: Option<Speed>,
}

/// The outcome of one call: what the model would receive, and whether it succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    /// The result text (a `{"tool_call_error": …}` object when it failed).
    pub content: String,
    /// Whether the tool succeeded.
    pub ok: bool,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Approve,
    /// Run it, and every later call of this tool in this conversation.
    ApproveAlways,
    /// Run it with these arguments instead (a Claude Agent SDK program's
    /// `updatedInput`); they are checked against the tool's schema like the model's.
    ApproveEdited(serde_json::Value),
    /// Do not run it.
    Deny,
    /// Do not run it, and tell the model this.
    DenyWithMessage(String),
    /// Stop the whole turn (Ctrl-C at the question).
    Cancel,
    /// Not run because no one is there to ask; the reason is for the model.
    Refuse(String),
}

impl Decision {
    /// The decision's name in events: `allow`, `allow_always`, `deny`, `cancel` or
    /// `refused`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Approve | Self::ApproveEdited(_) => "allow",
            Self::ApproveAlways => "allow_always",
            Self::Deny | Self::DenyWithMessage(_) => "deny",
            Self::Cancel => "cancel",
            Self::Refuse(_) => "refused",
        }
    }

    /// The message that goes to the model with the decision, if any.
    pub fn message(&self) -> Option<&str> {
        match self {
            Self::DenyWithMessage(m) | Self::Refuse(m) => Some(m),
            _ => None,
        }
    }
}
