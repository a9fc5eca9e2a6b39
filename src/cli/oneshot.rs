//! The one-shot front end: one conversation built from the flags, one run of the engine
//! per prompt, the session saved per the save policy, and the result mapped to an exit
//! code. The answer is shown as text (`TerminalEmitter`) or, headless, as JSON
//! (`--output-format json|stream-json`); `--input-format stream-json` reads several
//! prompts from stdin and answers each in the same conversation.

use std::sync::Arc;

use anyhow::Context as _;

use super::args::{Args, InputFormat, OutputFormat};
use super::headless::{JsonLines, JsonResult};
use crate::context::RequestContext;
use crate::engine::command::Command;
use crate::engine::{CoreError, Emitter, Engine, RunOptions, RunRequest, Sink, UserInput};
use crate::render::theme::Theme;
use crate::render::{Display, TerminalEmitter, TerminalOptions};
use crate::state::AppState;
use crate::term;

/// How the run's events are shown.
enum Output {
    Text(Box<TerminalEmitter>),
    Lines(JsonLines),
    Result(JsonResult),
}

impl Output {
    fn emitter(&self) -> &dyn Emitter {
        match self {
            Self::Text(e) => e.as_ref(),
            Self::Lines(e) => e,
            Self::Result(e) => e,
        }
    }

    fn broken_pipe(&self) -> bool {
        match self {
            Self::Text(e) => e.broken_pipe(),
            Self::Lines(e) => e.broken_pipe(),
            Self::Result(e) => e.broken_pipe(),
        }
    }
}

/// Runs one-shot (or headless) with `text` as the prompt; returns the exit status.
pub async fn run(state: &Arc<AppState>, args: &Args, text: String) -> anyhow::Result<u8> {
    let headless =
        args.output_format != OutputFormat::Text || args.input_format == InputFormat::StreamJson;
    let stderr_theme = Theme::detect(
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
        state.env.get("NO_COLOR").is_some(),
        true,
        false,
    );
    let mut ctx = match RequestContext::resolve(state, args.model.as_deref()) {
        Ok(ctx) => ctx,
        Err(e) if headless => return Ok(setup_failed(args, &CoreError::from(e))),
        Err(e) => return Err(e.into()),
    };
    if headless {
        // Nothing prompts: approvals come only from --yolo, auto_approve_tools and
        // deny_tools; questions are refused.
        if args.yolo {
            ctx.tool_policy.yolo = true;
        }
    } else {
        crate::app::set_approver(&mut ctx, args);
    }

    // Ctrl-C, SIGTERM and SIGHUP all stop the turn the same way: the partial answer is
    // kept and the session saved; the exit status names the signal.
    let stopped = Arc::new(std::sync::OnceLock::new());
    let mut signals =
        crate::signals::StopSignals::listen(true).context("cannot listen for signals")?;
    let listener = {
        let cancel = ctx.cancel.clone();
        let stopped = Arc::clone(&stopped);
        tokio::spawn(async move {
            let signal = signals.recv().await;
            let _ = stopped.set(signal);
            cancel.cancel();
            // Later signals are absorbed: the run is already finishing.
            loop {
                signals.recv().await;
            }
        })
    };
    let stop_code = |fallback: u8| {
        stopped
            .get()
            .map_or(fallback, |s: &crate::signals::StopSignal| s.exit_code())
    };

    let prepared = prepare(state, &mut ctx, args, &text).await;
    match prepared {
        Ok(true) => {}
        Ok(false) => return Ok(0),
        Err(e) if headless => {
            listener.abort();
            return Ok(match e.downcast_ref::<CoreError>() {
                Some(CoreError::Cancelled) => {
                    setup_failed_with(&ctx, args, &CoreError::Cancelled);
                    stop_code(130)
                }
                Some(core) => setup_failed_with(&ctx, args, core),
                None => setup_failed_with(&ctx, args, &CoreError::InvalidRequest(format!("{e:#}"))),
            });
        }
        Err(e) => {
            listener.abort();
            return match e.downcast_ref::<CoreError>() {
                Some(CoreError::Cancelled) => Ok(stop_code(130)),
                _ => Err(e),
            };
        }
    }

    let output = match args.output_format {
        OutputFormat::Text => {
            let no_color = state.env.get("NO_COLOR").is_some();
            let display = Display::from_config(&state.config);
            let opts = TerminalOptions::detect(&display, no_color, args.code);
            Output::Text(Box::new(TerminalEmitter::new(
                opts,
                Some(ctx.cancel.clone()),
            )))
        }
        OutputFormat::StreamJson => Output::Lines(JsonLines::new(ctx.cancel.clone())),
        OutputFormat::Json => Output::Result(JsonResult::new()),
    };
    let emitter = output.emitter();
    let engine = Engine::new(Arc::clone(state));
    let options = RunOptions {
        stream: (args.no_stream || args.code).then_some(false),
    };
    let mut result: Result<(), CoreError> = Ok(());
    let mut bad_input = false;
    if args.input_format == InputFormat::StreamJson {
        let mut lines = stdin_lines();
        let mut number = 0;
        loop {
            let next = tokio::select! {
                biased;
                () = ctx.cancel.cancelled() => break,
                line = lines.recv() => line,
            };
            let line = match next {
                Some(Ok(line)) => line,
                None => break,
                Some(Err(e)) => {
                    term::report_error(&stderr_theme, &format!("cannot read stdin: {e}"));
                    bad_input = true;
                    break;
                }
            };
            number += 1;
            let input = match super::headless::parse_input_line(&line, number) {
                Ok(Some(input)) => input,
                Ok(None) => continue,
                Err(e) => {
                    term::report_error(&stderr_theme, &e.to_string());
                    bad_input = true;
                    continue;
                }
            };
            let request = RunRequest {
                input: Some(input),
                options: options.clone(),
            };
            let turn = engine.run(&mut ctx, request, emitter).await.map(|_| ());
            let stop = matches!(turn, Err(CoreError::Cancelled)) || output.broken_pipe();
            // A failed turn decides the exit status even if later ones succeed.
            if turn.is_err() || result.is_ok() {
                result = turn;
            }
            if stop {
                break;
            }
        }
    } else {
        let request = RunRequest {
            input: Some(UserInput {
                text,
                files: args.files.clone(),
                ..UserInput::default()
            }),
            options,
        };
        result = engine.run(&mut ctx, request, emitter).await.map(|_| ());
    }
    if args.save_session && result.is_ok() && stopped.get().is_none() {
        engine.autoname_or_warn(&mut ctx, emitter).await;
    }
    if stopped.get().is_some() && !headless {
        // A tool approval menu may have been waiting in raw mode.
        crate::signals::restore_terminal();
    }
    let finished = finish_session(state, &mut ctx, args.save_session, emitter)
        .await
        .map(|message| {
            // "Saved as a new session because another writer changed it" must be seen.
            for line in message.lines().filter_map(|l| l.strip_prefix("warning: ")) {
                term::report_warning(&stderr_theme, line);
            }
        });
    emitter.flush();
    ctx.unlock_session();
    listener.abort();
    let broken = output.broken_pipe();
    if let Err(e) = finished {
        term::report_error(&stderr_theme, &e.to_string());
        // The run's own failure (say Ctrl-C, 130) still decides the exit code.
        return Ok(match &result {
            Err(CoreError::Cancelled) if !broken => stop_code(130),
            Err(e) if !broken => e.exit_code(),
            _ => 1,
        });
    }
    match result {
        Ok(()) if stopped.get().is_some() => Ok(stop_code(0)),
        Ok(()) if bad_input => Ok(1),
        Ok(()) => Ok(0),
        Err(_) if broken => Ok(0),
        Err(CoreError::Cancelled) => Ok(stop_code(130)),
        Err(e) => {
            let code = e.exit_code();
            term::report_error(&stderr_theme, &e.to_string());
            Ok(code)
        }
    }
}

/// The lines of stdin, read on a thread of its own (a line may take as long as the
/// program driving loki likes).
fn stdin_lines() -> tokio::sync::mpsc::Receiver<std::io::Result<String>> {
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::stdin().lock().lines() {
            let failed = line.is_err();
            if tx.blocking_send(line).is_err() || failed {
                break;
            }
        }
    });
    rx
}

/// Applies the flags to the conversation and takes its session's lock (held until the
/// session is written, so a concurrent run on it waits and then starts from what this
/// run saved). False when a knowledge-base build was all that was asked.
async fn prepare(
    state: &Arc<AppState>,
    ctx: &mut RequestContext,
    args: &Args,
    text: &str,
) -> anyhow::Result<bool> {
    crate::app::apply_role_flags(state, ctx, args, state.config.cmd_prelude.as_deref())?;
    let cancel = ctx.cancel.clone();
    ctx.lock_session(state, Some(&cancel), &term::session_note)
        .await?;
    crate::app::empty_session(state, ctx, args)?;
    term::warn_session_model(ctx);
    if args.dry_run {
        ctx.dry_run = true;
    }
    let has_prompt = !text.trim().is_empty()
        || !args.files.is_empty()
        || args.input_format == InputFormat::StreamJson;
    Ok(
        super::rag::prepare(state, ctx, args, has_prompt, false).await?
            != super::rag::RagStep::Done,
    )
}

/// Headless: the run failed before it could start (unknown model, role or session). The
/// event contract still holds: one `turn_started`, one `turn_aborted`, exit status 1.
pub(crate) fn setup_failed(args: &Args, err: &CoreError) -> u8 {
    let id: crate::engine::event::ConversationId = "c1".into();
    report_setup(id, args.model.clone().unwrap_or_default(), args, err)
}

fn setup_failed_with(ctx: &RequestContext, args: &Args, err: &CoreError) -> u8 {
    report_setup(ctx.id.clone(), ctx.model.id(), args, err)
}

fn report_setup(
    id: crate::engine::event::ConversationId,
    model: String,
    args: &Args,
    err: &CoreError,
) -> u8 {
    let output = match args.output_format {
        OutputFormat::Json => Output::Result(JsonResult::new()),
        OutputFormat::StreamJson => {
            Output::Lines(JsonLines::new(tokio_util::sync::CancellationToken::new()))
        }
        // `--input-format stream-json` with text output: just the error line.
        OutputFormat::Text => {
            let theme = Theme::detect(
                std::io::IsTerminal::is_terminal(&std::io::stderr()),
                std::env::var_os("NO_COLOR").is_some(),
                true,
                false,
            );
            term::report_error(&theme, &err.to_string());
            return err.exit_code();
        }
    };
    let sink = Sink::new(id, output.emitter());
    sink.emit(crate::engine::Event::TurnStarted(
        crate::engine::event::TurnStarted {
            model,
            stream: !args.no_stream,
            session_id: None,
        },
    ));
    sink.abort(err);
    let theme = Theme::detect(
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
        std::env::var_os("NO_COLOR").is_some(),
        true,
        false,
    );
    term::report_error(&theme, &err.to_string());
    err.exit_code()
}

/// Saves the session after a run per [`crate::session::policy::save_after_run`]
/// (`--save-session` forces it). Whatever arrived before an error, Ctrl-C, SIGTERM or
/// SIGHUP is saved too. The save is reported as a `session_saved` event.
pub(crate) async fn finish_session(
    state: &Arc<AppState>,
    ctx: &mut RequestContext,
    force: bool,
    emitter: &dyn Emitter,
) -> Result<String, CoreError> {
    if crate::session::policy::save_after_run(ctx, force) {
        return crate::engine::command::apply(state, ctx, Command::SaveSession(None), emitter)
            .await;
    }
    Ok(String::new())
}
