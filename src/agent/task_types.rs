//! The built-in sub-agent types of the `task` tool (Claude Code's Explore, Plan and
//! general-purpose agents): `explore` and `plan` read only, `general` has its parent's
//! tools. They are defined here rather than as agent directories so a user's agent of the
//! same name (loki installs an `explore` agent) never changes what `task` does, and so
//! their tools are worked out from the parent's each time.

use std::path::PathBuf;

use super::{AgentConfig, AgentDef};

/// The tools a reading sub-agent may have, when its parent has them too.
pub const READING: &[&str] = &[
    "fs_read",
    "fs_cat",
    "fs_ls",
    "fs_glob",
    "fs_grep",
    "fetch_url",
    "web_search",
];

/// One built-in sub-agent type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskType {
    /// Searches and reads, quickly (the small model when one is configured).
    Explore,
    /// Reads and answers with a plan.
    Plan,
    /// Works with its parent's tools.
    General,
}

/// Every built-in type, as the model names them.
pub const ALL: [TaskType; 3] = [TaskType::Explore, TaskType::Plan, TaskType::General];

impl TaskType {
    /// The type a `subagent_type` names: loki's names, and Claude Code's (`Explore`,
    /// `general-purpose`), in any case.
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "explore" => Some(Self::Explore),
            "plan" => Some(Self::Plan),
            "general" | "general-purpose" => Some(Self::General),
            _ => None,
        }
    }

    /// Its name, as shown in the agent tree and in `.agents`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Explore => "explore",
            Self::Plan => "plan",
            Self::General => "general",
        }
    }

    /// Whether it gets only the tools that read ([`READING`]).
    pub fn reads_only(self) -> bool {
        !matches!(self, Self::General)
    }

    /// Whether it runs on `small_model` when one is configured.
    pub fn prefers_small_model(self) -> bool {
        matches!(self, Self::Explore)
    }

    /// Its system prompt. Each says that the answer is all the parent sees, since the
    /// parent reads nothing else of the sub-agent's work.
    pub fn instructions(self) -> &'static str {
        match self {
            Self::Explore => {
                "You are a fast, read-only search agent working for another agent. Find what \
                 the task asks for with your tools (you cannot change anything). Answer \
                 concisely with what you found: file paths, line numbers, short excerpts. \
                 Your answer is all the other agent sees."
            }
            Self::Plan => {
                "You are a planning agent working for another agent. Read what you need with \
                 your tools (you cannot change anything), then answer with a step-by-step \
                 implementation plan: the files to change and what to change in each, in \
                 order, and the risks. Sketch code only where it makes a step clear. Your \
                 answer is all the other agent sees."
            }
            Self::General => {
                "You are a sub-agent working for another agent on one task. Do it completely \
                 with your tools, then answer with a concise report of what you did and \
                 found. Your answer is all the other agent sees."
            }
        }
    }

    /// Its definition as an agent: `global_tools` and `mcp_servers` as given (worked out
    /// from the parent's), `dir` where its agent directory would be (it has no files).
    pub fn def(
        self,
        dir: PathBuf,
        global_tools: Vec<String>,
        mcp_servers: Vec<String>,
    ) -> AgentDef {
        AgentDef {
            name: self.name().to_string(),
            dir,
            config: AgentConfig {
                name: self.name().to_string(),
                instructions: self.instructions().to_string(),
                global_tools,
                mcp_servers,
                ..AgentConfig::default()
            },
            tools: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_found_by_loki_and_claude_names() {
        assert_eq!(TaskType::parse("Explore"), Some(TaskType::Explore));
        assert_eq!(TaskType::parse("plan"), Some(TaskType::Plan));
        assert_eq!(TaskType::parse("general-purpose"), Some(TaskType::General));
        assert_eq!(TaskType::parse("coder"), None);
        for kind in ALL {
            assert_eq!(TaskType::parse(kind.name()), Some(kind));
        }
        assert!(TaskType::Plan.reads_only() && !TaskType::General.reads_only());
    }
}
