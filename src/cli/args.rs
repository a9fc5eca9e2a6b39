//! Command-line arguments: what the user typed, nothing resolved ("low args"). Parsed on
//! every start, so clap's generated code for them is built here at full optimisation; the
//! completers of `-m`, `-r`, `-s`… are added by `loki::cli::complete` when a shell asks.

use clap::{Parser, ValueEnum};

/// Shells loki has completion scripts and Alt-e integrations for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShellKind {
    /// GNU bash.
    Bash,
    /// Z shell.
    Zsh,
    /// fish.
    Fish,
    /// Nushell.
    Nushell,
    /// Elvish.
    Elvish,
    /// PowerShell.
    Powershell,
}

/// Which models `--list-models` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModelListing {
    /// Chat models, the ones `-m` takes.
    Chat,
    /// Embedding models.
    Embedding,
    /// Reranker models.
    Reranker,
    /// Every model, non-chat ones with their type in a second column.
    All,
}

/// How a one-shot run shows its result (`--output-format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The answer as text (rendered on a terminal).
    #[default]
    Text,
    /// One JSON object per run when it ends.
    Json,
    /// Every event as one JSON object per line, as it happens.
    StreamJson,
}

/// How a one-shot run reads its prompt (`--input-format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// The arguments, with piped stdin appended.
    #[default]
    Text,
    /// User messages as JSON lines on stdin, each answered in turn in one conversation.
    StreamJson,
}

/// loki — chat with large language models from the shell or an interactive REPL.
#[derive(Debug, Default, Parser)]
#[command(
    name = "loki",
    version,
    about = "Chat with large language models from the shell",
    long_about = "Chat with large language models from the shell.\n\n\
        Give a prompt as arguments, pipe text on stdin, attach files with -f.\n\
        Configuration: $LOKI_CONFIG_DIR/config.yaml (see `loki --info`).",
    // One listing at a time: each prints and exits.
    group(clap::ArgGroup::new("listing").multiple(false)),
    after_help = "Examples:\n  loki \"what is a monad?\"\n  git diff | loki \"write a commit message\"\n  loki -f src/ \"where is the config parsed?\"\n  loki -m ollama:llama3.2 -S \"hi\""
)]
pub struct Args {
    /// Model to use, as `client:model`
    #[arg(short = 'm', long, value_name = "MODEL")]
    pub model: Option<String>,

    /// Use a role (see --list-roles)
    #[arg(short = 'r', long, value_name = "ROLE")]
    pub role: Option<String>,

    /// Start or resume a session (`-s` alone: an unsaved temporary session)
    #[arg(
        short = 's',
        long,
        value_name = "SESSION",
        num_args = 0..=1,
        default_missing_value = "temp"
    )]
    pub session: Option<String>,

    /// Clear the session's messages before sending
    #[arg(long, requires = "session")]
    pub empty_session: bool,

    /// Save the session even when `save_session` says otherwise
    #[arg(long, requires = "session")]
    pub save_session: bool,

    /// Use this text as the system prompt (a temporary role)
    #[arg(long, value_name = "PROMPT")]
    pub prompt: Option<String>,

    /// Use a knowledge base (RAG) for the question (see --list-rags)
    #[arg(long, value_name = "RAG")]
    pub rag: Option<String>,

    /// Build the knowledge base of --rag from these documents: files, directories, globs,
    /// URLs (`https://site/docs/**` crawls), `loader:resource` (repeatable, or `;`-separated)
    #[arg(long = "rag-docs", value_name = "DOCS", requires = "rag")]
    pub rag_docs: Vec<String>,

    /// Rebuild the knowledge base of --rag (only changed chunks are embedded again)
    #[arg(long, requires = "rag")]
    pub rebuild_rag: bool,

    /// List knowledge bases, then exit
    #[arg(long, group = "listing")]
    pub list_rags: bool,

    /// Run a macro (macros/<MACRO>.yaml); the TEXT arguments are its arguments
    #[arg(
        long = "macro",
        value_name = "MACRO",
        conflicts_with_all = ["role", "session", "prompt", "files", "execute", "code", "rag", "output_format", "input_format"]
    )]
    pub macro_name: Option<String>,

    /// List macros, then exit
    #[arg(long, group = "listing")]
    pub list_macros: bool,

    /// List the skills (the config dir's and the project's), with their descriptions
    #[arg(long, group = "listing")]
    pub list_skills: bool,

    /// Attach files, directories, globs or URLs (repeatable)
    #[arg(short = 'f', long = "file", value_name = "FILE|URL")]
    pub files: Vec<String>,

    /// Wait for the whole answer instead of streaming it
    #[arg(short = 'S', long)]
    pub no_stream: bool,

    /// Run tool calls without asking for approval
    #[arg(long)]
    pub yolo: bool,

    /// Undo the last N turns (default 1) of the session named by -s: the files loki's
    /// tools changed in them and the messages
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "1", requires = "session", value_parser = turn_count)]
    pub rewind: Option<usize>,

    /// Use the project's hooks, allow rules and .mcp.json without asking (a run without
    /// a terminal ignores them otherwise)
    #[arg(long)]
    pub trust_project: bool,

    /// How tool calls are approved: default, accept-edits (file edits in the working
    /// tree run unasked), plan (only tools that read run) or yolo
    #[arg(long, value_name = "MODE", value_parser = ["default", "accept-edits", "plan", "yolo", "acceptEdits", "bypassPermissions"])]
    pub permission_mode: Option<String>,

    /// What the commands and script tools a model runs may reach: read-only,
    /// workspace-write (write the working directory; the default where the kernel can
    /// confine) or danger-full-access (no sandbox)
    #[arg(long, value_name = "MODE", value_parser = ["read-only", "workspace-write", "danger-full-access"])]
    pub sandbox: Option<String>,

    /// Another directory commands and file tools may write (repeat for more)
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dir: Vec<std::path::PathBuf>,

    /// Write AGENTS.md for the repository in this directory (the model writes it from
    /// the tree, the README and the build files; an existing one is replaced only when
    /// you say so)
    #[arg(long, conflicts_with_all = ["execute", "macro_name", "run_tool", "output_format", "input_format"])]
    pub init: bool,

    /// With --init: replace an existing AGENTS.md without asking
    #[arg(long, requires = "init")]
    pub force: bool,

    /// The final answer must be JSON matching the JSON schema in FILE (sent to the
    /// provider as structured output; one repair round, then exit 1)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["execute", "macro_name", "run_tool", "init", "output_format", "input_format", "code"])]
    pub output_schema: Option<std::path::PathBuf>,

    /// How hard a reasoning model thinks: low, medium or high (OpenAI's
    /// reasoning_effort, Claude's and Gemini's thinking budget)
    #[arg(long, value_name = "LEVEL", value_parser = ["low", "medium", "high"])]
    pub effort: Option<String>,

    /// With -s, -C or --resume: continue in a new session holding a copy of that
    /// session's history; the original is left untouched
    #[arg(long)]
    pub fork_session: bool,

    /// Print the assembled input instead of sending it
    #[arg(long)]
    pub dry_run: bool,

    /// Turn the request into a shell command, then offer to run it
    #[arg(short = 'e', long)]
    pub execute: bool,

    /// Print only the code from the answer
    #[arg(short = 'c', long)]
    pub code: bool,

    /// Show the configuration and paths, then exit
    #[arg(long)]
    pub info: bool,

    /// List the chat models, then exit (`--list-models=all`: embedding and reranker too)
    #[arg(
        long,
        value_name = "TYPE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "chat",
        group = "listing"
    )]
    pub list_models: Option<ModelListing>,

    /// Sign in to an `auth: oauth` client (claude, gemini), then exit
    #[arg(long, value_name = "CLIENT", num_args = 0..=1)]
    pub authenticate: Option<Option<String>>,

    /// Sign in to a remote MCP server of functions/mcp.json (OAuth in the browser), then exit
    #[arg(long, value_name = "SERVER")]
    pub mcp_login: Option<String>,

    /// Forget the sign-in to an MCP server, then exit
    #[arg(long, value_name = "SERVER")]
    pub mcp_logout: Option<String>,

    /// Fetch the latest model catalogue (from `sync_models_url`), then exit
    #[arg(long)]
    pub sync_models: bool,

    /// List roles (yours and the built-in ones), then exit
    #[arg(long, group = "listing")]
    pub list_roles: bool,

    /// Check the tool scripts in functions/tools, print their declarations and write the functions/bin/ wrappers, then exit
    #[arg(long)]
    pub build_tools: bool,

    /// Run one tool as loki runs it for a model (arguments: a JSON object after the name, or on stdin)
    #[arg(long, value_name = "NAME", conflicts_with_all = ["execute", "output_format", "input_format", "macro_name", "serve"])]
    pub run_tool: Option<String>,

    /// List saved sessions, then exit
    #[arg(long, group = "listing")]
    pub list_sessions: bool,

    /// List the sessions whose messages contain TEXT, each with its first matching line
    #[arg(long, value_name = "TEXT")]
    pub search_sessions: Option<String>,

    /// Write the session NAME to stdout (as Markdown, or JSON with --format json)
    #[arg(long, value_name = "NAME")]
    pub export_session: Option<String>,

    /// The format of --export-session: md (default) or json
    #[arg(long, value_name = "FORMAT", value_parser = ["md", "json"], requires = "export_session")]
    pub format: Option<String>,

    /// Continue the session saved last of those started in this directory (the REPL
    /// without a prompt, one answer with one)
    #[arg(short = 'C', long = "continue", conflicts_with = "session")]
    pub continue_last: bool,

    /// Resume a saved conversation: pick one from a searchable list (date, directory,
    /// first prompt, model, cost), or name it (`--resume NAME`, `agent:NAME`)
    #[arg(long, value_name = "SESSION", num_args = 0..=1, default_missing_value = "", conflicts_with_all = ["session", "continue_last"])]
    pub resume: Option<String>,

    /// List agents, then exit
    #[arg(long, group = "listing")]
    pub list_agents: bool,

    /// Use an agent (its instructions, model, tools and sessions)
    #[arg(short = 'a', long, value_name = "AGENT")]
    pub agent: Option<String>,

    /// Set an agent variable (repeatable)
    #[arg(long, num_args = 2, value_names = ["NAME", "VALUE"], action = clap::ArgAction::Append, requires = "agent")]
    pub agent_variable: Vec<String>,

    /// Serve the HTTP API (OpenAI-compatible and loki's own) on ADDR (default: `api.listen_addr`)
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "")]
    pub serve: Option<String>,

    /// Be an MCP server (roles, agents, macros and knowledge bases as tools): on stdio, or streamable HTTP at ADDR (`/mcp`)
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "", conflicts_with_all = ["serve", "execute", "output_format", "input_format", "macro_name"])]
    pub mcp_server: Option<String>,

    /// Be an agent of the Agent Client Protocol on stdio (Zed, JetBrains IDEs, Neovim …); see docs/acp.md
    #[arg(long, conflicts_with_all = ["serve", "mcp_server", "execute", "output_format", "input_format", "macro_name"])]
    pub acp: bool,

    /// Copy the sessions between `sessions/` and `session_store`: `in` (files → store) or `out`
    #[arg(long, value_name = "DIRECTION", value_parser = ["in", "out"])]
    pub migrate_sessions: Option<String>,

    /// Print a new API key and its hash for `api.auth.keys`, then exit
    #[arg(long)]
    pub api_key_hash: bool,

    /// Build the agent's knowledge base from its `documents` without asking
    #[arg(long, requires = "agent")]
    pub build_agent_rag: bool,

    /// Off the record: no session, history line, messages.md or log is written, and tools that write or run commands are off
    #[arg(long, conflicts_with_all = ["session", "save_session", "serve", "empty_session"])]
    pub otr: bool,

    /// Offer the todo tools and keep going while the list has open items
    #[arg(long)]
    pub auto_continue: bool,

    /// Follow the log file (like `tail -f`); Ctrl-C to stop
    #[arg(long)]
    pub tail_logs: bool,

    /// With --tail-logs: print log lines without colours
    #[arg(long, requires = "tail_logs")]
    pub disable_log_colors: bool,

    /// Add a secret to the vault (typed at a masked prompt, or read from stdin), then exit
    #[arg(long, value_name = "NAME", group = "vault_op")]
    pub add_secret: Option<String>,

    /// Print a secret from the vault, then exit
    #[arg(long, value_name = "NAME", group = "vault_op")]
    pub get_secret: Option<String>,

    /// Replace a secret in the vault (typed, or read from stdin), then exit
    #[arg(long, value_name = "NAME", group = "vault_op")]
    pub update_secret: Option<String>,

    /// Delete a secret from the vault, then exit
    #[arg(long, value_name = "NAME", group = "vault_op")]
    pub delete_secret: Option<String>,

    /// List the names of the secrets in the vault, then exit
    #[arg(long, groups = ["vault_op", "listing"])]
    pub list_secrets: bool,

    /// Print a shell completion script, then exit
    #[arg(long, value_name = "SHELL")]
    pub completions: Option<ShellKind>,

    /// Print the Alt-e integration script for a shell, then exit
    #[arg(long, value_name = "SHELL")]
    pub shell_integration: Option<ShellKind>,

    /// Output: text, json (one object at the end) or stream-json (one event per line)
    #[arg(long, value_enum, default_value_t = OutputFormat::Text, value_name = "FORMAT", conflicts_with = "execute")]
    pub output_format: OutputFormat,

    /// Input: text, or stream-json (user messages as JSON lines on stdin)
    #[arg(long, value_enum, default_value_t = InputFormat::Text, value_name = "FORMAT", conflicts_with = "execute")]
    pub input_format: InputFormat,

    /// Claude Code's `-p`: print the answer and exit, never the REPL (the prompt as
    /// arguments, or on stdin)
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// Calls that run without asking in this run: tool names (loki's or Claude's) or
    /// rules such as `Bash(git:*)`, separated by spaces or commas (repeatable)
    #[arg(
        long = "allowedTools",
        visible_alias = "allowed-tools",
        value_name = "TOOLS"
    )]
    pub allowed_tools: Vec<String>,

    /// Calls that never run in this run (even with --yolo): tool names or rules
    /// such as `Bash(rm:*)`, separated by spaces or commas (repeatable)
    #[arg(
        long = "disallowedTools",
        visible_alias = "disallowed-tools",
        value_name = "TOOLS"
    )]
    pub disallowed_tools: Vec<String>,

    /// Rounds of tool calls per prompt; a model that wants more after N stops the run
    /// (exit 1)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,

    /// Stop the run once it has cost this many US dollars (exit 1; `max_cost` for this run)
    #[arg(long, value_name = "USD", value_parser = positive_dollars)]
    pub max_budget_usd: Option<f64>,

    /// Text added to the end of the system prompt, whatever the role
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,

    /// Speak another tool's JSON: `claude` makes --output-format json|stream-json write
    /// Claude Code's `result` object and stream messages
    #[arg(long, value_name = "CLIENT", value_parser = ["claude"])]
    pub compat: Option<String>,

    /// The prompt
    #[arg(trailing_var_arg = true, value_name = "TEXT")]
    pub text: Vec<String>,
}

impl Args {
    /// A flag the headless formats would otherwise ignore, as a usage error: each is
    /// honoured or refused, never dropped.
    pub fn headless_conflict(&self) -> Option<String> {
        let json = self.output_format != OutputFormat::Text;
        if json && self.dry_run {
            return Some(
                "--dry-run prints the request as text; drop --output-format to see it".into(),
            );
        }
        if self.output_format == OutputFormat::StreamJson && self.code {
            return Some(
                "-c cannot shape --output-format stream-json (the events carry the whole answer); use --output-format json, whose answer is then the code".into(),
            );
        }
        // `claude -p … --output-format stream-json` runs Claude's own flags (the Agent SDK
        // mode): loki's flags that would change the run there are refused, not dropped.
        if self.compat.as_deref() == Some("claude")
            && self.output_format == OutputFormat::StreamJson
            && self.input_format != InputFormat::StreamJson
        {
            let dropped: Vec<&str> = [
                (!self.files.is_empty(), "-f"),
                (self.session.is_some(), "-s"),
                (self.role.is_some(), "-r"),
                (self.prompt.is_some(), "--prompt"),
                (self.agent.is_some(), "-a"),
                (self.rag.is_some(), "--rag"),
                (self.yolo, "--yolo"),
            ]
            .into_iter()
            .filter_map(|(given, flag)| given.then_some(flag))
            .collect();
            if !dropped.is_empty() {
                return Some(format!(
                    "{} cannot be used with --compat claude --output-format stream-json, which runs Claude Code's flags: use --resume/--continue, --system-prompt, --permission-mode bypassPermissions, or drop --compat claude",
                    dropped.join(", ")
                ));
            }
        }
        if self.input_format == InputFormat::StreamJson {
            if !self.text.is_empty() {
                return Some(
                    "--input-format stream-json reads every prompt from stdin; send the text as a {\"type\":\"user\",\"message\":…} line instead of an argument".into(),
                );
            }
            if !self.files.is_empty() {
                return Some(
                    "-f is not read with --input-format stream-json; put the file's text or image in a {\"type\":\"user\",\"message\":…} line".into(),
                );
            }
        }
        None
    }

    /// Whether only information is asked for (nothing is run or written).
    pub fn info_only(&self) -> bool {
        self.info
            || self.list_models.is_some()
            || self.list_roles
            || self.list_sessions
            || self.search_sessions.is_some()
            || self.export_session.is_some()
            || self.list_agents
            || self.list_rags
            || self.list_macros
            || self.list_skills
            || self.sync_models
    }
}

/// `--max-budget-usd USD`: a positive number of dollars.
fn positive_dollars(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd > 0.0 => Ok(usd),
        _ => Err(format!(
            "`{}` is not a positive number of US dollars (such as 0.50)",
            text.escape_debug()
        )),
    }
}

/// `--rewind N`: how many of the last turns to undo, from 1 (0 would undo nothing, and
/// a word there is most likely a prompt given without N).
fn turn_count(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err(
            "0 is not a number of turns to undo; turns count from 1 (the last turn is 1)".into(),
        ),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "N is how many of the last turns to undo, a number from 1 (a prompt after it comes after N: --rewind 1 \"{}\")",
            text.escape_debug()
        )),
    }
}
