//! The control protocol: requests loki sends the SDK program (`can_use_tool`,
//! `hook_callback`) wait for the `control_response` with their id; approvals are asked
//! through hooks (`PreToolUse`), the permission mode and `can_use_tool`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::hooks::{Before, HookCall, Hooks};
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
    /// `set_model` named a model loki cannot use (the model stays as it was).
    #[error("{0}; the model was not changed")]
    UnknownModel(String),
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
    /// The MCP servers of `--mcp-config`, whose tools Claude names `mcp__<server>__<tool>`.
    pub mcp_servers: Vec<String>,
}

impl Program {
    pub(super) fn new(
        out: LineSender,
        session_id: String,
        cwd: String,
        mcp_servers: Vec<String>,
    ) -> Self {
        Self {
            out,
            next_id: AtomicU64::new(0),
            pending: Mutex::new(HashMap::new()),
            hooks: Mutex::new(HashMap::new()),
            calls: Mutex::new(HashMap::new()),
            session_id,
            cwd,
            mcp_servers,
        }
    }

    /// The name the program knows loki tool `tool` by.
    pub(super) fn claude_name(&self, tool: &str) -> String {
        super::servers::claude_name(&self.mcp_servers, tool)
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
    pub(super) async fn ask(&self, request: Value) -> Result<Value, ControlError> {
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

    /// An answer to request `id` came but could not be read (over `max_input_size`):
    /// what waits on it fails with `why`.
    pub(super) fn fail_pending(&self, id: &str, why: &str) {
        let waiting = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        if let Some(waiting) = waiting {
            let _ = waiting.send(Err(ControlError::Refused(why.to_string())));
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
        input: Value,
    ) -> Vec<Value> {
        self.run_hooks_named(event, tool, tool_use_id, input)
            .await
            .into_iter()
            .map(|(_, output)| output)
            .collect()
    }

    /// [`Program::run_hooks`], each output with its callback as messages name it
    /// (`the program's PreToolUse hook `hook_0``).
    pub(super) async fn run_hooks_named(
        &self,
        event: &str,
        tool: Option<&str>,
        tool_use_id: Option<&str>,
        mut input: Value,
    ) -> Vec<(String, Value)> {
        let callbacks: Vec<String> = {
            let hooks = self.hooks.lock().unwrap_or_else(PoisonError::into_inner);
            hooks
                .get(event)
                .into_iter()
                .flatten()
                .filter(|(matcher, _)| {
                    matches(matcher.as_deref(), tool, tool.map(|t| self.claude_name(t)))
                })
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
            match self.ask(request).await {
                Ok(output) => {
                    outputs.push((format!("the program's {event} hook `{callback}`"), output));
                }
                Err(e) => tracing::warn!("claude sdk: hook {callback} failed: {e}"),
            }
        }
        outputs
    }
}

/// Whether a hook matcher (`Bash`, `Write|Edit`, `*`, a regex-like alternation of names)
/// covers `tool` (a loki tool, matched by its Claude name too).
fn matches(matcher: Option<&str>, tool: Option<&str>, claude: Option<String>) -> bool {
    let (Some(matcher), Some(tool)) = (matcher.filter(|m| !m.is_empty() && *m != "*"), tool) else {
        return true;
    };
    matcher
        .split('|')
        .map(str::trim)
        .any(|name| name == tool || Some(name) == claude.as_deref())
}

/// The program's `PreToolUse` and `PostToolUse` callbacks, around every tool call.
pub(super) struct SdkHooks {
    pub program: Arc<Program>,
}

impl Hooks for SdkHooks {
    fn before<'a>(&'a self, call: HookCall<'a>) -> BoxFuture<'a, Before> {
        Box::pin(async move {
            let input =
                json!({"tool_name": self.program.claude_name(call.tool), "tool_input": call.args});
            let outputs = self
                .program
                .run_hooks_named("PreToolUse", Some(call.tool), Some(call.id), input)
                .await;
            let before = crate::hooks::decision_of(&outputs);
            if let Some(args) = &before.args {
                // An approval asked next shows the arguments that will run.
                self.program
                    .calls
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(call.id.to_string(), (call.tool.to_string(), args.clone()));
            }
            before
        })
    }

    fn after<'a>(
        &'a self,
        call: HookCall<'a>,
        result: &'a str,
        ok: bool,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let input = json!({
                "tool_name": self.program.claude_name(call.tool),
                "tool_input": call.args,
                "tool_response": result,
                "is_error": !ok,
            });
            let outputs = self
                .program
                .run_hooks("PostToolUse", Some(call.tool), Some(call.id), input)
                .await;
            crate::hooks::note_of(&outputs)
        })
    }
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

    /// The same mode as loki's `permission_mode` names it.
    pub(super) fn loki_name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "accept-edits",
            Self::Plan => "plan",
            Self::Bypass => "yolo",
        }
    }
}

/// The approver of an SDK run (after the `PreToolUse` hooks, see [`SdkHooks`]): the
/// permission mode, then the program's `can_use_tool` (when it offered it).
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
                "tool_name": self.program.claude_name(&tool),
                "input": args,
                "tool_use_id": request.call_id,
                "permission_suggestions": null,
                "description": request.text(),
            });
            match self.program.ask(ask).await {
                Ok(answer) if answer["behavior"] == "allow" => match answer.get("updatedInput") {
                    Some(edited) if edited.is_object() && *edited != args => {
                        Decision::ApproveEdited(edited.clone())
                    }
                    _ => Decision::Approve,
                },
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
        let claude = |t: &str| Some(crate::claude_sdk::flags::claude_name(t).to_string());
        assert!(matches(
            Some("Bash"),
            Some("execute_command"),
            claude("execute_command")
        ));
        assert!(matches(
            Some("Write|Edit"),
            Some("fs_write"),
            claude("fs_write")
        ));
        assert!(!matches(
            Some("Write|Edit"),
            Some("execute_command"),
            claude("execute_command")
        ));
        assert!(matches(None, Some("x"), None) && matches(Some("*"), Some("x"), None));
    }
}
