//! Claude Code's command line, as the Claude Agent SDK writes it when a program sets
//! `cli_path` to loki. The SDK marks its runs with `CLAUDE_AGENT_SDK_VERSION` (and
//! `CLAUDE_CODE_ENTRYPOINT=sdk-…`); then these flags are read instead of loki's own. The
//! ones loki has a meaning for are kept, every other is accepted and named in the log.

/// What a Claude Agent SDK program asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClaudeOptions {
    /// `--model` (any loki model id; Claude's aliases are not translated).
    pub model: Option<String>,
    /// `--system-prompt`: replaces loki's default prompt.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`: added to it.
    pub append_system_prompt: Option<String>,
    /// `--allowedTools`: run without asking (Claude's names or loki's).
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools`: never offered.
    pub disallowed_tools: Vec<String>,
    /// `--max-turns`: model calls in one turn.
    pub max_turns: Option<usize>,
    /// `--max-budget-usd`: stop when the conversation has cost this much.
    pub max_budget_usd: Option<f64>,
    /// `--permission-mode`: `default`, `acceptEdits`, `plan`, `bypassPermissions`.
    pub permission_mode: Option<String>,
    /// `--permission-prompt-tool stdio`: approvals are asked of the program
    /// (`can_use_tool`).
    pub permission_prompt_tool: Option<String>,
    /// `--resume ID`: go on with that session.
    pub resume: Option<String>,
    /// `--session-id UUID`: the id the program knows this run's session by.
    pub session_id: Option<String>,
    /// `--continue`: go on with the newest session started in the working directory.
    pub continue_last: bool,
    /// `--replay-user-messages`: each `user` message read is echoed back (its `uuid`,
    /// `isReplay: true`) when its turn starts, so the program knows which prompt runs.
    pub replay_user_messages: bool,
    /// `--include-partial-messages`: `stream_event` messages while the answer streams.
    pub include_partial_messages: bool,
    /// `--mcp-config`: JSON (or a file) with `mcpServers`.
    pub mcp_config: Option<String>,
    /// The flags accepted without a meaning here.
    pub ignored: Vec<String>,
    /// One prompt instead of `user` messages on stdin: `loki -p PROMPT --output-format
    /// stream-json --compat claude`, Claude Code's `claude -p … --output-format
    /// stream-json`.
    pub prompt: Option<String>,
}

/// A Claude Code flag that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    /// A flag that takes a value came last.
    #[error("--{0} needs a value")]
    NeedsValue(String),
    /// A number that is not one.
    #[error("{flag} `{value}` is not a number")]
    NotANumber {
        /// The flag.
        flag: &'static str,
        /// What was given.
        value: String,
    },
}

/// Flags that carry a value.
const WITH_VALUE: &[&str] = &[
    "output-format",
    "input-format",
    "system-prompt",
    "system-prompt-file",
    "append-system-prompt",
    "tools",
    "allowedTools",
    "disallowedTools",
    "max-turns",
    "max-budget-usd",
    "task-budget",
    "model",
    "fallback-model",
    "betas",
    "permission-prompt-tool",
    "permission-mode",
    "resume",
    "session-id",
    "settings",
    "add-dir",
    "mcp-config",
    "resume-session-at",
    "resume-drops-turn",
    "setting-sources",
    "plugin-dir",
    "max-thinking-tokens",
    "thinking",
    "thinking-display",
    "effort",
    "json-schema",
];

/// Whether a Claude Agent SDK started this process: the SDK's variables are set and the
/// command line is the one it always writes (stream-json both ways, `--verbose`), so a
/// `loki` typed by an agent that inherited the variables is not taken for one.
pub fn started_by_sdk(argv: &[String], get: impl Fn(&str) -> Option<String>) -> bool {
    let marked = get("CLAUDE_AGENT_SDK_VERSION").is_some_and(|v| !v.is_empty())
        || get("CLAUDE_CODE_ENTRYPOINT").is_some_and(|v| v.starts_with("sdk"));
    let pair = |flag: &str, value: &str| argv.windows(2).any(|w| w[0] == flag && w[1] == value);
    marked
        && argv.iter().any(|a| a == "--verbose")
        && pair("--output-format", "stream-json")
        && pair("--input-format", "stream-json")
}

/// Reads Claude Code's flags (`argv` without the program name).
pub fn parse(argv: &[String]) -> Result<ClaudeOptions, FlagError> {
    let mut options = ClaudeOptions::default();
    let mut words = argv.iter().peekable();
    while let Some(word) = words.next() {
        let Some(flag) = word.strip_prefix("--") else {
            options.ignored.push(word.clone());
            continue;
        };
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (flag, None),
        };
        let value = match inline {
            Some(value) => Some(value),
            None if WITH_VALUE.contains(&name) => Some(
                words
                    .next()
                    .cloned()
                    .ok_or_else(|| FlagError::NeedsValue(name.to_string()))?,
            ),
            // An unknown flag takes the next word when that is not a flag itself.
            None => words.next_if(|w| !w.starts_with("--")).cloned(),
        };
        take(&mut options, name, value)?;
    }
    Ok(options)
}

fn take(options: &mut ClaudeOptions, name: &str, value: Option<String>) -> Result<(), FlagError> {
    let list = |v: &Option<String>| -> Vec<String> {
        v.as_deref()
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()
    };
    match name {
        "model" => options.model = value,
        "system-prompt" => options.system_prompt = value,
        "append-system-prompt" => options.append_system_prompt = value,
        "allowedTools" => options.allowed_tools = list(&value),
        "disallowedTools" => options.disallowed_tools = list(&value),
        "max-turns" => options.max_turns = Some(number("--max-turns", value)?),
        "max-budget-usd" => options.max_budget_usd = Some(number("--max-budget-usd", value)?),
        "permission-mode" => options.permission_mode = value,
        "permission-prompt-tool" => options.permission_prompt_tool = value,
        "resume" => options.resume = value,
        "session-id" => options.session_id = value,
        "continue" => options.continue_last = true,
        // The SDK writes it with an empty value (`--replay-user-messages ""`).
        "replay-user-messages" => options.replay_user_messages = true,
        "include-partial-messages" => options.include_partial_messages = true,
        "mcp-config" => options.mcp_config = value,
        // Always stream-json both ways; `--verbose` is what the SDK always adds.
        "output-format" | "input-format" | "verbose" => {}
        other => options.ignored.push(match value {
            Some(value) => format!("--{other} {value}"),
            None => format!("--{other}"),
        }),
    }
    Ok(())
}

/// The number `value` of `flag`.
fn number<T: std::str::FromStr>(flag: &'static str, value: Option<String>) -> Result<T, FlagError> {
    let text = value.unwrap_or_default();
    text.parse()
        .map_err(|_| FlagError::NotANumber { flag, value: text })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude_names::{claude_name, loki_tools};

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_sdk_s_command_line_is_read_and_the_rest_is_named() {
        let argv = words(
            "--output-format stream-json --verbose --system-prompt Be --allowedTools Bash,Read \
             --max-turns 3 --model fake:gpt-4o --permission-prompt-tool stdio \
             --permission-mode acceptEdits --resume=s1 --setting-sources= \
             --include-partial-messages --fork-session --input-format stream-json \
             --session-id 0b6e5b1c-6f0a-4c8e-9a55-1d2f3e4a5b6c --replay-user-messages",
        );
        let options = parse(&argv).unwrap();
        assert_eq!(options.system_prompt.as_deref(), Some("Be"));
        assert_eq!(options.allowed_tools, ["Bash", "Read"]);
        assert_eq!(options.max_turns, Some(3));
        assert_eq!(options.model.as_deref(), Some("fake:gpt-4o"));
        assert_eq!(options.permission_prompt_tool.as_deref(), Some("stdio"));
        assert_eq!(options.permission_mode.as_deref(), Some("acceptEdits"));
        assert_eq!(options.resume.as_deref(), Some("s1"));
        assert!(options.include_partial_messages);
        assert!(options.replay_user_messages);
        assert_eq!(
            options.session_id.as_deref(),
            Some("0b6e5b1c-6f0a-4c8e-9a55-1d2f3e4a5b6c")
        );
        // As the SDK writes it: an empty value after the flag.
        let replay = parse(&["--replay-user-messages".into(), String::new()]).unwrap();
        assert!(replay.replay_user_messages && replay.ignored.is_empty());
        assert_eq!(options.ignored, ["--setting-sources ", "--fork-session"]);
        assert!(parse(&words("--max-turns many")).is_err());
        assert!(parse(&words("--model")).is_err());
    }

    #[test]
    fn claude_names_map_to_loki_tools_and_back() {
        assert_eq!(loki_tools("Bash"), ["execute_command"]);
        assert_eq!(loki_tools("fs_cat"), ["fs_cat"]);
        assert_eq!(claude_name("execute_command"), "Bash");
        assert_eq!(claude_name("fs_write"), "Write");
        assert_eq!(claude_name("my_tool"), "my_tool");
        let sdk = |k: &str| (k == "CLAUDE_AGENT_SDK_VERSION").then(|| "0.2".to_string());
        let argv = words("--output-format stream-json --verbose --input-format stream-json");
        assert!(started_by_sdk(&argv, sdk));
        assert!(!started_by_sdk(&argv, |_| None));
        assert!(!started_by_sdk(
            &words("--output-format stream-json hi"),
            sdk
        ));
    }
}
