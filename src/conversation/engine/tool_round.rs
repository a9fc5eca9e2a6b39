//! A turn's tools and one round of tool calls: the tools the conversation offers (its
//! scope, MCP servers leased), what they run with (working directory, shell, the
//! environment without loki's credentials, timeouts), and a round — approval, running,
//! progress (`tool_call_progress`), results (`tool_call_finished`), and images tools
//! returned for a vision model.

use futures_util::future::BoxFuture;
use std::sync::{Arc, Mutex};

use crate::client::ToolSpec;
use crate::conversation::Sink;
use crate::conversation::context::RequestContext;
use crate::error::CoreError;
use crate::state::AppState;
use crate::tool::{Background, HiddenEnv, Tool, ToolEnv};
use loki_protocol::event::{Event, ToolCallFinished, ToolCallProgress};
use loki_wire::message::{Content, ContentPart, Message, Role, ToolCall};

/// What a turn's tool calls run with. Owns everything a [`ToolEnv`] borrows; background
/// processes tools leave behind are stopped when it is dropped (at the end of the turn).
pub(super) struct Toolbox {
    /// The tools enabled (all of them can be called).
    pub tools: Vec<Tool>,
    /// The tools declared now: all, or with `load_tools` the core ones and the groups
    /// loaded so far (see [`crate::tool::load`]).
    offered: Vec<Tool>,
    /// Their declarations.
    pub specs: Vec<ToolSpec>,
    cwd: std::path::PathBuf,
    shell: String,
    vars: std::sync::Arc<crate::config::Env>,
    supervisor: Option<std::sync::Arc<dyn crate::tool::agents::Supervisor>>,
    todo: std::sync::Arc<Mutex<crate::tool::todo::TodoList>>,
    user_agent: Option<String>,
    web_search: Option<crate::tool::web_search::WebSearch>,
    tools_env_file: std::path::PathBuf,
    images: Option<Mutex<Vec<String>>>,
    background: Background,
    /// The conversation's background jobs (they outlive the turn).
    jobs: Arc<crate::tool::jobs::Jobs>,
    hidden_env: HiddenEnv,
    progress: crate::mcp::server::ProgressSender,
    progress_rx: tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<(String, String)>>,
    conversation: String,
    editor: Option<std::sync::Arc<dyn crate::tool::EditorFiles>>,
    sandbox: Option<std::sync::Arc<crate::sandbox::Sandbox>>,
}

/// What a round of tool calls produced.
pub(super) struct Round {
    /// The messages to append: the tool results, then the images tools returned.
    pub messages: Vec<Message>,
    /// Every call was a script tool that wrote nothing: in Loki, such a round ends the
    /// turn, since the model has nothing new to read.
    pub silent: bool,
}

impl Toolbox {
    /// Resolves the conversation's tool scope (leasing its MCP servers) and what the
    /// tools run with.
    #[inline(never)]
    pub fn prepare<'a>(
        state: &'a AppState,
        ctx: &'a mut RequestContext,
        sink: &'a Sink<'_>,
    ) -> BoxFuture<'a, Result<Self, CoreError>> {
        Box::pin(async move {
            let tools = crate::conversation::engine::scope::prepare(state, ctx, sink).await?;
            let offered = declared_tools(state, ctx, &tools);
            let specs = crate::tool::specs(&offered);
            // Progress of running calls (MCP notifications), for this conversation only.
            let (progress, progress_rx) = tokio::sync::mpsc::unbounded_channel();
            Ok(Self {
                tools,
                offered,
                specs,
                cwd: ctx.cwd.clone(),
                shell: ctx
                    .env
                    .get("SHELL")
                    .filter(|s| !s.is_empty())
                    .unwrap_or("/bin/sh")
                    .to_string(),
                vars: std::sync::Arc::clone(&ctx.env),
                supervisor: ctx.supervisor.clone(),
                todo: std::sync::Arc::clone(&ctx.todo),
                user_agent: state.config.user_agent(),
                web_search: crate::tool::web_search::WebSearch::from_config(
                    &state.config,
                    &ctx.env,
                ),
                tools_env_file: state.paths.functions_dir.join(".env"),
                images: ctx
                    .model
                    .config
                    .supports_vision
                    .then(|| Mutex::new(Vec::new())),
                background: Background::default(),
                jobs: Arc::clone(&ctx.jobs),
                hidden_env: HiddenEnv::new(&state.config, &ctx.env),
                progress,
                progress_rx: tokio::sync::Mutex::new(progress_rx),
                conversation: ctx.id.to_string(),
                editor: ctx.editor_files.clone(),
                sandbox: ctx.sandbox.clone(),
            })
        })
    }

    /// Runs one round of `calls`; the messages to append (tool results, then a user
    /// message with the images tools returned), and whether every tool wrote nothing.
    /// `None` when the turn was cancelled.
    #[inline(never)]
    pub fn run_round<'a>(
        &'a self,
        state: &'a AppState,
        ctx: &'a mut RequestContext,
        calls: &'a [ToolCall],
        sink: &'a Sink<'_>,
    ) -> BoxFuture<'a, Option<Round>> {
        Box::pin(async move {
            let cancel = ctx.cancel.clone();
            let asker = Arc::clone(&ctx.asker);
            let approver = Arc::clone(&ctx.approver);
            let budget = ctx.budget.clone();
            let hooks = ctx.tool_hooks.clone();
            let checkpoints = ctx.checkpoints.clone();
            let rules = Arc::clone(&ctx.tool_policy.rules);
            let announcing = Announcing {
                inner: approver.as_ref(),
                sink,
                hooks: hooks.as_deref(),
            };
            let preapproved = sampling_preapproved(ctx);
            let sampling = round_sampling(ctx, &announcing, preapproved);
            let env = ToolEnv {
                editor: self.editor.as_deref(),
                mcp_sampler: Some(&sampling),
                hooks: hooks.as_deref(),
                checkpoints: checkpoints.as_deref(),
                budget: budget.as_ref(),
                cwd: &self.cwd,
                shell: &self.shell,
                sandbox: self.sandbox.as_deref(),
                rules: &rules,
                vars: &self.vars,
                supervisor: self.supervisor.as_deref(),
                todo: Some(&self.todo),
                timeout: std::time::Duration::from_secs(state.config.tool_timeout.max(1)),
                cancel: &cancel,
                user_agent: self.user_agent.as_deref(),
                root_dir: &state.paths.config_dir,
                cache_dir: &state.paths.cache_dir,
                tools_env_file: &self.tools_env_file,
                secrets: Some(&state.vault),
                web_search: self.web_search.as_ref(),
                images: self.images.as_ref(),
                background: &self.background,
                jobs: Some(&self.jobs),
                hidden_env: &self.hidden_env,
                progress: Some(&self.progress),
                asker: asker.as_ref(),
                conversation: &self.conversation,
                lsp: Some(&state.lsp),
                memory: (!ctx.otr.get() && state.config.memory).then_some(&*state.memory),
            };
            // Everything enabled can be called, and `load_tools` when it is offered.
            let callable: Vec<Tool> = self
                .tools
                .iter()
                .chain(self.offered.iter().filter(|t| matches!(t, Tool::Load(_))))
                .cloned()
                .collect();
            let mut progress = self.progress_rx.lock().await;
            let results: Option<Vec<crate::tool::CallResult>> = {
                let run = crate::tool::run_round(
                    calls,
                    &callable,
                    env,
                    &mut ctx.tool_policy,
                    &announcing,
                    state.config.max_tool_output,
                );
                // MCP servers report progress of long calls while the round runs.
                tokio::pin!(run);
                loop {
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => break None,
                        results = &mut run => break Some(results),
                        Some((call_id, message)) = progress.recv() => {
                            sink.emit(Event::ToolCallProgress(ToolCallProgress { call_id, message }));
                            sink.flush();
                        }
                    }
                }
            };
            // What sampling spent is the conversation's, a stopped round's too.
            settle_sampling(ctx, &sampling, preapproved, sink);
            // The first confined command of the process found which kernel layers are
            // missing here: said once.
            if let Some(note) = crate::sandbox::missing_layers_note() {
                sink.emit(Event::Notice(loki_protocol::event::Notice::warning(note)));
            }
            let results = results?;
            Some(Round {
                silent: !results.is_empty() && results.iter().all(|r| r.silent),
                messages: self.result_messages(&results, sink),
            })
        })
    }

    /// The round's results as `tool_call_finished` events and the messages for the
    /// model; images from tools (MCP image content) reach a vision model as a user
    /// message right after the results, since tool messages cannot carry images
    /// everywhere.
    fn result_messages(
        &self,
        results: &[crate::tool::CallResult],
        sink: &Sink<'_>,
    ) -> Vec<Message> {
        let mut messages = Vec::with_capacity(results.len() + 1);
        for result in results {
            sink.emit(Event::ToolCallFinished(ToolCallFinished {
                call_id: result.call.id.clone(),
                name: result.call.name.clone(),
                ok: result.ok,
                // As the model receives it: known secrets redacted.
                result: loki_wire::secrets::redact(&result.content).into_owned(),
                error: result.error.clone(),
            }));
            messages.push(result.message());
        }
        let images: Vec<String> = self
            .images
            .as_ref()
            .and_then(|i| i.lock().ok().map(|mut i| std::mem::take(&mut *i)))
            .unwrap_or_default();
        if !images.is_empty() {
            let mut parts = vec![ContentPart::Text {
                text: "Images returned by the tool calls above:".into(),
            }];
            parts.extend(images.into_iter().map(|url| ContentPart::ImageUrl {
                image_url: loki_wire::message::ImageUrl { url },
            }));
            let mut message = Message::text(Role::User, "");
            message.content = Content::Parts(parts);
            messages.push(message);
        }
        messages
    }
}

/// Whether MCP sampling needs no question this round: `--yolo`, `auto_approve_tools:
/// mcp_sampling`, or "always" answered earlier.
fn sampling_preapproved(ctx: &RequestContext) -> bool {
    let policy = &ctx.tool_policy;
    let name = super::mcp_sampling::TOOL;
    policy.yolo() || policy.auto_approve.iter().any(|t| t == name) || policy.always.contains(name)
}

/// What answers the MCP sampling requests of one round: the conversation's model and
/// provider, its token and budget, and `approver` for the question.
fn round_sampling<'a>(
    ctx: &RequestContext,
    approver: &'a dyn crate::tool::approve::Approver,
    preapproved: bool,
) -> super::mcp_sampling::Sampling<'a> {
    super::mcp_sampling::Sampling {
        model: ctx.model.clone(),
        provider: Arc::clone(&ctx.provider),
        cancel: ctx.cancel.clone(),
        approver,
        from: ctx.id.to_string(),
        usage: std::sync::Mutex::new(loki_wire::message::Usage::default()),
        count: std::sync::atomic::AtomicUsize::new(0),
        allowed: std::sync::atomic::AtomicBool::new(preapproved),
        denied: ctx
            .tool_policy
            .deny
            .iter()
            .any(|t| t == super::mcp_sampling::TOOL),
        budget: ctx.budget.clone(),
        exhausted: std::sync::Mutex::new(None),
    }
}

/// After a round: "always" for sampling holds for the rest of the conversation (yolo is
/// not an answer: it can be switched off later), and what sampling cost is the
/// conversation's and the agent run's budget's.
fn settle_sampling(
    ctx: &mut RequestContext,
    sampling: &super::mcp_sampling::Sampling<'_>,
    preapproved: bool,
    sink: &Sink<'_>,
) {
    if !preapproved && sampling.allowed.load(std::sync::atomic::Ordering::Relaxed) {
        ctx.tool_policy
            .always
            .insert(super::mcp_sampling::TOOL.to_string());
    }
    let sampled = sampling.usage.lock().map(|u| *u).unwrap_or_default();
    if sampled != loki_wire::message::Usage::default() {
        // Charged to the budget answer by answer already (see `Sampling::answer`).
        crate::usage::add_turn(&mut ctx.usage, &ctx.model.config, sampled);
        sink.spent(sampled);
        sink.emit(Event::Usage(sampled));
    }
    if let Some(over) = sampling.exhausted.lock().ok().and_then(|mut o| o.take()) {
        sink.emit(super::turn::budget_exhausted(&over));
        sink.flush();
    }
}

impl Toolbox {
    /// Whether a call of `name` can run here: an enabled tool, or `load_tools` when it is
    /// offered.
    pub fn can_call(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name() == name)
            || self
                .offered
                .iter()
                .any(|t| matches!(t, Tool::Load(_)) && t.name() == name)
    }

    /// After a round: groups that `load_tools` calls loaded are declared from now on (and
    /// remembered by the conversation and its session), and so are the job tools once the
    /// round started the conversation's first background job.
    pub fn note_loaded(
        &mut self,
        state: &AppState,
        ctx: &mut RequestContext,
        calls: &[ToolCall],
        results: &[Message],
    ) {
        let job_tool = |t: &Tool| is_job_tool(t.name());
        if ctx.jobs.any() && self.tools.iter().any(job_tool) && !self.offered.iter().any(job_tool) {
            self.offered = declared_tools(state, ctx, &self.tools);
            self.specs = crate::tool::specs(&self.offered);
        }
        let Some(Tool::Load(load)) = self.offered.iter().find(|t| matches!(t, Tool::Load(_)))
        else {
            return;
        };
        let mut groups = Vec::new();
        for call in calls.iter().filter(|c| c.name == crate::tool::load::NAME) {
            let succeeded = results.iter().any(|r| {
                r.tool_call_id.as_deref() == Some(call.id.as_str())
                    && r.text_content().starts_with("loaded: ")
            });
            let args = serde_json::from_str(&call.arguments).unwrap_or_default();
            if succeeded && let Ok(names) = load.requested(&args) {
                groups.extend(names);
            }
        }
        if groups.is_empty() {
            return;
        }
        if let Some(session) = &ctx.session {
            let mut guard = session.lock();
            let loaded = &mut guard.get_mut().loaded_tools;
            for group in &groups {
                if !loaded.contains(group) {
                    loaded.push(group.clone());
                }
            }
        }
        ctx.loaded_tools.extend(groups);
        self.offered = declared_tools(state, ctx, &self.tools);
        self.specs = crate::tool::specs(&self.offered);
    }
}

/// What of `tools` is declared to the model now (see [`crate::tool::load::offered`]).
pub(crate) fn declared_tools(state: &AppState, ctx: &RequestContext, tools: &[Tool]) -> Vec<Tool> {
    let mut loaded = ctx.loaded_tools.clone();
    if let Some(session) = &ctx.session {
        loaded.extend(session.lock().get().loaded_tools.iter().cloned());
    }
    let mut offered = crate::tool::load::offered(tools, state.config.load_tools_after, &loaded);
    // The job tools are declared once the conversation started a job.
    if !ctx.jobs.any() {
        offered.retain(|t| !is_job_tool(t.name()));
    }
    offered
}

fn is_job_tool(name: &str) -> bool {
    crate::tool::builtin::JOB_TOOLS
        .iter()
        .any(|job| job.name == name)
}

/// The conversation's approver, with each request and its decision reported as events
/// (`tool_call_approval_requested`, `tool_call_approval_decided`): a program driving the
/// conversation learns what waits for it and answers by `call_id`.
pub(super) struct Announcing<'a, 'b> {
    pub inner: &'a dyn crate::tool::approve::Approver,
    pub sink: &'a Sink<'b>,
    /// `Notification` hooks, told when a call waits for the user.
    pub hooks: Option<&'a dyn crate::hooks::Hooks>,
}

impl crate::tool::approve::Approver for Announcing<'_, '_> {
    fn can_ask(&self) -> bool {
        self.inner.can_ask()
    }

    fn approve<'a>(
        &'a self,
        request: &'a crate::tool::approve::ApprovalRequest,
    ) -> futures_util::future::BoxFuture<'a, loki_protocol::op::Decision> {
        use loki_protocol::event::{ToolCallApprovalDecided, ToolCallApprovalRequested};
        Box::pin(async move {
            // The approver takes the call before anyone hears of it: a program answering
            // by call id the moment the event arrives finds it waiting (a channel
            // approver registers the call when asked, not when polled).
            let decide = self.inner.approve(request);
            self.sink.emit(Event::ToolCallApprovalRequested(
                ToolCallApprovalRequested {
                    call_id: request.call_id.clone(),
                    name: request.tool.clone(),
                    text: loki_wire::secrets::redacted(request.text()),
                    preview: request
                        .preview
                        .as_ref()
                        .map(|p| loki_wire::secrets::redacted(p.clone())),
                    allow_always: request.allow_always,
                },
            ));
            self.sink.flush();
            // `Notification` hooks run while the question waits (someone must answer it);
            // the answer (or the approver's own timeout) never waits for them: a hook
            // still running then is dropped.
            let decision = match self.hooks.filter(|_| self.inner.can_ask()) {
                Some(hooks) => {
                    let message = format!("loki needs your permission: {}", request.text());
                    let notify = hooks.notification(&message);
                    tokio::pin!(notify, decide);
                    let mut notified = false;
                    loop {
                        tokio::select! {
                            decision = &mut decide => break decision,
                            () = &mut notify, if !notified => notified = true,
                        }
                    }
                }
                None => decide.await,
            };
            self.sink
                .emit(Event::ToolCallApprovalDecided(ToolCallApprovalDecided {
                    call_id: request.call_id.clone(),
                    decision: decision.name(),
                    message: decision
                        .message()
                        .map(|m| loki_wire::secrets::redacted(m.to_string())),
                }));
            self.sink.flush();
            decision
        })
    }
}
