//! Token usage and cost, summed over the turns of a conversation (and stored in its
//! session). Cost uses the model's `input_price` / `output_price` (USD per million
//! tokens); cached input is charged at the input price, so the figure is an upper bound.

use crate::config::clients::ModelConfig;
use loki_wire::message::Usage;

use loki_wire::session_file::UsageTally;

pub mod speed;

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

/// Adds one turn's usage on `model` to `tally`.
pub fn add_turn(tally: &mut UsageTally, model: &ModelConfig, usage: Usage) {
    tally.add_turn(usage, cost_of(model, usage).unwrap_or(0.0));
}

/// A spending limit shared by a tree of conversations: an agent's run and every
/// sub-agent it starts charge the same budget, and the first charge that passes a limit
/// cancels the run's token — stopping the whole tree.
#[derive(Debug)]
pub struct Budget {
    max_tokens: Option<u64>,
    max_cost: Option<f64>,
    spent: std::sync::Mutex<Spent>,
    stop: tokio_util::sync::CancellationToken,
}

#[derive(Debug, Default)]
struct Spent {
    tokens: u64,
    cost: f64,
    exhausted: Option<Exhausted>,
}

/// Which limit was passed, and by how much.
#[derive(Debug, Clone, PartialEq)]
pub struct Exhausted {
    /// `max_tokens` or `max_cost`.
    pub budget: &'static str,
    /// The limit.
    pub limit: f64,
    /// What was spent when it was passed.
    pub used: f64,
}

impl std::fmt::Display for Exhausted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.budget == "max_cost" {
            write!(
                f,
                "budget spent: max_cost ${:.4} reached (${:.4} used); the agent and its sub-agents were stopped",
                self.limit, self.used
            )
        } else {
            write!(
                f,
                "budget spent: max_tokens {} reached ({} used); the agent and its sub-agents were stopped",
                self.limit, self.used
            )
        }
    }
}

impl Budget {
    /// A budget of `max_tokens` and/or `max_cost` that cancels `stop` when spent; none
    /// when neither is set.
    pub fn new(
        max_tokens: Option<u64>,
        max_cost: Option<f64>,
        stop: tokio_util::sync::CancellationToken,
    ) -> Option<std::sync::Arc<Self>> {
        (max_tokens.is_some() || max_cost.is_some()).then(|| {
            std::sync::Arc::new(Self {
                max_tokens,
                max_cost,
                spent: std::sync::Mutex::new(Spent::default()),
                stop,
            })
        })
    }

    fn spent(&self) -> std::sync::MutexGuard<'_, Spent> {
        self.spent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Charges one model response of `model`. The first charge that passes a limit
    /// cancels the tree and returns which limit it was.
    pub fn charge(&self, model: &ModelConfig, usage: Usage) -> Option<Exhausted> {
        let mut spent = self.spent();
        spent.tokens += usage.input_tokens + usage.output_tokens;
        spent.cost += cost_of(model, usage).unwrap_or(0.0);
        if spent.exhausted.is_some() {
            return None;
        }
        let over = match (self.max_tokens, self.max_cost) {
            (Some(limit), _) if spent.tokens > limit => Some(Exhausted {
                budget: "max_tokens",
                limit: limit as f64,
                used: spent.tokens as f64,
            }),
            (_, Some(limit)) if spent.cost > limit => Some(Exhausted {
                budget: "max_cost",
                limit,
                used: spent.cost,
            }),
            _ => None,
        }?;
        spent.exhausted = Some(over.clone());
        drop(spent);
        self.stop.cancel();
        Some(over)
    }

    /// The limit that was passed, once one was.
    pub fn exhausted(&self) -> Option<Exhausted> {
        self.spent().exhausted.clone()
    }

    /// Tokens and dollars spent so far.
    pub fn used(&self) -> (u64, f64) {
        let spent = self.spent();
        (spent.tokens, spent.cost)
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
            estimated: false,
            input_tokens: 1000,
            output_tokens: 200,
            cached_tokens: 400,
        };
        assert_eq!(cost_of(&model, usage), Some(0.006));
        assert_eq!(cost_of(&ModelConfig::default(), usage), None);
        let mut tally = UsageTally::default();
        add_turn(&mut tally, &model, usage);
        add_turn(&mut tally, &model, usage);
        assert_eq!(
            tally.summary(),
            "2000 in (800 cached) / 400 out, $0.01 over 2 turns"
        );
        assert_eq!(UsageTally::default().cost_text(), "$0.0000");
    }

    #[test]
    fn a_budget_stops_its_tree_once() {
        let stop = tokio_util::sync::CancellationToken::new();
        assert!(Budget::new(None, None, stop.clone()).is_none());
        let budget = Budget::new(Some(100), None, stop.clone()).unwrap();
        let usage = Usage {
            estimated: false,
            input_tokens: 40,
            output_tokens: 20,
            cached_tokens: 0,
        };
        let model = ModelConfig::default();
        assert_eq!(budget.charge(&model, usage), None);
        assert!(!stop.is_cancelled());
        let over = budget.charge(&model, usage).unwrap();
        assert_eq!((over.budget, over.used), ("max_tokens", 120.0));
        assert!(stop.is_cancelled());
        assert_eq!(budget.charge(&model, usage), None, "reported once");
        assert_eq!(budget.used().0, 180);
        assert!(over.to_string().starts_with("budget spent: max_tokens 100"));
    }
}
