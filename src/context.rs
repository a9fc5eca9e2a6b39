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
use crate::session::Session;
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
    /// The open session, if any (its messages are `history`).
    pub session: Option<ActiveSession>,
    /// Cancels the running turn. Replaced by a fresh token after each cancellation.
    pub cancel: CancellationToken,
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

/// A session attached to the conversation.
#[derive(Debug, Clone)]
pub struct ActiveSession {
    /// Its name (file stem).
    pub name: String,
    /// What was loaded (settings and keys loki keeps but does not use).
    pub stored: Session,
    /// Messages changed since it was loaded or saved.
    pub dirty: bool,
}

impl RequestContext {
    /// Opens (or starts) session `name`: a saved session restores its model, sampling
    /// settings, role and messages; a new one starts empty with the current settings.
    pub fn open_session(&mut self, state: &AppState, name: &str) -> Result<bool, CoreError> {
        let stored = state.sessions.load(name)?;
        let existed = stored.is_some();
        let stored = stored.unwrap_or_default();
        if let Some(model) = &stored.model {
            self.set_model(state, model)?;
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
        self.session = Some(ActiveSession {
            name: name.to_string(),
            stored,
            dirty: false,
        });
        Ok(existed)
    }

    /// The session file contents for the current conversation.
    pub fn session_snapshot(&self) -> Option<Session> {
        let active = self.session.as_ref()?;
        let mut session = active.stored.clone();
        session.model = Some(self.model.id());
        session.temperature = self.temperature;
        session.top_p = self.top_p;
        session.role_name = self.role.as_ref().map(|r| r.name.clone());
        session.role_prompt = self
            .role
            .as_ref()
            .map(|r| r.prompt.clone())
            .filter(|p| !p.is_empty());
        session.messages = self.history.clone();
        Some(session)
    }

    /// Saves the open session (under `rename` when given); returns the file written.
    pub fn save_session(
        &mut self,
        state: &AppState,
        rename: Option<&str>,
    ) -> Result<std::path::PathBuf, CoreError> {
        let snapshot = self.session_snapshot().ok_or_else(|| {
            CoreError::InvalidRequest(
                "no session is open (use `-s <name>` or `.session <name>`)".into(),
            )
        })?;
        let Some(active) = self.session.as_mut() else {
            return Err(CoreError::InvalidRequest("no session is open".into()));
        };
        if let Some(name) = rename {
            active.name = name.to_string();
        }
        let path = state.sessions.save(&active.name, &snapshot)?;
        active.stored = snapshot;
        active.dirty = false;
        Ok(path)
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
            session: None,
            cancel: CancellationToken::new(),
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

    /// Switches the model (and provider) for the rest of the conversation.
    pub fn set_model(&mut self, state: &AppState, id: &str) -> Result<(), ModelError> {
        let model = state.providers.resolve(id, ModelKind::Chat)?;
        self.provider = provider_for(state, &model)?;
        self.model = model;
        Ok(())
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
