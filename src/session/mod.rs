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
pub mod fork;
pub mod handle;
pub mod history;
pub mod id;
pub mod lock;
pub mod pg_store;
mod pg_tls;
pub mod rescue;
pub mod store;
pub mod sync;
pub mod tracker;

/// The name of the unsaved session `-s` without a name opens.
pub const TEMP_SESSION: &str = "temp";

/// The key an agent's session keeps its variables under (as Loki's files do).
pub const AGENT_VARIABLES: &str = "agent_variables";

/// The key a session keeps its conversation's todo list under (`todo__*` tools), so a
/// resumed session picks the list up where it was left.
pub const TODO: &str = "todo";
