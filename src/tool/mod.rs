//! Tools the model can call: which ones a conversation offers ([`enabled_tools`]), whether
//! a call may run ([`approval_needed`]), and running a round of calls ([`run_round`]).
//!
//! Read-only tools inside the working directory run without asking. Anything that
//! writes, deletes, runs a command, reaches the network or touches a path outside the
//! working directory goes to the context's [`approve::Approver`] first, unless the user
//! opted out (`yolo`, `auto_approve_tools`, or "always" earlier in the conversation).
//! Two things no opt-out changes: `fs_rm` never removes the working tree, and only yolo
//! skips the question for deleting a directory with contents. What an approval covered
//! travels with the call as a [`Grant`] and is checked again when it runs.
//! Approved calls of one round run concurrently; results go back to the model as tool
//! messages, errors as `{"tool_call_error": …}` so it can react.

pub mod agents;
pub mod approve;
pub mod ask;
pub mod builtin;
mod confined;
mod delete;
pub mod escalate;
mod fences;
mod gate;
pub mod hidden_env;
pub mod image;
pub mod jobs;
pub mod load;
pub mod lsp;
pub mod mcp_client;
pub mod mcp_tools;
pub mod memory;
pub mod paths;
mod process;
mod run_script;
pub mod schema;
pub mod script;
pub mod skills;
pub mod todo;
pub mod user;
pub mod web_search;
pub mod wrappers;

pub use hidden_env::HiddenEnv;
pub use process::Background;

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::client::ToolSpec;
use crate::config::AppConfig;
use crate::config::permissions;
use crate::mcp::server::ProgressSender;
use approve::Approver;
use builtin::Builtin;
use loki_protocol::event::ToolFailure;
use loki_wire::message::{Message, Role, ToolCall};
use script::ScriptTool;

/// A tool a conversation can offer: built into loki, or a user script.
#[derive(Debug, Clone)]
pub enum Tool {
    /// One of [`builtin::BUILTINS`].
    Builtin(&'static Builtin),
    /// A script in `functions/tools/`.
    Script(Arc<ScriptTool>),
    /// A function offered on behalf of an MCP server.
    Mcp(Arc<crate::tool::mcp_tools::McpTool>),
    /// A conversation tool: asks the conversation's user (`user__*`).
    User(user::UserTool),
    /// A conversation tool: runs sub-agents (`agent__*`).
    Agent(agents::AgentTool),
    /// A conversation tool: the todo list (`todo__*`).
    Todo(todo::TodoTool),
    /// A conversation tool: reads skills (`load_skills`).
    Skills(skills::SkillsTool),
    /// Asks a language server (`lsp_diagnostics`, `lsp_references`).
    Lsp(lsp::LspTool),
    /// Long-term memory (`memory__remember`, `memory__search`).
    Memory(memory::MemoryTool),
    /// Declares groups of tools on demand (`load_tools`).
    Load(load::LoadTools),
}

impl Tool {
    /// Its name.
    pub fn name(&self) -> &str {
        match self {
            Self::Builtin(b) => b.name,
            Self::Script(s) => &s.name,
            Self::Mcp(m) => &m.name,
            Self::User(u) => u.name(),
            Self::Agent(a) => a.name(),
            Self::Todo(t) => t.name(),
            Self::Skills(_) => skills::NAME,
            Self::Lsp(l) => l.name(),
            Self::Memory(m) => m.name(),
            Self::Load(_) => load::NAME,
        }
    }

    /// The declaration sent to the model.
    pub fn spec(&self) -> ToolSpec {
        match self {
            Self::Builtin(b) => ToolSpec {
                name: b.name.to_string(),
                description: b.description.to_string(),
                parameters: b.schema(),
            },
            // Declared compact; the full schema stays for checking calls.
            Self::Script(s) => ToolSpec {
                name: s.name.clone(),
                description: s.description.clone(),
                parameters: schema::compact(&s.parameters),
            },
            Self::Mcp(m) => ToolSpec {
                name: m.name.clone(),
                description: m.description.clone(),
                parameters: schema::compact(&m.parameters),
            },
            Self::User(u) => u.spec(),
            Self::Agent(a) => a.spec(),
            Self::Todo(t) => t.spec(),
            Self::Skills(s) => s.spec(),
            Self::Lsp(l) => l.spec(),
            Self::Memory(m) => m.spec(),
            Self::Load(l) => l.spec(),
        }
    }
}

/// What a tool may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads files or the clock.
    Read,
    /// Creates, changes or deletes files.
    Write,
    /// Runs a command.
    Exec,
    /// Reaches the network.
    Network,
}

/// Why a tool call produced no result.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// No such tool in this conversation.
    #[error("there is no tool named `{0}` here")]
    Unknown(String),
    /// Arguments missing, of the wrong type, or not JSON.
    #[error("invalid arguments: {0}")]
    BadArguments(String),
    /// The tool ran and failed.
    #[error("{0}")]
    Failed(String),
    /// A script exited with a non-zero status.
    #[error("{message}")]
    Exited {
        /// `Tool call '<name>' exited with code <n>`.
        message: String,
        /// What it wrote to stderr.
        stderr: String,
    },
    /// The user refused.
    #[error("the user declined this call{}", .0.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Declined(Option<String>),
    /// Refused without asking anyone: configuration, or no one there to approve.
    #[error("declined without asking: {0}")]
    Refused(String),
    /// The same call keeps being made.
    #[error(
        "tool-call loop detected: `{0}` was already called with these exact arguments {MAX_REPEATS} times in this turn; use the earlier results or try something else"
    )]
    Loop(String),
    /// The turn was cancelled.
    #[error("cancelled")]
    Cancelled,
}

/// Why the editor did not read or write a file (the disk is used then).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditorError {
    /// The editor does not offer this.
    #[error("the editor does not offer this")]
    NotOffered,
    /// The editor answered with an error, or not at all.
    #[error("the editor failed: {0}")]
    Failed(String),
}

/// Files as an editor holds them — its unsaved buffers — for a conversation driven by
/// one (an ACP client's `fs/read_text_file` and `fs/write_text_file`). The file tools
/// read and write through it; where it fails they use the disk.
pub trait EditorFiles: Send + Sync {
    /// The text of `path` as the editor has it.
    fn read<'a>(&'a self, path: &'a Path) -> EditorFuture<'a, String>;
    /// Gives `path` this text in the editor (which saves it as it does).
    fn write<'a>(&'a self, path: &'a Path, text: &'a str) -> EditorFuture<'a, ()>;
}

/// What the editor answers an [`EditorFiles`] request with, once it does.
pub type EditorFuture<'a, T> = futures_util::future::BoxFuture<'a, Result<T, EditorError>>;

/// What tools run with.
#[derive(Clone, Copy)]
pub struct ToolEnv<'a> {
    /// The working directory (the tree tools may touch without asking).
    pub cwd: &'a Path,
    /// The editor that holds the files, when one drives the conversation.
    pub editor: Option<&'a dyn EditorFiles>,
    /// The user's shell, for `execute_command`.
    pub shell: &'a str,
    /// Where commands and script tools are confined, and what file tools may never
    /// touch; none: `danger-full-access`.
    pub sandbox: Option<&'a crate::sandbox::Sandbox>,
    /// The permission rules (for the files a walk reaches).
    pub rules: &'a permissions::Rules,
    /// How long a command may run.
    pub timeout: Duration,
    /// Cancels running tools.
    pub cancel: &'a CancellationToken,
    /// User agent for fetches.
    pub user_agent: Option<&'a str>,
    /// The config directory (`LLM_ROOT_DIR` of script tools).
    pub root_dir: &'a Path,
    /// Where script tools keep caches (`LLM_TOOL_CACHE_DIR` is a directory below it).
    pub cache_dir: &'a Path,
    /// The conversation's environment: what tool processes run with (less what
    /// `hidden_env` withholds).
    pub vars: &'a crate::config::Env,
    /// `functions/.env`, loaded for script tools.
    pub tools_env_file: &'a Path,
    /// The conversation's todo list, for the `todo__*` tools.
    pub todo: Option<&'a std::sync::Mutex<todo::TodoList>>,
    /// Runs the `agent__*` tools (none: the conversation cannot start agents).
    pub supervisor: Option<&'a dyn agents::Supervisor>,
    /// The agent run's budget, shared with the sub-agents it starts.
    pub budget: Option<&'a std::sync::Arc<crate::usage::Budget>>,
    /// The vault, for `{{NAME}}` placeholders in `functions/.env` (none: left as they are).
    pub secrets: Option<&'a crate::vault::Keyring>,
    /// The search backend, if one is configured.
    pub web_search: Option<&'a web_search::WebSearch>,
    /// Where tools put images they return (as `data:` URLs), when the model can see them.
    pub images: Option<&'a std::sync::Mutex<Vec<String>>>,
    /// Process groups that outlive their call; killed when the turn ends.
    pub background: &'a Background,
    /// The conversation's background jobs (none: `background: true` is refused).
    pub jobs: Option<&'a jobs::Jobs>,
    /// Environment variables commands and script tools do not inherit.
    pub hidden_env: &'a HiddenEnv,
    /// Where calls report progress (MCP progress notifications), if anyone listens.
    pub progress: Option<&'a ProgressSender>,
    /// Who answers the conversation's questions (`user__*` tools).
    pub asker: &'a dyn ask::Asker,
    /// The conversation the calls belong to (labels questions).
    pub conversation: &'a str,
    /// The language servers, for the `lsp_*` tools.
    pub lsp: Option<&'a crate::lsp::LspPool>,
    /// The workspace memory, for `memory__remember`.
    pub memory: Option<&'a crate::memory::Memory>,
    /// Answers MCP servers' sampling requests with the conversation's model.
    pub mcp_sampler: Option<&'a dyn mcp_client::Sampler>,
    /// Hooks around every call (`PreToolUse`, `PostToolUse`).
    pub hooks: Option<&'a dyn crate::hooks::Hooks>,
    /// Keeps what files held before a turn changed them (rewinds).
    pub checkpoints: Option<&'a crate::checkpoint::Recorder>,
}

/// What the approval of a call covered, checked again when it runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Grant {
    /// Its path was outside the working tree when it was approved: it may stay there.
    /// Without this, a change whose path now resolves outside the tree is refused.
    pub outside: bool,
    /// `fs_rm` of a directory with contents was approved.
    pub recursive: bool,
}

/// The tools a conversation offers: `enabled` (the role's `enabled_tools`, else the
/// conversation's or the configuration's) expanded through `mapping_tools`, `all` meaning
/// every tool, limited to `visible_tools` when that is set. Built-in tools come first; a
/// script with a built-in's name is ignored.
pub fn enabled_tools(
    config: &AppConfig,
    scripts: &[Arc<ScriptTool>],
    enabled: Option<&str>,
) -> Vec<Tool> {
    let Some(enabled) = enabled.map(str::trim).filter(|e| !e.is_empty()) else {
        return Vec::new();
    };
    let visible = |b: &&Builtin| {
        config
            .visible_tools
            .as_ref()
            .is_none_or(|v| v.iter().any(|name| tool_stem(name) == b.name))
    };
    let mut names: Vec<String> = Vec::new();
    for item in enabled.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match config.mapping_tools.get(item) {
            Some(group) => names.extend(group.split(',').map(|s| s.trim().to_string())),
            None => names.push(item.to_string()),
        }
    }
    let all = names.iter().any(|n| n == "all");
    let shown = |name: &str| {
        config
            .visible_tools
            .as_ref()
            .is_none_or(|v| v.iter().any(|n| tool_stem(n) == name))
    };
    let wanted = |name: &str| all || names.iter().any(|n| tool_stem(n) == name);
    let mut tools: Vec<Tool> = builtin::BUILTINS
        .iter()
        .filter(visible)
        .filter(|b| wanted(b.name))
        .map(Tool::Builtin)
        .collect();
    // The job tools come with `execute_command` (declared once a job runs).
    if tools.iter().any(|t| t.name() == "execute_command") {
        tools.extend(builtin::JOB_TOOLS.iter().map(Tool::Builtin));
    }
    if !config.lsp_servers.is_empty() {
        tools.extend(
            lsp::LspTool::ALL
                .into_iter()
                .filter(|t| wanted(t.name()) && shown(t.name()))
                .map(Tool::Lsp),
        );
    }
    if config.memory {
        tools.extend(
            memory::MemoryTool::ALL
                .into_iter()
                .filter(|t| wanted(t.name()) && shown(t.name()))
                .map(Tool::Memory),
        );
    }
    for script in scripts {
        if wanted(&script.name) && builtin::find(&script.name).is_none() {
            tools.push(Tool::Script(Arc::clone(script)));
        }
    }
    tools
}

/// The tool loki has built in under `name`, when the configuration has it but
/// `visible_tools` hides it from models. `visible_tools` decides what models are offered;
/// a person who names the tool (`--run-tool`, so its `functions/bin/` wrapper, also when a
/// script tool calls that wrapper) still runs it, with the same approval and confinement.
pub fn hidden_builtin(config: &AppConfig, name: &str) -> Option<Tool> {
    let hidden = config
        .visible_tools
        .as_ref()
        .is_some_and(|v| !v.iter().any(|n| tool_stem(n) == name));
    if !hidden {
        return None;
    }
    if let Some(builtin) = builtin::find(name) {
        return Some(Tool::Builtin(builtin));
    }
    // The language-server and memory tools exist only when configured.
    let lsp = lsp::LspTool::ALL
        .into_iter()
        .find(|t| t.name() == name)
        .filter(|_| !config.lsp_servers.is_empty())
        .map(Tool::Lsp);
    let memory = memory::MemoryTool::ALL
        .into_iter()
        .find(|t| t.name() == name)
        .filter(|_| config.memory)
        .map(Tool::Memory);
    lsp.or(memory)
}

/// `fs_cat.sh` → `fs_cat` (Loki lists tools by file name).
fn tool_stem(name: &str) -> &str {
    name.rsplit_once('.')
        .filter(|(_, ext)| matches!(*ext, "sh" | "py" | "ts" | "js"))
        .map_or(name, |(stem, _)| stem)
}

/// The declarations sent to the model.
pub fn specs(tools: &[Tool]) -> Vec<ToolSpec> {
    tools.iter().map(Tool::spec).collect()
}

/// Identical calls (same tool, same arguments) allowed per turn before the loop alert.
pub const MAX_REPEATS: usize = 2;

/// A decision the user makes for a whole conversation tree (`yolo`, off the record):
/// clones share it, so a sub-conversation sees the change its parent's user makes, also
/// after it started.
#[derive(Debug, Clone, Default)]
pub struct Switch(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Switch {
    /// A switch of its own, set to `on`.
    pub fn new(on: bool) -> Self {
        Self(std::sync::Arc::new(std::sync::atomic::AtomicBool::new(on)))
    }

    /// Whether it is on now.
    pub fn get(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Turns it on or off for every holder.
    pub fn set(&self, on: bool) {
        self.0.store(on, std::sync::atomic::Ordering::Relaxed);
    }
}

/// How calls are approved in a conversation.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Approve everything (shared with the conversation's descendants).
    pub yolo: Switch,
    /// Tools that never ask.
    pub auto_approve: Vec<String>,
    /// Tools that are always refused.
    pub deny: Vec<String>,
    /// Tools the user answered "always" for in this conversation.
    pub always: HashSet<String>,
    /// Calls made in the current turn (`name` + arguments) and how often.
    pub seen: std::collections::HashMap<String, usize>,
    /// The permission mode other than yolo (shared with the conversation's descendants).
    pub mode: permissions::ModeDial,
    /// `permissions:` rules.
    pub rules: std::sync::Arc<permissions::Rules>,
    /// The mode this conversation's own settings ask for (a sub-agent's config or role):
    /// the tree's mode applies, never looser than this.
    pub own: Option<permissions::PermissionMode>,
    /// A sub-conversation: its settings may tighten its mode, never loosen the tree's.
    pub child: bool,
    /// Directories besides the working tree that file tools treat as part of it
    /// (`additional_directories`, Claude Code's `permissions.additionalDirectories`):
    /// a path there is not "outside", so allow rules, accept-edits and "always" cover it.
    pub additional_directories: Vec<String>,
}

impl Policy {
    /// The configured policy.
    pub fn from_config(config: &AppConfig) -> Self {
        let mode = config
            .permission_mode
            .as_deref()
            .and_then(permissions::PermissionMode::parse)
            .unwrap_or_default();
        let mut policy = Self {
            yolo: Switch::new(config.yolo),
            auto_approve: config.auto_approve_tools.clone(),
            deny: config.deny_tools.clone(),
            always: HashSet::new(),
            seen: std::collections::HashMap::new(),
            mode: permissions::ModeDial::default(),
            rules: std::sync::Arc::new(permissions::Rules::new(&config.permissions)),
            own: None,
            child: false,
            additional_directories: config
                .additional_directories
                .iter()
                .chain(&config.permissions.additional_directories)
                .cloned()
                .collect(),
        };
        if mode != permissions::PermissionMode::Default {
            policy.set_mode(mode);
        }
        policy
    }

    /// The permission mode now: the tree's (yolo when the yolo switch is on), tightened
    /// by this conversation's own.
    pub fn mode(&self) -> permissions::PermissionMode {
        let tree = if self.yolo.get() {
            permissions::PermissionMode::Yolo
        } else {
            self.mode.get()
        };
        self.own.map_or(tree, |own| tree.stricter(own))
    }

    /// Whether every call runs unasked now (the tree is in yolo, and this conversation's
    /// own mode does not tighten it).
    pub fn yolo(&self) -> bool {
        self.mode() == permissions::PermissionMode::Yolo
    }

    /// Sets the mode for the whole tree (`yolo` is the yolo switch) — or, in a
    /// sub-conversation, tightens its own: a child can never loosen its tree.
    pub fn set_mode(&mut self, mode: permissions::PermissionMode) {
        if self.child {
            self.own = Some(self.own.map_or(mode, |own| own.stricter(mode)));
            return;
        }
        self.yolo.set(mode == permissions::PermissionMode::Yolo);
        if mode != permissions::PermissionMode::Yolo {
            self.mode.set(mode);
        }
    }
}

/// Whether a call must be approved: anything but reading inside the working tree
/// (scripts can do anything, so they always ask).
pub fn approval_needed(tool: &Tool, args: &Value, cwd: &Path) -> bool {
    match tool {
        Tool::Builtin(b) => {
            b.effect != Effect::Read
                || builtin::touched_paths(b, args, cwd)
                    .iter()
                    .any(|p| !p.inside)
        }
        Tool::Script(_) => true,
        Tool::Mcp(m) => m.writes(args),
        // What is remembered is recalled into later conversations: it is approved like
        // a file write.
        Tool::Memory(m) => !m.reads_only(),
        Tool::User(_)
        | Tool::Agent(_)
        | Tool::Todo(_)
        | Tool::Skills(_)
        | Tool::Lsp(_)
        | Tool::Load(_) => false,
    }
}

/// One finished call.
#[derive(Debug, Clone)]
pub struct CallResult {
    /// The call.
    pub call: ToolCall,
    /// What goes back to the model.
    pub content: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// What went wrong, when it did not succeed.
    pub error: Option<ToolFailure>,
    /// A script tool that produced no output at all (recorded as `DONE`). A round of only
    /// such results ends the turn without asking the model again, as in Loki.
    pub silent: bool,
}

impl ToolError {
    /// The kind of failure, for programs reading events.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Unknown(_) => "unknown_tool",
            Self::BadArguments(_) => "bad_arguments",
            Self::Failed(_) => "failed",
            Self::Exited { .. } => "exited",
            Self::Declined(_) => "declined",
            Self::Refused(_) => "refused",
            Self::Loop(_) => "loop",
            Self::Cancelled => "cancelled",
        }
    }
}

/// The names argument `key` lists: an array of names, or one name as a string; `what`
/// says in the error what they name (`skill names`).
pub(crate) fn name_list<'a>(
    args: &'a Value,
    key: &str,
    what: &str,
) -> Result<Vec<&'a str>, ToolError> {
    match &args[key] {
        Value::Array(items) => Ok(items.iter().filter_map(Value::as_str).collect()),
        Value::String(one) => Ok(vec![one.as_str()]),
        _ => Err(ToolError::BadArguments(format!("`{key}` lists {what}"))),
    }
}

impl CallResult {
    /// The tool message for the conversation.
    pub fn message(&self) -> Message {
        // Known secrets (API keys, vault entries) never reach the model in tool output.
        let content = loki_wire::secrets::redact(&self.content).into_owned();
        let mut message = Message::text(Role::Tool, content);
        message.tool_call_id = Some(self.call.id.clone());
        message
    }
}

/// Runs one round of calls: approval one at a time (a person answers in order), then the
/// approved calls concurrently. Results come back in call order.
pub async fn run_round(
    calls: &[ToolCall],
    tools: &[Tool],
    env: ToolEnv<'_>,
    policy: &mut Policy,
    approver: &dyn Approver,
    max_output: usize,
) -> Vec<CallResult> {
    let (ready, asked) = admit_round(calls, tools, &env, policy, approver).await;
    // Reads run together; once anything writes or runs a command, calls run one after
    // another in the model's order (a write and then running what was written).
    let sequential = ready
        .iter()
        .any(|r| r.as_ref().is_ok_and(|a| changes_things(&a.tool, &a.args)));
    let (env, asked) = (&env, &asked);
    let runs = calls
        .iter()
        .zip(ready)
        .map(|(call, ready)| run_call(call, ready, env, asked.contains(&call.id), max_output));
    if sequential {
        let mut results = Vec::with_capacity(calls.len());
        for run in runs {
            results.push(run.await);
        }
        results
    } else {
        futures_util::future::join_all(runs).await
    }
}

/// Checks the calls of a round in order ([`gate::check`]): what each may run as, and the
/// ids of the calls whose approval was asked for (or waived by yolo), which are not
/// re-checked when they run.
async fn admit_round(
    calls: &[ToolCall],
    tools: &[Tool],
    env: &ToolEnv<'_>,
    policy: &mut Policy,
    approver: &dyn Approver,
) -> (Vec<Result<gate::Admitted, ToolError>>, HashSet<String>) {
    let mut ready = Vec::with_capacity(calls.len());
    let mut asked: HashSet<String> = HashSet::new();
    for call in calls {
        let needed = tools
            .iter()
            .find(|t| t.name() == call.name)
            .zip(serde_json::from_str::<Value>(&call.arguments).ok())
            .is_some_and(|(t, args)| approval_needed(t, &args, env.cwd));
        if needed || policy.yolo() {
            asked.insert(call.id.clone());
        }
        let checked = gate::check(call, tools, env, policy, approver).await;
        if matches!(checked, Err(ToolError::Cancelled)) {
            env.cancel.cancel();
        }
        ready.push(checked);
    }
    (ready, asked)
}

/// Whether a call writes, runs something or may (a script): such calls run one at a
/// time.
fn changes_things(tool: &Tool, args: &Value) -> bool {
    match tool {
        Tool::Builtin(b) => b.effect != Effect::Read,
        Tool::Script(_) => true,
        Tool::Mcp(m) => m.writes(args),
        Tool::User(_)
        | Tool::Agent(_)
        | Tool::Todo(_)
        | Tool::Skills(_)
        | Tool::Lsp(_)
        | Tool::Memory(_)
        | Tool::Load(_) => false,
    }
}

/// Runs one checked call (`asked`: its approval was asked for) and makes its result:
/// the output cut to `max_output`, an error as `{"tool_call_error": …}`, and what the
/// `PostToolUse` hooks add.
async fn run_call(
    call: &ToolCall,
    ready: Result<gate::Admitted, ToolError>,
    env: &ToolEnv<'_>,
    asked: bool,
    max_output: usize,
) -> CallResult {
    // How the model can see the rest of a long result depends on the tool.
    let more = if matches!(&ready, Ok(a) if matches!(a.tool, Tool::Builtin(_))) {
        READ_MORE_FILES
    } else {
        READ_MORE_ASK
    };
    // What `PostToolUse` hooks see: the arguments the call ran with.
    let ran_with = ready.as_ref().ok().map(|a| a.args.clone());
    let (outcome, silent) = match ready {
        Ok(admitted) => run_admitted(call, admitted, env, asked).await,
        Err(e) => (Err(e), false),
    };
    let (content, ok, error) = result_content(outcome, max_output, more);
    let mut result = CallResult {
        call: call.clone(),
        content,
        ok,
        error,
        silent,
    };
    if let (Some(hooks), Some(args)) = (env.hooks, &ran_with) {
        let ran = crate::hooks::HookResult {
            call: crate::hooks::HookCall {
                id: &call.id,
                tool: &call.name,
                args,
            },
            output: &result.content,
            ok,
        };
        if let Some(note) = hooks.after(ran).await {
            result.content = crate::hooks::with_note(result.content, &note);
            // The model has something to read now.
            result.silent = false;
        }
    }
    result
}

/// Runs an admitted call by its kind of tool: its output, and whether it was a script
/// that produced none at all.
async fn run_admitted(
    call: &ToolCall,
    admitted: gate::Admitted,
    env: &ToolEnv<'_>,
    asked: bool,
) -> (Result<String, ToolError>, bool) {
    let gate::Admitted { tool, args, grant } = admitted;
    let output = match tool {
        Tool::Builtin(tool) => {
            // A read that ran without asking because its path was inside the tree must
            // still be inside now (an earlier call of the round may have planted a
            // symlink).
            let escaped = tool.effect == Effect::Read
                && builtin::touched_paths(tool, &args, env.cwd)
                    .iter()
                    .any(|p| !p.inside);
            if escaped && !asked {
                Err(ToolError::Failed(
                    "the path now resolves outside the working directory; call again to be asked"
                        .into(),
                ))
            } else {
                builtin::run(tool, &args, env, grant).await
            }
        }
        Tool::Script(tool) => {
            return match run_script::run(&tool, &args, env).await {
                Ok(ran) => (Ok(ran.text), ran.silent),
                Err(e) => (Err(e), false),
            };
        }
        Tool::Mcp(tool) => mcp_tools::run(&tool, &args, env, &call.id).await,
        Tool::User(tool) => tool.run(&args, env).await,
        Tool::Agent(tool) => tool.run(&args, env).await,
        Tool::Todo(tool) => tool.run(&args, env),
        Tool::Skills(tool) => tool.run(&args),
        Tool::Lsp(tool) => tool.run(&args, env).await,
        Tool::Memory(tool) => tool.run(&args, env),
        Tool::Load(tool) => tool.run(&args),
    };
    (output, false)
}

/// What goes back to the model for a call's outcome (`more` says how to read the rest of
/// a long one), whether it succeeded, and what went wrong.
fn result_content(
    outcome: Result<String, ToolError>,
    max_output: usize,
    more: &str,
) -> (String, bool, Option<ToolFailure>) {
    match outcome {
        Ok(text) => (truncate_with(text, max_output, more), true, None),
        Err(ToolError::Exited { message, stderr }) => {
            let error = ToolFailure {
                kind: "exited",
                message: loki_wire::secrets::redact(&message).into_owned(),
            };
            let content = if stderr.is_empty() {
                serde_json::json!({ "tool_call_error": message })
            } else {
                serde_json::json!({
                    "tool_call_error": message,
                    "stderr": truncate_with(stderr, max_output, more),
                })
            };
            (content.to_string(), false, Some(error))
        }
        Err(e) => {
            let error = ToolFailure {
                kind: e.kind(),
                message: loki_wire::secrets::redact(&e.to_string()).into_owned(),
            };
            let content = serde_json::json!({ "tool_call_error": e.to_string() });
            (content.to_string(), false, Some(error))
        }
    }
}

/// For a built-in tool's long output: what reads the rest.
const READ_MORE_FILES: &str =
    "use fs_read with offset/limit, fs_grep, or a narrower command to see the rest";

/// For a script's or an MCP server's long output (no file to read the rest from).
const READ_MORE_ASK: &str =
    "call the tool again asking for less (narrower arguments, or a page if it offers one)";

/// Cuts `text` to at most `max` bytes (on a character boundary) with a note saying how
/// much was left out and how to get it.
pub fn truncate(text: String, max: usize) -> String {
    truncate_with(text, max, READ_MORE_FILES)
}

/// [`truncate`] with the note's advice `more`.
fn truncate_with(mut text: String, max: usize, more: &str) -> String {
    if text.len() <= max {
        return text;
    }
    let total = text.len();
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str(&format!(
        "\n[output truncated: showed {cut} of {total} bytes; {more}]"
    ));
    text
}

/// The names (as written) of an agent's `global_tools` that give no tool among `found` (what
/// [`enabled_tools`] made of them): not a tool, hidden by `visible_tools`, or a
/// `mapping_tools` alias none of whose tools exist.
pub fn missing_global_tools<'a>(
    config: &crate::config::AppConfig,
    found: &[Tool],
    names: &'a [String],
) -> Vec<&'a str> {
    let gives = |name: &str| found.iter().any(|t| t.name() == name);
    names
        .iter()
        .map(String::as_str)
        .filter(|written| {
            let name = written.strip_suffix(".sh").unwrap_or(written);
            match config.mapping_tools.get(name) {
                Some(expanded) => !expanded.split(',').any(|t| gives(t.trim())),
                None => !gives(name),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use approve::ApprovalRequest;
    use loki_protocol::op::Decision;

    #[test]
    fn enabled_tools_resolve_all_lists_mappings_and_visibility() {
        let mut config = AppConfig::default();
        let names = |c: &AppConfig, e: Option<&str>| -> Vec<String> {
            enabled_tools(c, &[], e)
                .iter()
                .map(|t| t.name().to_string())
                .collect()
        };
        assert!(names(&config, None).is_empty());
        // `all`: the built-ins, the job tools that come with `execute_command`, and the
        // memory tools.
        assert_eq!(
            names(&config, Some("all")).len(),
            builtin::BUILTINS.len() + builtin::JOB_TOOLS.len() + 2
        );
        assert_eq!(
            names(&config, Some("execute_command")),
            ["execute_command", "job_output", "job_kill"]
        );
        assert_eq!(
            names(&config, Some("fs_cat, fs_ls.sh")),
            ["fs_cat", "fs_ls"]
        );
        config
            .mapping_tools
            .insert("fs".into(), "fs_cat,fs_read,fs_write".into());
        assert_eq!(
            names(&config, Some("fs,get_current_time")),
            ["fs_cat", "fs_read", "fs_write", "get_current_time"]
        );
        config.visible_tools = Some(vec!["fs_cat.sh".into(), "execute_command.sh".into()]);
        assert_eq!(
            names(&config, Some("all")),
            ["fs_cat", "execute_command", "job_output", "job_kill"]
        );
    }

    #[test]
    fn approval_depends_on_effect_and_place() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let read = Tool::Builtin(builtin::find("fs_read").unwrap());
        let write = Tool::Builtin(builtin::find("fs_write").unwrap());
        let time = Tool::Builtin(builtin::find("get_current_time").unwrap());
        let args = |p: &str| serde_json::json!({"path": p, "contents": "x"});
        assert!(!approval_needed(&read, &args("notes.txt"), cwd));
        assert!(approval_needed(&read, &args("../secret"), cwd));
        assert!(approval_needed(&write, &args("notes.txt"), cwd));
        assert!(!approval_needed(&time, &serde_json::json!({}), cwd));
    }

    /// Counts questions and approves with "always".
    struct Always(std::sync::atomic::AtomicUsize);

    impl Approver for Always {
        fn approve<'a>(
            &'a self,
            _: &'a ApprovalRequest,
        ) -> futures_util::future::BoxFuture<'a, Decision> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async { Decision::ApproveAlways })
        }
    }

    #[test]
    fn always_does_not_cover_paths_outside_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("work");
        std::fs::create_dir(&cwd).unwrap();
        let tools = vec![Tool::Builtin(builtin::find("fs_write").unwrap())];
        let approver = Always(std::sync::atomic::AtomicUsize::new(0));
        let mut policy = Policy::default();
        let call = |path: &str, n: usize| ToolCall {
            id: format!("c{n}"),
            name: "fs_write".into(),
            arguments: serde_json::json!({"path": path, "contents": n.to_string()}).to_string(),
            signature: None,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            for (n, path) in ["a.txt", "b.txt", "../outside.txt", "../outside.txt"]
                .iter()
                .enumerate()
            {
                let env = test_env(&cwd);
                let _ = gate::check(&call(path, n), &tools, &env, &mut policy, &approver).await;
            }
        });
        // a.txt asked (answered always), b.txt not; each outside write asked again.
        assert_eq!(approver.0.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    /// A tool environment for tests (its few owned parts leaked: tests are short).
    pub(super) fn test_env(cwd: &Path) -> ToolEnv<'_> {
        ToolEnv {
            editor: None,
            cwd,
            shell: "/bin/sh",
            sandbox: None,
            rules: Box::leak(Box::default()),
            timeout: Duration::from_secs(5),
            cancel: Box::leak(Box::new(CancellationToken::new())),
            user_agent: None,
            root_dir: cwd,
            cache_dir: cwd,
            vars: Box::leak(Box::new(crate::config::Env::capture())),
            tools_env_file: cwd,
            todo: None,
            supervisor: None,
            budget: None,
            secrets: None,
            web_search: None,
            images: None,
            background: Box::leak(Box::default()),
            jobs: Some(Box::leak(Box::default())),
            hidden_env: Box::leak(Box::default()),
            progress: None,
            asker: &ask::Headless,
            conversation: "c1",
            lsp: None,
            memory: None,
            mcp_sampler: None,
            hooks: None,
            checkpoints: None,
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_earlier_in_the_round_does_not_open_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("work");
        std::fs::create_dir(&cwd).unwrap();
        std::fs::write(dir.path().join("secret.txt"), "top secret").unwrap();
        let tools = vec![
            Tool::Builtin(builtin::find("execute_command").unwrap()),
            Tool::Builtin(builtin::find("fs_cat").unwrap()),
        ];
        let calls = vec![
            ToolCall {
                id: "ln".into(),
                name: "execute_command".into(),
                arguments: serde_json::json!({"command": "ln -s .. up"}).to_string(),
                signature: None,
            },
            ToolCall {
                id: "cat".into(),
                name: "fs_cat".into(),
                arguments: serde_json::json!({"path": "up/secret.txt"}).to_string(),
                signature: None,
            },
        ];
        let approver = Always(std::sync::atomic::AtomicUsize::new(0));
        let env = test_env(&cwd);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let results = runtime.block_on(run_round(
            &calls,
            &tools,
            env,
            &mut Policy::default(),
            &approver,
            10_000,
        ));
        assert!(results[0].ok);
        assert!(
            !results[1].content.contains("top secret"),
            "{:?}",
            results[1]
        );
        assert!(results[1].content.contains("outside the working directory"));
    }

    #[test]
    fn truncation_says_how_to_read_more() {
        let text = truncate("é".repeat(100), 51);
        assert!(text.starts_with(&"é".repeat(25)), "{text}");
        assert!(text.contains("showed 50 of 200 bytes"), "{text}");
        assert_eq!(truncate("short".into(), 10), "short");
    }
}
