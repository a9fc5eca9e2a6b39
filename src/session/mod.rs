//! Sessions: a conversation saved as a human-editable YAML file, resumable from the CLI
//! (`-s name`) and the REPL (`.session name`).
//!
//! The file format follows Loki's session files (model, sampling settings, role, the
//! messages); keys loki does not know are kept and written back unchanged. Storage is
//! behind the async [`store::SessionStore`]; the YAML directory store
//! ([`file_store`]) writes atomically and never overwrites a file it could not parse.
//! Writers of one session take turns through the store's lock, and a conversation's
//! [`tracker::Tracker`] merges what others appended meanwhile ([`sync`]) or forks.

pub mod compress;
pub mod export;
pub mod file_store;
pub mod handle;
pub mod id;
pub mod lock;
pub mod pg_store;
mod pg_tls;
pub mod rescue;
pub mod store;
pub mod sync;
pub mod tracker;
pub mod yaml_write;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::client::Message;

/// The name of the unsaved session `-s` without a name opens.
pub const TEMP_SESSION: &str = "temp";

/// The key an agent's session keeps its variables under (as Loki's files do).
pub const AGENT_VARIABLES: &str = "agent_variables";

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
    #[serde(default, skip_serializing_if = "crate::usage::UsageTally::is_empty")]
    pub usage: crate::usage::UsageTally,
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
