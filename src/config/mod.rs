//! `AppConfig`: `config.yaml` deserialized once, `LOKI_*` overrides applied, validated,
//! then frozen.
//!
//! This module owns the shape of the file and its defaults. Reading and override logic is
//! in [`load`], the directory layout in [`paths`], the key table in [`keys`]. Nothing here
//! talks to a provider or prints.

pub mod api;
pub mod clients;
pub mod effort;
pub mod env;
pub mod error;
pub mod hooks;
pub mod keys;
pub mod load;
pub mod paths;
pub mod permissions;
pub mod project;
pub mod settings_file;
pub mod terminal;
pub mod vendors;
pub mod yaml;
pub mod zero;

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::config::clients::ClientConfig;

pub use env::Env;
pub use error::ConfigError;
pub use paths::Paths;
pub use terminal::TerminalCaps;

/// `mcp_pool:` — how long servers no conversation uses are kept for reuse.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct McpPoolConfig {
    /// Seconds an unused server is kept (0: stopped at once, the REPL's default).
    pub idle_timeout_seconds: u64,
    /// Most unused servers kept; the least recently used go first (default 50).
    pub max_idle_servers: Option<usize>,
}

/// Default `stream_idle_timeout`, seconds.
pub const DEFAULT_STREAM_IDLE_SECS: u64 = 300;
/// Default `request_timeout`, seconds.
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 3600;
/// Default `max_stream_event_size`, bytes.
pub const DEFAULT_MAX_STREAM_EVENT_SIZE: usize = 16 * 1024 * 1024;
/// Default `mcp_max_message_size`: the largest MCP message read, in bytes.
pub const DEFAULT_MCP_MAX_MESSAGE_SIZE: usize = 32 * 1024 * 1024;
/// Default `mcp_start_wait`: how long a turn waits for MCP servers still starting, in
/// seconds.
pub const DEFAULT_MCP_START_WAIT_SECS: u64 = 3;
/// Default `max_input_size`: the most bytes read from stdin or one input file.
pub const DEFAULT_MAX_INPUT_SIZE: usize = 8 * 1024 * 1024;

/// Default `lsp_diagnostics_timeout`: how long an edit waits for its file's diagnostics,
/// in seconds.
pub const DEFAULT_LSP_DIAGNOSTICS_TIMEOUT_SECS: f64 = 2.0;

/// One language server of `lsp_servers`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LspServer {
    /// The program to start (JSON-RPC over stdio).
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// File extensions (without the dot) the server handles.
    #[serde(default)]
    pub extensions: Vec<String>,
}

/// `status_line:` — like Claude Code's: the REPL runs `command` with the session's state
/// as JSON on stdin and shows the first line it prints.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StatusLine {
    /// A shell command line.
    pub command: String,
    /// Milliseconds it may take (default 300); a slower one shows the previous line.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// The frozen global configuration. Field docs name the `config.yaml` key.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct AppConfig {
    /// Default model, `client:model`. Empty: the first chat model of the first client.
    pub model: Option<String>,
    /// Sampling temperature sent with every request when set.
    pub temperature: Option<f64>,
    /// Nucleus sampling sent with every request when set.
    pub top_p: Option<f64>,
    /// How hard a reasoning model thinks (`reasoning_effort:`), mapped to each provider's
    /// control; unset: the provider's default.
    pub reasoning_effort: Option<crate::config::effort::Effort>,
    /// Models (`client:model`) tried in order when the model answers 429, 5xx or
    /// "overloaded" after its retries (`fallback_models:`).
    pub fallback_models: Vec<String>,
    /// Print the assembled input instead of calling the provider.
    pub dry_run: bool,
    /// Use streaming APIs.
    pub stream: bool,
    /// Append one-shot exchanges to `messages.md`.
    pub save: bool,
    /// `emacs` or `vi` (REPL).
    pub keybindings: String,
    /// Editor for `.edit` and Ctrl-O; falls back to `$VISUAL`, `$EDITOR`.
    pub editor: Option<String>,
    /// `no`, `auto` or a column count.
    pub wrap: Option<Wrap>,
    /// Wrap lines inside code blocks too.
    pub wrap_code: bool,
    /// Render markdown and highlight code on a terminal.
    pub highlight: bool,
    /// `dark` or `light`.
    pub theme: Option<String>,
    /// Legacy AIChat switch for the light theme.
    pub light_theme: bool,
    /// REPL left prompt template.
    pub left_prompt: Option<String>,
    /// REPL right prompt template.
    pub right_prompt: Option<String>,
    /// `status_line: {command}`: a command whose first output line the REPL shows above
    /// its prompt.
    pub status_line: Option<StatusLine>,
    /// HTTP `User-Agent`; `auto` means `loki/<version>`.
    pub user_agent: Option<String>,
    /// Seconds a streamed answer may go without new content (keep-alives do not count);
    /// 0 disables the limit.
    pub stream_idle_timeout: u64,
    /// Seconds one model request may take from sending it to the end of the answer;
    /// 0 disables the limit.
    pub request_timeout: u64,
    /// Largest single stream event (or non-streamed answer body) in bytes; 0 disables.
    pub max_stream_event_size: usize,
    /// Append commands run by `-e` to the shell history.
    pub save_shell_history: bool,
    /// Where `--sync-models` fetches the model catalogue.
    pub sync_models_url: Option<String>,
    /// Vault password file.
    pub vault_password_file: Option<String>,
    /// Send tool declarations to models that support them.
    #[serde(alias = "function_calling")]
    pub function_calling_support: bool,
    /// Aliases for groups of tools.
    pub mapping_tools: BTreeMap<String, String>,
    /// Tools enabled by default: `all` or a comma-separated list.
    #[serde(alias = "use_tools")]
    pub enabled_tools: Option<String>,
    /// Tool files that are declared at all.
    pub visible_tools: Option<Vec<String>>,
    /// Approve every tool call without asking.
    pub yolo: bool,
    /// `checkpoint_max_mb:` — how much file content checkpoints keep for rewinds (MB;
    /// the oldest go first; 0 turns checkpoints off).
    pub checkpoint_max_mb: u64,
    /// `permission_mode:` — `default`, `accept-edits`, `plan` or `yolo`
    /// (see [`crate::config::permissions`]).
    pub permission_mode: Option<String>,
    /// `permissions:` — `allow`, `ask` and `deny` rules.
    pub permissions: crate::config::permissions::PermissionsConfig,
    /// Tools that never ask for approval.
    pub auto_approve_tools: Vec<String>,
    /// Tools that are always refused.
    pub deny_tools: Vec<String>,
    /// `sandbox:` — how far what a model runs may reach (see [`crate::sandbox`]).
    pub sandbox: crate::sandbox::SandboxSettings,
    /// `additional_directories:` — directories besides the working one that commands and
    /// file tools may write (as `--add-dir`).
    pub additional_directories: Vec<String>,
    /// `hooks:` — commands run before and after tool calls, on a prompt, at a session's
    /// start, at a turn's end, before compaction and on notifications
    /// (see [`crate::config::hooks`]).
    pub hooks: crate::config::hooks::HookSettings,
    /// Credential variables `execute_command` and script tools may inherit anyway (loki's
    /// own provider keys are withheld from them otherwise).
    pub tool_env_passthrough: Vec<String>,
    /// Model calls per turn when tools keep being called.
    pub max_tool_rounds: usize,
    /// `max_cost:` — US dollars one run (one prompt and its tool rounds, sub-agents
    /// included) may cost before it is stopped; `--max-budget-usd` sets it for one run.
    pub max_cost: Option<f64>,
    /// `--append-system-prompt`: added to the end of the system prompt of the run's
    /// conversation (not a key: a flag's, for one run).
    #[serde(skip)]
    pub append_system_prompt: Option<String>,
    /// `--max-turns N`: the run's `max_tool_rounds` came from it (N + 1), so the message of
    /// a stopped turn names the flag (not a key: a flag's, for one run).
    #[serde(skip)]
    pub max_turns: Option<u64>,
    /// Seconds a tool (such as `execute_command`) may run.
    pub tool_timeout: u64,
    /// Largest tool result sent to the model, in bytes (longer ones are cut with a note).
    pub max_tool_output: usize,
    /// `stale_tool_results`: tool results older than this many turns are sent as one-line
    /// summaries (the session keeps them whole); 0 sends them whole.
    pub stale_tool_results: usize,
    /// `load_tools_after`: with more tools than this enabled, only the core ones are
    /// declared and the rest are offered by group through `load_tools`; 0 declares all.
    pub load_tools_after: usize,
    /// `lsp_servers`: language servers behind `lsp_diagnostics` and `lsp_references`,
    /// by language.
    pub lsp_servers: BTreeMap<String, LspServer>,
    /// `lsp_diagnostics_timeout`: seconds `fs_write`, `fs_edit` and `fs_patch` wait for the
    /// language server's diagnostics of the file they changed (0: they do not ask).
    pub lsp_diagnostics_timeout: f64,
    /// `small_model`: the model for titles, summaries and memory extraction (default:
    /// the conversation's).
    pub small_model: Option<String>,
    /// `delegation`: offer the `task` tool (sub-agents `explore`, `plan`, `general` and
    /// the user's agents) in conversations with tools enabled.
    pub delegation: bool,
    /// `workspace_dir`: where IDENTITY.md, SOUL.md, USER.md, MEMORY.md and the daily
    /// notes live (default: `workspace/` in the config dir).
    pub workspace_dir: Option<String>,
    /// `memory`: include the workspace files and relevant memory in the system prompt.
    pub memory: bool,
    /// `memory_top_k`: MEMORY.md chunks included per message.
    pub memory_top_k: usize,
    /// `memory_recent_days`: daily notes of this many recent days included.
    pub memory_recent_days: usize,
    /// `memory_flush`: before compaction, extract facts into MEMORY.md — `ask` (show the
    /// diff and ask; skipped when no one can answer), `always` or `never`.
    pub memory_flush: String,
    /// `compaction_share`: compact a session once its history fills this percentage of
    /// the model's input window (and always when less than 20 % is left).
    pub compaction_share: u8,
    /// Backend of the `web_search` tool: `tavily`, `searxng` or `perplexity`.
    pub web_search: Option<String>,
    /// Base URL of the search backend (required for SearXNG).
    pub web_search_url: Option<String>,
    /// Connect to MCP servers.
    pub mcp_server_support: bool,
    /// Aliases for groups of MCP servers.
    pub mapping_mcp_servers: BTreeMap<String, String>,
    /// MCP servers enabled by default: `all` or a comma-separated list.
    pub enabled_mcp_servers: Option<String>,
    /// How MCP tools are offered: `auto` (direct for small servers), `direct` or `meta`.
    pub mcp_tool_exposure: Option<String>,
    /// Keeping stopped MCP servers around for reuse.
    pub mcp_pool: McpPoolConfig,
    /// Largest message an MCP server may send, in bytes (larger ones fail their call).
    pub mcp_max_message_size: usize,
    /// Seconds a turn waits for MCP servers still starting before going on without them.
    pub mcp_start_wait: u64,
    /// `role:<name>`, `session:<name>` or `<session>:<role>` applied when the REPL starts.
    pub repl_prelude: Option<String>,
    /// The same, applied to one-shot commands.
    pub cmd_prelude: Option<String>,
    /// Default session for agents.
    #[serde(alias = "agent_prelude")]
    pub agent_session: Option<String>,
    /// `true` save, `false` never, unset ask on exit.
    pub save_session: Option<bool>,
    /// Keep every conversation not off the record as an autonamed session (history by
    /// default); `false` saves only named sessions, as Loki did.
    pub history: bool,
    /// Most sessions kept; past it the oldest autonamed ones are deleted (0: no bound).
    pub history_max_sessions: usize,
    /// Most megabytes the sessions may take, the same way (0: no bound).
    pub history_max_mb: u64,
    /// Compress a session when its tokens reach this many (0 disables).
    #[serde(alias = "compress_threshold")]
    pub compression_threshold: usize,
    /// Prompt used to summarise old messages.
    #[serde(alias = "summarize_prompt")]
    pub summarization_prompt: Option<String>,
    /// Prefix of the summary re-injected into the conversation.
    #[serde(alias = "summary_prompt")]
    pub summary_context_prompt: Option<String>,
    /// Embedding model for RAG.
    pub rag_embedding_model: Option<String>,
    /// Reranker model for RAG.
    pub rag_reranker_model: Option<String>,
    /// Chunks retrieved per query.
    pub rag_top_k: usize,
    /// Chunk size for RAG documents.
    pub rag_chunk_size: Option<usize>,
    /// Overlap between RAG chunks.
    pub rag_chunk_overlap: Option<usize>,
    /// Template combining retrieved context with the question.
    pub rag_template: Option<String>,
    /// Commands that turn non-text documents into text, keyed by extension or name.
    pub document_loaders: BTreeMap<String, String>,
    /// Most bytes of input read from `-f` files, URLs and piped stdin together.
    pub max_input_size: usize,
    /// Let `-f` read devices, FIFOs and sockets (still bounded by `max_input_size`).
    pub allow_special_files: bool,
    /// Address for `--serve`.
    pub serve_addr: Option<String>,
    /// `session_store`: where sessions live — unset for YAML files in `sessions/`, or a
    /// `postgres://…` URL.
    pub session_store: Option<String>,
    /// `api:` — the HTTP server of `--serve` (see [`api::ApiConfig`]).
    pub api: Option<api::ApiConfig>,
    /// The raw `clients:` entries; turned into [`AppConfig::clients`] by the loader so each
    /// entry's error can name its index.
    #[serde(rename = "clients")]
    pub(crate) raw_clients: Vec<serde_yaml::Value>,
    /// Configured providers.
    #[serde(skip)]
    pub clients: Vec<ClientConfig>,
}

impl Default for AppConfig {
    fn default() -> Self {
        Self {
            model: None,
            temperature: None,
            top_p: None,
            reasoning_effort: None,
            fallback_models: Vec::new(),
            dry_run: false,
            stream: true,
            save: false,
            keybindings: "emacs".into(),
            editor: None,
            wrap: None,
            wrap_code: false,
            highlight: true,
            theme: None,
            light_theme: false,
            left_prompt: None,
            right_prompt: None,
            status_line: None,
            user_agent: None,
            stream_idle_timeout: DEFAULT_STREAM_IDLE_SECS,
            request_timeout: DEFAULT_REQUEST_TIMEOUT_SECS,
            max_stream_event_size: DEFAULT_MAX_STREAM_EVENT_SIZE,
            save_shell_history: true,
            sync_models_url: None,
            vault_password_file: None,
            function_calling_support: true,
            mapping_tools: BTreeMap::new(),
            enabled_tools: None,
            visible_tools: None,
            yolo: false,
            checkpoint_max_mb: 300,
            permission_mode: None,
            permissions: crate::config::permissions::PermissionsConfig::default(),
            auto_approve_tools: Vec::new(),
            deny_tools: Vec::new(),
            sandbox: crate::sandbox::SandboxSettings::default(),
            additional_directories: Vec::new(),
            hooks: crate::config::hooks::HookSettings::default(),
            tool_env_passthrough: Vec::new(),
            max_tool_rounds: 25,
            max_cost: None,
            append_system_prompt: None,
            max_turns: None,
            tool_timeout: 300,
            max_tool_output: 32 * 1024,
            stale_tool_results: 1,
            load_tools_after: 30,
            lsp_servers: BTreeMap::new(),
            lsp_diagnostics_timeout: DEFAULT_LSP_DIAGNOSTICS_TIMEOUT_SECS,
            small_model: None,
            delegation: true,
            workspace_dir: None,
            memory: true,
            memory_top_k: 5,
            memory_recent_days: 2,
            memory_flush: "ask".into(),
            compaction_share: 70,
            web_search: None,
            web_search_url: None,
            mcp_server_support: true,
            mapping_mcp_servers: BTreeMap::new(),
            enabled_mcp_servers: None,
            mcp_tool_exposure: None,
            mcp_pool: McpPoolConfig::default(),
            mcp_max_message_size: DEFAULT_MCP_MAX_MESSAGE_SIZE,
            mcp_start_wait: DEFAULT_MCP_START_WAIT_SECS,
            repl_prelude: None,
            cmd_prelude: None,
            agent_session: None,
            save_session: None,
            history: true,
            history_max_sessions: 1000,
            history_max_mb: 200,
            compression_threshold: 4000,
            summarization_prompt: None,
            summary_context_prompt: None,
            rag_embedding_model: None,
            rag_reranker_model: None,
            rag_top_k: 5,
            rag_chunk_size: None,
            rag_chunk_overlap: None,
            rag_template: None,
            document_loaders: BTreeMap::new(),
            max_input_size: DEFAULT_MAX_INPUT_SIZE,
            allow_special_files: false,
            serve_addr: None,
            session_store: None,
            api: None,
            raw_clients: Vec::new(),
            clients: Vec::new(),
        }
    }
}

impl AppConfig {
    /// True when the light palette should be used.
    pub fn is_light_theme(&self) -> bool {
        self.light_theme || self.theme.as_deref() == Some("light")
    }

    /// The `User-Agent` header value, if any.
    pub fn user_agent(&self) -> Option<String> {
        match self.user_agent.as_deref() {
            Some("auto") => Some(format!("loki/{}", env!("CARGO_PKG_VERSION"))),
            Some(other) => Some(other.to_string()),
            None => None,
        }
    }
}

/// The `wrap` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrap {
    /// Never wrap.
    No,
    /// Wrap at the terminal width.
    Auto,
    /// Wrap at a fixed column.
    Width(u16),
}

/// A `wrap` value that is neither `no`, `auto` nor a positive column count (as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected `no`, `auto` or a column count, got `{0}`")]
pub struct WrapError(pub String);

impl Wrap {
    /// Parses `no`, `auto` or a positive column count.
    pub fn parse(text: &str) -> Result<Self, WrapError> {
        match text.trim() {
            "no" | "false" | "off" | "none" => Ok(Self::No),
            "auto" => Ok(Self::Auto),
            n => match n.parse::<u16>() {
                Ok(w) if w > 0 => Ok(Self::Width(w)),
                _ => Err(WrapError(text.to_string())),
            },
        }
    }
}

impl<'de> Deserialize<'de> for Wrap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Wrap;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("`no`, `auto` or a column count")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Wrap, E> {
                Ok(if v { Wrap::Auto } else { Wrap::No })
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Wrap, E> {
                Wrap::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Wrap, E> {
                Wrap::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Wrap, E> {
                Wrap::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Wrap, E> {
                Wrap::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_values() {
        assert_eq!(Wrap::parse("auto"), Ok(Wrap::Auto));
        assert_eq!(Wrap::parse("no"), Ok(Wrap::No));
        assert_eq!(Wrap::parse("80"), Ok(Wrap::Width(80)));
        assert!(Wrap::parse("0").is_err());
        assert!(Wrap::parse("wide").is_err());
    }

    #[test]
    fn a_bad_wrap_says_what_is_expected() {
        for (yaml, shown) in [("-5", "-5"), ("1.5", "1.5"), ("wide", "wide"), ("0", "0")] {
            let err = serde_yaml::from_str::<Wrap>(yaml).unwrap_err().to_string();
            assert!(
                err.contains(&format!(
                    "expected `no`, `auto` or a column count, got `{shown}`"
                )),
                "{err}"
            );
        }
        let err = serde_yaml::from_str::<Wrap>("[1]").unwrap_err().to_string();
        assert!(
            err.contains("expected `no`, `auto` or a column count"),
            "{err}"
        );
        assert_eq!(serde_yaml::from_str::<Wrap>("true").unwrap(), Wrap::Auto);
        assert_eq!(
            serde_yaml::from_str::<Wrap>("100").unwrap(),
            Wrap::Width(100)
        );
    }
}
