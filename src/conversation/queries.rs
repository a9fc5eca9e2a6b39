//! What a driver may read of a conversation. Drivers never see `RequestContext`: they ask
//! these questions, get plain values or finished reports back, and change the
//! conversation only through [`Conversation::submit`].

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Conversation, info, policy};
use crate::agent::AgentDef;
use crate::conversation::engine::context_parts::ContextReport;
use crate::rag::search::SearchSettings;
use crate::role::Role;

/// What the prompt line and `.info` show at a glance: plain values, taken at one moment.
#[derive(Debug, Clone, Default)]
pub struct Status {
    pub model: String,
    pub client: String,
    pub model_name: String,
    pub max_input_tokens: Option<u64>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub dry_run: bool,
    pub stream: bool,
    pub save: bool,
    pub role: Option<String>,
    pub agent: Option<String>,
    pub rag: Option<String>,
    pub session: Option<SessionStatus>,
    pub usage: loki_wire::session_file::UsageTally,
    /// How many messages the user has sent.
    pub user_messages: usize,
    /// The permission mode (`default`, `accept-edits`, `plan`, `yolo`).
    pub permission_mode: &'static str,
    /// The sandbox mode (`read-only`, `workspace-write`, `danger-full-access`).
    pub sandbox: &'static str,
    /// Whether tools are offered to the model at all (`function_calling_support`).
    pub function_calling: bool,
    /// Off the record (`--otr`, `.otr`, or its parent's): nothing is written.
    pub otr: bool,
    /// The directory its tools work in.
    pub cwd: PathBuf,
    /// How many messages its history holds.
    pub history_len: usize,
    /// The sources the last retrieval used.
    pub rag_sources: Vec<String>,
    /// What leaving the open session interactively does with its changes.
    pub on_leave: policy::OnLeave,
    /// Whether an unattended close (a stop signal, a macro, `.exit session` in a script)
    /// saves.
    pub saves_unattended: bool,
}

/// A text report of the conversation, as the dot-commands show it.
#[derive(Debug)]
pub enum Report {
    /// `.info`: settings, then the conversation's state, with the front end's display
    /// rows.
    Info(Vec<info::Row>),
    /// `.info session`.
    Session,
    /// `.info agent`.
    Agent,
    /// `.tool-results`: the last turn's tool calls with their results.
    ToolResults,
    /// `.info permissions`: the permission mode and rules, one per line.
    Permissions,
    /// `.jobs`: the background jobs, one per line (none: there are none).
    Jobs,
}

/// The open session, as the prompt shows it.
#[derive(Debug, Clone, Default)]
pub struct SessionStatus {
    pub name: String,
    /// Its id (what a store keys it by).
    pub id: String,
    pub dirty: bool,
    pub autoname: Option<String>,
    /// Tokens the conversation's history takes.
    pub tokens: usize,
}

impl Conversation {
    /// The prompt line's values.
    pub fn status(&self) -> Status {
        let ctx = &self.ctx;
        let session = ctx.session.as_ref().map(|s| SessionStatus {
            name: s.name(),
            id: s.id().to_string(),
            dirty: s.is_dirty(),
            autoname: s.lock().get().autoname.clone(),
            tokens: crate::conversation::engine::session_tokens(ctx),
        });
        Status {
            model: ctx.model.id(),
            client: ctx.model.client.clone(),
            model_name: ctx.model.config.name.clone(),
            max_input_tokens: ctx.model.config.max_input_tokens,
            temperature: ctx.temperature,
            top_p: ctx.top_p,
            dry_run: ctx.dry_run,
            stream: ctx.stream,
            save: ctx.save,
            role: ctx.role.as_ref().map(|r| r.name.clone()),
            agent: ctx.agent.as_ref().map(|a| a.def.name.clone()),
            rag: ctx.active_rag(),
            session,
            usage: ctx.usage,
            user_messages: ctx
                .history
                .iter()
                .filter(|m| m.role == loki_wire::message::Role::User)
                .count(),
            permission_mode: ctx.tool_policy.mode().name(),
            sandbox: ctx
                .sandbox
                .as_ref()
                .map_or(crate::sandbox::SandboxMode::DangerFullAccess, |s| s.mode())
                .name(),
            function_calling: ctx.function_calling_support,
            otr: ctx.otr.get(),
            cwd: ctx.cwd.clone(),
            history_len: ctx.history.len(),
            rag_sources: ctx.rag_sources.clone(),
            on_leave: policy::on_leave(ctx),
            saves_unattended: policy::save_unattended(ctx),
        }
    }

    /// The role in force (an agent's instructions are its role).
    pub fn role(&self) -> Option<&Role> {
        self.ctx.role.as_ref()
    }

    /// The active agent's definition.
    pub fn agent(&self) -> Option<&Arc<AgentDef>> {
        self.ctx.agent.as_ref().map(|a| &a.def)
    }

    /// The search settings a knowledge base with `meta` gets in this conversation.
    pub fn rag_settings(&self, meta: &crate::rag::RagMeta) -> SearchSettings {
        crate::conversation::retrieval::settings(self.state(), &self.ctx, meta)
    }

    /// The names of the tools the model is offered now and may call: its scope's tools
    /// (MCP servers already running; tool groups it has loaded), without those
    /// `deny_tools` always refuses.
    pub fn offered_tools(&self) -> Vec<String> {
        let state = self.state();
        let scope = crate::conversation::engine::scope::declared(state, &self.ctx);
        crate::conversation::engine::declared_tools(state, &self.ctx, &scope)
            .iter()
            .map(|t| t.name().to_string())
            .filter(|name| !self.ctx.tool_policy.deny.contains(name))
            .collect()
    }

    /// The MCP servers its scope names.
    pub fn mcp_server_names(&self) -> Vec<String> {
        crate::conversation::engine::scope::mcp_servers(self.state(), &self.ctx).0
    }

    /// Whether a session `name` exists in its store.
    pub async fn session_exists(&self, name: &str) -> bool {
        crate::conversation::engine::command::session_exists(self.state(), &self.ctx, name).await
    }

    /// The last answer's text (`.copy`).
    pub fn last_answer(&self) -> Option<String> {
        crate::conversation::engine::command::last_answer(&self.ctx)
    }

    /// `.context`: where the input window goes for the next message.
    pub fn context_report(&self) -> ContextReport {
        self.engine.context_report(&self.ctx)
    }

    /// The turns a rewind can undo, oldest first, with the files each changed.
    pub fn checkpoints(&self) -> Vec<crate::checkpoint::TurnRecord> {
        crate::conversation::engine::rewind::turns(&self.ctx)
    }

    /// The text of the conversation's `n`-th prompt (1-based), for `.edit message N`.
    pub fn user_message(&self, n: usize) -> Option<String> {
        let index = crate::conversation::engine::fork::user_message_index(&self.ctx.history, n)?;
        self.ctx
            .history
            .get(index)
            .map(loki_wire::message::Message::text_content)
    }

    /// What loki's tools changed in files in the last turn that changed any, or over
    /// the whole conversation when `session`, as a unified diff (unsanitised); empty when
    /// nothing changed.
    pub fn diff(&self, session: bool) -> String {
        let Some(recorder) = &self.ctx.checkpoints else {
            return String::new();
        };
        let turns = self.checkpoints();
        let shown = if session {
            &turns[..]
        } else {
            &turns[turns.len().saturating_sub(1)..]
        };
        crate::checkpoint::diff::render(recorder.store(), shown)
    }

    /// The text report `what` (`.info …`, `.tool-results`); none when there is nothing
    /// to report (no session, no agent, no tool call in the last turn).
    pub fn report(&self, what: Report) -> Option<String> {
        match what {
            Report::Info(display) => Some(info::conversation(self.state(), &self.ctx, display)),
            Report::Session => info::session(&self.ctx),
            Report::Agent => info::agent(&self.ctx),
            Report::ToolResults => info::tool_results(&self.ctx),
            Report::Permissions => Some(self.permissions()),
            Report::Jobs => self.jobs(),
        }
    }

    /// The background jobs, one per line: id, state, age, output, command.
    fn jobs(&self) -> Option<String> {
        let jobs = self.ctx.jobs.list();
        if jobs.is_empty() {
            return None;
        }
        let lines: Vec<String> = jobs
            .iter()
            .map(|job| {
                let pid = job.pid.map_or_else(String::new, |p| format!(" pid {p}"));
                format!(
                    "{:>3}  {}{pid}  {}s  {} bytes  {}",
                    job.id, job.state, job.seconds, job.output_bytes, job.command
                )
            })
            .collect();
        Some(lines.join("\n"))
    }

    /// The permission mode and rules, one per line (`.info permissions`).
    fn permissions(&self) -> String {
        let policy = &self.ctx.tool_policy;
        let mut lines = vec![format!("mode  {}", policy.mode().name())];
        let rules = policy.rules.lines();
        if rules.is_empty() {
            lines.push("no rules (permissions: allow, ask, deny in config.yaml)".into());
        }
        lines.extend(rules);
        lines.join("\n")
    }

    /// Asks MCP server `server` for prompt `name`, as this conversation (its asker and
    /// working directory); the prompt's messages' texts.
    pub async fn mcp_prompt(
        &self,
        server: &crate::mcp::server::McpServer,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, crate::mcp::McpError> {
        let side = crate::tool::mcp_client::ConversationSide {
            asker: self.ctx.asker.as_ref(),
            conversation: &self.ctx.id,
            cwd: &self.ctx.cwd,
            sampler: None,
        };
        let timeout = std::time::Duration::from_secs(self.state().config.tool_timeout.max(1));
        let messages = server
            .get_prompt(name, arguments, timeout, cancel, &side)
            .await?;
        Ok(messages.into_iter().map(|(_, text)| text).collect())
    }
}
