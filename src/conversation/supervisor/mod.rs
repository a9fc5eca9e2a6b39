//! [`Supervisor`]: the sub-agents of one conversation whose agent may spawn
//! (`can_spawn_agents`). Each sub-agent is a conversation of its own, opened like
//! [`super::Conversation::child`]: the agent's instructions and tools, its own history
//! and MCP lease, a cancellation token derived from the turn that spawned it, approvals
//! routed to the parent's approver with its label, questions escalated to the root
//! ([`team::EscalatingAsker`]). It runs as a task while the parent goes on;
//! `agent__collect` waits for its answer. Its events go to the conversation's observer
//! (the terminal's live view, `stream-json`), stamped with its agent and parent.
//!
//! Also here: the task queue ([`tasks`]), whose unblocked tasks start their agents, the
//! team's inboxes, long answers summarised before the parent reads them, and the run's
//! budget shared by the whole tree.
//!
//! A conversation without an agent gets a delegating supervisor instead
//! ([`Supervisor::delegating`]), whose one tool is `task` ([`delegation`]).
//!
//! Limits: `max_concurrent_agents` running at once (default 4) and `max_agent_depth`
//! levels of nesting (default 3). Dropping the supervisor (leaving the agent, ending the
//! conversation) cancels every sub-agent still running.

mod delegation;
mod tasks;
mod team;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Conversation, ConversationSpec};
use crate::conversation::Sink;
use crate::error::CoreError;
use crate::tool::ToolError;
use crate::tool::agents::{AgentTool, SubAgentReport, Turn};
use crate::usage::Budget;
use delegation::Kind;
use loki_protocol::command::Command;
use loki_protocol::emitter::{Discard, Emitter};
use loki_protocol::event::{AgentFinished, AgentStarted, Event};
use loki_protocol::op::{RunOptions, UserInput};
use team::{EscalatingAsker, ROOT, Team};

/// Default `max_concurrent_agents`.
const DEFAULT_CONCURRENT: usize = 4;
/// Default `max_agent_depth`.
const DEFAULT_DEPTH: usize = 3;
/// Default `summarization_threshold` (characters).
const DEFAULT_SUMMARY_THRESHOLD: usize = 4000;
/// Default `escalation_timeout`.
const DEFAULT_ESCALATION_TIMEOUT: Duration = Duration::from_secs(300);

/// What a sub-agent inherits from the conversation that spawns it.
struct Parent {
    /// Everything a child conversation inherits (the environment is the agent's base
    /// environment, without its `LLM_AGENT_*` variables).
    lineage: super::lineage::Lineage,
    /// The model that summarises long answers.
    summary_model: String,
    /// Its model, which built-in `task` sub-agents use.
    model: String,
    /// Its tools, from which a built-in `task` sub-agent's are worked out.
    scope: crate::conversation::engine::scope::Wanted,
}

/// Why a sub-agent was not started (told to the model that asked).
#[derive(Debug, thiserror::Error)]
enum SpawnError {
    #[error("Max agent depth exceeded ({depth}/{max})")]
    TooDeep { depth: usize, max: usize },
    #[error("At capacity: {running}/{max} agents running. Wait for one to finish or cancel one.")]
    AtCapacity { running: usize, max: usize },
    #[error("cannot start agent `{agent}`: {error}")]
    Open {
        agent: String,
        error: Box<CoreError>,
    },
}

/// How a sub-agent ended.
#[derive(Debug, Clone)]
struct Ended {
    status: &'static str,
    output: String,
    error: Option<String>,
    tokens: u64,
    cost: Option<f64>,
    elapsed: Duration,
}

/// One sub-agent. Its task stays here until the supervisor shuts down (so ending the
/// conversation can wait for it); callers wait on `done`.
struct Child {
    id: String,
    agent: String,
    task_text: String,
    started: Instant,
    cancel: CancellationToken,
    task: Option<JoinHandle<()>>,
    done: tokio::sync::watch::Receiver<Option<Ended>>,
}

impl Child {
    fn running(&self) -> bool {
        self.done.borrow().is_none()
    }
}

/// The sub-agents of one conversation (or, for a sub-agent that may not spawn, just its
/// place in the team).
pub struct Supervisor {
    inner: Arc<Inner>,
}

struct Inner {
    parent: Parent,
    /// This conversation's id in the team's messages (`parent` for the root).
    member: String,
    can_spawn: bool,
    /// Offers `task` (a conversation without an agent, `delegation` on).
    delegates: bool,
    max_concurrent: usize,
    max_depth: usize,
    summary_threshold: usize,
    team: Arc<Team>,
    observer: Option<Arc<dyn Emitter>>,
    children: Mutex<Vec<Child>>,
    tasks: Mutex<tasks::TaskQueue>,
    /// The turn that last used a tool: tasks unblocked later start under it.
    turn: Mutex<Option<(CancellationToken, Option<Arc<Budget>>)>>,
    /// Escalations the model has been told about.
    told: Mutex<std::collections::HashSet<String>>,
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        *lock(&self.inner.turn) = None;
        for child in lock(&self.inner.children).iter() {
            child.cancel.cancel();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Supervisor {
    /// The supervisor of the root conversation of a tree, whose active agent may spawn.
    pub(super) fn root(conversation: &Conversation) -> Self {
        let ctx = &conversation.ctx;
        let config = ctx.agent.as_ref().map(|a| &a.def.config);
        let timeout = config
            .and_then(|c| c.escalation_timeout)
            .map_or(DEFAULT_ESCALATION_TIMEOUT, Duration::from_secs);
        let board = Arc::clone(&conversation.questions);
        let team = Arc::new(Team::new(Arc::clone(&ctx.asker), board, timeout));
        Self::new(conversation, team, ROOT.to_string(), (true, false))
    }

    /// The supervisor of a conversation without an agent that delegates with `task`:
    /// none when `delegation` is off or the conversation is itself a sub-agent (a
    /// sub-agent does not delegate further). Made again for each run, so its children
    /// take the conversation's model, tools and directory as they are then.
    pub(super) fn delegating(conversation: &Conversation) -> Option<Self> {
        let ctx = &conversation.ctx;
        let on = conversation.state().config.delegation && ctx.agent.is_none() && ctx.depth == 0;
        on.then(|| {
            let board = Arc::clone(&conversation.questions);
            let asker = Arc::clone(&ctx.asker);
            let team = Arc::new(Team::new(asker, board, DEFAULT_ESCALATION_TIMEOUT));
            Self::new(conversation, team, ROOT.to_string(), (false, true))
        })
    }

    /// `(can_spawn, delegates)`: the sub-agent tools it offers.
    fn new(
        conversation: &Conversation,
        team: Arc<Team>,
        member: String,
        (can_spawn, delegates): (bool, bool),
    ) -> Self {
        let ctx = &conversation.ctx;
        let config = ctx.agent.as_ref().map(|a| &a.def.config);
        let env = ctx
            .agent
            .as_ref()
            .map_or_else(|| Arc::clone(&ctx.env), |a| Arc::clone(&a.base_env));
        team.join(&member);
        Self {
            inner: Arc::new(Inner {
                parent: Parent {
                    lineage: super::lineage::Lineage {
                        env,
                        ..conversation.lineage()
                    },
                    summary_model: config
                        .and_then(|c| c.summarization_model.clone())
                        .unwrap_or_else(|| ctx.model.id()),
                    model: ctx.model.id(),
                    scope: crate::conversation::engine::scope::wanted(ctx),
                },
                member,
                can_spawn,
                delegates,
                max_concurrent: config
                    .and_then(|c| c.max_concurrent_agents)
                    .unwrap_or(DEFAULT_CONCURRENT)
                    .max(1),
                max_depth: config
                    .and_then(|c| c.max_agent_depth)
                    .unwrap_or(DEFAULT_DEPTH),
                summary_threshold: config
                    .and_then(|c| c.summarization_threshold)
                    .unwrap_or(DEFAULT_SUMMARY_THRESHOLD),
                team,
                observer: conversation.observer.clone(),
                children: Mutex::new(Vec::new()),
                tasks: Mutex::new(tasks::TaskQueue::default()),
                turn: Mutex::new(None),
                told: Mutex::new(std::collections::HashSet::new()),
            }),
        }
    }
}

impl Inner {
    fn error(message: impl std::fmt::Display) -> Value {
        json!({"status": "error", "message": message.to_string()})
    }

    /// Starts `kind` on `prompt` under the turn `cancel` cancels; its id.
    fn start(
        self: &Arc<Self>,
        kind: Kind,
        prompt: String,
        cancel: &CancellationToken,
        budget: Option<Arc<Budget>>,
    ) -> BoxFuture<'static, Result<String, SpawnError>> {
        let inner = Arc::clone(self);
        let cancel = cancel.child_token();
        Box::pin(async move {
            let depth = inner.parent.lineage.depth + 1;
            if depth > inner.max_depth {
                return Err(SpawnError::TooDeep {
                    depth,
                    max: inner.max_depth,
                });
            }
            let running = lock(&inner.children).iter().filter(|c| c.running()).count();
            if running >= inner.max_concurrent {
                return Err(SpawnError::AtCapacity {
                    running,
                    max: inner.max_concurrent,
                });
            }
            let agent = kind.name().to_string();
            let id = format!("agent_{agent}_{:08x}", fastrand::u32(..));
            let conversation = inner
                .open(&kind, &id, cancel.clone(), budget)
                .await
                .map_err(|e| SpawnError::Open {
                    agent: agent.clone(),
                    error: Box::new(e),
                })?;
            let emitter: Arc<dyn Emitter> =
                inner.observer.clone().unwrap_or_else(|| Arc::new(Discard));
            let sink = Sink::for_context(&conversation.ctx, emitter.as_ref());
            sink.emit(Event::AgentStarted(AgentStarted {
                id: id.clone(),
                task: prompt.clone(),
            }));
            sink.flush();
            let (finished, done) = tokio::sync::watch::channel(None);
            let started = Instant::now();
            let task_text = first_line(&prompt);
            let runner = Arc::clone(&inner);
            let child_id = id.clone();
            let task = crate::conversation::tasks::spawn(async move {
                let ended = runner
                    .run_child(conversation, prompt, emitter.as_ref(), (&child_id, started))
                    .await;
                // The queue learns first, so a task list taken after a collect is current.
                let completed = ended.status == "completed";
                runner
                    .task_ended(&child_id, completed, ended.error.clone())
                    .await;
                let _ = finished.send(Some(ended));
            });
            lock(&inner.children).push(Child {
                id: id.clone(),
                agent,
                task_text,
                started,
                cancel,
                task: Some(task),
                done,
            });
            Ok(id)
        })
    }

    /// Runs a sub-agent's conversation to its end and closes it (a save that fails is
    /// the sub-agent's error), then says it finished.
    async fn run_child(
        &self,
        mut conversation: Conversation,
        prompt: String,
        emitter: &dyn Emitter,
        (id, started): (&str, Instant),
    ) -> Ended {
        let input = UserInput {
            text: prompt,
            ..UserInput::default()
        };
        let options = RunOptions {
            stream: Some(false),
            ..RunOptions::default()
        };
        let outcome = conversation.run(input, options, emitter).await;
        let usage = conversation.ctx.usage;
        let partial = conversation
            .ctx
            .history
            .last()
            .filter(|m| m.role == loki_wire::message::Role::Assistant)
            .map(loki_wire::message::Message::text_content)
            .unwrap_or_default();
        let sink = Sink::for_context(&conversation.ctx, emitter);
        let saved = conversation.close(emitter).await.into_saved();
        let (status, output, error) = match (outcome, saved) {
            (Ok(outcome), Ok(_)) => ("completed", self.summarized(outcome.text).await, None),
            (Ok(outcome), Err(e)) => (
                "failed",
                outcome.text,
                Some(format!("its session could not be saved: {e}")),
            ),
            (Err(CoreError::Cancelled), _) => ("cancelled", partial, None),
            (Err(e), _) => ("failed", partial, Some(e.to_string())),
        };
        let ended = Ended {
            status,
            output,
            error,
            tokens: usage.input_tokens + usage.output_tokens,
            cost: (usage.cost > 0.0).then_some(usage.cost),
            elapsed: started.elapsed(),
        };
        sink.emit(Event::AgentFinished(AgentFinished {
            id: id.to_string(),
            status: ended.status,
            output: ended.output.clone(),
            error: ended.error.clone(),
            tokens: ended.tokens,
            cost_usd: ended.cost,
            elapsed_ms: u64::try_from(ended.elapsed.as_millis()).unwrap_or(u64::MAX),
        }));
        sink.flush();
        ended
    }

    /// `output`, summarised by the summary model when it is longer than the threshold;
    /// unchanged when summarising fails.
    async fn summarized(&self, output: String) -> String {
        if output.chars().count() <= self.summary_threshold {
            return output;
        }
        let spec = ConversationSpec {
            model: Some(self.parent.summary_model.clone()),
            label: Some("summary".into()),
            observer: Some(Arc::new(Discard)),
            ..ConversationSpec::default()
        };
        let Ok(mut summarizer) = self.parent.lineage.open(spec).await else {
            return output;
        };
        let input = UserInput {
            text: format!("{SUMMARY_PROMPT}\n\n<agent_output>\n{output}\n</agent_output>"),
            ..UserInput::default()
        };
        let options = RunOptions {
            stream: Some(false),
            ..RunOptions::default()
        };
        match summarizer.run(input, options, &Discard).await {
            Ok(summary) if !summary.text.trim().is_empty() => {
                format!(
                    "[summary of a {}-character answer]\n{}",
                    output.len(),
                    summary.text
                )
            }
            _ => output,
        }
    }

    /// Opens the sub-agent's conversation: a child of the spawning conversation under
    /// the spawning turn's token and budget, its questions on the team's board. A
    /// `task` sub-agent has no place in the team's messages.
    async fn open(
        self: &Arc<Self>,
        kind: &Kind,
        id: &str,
        cancel: CancellationToken,
        budget: Option<Arc<Budget>>,
    ) -> Result<Conversation, CoreError> {
        let agent = kind.name();
        let conversation_id = loki_protocol::event::next_conversation_id();
        let lineage = super::lineage::Lineage {
            budget,
            ..self.parent.lineage.clone()
        };
        let asker = EscalatingAsker {
            team: Arc::clone(&self.team),
            label: lineage.label_for(&conversation_id, Some(agent)),
            observer: self.observer.clone(),
            conversation: conversation_id.clone(),
            parent: lineage.parent.clone(),
            agent: agent.into(),
        };
        let asker: Arc<dyn crate::tool::ask::Asker> = Arc::new(asker);
        let spec = |model: Option<String>, commands: Vec<Command>| ConversationSpec {
            id: Some(conversation_id.clone()),
            model,
            commands,
            asker: Some(Arc::clone(&asker)),
            cancel: Some(cancel.clone()),
            label: Some(agent.to_string()),
            observer: self.observer.clone(),
            ..ConversationSpec::default()
        };
        let mut conversation = match kind {
            Kind::Agent(name) => {
                let use_agent = Command::UseAgent {
                    name: name.clone(),
                    variables: Vec::new(),
                    session: None,
                };
                lineage.open(spec(None, vec![use_agent])).await?
            }
            Kind::Builtin(kind) => {
                let spec = |model: String| spec(Some(model), Vec::new());
                self.open_builtin(*kind, &lineage, spec).await?
            }
        };
        let spawns = conversation
            .ctx
            .agent
            .as_ref()
            .is_some_and(|a| a.def.config.can_spawn_agents);
        if spawns || !self.delegates {
            let member = Supervisor::new(
                &conversation,
                Arc::clone(&self.team),
                id.to_string(),
                (spawns, false),
            );
            conversation.ctx.supervisor = Some(Arc::new(member));
        }
        Ok(conversation)
    }

    /// A sub-agent ended: the task it worked on is completed or failed, and tasks that
    /// became runnable (or were waiting for a free slot) start.
    async fn task_ended(self: &Arc<Self>, child: &str, completed: bool, note: Option<String>) {
        let task = lock(&self.tasks).of_child(child);
        if let Some(task) = task {
            let mut queue = lock(&self.tasks);
            let _ = if completed {
                queue.complete(&task).map(|_| ())
            } else {
                queue.fail(&task, note)
            };
        }
        self.dispatch().await;
    }

    /// Starts the agents of unblocked tasks, as many as there are free slots.
    fn dispatch(self: &Arc<Self>) -> BoxFuture<'static, Vec<Value>> {
        let inner = Arc::clone(self);
        Box::pin(async move {
            let Some((cancel, budget)) = lock(&inner.turn).clone() else {
                return Vec::new();
            };
            if cancel.is_cancelled() {
                return Vec::new();
            }
            let running = lock(&inner.children).iter().filter(|c| c.running()).count();
            let slots = inner.max_concurrent.saturating_sub(running);
            let ready = lock(&inner.tasks).take_dispatches(slots);
            let mut started = Vec::new();
            for (task, agent, prompt) in ready {
                let result = inner
                    .start(Kind::Agent(agent.clone()), prompt, &cancel, budget.clone())
                    .await;
                let mut queue = lock(&inner.tasks);
                match result {
                    Ok(id) => {
                        queue.assign(&task, Some(id.clone()), None);
                        started.push(json!({"task_id": task, "agent": agent, "id": id}));
                    }
                    Err(e) => {
                        let e = e.to_string();
                        queue.assign(&task, None, Some(e.clone()));
                        started.push(json!({"task_id": task, "agent": agent, "error": e}));
                    }
                }
            }
            started
        })
    }

    /// The result of child `id`, waiting for it when `wait`; `None` while it runs.
    async fn result(&self, id: &str, wait: bool) -> Result<Option<Value>, Value> {
        let (mut done, agent) = {
            let children = lock(&self.children);
            let Some(child) = children.iter().find(|c| c.id == id) else {
                return Err(Self::error(format!("No agent found with id '{id}'")));
            };
            (child.done.clone(), child.agent.clone())
        };
        if !wait && done.borrow().is_none() {
            return Ok(None);
        }
        let ended = match done.wait_for(Option::is_some).await {
            Ok(ended) => ended.clone(),
            Err(_) => None,
        };
        Ok(Some(match ended {
            Some(ended) => finished(id, &agent, &ended),
            None => {
                json!({"status": "failed", "id": id, "agent": agent, "error": "the agent stopped without an answer"})
            }
        }))
    }

    fn list(&self) -> Value {
        let children = lock(&self.children);
        let agents: Vec<Value> = children
            .iter()
            .map(|c| {
                let status = c.done.borrow().as_ref().map_or("running", |e| e.status);
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
        match lock(&self.children).iter().find(|c| c.id == id) {
            Some(child) => {
                child.cancel.cancel();
                json!({"status": "ok", "message": format!("Cancelled agent '{}'", child.agent)})
            }
            None => Self::error(format!("No agent found with id '{id}'")),
        }
    }

    async fn spawn(self: &Arc<Self>, args: &Value, turn: Turn<'_>) -> Result<Value, ToolError> {
        let (agent, prompt) = (text(args, "agent")?, text(args, "prompt")?);
        Ok(
            match self
                .start(
                    Kind::Agent(agent.clone()),
                    prompt,
                    turn.cancel,
                    turn.budget.cloned(),
                )
                .await
            {
                Ok(id) => json!({
                    "status": "ok",
                    "id": id,
                    "agent": agent,
                    "message": format!("Agent '{agent}' spawned as '{id}'. Use agent__check or agent__collect to get its answer."),
                }),
                Err(e) => Self::error(e),
            },
        )
    }

    async fn collect(&self, args: &Value, turn: Turn<'_>) -> Result<Value, ToolError> {
        let id = text(args, "id")?;
        // A question from a sub-agent (which may be the one collected, waiting for it)
        // comes back to the model at once.
        let asked = async {
            loop {
                let mut opened = std::pin::pin!(self.team.board.opened());
                opened.as_mut().enable();
                if self.untold() {
                    break;
                }
                opened.await;
            }
        };
        tokio::select! {
            () = turn.cancel.cancelled() => Err(ToolError::Cancelled),
            () = asked => Ok(json!({"status": "pending", "id": id, "message": "A sub-agent is waiting for an answer"})),
            result = self.result(&id, true) => Ok(match result {
                Ok(Some(done)) => done,
                Ok(None) => json!({"status": "pending", "id": id}),
                Err(e) => e,
            }),
        }
    }

    /// Whether a question waits that the model has not been told about yet.
    fn untold(&self) -> bool {
        let told = lock(&self.told);
        self.team
            .board
            .pending()
            .iter()
            .any(|e| !told.contains(&e.id))
    }

    async fn task_create(self: &Arc<Self>, args: &Value) -> Result<Value, ToolError> {
        let subject = text(args, "subject")?;
        let description = args["description"].as_str().unwrap_or("").to_string();
        let blocked_by: Vec<String> = match &args["blocked_by"] {
            Value::Null => Vec::new(),
            Value::Array(ids) => ids
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| ToolError::BadArguments("`blocked_by` lists task ids".into()))?,
            Value::String(one) => vec![one.clone()],
            _ => {
                return Err(ToolError::BadArguments(
                    "`blocked_by` lists task ids".into(),
                ));
            }
        };
        let dispatch = match (args["agent"].as_str(), args["prompt"].as_str()) {
            (Some(agent), prompt) if !agent.trim().is_empty() => Some((
                agent.to_string(),
                prompt
                    .filter(|p| !p.trim().is_empty())
                    .unwrap_or(&subject)
                    .to_string(),
            )),
            _ => None,
        };
        let created = lock(&self.tasks).create(subject, description, blocked_by, dispatch);
        Ok(match created {
            Ok(id) => {
                let dispatched = self.dispatch().await;
                json!({"status": "ok", "task_id": id, "dispatched": dispatched})
            }
            Err(e) => Self::error(e),
        })
    }

    async fn task_complete(self: &Arc<Self>, args: &Value) -> Result<Value, ToolError> {
        let id = text(args, "task_id")?;
        let unblocked = lock(&self.tasks).complete(&id);
        Ok(match unblocked {
            Ok(unblocked) => {
                let dispatched = self.dispatch().await;
                json!({"status": "ok", "task_id": id, "unblocked": unblocked, "dispatched": dispatched})
            }
            Err(e) => Self::error(e),
        })
    }

    async fn handle(
        self: &Arc<Self>,
        tool: AgentTool,
        args: &Value,
        turn: Turn<'_>,
    ) -> Result<Value, ToolError> {
        *lock(&self.turn) = Some((turn.cancel.clone(), turn.budget.cloned()));
        let allowed = match tool {
            AgentTool::SendMessage | AgentTool::CheckInbox => true,
            AgentTool::Task => self.delegates,
            _ => self.can_spawn,
        };
        if !allowed && tool == AgentTool::Task {
            return Err(ToolError::Failed(
                "this conversation does not delegate (`delegation: false`, or a sub-agent)".into(),
            ));
        }
        if !allowed {
            return Err(ToolError::Failed(format!(
                "{} needs `can_spawn_agents: true` in the agent's config.yaml",
                tool.name()
            )));
        }
        let mut result = match tool {
            AgentTool::Spawn => self.spawn(args, turn).await?,
            AgentTool::Task => return self.task(args, turn).await,
            AgentTool::List => self.list(),
            AgentTool::Cancel => self.cancel(&text(args, "id")?),
            AgentTool::Check => {
                let id = text(args, "id")?;
                match self.result(&id, false).await {
                    Ok(Some(done)) => done,
                    Ok(None) => {
                        json!({"status": "pending", "id": id, "message": "Agent is still running"})
                    }
                    Err(e) => e,
                }
            }
            AgentTool::Collect => self.collect(args, turn).await?,
            AgentTool::TaskCreate => self.task_create(args).await?,
            AgentTool::TaskList => lock(&self.tasks).list(),
            AgentTool::TaskComplete => self.task_complete(args).await?,
            AgentTool::TaskFail => {
                let id = text(args, "task_id")?;
                let reason = args["reason"].as_str().map(str::to_string);
                match lock(&self.tasks).fail(&id, reason) {
                    Ok(()) => json!({"status": "ok", "task_id": id}),
                    Err(e) => Self::error(e),
                }
            }
            AgentTool::SendMessage => {
                let to = text(args, "id")?;
                let message = text(args, "message")?;
                self.team.send(&self.member, &to, &message)
            }
            AgentTool::CheckInbox => self.team.drain(&self.member),
            AgentTool::ReplyEscalation => {
                let id = text(args, "escalation_id")?;
                let reply = text(args, "reply")?;
                match self.team.board.reply(&id, &reply) {
                    Ok(()) => json!({"status": "ok", "message": format!("answered {id}")}),
                    Err(e) => Self::error(e),
                }
            }
        };
        if self.can_spawn
            && let Some(pending) = self.team.pending_escalations()
            && let Value::Object(map) = &mut result
        {
            let mut told = lock(&self.told);
            for e in pending.as_array().into_iter().flatten() {
                if let Some(id) = e["escalation_id"].as_str() {
                    told.insert(id.to_string());
                }
            }
            map.insert("pending_escalations".into(), pending);
        }
        Ok(result)
    }
}

/// The instructions for summarising a long answer of a sub-agent.
const SUMMARY_PROMPT: &str = "Another agent produced the answer below for the agent that \
delegated a task to it. Shorten it for that agent: keep every actionable detail — file \
paths, code, commands, error messages, numbers, decisions and recommendations — and drop \
repetition and narration. Answer with the shortened text only.";

fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(200)
        .collect()
}

fn text(args: &Value, key: &str) -> Result<String, ToolError> {
    args[key]
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
        .ok_or_else(|| ToolError::BadArguments(format!("`{key}` is required")))
}

fn finished(id: &str, agent: &str, ended: &Ended) -> Value {
    match ended.status {
        "completed" => {
            json!({"status": "completed", "id": id, "agent": agent, "output": ended.output})
        }
        status => {
            let mut value = json!({"status": status, "id": id, "agent": agent});
            if let Some(error) = &ended.error {
                value["error"] = json!(error);
            }
            if !ended.output.is_empty() {
                value["partial_output"] = json!(ended.output);
            }
            value
        }
    }
}

/// How long ending a conversation waits for its cancelled sub-agents.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(3);

impl crate::tool::agents::Supervisor for Supervisor {
    fn tools(&self) -> Vec<AgentTool> {
        if self.inner.can_spawn {
            crate::tool::agents::ALL.to_vec()
        } else if self.inner.delegates {
            crate::tool::agents::DELEGATING.to_vec()
        } else {
            crate::tool::agents::MESSAGING.to_vec()
        }
    }

    fn report(&self) -> Vec<SubAgentReport> {
        lock(&self.inner.children)
            .iter()
            .map(|c| {
                let ended = c.done.borrow().clone();
                SubAgentReport {
                    id: c.id.clone(),
                    agent: c.agent.clone(),
                    task: c.task_text.clone(),
                    status: ended.as_ref().map_or("running", |e| e.status),
                    output: ended.as_ref().map(|e| e.output.clone()).unwrap_or_default(),
                    error: ended.as_ref().and_then(|e| e.error.clone()),
                    tokens: ended.as_ref().map_or(0, |e| e.tokens),
                    cost: ended.as_ref().and_then(|e| e.cost),
                    elapsed: ended
                        .as_ref()
                        .map_or_else(|| c.started.elapsed(), |e| e.elapsed),
                }
            })
            .collect()
    }

    fn answer(&self, id: &str, reply: &str) -> Result<(), crate::tool::escalate::AnswerError> {
        self.inner.team.board.reply(id, reply)
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            *lock(&self.inner.turn) = None;
            let tasks: Vec<JoinHandle<()>> = lock(&self.inner.children)
                .iter_mut()
                .filter_map(|child| {
                    child.cancel.cancel();
                    child.task.take()
                })
                .collect();
            let all = futures_util::future::join_all(tasks);
            let _ = tokio::time::timeout(SHUTDOWN_WAIT, all).await;
        })
    }

    fn handle<'a>(
        &'a self,
        tool: AgentTool,
        args: &'a Value,
        turn: Turn<'a>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(self.inner.handle(tool, args, turn))
    }
}
