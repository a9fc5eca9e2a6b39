//! `RequestContext`: everything that belongs to one conversation — the chosen model, the
//! system prompt, the running history, per-conversation overrides, and the cancellation
//! token.
//!
//! The one-shot CLI builds one per invocation; the REPL keeps one for its whole life and
//! lends it `&mut` to each `Engine::run`. Nothing in here is shared between conversations.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::client::config::ModelKind;
use crate::client::registry::ModelError;
use crate::client::{Message, Model, Provider};
use crate::engine::CoreError;
use crate::role::Role;
use crate::session::handle::SessionHandle;
use crate::session::id::SessionAlias;
use crate::session::{Session, TEMP_SESSION};
use crate::state::AppState;

/// Per-conversation state.
pub struct RequestContext {
    /// The model answering.
    pub model: Model,
    /// Its provider.
    pub provider: Arc<dyn Provider>,
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
    /// How tool calls are approved, including "always" answers given so far.
    pub tool_policy: crate::tool::Policy,
    /// Who is asked before a tool call that needs approval.
    pub approver: Arc<dyn crate::tool::approve::Approver>,
    /// The open session, if any (its messages are `history`).
    pub session: Option<SessionHandle>,
    /// Tokens and cost of this conversation (the session's, while one is open).
    pub usage: crate::usage::UsageTally,
    /// Cancels the running turn. Replaced by a fresh token after each cancellation.
    pub cancel: CancellationToken,
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
    /// Opens (or starts) session `name` (an alias or an id): a saved session restores its
    /// model, sampling settings, role and messages; a new one starts empty with the
    /// current settings. `temp` always starts a fresh, unnamed-on-disk session.
    pub fn open_session(&mut self, state: &AppState, name: &str) -> Result<bool, CoreError> {
        let store = &state.sessions;
        let existing = if name == TEMP_SESSION {
            None
        } else {
            store.open_key(name)?
        };
        let existed = existing.is_some();
        let handle = match existing {
            Some(handle) => handle,
            None => store.create(Some(SessionAlias::new(name)?), Session::default())?,
        };
        {
            let guard = handle.lock();
            let stored = guard.get();
            // A model that is no longer configured does not lock the session away: it
            // continues with the current model.
            if let Some(model) = &stored.model
                && let Err(e) = self.set_model(state, model)
            {
                tracing::warn!(
                    "session model unavailable, keeping {}: {e}",
                    self.model.id()
                );
            }
            if stored.temperature.is_some() {
                self.temperature = stored.temperature;
            }
            if stored.top_p.is_some() {
                self.top_p = stored.top_p;
            }
            if let Some(prompt) = &stored.role_prompt {
                let mut role = Role::temp(prompt);
                role.name = stored
                    .role_name
                    .clone()
                    .unwrap_or_else(|| role.name.clone());
                self.role = Some(role);
            }
            self.history = stored.messages.clone();
            self.usage = stored.usage;
        }
        self.session = Some(handle);
        // "Always" answers belong to the conversation they were given in.
        self.tool_policy.always.clear();
        Ok(existed)
    }

    /// The session file contents for the current conversation.
    pub fn session_snapshot(&self) -> Option<Session> {
        let handle = self.session.as_ref()?;
        let mut session = handle.lock().get().clone();
        self.write_into(&mut session);
        Some(session)
    }

    /// Copies the conversation's settings and messages into its session.
    fn write_into(&self, session: &mut Session) {
        session.model = Some(self.model.id());
        session.temperature = self.temperature;
        session.top_p = self.top_p;
        session.role_name = self.role.as_ref().map(|r| r.name.clone());
        session.role_prompt = self
            .role
            .as_ref()
            .map(|r| r.prompt.clone())
            .filter(|p| !p.is_empty());
        session.messages.clone_from(&self.history);
        session.usage = self.usage;
        match &self.rag {
            RagChoice::Use(name) => session.rag = Some(name.clone()),
            RagChoice::Off => session.rag = None,
            RagChoice::Inherit => {}
        }
    }

    /// Saves the open session (renamed to `rename` when given); returns the file written.
    ///
    /// The temporary session is saved under an autoname alias (`_/<timestamp>[-<title>]`)
    /// unless a name is given.
    pub fn save_session(
        &mut self,
        state: &AppState,
        rename: Option<&str>,
    ) -> Result<std::path::PathBuf, CoreError> {
        let Some(mut handle) = self.session.take() else {
            return Err(CoreError::InvalidRequest(
                "no session is open (use `-s <name>` or `.session <name>`)".into(),
            ));
        };
        let result = self.save_handle(state, &mut handle, rename);
        self.session = Some(handle);
        result
    }

    fn save_handle(
        &self,
        state: &AppState,
        handle: &mut SessionHandle,
        rename: Option<&str>,
    ) -> Result<std::path::PathBuf, CoreError> {
        let is_temp = handle.alias().is_some_and(|a| a.as_str() == TEMP_SESSION);
        let new_name = match rename {
            Some(TEMP_SESSION) => {
                return Err(CoreError::InvalidRequest(format!(
                    "`{TEMP_SESSION}` is reserved for the unsaved session; choose another name"
                )));
            }
            Some(name) => Some(name.to_string()),
            None if is_temp => Some(autoname_alias(handle.lock().get().autoname.as_deref())),
            None => None,
        };
        if let Some(name) = new_name {
            state.sessions.rename(handle, SessionAlias::new(name)?)?;
        }
        self.write_into(handle.lock().get_mut());
        Ok(state.sessions.save(handle)?)
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
            model,
            provider,
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
            tool_policy: crate::tool::Policy::from_config(&state.config),
            approver: Arc::new(crate::tool::approve::DenyAll),
            session: None,
            usage: crate::usage::UsageTally::default(),
            cancel: CancellationToken::new(),
            rag: RagChoice::Inherit,
            rag_settings: RagSettings::default(),
            rag_sources: Vec::new(),
        })
    }

    /// Activates a role: its model (if it names one) and sampling settings replace the
    /// current ones; settings it leaves out fall back to the global configuration.
    pub fn use_role(&mut self, state: &AppState, role: Role) -> Result<(), ModelError> {
        if let Some(model) = &role.model {
            self.set_model(state, model)?;
        }
        self.temperature = role.temperature.or(state.config.temperature);
        self.top_p = role.top_p.or(state.config.top_p);
        self.role = Some(role);
        Ok(())
    }

    /// Leaves the active role; sampling settings return to the global configuration.
    pub fn exit_role(&mut self, state: &AppState) {
        if self.role.take().is_some() {
            self.temperature = state.config.temperature;
            self.top_p = state.config.top_p;
        }
    }

    /// The tools offered to the model in this conversation (none when function calling
    /// is off or the model cannot call functions).
    pub fn active_tools(&self, state: &AppState) -> Vec<crate::tool::Tool> {
        if !self.function_calling_support || !self.model.config.supports_function_calling {
            return Vec::new();
        }
        // A session's own setting wins over its role's, which wins over the
        // conversation's (`.set` outside a session) and the configuration's.
        let session_tools = self
            .session
            .as_ref()
            .and_then(|s| s.lock().get().enabled_tools.clone());
        let enabled = session_tools.as_deref().or_else(|| {
            self.role
                .as_ref()
                .and_then(|r| r.enabled_tools.as_deref())
                .or(self.enabled_tools.as_deref())
        });
        let mut tools = match enabled {
            Some(e) if !e.trim().is_empty() => {
                crate::tool::enabled_tools(&state.config, &state.script_tools().tools, Some(e))
            }
            _ => Vec::new(),
        };
        let (servers, _) = self.mcp_servers(state);
        if !servers.is_empty() {
            let mode = state.config.mcp_tool_exposure.as_deref().unwrap_or("auto");
            for mut f in crate::mcp::expose::functions(&state.mcp.running(&servers), mode) {
                // Function names must be unique; sanitising can make two collide.
                let base = f.name.clone();
                let mut n = 2;
                while tools.iter().any(|t| t.name() == f.name) {
                    let suffix = format!("_{n}");
                    let keep = base.len().min(64 - suffix.len());
                    f.name = format!("{}{suffix}", &base[..keep]);
                    n += 1;
                }
                tools.push(crate::tool::Tool::Mcp(Arc::new(f)));
            }
        }
        tools
    }

    /// The MCP servers this conversation uses (session > role > conversation > config),
    /// and the names among them that `mcp.json` does not define.
    pub fn mcp_servers(&self, state: &AppState) -> (Vec<String>, Vec<String>) {
        match self.mcp_setting() {
            Some(e) => state.mcp.expand(&e, &state.config.mapping_mcp_servers),
            None => (Vec::new(), Vec::new()),
        }
    }

    /// The `enabled_mcp_servers` in force (session > role > conversation > config), when
    /// MCP is on and something is enabled.
    pub fn mcp_setting(&self) -> Option<String> {
        if !self.mcp_server_support {
            return None;
        }
        let session = self
            .session
            .as_ref()
            .and_then(|s| s.lock().get().enabled_mcp_servers.clone());
        session
            .or_else(|| {
                self.role
                    .as_ref()
                    .and_then(|r| r.enabled_mcp_servers.clone())
                    .or_else(|| self.enabled_mcp_servers.clone())
            })
            .filter(|e| !e.trim().is_empty())
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

    /// Switches the model (and provider) for the rest of the conversation.
    pub fn set_model(&mut self, state: &AppState, id: &str) -> Result<(), ModelError> {
        let model = state.providers.resolve(id, ModelKind::Chat)?;
        self.provider = provider_for(state, &model)?;
        self.model = model;
        Ok(())
    }
}

/// The alias a saved temporary session gets: `_/<UTC timestamp>[-<title slug>]`.
fn autoname_alias(title: Option<&str>) -> String {
    let stamp = crate::role::compact_timestamp(std::time::SystemTime::now());
    match title
        .map(crate::session::id::slugify)
        .filter(|s| !s.is_empty())
    {
        Some(slug) => format!("{}{stamp}-{slug}", crate::session::id::AUTONAME_PREFIX),
        None => format!("{}{stamp}", crate::session::id::AUTONAME_PREFIX),
    }
}

fn provider_for(state: &AppState, model: &Model) -> Result<Arc<dyn Provider>, ModelError> {
    state
        .providers
        .provider(&model.client)
        .ok_or_else(|| ModelError::UnknownClient {
            id: model.id(),
            client: model.client.clone(),
            available: state.providers.client_names().join(", "),
        })
}
