//! `task`: delegation from a plain conversation (Claude Code's `Task`). The model names a
//! type — a built-in one ([`TaskType`]: `explore`, `plan`, `general`) or an agent — and
//! the task; the sub-agent starts like one of `agent__spawn` (same tree, events, budget,
//! approver, permission mode and sandbox), and the call waits for its answer, which is
//! the tool result. Several `task` calls of one round run together (the round runs
//! calls that change nothing in parallel).
//!
//! A built-in type runs as an agent defined in memory: its instructions, and tools worked
//! out from its parent's — the reading ones for `explore` and `plan`, all of them for
//! `general` — so a sub-agent never has a tool its parent lacks. `explore` runs on
//! `small_model` when one is configured and can be used.

use std::sync::Arc;

use serde_json::Value;

use super::{Ended, Inner, SpawnError, lock, text};
use crate::agent::task_types::{READING, TaskType};
use crate::conversation::lineage::Lineage;
use crate::conversation::{Conversation, ConversationSpec};
use crate::error::CoreError;
use crate::tool::ToolError;
use crate::tool::agents::Turn;

/// What a sub-agent is started as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    /// An agent of the agents directory, or a Claude Code agent (`.claude/agents`).
    Agent(String),
    /// A built-in type of `task`.
    Builtin(TaskType),
}

impl Kind {
    /// The kind `subagent_type` names: a built-in type first (a user's agent named
    /// `explore` does not change what `task` does), else an agent.
    pub fn of(name: &str) -> Self {
        TaskType::parse(name).map_or_else(|| Self::Agent(name.trim().to_string()), Self::Builtin)
    }

    /// Its name in the tree, `.agents` and sub-agent ids.
    pub fn name(&self) -> &str {
        match self {
            Self::Agent(name) => name,
            Self::Builtin(kind) => kind.name(),
        }
    }
}

impl Inner {
    /// `task`: starts the sub-agent and waits for its answer (waiting for a free slot
    /// first when `max_concurrent_agents` are running). A sub-agent that failed or was
    /// stopped is the call's error, with what it had said.
    pub(super) async fn task(
        self: &Arc<Self>,
        args: &Value,
        turn: Turn<'_>,
    ) -> Result<Value, ToolError> {
        let prompt = text(args, "prompt")?;
        let kind = Kind::of(&text(args, "subagent_type")?);
        let id = loop {
            let started = self
                .start(
                    kind.clone(),
                    prompt.clone(),
                    turn.cancel,
                    turn.budget.cloned(),
                )
                .await;
            match started {
                Ok(id) => break id,
                Err(SpawnError::AtCapacity { .. }) => {
                    tokio::select! {
                        () = turn.cancel.cancelled() => return Err(ToolError::Cancelled),
                        () = self.slot_freed() => {}
                    }
                }
                Err(e) => return Err(ToolError::Failed(e.to_string())),
            }
        };
        let ended = tokio::select! {
            () = turn.cancel.cancelled() => return Err(ToolError::Cancelled),
            ended = self.ended(&id) => ended,
        };
        match ended {
            Some(ended) if ended.status == "completed" => Ok(Value::String(ended.output)),
            Some(ended) => Err(ToolError::Failed(failure(kind.name(), &ended))),
            None => Err(ToolError::Failed(format!(
                "sub-agent `{}` stopped without an answer",
                kind.name()
            ))),
        }
    }

    /// How child `id` ended, once it has.
    async fn ended(&self, id: &str) -> Option<Ended> {
        let mut done = lock(&self.children)
            .iter()
            .find(|c| c.id == id)
            .map(|c| c.done.clone())?;
        done.wait_for(Option::is_some).await.ok()?.clone()
    }

    /// Resolves when one of the running children ends.
    async fn slot_freed(&self) {
        let waits: Vec<_> = lock(&self.children)
            .iter()
            .filter(|c| c.running())
            .map(|c| {
                let mut done = c.done.clone();
                Box::pin(async move {
                    let _ = done.wait_for(Option::is_some).await;
                })
            })
            .collect();
        if !waits.is_empty() {
            futures_util::future::select_all(waits).await;
        }
    }

    /// Opens a built-in sub-agent's conversation from `spec` (its id, asker, token,
    /// label): on `small_model` when the type prefers it and it can be used, else on its
    /// parent's model; then its agent, defined in memory, is put in place.
    pub(super) async fn open_builtin(
        &self,
        kind: TaskType,
        lineage: &Lineage,
        spec: impl Fn(String) -> ConversationSpec,
    ) -> Result<Conversation, CoreError> {
        let state = Arc::clone(&lineage.state);
        let parent_model = self.parent.model.clone();
        let small = state
            .config
            .small_model
            .as_deref()
            .map(str::trim)
            .filter(|m| kind.prefers_small_model() && !m.is_empty() && *m != parent_model)
            .map(str::to_string);
        let mut conversation = match small {
            Some(model) => match lineage.open(spec(model)).await {
                Ok(conversation) => conversation,
                Err(CoreError::Cancelled) => return Err(CoreError::Cancelled),
                Err(e) => {
                    tracing::warn!(
                        "small_model cannot run a sub-agent ({e}); using {parent_model}"
                    );
                    lineage.open(spec(parent_model)).await?
                }
            },
            None => lineage.open(spec(parent_model)).await?,
        };
        let (tools, servers) = self.tools_for(kind, &state);
        let def = kind.def(state.paths.agents_dir.join(kind.name()), tools, servers);
        let ctx = &mut conversation.ctx;
        let instructions = ctx.system_vars().interpolate(&def.config.instructions);
        let mut role = crate::role::Role::temp(&instructions);
        role.name = kind.name().to_string();
        ctx.use_role(&state, role)?;
        ctx.agent = Some(crate::agent::ActiveAgent {
            def: Arc::new(def),
            variables: std::collections::BTreeMap::new(),
            base_env: Arc::clone(&ctx.env),
            from_secrets: Vec::new(),
        });
        Ok(conversation)
    }

    /// The global tools and MCP servers of a built-in sub-agent: its parent's, only the
    /// reading built-ins (and no MCP servers) for a type that reads only.
    fn tools_for(
        &self,
        kind: TaskType,
        state: &crate::state::AppState,
    ) -> (Vec<String>, Vec<String>) {
        let scope = &self.parent.scope;
        let enabled = scope.enabled_tools.as_deref();
        if kind.reads_only() {
            let parents: Vec<String> =
                crate::tool::enabled_tools(&state.config, &state.script_tools().tools, enabled)
                    .iter()
                    .map(|t| t.name().to_string())
                    .collect();
            let reading = READING
                .iter()
                .filter(|name| parents.iter().any(|p| p == *name))
                .map(|name| (*name).to_string())
                .collect();
            return (reading, Vec::new());
        }
        let split = |list: Option<&str>| -> Vec<String> {
            list.unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        };
        (split(enabled), split(scope.mcp_servers.as_deref()))
    }
}

/// The error of a `task` whose sub-agent did not complete, with what it had said.
fn failure(name: &str, ended: &Ended) -> String {
    let mut message = format!("sub-agent `{name}` {}", ended.status);
    if let Some(error) = &ended.error {
        message.push_str(&format!(": {error}"));
    }
    if !ended.output.trim().is_empty() {
        message.push_str(&format!("\npartial answer:\n{}", ended.output));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_types_win_over_agents_of_the_same_name() {
        assert_eq!(Kind::of("Explore"), Kind::Builtin(TaskType::Explore));
        assert_eq!(Kind::of(" coder "), Kind::Agent("coder".into()));
        assert_eq!(Kind::of("general-purpose").name(), "general");
    }
}
