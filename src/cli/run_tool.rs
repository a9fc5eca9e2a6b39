//! `--run-tool NAME ['{json}']`: one tool call from a shell, run as loki runs it for a
//! model — approval at the terminal (or `--yolo`), the working tree confinement, output
//! limits. The arguments are the text after the name, else piped stdin, else `{}`. The
//! result goes to stdout; a failed or refused call is one `error:` line and exit 1. The
//! smallest driver: open, one typed op, [`Conversation::finish`] (the close), one exit
//! status.

use std::io::Write;
use std::sync::Arc;

use super::args::Args;
use crate::conversation::Conversation;
use crate::render::theme::Theme;
use crate::state::AppState;
use loki_wire::sanitize;

/// Runs the call; returns the exit status.
pub async fn run(state: &Arc<AppState>, args: &Args, piped: Option<String>) -> anyhow::Result<u8> {
    let Some(name) = args.run_tool.as_deref() else {
        return Ok(2);
    };
    let theme = Theme::stderr(&state.terminal);
    let text = args.text.join(" ");
    let arguments = match (text.trim(), piped) {
        ("", Some(piped)) if !piped.trim().is_empty() => piped,
        ("", _) => "{}".to_string(),
        (text, _) => text.to_string(),
    };
    let spec = super::flags::terminal_spec(args, &state.terminal);
    let mut conversation = Conversation::open(state, spec).await?;
    // The person typed the call: no tool line echoes it; the result or one error line
    // is the whole output.
    let ran = conversation
        .call_tool(name, &arguments, &loki_protocol::emitter::Discard)
        .await;
    let finished = conversation
        .finish(ran, &loki_protocol::emitter::Discard)
        .await;
    let outcome = match super::outcome_or_exit(finished, &theme) {
        Ok(outcome) => outcome,
        Err(status) => return Ok(status),
    };
    if !outcome.ok {
        let value = serde_json::from_str::<serde_json::Value>(&outcome.content).ok();
        let message = value
            .as_ref()
            .and_then(|v| v["tool_call_error"].as_str().map(str::to_string))
            .unwrap_or_else(|| outcome.content.clone());
        crate::term::report_error(&theme, &format!("{name}: {message}"));
        // What the script said on stderr is what the model reads to fix the call; the
        // person testing it from a shell sees it too (sanitised, after the error line).
        if let Some(stderr) = value
            .as_ref()
            .and_then(|v| v["stderr"].as_str())
            .filter(|s| !s.trim().is_empty())
        {
            let shown = loki_wire::secrets::redact(stderr);
            let mut err = std::io::stderr().lock();
            writeln!(err, "{}", sanitize::display(shown.trim_end()))?;
        }
        return Ok(1);
    }
    let shown = loki_wire::secrets::redact(&outcome.content);
    let shown = sanitize::for_terminal(&shown, state.terminal.stdout_tty);
    let mut out = std::io::stdout().lock();
    out.write_all(shown.as_bytes())?;
    if !shown.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(0)
}
