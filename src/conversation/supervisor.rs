//! [`Supervisor`]: the sub-agents of one conversation whose agent may spawn
//! (`can_spawn_agents`). Each sub-agent is a conversation of its own, opened like
//! [`super::Conversation::child`]: the agent's instructions and tools, its own history
//! and MCP lease, a cancellation token derived from the turn that spawned it, approvals
//! and questions routed to the parent's approver and asker with its label. It runs as a
//! task while the parent goes on; `agent__collect` waits for its answer.
//!
//! Limits: `max_concurrent_agents` running at once (default 4) and `max_agent_depth`
//! levels of nesting (default 3). Dropping the supervisor (leaving the agent, ending the
//! conversation) cancels every sub-agent still running.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Conversation, ConversationSpec, Notify};
use crate::context::ConversationId;
use crate::engine::command::Command;
use crate::engine::{CollectingEmitter, RunOptions, UserInput};
use crate::state::AppState;
use crate::tool::ToolError;
use crate::tool::agents::AgentTool;
use crate::tool::approve::{Approver, RoutedApprover};
use crate::tool::ask::{Asker, RoutedAsker};

/// Default `max_concurrent_agents`.
const DEFAULT_CONCURRENT: usize = 4;
/// Default `max_agent_depth`.
const DEFAULT_DEPTH: usize = 3;

/// What a sub-agent inherits from the conversation that spawns it.
struct Parent {
    id: ConversationId,
    label: String,
    approver: Arc<dyn Approver>,
    asker: Arc<dyn Asker>,
    cwd: std::path::PathBuf,
    env: Arc<crate::config::Env>,
    yolo: bool,
    notices: Notify,
    depth: usize,
}

/// How a sub-agent ended: its answer, or why it has none.
type Ending = Option<Result<String, String>>;

/// One sub-agent. Its task stays here until the supervisor shuts down (so ending the
/// conversation can wait for it); callers wait on `done`.
struct Child {
    id: String,
    agent: String,
    cancel: CancellationToken,
    task: Option<JoinHandle<()>>,
    done: tokio::sync::watch::Receiver<Ending>,
}

impl Child {
    fn running(&self) -> bool {
        self.done.borrow().is_none()
    }
}

/// The sub-agents of one conversation.
pub struct Supervisor {
    state: Arc<AppState>,
    parent: Parent,
    max_concurrent: usize,
    max_depth: usize,
    children: Mutex<Vec<Child>>,
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        let children = self
            .children
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for child in children.iter() {
            child.cancel.cancel();
        }
    }
}

impl Supervisor {
    /// The supervisor of `conversation`, whose active agent may spawn.
    pub(super) fn new(conversation: &Conversation) -> Self {
        let ctx = &conversation.ctx;
        let config = ctx.agent.as_ref().map(|a| &a.def.config);
        let env = ctx
            .agent
            .as_ref()
            .map_or_else(|| Arc::clone(&ctx.env), |a| Arc::clone(&a.base_env));
        Self {
            state: Arc::clone(conversation.state()),
            parent: Parent {
                id: ctx.id.clone(),
                label: conversation.label.clone(),
                approver: Arc::clone(&ctx.approver),
                asker: Arc::clone(&ctx.asker),
                cwd: ctx.cwd.clone(),
                env,
                yolo: ctx.tool_policy.yolo,
                notices: Arc::clone(&conversation.notices),
                depth: ctx.depth,
            },
            max_concurrent: config
                .and_then(|c| c.max_concurrent_agents)
                .unwrap_or(DEFAULT_CONCURRENT)
                .max(1),
            max_depth: config
                .and_then(|c| c.max_agent_depth)
                .unwrap_or(DEFAULT_DEPTH),
            children: Mutex::new(Vec::new()),
        }
    }

    fn children(&self) -> std::sync::MutexGuard<'_, Vec<Child>> {
        self.children
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn spawn(&self, args: &Value, turn: &CancellationToken) -> Result<Value, ToolError> {
        let text = |key: &str| {
            args[key]
                .as_str()
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string)
                .ok_or_else(|| ToolError::BadArguments(format!("`{key}` is required")))
        };
        let (agent, prompt) = (text("agent")?, text("prompt")?);
        let depth = self.parent.depth + 1;
        if depth > self.max_depth {
            return Ok(error(format!(
                "Max agent depth exceeded ({depth}/{})",
                self.max_depth
            )));
        }
        let running = self.children().iter().filter(|c| c.running()).count();
        if running >= self.max_concurrent {
            return Ok(error(format!(
                "At capacity: {running}/{} agents running. Wait for one to finish or cancel one.",
                self.max_concurrent
            )));
        }
        let cancel = turn.child_token();
        let mut conversation = match self.open(&agent, depth, cancel.clone()).await {
            Ok(conversation) => conversation,
            Err(e) => return Ok(error(format!("cannot start agent `{agent}`: {e}"))),
        };
        let id = format!("agent_{agent}_{:08x}", fastrand::u32(..));
        let (finished, done) = tokio::sync::watch::channel(None);
        let task = crate::engine::tasks::spawn(async move {
            let emitter = CollectingEmitter::new();
            let input = UserInput {
                text: prompt,
                ..UserInput::default()
            };
            let options = RunOptions {
                stream: Some(false),
            };
            let outcome = conversation.run(input, options, &emitter).await;
            let _ = conversation.finish(outcome.is_ok(), &emitter).await;
            let _ = finished.send(Some(outcome.map(|o| o.text).map_err(|e| e.to_string())));
        });
        self.children().push(Child {
            id: id.clone(),
            agent: agent.clone(),
            cancel,
            task: Some(task),
            done,
        });
        Ok(json!({
            "status": "ok",
            "id": id,
            "agent": agent,
            "message": format!("Agent '{agent}' spawned as '{id}'. Use agent__check or agent__collect to get its answer."),
        }))
    }

    /// Opens the sub-agent's conversation.
    async fn open(
        &self,
        agent: &str,
        depth: usize,
        cancel: CancellationToken,
    ) -> Result<Conversation, crate::engine::CoreError> {
        let id = crate::context::next_conversation_id();
        let label = format!("{} › {id} ({agent})", self.parent.label);
        let parent = &self.parent;
        let spec = ConversationSpec {
            id: Some(id),
            commands: vec![Command::UseAgent {
                name: agent.to_string(),
                variables: Vec::new(),
                session: None,
            }],
            cwd: Some(parent.cwd.clone()),
            env: Some(Arc::clone(&parent.env)),
            approver: Some(Arc::new(RoutedApprover::new(
                Arc::clone(&parent.approver),
                label.clone(),
            ))),
            asker: Some(Arc::new(RoutedAsker::new(
                Arc::clone(&parent.asker),
                label.clone(),
            ))),
            yolo: parent.yolo,
            cancel: Some(cancel),
            notices: Some(Arc::clone(&parent.notices)),
            label: Some(label),
            ..ConversationSpec::default()
        };
        let mut conversation = Conversation::resolve(&self.state, spec)?;
        conversation.ctx.parent = Some(parent.id.clone());
        conversation.ctx.depth = depth;
        conversation.prepare().await?;
        Ok(conversation)
    }

    /// The result of child `id`, waiting for it when `wait`; `None` while it runs.
    async fn result(&self, id: &str, wait: bool) -> Result<Option<Value>, Value> {
        let (mut done, agent) = {
            let children = self.children();
            let Some(child) = children.iter().find(|c| c.id == id) else {
                return Err(error(format!("No agent found with id '{id}'")));
            };
            (child.done.clone(), child.agent.clone())
        };
        if !wait && done.borrow().is_none() {
            return Ok(None);
        }
        let ended = match done.wait_for(Option::is_some).await {
            Ok(ended) => ended.clone(),
            Err(_) => Some(Err("the agent stopped without an answer".into())),
        };
        Ok(ended.map(|result| finished(id, &agent, &result)))
    }

    fn list(&self) -> Value {
        let children = self.children();
        let agents: Vec<Value> = children
            .iter()
            .map(|c| {
                let status = if c.running() { "running" } else { "finished" };
                json!({"id": c.id, "agent": c.agent, "status": status})
            })
            .collect();
        json!({
            "active_count": children.iter().filter(|c| c.running()).count(),
            "max_concurrent": self.max_concurrent,
            "agents": agents,
        })
    }

    fn cancel(&self, id: &str) -> Value {
        match self.children().iter().find(|c| c.id == id) {
            Some(child) => {
                child.cancel.cancel();
                json!({"status": "ok", "message": format!("Cancelled agent '{}'", child.agent)})
            }
            None => error(format!("No agent found with id '{id}'")),
        }
    }
}

/// How long ending a conversation waits for its cancelled sub-agents.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

impl crate::tool::agents::Supervisor for Supervisor {
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let tasks: Vec<JoinHandle<()>> = {
                let mut children = self.children();
                children
                    .iter_mut()
                    .filter_map(|child| {
                        child.cancel.cancel();
                        child.task.take()
                    })
                    .collect()
            };
            let all = futures_util::future::join_all(tasks);
            let _ = tokio::time::timeout(SHUTDOWN_WAIT, all).await;
        })
    }

    fn handle<'a>(
        &'a self,
        tool: AgentTool,
        args: &'a Value,
        turn: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let id = || {
                args["id"]
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| ToolError::BadArguments("`id` is required".into()))
            };
            match tool {
                AgentTool::Spawn => self.spawn(args, turn).await,
                AgentTool::List => Ok(self.list()),
                AgentTool::Cancel => Ok(self.cancel(&id()?)),
                AgentTool::Check => {
                    let id = id()?;
                    Ok(match self.result(&id, false).await {
                        Ok(Some(done)) => done,
                        Ok(None) => {
                            json!({"status": "pending", "id": id, "message": "Agent is still running"})
                        }
                        Err(e) => e,
                    })
                }
                AgentTool::Collect => {
                    let id = id()?;
                    let collect = self.result(&id, true);
                    tokio::select! {
                        () = turn.cancelled() => Err(ToolError::Cancelled),
                        result = collect => Ok(match result {
                            Ok(Some(done)) => done,
                            Ok(None) => json!({"status": "pending", "id": id}),
                            Err(e) => e,
                        }),
                    }
                }
            }
        })
    }
}

fn error(message: String) -> Value {
    json!({"status": "error", "message": message})
}

fn finished(id: &str, agent: &str, result: &Result<String, String>) -> Value {
    match result {
        Ok(output) => json!({"status": "completed", "id": id, "agent": agent, "output": output}),
        Err(e) => json!({"status": "failed", "id": id, "agent": agent, "error": e}),
    }
}
