//! `RequestContext`: everything that belongs to one conversation — the chosen model, the
//! system prompt, the running history, per-conversation overrides, and the cancellation
//! token.
//!
//! The one-shot CLI builds one per invocation; the REPL keeps one for its whole life and
//! lends it `&mut` to each `Engine::run`. Nothing in here is shared between conversations.

use futures_util::future::BoxFuture;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::client::registry::ModelError;
use crate::client::{Model, Provider};
use crate::config::clients::ModelKind;
use crate::error::CoreError;
use crate::role::Role;
use crate::session::TEMP_SESSION;
use crate::session::handle::SessionHandle;
use crate::session::id::SessionAlias;
use crate::session::tracker::SessionNotify;
use crate::session::tracker::{SessionHold, Tracker, Transcript};
use crate::state::AppState;
use loki_protocol::command::SavedSession;
use loki_protocol::event::{ConversationId, next_conversation_id};
use loki_wire::message::Message;
use loki_wire::session_file::Session;

/// A session's own model when it is not available (see [`RequestContext::session_model`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnavailableModel {
    /// The `model:` value of the session file.
    pub id: String,
    /// Why it cannot be used, in a few words.
    pub reason: String,
}

/// Messages the user sent while a turn ran (the REPL's type-ahead): the turn sends them
/// at its next step, and whatever is left when it ends becomes the next turn. Shared
/// between the front end that fills it and the engine that empties it.
#[derive(Debug, Default)]
pub struct PromptQueue {
    inner: std::sync::Mutex<QueueState>,
    /// Set while a model call streams: the only time typed keys are taken for the
    /// queue. Between calls a question or an approval may need them.
    listening: std::sync::atomic::AtomicBool,
}

#[derive(Debug, Default)]
struct QueueState {
    lines: Vec<String>,
    /// How many of `lines` have been announced.
    shown: usize,
}

impl PromptQueue {
    fn state(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues a message.
    pub fn push(&self, text: String) {
        self.state().lines.push(text);
    }

    /// Takes every queued message.
    pub fn take(&self) -> Vec<String> {
        let mut state = self.state();
        state.shown = 0;
        std::mem::take(&mut state.lines)
    }

    /// Whether typed keys may be taken now (see [`PromptQueue::set_listening`]).
    pub fn listening(&self) -> bool {
        self.listening.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Says whether a model call is streaming (keys are taken) or not (keys stay for
    /// whatever reads the terminal next: a question, an approval, the prompt).
    pub fn set_listening(&self, on: bool) {
        self.listening
            .store(on, std::sync::atomic::Ordering::Release);
    }

    /// Messages queued since the last call (to announce them once).
    pub fn unannounced(&self) -> Vec<String> {
        let mut state = self.state();
        let new = state.lines[state.shown.min(state.lines.len())..].to_vec();
        state.shown = state.lines.len();
        new
    }
}

/// Per-conversation state.
pub(super) struct RequestContext {
    /// Names this conversation in events; unique within the process.
    pub id: ConversationId,
    /// The conversation that started this one (a sub-conversation's parent), if any.
    pub parent: Option<ConversationId>,
    /// Its working directory: relative `-f` paths, tools and `{{__cwd__}}` use it.
    pub cwd: std::path::PathBuf,
    /// Its environment snapshot (tools, `$SHELL`, locale, system variables).
    pub env: Arc<crate::config::Env>,
    /// The model answering.
    pub model: Model,
    /// Its provider.
    pub provider: Arc<dyn Provider>,
    /// `fallback_models:` resolved: where a call goes, in order, when the model stays
    /// overloaded after its retries (models that are not configured are left out).
    pub fallbacks: Vec<(Model, Arc<dyn Provider>)>,
    /// The active role (a role file, or a temporary role from `--prompt`).
    pub role: Option<Role>,
    /// Messages exchanged so far (without the system prompt).
    pub history: Vec<Message>,
    /// Temperature for this conversation.
    pub temperature: Option<f64>,
    /// Top-p for this conversation.
    pub top_p: Option<f64>,
    /// Stream answers.
    pub stream: bool,
    /// Print the assembled input instead of calling the provider.
    pub dry_run: bool,
    /// Output limit sent with every request, overriding the model's.
    pub max_output_tokens: Option<u64>,
    /// Append exchanges to `messages.md`.
    pub save: bool,
    /// Offer tools to the model.
    pub function_calling_support: bool,
    /// `enabled_tools` set in this conversation (`.set enabled_tools`), over the
    /// configuration's; a role's own list wins over both.
    pub enabled_tools: Option<String>,
    /// `enabled_mcp_servers` set in this conversation, over the configuration's.
    pub enabled_mcp_servers: Option<String>,
    /// Whether MCP servers are used at all (`mcp_server_support`).
    pub mcp_server_support: bool,
    /// `save_session` for this conversation (`.set save_session` outside a session);
    /// an open session's own value wins.
    pub save_session: Option<bool>,
    /// `stale_tool_results`: results of tool calls older than this many turns are sent as
    /// one-line summaries (0: whole).
    pub stale_tool_results: usize,
    /// `compression_threshold` for this conversation; an open session's own value wins.
    pub compression_threshold: usize,
    /// How tool calls are approved, including "always" answers given so far.
    pub tool_policy: crate::tool::Policy,
    /// Who is asked before a tool call that needs approval.
    pub approver: Arc<dyn crate::tool::approve::Approver>,
    /// Who answers the conversation's questions (`user__*` tools, front-end questions).
    pub asker: Arc<dyn crate::tool::ask::Asker>,
    /// Offer the user-interaction tools (`user__ask` …): the REPL does.
    pub user_tools: bool,
    /// The MCP servers this conversation holds (see [`crate::conversation::engine::scope`]).
    pub mcp_lease: Option<crate::mcp::McpLease>,
    /// The open session, if any (its messages are `history`).
    pub session: Option<SessionHandle>,
    /// Tokens and cost of this conversation (the session's, while one is open).
    pub usage: loki_wire::session_file::UsageTally,
    /// Cancels the running turn. Replaced by a fresh token after each cancellation.
    pub cancel: CancellationToken,
    /// The hold on the open session: the version last seen (to merge what other writers
    /// store meanwhile) and the write lock while a turn (or a one-shot run) holds it.
    pub session_sync: Tracker,
    /// The session's `model:` when that model is not available: the conversation uses
    /// another one, and the file keeps this value until the user chooses a model.
    pub session_model: Option<UnavailableModel>,
    /// A model was asked for (`-m`, a request's `model`) and is applied after the commands
    /// that set the conversation up: meanwhile a role's model that is not available is
    /// passed over, since the asked-for one wins anyway.
    pub model_asked_for: bool,
    /// The model and sampling settings from before the first role (or agent) was taken,
    /// with the values that role set: leaving it brings back each one it still holds.
    pub before_role: Option<Box<BeforeRole>>,
    /// The agent in use (`-a`, `.agent`): its instructions are `role`, its tools the
    /// tool scope, its variables in `env`.
    pub agent: Option<crate::agent::ActiveAgent>,
    /// Runs this conversation's sub-agents (set while an agent that may spawn is active).
    pub supervisor: Option<Arc<dyn crate::tool::agents::Supervisor>>,
    /// Off the record (`--otr`, `.otr`): nothing is written — no session, no
    /// `messages.md` — and tools that write or run commands are not offered.
    pub otr: crate::tool::Switch,
    /// The editor holding the files (an ACP client that offers `fs/*`), if any.
    pub editor_files: Option<Arc<dyn crate::tool::EditorFiles>>,
    /// Where commands and script tools are confined and what file tools may never touch
    /// (see [`crate::sandbox`]), shared with every descendant; none:
    /// `danger-full-access`.
    pub sandbox: Option<Arc<crate::sandbox::Sandbox>>,
    /// More directories commands and file tools may write (`--add-dir`), kept for a
    /// sandbox made again in another mode.
    pub add_dirs: Vec<std::path::PathBuf>,
    /// Tool groups loaded with `load_tools` in this conversation (an open session keeps
    /// its own list too).
    pub loaded_tools: std::collections::BTreeSet<String>,
    /// Tools the caller runs itself (an OpenAI client's `tools`): offered to the model,
    /// and a call of one ends the turn with the call returned.
    pub client_tools: Vec<crate::client::ToolSpec>,
    /// MCP servers the client brought (an editor's `mcpServers`, `--mcp-config`): used
    /// on top of the ones `enabled_mcp_servers` names.
    pub client_mcp_servers: Vec<String>,
    /// Hooks around every tool call (`hooks:` in config.yaml, a Claude Agent SDK
    /// program's callbacks); sub-conversations inherit them.
    pub tool_hooks: Option<Arc<dyn crate::hooks::Hooks>>,
    /// Where the files a turn changes are kept for rewinds (shared with sub-agents);
    /// none with `checkpoint_max_mb: 0`.
    pub checkpoints: Option<Arc<crate::checkpoint::Recorder>>,
    /// What an API caller asked of the answer's form (stop, seed, format, tool choice).
    pub controls: crate::client::Controls,
    /// Keep a todo list and go on while it has open items, with or without an agent
    /// (`--auto-continue`; an agent's own `auto_continue` does the same).
    pub auto_continue: bool,
    /// How the user carries on an answer cut off at the output limit (the hint in the
    /// warning): the front end that made the conversation knows.
    pub carry_on: CarryOn,
    /// How fast the model answered the last finished turn (`.info`).
    pub last_speed: Option<loki_protocol::event::Speed>,
    /// The agent's todo list (`todo__*` tools, automatic continuation).
    pub todo: Arc<std::sync::Mutex<crate::tool::todo::TodoList>>,
    /// Commands started with `background: true`; stopped when the conversation ends
    /// (when the last holder drops them).
    pub jobs: Arc<crate::tool::jobs::Jobs>,
    /// Messages queued while a turn runs, sent at its next step.
    pub queue: Arc<PromptQueue>,
    /// How deep in a tree of agents this conversation is (0: started by a person).
    pub depth: usize,
    /// Opened by a person (the root, or a macro the user runs), not by a model: asks the
    /// user for what an agent needs (its missing variables) instead of refusing.
    pub user_started: bool,
    /// The spending limit of the agent run this conversation belongs to (shared by the
    /// whole tree of sub-agents), while one runs.
    pub budget: Option<Arc<crate::usage::Budget>>,
    /// The knowledge base chosen in this conversation (`--rag`, `.rag`, `.exit rag`).
    pub rag: RagChoice,
    /// `rag_top_k` / `rag_reranker_model` set with `.set` while no knowledge base is
    /// active (an active one stores them in its own file).
    pub rag_settings: RagSettings,
    /// Where the chunks used by the last answer came from (`.sources rag`).
    pub rag_sources: Vec<String>,
}

/// Which knowledge base a conversation uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RagChoice {
    /// The session's, else the role's, if any.
    #[default]
    Inherit,
    /// This one.
    Use(String),
    /// None, whatever the session or role say (`.exit rag`).
    Off,
}

/// Per-conversation RAG settings over the configuration's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RagSettings {
    /// Chunks per question.
    pub top_k: Option<usize>,
    /// Reranker (`Some(None)`: explicitly none).
    pub reranker_model: Option<Option<String>>,
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext")
            .field("model", &self.model.id())
            .field("history", &self.history.len())
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

impl RequestContext {
    /// The system variables (`{{__os__}}`, `{{__cwd__}}`, …) of this conversation.
    pub fn system_vars(&self) -> crate::role::SystemVars {
        crate::role::SystemVars::detect(&self.env, &self.cwd)
    }

    /// Opens (or starts) session `name` (an alias or an id): a saved session restores its
    /// model, sampling settings, role and messages; a new one starts empty with the
    /// current settings. `temp` always starts a fresh, unnamed-on-disk session.
    pub async fn open_session(&mut self, state: &AppState, name: &str) -> Result<bool, CoreError> {
        let store = self.sessions(state);
        let existing = if name == TEMP_SESSION {
            None
        } else {
            store.open_key(name).await?
        };
        let existed = existing.is_some();
        let handle = match existing {
            Some(handle) => handle,
            None => {
                store
                    .create(Some(SessionAlias::new(name)?), Session::default())
                    .await?
            }
        };
        self.session_model = None;
        {
            let guard = handle.lock();
            let stored = guard.get();
            // A model that is no longer configured does not lock the session away: it
            // continues with the current model, and the file keeps its own.
            if let Some(model) = &stored.model
                && let Err(e) = self.set_model(state, model)
            {
                tracing::warn!("session model {model} unavailable: {e}");
                self.session_model = Some(UnavailableModel {
                    id: model.clone(),
                    reason: unavailable_reason(&e),
                });
            }
            if stored.temperature.is_some() {
                self.temperature = stored.temperature;
            }
            if stored.top_p.is_some() {
                self.top_p = stored.top_p;
            }
            if let Some(prompt) = &stored.role_prompt {
                let mut role = Role::temp(prompt);
                if let Some(name) = &stored.role_name {
                    role.name.clone_from(name);
                    // The session keeps the prompt it was started with; the role's tools
                    // and MCP servers come from its file, as when it was used.
                    if let Ok(file) = Role::load(&state.paths.roles_dir, name, &self.system_vars())
                    {
                        role.enabled_tools = file.enabled_tools;
                        role.enabled_mcp_servers = file.enabled_mcp_servers;
                    }
                }
                self.role = Some(role);
            }
            self.history = stored.messages.clone();
            self.usage = stored.usage;
            // The list lives in an `Arc` others hold (an editor's plan view): replaced in
            // place. A list that does not parse is dropped with a note in the log.
            let todo = stored
                .extra
                .get(crate::session::TODO)
                .and_then(|value| {
                    serde_yaml::from_value(value.clone())
                        .inspect_err(|e| {
                            tracing::warn!("the session's todo list is unreadable: {e}")
                        })
                        .ok()
                })
                .unwrap_or_default();
            *self
                .todo
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = todo;
            self.session_sync = Tracker::opened(&handle, stored);
        }
        self.session = Some(handle);
        // "Always" answers belong to the conversation they were given in.
        self.tool_policy.always.clear();
        Ok(existed)
    }

    /// One line for the user when the open session's model is not available: which
    /// model, what is used instead, and that the file keeps its value.
    pub fn session_model_warning(&self) -> Option<String> {
        let missing = self.session_model.as_ref()?;
        let name = self.session.as_ref()?.name();
        Some(format!(
            "session `{name}` uses model `{}`, which {}; using `{}` instead (the session keeps `{}` until you choose a model with -m or .model)",
            missing.id,
            missing.reason,
            self.model.id(),
            missing.id
        ))
    }

    /// Takes the open session's lock, waiting while another writer (another loki
    /// process, or another conversation) holds it, then brings the conversation up to
    /// date with what others stored meanwhile. The lock is released when the returned
    /// [`SessionHold`] is dropped, if this call took it; a hold taken while the lock is
    /// already held, or for a session that needs none (the temporary session, no
    /// session), releases nothing — so a turn or a save may take one whatever holds the
    /// lock around it.
    ///
    /// With `cancel`, cancelling it stops the wait with [`CoreError::Cancelled`].
    #[inline(never)]
    pub fn lock_session<'a>(
        &'a mut self,
        state: &'a AppState,
        cancel: Option<&'a CancellationToken>,
        notify: SessionNotify<'a>,
    ) -> BoxFuture<'a, Result<SessionHold, CoreError>> {
        Box::pin(async move {
            let never = CancellationToken::new();
            let store = self.sessions(state);
            let transcript = Transcript {
                history: &mut self.history,
                usage: &mut self.usage,
            };
            Ok(self
                .session_sync
                .lock(
                    &*store,
                    &mut self.session,
                    transcript,
                    cancel.unwrap_or(&never),
                    notify,
                )
                .await?)
        })
    }

    /// Leaves the open session: the conversation forgets it and its messages, and its
    /// lock goes with it (whoever holds a [`SessionHold`] on it).
    pub fn leave_session(&mut self) {
        self.session = None;
        self.history.clear();
        self.session_sync = Tracker::default();
    }

    /// Where this conversation's sessions are: the active agent's directory, else the
    /// shared store.
    pub fn sessions(&self, state: &AppState) -> Arc<dyn crate::session::store::SessionStore> {
        match &self.agent {
            Some(agent) => state.sessions_in(&agent.def.sessions_dir()),
            None => Arc::clone(&state.sessions),
        }
    }

    /// The session file contents for the current conversation.
    pub fn session_snapshot(&self) -> Option<Session> {
        let handle = self.session.as_ref()?;
        let mut session = handle.lock().get().clone();
        self.owned_fields().write_into(&mut session);
        Some(session)
    }

    /// What the conversation owns of its session: settings, messages, usage.
    fn owned_fields(&self) -> OwnedFields {
        OwnedFields {
            model: self
                .session_model
                .as_ref()
                .map_or_else(|| self.model.id(), |m| m.id.clone()),
            temperature: self.temperature,
            top_p: self.top_p,
            role_name: self.role.as_ref().map(|r| r.name.clone()),
            role_prompt: self
                .role
                .as_ref()
                .map(|r| r.prompt.clone())
                .filter(|p| !p.is_empty()),
            messages: self.history.clone(),
            usage: self.usage,
            rag: match &self.rag {
                // The unsaved knowledge base ends with the process: not named.
                RagChoice::Use(name) if name == crate::config::paths::TEMP_RAG => None,
                RagChoice::Use(name) => Some(Some(name.clone())),
                RagChoice::Off => Some(None),
                RagChoice::Inherit => None,
            },
            cwd: self.cwd.display().to_string(),
            agent_variables: self
                .agent
                .as_ref()
                .map(crate::agent::ActiveAgent::saved_variables),
            todo: self
                .todo
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        }
    }

    /// Saves a conversation that had no session as a new temporary session, which the
    /// save names `_/<timestamp>-<first words of its first prompt>` (history by default).
    pub async fn keep_as_history(&mut self, state: &AppState) -> Result<(), CoreError> {
        let store = self.sessions(state);
        let initial = Session {
            autoname: crate::session::history::title_from(&self.history),
            ..Session::default()
        };
        let handle = store
            .create(Some(SessionAlias::new(TEMP_SESSION)?), initial)
            .await?;
        handle.mark_dirty();
        self.session_sync = Tracker::opened(&handle, handle.lock().get());
        self.session = Some(handle);
        self.save_session(state, None, &|_| {}).await?;
        Ok(())
    }

    /// Saves the open session (renamed to `rename` when given) under its lock; see
    /// [`Tracker::save`].
    pub async fn save_session(
        &mut self,
        state: &AppState,
        rename: Option<&str>,
        notify: SessionNotify<'_>,
    ) -> Result<SavedSession, CoreError> {
        if self.session.is_none() {
            return Err(CoreError::NoSession);
        }
        let _hold = self.lock_session(state, None, notify).await?;
        let fields = self.owned_fields();
        let store = self.sessions(state);
        let result = match self.session.as_mut() {
            Some(handle) => {
                self.session_sync
                    .save(&*store, handle, rename, |session| {
                        fields.write_into(session);
                    })
                    .await
            }
            None => return Err(CoreError::NoSession),
        };
        Ok(result?)
    }

    /// Resolves a context from the shared state: `model_id` (from `-m`) or the configured
    /// default model, and the global settings.
    pub fn resolve(state: &AppState, model_id: Option<&str>) -> Result<Self, ModelError> {
        let model = match model_id {
            Some(id) => state.providers.resolve(id, ModelKind::Chat)?,
            None => state
                .providers
                .default_chat_model(state.config.model.as_deref())?,
        };
        let provider = provider_for(state, &model)?;
        Ok(Self {
            id: next_conversation_id(),
            parent: None,
            cwd: std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from(".")),
            env: Arc::new(state.env.clone()),
            model,
            provider,
            fallbacks: fallback_models(state),
            role: None,
            history: Vec::new(),
            temperature: state.config.temperature,
            top_p: state.config.top_p,
            stream: state.config.stream,
            dry_run: state.config.dry_run,
            max_output_tokens: None,
            save: state.config.save,
            function_calling_support: state.config.function_calling_support,
            enabled_tools: state.config.enabled_tools.clone(),
            enabled_mcp_servers: state.config.enabled_mcp_servers.clone(),
            mcp_server_support: state.config.mcp_server_support,
            save_session: state.config.save_session,
            compression_threshold: state.config.compression_threshold,
            stale_tool_results: state.config.stale_tool_results,
            tool_policy: crate::tool::Policy::from_config(&state.config),
            approver: Arc::new(crate::tool::approve::DenyAll),
            asker: Arc::new(crate::tool::ask::Headless),
            user_tools: false,
            mcp_lease: None,
            session: None,
            usage: loki_wire::session_file::UsageTally::default(),
            cancel: CancellationToken::new(),
            session_sync: Tracker::default(),
            session_model: None,
            model_asked_for: false,
            before_role: None,
            agent: None,
            supervisor: None,
            todo: Arc::default(),
            jobs: Arc::default(),
            queue: Arc::default(),
            depth: 0,
            user_started: true,
            budget: None,
            auto_continue: false,
            carry_on: CarryOn::default(),
            last_speed: None,
            client_tools: Vec::new(),
            client_mcp_servers: state.mcp.project_servers(),
            tool_hooks: None,
            checkpoints: (state.config.checkpoint_max_mb > 0).then(|| {
                Arc::new(crate::checkpoint::Recorder::new(
                    crate::checkpoint::Store::new(
                        &state.paths.cache_dir,
                        state.config.checkpoint_max_mb.saturating_mul(1024 * 1024),
                    ),
                ))
            }),
            controls: crate::client::Controls::default(),
            otr: crate::tool::Switch::default(),
            editor_files: None,
            sandbox: None,
            add_dirs: Vec::new(),
            loaded_tools: std::collections::BTreeSet::new(),
            rag: RagChoice::Inherit,
            rag_settings: RagSettings::default(),
            rag_sources: Vec::new(),
        })
    }

    /// Activates a role: its model (if it names one) and sampling settings replace the
    /// current ones; settings it leaves out fall back to the global configuration.
    pub fn use_role(&mut self, state: &AppState, role: Role) -> Result<(), ModelError> {
        let before = (self.role.is_none() || self.before_role.is_none()).then(|| {
            (
                self.model.clone(),
                Arc::clone(&self.provider),
                self.temperature,
                self.top_p,
            )
        });
        if let Some(model) = &role.model {
            match self.set_model(state, model) {
                Err(_) if self.model_asked_for => {}
                other => other?,
            }
        }
        self.temperature = role.temperature.or(state.config.temperature);
        self.top_p = role.top_p.or(state.config.top_p);
        let set = (self.model.id(), self.temperature, self.top_p);
        match (before, self.before_role.as_mut()) {
            (Some((model, provider, temperature, top_p)), _) => {
                self.before_role = Some(Box::new(BeforeRole {
                    model,
                    provider,
                    temperature,
                    top_p,
                    set,
                }));
            }
            // Another role over a role: what came before the first is still what
            // leaving brings back; this one's values are what it now holds.
            (None, Some(kept)) => kept.set = set,
            (None, None) => {}
        }
        if let Some(mode) = role
            .permission_mode
            .as_deref()
            .and_then(crate::config::permissions::PermissionMode::parse)
        {
            self.tool_policy.set_mode(mode);
        }
        self.role = Some(role);
        Ok(())
    }

    /// Leaves the active role; sampling settings return to the global configuration.
    pub fn exit_role(&mut self, state: &AppState) {
        if self.role.take().is_none() {
            return;
        }
        let Some(before) = self.before_role.take() else {
            self.temperature = state.config.temperature;
            self.top_p = state.config.top_p;
            return;
        };
        // What the role set and nobody changed since goes back to what it was; a model
        // or setting chosen while the role was active stays.
        let (model, temperature, top_p) = &before.set;
        if self.model.id() == *model {
            self.model = before.model;
            self.provider = before.provider;
            self.session_model = None;
        }
        if self.temperature == *temperature {
            self.temperature = before.temperature;
        }
        if self.top_p == *top_p {
            self.top_p = before.top_p;
        }
    }

    /// The knowledge base in use: chosen in the conversation, else the session's, else
    /// the role's.
    pub fn active_rag(&self) -> Option<String> {
        match &self.rag {
            RagChoice::Use(name) => Some(name.clone()),
            RagChoice::Off => None,
            RagChoice::Inherit => self
                .session
                .as_ref()
                .and_then(|s| s.lock().get().rag.clone())
                .or_else(|| self.role.as_ref().and_then(|r| r.rag.clone())),
        }
    }

    /// Switches the model (and provider) for the rest of the conversation. The session
    /// stores this model from now on (see [`RequestContext::session_model`]).
    pub fn set_model(&mut self, state: &AppState, id: &str) -> Result<(), ModelError> {
        let model = state.providers.resolve(id, ModelKind::Chat)?;
        self.provider = provider_for(state, &model)?;
        self.model = model;
        self.session_model = None;
        Ok(())
    }
}

/// What taking a role replaced (see [`RequestContext::before_role`]).
pub struct BeforeRole {
    model: Model,
    provider: Arc<dyn Provider>,
    temperature: Option<f64>,
    top_p: Option<f64>,
    /// The model id, temperature and top_p the role (the last one taken) set.
    set: (String, Option<f64>, Option<f64>),
}

impl std::fmt::Debug for BeforeRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BeforeRole")
            .field("model", &self.model.id())
            .field("temperature", &self.temperature)
            .field("top_p", &self.top_p)
            .finish_non_exhaustive()
    }
}

/// Why a session's model cannot be used, in a few words for the warning.
fn unavailable_reason(e: &ModelError) -> String {
    match e {
        ModelError::UnknownClient { client, .. } => {
            format!("names a client (`{client}`) that is not configured")
        }
        ModelError::WrongKind { actual, .. } => format!("is a model of type {actual}"),
        _ => "is not configured".into(),
    }
}

/// The provider serving `model`.
pub fn provider_for(state: &AppState, model: &Model) -> Result<Arc<dyn Provider>, ModelError> {
    state
        .providers
        .provider(&model.client)
        .ok_or_else(|| ModelError::UnknownClient {
            id: model.id(),
            client: model.client.clone(),
            available: state.providers.client_names().join(", "),
        })
}

/// The configured `fallback_models` that resolve to a chat model and its provider; one
/// that does not is logged and skipped, so a typo never stops the main model working.
fn fallback_models(state: &AppState) -> Vec<(Model, Arc<dyn Provider>)> {
    let resolve = |id: &String| -> Result<(Model, Arc<dyn Provider>), ModelError> {
        let model = state.providers.resolve(id, ModelKind::Chat)?;
        let provider = provider_for(state, &model)?;
        Ok((model, provider))
    };
    state
        .config
        .fallback_models
        .iter()
        .filter_map(|id| {
            resolve(id)
                .inspect_err(|e| tracing::warn!("fallback model {id} skipped: {e}"))
                .ok()
        })
        .collect()
}

/// What a conversation owns of its session, written into it at each save.
struct OwnedFields {
    model: String,
    temperature: Option<f64>,
    top_p: Option<f64>,
    role_name: Option<String>,
    role_prompt: Option<String>,
    messages: Vec<Message>,
    usage: loki_wire::session_file::UsageTally,
    /// `None`: the session keeps its own knowledge base.
    rag: Option<Option<String>>,
    /// Where the conversation works: recorded once, where the session was started.
    cwd: String,
    /// The agent's variables (an agent's session keeps them for the next run).
    agent_variables: Option<std::collections::BTreeMap<String, String>>,
    /// The todo list, resumed with the session.
    todo: crate::tool::todo::TodoList,
}

impl OwnedFields {
    fn write_into(self, session: &mut Session) {
        session.model = Some(self.model);
        session.temperature = self.temperature;
        session.top_p = self.top_p;
        session.role_name = self.role_name;
        session.role_prompt = self.role_prompt;
        session.messages = self.messages;
        session.usage = self.usage;
        if let Some(rag) = self.rag {
            session.rag = rag;
        }
        if session.cwd.is_none() {
            session.cwd = Some(self.cwd);
        }
        if let Some(variables) = self.agent_variables.filter(|v| !v.is_empty())
            && let Ok(value) = serde_yaml::to_value(variables)
        {
            session
                .extra
                .insert(crate::session::AGENT_VARIABLES.to_string(), value);
        }
        // An emptied list must not come back when the session is resumed.
        match serde_yaml::to_value(&self.todo) {
            Ok(value) if !self.todo.is_empty() => {
                session
                    .extra
                    .insert(crate::session::TODO.to_string(), value);
            }
            _ => {
                session.extra.remove(crate::session::TODO);
            }
        }
    }
}

/// How a front end's user carries on an answer cut off at the model's output limit: the
/// hint the engine's warning gives, since `.continue` exists only in the REPL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CarryOn {
    /// No way to carry on from here: raise the limit (the server, ACP, the SDK).
    #[default]
    RaiseLimit,
    /// The REPL's `.continue`.
    DotContinue,
    /// A one-shot run: another run in the same session (`loki -s NAME`), else a higher
    /// limit.
    NextRun,
}

#[cfg(test)]
impl crate::test_support::Fixture {
    /// A fresh conversation on the default model.
    pub(in crate::conversation) fn context(&self) -> RequestContext {
        let mut ctx = RequestContext::resolve(&self.state, None).expect("context");
        ctx.cwd = self.dir.path().to_path_buf();
        ctx
    }
}
