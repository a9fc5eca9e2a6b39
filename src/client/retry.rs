//! Retry policy: exponential backoff with jitter, `Retry-After` honoured.
//!
//! Pure functions only; the engine owns the loop so it can tell the user what is
//! happening and stop waiting when the turn is cancelled.

use std::time::{Duration, SystemTime};

use super::error::ProviderError;

/// The longest `Retry-After` loki waits for before giving up and reporting the error.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How a client retries failed requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Delay before the first retry; doubled for each further retry.
    pub base_delay: Duration,
    /// Upper bound of a computed backoff.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The delay before retry number `attempt` (1-based) after `error`, or `None` when the
    /// error is final or the retries are used up. `jitter` is a number in `[0, 1)`.
    pub fn delay_for(&self, error: &ProviderError, attempt: u32, jitter: f64) -> Option<Duration> {
        if !error.is_retryable() || attempt > self.max_retries {
            return None;
        }
        match connect_failure(error) {
            // Nothing listens there: asking again soon gets the same answer.
            Some(ConnectFailure::Refused) => return None,
            // A host that did not answer within `connect_timeout` gets one more chance,
            // not a series of long waits.
            Some(ConnectFailure::TimedOut) if attempt > 1 => return None,
            _ => {}
        }
        if let Some(after) = error.retry_after() {
            return (after <= MAX_RETRY_AFTER).then_some(after);
        }
        let exp = self
            .base_delay
            .saturating_mul(1u32 << (attempt - 1).min(16))
            .min(self.max_delay);
        // "Equal jitter": half fixed, half random, so retries from many clients spread out
        // without ever collapsing to zero.
        let half = exp / 2;
        Some(half + half.mul_f64(jitter.clamp(0.0, 1.0)))
    }
}

/// How a connection attempt failed, as far as retrying is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ConnectFailure {
    /// The host answered that no one listens on the port.
    Refused,
    /// No answer within `connect_timeout`.
    TimedOut,
}

fn connect_failure(error: &ProviderError) -> Option<ConnectFailure> {
    let ProviderError::Connect { message, .. } = error else {
        return None;
    };
    let lower = message.to_ascii_lowercase();
    if lower.contains("refused") {
        Some(ConnectFailure::Refused)
    } else if lower.contains("no connection within") {
        Some(ConnectFailure::TimedOut)
    } else {
        None
    }
}

/// Parses a `Retry-After` value (delta seconds or an HTTP date) or a `retry-after-ms`
/// value.
pub fn parse_retry_after(seconds_or_date: Option<&str>, millis: Option<&str>) -> Option<Duration> {
    // Server-supplied numbers can be anything (`inf`, `1e300`, negative): never panic.
    if let Some(ms) = millis.and_then(|v| v.trim().parse::<f64>().ok())
        && let Ok(d) = Duration::try_from_secs_f64(ms / 1000.0)
    {
        return Some(d);
    }
    let value = seconds_or_date?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(retry_after: Option<Duration>) -> ProviderError {
        ProviderError::Server {
            client: "c".into(),
            status: 503,
            message: "busy".into(),
            retry_after,
        }
    }

    #[test]
    fn backoff_doubles_with_bounded_jitter() {
        let p = RetryPolicy::default();
        let e = server(None);
        assert_eq!(p.delay_for(&e, 1, 0.0), Some(Duration::from_millis(500)));
        assert_eq!(
            p.delay_for(&e, 1, 0.999_999).map(|d| d.as_millis()),
            Some(999)
        );
        assert_eq!(p.delay_for(&e, 2, 0.0), Some(Duration::from_millis(1000)));
        assert_eq!(p.delay_for(&e, 3, 0.0), Some(Duration::from_millis(2000)));
        assert_eq!(p.delay_for(&e, 4, 0.0), None);
    }

    #[test]
    fn retry_after_is_honoured_up_to_a_limit() {
        let p = RetryPolicy::default();
        assert_eq!(
            p.delay_for(&server(Some(Duration::from_secs(7))), 1, 0.5),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            p.delay_for(&server(Some(Duration::from_secs(600))), 1, 0.5),
            None
        );
    }

    #[test]
    fn final_errors_are_not_retried() {
        let e = ProviderError::Auth {
            client: "c".into(),
            status: 401,
            message: "bad".into(),
        };
        assert_eq!(RetryPolicy::default().delay_for(&e, 1, 0.0), None);
    }

    #[test]
    fn refused_connections_are_final_and_timeouts_retried_once() {
        let connect = |message: &str| ProviderError::Connect {
            client: "c".into(),
            url: "http://127.0.0.1:9/v1".into(),
            message: message.into(),
        };
        let p = RetryPolicy::default();
        let refused = connect("tcp connect error: Connection refused (os error 111)");
        assert_eq!(p.delay_for(&refused, 1, 0.0), None);
        let slow = connect("no connection within 1s (extra.connect_timeout)");
        assert!(p.delay_for(&slow, 1, 0.0).is_some());
        assert_eq!(p.delay_for(&slow, 2, 0.0), None);
        let reset = connect("connection reset by peer");
        assert!(p.delay_for(&reset, 3, 0.0).is_some());
    }

    #[test]
    fn retry_after_formats() {
        assert_eq!(
            parse_retry_after(Some("3"), None),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            parse_retry_after(Some("1.5"), None),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after(None, Some("250")),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT"), None),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after(Some("soon"), None), None);
        assert_eq!(parse_retry_after(Some("inf"), None), None);
        assert_eq!(parse_retry_after(Some("-3"), None), None);
        assert_eq!(parse_retry_after(Some("1e300"), Some("NaN")), None);
    }
}
