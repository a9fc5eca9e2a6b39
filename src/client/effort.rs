//! Reasoning effort (`--effort`, `.set reasoning_effort`, `reasoning_effort:`): one
//! provider-neutral level, mapped to each provider's own control where it has one —
//! OpenAI's `reasoning_effort`, Claude's `thinking.budget_tokens`, Gemini's
//! `thinkingConfig.thinkingBudget`. Providers without one ignore it (with a debug log),
//! so a level set for one model never breaks a request to another.

use serde_json::{Map, Value, json};

use crate::config::effort::Effort;

/// The smallest thinking budget Claude accepts.
const CLAUDE_MIN_BUDGET: u64 = 1024;

/// Claude's `thinking` member for an answer of at most `max_tokens`: the budget must be at
/// least 1024 and below `max_tokens`, so a small output limit lowers it, and one too small
/// for any thinking leaves thinking off.
pub fn claude_thinking(effort: Effort, max_tokens: u64) -> Option<Value> {
    let budget = effort.budget().min(max_tokens.saturating_sub(1));
    if budget < CLAUDE_MIN_BUDGET {
        tracing::debug!(
            "reasoning effort {} ignored: max_tokens {max_tokens} leaves no room to think",
            effort.name()
        );
        return None;
    }
    Some(json!({"type": "enabled", "budget_tokens": budget}))
}

/// Adds Gemini's `thinkingConfig` to a `generationConfig`.
pub fn add_gemini(effort: Effort, generation: &mut Map<String, Value>) {
    generation.insert(
        "thinkingConfig".into(),
        json!({"thinkingBudget": effort.budget()}),
    );
}

/// Notes that `provider` has no reasoning control, so `effort` is not sent.
pub fn ignored(effort: Option<Effort>, provider: &str) {
    if let Some(effort) = effort {
        tracing::debug!(
            "reasoning effort {} ignored: {provider} has no reasoning control",
            effort.name()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_budget_is_bounded_by_the_output_limit() {
        assert_eq!(
            claude_thinking(Effort::High, 8192),
            Some(json!({"type": "enabled", "budget_tokens": 8191}))
        );
        assert_eq!(
            claude_thinking(Effort::Medium, 32000),
            Some(json!({"type": "enabled", "budget_tokens": 4096}))
        );
        assert_eq!(claude_thinking(Effort::Low, 1000), None);
    }
}
