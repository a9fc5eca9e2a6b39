//! The control protocol: requests loki sends the SDK program (`can_use_tool`,
//! `hook_callback`) wait for the `control_response` with their id; approvals are asked
//! through hooks (`PreToolUse`), the permission mode and `can_use_tool`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::flags::claude_name;
use crate::term::json_lines::LineSender;
use crate::tool::approve::{ApprovalRequest, Approver, Decision};

/// A control request that got no answer, or that loki cannot answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum ControlError {
    /// The program closed its input first.
    #[error("the program closed its input")]
    Closed,
    /// The program answered with an error.
    #[error("{0}")]
    Refused(String),
    /// A permission mode loki does not have.
    #[error("unknown permission mode {0}")]
    UnknownMode(String),
    /// A request loki does not support.
    #[error("loki does not support the control request {0}")]
    Unsupported(String),
}

/// One hook matcher of `initialize`: the tools it matches (all when none) and the
/// callbacks to call.
type Matcher = (Option<String>, Vec<String>);

/// The program on the other side of stdin and stdout.
pub(super) struct Program {
    pub out: LineSender,
    next_id: AtomicU64,
    pending: Mutex<HashMap<String, oneshot::Sender<Result<Value, ControlError>>>>,
    /// The hooks registered by `initialize`: event → (matcher, callback ids).
    hooks: Mutex<HashMap<String, Vec<Matcher>>>,
    /// The calls the model made in this turn: id → (tool, arguments).
    pub calls: Mutex<HashMap<String, (String, Value)>>,
    pub session_id: String,
    pub cwd: String,
}

impl Program {
    pub(super) fn new(out: LineSender, session_id: String, cwd: String) -> Self {
        Self {
            out,
            next_id: AtomicU64::new(0),
            pending: Mutex::new(HashMap::new()),
            hooks: Mutex::new(HashMap::new()),
            calls: Mutex::new(HashMap::new()),
            session_id,
            cwd,
        }
    }

    /// Answers the program's control request `id`.
    pub(super) fn respond(&self, id: &Value, response: Result<Value, ControlError>) {
        let body = match response {
            Ok(response) => json!({"subtype": "success", "request_id": id, "response": response}),
            Err(error) => json!({"subtype": "error", "request_id": id, "error": error.to_string()}),
        };
        self.out
            .send(&json!({"type": "control_response", "response": body}));
    }

    /// Asks the program; the `response` of its answer.
    async fn request(&self, request: Value) -> Result<Value, ControlError> {
        let id = format!("loki_{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), tx);
        self.out
            .send(&json!({"type": "control_request", "request_id": id, "request": request}));
        rx.await.unwrap_or(Err(ControlError::Closed))
    }

    /// A `control_response` arrived.
    pub(super) fn resolve(&self, message: &Value) {
        let response = &message["response"];
        let Some(id) = response["request_id"].as_str() else {
            return;
        };
        let waiting = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        if let Some(waiting) = waiting {
            let outcome = if response["subtype"] == "error" {
                Err(ControlError::Refused(
                    response["error"]
                        .as_str()
                        .unwrap_or("the program answered with an error")
                        .to_string(),
                ))
            } else {
                Ok(response.get("response").cloned().unwrap_or(Value::Null))
            };
            let _ = waiting.send(outcome);
        }
    }

    /// The program's input ended: what waits for it fails.
    pub(super) fn close(&self) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Takes the hooks of an `initialize` request.
    pub(super) fn register_hooks(&self, hooks: &Value) {
        let mut registered = self.hooks.lock().unwrap_or_else(PoisonError::into_inner);
        registered.clear();
        for (event, matchers) in hooks.as_object().into_iter().flatten() {
            let list = matchers
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    let ids = m["hookCallbackIds"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|id| id.as_str().map(str::to_string))
                        .collect();
                    (m["matcher"].as_str().map(str::to_string), ids)
                })
                .collect();
            registered.insert(event.clone(), list);
        }
    }

    /// Runs the hooks of `event` that match `tool` (every one when there is no tool or
    /// no matcher) with `input`; their outputs, in order.
    pub(super) async fn run_hooks(
        &self,
        event: &str,
        tool: Option<&str>,
        tool_use_id: Option<&str>,
        mut input: Value,
    ) -> Vec<Value> {
        let callbacks: Vec<String> = {
            let hooks = self.hooks.lock().unwrap_or_else(PoisonError::into_inner);
            hooks
                .get(event)
                .into_iter()
                .flatten()
                .filter(|(matcher, _)| matches(matcher.as_deref(), tool))
                .flat_map(|(_, ids)| ids.iter().cloned())
                .collect()
        };
        input["hook_event_name"] = json!(event);
        input["session_id"] = json!(self.session_id);
        input["transcript_path"] = json!("");
        input["cwd"] = json!(self.cwd);
        let mut outputs = Vec::new();
        for callback in callbacks {
            let request = json!({
                "subtype": "hook_callback",
                "callback_id": callback,
                "input": input,
                "tool_use_id": tool_use_id,
            });
            match self.request(request).await {
                Ok(output) => outputs.push(output),
                Err(e) => tracing::warn!("claude sdk: hook {callback} failed: {e}"),
            }
        }
        outputs
    }
}

/// Whether a hook matcher (`Bash`, `Write|Edit`, `*`, a regex-like alternation of names)
/// covers `tool` (a loki tool, matched by its Claude name too).
fn matches(matcher: Option<&str>, tool: Option<&str>) -> bool {
    let (Some(matcher), Some(tool)) = (matcher.filter(|m| !m.is_empty() && *m != "*"), tool) else {
        return true;
    };
    matcher
        .split('|')
        .map(str::trim)
        .any(|name| name == tool || name == claude_name(tool))
}

/// A hook's verdict on a tool call, if it gave one.
fn hook_decision(outputs: &[Value]) -> Option<Decision> {
    for output in outputs {
        let specific = &output["hookSpecificOutput"];
        let reason = specific["permissionDecisionReason"]
            .as_str()
            .or(output["reason"].as_str())
            .unwrap_or("a hook refused this call")
            .to_string();
        match (
            specific["permissionDecision"].as_str(),
            output["decision"].as_str(),
        ) {
            (Some("deny"), _) | (_, Some("block")) => {
                return Some(Decision::DenyWithMessage(reason));
            }
            (Some("allow"), _) | (_, Some("approve")) => return Some(Decision::Approve),
            _ => {}
        }
        if output["continue"] == json!(false) {
            return Some(Decision::Cancel);
        }
    }
    None
}

/// How approvals are decided in this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Ask the program (`can_use_tool`), or refuse when it did not offer to answer.
    Default,
    /// File edits run; commands still ask.
    AcceptEdits,
    /// Only tools that read run.
    Plan,
    /// Everything runs.
    Bypass,
}

impl Mode {
    pub(super) fn parse(name: &str) -> Option<Self> {
        match name {
            "default" => Some(Self::Default),
            "acceptEdits" => Some(Self::AcceptEdits),
            "plan" => Some(Self::Plan),
            "bypassPermissions" => Some(Self::Bypass),
            _ => None,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::Bypass => "bypassPermissions",
        }
    }
}

/// The approver of an SDK run: `PreToolUse` hooks first, then the permission mode,
/// then the program's `can_use_tool` (when it offered it).
pub(super) struct SdkApprover {
    pub program: Arc<Program>,
    pub mode: Arc<Mutex<Mode>>,
    pub asks_program: bool,
}

impl Approver for SdkApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let (tool, args) = self
                .program
                .calls
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&request.call_id)
                .cloned()
                .unwrap_or_else(|| (request.tool.clone(), Value::Null));
            let input = json!({"tool_name": claude_name(&tool), "tool_input": args});
            let outputs = self
                .program
                .run_hooks("PreToolUse", Some(&tool), Some(&request.call_id), input)
                .await;
            if let Some(decision) = hook_decision(&outputs) {
                return decision;
            }
            let mode = *self.mode.lock().unwrap_or_else(PoisonError::into_inner);
            match mode {
                Mode::Bypass => return Decision::Approve,
                Mode::Plan => {
                    return Decision::DenyWithMessage(
                        "plan mode: only tools that read run; investigate and propose a plan"
                            .into(),
                    );
                }
                Mode::AcceptEdits
                    if matches!(
                        tool.as_str(),
                        "fs_write" | "fs_patch" | "fs_mkdir" | "fs_edit"
                    ) =>
                {
                    return Decision::Approve;
                }
                _ => {}
            }
            if !self.asks_program {
                return Decision::Refuse(
                    "this call needs approval and the program gave no can_use_tool callback; do not retry it"
                        .into(),
                );
            }
            let ask = json!({
                "subtype": "can_use_tool",
                "tool_name": claude_name(&tool),
                "input": args,
                "tool_use_id": request.call_id,
                "permission_suggestions": null,
                "description": request.text(),
            });
            match self.program.request(ask).await {
                Ok(answer) if answer["behavior"] == "allow" => {
                    if answer.get("updatedInput").is_some_and(|u| *u != args) {
                        tracing::info!(
                            "claude sdk: can_use_tool changed the input; loki runs the call as the model made it"
                        );
                    }
                    Decision::Approve
                }
                Ok(answer) if answer["interrupt"] == json!(true) => Decision::Cancel,
                Ok(answer) => Decision::DenyWithMessage(
                    answer["message"]
                        .as_str()
                        .unwrap_or("denied by the program")
                        .to_string(),
                ),
                Err(e) => {
                    Decision::Refuse(format!("the program did not answer ({e}); do not retry it"))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_name_tools_by_either_name() {
        assert!(matches(Some("Bash"), Some("execute_command")));
        assert!(matches(Some("Write|Edit"), Some("fs_write")));
        assert!(!matches(Some("Write|Edit"), Some("execute_command")));
        assert!(matches(None, Some("x")) && matches(Some("*"), Some("x")));
    }

    #[test]
    fn hooks_decide_by_either_field() {
        let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no rm"}});
        assert_eq!(
            hook_decision(&[deny]),
            Some(Decision::DenyWithMessage("no rm".into()))
        );
        assert_eq!(
            hook_decision(&[json!({"decision": "block", "reason": "r"})]),
            Some(Decision::DenyWithMessage("r".into()))
        );
        assert_eq!(hook_decision(&[json!({})]), None);
        assert_eq!(
            hook_decision(&[json!({"continue": false})]),
            Some(Decision::Cancel)
        );
    }
}
