//! Claude Code's `result` message: what `claude -p --output-format json` prints and what
//! ends every turn of its stream-json. One shape for loki's Agent SDK mode and for
//! `--compat claude` runs, so a program reading either sees the same fields.

use loki_wire::message::Usage;
use serde_json::{Value, json};

/// How a run ended, in Claude Code's terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunResult<'a> {
    /// `success`, `error_max_turns`, `error_max_budget_usd` or `error_during_execution`.
    pub subtype: &'a str,
    /// The answer, or the error's message.
    pub text: &'a str,
    /// Model calls made.
    pub num_turns: usize,
    /// What they used.
    pub usage: Usage,
    /// What the session has cost so far, US dollars.
    pub total_cost_usd: f64,
    /// The session's id.
    pub session_id: &'a str,
    /// Wall time of the run.
    pub duration_ms: u64,
    /// The provider's finish reason of the last response (mapped by [`stop_reason`]).
    pub finish_reason: Option<&'a str>,
}

impl RunResult<'_> {
    /// Claude Code marks only failures as errors: a run that reached its turn limit
    /// stopped as asked.
    pub fn is_error(&self) -> bool {
        self.subtype != "success" && self.subtype != "error_max_turns"
    }

    /// The `result` object (without `modelUsage`, which needs the model's details).
    pub fn to_json(&self) -> Value {
        let fresh = self
            .usage
            .input_tokens
            .saturating_sub(self.usage.cached_tokens);
        let is_error = self.is_error();
        let errors: Vec<&str> = if is_error { vec![self.text] } else { vec![] };
        json!({
            "type": "result",
            "subtype": self.subtype,
            "is_error": is_error,
            "duration_ms": self.duration_ms,
            "duration_api_ms": self.duration_ms,
            "num_turns": self.num_turns,
            "result": self.text,
            "errors": errors,
            "session_id": self.session_id,
            "total_cost_usd": self.total_cost_usd,
            "usage": {
                "input_tokens": fresh,
                "output_tokens": self.usage.output_tokens,
                "cache_read_input_tokens": self.usage.cached_tokens,
                "cache_creation_input_tokens": 0,
            },
            "permission_denials": [],
            "stop_reason": self.finish_reason.map(stop_reason),
        })
    }
}

/// A provider's finish reason by Claude's `stop_reason` names.
pub fn stop_reason(reason: &str) -> &str {
    match reason {
        "stop" | "end_turn" | "STOP" | "COMPLETE" | "end" => "end_turn",
        "tool_calls" | "tool_use" | "function_call" | "TOOL_CALL" => "tool_use",
        "length" | "max_tokens" | "MAX_TOKENS" => "max_tokens",
        "stop_sequence" => "stop_sequence",
        "content_filter" | "SAFETY" | "refusal" => "refusal",
        other => other,
    }
}

/// The `result` subtype of a run that ended with the error `message`: a spent budget
/// (`budget_spent`), the turn limit (loki's `max_tool_rounds` message), or anything else.
pub fn error_subtype(message: &str, budget_spent: bool) -> &'static str {
    if budget_spent {
        "error_max_budget_usd"
    } else if message.contains("max_tool_rounds") || message.contains("(--max-turns ") {
        "error_max_turns"
    } else {
        "error_during_execution"
    }
}
