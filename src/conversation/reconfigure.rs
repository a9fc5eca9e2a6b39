//! `.edit config`: a conversation goes on over a reloaded configuration. What it chose
//! stays (a model set with `.model`, a role's or session's model, settings changed with
//! `.set`); what it still took from the old configuration follows the new one.

use std::sync::Arc;

use super::Conversation;
use crate::config::AppConfig;
use crate::conversation::context::RequestContext;
use crate::conversation::engine::Engine;
use crate::error::CoreError;
use crate::state::AppState;

impl Conversation {
    /// Continues over `new_state`; an error when no model of the new configuration can
    /// be used (the conversation keeps its model).
    pub fn reconfigure(&mut self, new_state: Arc<AppState>) -> Result<(), CoreError> {
        let mut failed = None;
        let old_state = Arc::clone(self.state());
        let model = self.ctx.model.id();
        self.engine = Engine::new(Arc::clone(&new_state));
        // A session's own model that was unavailable may be configured now; if it still
        // is not, the session keeps its value.
        let pinned = self.ctx.session_model.clone();
        let restored = pinned
            .as_ref()
            .is_some_and(|m| self.ctx.set_model(&new_state, &m.id).is_ok());
        // The new default model applies unless the conversation chose another one
        // (`.model`, a role's or a session's model).
        let old_default = old_state
            .providers
            .default_chat_model(old_state.config.model.as_deref())
            .map(|m| m.id())
            .ok();
        let on_default = pinned.is_none()
            && old_default.as_deref() == Some(model.as_str())
            && self.ctx.role.as_ref().is_none_or(|r| r.model.is_none())
            && self
                .ctx
                .session
                .as_ref()
                .is_none_or(|s| s.lock().get().model.is_none());
        let switched = on_default
            && new_state
                .config
                .model
                .as_deref()
                .is_some_and(|m| self.ctx.set_model(&new_state, m).is_ok());
        if !restored && !switched && self.ctx.set_model(&new_state, &model).is_err() {
            match RequestContext::resolve(&new_state, None) {
                Ok(fresh) => {
                    self.ctx.model = fresh.model;
                    self.ctx.provider = fresh.provider;
                }
                Err(e) => failed = Some(CoreError::Model(e)),
            }
        }
        if !restored {
            self.ctx.session_model = pinned;
        }
        apply_config_changes(&mut self.ctx, &old_state.config, &new_state.config);
        failed.map_or(Ok(()), Err)
    }
}

/// After `.edit config`: every setting the conversation still takes from the old
/// configuration (it was not changed with `.set` or by a role) takes the new value.
fn apply_config_changes(ctx: &mut RequestContext, old: &AppConfig, new: &AppConfig) {
    fn follow<T: PartialEq + Clone>(current: &mut T, old: &T, new: &T) {
        if current == old {
            *current = new.clone();
        }
    }
    follow(&mut ctx.temperature, &old.temperature, &new.temperature);
    follow(&mut ctx.top_p, &old.top_p, &new.top_p);
    follow(&mut ctx.stream, &old.stream, &new.stream);
    follow(&mut ctx.dry_run, &old.dry_run, &new.dry_run);
    follow(&mut ctx.save, &old.save, &new.save);
    follow(
        &mut ctx.function_calling_support,
        &old.function_calling_support,
        &new.function_calling_support,
    );
    follow(
        &mut ctx.enabled_tools,
        &old.enabled_tools,
        &new.enabled_tools,
    );
    follow(
        &mut ctx.enabled_mcp_servers,
        &old.enabled_mcp_servers,
        &new.enabled_mcp_servers,
    );
    follow(
        &mut ctx.mcp_server_support,
        &old.mcp_server_support,
        &new.mcp_server_support,
    );
    follow(&mut ctx.save_session, &old.save_session, &new.save_session);
    follow(
        &mut ctx.compression_threshold,
        &old.compression_threshold,
        &new.compression_threshold,
    );
}
