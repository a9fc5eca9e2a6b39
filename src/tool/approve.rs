//! Who says yes to a tool call.
//!
//! The engine asks an [`Approver`] before running a call that writes, deletes, runs a
//! command, reaches the network or touches a path outside the working directory. Front
//! ends choose the approver: a terminal menu when a person is there, a refusal when not.

use futures_util::future::BoxFuture;

/// What the user is shown before deciding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The tool.
    pub tool: String,
    /// One line: the command, the URL, the path and what happens to it.
    pub summary: String,
    /// A longer preview (a diff for writes and patches), if any.
    pub preview: Option<String>,
    /// Whether "yes, and don't ask again" may be offered (not for a recursive delete).
    pub allow_always: bool,
    /// The conversation whose call it is (shown when several share one terminal).
    pub from: String,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Approve,
    /// Run it, and every later call of this tool in this conversation.
    ApproveAlways,
    /// Do not run it.
    Deny,
    /// Do not run it, and tell the model this.
    DenyWithMessage(String),
    /// Stop the whole turn (Ctrl-C at the question).
    Cancel,
    /// Not run because no one is there to ask; the reason is for the model.
    Refuse(String),
}

/// Decides on tool calls that need approval.
pub trait Approver: Send + Sync {
    /// Asks about one call.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision>;
}

/// Refuses everything that needs approval (no one is there to ask).
#[derive(Debug, Default, Clone, Copy)]
pub struct DenyAll;

impl Approver for DenyAll {
    fn approve<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async {
            Decision::Refuse(
                "this call needs approval and no one is at a terminal to give it \
                 (--yolo or auto_approve_tools allow it); do not retry it"
                    .into(),
            )
        })
    }
}

/// Approves everything (`--yolo`).
#[derive(Debug, Default, Clone, Copy)]
pub struct ApproveAll;

impl Approver for ApproveAll {
    fn approve<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async { Decision::Approve })
    }
}
