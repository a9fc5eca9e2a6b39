//! The sub-agent tools: `task` (Claude Code's `Task`: delegate one task to a sub-agent
//! and get its answer back, offered to every conversation with tools unless
//! `delegation: false`), `agent__spawn/check/collect/list/cancel` to run other agents as
//! sub-conversations, `agent__task_*` for a task queue with dependencies whose unblocked
//! tasks start their agents, `agent__send_message` / `agent__check_inbox` between the
//! agents of a tree, and `agent__reply_escalation` to answer a sub-agent's question. An
//! agent with `can_spawn_agents` gets them all; its sub-agents that may not spawn get the
//! two messaging tools. The work is done by the conversation's [`Supervisor`], which lives
//! above the tools (it starts conversations); here are their declarations and the dispatch.

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
    /// Add a task to the queue, with dependencies and an agent to dispatch.
    TaskCreate,
    /// The task queue.
    TaskList,
    /// Mark a task done (unblocking and dispatching its dependents).
    TaskComplete,
    /// Mark a task failed.
    TaskFail,
    /// Send a message to another agent of the tree.
    SendMessage,
    /// Read (and empty) this agent's inbox.
    CheckInbox,
    /// Answer a sub-agent's question.
    ReplyEscalation,
    /// Run a sub-agent of a type (`explore`, `plan`, `general`, or an agent) on a task
    /// and wait for its answer: delegation from a plain conversation.
    Task,
}

/// Every sub-agent tool, in the order they are offered.
pub const ALL: [AgentTool; 12] = [
    AgentTool::Spawn,
    AgentTool::Check,
    AgentTool::Collect,
    AgentTool::List,
    AgentTool::Cancel,
    AgentTool::TaskCreate,
    AgentTool::TaskList,
    AgentTool::TaskComplete,
    AgentTool::TaskFail,
    AgentTool::SendMessage,
    AgentTool::CheckInbox,
    AgentTool::ReplyEscalation,
];

/// The tools of an agent in a tree that may not spawn: it can still talk to the others.
pub const MESSAGING: [AgentTool; 2] = [AgentTool::SendMessage, AgentTool::CheckInbox];

/// The tools of a conversation that delegates (no agent, `delegation` on).
pub const DELEGATING: [AgentTool; 1] = [AgentTool::Task];

/// What a conversation knows of one of its sub-agents (`.agents`).
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgentReport {
    /// The id the parent used for it.
    pub id: String,
    /// The agent.
    pub agent: String,
    /// Its task.
    pub task: String,
    /// `running`, `completed`, `failed` or `cancelled`.
    pub status: &'static str,
    /// Its answer (or what it had when it stopped).
    pub output: String,
    /// Why it failed.
    pub error: Option<String>,
    /// Tokens spent.
    pub tokens: u64,
    /// Dollars spent, when prices are known.
    pub cost: Option<f64>,
    /// How long it ran (so far).
    pub elapsed: std::time::Duration,
}

/// The turn a sub-agent tool call belongs to.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    /// Cancels the turn (and the sub-agents it starts).
    pub cancel: &'a tokio_util::sync::CancellationToken,
    /// The agent run's budget, which its sub-agents share.
    pub budget: Option<&'a std::sync::Arc<crate::usage::Budget>>,
}

/// Runs sub-agents for one conversation.
pub trait Supervisor: Send + Sync {
    /// The tools this conversation is offered.
    fn tools(&self) -> Vec<AgentTool>;

    /// Its sub-agents, running and finished.
    fn report(&self) -> Vec<SubAgentReport>;

    /// Answers a pending question of a sub-agent (`id` from `question_asked`) with
    /// `reply`; an error says why it cannot be.
    fn answer(&self, id: &str, reply: &str) -> Result<(), crate::tool::escalate::AnswerError>;

    /// Carries out `tool` with `args` during `turn`; the JSON result for the model.
    fn handle<'a>(
        &'a self,
        tool: AgentTool,
        args: &'a Value,
        turn: Turn<'a>,
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
            Self::TaskCreate => "agent__task_create",
            Self::TaskList => "agent__task_list",
            Self::TaskComplete => "agent__task_complete",
            Self::TaskFail => "agent__task_fail",
            Self::SendMessage => "agent__send_message",
            Self::CheckInbox => "agent__check_inbox",
            Self::ReplyEscalation => "agent__reply_escalation",
            Self::Task => "task",
        }
    }

    /// Finds a tool by function name.
    pub fn find(name: &str) -> Option<Self> {
        ALL.into_iter().chain(DELEGATING).find(|t| t.name() == name)
    }

    /// The declaration sent to the model.
    pub fn spec(self) -> ToolSpec {
        let id = json!({"type": "string", "description": "The id agent__spawn returned"});
        let by_id = json!({"type": "object", "properties": {"id": id}, "required": ["id"]});
        let task_id = json!({"type": "string", "description": "The id agent__task_create returned (task_1, …)"});
        let none = json!({"type": "object", "properties": {}});
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
                "Wait for a spawned agent to finish and return its answer. Returns early with `pending_escalations` when a sub-agent asks a question: answer it with agent__reply_escalation, then collect again.",
                by_id,
            ),
            Self::List => (
                "List the agents spawned in this conversation and whether each is running.",
                none,
            ),
            Self::Cancel => ("Stop a spawned agent.", by_id),
            Self::TaskCreate => (
                "Add a task to the queue. `blocked_by` lists tasks that must be completed first. With `agent` and `prompt`, that agent is started on the task as soon as it is unblocked, and the task is completed (or failed) with the agent's answer.",
                json!({"type": "object", "properties": {
                    "subject": {"type": "string", "description": "What the task is, in a few words"},
                    "description": {"type": "string", "description": "Details"},
                    "blocked_by": {"type": "array", "items": {"type": "string"}, "description": "Ids of tasks that must be completed first"},
                    "agent": {"type": "string", "description": "An agent to start on the task when it is unblocked"},
                    "prompt": {"type": "string", "description": "The task for that agent"}
                }, "required": ["subject"]}),
            ),
            Self::TaskList => (
                "List the tasks with their status, dependencies and assigned agents.",
                none,
            ),
            Self::TaskComplete => (
                "Mark a task completed. Returns the tasks it unblocked and the agents started for them.",
                json!({"type": "object", "properties": {"task_id": task_id}, "required": ["task_id"]}),
            ),
            Self::TaskFail => (
                "Mark a task failed. Tasks that depend on it stay blocked.",
                json!({"type": "object", "properties": {
                    "task_id": task_id,
                    "reason": {"type": "string", "description": "Why it failed"}
                }, "required": ["task_id"]}),
            ),
            Self::SendMessage => (
                "Send a message to another agent of this team by its id (a sibling's agent_… id, or `parent`). It reads it with agent__check_inbox.",
                json!({"type": "object", "properties": {
                    "id": {"type": "string", "description": "The receiving agent's id, or `parent`"},
                    "message": {"type": "string", "description": "The message"}
                }, "required": ["id", "message"]}),
            ),
            Self::CheckInbox => (
                "Read the messages other agents sent you (the inbox is emptied).",
                none,
            ),
            Self::ReplyEscalation => (
                "Answer a question a sub-agent asked (listed as `pending_escalations` in agent tool results). For yes/no questions reply `yes` or `no`; for choices, the option (several separated by commas).",
                json!({"type": "object", "properties": {
                    "escalation_id": {"type": "string", "description": "The question's id (esc_…)"},
                    "reply": {"type": "string", "description": "The answer"}
                }, "required": ["escalation_id", "reply"]}),
            ),
            // Declared with every request of a conversation with tools, so as short as
            // it can be: Claude's `description` argument is accepted, not declared.
            Self::Task => (
                "Delegate a self-contained task to a sub-agent (explore, plan: read-only; general; or an agent's name); returns its answer.",
                json!({"type": "object", "properties": {
                    "prompt": {"type": "string"},
                    "subagent_type": {"type": "string"}
                }, "required": ["prompt", "subagent_type"]}),
            ),
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
        let turn = Turn {
            cancel: env.cancel,
            budget: env.budget,
        };
        // `task` answers with the sub-agent's text; the other tools with JSON.
        Ok(match supervisor.handle(self, args, turn).await? {
            Value::String(answer) => answer,
            result => result.to_string(),
        })
    }
}
