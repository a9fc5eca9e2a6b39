//! Hooks: the user's code run at points of a conversation, in the shape of Claude Code's
//! hooks so settings can be copied across. Before every tool call (not only the ones that
//! need approval) a hook may let it run unasked, refuse it, insist that the user is
//! asked, or change its arguments; after it, add a note for the model. A prompt may be
//! blocked or given more context, a session's start may add context, a turn that is
//! about to stop may be sent on (a sub-agent's too), an approval about to be asked may be
//! answered, and compaction, notifications and the conversation's end are announced.
//!
//! One trait, [`Hooks`], given to a conversation and inherited by its children: the
//! `hooks:` of config.yaml (and of a trusted project) run commands ([`command`]); a
//! Claude Agent SDK program's run its callbacks. [`Chain`] runs several in order.

pub mod command;
pub mod shape;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

/// The call a hook looks at.
#[derive(Debug, Clone, Copy)]
pub struct HookCall<'a> {
    /// The provider's call id.
    pub id: &'a str,
    /// The loki tool's name (`execute_command`, `fs_write`, `<server>_<tool>`…).
    pub tool: &'a str,
    /// Its arguments.
    pub args: &'a Value,
}

/// A call that ran, as a `PostToolUse` hook looks at it.
#[derive(Debug, Clone, Copy)]
pub struct HookResult<'a> {
    pub call: HookCall<'a>,
    /// What the tool returned, as the model will read it.
    pub output: &'a str,
    /// Whether the call succeeded.
    pub ok: bool,
}

/// What the `PreToolUse` hooks decided about a call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Before {
    /// The decision, if any hook made one.
    pub decision: Option<Verdict>,
    /// Arguments to run the call with instead of the model's.
    pub args: Option<Value>,
}

/// A hook's decision on a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it without asking (`deny_tools` and permission rules that deny still win).
    Allow,
    /// Do not run it; the message, naming the hook that refused and why, is for the model.
    Deny(String),
    /// Ask the user even if the call would run unasked.
    Ask,
}

/// What the `UserPromptSubmit` hooks said about a prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prompted {
    /// The prompt is not sent; the reason is for the user.
    pub blocked: Option<String>,
    /// Text to send with the prompt.
    pub context: Vec<String>,
}

/// Hooks around a conversation. Every method but the tool ones has a default that does
/// nothing.
pub trait Hooks: Send + Sync {
    /// `PreToolUse`: before `call` is approved and run.
    fn before<'a>(&'a self, call: HookCall<'a>) -> BoxFuture<'a, Before>;

    /// `PostToolUse`: after a call ran; a note for the model, if a hook has one (a reason
    /// it objects to the result, or more context).
    fn after<'a>(&'a self, ran: HookResult<'a>) -> BoxFuture<'a, Option<String>>;

    /// `UserPromptSubmit`: before `prompt` is sent.
    fn prompt<'a>(&'a self, _prompt: &'a str) -> BoxFuture<'a, Prompted> {
        Box::pin(async { Prompted::default() })
    }

    /// `SessionStart` (`source`: `startup` or `resume`): context for the first prompt.
    fn session_start<'a>(&'a self, _source: &'a str) -> BoxFuture<'a, Vec<String>> {
        Box::pin(async { Vec::new() })
    }

    /// `Stop`: the turn is about to end (`again`: a `Stop` hook already sent it on once).
    /// A reason to go on instead, used as the next prompt.
    fn stop(&self, _again: bool) -> BoxFuture<'_, Option<String>> {
        Box::pin(async { None })
    }

    /// `PreCompact` (`trigger`: `auto` or `manual`): the conversation is about to be
    /// compressed.
    fn pre_compact<'a>(&'a self, _trigger: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// `Notification`: loki waits for the user (`message` says for what).
    fn notification<'a>(&'a self, _message: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// `SubagentStop`: a sub-agent's turn is about to end (`again`: a hook already sent
    /// it on once). A reason to go on instead, used as the sub-agent's next prompt.
    fn subagent_stop(&self, _again: bool) -> BoxFuture<'_, Option<String>> {
        Box::pin(async { None })
    }

    /// `PermissionRequest`: loki is about to ask the user about `call`. A hook's
    /// decision (`allow`, or `deny` with its message) answers instead of the user.
    fn permission_request<'a>(&'a self, _call: HookCall<'a>) -> BoxFuture<'a, Option<Verdict>> {
        Box::pin(async { None })
    }

    /// `SessionEnd` (`reason`: `other`): the conversation is closing.
    fn session_end<'a>(&'a self, _reason: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// Several hooks, run in order: the first decision on a call wins (a `Deny` from any
/// wins over an `Allow`), argument changes pass from one to the next, notes and context
/// add up.
pub struct Chain(pub Vec<Arc<dyn Hooks>>);

impl Chain {
    /// `first` then `second`, either of which may be absent; `None` when both are.
    pub fn of(
        first: Option<Arc<dyn Hooks>>,
        second: Option<Arc<dyn Hooks>>,
    ) -> Option<Arc<dyn Hooks>> {
        match (first, second) {
            (Some(a), Some(b)) => Some(Arc::new(Self(vec![a, b]))),
            (a, b) => a.or(b),
        }
    }

    /// The first reason to go on that one of the hooks, asked in order, gives; the rest
    /// are not asked.
    fn first_reason<'a>(
        &'a self,
        ask: impl Fn(&'a dyn Hooks) -> BoxFuture<'a, Option<String>> + Send + 'a,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            for hooks in &self.0 {
                if let Some(reason) = ask(hooks.as_ref()).await {
                    return Some(reason);
                }
            }
            None
        })
    }
}

impl Hooks for Chain {
    fn before<'a>(&'a self, call: HookCall<'a>) -> BoxFuture<'a, Before> {
        Box::pin(async move {
            let mut out = Before::default();
            for hooks in &self.0 {
                let args = out.args.clone().unwrap_or_else(|| call.args.clone());
                let before = hooks
                    .before(HookCall {
                        args: &args,
                        ..call
                    })
                    .await;
                if before.args.is_some() {
                    out.args = before.args;
                }
                out.decision = match (out.decision.take(), before.decision) {
                    (Some(Verdict::Deny(r)), _) | (_, Some(Verdict::Deny(r))) => {
                        Some(Verdict::Deny(r))
                    }
                    (Some(Verdict::Ask), _) | (_, Some(Verdict::Ask)) => Some(Verdict::Ask),
                    (a, b) => a.or(b),
                };
            }
            out
        })
    }

    fn after<'a>(&'a self, ran: HookResult<'a>) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let mut notes = Vec::new();
            for hooks in &self.0 {
                notes.extend(hooks.after(ran).await);
            }
            one_a_line(&notes)
        })
    }

    fn prompt<'a>(&'a self, prompt: &'a str) -> BoxFuture<'a, Prompted> {
        Box::pin(async move {
            let mut out = Prompted::default();
            for hooks in &self.0 {
                let said = hooks.prompt(prompt).await;
                out.context.extend(said.context);
                if out.blocked.is_none() {
                    out.blocked = said.blocked;
                }
            }
            out
        })
    }

    fn session_start<'a>(&'a self, source: &'a str) -> BoxFuture<'a, Vec<String>> {
        Box::pin(async move {
            let mut context = Vec::new();
            for hooks in &self.0 {
                context.extend(hooks.session_start(source).await);
            }
            context
        })
    }

    fn stop(&self, again: bool) -> BoxFuture<'_, Option<String>> {
        self.first_reason(move |hooks| hooks.stop(again))
    }

    fn pre_compact<'a>(&'a self, trigger: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            for hooks in &self.0 {
                hooks.pre_compact(trigger).await;
            }
        })
    }

    fn notification<'a>(&'a self, message: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            for hooks in &self.0 {
                hooks.notification(message).await;
            }
        })
    }

    fn subagent_stop(&self, again: bool) -> BoxFuture<'_, Option<String>> {
        self.first_reason(move |hooks| hooks.subagent_stop(again))
    }

    fn permission_request<'a>(&'a self, call: HookCall<'a>) -> BoxFuture<'a, Option<Verdict>> {
        Box::pin(async move {
            let mut out = None;
            for hooks in &self.0 {
                match hooks.permission_request(call).await {
                    Some(Verdict::Deny(m)) => return Some(Verdict::Deny(m)),
                    Some(v) => out = out.or(Some(v)),
                    None => {}
                }
            }
            out
        })
    }

    fn session_end<'a>(&'a self, reason: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            for hooks in &self.0 {
                hooks.session_end(reason).await;
            }
        })
    }
}

/// What `PermissionRequest` hooks' JSON outputs decided
/// (`hookSpecificOutput.decision.behavior`: `allow` or `deny`, with its `message`); a
/// deny from any wins.
pub fn permission_decision_of(outputs: &[(String, Value)]) -> Option<Verdict> {
    let mut out = None;
    for (hook, output) in outputs {
        let decision = &output["hookSpecificOutput"]["decision"];
        match decision["behavior"].as_str() {
            Some("deny") => {
                let message = decision["message"].as_str().map(str::trim);
                return Some(Verdict::Deny(match message.filter(|m| !m.is_empty()) {
                    Some(m) => format!("denied by {hook}: {m}"),
                    None => format!("denied by {hook}"),
                }));
            }
            Some("allow") => out = Some(Verdict::Allow),
            _ => {}
        }
    }
    out
}

/// What `PreToolUse` hooks' JSON outputs decided: the strictest decision given (a deny
/// from any of them wins over an ask, an ask over an allow — as Claude Code ranks them),
/// and the last `updatedInput`. Each output comes with its hook as messages name it (`the PreToolUse
/// hook `./guard.sh``). An output loki cannot read as its hook meant it — an
/// `updatedInput` that is not an object, a `permissionDecision` that is none of `allow`,
/// `deny`, `ask` — refuses the call: running the model's input instead would quietly undo
/// what the hook was written to enforce.
pub fn decision_of(outputs: &[(String, Value)]) -> Before {
    let mut before = Before::default();
    for (hook, output) in outputs {
        let specific = &output["hookSpecificOutput"];
        match specific.get("updatedInput") {
            None | Some(Value::Null) => {}
            Some(input) if input.is_object() => before.args = Some(input.clone()),
            Some(other) => {
                return malformed(
                    hook,
                    &format!(
                        "an updatedInput that is not an object ({})",
                        loki_wire::json::kind(other)
                    ),
                );
            }
        }
        let decision = match specific.get("permissionDecision") {
            None | Some(Value::Null) => None,
            Some(Value::String(d)) if matches!(d.as_str(), "allow" | "deny" | "ask") => {
                Some(d.as_str())
            }
            Some(other) => {
                return malformed(
                    hook,
                    &format!("the permissionDecision {other}, which is none of allow, deny, ask"),
                );
            }
        };
        let reason = specific["permissionDecisionReason"]
            .as_str()
            .or(output["reason"].as_str())
            .or(output["stopReason"].as_str())
            .map(str::trim)
            .filter(|r| !r.is_empty());
        let deny = || {
            Verdict::Deny(match reason {
                Some(reason) => format!("blocked by {hook}: {reason}"),
                None => format!("blocked by {hook}"),
            })
        };
        let said = match (decision, output["decision"].as_str()) {
            (Some("deny"), _) | (_, Some("block")) => Some(deny()),
            (Some("allow"), _) | (_, Some("approve")) => Some(Verdict::Allow),
            (Some("ask"), _) => Some(Verdict::Ask),
            _ if output["continue"] == json!(false) => Some(deny()),
            _ => None,
        };
        if strictness(said.as_ref()) > strictness(before.decision.as_ref()) {
            before.decision = said;
        }
    }
    before
}

/// How strict a hook's decision is: none < allow < ask < deny (the first deny's message
/// is kept).
fn strictness(verdict: Option<&Verdict>) -> u8 {
    match verdict {
        None => 0,
        Some(Verdict::Allow) => 1,
        Some(Verdict::Ask) => 2,
        Some(Verdict::Deny(_)) => 3,
    }
}

/// A refusal for a hook output that does not say what loki can act on.
fn malformed(hook: &str, problem: &str) -> Before {
    Before {
        decision: Some(Verdict::Deny(format!(
            "{hook} answered with {problem}, so the call did not run (fix the hook)"
        ))),
        args: None,
    }
}

/// What `PostToolUse` hooks' JSON outputs say to the model: reasons they block the
/// result with, and `additionalContext`.
pub fn note_of(outputs: &[Value]) -> Option<String> {
    let notes: Vec<&str> = outputs
        .iter()
        .flat_map(|o| {
            let reason = (o["decision"] == "block")
                .then(|| o["reason"].as_str())
                .flatten();
            let context = o["hookSpecificOutput"]["additionalContext"].as_str();
            reason.into_iter().chain(context)
        })
        .filter(|n| !n.trim().is_empty())
        .collect();
    one_a_line(&notes)
}

/// Hooks' notes for the model, one a line; `None` when there are none, so that nothing
/// is added to the result.
pub fn one_a_line<S: std::borrow::Borrow<str>>(notes: &[S]) -> Option<String> {
    (!notes.is_empty()).then(|| notes.join("\n"))
}

/// What a `PostToolUse` hook is given about the call that ran (`tool_name`: the tool as
/// the hook knows it, by Claude's name; its input and response in Claude's shapes).
pub fn post_tool_use_input(tool_name: &str, ran: HookResult<'_>) -> Value {
    use crate::claude_names::shapes;
    let HookResult { call, output, ok } = ran;
    json!({
        "tool_name": tool_name,
        "tool_input": shapes::to_claude(call.tool, call.args),
        "tool_response": shapes::response(call.tool, call.args, output, ok),
        "is_error": !ok,
    })
}

/// The reason a `UserPromptSubmit` hook's JSON output blocks the prompt with
/// (`decision: block`, or `continue: false`), if one does.
pub fn prompt_blocked_of(outputs: &[Value]) -> Option<String> {
    outputs.iter().find_map(|o| {
        (o["decision"] == "block" || o["continue"] == json!(false)).then(|| {
            o["reason"]
                .as_str()
                .or(o["stopReason"].as_str())
                .unwrap_or("a UserPromptSubmit hook blocked the prompt")
                .to_string()
        })
    })
}

/// The reason a `Stop` hook's JSON output sends the turn on with (`decision: block`).
pub fn stop_reason_of(outputs: &[Value]) -> Option<String> {
    outputs.iter().find_map(|o| {
        (o["decision"] == "block").then(|| o["reason"].as_str().unwrap_or("go on").to_string())
    })
}

/// The `additionalContext` of hooks' JSON outputs.
pub fn context_of(outputs: &[Value]) -> Vec<String> {
    outputs
        .iter()
        .filter_map(|o| o["hookSpecificOutput"]["additionalContext"].as_str())
        .filter(|c| !c.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// The note a `PostToolUse` hook adds to a result, set apart so the model sees where it
/// came from.
pub fn with_note(result: String, note: &str) -> String {
    format!("{result}\n\n[a hook after this call says: {note}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(output: Value) -> [(String, Value); 1] {
        [("the hook `h`".to_string(), output)]
    }

    #[test]
    fn hooks_decide_by_either_field() {
        let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no rm"}});
        assert_eq!(
            decision_of(&named(deny)).decision,
            Some(Verdict::Deny("blocked by the hook `h`: no rm".into()))
        );
        assert_eq!(
            decision_of(&named(json!({"decision": "block", "reason": "r"}))).decision,
            Some(Verdict::Deny("blocked by the hook `h`: r".into()))
        );
        assert_eq!(decision_of(&named(json!({}))), Before::default());
        let edit = json!({"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "ls"}}});
        let before = decision_of(&named(edit));
        assert_eq!(before.decision, Some(Verdict::Allow));
        assert_eq!(before.args, Some(json!({"command": "ls"})));
        assert_eq!(
            note_of(&[
                json!({"decision": "block", "reason": "too long"}),
                json!({"hookSpecificOutput": {"additionalContext": "see docs"}})
            ]),
            Some("too long\nsee docs".into())
        );
    }

    #[test]
    fn an_output_loki_cannot_act_on_refuses_the_call() {
        for output in [
            json!({"hookSpecificOutput": {"updatedInput": "ls -la"}}),
            json!({"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": ["ls"]}}),
            json!({"hookSpecificOutput": {"permissionDecision": "maybe"}}),
            json!({"hookSpecificOutput": {"permissionDecision": true}}),
        ] {
            let before = decision_of(&[
                (
                    "the hook `a`".to_string(),
                    json!({"hookSpecificOutput": {"permissionDecision": "allow"}}),
                ),
                ("the hook `b`".to_string(), output.clone()),
            ]);
            match before.decision {
                Some(Verdict::Deny(message)) => {
                    assert!(message.contains("the hook `b`"), "{output}: {message}");
                    assert!(!message.contains('\n'), "{message}");
                }
                other => panic!("{output}: {other:?}"),
            }
            assert_eq!(before.args, None, "{output}");
        }
    }

    #[test]
    fn the_strictest_decision_of_several_hooks_wins() {
        let said = |d: &str| json!({"hookSpecificOutput": {"permissionDecision": d}});
        let of = |decisions: &[&str]| {
            let outputs: Vec<(String, Value)> = decisions
                .iter()
                .enumerate()
                .map(|(i, d)| (format!("the hook `{i}`"), said(d)))
                .collect();
            decision_of(&outputs).decision
        };
        assert!(matches!(of(&["allow", "deny"]), Some(Verdict::Deny(m)) if m.contains("`1`")));
        assert!(matches!(of(&["deny", "allow"]), Some(Verdict::Deny(m)) if m.contains("`0`")));
        assert_eq!(of(&["allow", "ask"]), Some(Verdict::Ask));
        assert_eq!(of(&["ask", "allow"]), Some(Verdict::Ask));
        assert_eq!(of(&["allow", "allow"]), Some(Verdict::Allow));
    }
}
