//! The control protocol: its envelope on the shared [`Peer`] (requests loki sends the
//! SDK program — `can_use_tool`, `hook_callback`, `mcp_message` — wait for the
//! `control_response` with their id), the program's hooks, and the approver that asks
//! the program what loki's rules and permission mode leave to ask.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use crate::claude_names::shapes;
use crate::hooks::{Before, HookCall, HookResult, Hooks, Prompted};
use crate::jsonrpc::peer::Peer;
use crate::jsonrpc::{Classified, Envelope, Fault, Incoming, RequestError};
use crate::tool::approve::{ApprovalRequest, Approver};
use loki_protocol::op::Decision;

/// A control request loki cannot answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum ControlError {
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

impl From<ControlError> for Fault {
    fn from(error: ControlError) -> Self {
        // The control protocol has no error codes.
        Self::new(0, error.to_string())
    }
}

/// The control protocol's envelope: `control_request` and `control_response` carry a
/// `request_id` and the request's `subtype`; every other message (`user`, …) is a
/// notification named by its `type`.
pub(super) struct Control;

impl Envelope for Control {
    fn id(&self, n: u64) -> Value {
        json!(format!("loki_{n}"))
    }

    fn request(&self, id: &Value, method: &str, mut params: Value) -> Value {
        params["subtype"] = json!(method);
        json!({"type": "control_request", "request_id": id, "request": params})
    }

    fn response(&self, id: &Value, outcome: Result<Value, Fault>) -> Value {
        let body = match outcome {
            Ok(response) => json!({"subtype": "success", "request_id": id, "response": response}),
            Err(fault) => json!({"subtype": "error", "request_id": id, "error": fault.message}),
        };
        json!({"type": "control_response", "response": body})
    }

    fn classify(&self, mut message: Value) -> Classified {
        let kind = message["type"].as_str().unwrap_or_default().to_string();
        match kind.as_str() {
            "control_response" => {
                let response = message["response"].take();
                let outcome = if response["subtype"] == "error" {
                    Err(RequestError::refused(
                        response["error"]
                            .as_str()
                            .unwrap_or("the program answered with an error"),
                    ))
                } else {
                    Ok(response.get("response").cloned().unwrap_or(Value::Null))
                };
                Classified::Response {
                    id: response["request_id"].clone(),
                    outcome,
                }
            }
            "control_request" => {
                let params = message["request"].take();
                Classified::Incoming(Incoming::Request {
                    id: message["request_id"].take(),
                    method: params["subtype"].as_str().unwrap_or_default().to_string(),
                    params,
                })
            }
            _ => Classified::Incoming(Incoming::Notification {
                method: kind,
                params: message,
            }),
        }
    }
}

/// One hook matcher of `initialize`: the tools it matches (all when none) and the
/// callbacks to call.
type Matcher = (Option<String>, Vec<String>);

/// The program on the other side of stdin and stdout.
pub(super) struct Program {
    pub peer: Peer<Control>,
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
        peer: Peer<Control>,
        session_id: String,
        cwd: String,
        mcp_servers: Vec<String>,
    ) -> Self {
        Self {
            peer,
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

    /// Sends one stream-json message (`system`, `assistant`, `result`, …).
    pub(super) fn send(&self, message: &Value) {
        let _ = self.peer.send(message);
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
                "callback_id": callback,
                "input": input,
                "tool_use_id": tool_use_id,
            });
            match self.peer.request("hook_callback", request).await {
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

/// The program's hook callbacks, run by the conversation: `PreToolUse` and `PostToolUse`
/// around every tool call, `UserPromptSubmit` before each prompt, `Stop` when a turn
/// ends (a `decision: block` sends it on with the reason).
pub(super) struct SdkHooks {
    pub program: Arc<Program>,
}

impl Hooks for SdkHooks {
    fn before<'a>(&'a self, call: HookCall<'a>) -> BoxFuture<'a, Before> {
        Box::pin(async move {
            let name = self.program.claude_name(call.tool);
            let input = crate::hooks::shape::pre_tool_use_input(&name, call);
            let outputs = self
                .program
                .run_hooks_named("PreToolUse", Some(call.tool), Some(call.id), input)
                .await;
            let before =
                crate::hooks::shape::in_loki_shape(call.tool, crate::hooks::decision_of(&outputs));
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

    fn after<'a>(&'a self, ran: HookResult<'a>) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let HookCall { id, tool, .. } = ran.call;
            let name = self.program.claude_name(tool);
            let input = crate::hooks::post_tool_use_input(&name, ran);
            let outputs = self
                .program
                .run_hooks("PostToolUse", Some(tool), Some(id), input)
                .await;
            crate::hooks::note_of(&outputs)
        })
    }

    fn prompt<'a>(&'a self, prompt: &'a str) -> BoxFuture<'a, Prompted> {
        Box::pin(async move {
            let input = json!({"prompt": prompt});
            let outputs = self
                .program
                .run_hooks("UserPromptSubmit", None, None, input)
                .await;
            Prompted {
                blocked: crate::hooks::prompt_blocked_of(&outputs),
                context: crate::hooks::context_of(&outputs),
            }
        })
    }

    fn stop(&self, again: bool) -> BoxFuture<'_, Option<String>> {
        Box::pin(async move {
            let input = json!({"stop_hook_active": again});
            let outputs = self.program.run_hooks("Stop", None, None, input).await;
            crate::hooks::stop_reason_of(&outputs)
        })
    }
}

/// The approver of an SDK run, asked for what loki's rules, the permission mode (the
/// conversation's own) and the `PreToolUse` hooks (see [`SdkHooks`]) leave: the
/// program's `can_use_tool`, when it offered it.
pub(super) struct SdkApprover {
    pub program: Arc<Program>,
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
            if !self.asks_program {
                return Decision::Refuse(
                    "this call needs approval and the program gave no can_use_tool callback; do not retry it"
                        .into(),
                );
            }
            let input = shapes::to_claude(&tool, &args);
            let ask = json!({
                "tool_name": self.program.claude_name(&tool),
                "input": input,
                "tool_use_id": request.call_id,
                "permission_suggestions": null,
                "description": request.text(),
            });
            match self.program.peer.request("can_use_tool", ask).await {
                Ok(answer) if answer["behavior"] == "allow" => match answer.get("updatedInput") {
                    // The program edits Claude's input; the tool runs with loki's.
                    Some(edited) if edited.is_object() && *edited != input => {
                        match shapes::to_loki(&tool, edited) {
                            Ok(args) => Decision::ApproveEdited(args),
                            Err(why) => Decision::Refuse(format!("can_use_tool: {why}")),
                        }
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
        let claude = |t: &str| Some(crate::claude_names::claude_name(t).to_string());
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
