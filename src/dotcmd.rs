//! The dot-command table. Each row names a command, its arguments, its help line and a
//! parser that turns the argument text into an [`Action`]. The REPL executes actions, and
//! so does the macro runner ([`crate::macros`]), which is why the table lives outside
//! both front ends. Help, completion and "unknown command" messages all come from it.

use loki_protocol::command::Command;
use loki_protocol::op::{Continuation, UserInput};

/// What a dot-command asks the REPL to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Apply an engine command and print its confirmation.
    Apply(Command),
    /// Send input through the engine.
    Ask(UserInput),
    /// Change a display setting (`highlight`, `wrap`, `wrap_code`).
    Display {
        /// Setting.
        key: String,
        /// Value.
        value: String,
    },
    /// Print the help table.
    Help,
    /// Print the current settings.
    Info,
    /// Print the active role as a role file.
    InfoRole,
    /// Print each MCP server's state and sign-in.
    InfoMcp,
    /// Print the permission mode and rules.
    InfoPermissions,
    /// Undo turns: their file changes, the conversation, or both.
    Rewind,
    /// Show, as a unified diff, what the tools changed in files in the last turn, or in
    /// the whole session when `session`.
    Diff {
        /// The whole session rather than the last turn.
        session: bool,
    },
    /// List saved sessions, or those whose messages contain the text.
    Sessions(Option<String>),
    /// Open a saved conversation: the one named, else one picked from the history.
    Resume(Option<String>),
    /// `.mcp …`: an MCP server's prompts and resources.
    Mcp(McpOp),
    /// Print the open session as its file.
    InfoSession,
    /// Open (or start) a session.
    OpenSession(String),
    /// Close the open session (saving per `save_session`).
    ExitSession,
    /// Save the open session, optionally under a new name.
    SaveSession(Option<String>),
    /// Summarise the older part of the session now.
    CompressSession,
    /// Sign in to the current model's client with OAuth.
    Authenticate,
    /// Open the active role's file in the editor, then reload it.
    EditRole,
    /// Open the session's file in the editor, then reload it.
    EditSession,
    /// Open the conversation's `N`-th prompt in the editor, cut the conversation to
    /// before it and send the edited text.
    EditMessage(usize),
    /// Write the active role to `roles/<name>.md`.
    SaveRole(Option<String>),
    /// Delete `roles/<name>.md`.
    DeleteRole(String),
    /// Delete a saved session.
    DeleteSession(String),
    /// Send one message with a role, leaving the conversation's role unchanged.
    AskWithRole {
        /// Role name.
        role: String,
        /// The message.
        input: UserInput,
    },
    /// Copy the last answer to the clipboard.
    Copy,
    /// A vault operation (`.vault add|get|update|delete|list`).
    Vault(crate::vault::commands::Op),
    /// Print the full results of the last turn's tool calls.
    ToolResults,
    /// List the conversation's background jobs.
    Jobs,
    /// Write AGENTS.md for the repository (the model writes it; asks before replacing).
    Init,
    /// Attach the clipboard's image to the next prompt (as Ctrl-V does).
    PasteImage,
    /// Open config.yaml in the editor, then reload it.
    EditConfig,
    /// Use (or build) a knowledge base; documents build it without questions.
    UseRag {
        /// Its name.
        name: String,
        /// Documents to build it from.
        documents: Vec<String>,
    },
    /// Rebuild the active knowledge base incrementally.
    RebuildRag,
    /// Show where the last answer's chunks came from.
    RagSources,
    /// Show the active knowledge base.
    InfoRag,
    /// Stop using a knowledge base.
    ExitRag,
    /// Delete a knowledge base.
    DeleteRag(String),
    /// Delete `macros/<name>.yaml`.
    DeleteMacro(String),
    /// Edit the active knowledge base's document list, then update it.
    EditRagDocs,
    /// Run a macro (`macros/<name>.yaml`) with positional arguments.
    Macro {
        /// The macro's name.
        name: String,
        /// Its arguments, split as a shell would.
        args: Vec<String>,
    },
    /// Describe the active agent.
    InfoAgent,
    /// Open the active agent's `config.yaml` in the editor.
    EditAgentConfig,
    /// List the active agent's conversation starters (`None`), or send one (1-based).
    Starter(Option<usize>),
    /// List this conversation's sub-agents (`None`), or show one's answer (its number
    /// or id).
    SubAgents(Option<String>),
    /// Show where the model's input window goes.
    Context,
    /// The workspace memory: overview, `search TEXT`, or `edit [FILE]`.
    Memory(MemoryOp),
    /// Go off the record for the rest of the REPL (nothing written from now on).
    OffTheRecord,
    /// Leave the REPL.
    Exit,
    /// Print a usage or error line.
    Usage(String),
}

/// What `.memory` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryOp {
    /// The workspace files, MEMORY.md's size and the recent daily notes.
    Show,
    /// The MEMORY.md entries matching the text.
    Search(String),
    /// Open a workspace file in the editor: `memory` (default), `identity`, `soul`,
    /// `user` or `today`.
    Edit(String),
}

fn parse_memory(args: &str) -> Action {
    let (word, rest) = args.split_once(' ').unwrap_or((args, ""));
    match (word, rest.trim()) {
        ("", _) => Action::Memory(MemoryOp::Show),
        ("search", "") => Action::Usage("usage: .memory search <text>".into()),
        ("search", text) => Action::Memory(MemoryOp::Search(text.to_string())),
        ("edit", "") => Action::Memory(MemoryOp::Edit("memory".into())),
        ("edit", file @ ("memory" | "identity" | "soul" | "user" | "today")) => {
            Action::Memory(MemoryOp::Edit(file.to_string()))
        }
        _ => Action::Usage(
            "usage: .memory [search <text> | edit [memory|identity|soul|user|today]]".into(),
        ),
    }
}

/// One dot-command.
pub struct ReplCommand {
    /// Name including the dot, e.g. `.model`.
    pub name: &'static str,
    /// Argument synopsis.
    pub args: &'static str,
    /// One-line description.
    pub help: &'static str,
    /// Parses the text after the name.
    pub parse: fn(&str) -> Action,
}

pub use crate::conversation::DISPLAY_SETTINGS;

/// Every dot-command, in help order.
pub const COMMANDS: &[ReplCommand] = &[
    ReplCommand {
        name: ".help",
        args: "",
        help: "Show this help",
        parse: |_| Action::Help,
    },
    ReplCommand {
        name: ".agent",
        args: "<name> [session] [key=value]…",
        help: "Use an agent: its instructions, model, tools and sessions",
        parse: parse_agent,
    },
    ReplCommand {
        name: ".starter",
        args: "[n]",
        help: "List the agent's conversation starters, or send one",
        parse: parse_starter,
    },
    ReplCommand {
        name: ".agents",
        args: "[n|id]",
        help: "List the sub-agents this conversation started, or show one's answer",
        parse: |args| Action::SubAgents((!args.is_empty()).then(|| args.to_string())),
    },
    ReplCommand {
        name: ".context",
        args: "",
        help: "Show where the model's input window goes (system, memory, tools, history, files)",
        parse: |_| Action::Context,
    },
    ReplCommand {
        name: ".memory",
        args: "[search <text> | edit [file]]",
        help: "Show, search or edit the workspace memory (MEMORY.md, identity files, notes)",
        parse: parse_memory,
    },
    ReplCommand {
        name: ".sessions",
        args: "[search <text>]",
        help: "List saved sessions, or those whose messages contain the text",
        parse: |arg| {
            let arg = arg.trim();
            match arg.strip_prefix("search") {
                Some(text) if !text.trim().is_empty() => {
                    Action::Sessions(Some(text.trim().to_string()))
                }
                _ if arg.is_empty() => Action::Sessions(None),
                _ => Action::Usage("usage: .sessions [search <text>]".into()),
            }
        },
    },
    ReplCommand {
        name: ".resume",
        args: "[name]",
        help: "Open a saved conversation: pick one (date, directory, first prompt, model, cost) or name it",
        parse: |args| Action::Resume((!args.is_empty()).then(|| args.to_string())),
    },
    ReplCommand {
        name: ".rewind",
        args: "",
        help: "Undo turns: restore the files loki's tools changed, the conversation, or both",
        parse: |_| Action::Rewind,
    },
    ReplCommand {
        name: ".fork",
        args: "[name]",
        help: "Go on in a new session holding a copy of this one (the original is left as it is)",
        parse: |arg| {
            let name = Some(arg.trim()).filter(|n| !n.is_empty());
            Action::Apply(Command::ForkSession(name.map(str::to_string)))
        },
    },
    ReplCommand {
        name: ".diff",
        args: "[turn|session]",
        help: "Show what loki's tools changed in files in the last turn (default) or the whole session",
        parse: |arg| match arg.trim() {
            "" | "turn" => Action::Diff { session: false },
            "session" => Action::Diff { session: true },
            _ => Action::Usage("usage: .diff [turn|session]".into()),
        },
    },
    ReplCommand {
        name: ".mode",
        args: "[default|accept-edits|plan|yolo]",
        help: "Show or set how tool calls are approved (Shift-Tab cycles default, accept-edits, plan)",
        parse: |arg| set_shortcut("permission_mode", arg),
    },
    ReplCommand {
        name: ".sandbox",
        args: "[read-only|workspace-write|danger-full-access]",
        help: "Show or set what commands and script tools may reach (their sandbox)",
        parse: |arg| set_shortcut("sandbox", arg),
    },
    ReplCommand {
        name: ".add-dir",
        args: "[DIR]",
        help: "Let file tools reach, and commands write, another directory (as --add-dir)",
        parse: |arg| Action::Apply(Command::AddDir(arg.trim().to_string())),
    },
    ReplCommand {
        name: ".otr",
        args: "",
        help: "Go off the record: from now on nothing is written (no session, memory, history)",
        parse: |_| Action::OffTheRecord,
    },
    ReplCommand {
        name: ".clear",
        args: "todo",
        help: "Empty the agent's todo list",
        parse: parse_clear,
    },
    ReplCommand {
        name: ".mcp",
        args: "prompts|resources [server] | prompt <server> <name> [arg=value]…",
        help: "List MCP servers' prompts or resources, or send a server's prompt",
        parse: parse_mcp,
    },
    ReplCommand {
        name: ".info",
        args: "[role|session|rag|agent|mcp|permissions]",
        help: "Show the model, settings and paths (or the role, session, knowledge base, agent, MCP servers or permissions)",
        parse: parse_info,
    },
    ReplCommand {
        name: ".model",
        args: "<client:model>",
        help: "Switch the model",
        parse: parse_model,
    },
    ReplCommand {
        name: ".role",
        args: "<name> [text]",
        help: "Use a role; with text, send just that message with it",
        parse: parse_role,
    },
    ReplCommand {
        name: ".session",
        args: "[name]",
        help: "Start or resume a session by name or id (no name: a temporary session)",
        parse: |args| {
            Action::OpenSession(if args.is_empty() {
                "temp".into()
            } else {
                args.to_string()
            })
        },
    },
    ReplCommand {
        name: ".save",
        args: "role|session [name]",
        help: "Save the role or the session, optionally under a new name",
        parse: parse_save,
    },
    ReplCommand {
        name: ".authenticate",
        args: "",
        help: "Sign in to the current model's client with OAuth (auth: oauth)",
        parse: |_| Action::Authenticate,
    },
    ReplCommand {
        name: ".compress",
        args: "session",
        help: "Summarise the older part of the session now",
        parse: |args| match args {
            "session" => Action::CompressSession,
            _ => Action::Usage("usage: .compress session".into()),
        },
    },
    ReplCommand {
        name: ".rag",
        args: "[name] [doc...]",
        help: "Use a knowledge base; a new one is built (from the documents, or asking for them); without a name, an unsaved one",
        parse: parse_rag,
    },
    ReplCommand {
        name: ".rebuild",
        args: "rag",
        help: "Re-read the knowledge base's documents (only changed chunks are embedded)",
        parse: |args| match args {
            "rag" => Action::RebuildRag,
            _ => Action::Usage("usage: .rebuild rag".into()),
        },
    },
    ReplCommand {
        name: ".sources",
        args: "rag",
        help: "Show the files and lines the last answer's context came from",
        parse: |args| match args {
            "rag" => Action::RagSources,
            _ => Action::Usage("usage: .sources rag".into()),
        },
    },
    ReplCommand {
        name: ".vault",
        args: "<add|get|update|delete|list> [name]",
        help: "Manage the secrets in the vault",
        parse: |args| match crate::vault::commands::Op::from_repl(args) {
            Ok(op) => Action::Vault(op),
            Err(usage) => Action::Usage(usage.to_string()),
        },
    },
    ReplCommand {
        name: ".macro",
        args: "<name> [arg...]",
        help: "Run a macro (macros/<name>.yaml) in a conversation of its own",
        parse: parse_macro,
    },
    ReplCommand {
        name: ".prompt",
        args: "<text>",
        help: "Use <text> as the system prompt (a temporary role)",
        parse: parse_prompt,
    },
    ReplCommand {
        name: ".file",
        args: "<file|dir|glob|url|%%|`cmd`>... [-- <text>]",
        help: "Send files, directories or URLs, with an optional question (%% is the last answer, `cmd` a command's output)",
        parse: parse_file,
    },
    ReplCommand {
        name: ".paste",
        args: "",
        help: "Attach the clipboard's image to the next message (also Ctrl-V)",
        parse: |_| Action::PasteImage,
    },
    ReplCommand {
        name: ".continue",
        args: "",
        help: "Carry on writing the last answer",
        parse: |_| ask_again(Continuation::Continue),
    },
    ReplCommand {
        name: ".regenerate",
        args: "",
        help: "Ask for the last answer again",
        parse: |_| ask_again(Continuation::Regenerate),
    },
    ReplCommand {
        name: ".copy",
        args: "",
        help: "Copy the last answer to the clipboard",
        parse: |_| Action::Copy,
    },
    ReplCommand {
        name: ".results",
        args: "",
        help: "Show the full output of the last turn's tool calls",
        parse: |_| Action::ToolResults,
    },
    ReplCommand {
        name: ".init",
        args: "",
        help: "Write AGENTS.md for this repository (asks before replacing one)",
        parse: |_| Action::Init,
    },
    ReplCommand {
        name: ".jobs",
        args: "",
        help: "List the background jobs commands started",
        parse: |_| Action::Jobs,
    },
    ReplCommand {
        name: ".set",
        args: "<key> <value>",
        help: "Change a setting (null resets it)",
        parse: parse_set,
    },
    ReplCommand {
        name: ".empty",
        args: "session",
        help: "Forget the conversation so far",
        parse: parse_empty,
    },
    ReplCommand {
        name: ".edit",
        args: "config|role|session|agent-config|rag-docs|message N",
        help: "Edit config.yaml, the role, the session, the agent's config.yaml, the knowledge base's documents, or your prompt N (then go on from it)",
        parse: parse_edit,
    },
    ReplCommand {
        name: ".delete",
        args: "role|session|rag|macro|agent-data <name>",
        help: "Delete a role file, a saved session, a knowledge base, a macro, or an agent's sessions and knowledge base",
        parse: parse_delete,
    },
    ReplCommand {
        name: ".exit",
        args: "[role|session|rag|agent]",
        help: "Leave the role, the session, the knowledge base or the agent, or loki",
        parse: parse_exit,
    },
];

/// Commands of the Loki REPL that this build does not offer yet; typing one says so.
pub const UNAVAILABLE: &[(&str, &str)] = &[(".authenticate", "OAuth")];

/// Parses a line starting with `.`.
pub fn parse(line: &str) -> Action {
    let line = line.trim();
    let (name, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    if let Some(cmd) = COMMANDS.iter().find(|c| c.name == name) {
        return (cmd.parse)(rest.trim());
    }
    if let Some((_, feature)) = UNAVAILABLE.iter().find(|(n, _)| *n == name) {
        return Action::Usage(format!(
            "`{name}` belongs to {feature}, which this version of loki does not have"
        ));
    }
    Action::Usage(format!("unknown command `{name}`; type .help for the list"))
}

/// Where `.help`'s descriptions start.
const HELP_COLUMN: usize = 44;

/// The help table.
pub fn help_text() -> String {
    let mut out = String::new();
    for cmd in COMMANDS {
        let head = if cmd.args.is_empty() {
            cmd.name.to_string()
        } else {
            format!("{} {}", cmd.name, cmd.args)
        };
        // A command wider than its column goes on a line of its own, the description
        // under the description column.
        if head.chars().count() >= HELP_COLUMN - 1 {
            out.push_str(&format!("{head}\n{:HELP_COLUMN$}{}\n", "", cmd.help));
        } else {
            out.push_str(&format!("{head:<HELP_COLUMN$}{}\n", cmd.help));
        }
    }
    out.push_str("\nType ::: to start a multi-line message and ::: to end it; Alt-Enter or Ctrl-J adds a line.\n");
    out.push_str("Ctrl-O edits the message in your editor. Ctrl-R searches history.\n");
    out.push_str("Ctrl-C stops an answer; Ctrl-D or .exit leaves loki.\n");
    out
}

fn parse_model(args: &str) -> Action {
    if args.is_empty() {
        return Action::Usage("usage: .model <client:model> (Tab lists them)".into());
    }
    Action::Apply(Command::SetModel(args.to_string()))
}

/// What `.mcp` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpOp {
    /// `.mcp prompts [server]`.
    Prompts(Option<String>),
    /// `.mcp resources [server]`.
    Resources(Option<String>),
    /// `.mcp prompt <server> <name> [arg=value]…`: the prompt's text is sent.
    Prompt {
        /// The server.
        server: String,
        /// The prompt.
        name: String,
        /// Its arguments.
        args: Vec<(String, String)>,
    },
}

fn parse_mcp(args: &str) -> Action {
    let usage = || {
        Action::Usage(
            "usage: .mcp prompts [server] | .mcp resources [server] | .mcp prompt <server> <name> [arg=value]…"
                .into(),
        )
    };
    let words = crate::shell_words::split(args);
    let server = words.get(1).cloned();
    match words.first().map(String::as_str) {
        Some("prompts") if words.len() <= 2 => Action::Mcp(McpOp::Prompts(server)),
        Some("resources") if words.len() <= 2 => Action::Mcp(McpOp::Resources(server)),
        Some("prompt") if words.len() >= 3 => {
            let mut pairs = Vec::new();
            for word in &words[3..] {
                let Some((k, v)) = word.split_once('=') else {
                    return Action::Usage(format!("`{word}`: give prompt arguments as name=value"));
                };
                pairs.push((k.to_string(), v.to_string()));
            }
            Action::Mcp(McpOp::Prompt {
                server: words[1].clone(),
                name: words[2].clone(),
                args: pairs,
            })
        }
        _ => usage(),
    }
}

fn parse_info(args: &str) -> Action {
    match args {
        "" => Action::Info,
        "role" => Action::InfoRole,
        "session" => Action::InfoSession,
        "rag" => Action::InfoRag,
        "agent" => Action::InfoAgent,
        "mcp" => Action::InfoMcp,
        "permissions" => Action::InfoPermissions,
        _ => Action::Usage("usage: .info [role|session|rag|agent|mcp|permissions]".into()),
    }
}

/// `.agent <name> [session] [key=value]…`: a word without `=` after the name is the
/// session.
fn parse_agent(args: &str) -> Action {
    let mut words = args.split_whitespace();
    let Some(name) = words.next() else {
        return Action::Usage("usage: .agent <name> [session] [key=value]…".into());
    };
    let mut session = None;
    let mut variables = Vec::new();
    for (i, word) in words.enumerate() {
        match word.split_once('=') {
            Some((key, value)) => variables.push((key.to_string(), value.to_string())),
            None if i == 0 => session = Some(word.to_string()),
            None => {
                return Action::Usage(format!(
                    "`{word}` is not key=value (usage: .agent <name> [session] [key=value]…)"
                ));
            }
        }
    }
    Action::Apply(Command::UseAgent {
        name: name.to_string(),
        variables,
        session,
    })
}

fn parse_clear(args: &str) -> Action {
    match args {
        "todo" => Action::Apply(Command::ClearTodo),
        _ => Action::Usage("usage: .clear todo".into()),
    }
}

fn parse_starter(args: &str) -> Action {
    match args {
        "" => Action::Starter(None),
        n => match n.parse::<usize>() {
            Ok(n) if n > 0 => Action::Starter(Some(n)),
            _ => Action::Usage("usage: .starter [n] (a number from the list)".into()),
        },
    }
}

fn parse_exit(args: &str) -> Action {
    match args {
        "" => Action::Exit,
        "role" => Action::Apply(Command::ExitRole),
        "session" => Action::ExitSession,
        "rag" => Action::ExitRag,
        "agent" => Action::Apply(Command::ExitAgent),
        _ => Action::Usage("usage: .exit [role|session|rag|agent]".into()),
    }
}

fn parse_save(args: &str) -> Action {
    let mut words = args.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("session"), name, None) => Action::SaveSession(name.map(str::to_string)),
        (Some("role"), name, None) => Action::SaveRole(name.map(str::to_string)),
        _ => Action::Usage("usage: .save role|session [name]".into()),
    }
}

fn parse_role(args: &str) -> Action {
    let (name, text) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
    match (name, text.trim()) {
        ("", _) => Action::Usage("usage: .role <name> [text]   (Tab lists the roles)".into()),
        (name, "") => Action::Apply(Command::UseRole(name.to_string())),
        (name, text) => Action::AskWithRole {
            role: name.to_string(),
            input: UserInput {
                text: text.to_string(),
                ..UserInput::default()
            },
        },
    }
}

fn parse_prompt(args: &str) -> Action {
    if args.is_empty() {
        return Action::Usage("usage: .prompt <text>".into());
    }
    Action::Apply(Command::UsePrompt(args.to_string()))
}

fn parse_set(args: &str) -> Action {
    let mut words = args.split_whitespace();
    let (Some(key), Some(value), None) = (words.next(), words.next(), words.next()) else {
        return Action::Usage("usage: .set <key> <value> (null resets a key)".into());
    };
    if DISPLAY_SETTINGS.iter().any(|(k, _)| *k == key) {
        return Action::Display {
            key: key.into(),
            value: value.into(),
        };
    }
    Action::Apply(Command::Set {
        key: key.into(),
        value: value.into(),
    })
}

/// A command that sets one setting under its own name: `.mode plan` is
/// `Command::Set { key: "permission_mode", value: "plan" }`.
fn set_shortcut(key: &str, arg: &str) -> Action {
    Action::Apply(Command::Set {
        key: key.into(),
        value: arg.trim().to_string(),
    })
}

fn parse_empty(args: &str) -> Action {
    match args {
        "session" => Action::Apply(Command::ClearConversation),
        _ => Action::Usage("usage: .empty session".into()),
    }
}

fn parse_edit(args: &str) -> Action {
    match args {
        "config" => Action::EditConfig,
        "role" => Action::EditRole,
        "session" => Action::EditSession,
        "rag-docs" => Action::EditRagDocs,
        "agent-config" => Action::EditAgentConfig,
        _ if args.starts_with("message") => match args["message".len()..].trim().parse::<usize>() {
            Ok(n) if n > 0 => Action::EditMessage(n),
            _ => Action::Usage("usage: .edit message N (N counts your prompts from 1)".into()),
        },
        _ => {
            Action::Usage("usage: .edit config|role|session|rag-docs|agent-config|message N".into())
        }
    }
}

fn parse_delete(args: &str) -> Action {
    let mut words = args.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("role"), Some(name), None) => Action::DeleteRole(name.into()),
        (Some("session"), Some(name), None) => Action::DeleteSession(name.into()),
        (Some("rag"), Some(name), None) => Action::DeleteRag(name.into()),
        (Some("macro"), Some(name), None) => Action::DeleteMacro(name.into()),
        (Some("agent-data"), Some(name), None) => {
            Action::Apply(Command::DeleteAgentData(name.into()))
        }
        _ => Action::Usage("usage: .delete role|session|rag|macro|agent-data <name>".into()),
    }
}

fn parse_rag(args: &str) -> Action {
    let mut words = split_words(args).into_iter();
    // Without a name: a new unsaved knowledge base (`name` empty).
    let name = words.next().unwrap_or_default();
    Action::UseRag {
        name,
        documents: words.filter(|w| w != "--").collect(),
    }
}

fn parse_macro(args: &str) -> Action {
    let mut words = split_words(args).into_iter();
    match words.next() {
        Some(name) => Action::Macro {
            name,
            args: words.collect(),
        },
        None => Action::Usage("usage: .macro <name> [arg...]   (Tab lists the macros)".into()),
    }
}

fn ask_again(kind: Continuation) -> Action {
    Action::Ask(UserInput {
        continuation: Some(kind),
        ..UserInput::default()
    })
}

fn parse_file(args: &str) -> Action {
    let words = split_file_args(args);
    let (files, text) = match words.iter().position(|w| w == "--") {
        Some(i) => (words[..i].to_vec(), words[i + 1..].join(" ")),
        None => (words, String::new()),
    };
    if files.is_empty() {
        return Action::Usage(
            "usage: .file <file|dir|glob|url>... [-- <text>]   e.g. .file src/ Cargo.toml -- explain the build".into(),
        );
    }
    Action::Ask(UserInput {
        text,
        files,
        ..UserInput::default()
    })
}

/// `.file` arguments: words as a shell would split them, except that a word starting
/// with a backtick runs to the closing backtick (a command whose output is attached:
/// `` .file `git diff` -- write a commit message ``).
fn split_file_args(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = s;
    loop {
        let trimmed = rest.trim_start();
        if trimmed.is_empty() {
            break;
        }
        if let Some(inner) = trimmed.strip_prefix('`')
            && let Some(end) = inner.find('`')
        {
            words.push(trimmed[..end + 2].to_string());
            rest = &inner[end + 1..];
            continue;
        }
        let next = trimmed
            .char_indices()
            .find(|(i, c)| *c == '`' && *i > 0 && trimmed[..*i].ends_with(char::is_whitespace))
            .map_or(trimmed.len(), |(i, _)| i);
        words.extend(split_words(&trimmed[..next]));
        rest = &trimmed[next..];
    }
    words
}

/// Splits arguments into words as a shell would (see [`crate::shell_words::split`]).
pub fn split_words(s: &str) -> Vec<String> {
    crate::shell_words::split(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_arguments_keep_a_backtick_command_whole() {
        assert_eq!(
            split_file_args("`git diff --staged` notes.md -- write `the` message"),
            [
                "`git diff --staged`",
                "notes.md",
                "--",
                "write",
                "`the`",
                "message"
            ]
        );
        assert_eq!(split_file_args("'a b' c"), ["a b", "c"]);
    }

    #[test]
    fn parses_commands_into_actions() {
        assert_eq!(
            parse(".model fake:x"),
            Action::Apply(Command::SetModel("fake:x".into()))
        );
        assert!(matches!(parse(".model"), Action::Usage(_)));
        assert_eq!(
            parse(".set temperature 0.5"),
            Action::Apply(Command::Set {
                key: "temperature".into(),
                value: "0.5".into()
            })
        );
        assert_eq!(
            parse(".set wrap 80"),
            Action::Display {
                key: "wrap".into(),
                value: "80".into()
            }
        );
        assert!(matches!(parse(".set a"), Action::Usage(_)));
        assert_eq!(
            parse(".empty session"),
            Action::Apply(Command::ClearConversation)
        );
        assert_eq!(parse(".exit"), Action::Exit);
        assert_eq!(
            parse(".role coder"),
            Action::Apply(Command::UseRole("coder".into()))
        );
        assert!(
            matches!(parse(".role coder fix this"), Action::AskWithRole { role, .. } if role == "coder")
        );
        assert_eq!(parse(".exit role"), Action::Apply(Command::ExitRole));
        assert_eq!(parse(".session x"), Action::OpenSession("x".into()));
        assert_eq!(
            parse(".save session y"),
            Action::SaveSession(Some("y".into()))
        );
        assert_eq!(
            parse(".agent demo work user=Ada tone=calm"),
            Action::Apply(Command::UseAgent {
                name: "demo".into(),
                variables: vec![
                    ("user".into(), "Ada".into()),
                    ("tone".into(), "calm".into())
                ],
                session: Some("work".into()),
            })
        );
        assert!(matches!(parse(".agent demo a b"), Action::Usage(m) if m.contains("key=value")));
        assert!(matches!(parse(".agent"), Action::Usage(_)));
        assert_eq!(parse(".exit agent"), Action::Apply(Command::ExitAgent));
        assert_eq!(parse(".starter 2"), Action::Starter(Some(2)));
        assert!(matches!(parse(".starter 0"), Action::Usage(_)));
        assert_eq!(parse(".clear todo"), Action::Apply(Command::ClearTodo));
        assert_eq!(
            parse(".rag kb docs/ 'a b.md'"),
            Action::UseRag {
                name: "kb".into(),
                documents: vec!["docs/".into(), "a b.md".into()]
            }
        );
        assert_eq!(
            parse(".rag"),
            Action::UseRag {
                name: String::new(),
                documents: Vec::new()
            }
        );
        assert_eq!(parse(".rebuild rag"), Action::RebuildRag);
        assert_eq!(parse(".sources rag"), Action::RagSources);
        assert_eq!(parse(".exit rag"), Action::ExitRag);
        assert_eq!(parse(".delete rag kb"), Action::DeleteRag("kb".into()));
        assert_eq!(
            parse(".macro m a 'b c'"),
            Action::Macro {
                name: "m".into(),
                args: vec!["a".into(), "b c".into()]
            }
        );
        assert!(matches!(parse(".macro"), Action::Usage(_)));
        assert!(matches!(parse(".bogus"), Action::Usage(m) if m.contains("unknown command")));
    }

    #[test]
    fn file_arguments_and_text() {
        let Action::Ask(input) = parse(r#".file src/ "my notes.txt" -- what is this"#) else {
            panic!("expected Ask");
        };
        assert_eq!(input.files, ["src/", "my notes.txt"]);
        assert_eq!(input.text, "what is this");
        assert!(matches!(parse(".file"), Action::Usage(_)));
    }

    #[test]
    fn word_splitting() {
        assert_eq!(
            split_words(r#"a "b c" 'd e' f\ g"#),
            ["a", "b c", "d e", "f g"]
        );
        assert!(split_words("   ").is_empty());
    }

    #[test]
    fn help_lists_every_command() {
        let help = help_text();
        for cmd in COMMANDS {
            assert!(help.contains(cmd.name));
        }
        // Every description starts in its column, under a command too wide for it.
        for line in help.lines().take_while(|l| !l.is_empty()) {
            let chars: Vec<char> = line.chars().collect();
            let described = chars.len() > HELP_COLUMN
                && chars[HELP_COLUMN - 1] == ' '
                && chars[HELP_COLUMN] != ' ';
            let alone = line.starts_with('.') && !line.contains("  ");
            assert!(described || alone, "{line:?}");
        }
    }
}
