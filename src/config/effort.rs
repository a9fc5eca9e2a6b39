//! The reasoning effort level (`--effort`, `.set reasoning_effort`, `reasoning_effort:`),
//! provider-neutral; `client::effort` maps it to each provider's control.

use serde::Deserialize;

/// How hard a reasoning model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    /// Think briefly.
    Low,
    /// The usual depth.
    Medium,
    /// Think at length.
    High,
}

impl Effort {
    /// Parses `low`, `medium` or `high` (any case).
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "low" => Some(Self::Low),
            "medium" => Some(Self::Medium),
            "high" => Some(Self::High),
            _ => None,
        }
    }

    /// The level's name, as OpenAI's `reasoning_effort` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }

    /// Thinking tokens for the level (Claude's `budget_tokens`, Gemini's
    /// `thinkingBudget`).
    pub fn budget(self) -> u64 {
        match self {
            Self::Low => 1024,
            Self::Medium => 4096,
            Self::High => 16384,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_map_to_budgets() {
        assert_eq!(Effort::parse(" High "), Some(Effort::High));
        assert_eq!(Effort::parse("max"), None);
        assert_eq!(Effort::Medium.name(), "medium");
        assert_eq!(Effort::Low.budget(), 1024);
    }
}
