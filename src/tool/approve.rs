//! Who says yes to a tool call.
//!
//! The engine asks an [`Approver`] before running a call that writes, deletes, runs a
//! command, reaches the network or touches a path outside the working directory. Front
//! ends choose the approver: a terminal menu when a person is there, a refusal when not.

use futures_util::future::BoxFuture;
use loki_protocol::op::Decision;

/// What the user is shown before deciding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The provider's id of the call: an answer names it.
    pub call_id: String,
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
    /// Why it is asked about although the usual opt-outs (`--yolo`, `auto_approve_tools`)
    /// would not, or could not, let it run unasked — an ask rule, a path outside the
    /// working tree, plan mode — and what would change that. A refusal tells the model
    /// this instead of naming opt-outs that do not apply.
    pub why_asked: Option<String>,
}

impl ApprovalRequest {
    /// Exactly what is approved, as one line: `<tool> wants to <summary>`.
    pub fn text(&self) -> String {
        format!("{} wants to {}", self.tool, self.summary)
    }
}

/// Decides on tool calls that need approval.
pub trait Approver: Send + Sync {
    /// Asks about one call.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision>;

    /// Whether anyone may answer (false: every request is refused unasked), so work that
    /// only makes sense if someone reviews it can be skipped.
    fn can_ask(&self) -> bool {
        true
    }

    /// Gives the decision for the call `call_id` waiting now, for approvers that a
    /// program answers later (a stream-json line, an HTTP request, an ACP reply).
    fn answer_call(&self, call_id: &str, _decision: Decision) -> Result<(), NotWaiting> {
        Err(NotWaiting(call_id.to_string()))
    }

    /// The program answering approvals will send no more: waiting and later requests
    /// are refused.
    fn input_ended(&self) {}
}

/// Refuses everything that needs approval (no one is there to ask).
#[derive(Debug, Default, Clone, Copy)]
pub struct DenyAll;

impl Approver for DenyAll {
    fn can_ask(&self) -> bool {
        false
    }

    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let what_allows = request
                .why_asked
                .as_deref()
                .unwrap_or("--yolo or auto_approve_tools allow it");
            Decision::Refuse(format!(
                "this call needs approval and no one is at a terminal to give it \
                 ({what_allows}); do not retry it"
            ))
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

/// Answers approvals that a program sends later, one call at a time, by call id: the
/// engine announces each request as a `tool_call_approval_requested` event and waits
/// here until [`ChannelApprover::answer`] gives the decision for that call (a line of
/// `--input-format stream-json`, an HTTP request). Once [`ChannelApprover::close`] is
/// called (the program's input ended), waiting and later requests are refused.
#[derive(Debug, Default)]
pub struct ChannelApprover {
    pending: std::sync::Mutex<Pending>,
}

#[derive(Debug, Default)]
struct Pending {
    waiting: std::collections::HashMap<String, tokio::sync::oneshot::Sender<Decision>>,
    closed: bool,
}

/// An answer named a call that is not waiting for approval.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no tool call `{0}` is waiting for approval")]
pub struct NotWaiting(pub String);

const INPUT_CLOSED: &str = "this call needs approval and the program driving loki closed its input \
     without answering; do not retry it";

impl ChannelApprover {
    /// An approver with nothing waiting.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives the decision for `call_id`.
    pub fn answer(&self, call_id: &str, decision: Decision) -> Result<(), NotWaiting> {
        let sender = self
            .pending
            .lock()
            .ok()
            .and_then(|mut p| p.waiting.remove(call_id));
        match sender {
            Some(sender) => sender
                .send(decision)
                .map_err(|_| NotWaiting(call_id.to_string())),
            None => Err(NotWaiting(call_id.to_string())),
        }
    }

    /// The calls waiting for an answer.
    pub fn waiting(&self) -> Vec<String> {
        self.pending
            .lock()
            .map(|p| p.waiting.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// No more answers will come: refuses what waits and whatever asks later.
    pub fn close(&self) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.closed = true;
            for (_, sender) in pending.waiting.drain() {
                let _ = sender.send(Decision::Refuse(INPUT_CLOSED.into()));
            }
        }
    }
}

impl Approver for ChannelApprover {
    fn answer_call(&self, call_id: &str, decision: Decision) -> Result<(), NotWaiting> {
        self.answer(call_id, decision)
    }

    fn input_ended(&self) {
        self.close();
    }

    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let registered = match self.pending.lock() {
            Ok(mut pending) if !pending.closed => {
                pending.waiting.insert(request.call_id.clone(), tx);
                true
            }
            _ => false,
        };
        Box::pin(async move {
            if !registered {
                return Decision::Refuse(INPUT_CLOSED.into());
            }
            rx.await
                .unwrap_or_else(|_| Decision::Refuse(INPUT_CLOSED.into()))
        })
    }
}

/// A sub-conversation's approver: its requests go to the parent's approver, labelled
/// with who asks (`c1 › c4 (explorer)`), so one person or program answers for a whole
/// tree of conversations.
pub struct RoutedApprover {
    inner: std::sync::Arc<dyn Approver>,
    label: String,
}

impl RoutedApprover {
    /// Routes to `inner`, labelling requests with `label`.
    pub fn new(inner: std::sync::Arc<dyn Approver>, label: impl Into<String>) -> Self {
        Self {
            inner,
            label: label.into(),
        }
    }
}

impl Approver for RoutedApprover {
    fn can_ask(&self) -> bool {
        self.inner.can_ask()
    }

    fn answer_call(&self, call_id: &str, decision: Decision) -> Result<(), NotWaiting> {
        self.inner.answer_call(call_id, decision)
    }

    fn input_ended(&self) {
        self.inner.input_ended();
    }

    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let mut labelled = request.clone();
            labelled.from.clone_from(&self.label);
            self.inner.approve(&labelled).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(call_id: &str) -> ApprovalRequest {
        ApprovalRequest {
            call_id: call_id.into(),
            tool: "fs_write".into(),
            summary: "write a.txt".into(),
            preview: None,
            allow_always: true,
            from: "c1".into(),
            why_asked: None,
        }
    }

    #[tokio::test]
    async fn channel_answers_each_call_by_id_and_refuses_once_closed() {
        let approver = std::sync::Arc::new(ChannelApprover::new());
        let (a, b) = (request("a"), request("b"));
        let first = approver.approve(&a);
        let second = approver.approve(&b);
        let mut waiting = approver.waiting();
        waiting.sort();
        assert_eq!(waiting, ["a", "b"]);
        assert_eq!(
            approver.answer("zzz", Decision::Approve),
            Err(NotWaiting("zzz".into()))
        );
        approver.answer("b", Decision::Deny).unwrap();
        approver.answer("a", Decision::Approve).unwrap();
        assert_eq!(first.await, Decision::Approve);
        assert_eq!(second.await, Decision::Deny);
        let third = request("c");
        let pending = approver.approve(&third);
        approver.close();
        assert!(matches!(pending.await, Decision::Refuse(_)));
        assert!(matches!(
            approver.approve(&third).await,
            Decision::Refuse(_)
        ));
    }

    #[tokio::test]
    async fn routed_requests_carry_the_label() {
        struct Record(std::sync::Mutex<Vec<String>>);
        impl Approver for Record {
            fn approve<'a>(&'a self, r: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
                self.0.lock().unwrap().push(r.from.clone());
                Box::pin(async { Decision::Approve })
            }
        }
        let record = std::sync::Arc::new(Record(std::sync::Mutex::new(Vec::new())));
        let routed = RoutedApprover::new(record.clone(), "c1 › c2 (scout)");
        assert_eq!(routed.approve(&request("x")).await, Decision::Approve);
        assert_eq!(*record.0.lock().unwrap(), ["c1 › c2 (scout)"]);
    }
}
