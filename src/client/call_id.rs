//! Ids for tool calls a provider sent without one (Gemini, many OpenAI-compatible
//! servers). The id is made once, when the response's calls are collected, and the call
//! keeps it through the events, the tool result and the session's history. It must be
//! unique beyond one response: editors (ACP) key their tool cards by it and merge calls
//! that share one, and clients that keep a history (Codex, the SDKs) would see two calls
//! of different turns as one. A per-response counter (`call_1_0`) repeats every turn.

use std::sync::atomic::{AtomicU64, Ordering};

/// Calls named in this process so far: two ids of one process never meet.
static MADE: AtomicU64 = AtomicU64::new(0);

/// A new id for a call that came without one: `call_` and 24 hex digits, 12 of them random
/// (another process, or a later run of the same session, does not repeat them) and 12 a
/// process-wide count. Letters, digits and `_` only, so every provider takes it back.
pub fn generated() -> String {
    let count = MADE.fetch_add(1, Ordering::Relaxed) & 0xffff_ffff_ffff;
    let random = fastrand::u64(..) >> 16;
    format!("call_{random:012x}{count:012x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_do_not_repeat_and_keep_to_safe_characters() {
        let ids: Vec<String> = (0..1000).map(|_| generated()).collect();
        let unique: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
        for id in &ids {
            assert_eq!(id.len(), 29, "{id}");
            assert!(id.starts_with("call_"), "{id}");
            assert!(
                id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{id}"
            );
        }
    }
}
