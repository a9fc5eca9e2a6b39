//! Tool calls as hooks see them: under Claude Code's names and in its shapes
//! ([`crate::claude_names::shapes`]), so a hook written for Claude Code reads
//! `tool_input.file_path` of a `Write`; and what a hook's `updatedInput` means in loki's
//! arguments, so the tool runs with the hook's change. Used by the settings' command
//! hooks and by an SDK program's hook callbacks alike.

use serde_json::{Value, json};

use super::{Before, HookCall, Verdict};
use crate::claude_names::shapes;

/// What a `PreToolUse` hook is given about `call` (`tool_name`: the tool as the hook
/// knows it).
pub fn pre_tool_use_input(tool_name: &str, call: HookCall<'_>) -> Value {
    json!({
        "tool_name": tool_name,
        "tool_input": shapes::to_claude(call.tool, call.args),
    })
}

/// What `PreToolUse` hooks decided about a call of `tool`, with an `updatedInput` (in
/// Claude's shape) as loki's arguments; one loki cannot run as the hook meant it
/// refuses the call.
pub fn in_loki_shape(tool: &str, before: Before) -> Before {
    let Some(edited) = &before.args else {
        return before;
    };
    match shapes::to_loki(tool, edited) {
        Ok(args) => Before {
            args: Some(args),
            ..before
        },
        Err(why) => Before {
            decision: Some(Verdict::Deny(format!(
                "a PreToolUse hook's updatedInput: {why}"
            ))),
            args: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_see_claude_shapes_and_edit_in_them() {
        let args = json!({"path": ".env", "contents": "x"});
        let call = HookCall {
            id: "c",
            tool: "fs_write",
            args: &args,
        };
        assert_eq!(
            pre_tool_use_input("Write", call)["tool_input"],
            json!({"file_path": ".env", "content": "x"})
        );
        let edited = Before {
            decision: Some(Verdict::Allow),
            args: Some(json!({"file_path": "safe.txt", "content": "x"})),
        };
        assert_eq!(
            in_loki_shape("fs_write", edited).args,
            Some(json!({"path": "safe.txt", "contents": "x"}))
        );
        let refused = in_loki_shape(
            "web_search",
            Before {
                decision: None,
                args: Some(json!({"query": "q", "allowed_domains": ["a"]})),
            },
        );
        assert!(
            matches!(refused.decision, Some(Verdict::Deny(m)) if m.contains("allowed_domains"))
        );
        assert_eq!(refused.args, None);
    }
}
