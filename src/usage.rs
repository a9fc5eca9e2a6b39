//! Token usage and cost, summed over the turns of a conversation (and stored in its
//! session). Cost uses the model's `input_price` / `output_price` (USD per million
//! tokens); cached input is charged at the input price, so the figure is an upper bound.

use serde::{Deserialize, Serialize};

use crate::client::Usage;
use crate::client::config::ModelConfig;

/// Usage summed over turns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UsageTally {
    /// Turns counted.
    pub turns: u64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from a provider cache.
    pub cached_tokens: u64,
    /// USD, for models with prices.
    pub cost: f64,
}

/// What `usage` costs on `model`, when it has prices.
pub fn cost_of(model: &ModelConfig, usage: Usage) -> Option<f64> {
    if model.input_price.is_none() && model.output_price.is_none() {
        return None;
    }
    let per_million = |tokens: u64, price: Option<f64>| tokens as f64 * price.unwrap_or(0.0) / 1e6;
    Some(
        per_million(usage.input_tokens, model.input_price)
            + per_million(usage.output_tokens, model.output_price),
    )
}

impl UsageTally {
    /// Adds one turn's usage on `model`.
    pub fn add(&mut self, model: &ModelConfig, usage: Usage) {
        self.turns += 1;
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.cached_tokens += usage.cached_tokens;
        self.cost += cost_of(model, usage).unwrap_or(0.0);
    }

    /// What was counted after `base` (an earlier value of this tally).
    pub fn since(&self, base: &UsageTally) -> UsageTally {
        UsageTally {
            turns: self.turns.saturating_sub(base.turns),
            input_tokens: self.input_tokens.saturating_sub(base.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(base.output_tokens),
            cached_tokens: self.cached_tokens.saturating_sub(base.cached_tokens),
            cost: (self.cost - base.cost).max(0.0),
        }
    }

    /// Adds another tally.
    pub fn absorb(&mut self, other: &UsageTally) {
        self.turns += other.turns;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_tokens += other.cached_tokens;
        self.cost += other.cost;
    }

    /// Nothing counted yet.
    pub fn is_empty(&self) -> bool {
        self.turns == 0
    }

    /// `$0.0123` (four decimals below a cent, two above).
    pub fn cost_text(&self) -> String {
        if self.cost >= 0.01 {
            format!("${:.2}", self.cost)
        } else {
            format!("${:.4}", self.cost)
        }
    }

    /// One line for `.info`: tokens in (cached) / out, cost, turns.
    pub fn summary(&self) -> String {
        let cached = if self.cached_tokens > 0 {
            format!(" ({} cached)", self.cached_tokens)
        } else {
            String::new()
        };
        format!(
            "{} in{cached} / {} out, {} over {} turn{}",
            self.input_tokens,
            self.output_tokens,
            self.cost_text(),
            self.turns,
            if self.turns == 1 { "" } else { "s" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_follow_prices_per_million() {
        let model = ModelConfig {
            input_price: Some(3.0),
            output_price: Some(15.0),
            ..ModelConfig::default()
        };
        let usage = Usage {
            input_tokens: 1000,
            output_tokens: 200,
            cached_tokens: 400,
        };
        assert_eq!(cost_of(&model, usage), Some(0.006));
        assert_eq!(cost_of(&ModelConfig::default(), usage), None);
        let mut tally = UsageTally::default();
        tally.add(&model, usage);
        tally.add(&model, usage);
        assert_eq!(
            tally.summary(),
            "2000 in (800 cached) / 400 out, $0.01 over 2 turns"
        );
        assert_eq!(UsageTally::default().cost_text(), "$0.0000");
    }
}
