//! `Conversation`: the one API for a conversation's whole life. Every front end (one-shot
//! text, headless JSON, `-e`, macros, the REPL), every sub-conversation and the library use
//! it the same way:
//!
//! 1. [`Conversation::resolve`] builds it from a [`ConversationSpec`] (model, role and
//!    session commands, working directory, environment, approver, asker, cancellation),
//!    and [`Conversation::prepare`] applies the spec's commands and, for a run that holds
//!    its session throughout, takes the session's lock — [`Conversation::open`] does both;
//! 2. [`Conversation::submit`] takes every [`Op`]: a prompt, a command ([`Command`] →
//!    [`Applied`]), an approval, an answer, an interrupt; what happens comes back as
//!    events on the emitter it is given. Drivers read it only through
//!    [`Conversation::status`] and the few reports in `queries.rs`; what they share with
//!    it while a turn runs they made themselves and gave in the spec (the cancellation
//!    token, the queue of lines typed meanwhile, the todo list) or reach through
//!    [`Conversation::remote`] (approvals, answers, interrupts);
//! 3. [`Conversation::close`] applies the save policy once, shuts its sub-agents down,
//!    lets the session and MCP servers go and says how it ended ([`Closed`]), which
//!    [`Closed::exit_status`] maps to the process's exit status.
//!
//! [`Conversation::child`] starts a sub-conversation: its own history, tool scope and MCP
//! lease, a cancellation token derived from its parent's (cancelling a parent cancels its
//! whole tree), and its approvals and questions routed to the parent's approver and asker,
//! labelled with who asks. Front ends only parse, choose an emitter and an
//! approver/asker, and print; none of them takes locks, merges sessions or saves.

pub mod catalog;
mod context;
mod engine;
mod exit;
pub mod history;
mod hooked;
pub mod info;
mod lineage;
mod op;
pub mod policy;
mod queries;
mod reconfigure;
mod slash;
mod supervisor;

use futures_util::future::BoxFuture;
use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::Env;
use crate::conversation::context::RequestContext;
use crate::conversation::engine::command;
use crate::conversation::engine::{Engine, RunRequest};
use crate::error::CoreError;
use crate::hooks;
use crate::session::tracker::SessionHold;
use crate::state::AppState;
use crate::tool::approve::Approver;
use crate::tool::ask::Asker;
use loki_protocol::command::{Applied, Command};
use loki_protocol::emitter::{Discard, Emitter};
use loki_protocol::event::ConversationId;
use loki_protocol::op::Op;
use loki_protocol::op::Reply;
use loki_protocol::op::{RunOptions, RunOutcome, UserInput};

pub use exit::{Closed, Failure, Finished, Outside};
pub use op::Remote;

// What other modules use of the conversation's internals: functions and constants, no
// state (the conversation's context and engine are private to this module).
pub use context::{CarryOn, PromptQueue, provider_for};
pub use engine::command::{API_APPROVAL_KEY, DISPLAY_SETTINGS, SETTABLE, parse_bool};
pub use engine::emitter::Sink;
pub use engine::{confinement, retrieval, rule_check, tasks};
pub use queries::{Report, SessionStatus, Status};

/// Where a conversation reports what happens to its session outside a run (waiting for
/// another writer's lock, merging what others stored): one line each.
pub type Notify = Arc<dyn Fn(&str) + Send + Sync>;

/// What a conversation starts with. Everything is optional: the default is the
/// configured model, no role or session, the process's working directory and
/// environment, no one to approve calls or answer questions.
#[derive(Default, Clone)]
pub struct ConversationSpec {
    /// Its id in events (a front end that needs it before the conversation exists makes
    /// one with [`loki_protocol::event::next_conversation_id`]); else a new one.
    pub id: Option<ConversationId>,
    /// `client:model` (`-m`); else the configured default. Applied last, so it wins over
    /// the model of a role or session the commands choose.
    pub model: Option<String>,
    /// `cmd_prelude` / `repl_prelude` (`role:<name>`, `session:<name>`,
    /// `<session>:<role>`), applied before `commands`. A session with history keeps its
    /// own role.
    pub prelude: Option<String>,
    /// Commands applied in order when the conversation is prepared (`-s`, `-r`, `--prompt`,
    /// `--rag`, …).
    pub commands: Vec<Command>,
    /// Forget the session's conversation once it is held (`--empty-session`).
    pub empty_session: bool,
    /// Working directory for relative paths, tools and `{{__cwd__}}`.
    pub cwd: Option<PathBuf>,
    /// Environment snapshot for tools, `$SHELL` and system variables.
    pub env: Option<Arc<Env>>,
    /// Who approves tool calls that need approval.
    pub approver: Option<Arc<dyn Approver>>,
    /// Who answers the conversation's questions.
    pub asker: Option<Arc<dyn Asker>>,
    /// Offer the user-interaction tools (`user__ask` …).
    pub user_tools: bool,
    /// Approve every tool call (`--yolo`).
    pub yolo: bool,
    /// Show the assembled input instead of calling the model (`--dry-run`).
    pub dry_run: bool,
    /// Do not stream answers (`-S`).
    pub no_stream: bool,
    /// Hold the session's lock from [`Conversation::prepare`] to [`Conversation::finish`]
    /// (a one-shot run: a concurrent run on the same session waits for this one's save).
    pub hold_session: bool,
    /// Save the session at the end whatever the save policy says (`--save-session`).
    pub force_save: bool,
    /// The cancellation token (a front end that listens for signals, or shows a turn
    /// until it is stopped, makes it first and keeps it: the conversation hands out no
    /// token of its own).
    pub cancel: Option<CancellationToken>,
    /// Where lines typed during a turn wait for its next step (a terminal that reads
    /// them while the turn runs makes it and keeps it); else one of its own.
    pub queue: Option<Arc<PromptQueue>>,
    /// Its todo list (a driver that shows it as a plan after a todo tool ran makes it
    /// and keeps it); else one of its own.
    pub todo: Option<Arc<std::sync::Mutex<crate::tool::todo::TodoList>>>,
    /// How a sub-conversation is named when it asks (`explorer`).
    pub label: Option<String>,
    /// Where session notices outside a run go.
    pub notices: Option<Notify>,
    /// Where the events of its sub-agents go (a terminal's live view, `stream-json`);
    /// none: they are not shown.
    pub observer: Option<Arc<dyn Emitter>>,
    /// The board its sub-agents' questions go on, when the front end answers them itself
    /// (`answer` lines of `--input-format stream-json`); else one of its own.
    pub escalations: Option<Arc<crate::tool::escalate::Escalations>>,
    /// Build an agent's knowledge base from its `documents` without asking
    /// (`--build-agent-rag`).
    pub build_agent_rag: bool,
    /// Offer the todo tools and go on while the list has open items (`--auto-continue`).
    pub auto_continue: bool,
    /// How the user carries on an answer cut off at the output limit.
    pub carry_on: crate::conversation::CarryOn,
    /// Tools the caller runs itself (an OpenAI client's `tools`): a call of one ends the
    /// run with the call in [`RunOutcome::client_calls`].
    pub client_tools: Vec<crate::client::ToolSpec>,
    /// What the caller asks of the answer's form (an OpenAI client's `stop`, `seed`,
    /// `response_format`, `tool_choice`).
    pub controls: crate::client::Controls,
    /// Off the record: nothing is written, and tools that write or run are not offered.
    pub otr: bool,
    /// Keep the conversation as history when it had no session: at close it is saved as
    /// an autonamed session unless off the record or `save_session: false` (see
    /// [`policy::keeps_history`]). The terminal's drivers set it; servers do not.
    pub history: bool,
    /// Offer the model no tools, whatever the configuration says (a server whose
    /// `api.tools` are off).
    pub no_tools: bool,
    /// The editor holding the files, whose buffers the file tools read and write.
    pub editor_files: Option<Arc<dyn crate::tool::EditorFiles>>,
    /// The sandbox to use as it is (a server's `api.tools.root`, a sub-agent's parent's);
    /// else one is made for the working directory in `sandbox_mode`.
    pub sandbox: Option<Arc<crate::sandbox::Sandbox>>,
    /// The sandbox mode (`--sandbox`); else `sandbox:` of config.yaml, else
    /// `workspace-write` where the kernel can confine.
    pub sandbox_mode: Option<crate::sandbox::SandboxMode>,
    /// More directories commands and file tools may write (`--add-dir`).
    pub add_dirs: Vec<PathBuf>,
    /// Rules of the working directory's project, on top of the configured ones (an ACP
    /// session whose directory is not the process's).
    pub project_permissions: Option<crate::config::permissions::PermissionsConfig>,
    /// MCP servers the client brought (an editor's `mcpServers`, `--mcp-config`), used
    /// on top of the configured ones.
    pub mcp_servers: Vec<crate::mcp::config::ServerSpec>,
    /// Hooks around every tool call; a child gets its parent's.
    pub hooks: Option<Arc<dyn crate::hooks::Hooks>>,
}

impl std::fmt::Debug for ConversationSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConversationSpec")
            .field("model", &self.model)
            .field("commands", &self.commands)
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

/// The command hooks of config.yaml for a conversation, if any are configured.
fn configured_hooks(
    state: &AppState,
    ctx: &RequestContext,
    notices: &Notify,
) -> Option<Arc<dyn hooks::Hooks>> {
    let settings = state.config.hooks.clone();
    if settings.is_empty() {
        return None;
    }
    let notices = Arc::clone(notices);
    let warn: hooks::command::Warn =
        Arc::new(move |line: &str| notices(&format!("warning: {line}")));
    // Hooks key their state by `session_id` (Claude Code's): one of its own per
    // conversation, unique across runs (the conversation's id, `c1`, is per process).
    let session_id = uuid::Uuid::new_v4().to_string();
    Some(Arc::new(
        hooks::command::CommandHooks::new(settings, ctx.cwd.clone(), session_id, warn)
            .confined(ctx.sandbox.clone()),
    ))
}

/// One conversation and its lifecycle.
pub struct Conversation {
    engine: Engine,
    ctx: RequestContext,
    prelude: Option<String>,
    pending: Vec<Command>,
    empty_session: bool,
    hold_session: bool,
    /// The session's lock, for a run that holds it from [`Conversation::prepare`] to
    /// [`Conversation::close`] (empty otherwise: each turn and save takes its own).
    held: SessionHold,
    force_save: bool,
    /// [`ConversationSpec::history`].
    history: bool,
    label: String,
    notices: Notify,
    warnings: Vec<String>,
    observer: Option<Arc<dyn Emitter>>,
    /// The board its questions (and its sub-agents') wait on for an [`Op::Answer`].
    questions: Arc<crate::tool::escalate::Escalations>,
    /// The running turn, for [`Op::Interrupt`].
    interrupter: Arc<op::Interrupter>,
    build_agent_rag: bool,
    /// The first run that failed (for [`Conversation::close`]).
    failure: Option<Failure>,
    /// What `SessionStart` hooks gave, sent with the next prompt.
    hook_context: Vec<String>,
    /// Whether [`Conversation::close`] ran (see the `Drop` impl).
    closed: bool,
}

impl Drop for Conversation {
    /// A conversation dropped without [`Conversation::close`] saves nothing (saving needs
    /// the async store), so a driver path that skips the close loses what `close` would
    /// have written: the log says so, naming the session, so such a path shows up.
    fn drop(&mut self) {
        if !self.closed && policy::save_after_run(&self.ctx, self.force_save) {
            let name = self
                .ctx
                .session
                .as_ref()
                .map(crate::session::handle::SessionHandle::name)
                .unwrap_or_default();
            tracing::warn!(
                "conversation {} dropped without close: session `{name}` not saved",
                self.ctx.id
            );
        }
    }
}

/// A setting the driver gave in its spec replaces the conversation's default; one it
/// left out keeps it.
fn given<T>(own: &mut T, given: Option<T>) {
    if let Some(value) = given {
        *own = value;
    }
}

impl std::fmt::Debug for Conversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversation")
            .field("ctx", &self.ctx)
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

impl Conversation {
    /// Resolves the conversation's model and settings from `spec`, without applying its
    /// commands yet (see [`Conversation::prepare`]). Fails only on an unknown model.
    pub fn resolve(state: &Arc<AppState>, spec: ConversationSpec) -> Result<Self, CoreError> {
        let mut ctx = RequestContext::resolve(state, spec.model.as_deref())?;
        given(&mut ctx.id, spec.id);
        given(&mut ctx.cwd, spec.cwd);
        given(&mut ctx.env, spec.env);
        given(&mut ctx.approver, spec.approver);
        given(&mut ctx.asker, spec.asker);
        given(&mut ctx.cancel, spec.cancel);
        given(&mut ctx.queue, spec.queue);
        given(&mut ctx.todo, spec.todo);
        ctx.user_tools = spec.user_tools;
        ctx.auto_continue = spec.auto_continue;
        ctx.carry_on = spec.carry_on;
        ctx.client_tools = spec.client_tools;
        let notices = spec.notices.unwrap_or_else(|| Arc::new(|_: &str| {}));
        ctx.client_mcp_servers.extend(
            spec.mcp_servers
                .into_iter()
                .map(|server| state.mcp.add(server)),
        );
        ctx.controls = spec.controls;
        ctx.controls.effort = ctx.controls.effort.or(state.config.reasoning_effort);
        ctx.function_calling_support &= !spec.no_tools;
        ctx.editor_files = spec.editor_files;
        ctx.add_dirs = spec.add_dirs;
        // `--add-dir` admits file tools as `additional_directories` does, not only commands.
        ctx.tool_policy.additional_directories.extend(
            ctx.add_dirs
                .iter()
                .map(|d| crate::tool::paths::resolve(&ctx.cwd, &d.to_string_lossy()).path)
                .map(|d| d.to_string_lossy().into_owned()),
        );
        if let Some(project) = spec.project_permissions {
            let mut permissions = state.config.permissions.clone();
            permissions.extend(project);
            ctx.tool_policy.rules = Arc::new(crate::config::permissions::Rules::new(&permissions));
        }
        ctx.sandbox = match spec.sandbox {
            Some(given) => Some(given),
            None => {
                let mode = spec
                    .sandbox_mode
                    .or(state.config.sandbox.mode)
                    .unwrap_or_else(crate::conversation::confinement::default_mode);
                crate::conversation::confinement::sandbox_for(state, &ctx, mode)?
            }
        };
        ctx.tool_hooks = hooks::Chain::of(configured_hooks(state, &ctx, &notices), spec.hooks);
        if spec.otr {
            ctx.otr.set(true);
            ctx.save = false;
        }
        if spec.yolo {
            ctx.tool_policy.yolo.set(true);
        }
        let mut pending = spec.commands;
        if let Some(model) = spec.model {
            // The model asked for wins over the models of the roles and sessions applied.
            ctx.model_asked_for = true;
            pending.push(Command::SetModel(model));
        }
        let label = spec.label.unwrap_or_else(|| ctx.id.to_string());
        Ok(Self {
            engine: Engine::new(Arc::clone(state)),
            ctx,
            prelude: spec.prelude.filter(|p| !p.trim().is_empty()),
            pending,
            empty_session: spec.empty_session,
            hold_session: spec.hold_session,
            held: SessionHold::default(),
            force_save: spec.force_save,
            history: spec.history,
            label,
            notices,
            warnings: Vec::new(),
            observer: spec.observer,
            questions: spec
                .escalations
                .unwrap_or_else(|| Arc::new(crate::tool::escalate::Escalations::new())),
            interrupter: Arc::default(),
            build_agent_rag: spec.build_agent_rag,
            failure: None,
            hook_context: Vec::new(),
            closed: false,
        }
        .with_switches(spec.dry_run, spec.no_stream))
    }

    fn with_switches(mut self, dry_run: bool, no_stream: bool) -> Self {
        self.ctx.dry_run |= dry_run;
        if no_stream {
            self.ctx.stream = false;
        }
        self
    }

    /// [`Conversation::resolve`] and [`Conversation::prepare`].
    pub async fn open(state: &Arc<AppState>, spec: ConversationSpec) -> Result<Self, CoreError> {
        let mut conversation = Self::resolve(state, spec)?;
        conversation.prepare().await?;
        Ok(conversation)
    }

    /// Applies the spec's prelude and commands, takes the session's lock when the
    /// conversation holds it throughout, and forgets the session's history when asked.
    /// Warnings the user must see (a session's model that is not available) are kept for
    /// [`Conversation::take_warnings`].
    pub async fn prepare(&mut self) -> Result<(), CoreError> {
        let state = Arc::clone(self.state());
        if let Some(prelude) = self.prelude.take().filter(|_| !self.ctx.otr.get()) {
            for command in prelude_commands(&prelude)? {
                // A session with history keeps its role.
                let keeps_role =
                    matches!(command, Command::UseRole(_)) && !self.ctx.history.is_empty();
                if !keeps_role {
                    command::apply(&state, &mut self.ctx, command, &Discard).await?;
                }
            }
        }
        for command in std::mem::take(&mut self.pending) {
            // An agent's warnings (tools it cannot have) are shown; a session's model
            // warning is worked out once all commands are applied (a later `-m` wins).
            let agent = matches!(command, Command::UseAgent { .. });
            let applied = self.apply(command, &Discard).await?;
            if agent {
                self.warnings
                    .extend(applied.warnings().map(ToString::to_string));
            }
        }
        // From here on a role's model is the user's choice again (`.role` in the REPL).
        self.ctx.model_asked_for = false;
        if self.hold_session {
            self.held = self.lock_session().await?;
        }
        if self.empty_session && self.ctx.session.is_some() {
            command::apply(&state, &mut self.ctx, Command::ClearConversation, &Discard).await?;
        }
        if let Some(warning) = self.ctx.session_model_warning()
            && !self.warnings.contains(&warning)
        {
            self.warnings.push(warning);
        }
        if let Some(hooks) = self.ctx.tool_hooks.clone().filter(|_| self.ctx.depth == 0) {
            let source = if self.ctx.history.is_empty() {
                "startup"
            } else {
                "resume"
            };
            self.hook_context = hooks.session_start(source).await;
        }
        Ok(())
    }

    /// Starts a sub-conversation of this one ([`lineage::Lineage::open`]): `spec`'s model,
    /// role and session, this conversation's working directory and environment unless
    /// `spec` names others, a cancellation token that this conversation's cancels, its
    /// approvals and questions answered by this conversation's approver and asker,
    /// labelled `<parent label> › <child label>`, and the user's decisions (yolo, off the
    /// record, the run's budget) shared with it, now and after a change. The user started
    /// it (a macro): it asks for an agent's missing variables as this one would.
    pub async fn child(&self, spec: ConversationSpec) -> Result<Self, CoreError> {
        let mut child = self.lineage().open(spec).await?;
        child.ctx.user_started = self.ctx.user_started;
        Ok(child)
    }

    /// What this conversation's children inherit.
    pub(crate) fn lineage(&self) -> lineage::Lineage {
        lineage::Lineage::of(self)
    }

    /// The shared services (drivers hold their own: the conversation hands out none).
    fn state(&self) -> &Arc<AppState> {
        self.engine.state()
    }

    /// Its id in events.
    pub fn id(&self) -> &ConversationId {
        &self.ctx.id
    }

    /// The open session as the YAML a person edits (`.edit session`), with what the
    /// conversation holds of it; none without a session.
    pub fn session_yaml(&self) -> Option<Result<String, CoreError>> {
        let session = self.ctx.session_snapshot()?;
        Some(loki_wire::session_yaml::to_yaml(&session).map_err(|e| {
            CoreError::InvalidRequest(format!("cannot write the session as YAML: {e}"))
        }))
    }

    /// What `usage` costs with its model (none when the model has no prices).
    pub fn cost_of(&self, usage: loki_wire::message::Usage) -> Option<f64> {
        crate::usage::cost_of(&self.ctx.model.config, usage)
    }

    /// The conversation so far as text, one entry per user or assistant message (for a
    /// client that shows a loaded session).
    pub fn transcript(&self) -> Vec<(loki_wire::message::Role, String)> {
        self.ctx
            .history
            .iter()
            .filter(|m| {
                matches!(
                    m.role,
                    loki_wire::message::Role::User | loki_wire::message::Role::Assistant
                )
            })
            .map(|m| (m.role, m.text_content()))
            .filter(|(_, text)| !text.is_empty())
            .collect()
    }

    /// Starts the MCP servers of the current tool scope in the background (while the
    /// user types), their lease put in `slot`; the conversation's own lease from its
    /// last turn is let go once the new one is held, so servers in both keep running.
    pub fn warm_mcp(&mut self, slot: Arc<std::sync::Mutex<Option<crate::mcp::McpLease>>>) {
        if !self.ctx.function_calling_support {
            return;
        }
        let (servers, _) = crate::conversation::engine::scope::mcp_servers(self.state(), &self.ctx);
        let state = Arc::clone(self.state());
        let previous = self.ctx.mcp_lease.take();
        tokio::spawn(async move {
            let lease = state.mcp.prepare(&servers).await;
            if let Ok(mut slot) = slot.lock() {
                *slot = Some(lease);
            }
            drop(previous);
        });
    }

    /// Warnings from preparing it, for the front end to show once.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Does what a driver asks: runs a prompt, applies a command, answers an approval or
    /// a question, interrupts, reconfigures, runs one tool. What happens is reported as
    /// events on `emitter`; the reply says what the op did, one variant per op kind. A
    /// driver that knows which op it sends calls its typed entry point instead
    /// ([`Conversation::prompt`], [`Conversation::command`], [`Conversation::call_tool`]).
    pub async fn submit(&mut self, op: Op, emitter: &dyn Emitter) -> Result<Reply, CoreError> {
        match op {
            Op::Prompt {
                input,
                options,
                role,
            } => self
                .prompt(input, options, role, emitter)
                .await
                .map(Reply::Ran),
            Op::Command(command) => self.command(command, emitter).await.map(Reply::Applied),
            Op::RunTool { name, arguments } => self
                .call_tool(&name, &arguments, emitter)
                .await
                .map(Reply::Tool),
            remote @ (Op::Approve { .. } | Op::Answer { .. } | Op::Interrupt) => self
                .remote()
                .submit(remote)
                .map(|()| Reply::Done)
                .map_err(|e| CoreError::InvalidRequest(e.to_string())),
        }
    }

    /// Runs a prompt ([`Op::Prompt`]); with `role`, one message with that role, the
    /// conversation's own role and model restored afterwards.
    pub async fn prompt(
        &mut self,
        input: UserInput,
        options: RunOptions,
        role: Option<String>,
        emitter: &dyn Emitter,
    ) -> Result<RunOutcome, CoreError> {
        let outer = self.begin_op();
        let result = match role {
            None => self.run(input, options, emitter).await,
            Some(role) => self.run_with_role(&role, input, options, emitter).await,
        };
        self.end_op(outer);
        result
    }

    /// Applies a command ([`Op::Command`]): a dot-command or a flag, normalised.
    pub async fn command(
        &mut self,
        command: Command,
        emitter: &dyn Emitter,
    ) -> Result<Applied, CoreError> {
        let outer = self.begin_op();
        let result = self.apply(command, emitter).await;
        self.end_op(outer);
        result
    }

    /// Runs one tool call as the model would have it run ([`Op::RunTool`], `loki
    /// --run-tool`): every tool loki has, whatever `enabled_tools` offers models.
    pub async fn call_tool(
        &mut self,
        name: &str,
        arguments: &str,
        emitter: &dyn Emitter,
    ) -> Result<loki_protocol::op::ToolOutcome, CoreError> {
        let outer = self.begin_op();
        self.ctx.enabled_tools = Some("all".into());
        self.ctx.function_calling_support = true;
        let result = self
            .engine
            .run_tool(&mut self.ctx, name, arguments, emitter)
            .await;
        self.end_op(outer);
        result
    }

    /// Starts an op under a token of its own, a child of the conversation's: an
    /// [`Op::Interrupt`] stops this op (and what it started) and the next one starts
    /// clean, while cancelling the conversation's token (a signal, a parent, a timer, a
    /// client that went away) stops every op from now on. Returns the conversation's
    /// token, for [`Conversation::end_op`].
    fn begin_op(&mut self) -> CancellationToken {
        let op_cancel = self.ctx.cancel.child_token();
        self.interrupter.started(op_cancel.clone());
        std::mem::replace(&mut self.ctx.cancel, op_cancel)
    }

    /// Ends the op [`Conversation::begin_op`] started.
    fn end_op(&mut self, outer: CancellationToken) {
        self.interrupter.ended();
        self.ctx.cancel = outer;
    }

    /// A handle for the ops that must reach it while a turn runs (approvals, answers,
    /// interrupts), from another task.
    pub fn remote(&self) -> Remote {
        Remote {
            approver: Arc::clone(&self.ctx.approver),
            questions: Arc::clone(&self.questions),
            interrupter: Arc::clone(&self.interrupter),
        }
    }

    /// Applies a command (model, role, session, setting, …); what it did comes back
    /// typed, saves and compressions also as events.
    #[inline(never)]
    fn apply<'a>(
        &'a mut self,
        command: Command,
        emitter: &'a dyn Emitter,
    ) -> BoxFuture<'a, Result<Applied, CoreError>> {
        Box::pin(async move {
            let state = Arc::clone(self.state());
            // A conversation without a session that opens one without carrying what was
            // said into it (`.session`, answered no) is kept as history first, as it
            // would be when it ended; if the session cannot be opened, the conversation
            // goes on in that history entry.
            let kept = if matches!(command, Command::OpenSession(_)) && self.keeps_history() {
                self.save_history(emitter).await;
                Some((
                    self.ctx.session.take(),
                    std::mem::take(&mut self.ctx.session_sync),
                ))
            } else {
                None
            };
            let retry = command.clone();
            let uses_agent = matches!(retry, Command::UseAgent { .. });
            let applied = match command::apply(&state, &mut self.ctx, command, emitter).await {
                // Only a conversation the user started asks for an agent's missing
                // variables; a sub-agent started without them is refused, and its parent
                // told which.
                Err(CoreError::Agent(crate::agent::AgentError::MissingVariables {
                    missing,
                    ..
                })) if matches!(retry, Command::UseAgent { .. }) && self.ctx.user_started => {
                    let completed = self.ask_variables(retry, &missing).await?;
                    command::apply(&state, &mut self.ctx, completed, emitter).await
                }
                other => other,
            };
            let applied = match (applied, kept) {
                (Err(e), Some((session, sync))) => {
                    self.ctx.session = session;
                    self.ctx.session_sync = sync;
                    return Err(e);
                }
                (applied, _) => applied?,
            };
            if uses_agent && let Err(e) = self.use_agent_knowledge().await {
                // The agent cannot be used without what it knows.
                let _ = command::apply(&state, &mut self.ctx, Command::ExitAgent, &Discard).await;
                return Err(e);
            }
            Ok(applied)
        })
    }

    /// An agent with `documents` answers with its own knowledge base, `agent-<name>`,
    /// built from them (relative paths start in the agent's directory) on first use:
    /// after asking the user, or at once with `--build-agent-rag`; where nobody can be
    /// asked, an error naming the flag.
    fn use_agent_knowledge(
        &mut self,
    ) -> futures_util::future::BoxFuture<'_, Result<(), CoreError>> {
        Box::pin(async move {
            let Some(def) = self.ctx.agent.as_ref().map(|a| Arc::clone(&a.def)) else {
                return Ok(());
            };
            if def.config.documents.is_empty() {
                return Ok(());
            }
            let state = Arc::clone(self.state());
            let name = crate::agent::knowledge_base_name(&def.name);
            let dir = &state.paths.rags_dir;
            if !crate::rag::store::meta_path(dir, &name).exists() {
                if !self.build_agent_rag {
                    let prompt = format!(
                        "Agent `{}` has {} document(s) but no knowledge base yet. Build it now?",
                        def.name,
                        def.config.documents.len()
                    );
                    let question = loki_protocol::event::Question::Confirm { prompt };
                    match self.ctx.asker.ask(&self.label, &question).await {
                        crate::tool::ask::Answer::Confirm(true) => {}
                        crate::tool::ask::Answer::Cancelled => return Err(CoreError::Cancelled),
                        crate::tool::ask::Answer::Confirm(false) => {
                            return Err(CoreError::Conflict(format!(
                                "agent `{}` needs its knowledge base; build it with --build-agent-rag",
                                def.name
                            )));
                        }
                        _ => {
                            return Err(CoreError::Conflict(format!(
                                "agent `{}` has documents but no knowledge base yet: run it once with --build-agent-rag (or on a terminal, which asks)",
                                def.name
                            )));
                        }
                    }
                }
                // Outside a run (the agent is being prepared): a notice line.
                (self.notices)(&format!(
                    "building the knowledge base of agent `{}` from {} document(s)…",
                    def.name,
                    def.config.documents.len()
                ));
                let progress = crate::rag::progress::Silent;
                let build = crate::conversation::retrieval::build_context(
                    &state,
                    &name,
                    &def.dir,
                    &progress,
                    self.ctx.cancel.clone(),
                );
                let options = crate::conversation::retrieval::default_build_options(
                    &state,
                    def.config.documents.clone(),
                );
                let report = crate::rag::build::build(&build, &name, options).await?;
                state.rags.invalidate(dir, &name);
                (self.notices)(&format!(
                    "knowledge base `{name}`: {} chunk(s) from {} document(s)",
                    report.chunks, report.files
                ));
            }
            command::apply(&state, &mut self.ctx, Command::UseRag(name), &Discard).await?;
            Ok(())
        })
    }

    /// An agent's variables that have no value, asked of the conversation's user (a
    /// terminal); where nobody can answer, the error naming them all.
    async fn ask_variables(
        &self,
        command: Command,
        missing: &[(String, String)],
    ) -> Result<Command, CoreError> {
        let Command::UseAgent {
            name,
            mut variables,
            session,
        } = command
        else {
            return Ok(command);
        };
        let unanswered = || {
            CoreError::Agent(crate::agent::AgentError::MissingVariables {
                agent: name.clone(),
                missing: missing.to_vec(),
            })
        };
        for (variable, description) in missing {
            let prompt = if description.is_empty() {
                format!("{variable}:")
            } else {
                format!("{variable} ({description}):")
            };
            let question = loki_protocol::event::Question::Text { prompt };
            match self.ctx.asker.ask(&self.label, &question).await {
                crate::tool::ask::Answer::Text(value) if !value.trim().is_empty() => {
                    variables.push((variable.clone(), value));
                }
                crate::tool::ask::Answer::Cancelled => return Err(CoreError::Cancelled),
                _ => return Err(unanswered()),
            }
        }
        Ok(Command::UseAgent {
            name,
            variables,
            session,
        })
    }

    /// Sends a prompt through the engine.
    #[inline(never)]
    fn run<'a>(
        &'a mut self,
        input: UserInput,
        options: RunOptions,
        emitter: &'a dyn Emitter,
    ) -> BoxFuture<'a, Result<RunOutcome, CoreError>> {
        Box::pin(async move {
            self.install_supervisor();
            // The run has a token of its own (cancelled by the conversation's), which its
            // budget cancels when spent — stopping the run and every sub-agent it started.
            let run_cancel = self.ctx.cancel.child_token();
            let outer = std::mem::replace(&mut self.ctx.cancel, run_cancel.clone());
            let own_budget = self.ctx.budget.is_none();
            if own_budget {
                // An agent's own limits, else `max_cost` (`--max-budget-usd`) for a plain run.
                let (max_tokens, max_cost) = match &self.ctx.agent {
                    Some(a) => (a.def.config.max_tokens, a.def.config.max_cost),
                    None => (None, self.state().config.max_cost),
                };
                self.ctx.budget = crate::usage::Budget::new(max_tokens, max_cost, run_cancel);
            }
            let result = self.run_continuing(input, options, emitter).await;
            if let Err(e) = &result {
                self.failure.get_or_insert(Failure::of(e));
            }
            self.ctx.cancel = outer;
            if own_budget {
                self.ctx.budget = None;
            }
            result
        })
    }

    /// [`Conversation::run`] with its token and budget in place: the run, then the
    /// automatic continuations while the agent's todo list has open items.
    async fn run_continuing(
        &mut self,
        mut input: UserInput,
        options: RunOptions,
        emitter: &dyn Emitter,
    ) -> Result<RunOutcome, CoreError> {
        // `/name args` runs a skill: its instructions, arguments filled in, are the prompt;
        // a command's model and allowed tools hold for this turn.
        let command_turn = self.start_command_turn(&mut input, emitter);
        let result = self.run_prompted(input, options, emitter).await;
        self.end_command_turn(command_turn);
        result
    }

    /// [`Conversation::run_continuing`] once a `/name` prompt is expanded.
    async fn run_prompted(
        &mut self,
        mut input: UserInput,
        options: RunOptions,
        emitter: &dyn Emitter,
    ) -> Result<RunOutcome, CoreError> {
        if input.continuation.is_none()
            && let Err(e) = self.prompt_hooks(&mut input).await
        {
            self.engine.refuse(&self.ctx, &options, emitter, &e);
            return Err(e);
        }
        let request = RunRequest {
            input: Some(input),
            options,
        };
        let mut outcome = self.engine.run(&mut self.ctx, request, emitter).await?;
        // An agent with `auto_continue` is asked to go on while its todo list has open
        // items, up to `max_auto_continues` times, unless it answers a reminder as it
        // answered before and closed no item meanwhile (it is stuck).
        let mut continued = 0;
        while let Some(prompt) = self.continuation(continued) {
            continued += 1;
            let limit = self.max_auto_continues();
            let open = self.open_todos();
            let sink = crate::conversation::Sink::for_context(&self.ctx, emitter);
            sink.emit(loki_protocol::event::Event::Notice(
                loki_protocol::event::Notice::info(format!(
                    "📋 Auto-continuing ({continued}/{limit}): {open} incomplete todo(s) remain"
                )),
            ));
            sink.flush();
            let previous = std::mem::take(&mut outcome.text);
            outcome = self.run_again(prompt, options, emitter).await?;
            let progressed = self.open_todos() < open;
            if !progressed && outcome.text.trim() == previous.trim() && !previous.trim().is_empty()
            {
                break;
            }
        }
        self.stop_hooks(outcome, options, emitter).await
    }

    /// One more turn of the same run, prompted with `text`: an agent told to go on, or
    /// a `Stop` hook's reason to.
    async fn run_again(
        &mut self,
        text: String,
        options: RunOptions,
        emitter: &dyn Emitter,
    ) -> Result<RunOutcome, CoreError> {
        let request = RunRequest {
            input: Some(UserInput {
                text,
                ..UserInput::default()
            }),
            options,
        };
        self.engine.run(&mut self.ctx, request, emitter).await
    }

    fn max_auto_continues(&self) -> usize {
        self.ctx
            .agent
            .as_ref()
            .and_then(|a| a.def.config.max_auto_continues)
            .unwrap_or(10)
    }

    fn open_todos(&self) -> usize {
        self.ctx
            .todo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .open()
    }

    /// The message asking the agent to go on, when its todo list has open items and it
    /// has not been asked `max_auto_continues` times in a row yet.
    fn continuation(&self, continued: usize) -> Option<String> {
        let config = self.ctx.agent.as_ref().map(|a| &a.def.config);
        let enabled = self.ctx.auto_continue || config.is_some_and(|c| c.auto_continue);
        if !enabled || continued >= self.max_auto_continues() {
            return None;
        }
        let list = self
            .ctx
            .todo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        (list.open() > 0).then(|| {
            crate::tool::todo::continuation(
                config.and_then(|c| c.continuation_prompt.as_deref()),
                &list,
            )
        })
    }

    /// Gives an agent that may spawn sub-agents its supervisor (once per activation), and
    /// a conversation without an agent its delegating one (each run). A sub-agent got its
    /// place in the team when it was opened.
    fn install_supervisor(&mut self) {
        let spawns = self
            .ctx
            .agent
            .as_ref()
            .is_some_and(|a| a.def.config.can_spawn_agents);
        if spawns && self.ctx.supervisor.is_none() {
            self.ctx.supervisor = Some(Arc::new(supervisor::Supervisor::root(self)));
        } else if !spawns && self.ctx.depth == 0 {
            // Without an agent it may delegate (`task`), with this run's settings.
            self.ctx.supervisor = supervisor::Supervisor::delegating(self)
                .map(|s| Arc::new(s) as Arc<dyn crate::tool::agents::Supervisor>);
        }
    }

    /// Where the events of its sub-agents go from now on (before its first run).
    pub fn observe_sub_agents(&mut self, observer: Arc<dyn Emitter>) {
        self.observer = Some(observer);
    }

    /// Its sub-agents, running and finished (`.agents`).
    pub fn sub_agents(&self) -> Vec<crate::tool::agents::SubAgentReport> {
        self.ctx
            .supervisor
            .as_ref()
            .map(|s| s.report())
            .unwrap_or_default()
    }

    /// One prompt with role `role` (`.role <name> <text>`); the conversation's role,
    /// model and sampling settings are restored afterwards.
    async fn run_with_role(
        &mut self,
        role: &str,
        input: UserInput,
        options: RunOptions,
        emitter: &dyn Emitter,
    ) -> Result<RunOutcome, CoreError> {
        let saved = (
            self.ctx.role.clone(),
            self.ctx.model.clone(),
            Arc::clone(&self.ctx.provider),
            self.ctx.temperature,
            self.ctx.top_p,
            self.ctx.session_model.clone(),
        );
        let state = Arc::clone(self.state());
        // The conversation's own role comes back afterwards, so a session with history
        // may send one message with another (only `.role NAME` alone, which would rewrite
        // the session's system prompt, is refused there); inside an agent it is refused.
        let use_role = if self.ctx.agent.is_some() {
            Command::UseRole(role.into())
        } else {
            Command::ForceRole(role.into())
        };
        let result = match command::apply(&state, &mut self.ctx, use_role, &Discard).await {
            Ok(_) => self.run(input, options, emitter).await,
            Err(e) => Err(e),
        };
        (
            self.ctx.role,
            self.ctx.model,
            self.ctx.provider,
            self.ctx.temperature,
            self.ctx.top_p,
            self.ctx.session_model,
        ) = saved;
        result
    }

    /// Takes the open session's lock (waiting for other writers, then merging what they
    /// stored), released when the hold is dropped.
    async fn lock_session(&mut self) -> Result<SessionHold, CoreError> {
        let state = Arc::clone(self.state());
        let cancel = self.ctx.cancel.clone();
        let notices = Arc::clone(&self.notices);
        let notify = move |line: &str| notices(line);
        self.ctx.lock_session(&state, Some(&cancel), &notify).await
    }

    /// Writes the session after a turn, for drivers whose conversation outlives many
    /// turns with no moment of leaving (ACP, the Agent SDK mode): by the same policy as
    /// [`Conversation::close`] ([`policy::save_after_run`]), so `save_session: false`, a
    /// temporary session and off the record mean the same in every driver. What arrived
    /// is kept whatever the turn ended with. `None` when the policy writes nothing.
    pub async fn save_after_turn(
        &mut self,
        emitter: &dyn Emitter,
    ) -> Result<Option<Applied>, CoreError> {
        if !policy::save_after_run(&self.ctx, self.force_save) {
            return Ok(None);
        }
        self.apply(Command::SaveSession(None), emitter)
            .await
            .map(Some)
    }

    /// Closes the conversation — the one way every driver ends one: its sub-agents are
    /// shut down (waiting for them), a temporary session saved with `--save-session` is
    /// named first (when no run failed or was stopped), the session is written per the
    /// save policy ([`policy::save_after_run`]) — whatever arrived before an error or a
    /// stop included — its lock and MCP servers are let go, and how it ended comes back
    /// ([`Closed::exit_status`] maps it to the process's exit status).
    pub async fn close(mut self, emitter: &dyn Emitter) -> Closed {
        if let Some(supervisor) = self.ctx.supervisor.take() {
            supervisor.shutdown().await;
        }
        // `SessionEnd`: the user's conversation is over (its sub-agents' ends are theirs).
        if let Some(hooks) = self.ctx.tool_hooks.clone().filter(|_| self.ctx.depth == 0) {
            hooks.session_end("other").await;
        }
        let completed = self.failure.is_none() && !self.ctx.cancel.is_cancelled();
        if self.force_save && completed {
            self.engine.autoname_or_warn(&mut self.ctx, emitter).await;
        }
        // `--empty-session` and a turn that failed before anything arrived: the file
        // stays as it was, as it does for a failed turn without the flag.
        let emptied_for_nothing =
            self.empty_session && self.failure.is_some() && self.ctx.history.is_empty();
        let saved = if policy::save_after_run(&self.ctx, self.force_save) && !emptied_for_nothing {
            self.apply(Command::SaveSession(None), emitter).await
        } else {
            if self.keeps_history() {
                self.save_history(emitter).await;
            }
            Ok(Applied::default())
        };
        emitter.flush();
        drop(std::mem::take(&mut self.held));
        self.ctx.mcp_lease = None;
        let session = self
            .ctx
            .session
            .as_ref()
            .map(|s| (s.id().to_string(), s.name()));
        self.closed = true;
        Closed {
            failure: self.failure.take(),
            saved,
            session,
        }
    }

    /// Whether what was said so far is kept as history when this conversation leaves it:
    /// the driver keeps history, the configuration too, and the policy's conditions hold.
    fn keeps_history(&self) -> bool {
        self.history && self.engine.state().config.history && policy::keeps_history(&self.ctx)
    }

    /// Keeps a conversation that had no session as history: an autonamed session
    /// (`_/<timestamp>-<first words>`) in the conversation's store (an agent's own when
    /// one is used), then the store trimmed to `history_max_sessions`/`history_max_mb`.
    /// No model is asked for a title and no event is sent: history is quiet, and a
    /// failure to keep it is a warning, never the run's failure.
    async fn save_history(&mut self, emitter: &dyn Emitter) {
        let state = Arc::clone(self.engine.state());
        let kept = self.ctx.keep_as_history(&state).await;
        let store = self.ctx.sessions(&state);
        let limits = crate::session::history::Limits {
            max_sessions: state.config.history_max_sessions,
            max_bytes: state.config.history_max_mb.saturating_mul(1024 * 1024),
        };
        let kept = match kept {
            Ok(()) => crate::session::history::prune(&*store, limits)
                .await
                .map(|_| ())
                .map_err(CoreError::from),
            Err(e) => Err(e),
        };
        if let Err(e) = kept {
            let sink = crate::conversation::Sink::for_context(&self.ctx, emitter);
            sink.emit(loki_protocol::event::Event::Notice(
                loki_protocol::event::Notice::warning(format!(
                    "could not keep this conversation in the history: {e}"
                )),
            ));
            sink.flush();
        }
    }

    /// Closes the conversation after the driver's work, which gave `ran`: the two merged
    /// in one [`Finished`], with its exit and HTTP statuses.
    pub async fn finish<T>(self, ran: Result<T, CoreError>, emitter: &dyn Emitter) -> Finished<T> {
        Finished {
            ran,
            closed: self.close(emitter).await,
        }
    }
}

/// The commands of a prelude: `role:<name>`, `session:<name>` or `<session>:<role>`.
fn prelude_commands(prelude: &str) -> Result<Vec<Command>, CoreError> {
    let (session, role) = match prelude.split_once(':') {
        Some(("role", name)) => (None, Some(name)),
        Some(("session", name)) => (Some(name), None),
        Some((session, role)) => (Some(session), Some(role)),
        None => {
            return Err(CoreError::InvalidRequest(format!(
                "invalid prelude `{prelude}`: use role:<name>, session:<name> or <session>:<role>"
            )));
        }
    };
    let mut commands = Vec::new();
    if let Some(name) = session {
        commands.push(Command::OpenSession(name.to_string()));
    }
    if let Some(name) = role {
        commands.push(Command::UseRole(name.to_string()));
    }
    Ok(commands)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preludes_become_commands() {
        assert_eq!(
            prelude_commands("role:coder").unwrap(),
            [Command::UseRole("coder".into())]
        );
        assert_eq!(
            prelude_commands("session:work").unwrap(),
            [Command::OpenSession("work".into())]
        );
        assert_eq!(
            prelude_commands("work:coder").unwrap(),
            [
                Command::OpenSession("work".into()),
                Command::UseRole("coder".into())
            ]
        );
        assert!(prelude_commands("nonsense").is_err());
    }
}
