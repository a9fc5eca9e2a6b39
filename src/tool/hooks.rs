//! Hooks around tool calls, in the shape of Claude Code's `PreToolUse` and
//! `PostToolUse`: before every call (not only the ones that need approval) a hook may
//! let it run unasked, refuse it, insist that the user is asked, or change its
//! arguments; after it, a hook may add a note for the model. The hooks of
//! `hooks:` in config.yaml run commands; a Claude Agent SDK program's run its callbacks.

use futures_util::future::BoxFuture;
use serde_json::Value;

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
    /// Do not run it; the reason is for the model.
    Deny(String),
    /// Ask the user even if the call would run unasked.
    Ask,
}

/// Hooks around a conversation's tool calls.
pub trait ToolHooks: Send + Sync {
    /// Before `call` is approved and run.
    fn before<'a>(&'a self, call: HookCall<'a>) -> BoxFuture<'a, Before>;

    /// After `call` ran (`ok`: it succeeded) with `result`: a note for the model, if a hook
    /// has one (a reason it objects to the result, or more context).
    fn after<'a>(
        &'a self,
        call: HookCall<'a>,
        result: &'a str,
        ok: bool,
    ) -> BoxFuture<'a, Option<String>>;
}

/// The note a `PostToolUse` hook adds to a result, set apart so the model sees where it
/// came from.
pub fn with_note(result: String, note: &str) -> String {
    format!("{result}\n\n[a hook after this call says: {note}]")
}
