//! `status_line: {command}` (like Claude Code's): before each prompt the REPL runs the
//! command with the session's state as JSON on stdin and shows the first line it
//! printed, sanitised, above the prompt. It is bounded in time; while the state is the
//! same the last line is shown again without running it; a failure or a slow command
//! shows the previous line (nothing the first time) and is only logged.

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::config::StatusLine;
use crate::conversation::Status;

/// How long the command may take unless `timeout_ms` says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(300);

/// Most bytes of output read (only the first line is shown).
const MAX_OUTPUT: u64 = 4096;

/// The configured command and its last answer.
#[derive(Debug, Default)]
pub struct StatusLineCache {
    /// The input the last line was made for, and that line.
    last: Option<(String, String)>,
}

impl StatusLineCache {
    /// The line to show for `status`: cached when the state is unchanged, else the
    /// command's first output line, else the previous line.
    pub async fn line(&mut self, config: &StatusLine, status: &Status) -> Option<String> {
        let input = state_json(status);
        if let Some((seen, line)) = &self.last
            && *seen == input
        {
            return Some(line.clone());
        }
        let timeout = config
            .timeout_ms
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        match run(&config.command, &input, &status.cwd, timeout).await {
            Ok(line) => {
                self.last = Some((input, line.clone()));
                Some(line)
            }
            Err(e) => {
                tracing::debug!("status_line command failed: {e}");
                self.last.as_ref().map(|(_, line)| line.clone())
            }
        }
    }
}

/// What the command reads on stdin: the model, the session, the directory, the cost
/// and tokens so far.
fn state_json(status: &Status) -> String {
    json!({
        "model": status.model,
        "session": status.session.as_ref().map(|s| &s.name),
        "cwd": status.cwd.display().to_string(),
        "cost_usd": status.usage.cost,
        "tokens": {
            "input": status.usage.input_tokens,
            "output": status.usage.output_tokens,
        },
        "role": status.role,
        "agent": status.agent,
    })
    .to_string()
}

/// Runs `command` through the shell in `cwd` with `input` on stdin; its first line,
/// control characters shown escaped.
async fn run(
    command: &str,
    input: &str,
    cwd: &std::path::Path,
    timeout: Duration,
) -> std::io::Result<String> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let work = async move {
        if let Some(stdin) = stdin.as_mut() {
            // A command that does not read its input is no error.
            let _ = stdin.write_all(input.as_bytes()).await;
        }
        drop(stdin);
        let mut out = Vec::new();
        if let Some(stdout) = stdout {
            stdout.take(MAX_OUTPUT).read_to_end(&mut out).await?;
        }
        Ok::<_, std::io::Error>(out)
    };
    let out = tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "took too long"))??;
    let _ = child.start_kill();
    let text = String::from_utf8_lossy(&out);
    let first = text.lines().next().unwrap_or("").trim_end();
    Ok(loki_wire::sanitize::display(first).into_owned())
}
