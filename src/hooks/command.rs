//! Hooks that run commands (`hooks:` in config.yaml, a trusted project's settings). Each
//! command gets a JSON description on stdin — `session_id`, `cwd`, `hook_event_name`, and
//! the event's fields (`tool_name`/`tool_input`/`tool_response` in Claude Code's names
//! and shapes, see [`super::shape`]; `prompt`, `source`, `trigger`, `message`,
//! `stop_hook_active`) — and runs with `sh -c` in the working
//! directory, with `LOKI_PROJECT_DIR` and `CLAUDE_PROJECT_DIR` set to it.
//!
//! Exit 0 goes on; its stdout, when JSON, may decide (`decision`, `reason`,
//! `hookSpecificOutput.permissionDecision`, `updatedInput`, `additionalContext`), and for
//! `UserPromptSubmit` and `SessionStart` plain text is context for the model. Exit 2
//! blocks: its stderr is what the model (or, for a prompt, the user) is told. Any other
//! failure, a timeout included, is a warning and the conversation goes on.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Before, HookCall, HookResult, Hooks, Prompted, Verdict};
use crate::config::hooks::{DEFAULT_TIMEOUT, HookCommand, HookSettings};

/// Most bytes of a hook's stdout or stderr read.
const MAX_OUTPUT: u64 = 1 << 20;

/// Where a hook's warnings go (the conversation's notices).
pub type Warn = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

/// The configured command hooks of one conversation tree.
pub struct CommandHooks {
    settings: HookSettings,
    cwd: PathBuf,
    session_id: String,
    warn: Warn,
    /// Where hooks marked `sandbox: true` run (none: the conversation has no sandbox).
    sandbox: Option<std::sync::Arc<crate::sandbox::Sandbox>>,
}

/// How one command ended.
enum Ran {
    /// It exited with `code`.
    Exited {
        code: i32,
        stdout: String,
        stderr: String,
    },
    /// It could not run, or ran out of time; the reason.
    Failed(String),
}

/// What the commands of one event said, together.
#[derive(Default)]
struct Said {
    /// Parsed JSON stdout of each command that exited 0.
    json: Vec<Value>,
    /// The command each of `json` came from.
    json_from: Vec<String>,
    /// Plain-text stdout of each command that exited 0.
    text: Vec<String>,
    /// stderr of the first command that exited 2 (or a line naming it, when it wrote
    /// nothing there).
    blocked: Option<String>,
    /// That command, and whether it explained itself on stderr.
    blocked_by: Option<(String, bool)>,
}

impl Said {
    /// The JSON outputs with their commands, as `PreToolUse` messages name them.
    fn named_json(&self, event: &str) -> Vec<(String, Value)> {
        self.json_from
            .iter()
            .map(|command| format!("the {event} hook `{command}`"))
            .zip(self.json.iter().cloned())
            .collect()
    }
}

impl CommandHooks {
    /// Hooks from `settings` for conversations working in `cwd`.
    pub fn new(settings: HookSettings, cwd: PathBuf, session_id: String, warn: Warn) -> Self {
        Self {
            settings,
            cwd,
            session_id,
            warn,
            sandbox: None,
        }
    }

    /// The same hooks, with those marked `sandbox: true` confined to `sandbox`.
    pub fn confined(mut self, sandbox: Option<std::sync::Arc<crate::sandbox::Sandbox>>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Runs the commands of `event` (for `tool`, when it has one) with `input`, in order;
    /// the first that blocks ends the list.
    async fn run(&self, event: &str, tool: Option<&str>, mut input: Value) -> Said {
        let claude;
        let names = match tool {
            Some(loki) => {
                claude = crate::claude_names::claude_name(loki).to_string();
                Some((loki, claude.as_str()))
            }
            None => None,
        };
        let commands = self.settings.commands(event, names);
        let mut said = Said::default();
        if commands.is_empty() {
            return said;
        }
        input["hook_event_name"] = json!(event);
        input["session_id"] = json!(self.session_id);
        input["cwd"] = json!(self.cwd.display().to_string());
        input["transcript_path"] = json!("");
        let stdin = input.to_string();
        for command in commands {
            match self.run_one(command, &stdin).await {
                Ran::Exited {
                    code: 0, stdout, ..
                } => {
                    let text = stdout.trim();
                    if text.is_empty() {
                        continue;
                    }
                    match serde_json::from_str::<Value>(text) {
                        Ok(value) if value.is_object() => {
                            said.json.push(value);
                            said.json_from.push(command.command.clone());
                        }
                        _ => said.text.push(text.to_string()),
                    }
                }
                Ran::Exited {
                    code: 2, stderr, ..
                } => {
                    let reason = stderr.trim();
                    let reason = if reason.is_empty() {
                        format!("blocked by the hook `{}`", command.command)
                    } else {
                        reason.to_string()
                    };
                    said.blocked = Some(reason);
                    said.blocked_by = Some((command.command.clone(), !stderr.trim().is_empty()));
                    break;
                }
                Ran::Exited { code, stderr, .. } => (self.warn)(&format!(
                    "{event} hook `{}` failed (exit code {code}){}",
                    command.command,
                    first_line(&stderr)
                )),
                Ran::Failed(why) => (self.warn)(&format!(
                    "{event} hook `{}` {why}; going on without it",
                    command.command
                )),
            }
        }
        said
    }

    async fn run_one(&self, hook: &HookCommand, stdin: &str) -> Ran {
        let timeout = Duration::from_secs(hook.timeout.unwrap_or(DEFAULT_TIMEOUT).max(1));
        let mut command = match self.sandbox.as_ref().filter(|_| hook.sandbox) {
            Some(sandbox) => match sandbox.command("sh", &["-c", hook.command.as_str()]) {
                Ok(mut confined) => {
                    confined.envs(sandbox.temp_vars());
                    confined
                }
                Err(why) => return Ran::Failed(why.to_string()),
            },
            None => {
                let mut plain = tokio::process::Command::new("sh");
                plain.arg("-c").arg(&hook.command);
                plain
            }
        };
        command
            .current_dir(&self.cwd)
            .env("LOKI_PROJECT_DIR", &self.cwd)
            .env("CLAUDE_PROJECT_DIR", &self.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => return Ran::Failed(format!("cannot run: {e}")),
        };
        let group = child.id();
        let (Some(mut input), Some(out), Some(err)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Ran::Failed("cannot talk to it".into());
        };
        let stdin = stdin.to_string();
        let work = async move {
            // A hook that does not read its input must not block the write.
            let write = async move {
                let _ = input.write_all(stdin.as_bytes()).await;
                drop(input);
            };
            let read = |stream: Box<dyn tokio::io::AsyncRead + Unpin + Send>| async move {
                let mut bytes = Vec::new();
                let _ = stream.take(MAX_OUTPUT).read_to_end(&mut bytes).await;
                String::from_utf8_lossy(&bytes).into_owned()
            };
            let ((), stdout, stderr, status) = tokio::join!(
                write,
                read(Box::new(out)),
                read(Box::new(err)),
                child.wait()
            );
            (stdout, stderr, status)
        };
        match tokio::time::timeout(timeout, work).await {
            Ok((stdout, stderr, Ok(status))) => Ran::Exited {
                code: status.code().unwrap_or(-1),
                stdout,
                stderr,
            },
            Ok((_, _, Err(e))) => Ran::Failed(format!("failed: {e}")),
            Err(_) => {
                if let Some(pid) = group {
                    crate::process_group::kill(pid);
                }
                Ran::Failed(format!(
                    "did not finish within {}s and was stopped",
                    timeout.as_secs()
                ))
            }
        }
    }

    /// `Stop` or `SubagentStop` (`event`): a reason to go on, from a hook that exited 2
    /// or answered `decision: block`.
    fn go_on(&self, event: &'static str, again: bool) -> BoxFuture<'_, Option<String>> {
        Box::pin(async move {
            let said = self
                .run(event, None, json!({"stop_hook_active": again}))
                .await;
            said.blocked.or_else(|| super::stop_reason_of(&said.json))
        })
    }
}

fn first_line(text: &str) -> String {
    match text.lines().find(|l| !l.trim().is_empty()) {
        // Shown through the notices (sanitised there); control characters go here too.
        Some(line) => format!(
            ": {}",
            line.trim()
                .chars()
                .filter(|c| !c.is_control())
                .collect::<String>()
        ),
        None => String::new(),
    }
}

impl Hooks for CommandHooks {
    fn before<'a>(&'a self, call: HookCall<'a>) -> BoxFuture<'a, Before> {
        Box::pin(async move {
            let name = crate::claude_names::claude_name(call.tool);
            let input = super::shape::pre_tool_use_input(name, call);
            let said = self.run("PreToolUse", Some(call.tool), input).await;
            if let (Some(reason), Some((command, explained))) = (&said.blocked, &said.blocked_by) {
                let message = if *explained {
                    format!("blocked by the PreToolUse hook `{command}` (exit 2): {reason}")
                } else {
                    format!("blocked by the PreToolUse hook `{command}` (exit 2)")
                };
                return Before {
                    decision: Some(Verdict::Deny(message)),
                    args: None,
                };
            }
            let before = super::decision_of(&said.named_json("PreToolUse"));
            super::shape::in_loki_shape(call.tool, before)
        })
    }

    fn after<'a>(&'a self, ran: HookResult<'a>) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let name = crate::claude_names::claude_name(ran.call.tool);
            let input = super::post_tool_use_input(name, ran);
            let said = self.run("PostToolUse", Some(ran.call.tool), input).await;
            let mut notes: Vec<String> = said.blocked.into_iter().collect();
            notes.extend(super::note_of(&said.json));
            super::one_a_line(&notes)
        })
    }

    fn prompt<'a>(&'a self, prompt: &'a str) -> BoxFuture<'a, Prompted> {
        Box::pin(async move {
            let said = self
                .run("UserPromptSubmit", None, json!({"prompt": prompt}))
                .await;
            let blocked = said
                .blocked
                .or_else(|| super::prompt_blocked_of(&said.json));
            let mut context = said.text;
            context.extend(super::context_of(&said.json));
            Prompted { blocked, context }
        })
    }

    fn session_start<'a>(&'a self, source: &'a str) -> BoxFuture<'a, Vec<String>> {
        Box::pin(async move {
            let said = self
                .run("SessionStart", None, json!({"source": source}))
                .await;
            let mut context = said.text;
            context.extend(super::context_of(&said.json));
            context
        })
    }

    fn stop(&self, again: bool) -> BoxFuture<'_, Option<String>> {
        self.go_on("Stop", again)
    }

    fn pre_compact<'a>(&'a self, trigger: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let said = self
                .run("PreCompact", None, json!({"trigger": trigger}))
                .await;
            if let Some(reason) = said.blocked {
                (self.warn)(&format!("PreCompact hook: {reason}"));
            }
        })
    }

    fn notification<'a>(&'a self, message: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.run("Notification", None, json!({"message": message}))
                .await;
        })
    }

    fn subagent_stop(&self, again: bool) -> BoxFuture<'_, Option<String>> {
        self.go_on("SubagentStop", again)
    }

    fn permission_request<'a>(&'a self, call: HookCall<'a>) -> BoxFuture<'a, Option<Verdict>> {
        Box::pin(async move {
            let name = crate::claude_names::claude_name(call.tool);
            let input = super::shape::pre_tool_use_input(name, call);
            let said = self.run("PermissionRequest", Some(call.tool), input).await;
            if let (Some(reason), Some((command, _))) = (&said.blocked, &said.blocked_by) {
                return Some(Verdict::Deny(format!(
                    "denied by the PermissionRequest hook `{command}` (exit 2): {reason}"
                )));
            }
            super::permission_decision_of(&said.named_json("PermissionRequest"))
        })
    }

    fn session_end<'a>(&'a self, reason: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.run("SessionEnd", None, json!({"reason": reason}))
                .await;
        })
    }
}
