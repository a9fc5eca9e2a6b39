//! The sub-agent tools (`agent__spawn`, `agent__check`, `agent__collect`, `agent__list`,
//! `agent__cancel`): conversation tools an agent with `can_spawn_agents` uses to run
//! other agents as sub-conversations. The work is done by the conversation's
//! [`Supervisor`], which lives above the tools (it starts conversations); here are their
//! declarations and the dispatch.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{ToolEnv, ToolError};
use crate::client::ToolSpec;

/// One of the sub-agent tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentTool {
    /// Start an agent on a task in the background.
    Spawn,
    /// See whether one finished, without waiting.
    Check,
    /// Wait for one and take its answer.
    Collect,
    /// The sub-agents of this conversation.
    List,
    /// Stop one.
    Cancel,
}

/// Every sub-agent tool, in the order they are offered.
pub const ALL: [AgentTool; 5] = [
    AgentTool::Spawn,
    AgentTool::Check,
    AgentTool::Collect,
    AgentTool::List,
    AgentTool::Cancel,
];

/// Runs sub-agents for one conversation.
pub trait Supervisor: Send + Sync {
    /// Carries out `tool` with `args` during the turn `turn` cancels; the JSON result for
    /// the model.
    fn handle<'a>(
        &'a self,
        tool: AgentTool,
        args: &'a Value,
        turn: &'a tokio_util::sync::CancellationToken,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;

    /// Cancels every sub-agent still running and waits (briefly) until they have stopped,
    /// their tool processes included.
    fn shutdown(&self) -> BoxFuture<'_, ()>;
}

impl AgentTool {
    /// The function name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Spawn => "agent__spawn",
            Self::Check => "agent__check",
            Self::Collect => "agent__collect",
            Self::List => "agent__list",
            Self::Cancel => "agent__cancel",
        }
    }

    /// Finds a tool by function name.
    pub fn find(name: &str) -> Option<Self> {
        ALL.into_iter().find(|t| t.name() == name)
    }

    /// The declaration sent to the model.
    pub fn spec(self) -> ToolSpec {
        let id = json!({"type": "string", "description": "The id agent__spawn returned"});
        let by_id = json!({"type": "object", "properties": {"id": id}, "required": ["id"]});
        let (description, parameters) = match self {
            Self::Spawn => (
                "Start another agent on a task; it runs in the background while you go on. Returns its id: collect its answer with agent__collect (or look with agent__check). Spawn several at once when their tasks are independent.",
                json!({"type": "object", "properties": {
                    "agent": {"type": "string", "description": "The agent to start (a name in the agents directory)"},
                    "prompt": {"type": "string", "description": "The complete task: the agent sees nothing of this conversation"}
                }, "required": ["agent", "prompt"]}),
            ),
            Self::Check => (
                "See whether a spawned agent has finished, without waiting; returns its answer when it has.",
                by_id,
            ),
            Self::Collect => (
                "Wait for a spawned agent to finish and return its answer.",
                by_id,
            ),
            Self::List => (
                "List the agents spawned in this conversation and whether each is running.",
                json!({"type": "object", "properties": {}}),
            ),
            Self::Cancel => ("Stop a spawned agent.", by_id),
        };
        ToolSpec {
            name: self.name().into(),
            description: description.into(),
            parameters,
        }
    }

    /// Hands the call to the conversation's supervisor.
    pub async fn run(self, args: &Value, env: &ToolEnv<'_>) -> Result<String, ToolError> {
        let Some(supervisor) = env.supervisor else {
            return Err(ToolError::Failed(
                "this conversation cannot start agents".into(),
            ));
        };
        Ok(supervisor.handle(self, args, env.cancel).await?.to_string())
    }
}
