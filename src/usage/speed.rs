//! How fast a model answered a turn: time to first token and output tokens per second.
//!
//! Each model call is timed from sending the request (retries included) to the first
//! piece of answer (text, reasoning or a tool call), then to the last. A turn's
//! [`Speed`] is its first call's time to first token, and its output tokens over the
//! time spent generating them (each call from its first piece to its last) — tool runs,
//! waiting for the first token and rendering after the last do not count.
//!
//! The engine measures with [`CallTimes`] and [`SpeedMeter`]; front ends show the
//! result (`.info`, the JSON `result`, the server's logs and metrics).

use std::time::{Duration, Instant};

use loki_protocol::event::Speed;

/// The times of one model call.
#[derive(Debug, Clone, Copy)]
pub struct CallTimes {
    /// The request was sent.
    pub sent: Instant,
    /// The first answer token arrived.
    pub first_token: Option<Instant>,
    /// The last answer token so far arrived.
    pub last_token: Option<Instant>,
}

impl CallTimes {
    /// A call whose request goes out now.
    pub fn start() -> Self {
        Self {
            sent: Instant::now(),
            first_token: None,
            last_token: None,
        }
    }

    /// Notes that a piece of answer arrived.
    pub fn token(&mut self) {
        let now = Instant::now();
        self.first_token.get_or_insert(now);
        self.last_token = Some(now);
    }
}

/// Shortest generation time a rate is computed over: below it the answer arrived in one
/// piece (not streamed, or a short answer in one read) and a rate would be noise.
const MIN_GENERATION: Duration = Duration::from_millis(50);

/// Sums the calls of one turn into its [`Speed`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SpeedMeter {
    first_token: Option<Duration>,
    generating: Duration,
    output_tokens: u64,
}

impl SpeedMeter {
    /// Adds a finished call that produced `output_tokens`. A call that produced no token
    /// adds nothing.
    pub fn add(&mut self, call: CallTimes, output_tokens: u64) {
        let (Some(first), Some(last)) = (call.first_token, call.last_token) else {
            return;
        };
        self.first_token
            .get_or_insert_with(|| first.saturating_duration_since(call.sent));
        self.generating += last.saturating_duration_since(first);
        self.output_tokens += output_tokens;
    }

    /// The turn's speed, once a token arrived.
    pub fn speed(&self) -> Option<Speed> {
        let first = self.first_token?;
        let rate = (self.generating >= MIN_GENERATION && self.output_tokens > 0)
            .then(|| self.output_tokens as f64 / self.generating.as_secs_f64());
        Some(Speed {
            time_to_first_token_ms: u64::try_from(first.as_millis()).unwrap_or(u64::MAX),
            output_tokens_per_second: rate,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_call_sets_the_wait_and_all_calls_the_rate() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut meter = SpeedMeter::default();
        assert_eq!(meter.speed(), None);
        // 200 ms to the first token, then 20 tokens in 500 ms.
        meter.add(
            CallTimes {
                sent: t0,
                first_token: Some(at(200)),
                last_token: Some(at(700)),
            },
            20,
        );
        // A tool round later: 30 tokens in 500 ms; its wait does not count.
        meter.add(
            CallTimes {
                sent: at(1000),
                first_token: Some(at(1900)),
                last_token: Some(at(2400)),
            },
            30,
        );
        // A call that never answered adds nothing.
        meter.add(
            CallTimes {
                sent: at(3000),
                first_token: None,
                last_token: None,
            },
            0,
        );
        let speed = meter.speed().unwrap();
        assert_eq!(speed.time_to_first_token_ms, 200);
        let rate = speed.output_tokens_per_second.unwrap();
        assert!((rate - 50.0).abs() < 1e-9, "{rate}");
    }

    #[test]
    fn an_answer_in_one_piece_has_no_rate() {
        let t0 = Instant::now();
        let mut meter = SpeedMeter::default();
        let first = t0 + Duration::from_millis(300);
        meter.add(
            CallTimes {
                sent: t0,
                first_token: Some(first),
                last_token: Some(first),
            },
            40,
        );
        assert_eq!(
            meter.speed(),
            Some(Speed {
                time_to_first_token_ms: 300,
                output_tokens_per_second: None
            })
        );
    }
}
