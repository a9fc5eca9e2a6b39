//! The session file as stored on disk, and its parsers: a session's YAML is read, and
//! its JSON cache read and written, on every turn of a long conversation, so their serde
//! code is instantiated here at full optimisation. Where sessions live, how they are
//! locked and merged, is `loki::session`'s.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};

use crate::message::{Message, Usage};

/// A session as stored on disk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Session {
    /// `client:model` the session uses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Top-p.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Per-session override of `save_session`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub save_session: Option<bool>,
    /// Per-session override of `compression_threshold`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compression_threshold: Option<usize>,
    /// Tools enabled in this session (`.set enabled_tools` while it is open).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled_tools: Option<String>,
    /// MCP servers enabled in this session (`.set enabled_mcp_servers` while it is open).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled_mcp_servers: Option<String>,
    /// Tool groups the model loaded with `load_tools` (declared in later turns too).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub loaded_tools: Vec<String>,
    /// Knowledge base used in this session (`.rag` while it is open).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rag: Option<String>,
    /// The role the session was started with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role_name: Option<String>,
    /// That role's prompt, so the session keeps working if the role file changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role_prompt: Option<String>,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Messages replaced by a summary.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compressed_messages: Vec<Message>,
    /// Tokens and cost spent in this session.
    #[serde(default, skip_serializing_if = "UsageTally::is_empty")]
    pub usage: UsageTally,
    /// The subject (API key or token holder) that created it over the server; only it
    /// and an admin may use it there. None for sessions made elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The directory the session was started in (`loki -C` continues the newest one
    /// started where it runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// A title generated for a temporary session, used in the name it is saved under.
    #[serde(skip)]
    pub autoname: Option<String>,
    /// Keys written by other tools (or later versions), preserved as they are.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_yaml::Value>,
}

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

impl UsageTally {
    /// Adds one turn's usage and what it cost (USD).
    pub fn add_turn(&mut self, usage: Usage, cost: f64) {
        self.turns += 1;
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.cached_tokens += usage.cached_tokens;
        self.cost += cost;
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

/// Parses a session file's text (no byte-order mark, not blank).
pub fn from_yaml(text: &str) -> Result<Session, serde_yaml::Error> {
    serde_yaml::from_str(text)
}

/// Parses the JSON form of a session (the cache next to a large session file).
pub fn from_json(bytes: &[u8]) -> Result<Session, serde_json::Error> {
    serde_json::from_slice(bytes)
}

/// Appends the JSON form of `session` to `out`.
pub fn write_json(out: &mut Vec<u8>, session: &Session) -> Result<(), serde_json::Error> {
    serde_json::to_writer(out, session)
}

/// A 64-bit hash of `bytes` (SipHash, std's default): identifies one exact file text.
pub fn content_hash(bytes: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}
