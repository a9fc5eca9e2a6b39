//! `memory__remember` and `memory__search`: the conversation's long-term memory (see
//! [`crate::memory`]). What is remembered is recalled into later conversations, so
//! remembering is approved like a file write (`approval_needed`); off the record it is
//! not offered.

use serde_json::{Value, json};

use super::{ToolEnv, ToolError};
use crate::client::ToolSpec;

/// A memory tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryTool {
    /// Appends a dated fact to MEMORY.md (or today's note).
    Remember,
    /// Searches MEMORY.md.
    Search,
}

impl MemoryTool {
    /// Both tools.
    pub const ALL: [Self; 2] = [Self::Remember, Self::Search];

    /// The function name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Remember => "memory__remember",
            Self::Search => "memory__search",
        }
    }

    /// Whether it only reads.
    pub fn reads_only(&self) -> bool {
        matches!(self, Self::Search)
    }

    /// The declaration sent to the model.
    pub fn spec(&self) -> ToolSpec {
        match self {
            Self::Remember => ToolSpec {
                name: self.name().into(),
                description:
                    "Save a durable fact about the user or their work to long-term memory \
                              (MEMORY.md), dated; `daily` puts it in today's notes instead."
                        .into(),
                parameters: json!({"type": "object", "properties": {
                    "fact": {"type": "string", "description": "The fact, one sentence"},
                    "daily": {"type": "boolean", "description": "A note for today rather than a lasting fact"}
                }, "required": ["fact"]}),
            },
            Self::Search => ToolSpec {
                name: self.name().into(),
                description: "Search long-term memory (MEMORY.md) before saying you do not know \
                              something about the user or earlier work."
                    .into(),
                parameters: json!({"type": "object", "properties": {
                    "query": {"type": "string", "description": "Words to look for"}
                }, "required": ["query"]}),
            },
        }
    }

    /// Runs the call.
    pub fn run(&self, args: &Value, env: &ToolEnv<'_>) -> Result<String, ToolError> {
        let Some(memory) = env.memory else {
            return Err(ToolError::Refused(
                "memory is off in this conversation (memory: false or off the record)".into(),
            ));
        };
        match self {
            Self::Remember => {
                let fact = super::builtin::str_arg(args, "fact")?;
                if fact.trim().is_empty() {
                    return Err(ToolError::BadArguments("`fact` is empty".into()));
                }
                let daily = args["daily"].as_bool().unwrap_or(false);
                let path = memory
                    .remember(fact, daily, std::time::SystemTime::now())
                    .map_err(|e| ToolError::Failed(format!("cannot write memory: {e}")))?;
                Ok(format!("remembered in {}", path.display()))
            }
            Self::Search => {
                let query = super::builtin::str_arg(args, "query")?;
                let found = memory.recall(query, 8);
                if found.is_empty() {
                    return Ok("nothing in memory matches".into());
                }
                Ok(found
                    .iter()
                    .map(|r| r.text.trim())
                    .collect::<Vec<_>>()
                    .join("\n\n"))
            }
        }
    }
}
