//! Counters for `/metrics` (Prometheus text format): requests by status and by route,
//! latency, turns running now, tokens, cost, and MCP servers started and reused.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The counters.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: [AtomicU64; 5],
    latency_us: AtomicU64,
    active: AtomicU64,
    turns: AtomicU64,
    input_tokens: AtomicU64,
    output_tokens: AtomicU64,
    /// Cost in millionths of a dollar.
    cost_micro_usd: AtomicU64,
    /// Time to first token of finished turns, summed in microseconds, and how many.
    first_token_us: AtomicU64,
    first_token_count: AtomicU64,
    /// Output tokens per second of finished turns, summed in thousandths, and how many.
    tokens_per_second_milli: AtomicU64,
    tokens_per_second_count: AtomicU64,
    /// Requests by route template (`/v1/sessions/{id}`) and status class.
    routes: std::sync::Mutex<std::collections::BTreeMap<(String, u16), u64>>,
}

/// A turn in progress; counted down when dropped.
pub struct Active<'a>(&'a Metrics);

impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Metrics {
    /// Counts a request that ended with `status` after `elapsed`.
    pub fn request(&self, route: &str, status: u16, elapsed: Duration) {
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.requests[class].fetch_add(1, Ordering::Relaxed);
        if let Ok(mut routes) = self.routes.lock() {
            *routes.entry((route.to_string(), status / 100)).or_default() += 1;
        }
        let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.latency_us.fetch_add(us, Ordering::Relaxed);
    }

    /// A turn starts.
    pub fn turn(&self) -> Active<'_> {
        self.active.fetch_add(1, Ordering::Relaxed);
        self.turns.fetch_add(1, Ordering::Relaxed);
        Active(self)
    }

    /// Counts a finished run's usage and cost (USD, when the model's prices are known).
    pub fn count(&self, outcome: &loki_protocol::op::RunOutcome, cost: Option<f64>) {
        if let Some(cost) = cost {
            let micro = (cost * 1e6).round().max(0.0) as u64;
            self.cost_micro_usd.fetch_add(micro, Ordering::Relaxed);
        }
        self.input_tokens
            .fetch_add(outcome.usage.input_tokens, Ordering::Relaxed);
        self.output_tokens
            .fetch_add(outcome.usage.output_tokens, Ordering::Relaxed);
        if let Some(speed) = outcome.speed {
            let us = speed.time_to_first_token_ms.saturating_mul(1000);
            self.first_token_us.fetch_add(us, Ordering::Relaxed);
            self.first_token_count.fetch_add(1, Ordering::Relaxed);
            if let Some(rate) = speed.output_tokens_per_second {
                let milli = (rate * 1000.0).round().max(0.0) as u64;
                self.tokens_per_second_milli
                    .fetch_add(milli, Ordering::Relaxed);
                self.tokens_per_second_count.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Turns running now.
    pub fn active(&self) -> u64 {
        self.active.load(Ordering::Relaxed)
    }

    /// The Prometheus text.
    pub fn render(&self) -> String {
        let mut out = String::from(
            "# HELP loki_requests_total HTTP requests by status class.\n# TYPE loki_requests_total counter\n",
        );
        for (i, counter) in self.requests.iter().enumerate() {
            out.push_str(&format!(
                "loki_requests_total{{status=\"{}xx\"}} {}\n",
                i + 1,
                counter.load(Ordering::Relaxed)
            ));
        }
        let total: u64 = self
            .requests
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum();
        out.push_str(&format!(
            "# HELP loki_request_seconds Time spent answering requests.\n# TYPE loki_request_seconds summary\nloki_request_seconds_sum {:.6}\nloki_request_seconds_count {total}\n",
            self.latency_us.load(Ordering::Relaxed) as f64 / 1e6
        ));
        for (name, help, value) in [
            ("loki_turns_active", "Turns running now.", self.active()),
            (
                "loki_turns_total",
                "Turns started.",
                self.turns.load(Ordering::Relaxed),
            ),
            (
                "loki_input_tokens_total",
                "Input tokens of finished turns.",
                self.input_tokens.load(Ordering::Relaxed),
            ),
            (
                "loki_output_tokens_total",
                "Output tokens of finished turns.",
                self.output_tokens.load(Ordering::Relaxed),
            ),
        ] {
            let kind = if name.ends_with("_total") {
                "counter"
            } else {
                "gauge"
            };
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
            ));
        }
        out.push_str(&format!(
            "# HELP loki_cost_usd_total What finished turns cost, for models with prices.\n# TYPE loki_cost_usd_total counter\nloki_cost_usd_total {:.6}\n",
            self.cost_micro_usd.load(Ordering::Relaxed) as f64 / 1e6
        ));
        // Summaries without quantiles (sum and count): a scraper divides them for the
        // mean over any window, as for `loki_request_seconds`.
        out.push_str(&format!(
            "# HELP loki_time_to_first_token_seconds Time from sending a turn's first model request to the first token of the answer.\n# TYPE loki_time_to_first_token_seconds summary\nloki_time_to_first_token_seconds_sum {:.6}\nloki_time_to_first_token_seconds_count {}\n",
            self.first_token_us.load(Ordering::Relaxed) as f64 / 1e6,
            self.first_token_count.load(Ordering::Relaxed)
        ));
        out.push_str(&format!(
            "# HELP loki_output_tokens_per_second Output tokens per second of generation, one observation per finished turn.\n# TYPE loki_output_tokens_per_second summary\nloki_output_tokens_per_second_sum {:.3}\nloki_output_tokens_per_second_count {}\n",
            self.tokens_per_second_milli.load(Ordering::Relaxed) as f64 / 1e3,
            self.tokens_per_second_count.load(Ordering::Relaxed)
        ));
        out.push_str(
            "# HELP loki_route_requests_total HTTP requests by route and status class.\n# TYPE loki_route_requests_total counter\n",
        );
        if let Ok(routes) = self.routes.lock() {
            for ((route, class), count) in routes.iter() {
                out.push_str(&format!(
                    "loki_route_requests_total{{route=\"{route}\",status=\"{class}xx\"}} {count}\n"
                ));
            }
        }
        let mcp = &crate::mcp::factory::COUNTS;
        for (name, help, value) in [
            (
                "loki_mcp_servers_started_total",
                "MCP servers started.",
                &mcp.started,
            ),
            (
                "loki_mcp_servers_reused_total",
                "MCP servers a conversation got already running or kept for reuse.",
                &mcp.reused,
            ),
        ] {
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}\n",
                value.load(Ordering::Relaxed)
            ));
        }
        out
    }
}
