//! What a sub-conversation takes from the conversation that starts it, and the one way
//! one is opened: [`super::Conversation::child`], the sub-agents of `agent__spawn`, their
//! summaries and `.macro` all go through [`Lineage::open`].
//!
//! The user's decisions are shared, not copied: `yolo` and off-the-record are
//! [`Switch`]es every descendant holds, so `.set yolo false` or `.otr` reaches a
//! sub-agent that is already running; the permission rules are the parent's (a project's
//! or an ACP session's included); an agent run's budget is one [`Budget`] the whole
//! tree (MCP sampling included) charges. Approvals and questions go to the parent's
//! approver and asker, labelled with who asks; cancelling the parent cancels the child.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Conversation, ConversationSpec, Notify};
use crate::config::Env;
use crate::error::CoreError;
use crate::state::AppState;
use crate::tool::Switch;
use crate::tool::approve::{Approver, RoutedApprover};
use crate::tool::ask::{Asker, RoutedAsker};
use crate::usage::Budget;
use loki_protocol::emitter::Emitter;
use loki_protocol::event::ConversationId;

/// A parent's side of its children: everything a sub-conversation inherits.
#[derive(Clone)]
pub(crate) struct Lineage {
    pub(super) state: Arc<AppState>,
    pub(super) parent: ConversationId,
    pub(super) label: String,
    pub(super) cwd: PathBuf,
    pub(super) env: Arc<Env>,
    pub(super) approver: Arc<dyn Approver>,
    pub(super) asker: Arc<dyn Asker>,
    pub(super) cancel: CancellationToken,
    pub(super) yolo: Switch,
    pub(super) mode: crate::config::permissions::ModeDial,
    /// The permission rules in force (the project's and the session's included).
    pub(super) rules: Arc<crate::config::permissions::Rules>,
    pub(super) otr: Switch,
    pub(super) user_tools: bool,
    pub(super) budget: Option<Arc<Budget>>,
    pub(super) notices: Notify,
    pub(super) observer: Option<Arc<dyn Emitter>>,
    /// The editor holding the files, shared with every descendant.
    pub(super) editor_files: Option<Arc<dyn crate::tool::EditorFiles>>,
    /// Where commands are confined, the same for every descendant.
    pub(super) sandbox: Option<Arc<crate::sandbox::Sandbox>>,
    /// More directories commands may write (`--add-dir`).
    pub(super) add_dirs: Vec<PathBuf>,
    /// The parent's depth in its tree (0 for a root).
    pub(super) depth: usize,
    /// Hooks around tool calls, the same for every descendant.
    pub(super) hooks: Option<Arc<dyn crate::hooks::Hooks>>,
    /// Where changed files are kept: a sub-agent's changes belong to the user's turn.
    pub(super) checkpoints: Option<Arc<crate::checkpoint::Recorder>>,
}

impl Lineage {
    /// What `conversation`'s children inherit, as it is now.
    pub(super) fn of(conversation: &Conversation) -> Self {
        let ctx = &conversation.ctx;
        Self {
            state: Arc::clone(conversation.state()),
            parent: ctx.id.clone(),
            label: conversation.label.clone(),
            cwd: ctx.cwd.clone(),
            env: Arc::clone(&ctx.env),
            approver: Arc::clone(&ctx.approver),
            asker: Arc::clone(&ctx.asker),
            cancel: ctx.cancel.clone(),
            yolo: ctx.tool_policy.yolo.clone(),
            mode: ctx.tool_policy.mode.clone(),
            rules: Arc::clone(&ctx.tool_policy.rules),
            otr: ctx.otr.clone(),
            user_tools: ctx.user_tools,
            budget: ctx.budget.clone(),
            notices: Arc::clone(&conversation.notices),
            observer: conversation.observer.clone(),
            editor_files: ctx.editor_files.clone(),
            sandbox: ctx.sandbox.clone(),
            add_dirs: ctx.add_dirs.clone(),
            depth: ctx.depth,
            hooks: ctx.tool_hooks.clone(),
            checkpoints: ctx.checkpoints.clone(),
        }
    }

    /// How a child with id `id` (and, when given, a name such as its agent) is labelled
    /// when it asks: `<parent label> › <id> (<name>)`.
    pub(super) fn label_for(&self, id: &str, name: Option<&str>) -> String {
        match name {
            Some(name) => format!("{} › {id} ({name})", self.label),
            None => format!("{} › {id}", self.label),
        }
    }

    /// Opens a child described by `spec`: its own model, role, session, history, tool
    /// scope and MCP lease; the parent's working directory and environment unless `spec`
    /// names others; a cancellation token the parent's cancels (unless `spec` brings one
    /// derived from it); the parent's approver (and asker, unless `spec` brings one),
    /// labelled; the user's decisions shared. `spec.yolo` and `spec.otr` are ignored: a
    /// child cannot decide for the user.
    pub(crate) async fn open(&self, mut spec: ConversationSpec) -> Result<Conversation, CoreError> {
        let id = spec
            .id
            .take()
            .unwrap_or_else(loki_protocol::event::next_conversation_id);
        let label = self.label_for(&id, spec.label.take().as_deref());
        spec.cwd = spec.cwd.or_else(|| Some(self.cwd.clone()));
        spec.env = spec.env.or_else(|| Some(Arc::clone(&self.env)));
        spec.approver = Some(Arc::new(RoutedApprover::new(
            Arc::clone(&self.approver),
            label.clone(),
        )));
        spec.asker = spec.asker.or_else(|| {
            Some(Arc::new(RoutedAsker::new(
                Arc::clone(&self.asker),
                label.clone(),
            )))
        });
        spec.cancel = spec.cancel.or_else(|| Some(self.cancel.child_token()));
        spec.user_tools |= self.user_tools;
        spec.yolo = false;
        spec.otr = false;
        spec.notices = spec.notices.or_else(|| Some(Arc::clone(&self.notices)));
        spec.observer = spec.observer.or_else(|| self.observer.clone());
        spec.editor_files = spec.editor_files.or_else(|| self.editor_files.clone());
        // A child is confined where its parent is, whatever its spec says (its agent's
        // settings may tighten that later, never loosen it).
        spec.sandbox = self.sandbox.clone();
        if self.sandbox.is_none() {
            spec.sandbox_mode = Some(crate::sandbox::SandboxMode::DangerFullAccess);
        }
        spec.add_dirs = self.add_dirs.clone();
        spec.label = Some(label);
        spec.id = Some(id);
        let mut child = Conversation::resolve(&self.state, spec)?;
        child.ctx.parent = Some(self.parent.clone());
        child.ctx.depth = self.depth + 1;
        child.ctx.user_started = false;
        child.ctx.tool_policy.yolo = self.yolo.clone();
        child.ctx.tool_policy.mode = self.mode.clone();
        child.ctx.tool_policy.rules = Arc::clone(&self.rules);
        // Its own settings (its agent's config, its role) may only tighten the tree's.
        child.ctx.tool_policy.child = true;
        child.ctx.otr = self.otr.clone();
        if self.otr.get() {
            child.ctx.save = false;
        }
        child.ctx.budget = self.budget.clone();
        child.ctx.tool_hooks = self.hooks.clone();
        child.ctx.checkpoints = self.checkpoints.clone();
        child.prepare().await?;
        Ok(child)
    }
}
