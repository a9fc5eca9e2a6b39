//! The one-shot front end: one [`Conversation`] built from the flags, one run per prompt,
//! then [`Conversation::close`] and [`crate::conversation::Closed::exit_status`]. The answer is shown as text
//! (`TerminalEmitter`) or, headless, as JSON (`--output-format json|stream-json`);
//! `--input-format stream-json` reads prompts and approvals from stdin
//! ([`super::stdin_json`]).

use std::sync::Arc;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use super::args::{Args, InputFormat, OutputFormat};
use super::headless::{JsonLines, JsonResult};
use crate::config::TerminalCaps;
use crate::conversation::Sink;
use crate::conversation::{Conversation, ConversationSpec, Finished, Outside};
use crate::error::CoreError;
use crate::render::theme::Theme;
use crate::render::{Display, TerminalEmitter, TerminalOptions};
use crate::signals::StopWatch;
use crate::state::AppState;
use crate::term;
use loki_protocol::emitter::Emitter;
use loki_protocol::op::{RunOptions, UserInput};

/// How the run's events are shown.
pub(super) enum Output {
    Text(Box<TerminalEmitter>),
    Lines(Arc<JsonLines>),
    Result(JsonResult),
    /// `--compat claude` with `--output-format json`: Claude Code's `result` object.
    Claude(super::claude_json::ClaudeResult),
}

impl Output {
    fn new(state: &Arc<AppState>, args: &Args, cancel: CancellationToken) -> Self {
        // A dry run's "answer" is the request it would send: shown whole, never cut
        // down to its first code block.
        let code_only = args.code && !args.dry_run;
        match args.output_format {
            OutputFormat::Text => {
                let display = Display::from_config(&state.config);
                let opts = TerminalOptions::detect(&state.terminal, &display, code_only);
                Self::Text(Box::new(TerminalEmitter::new(opts, Some(cancel))))
            }
            OutputFormat::StreamJson => Self::Lines(Arc::new(JsonLines::new(cancel))),
            OutputFormat::Json if args.compat.as_deref() == Some("claude") => {
                let result = super::claude_json::ClaudeResult::new(Arc::clone(state));
                // One run (see below), unless prompts come over stdin.
                Self::Claude(if args.input_format == InputFormat::StreamJson {
                    result
                } else {
                    result.held()
                })
            }
            // One run: its result waits for the close, which knows the session it was
            // kept in (a plain one-shot's history entry).
            OutputFormat::Json if args.input_format == InputFormat::StreamJson => {
                Self::Result(JsonResult::new())
            }
            OutputFormat::Json if code_only => Self::Result(JsonResult::code_only().held()),
            OutputFormat::Json => Self::Result(JsonResult::new().held()),
        }
    }

    pub(super) fn emitter(&self) -> &dyn Emitter {
        match self {
            Self::Text(e) => e.as_ref(),
            Self::Lines(e) => e.as_ref(),
            Self::Result(e) => e,
            Self::Claude(e) => e,
        }
    }

    /// Where the events of sub-agents go: the JSON lines (each stamped with its agent
    /// and parent), or the terminal's live view.
    pub(super) fn sub_agent_observer(&self) -> Option<Arc<dyn Emitter>> {
        match self {
            Self::Text(e) => Some(e.live_view()),
            Self::Lines(e) => Some(Arc::clone(e) as Arc<dyn Emitter>),
            Self::Result(_) | Self::Claude(_) => None,
        }
    }

    pub(super) fn broken_pipe(&self) -> bool {
        match self {
            Self::Text(e) => e.broken_pipe(),
            Self::Lines(e) => e.broken_pipe(),
            Self::Result(e) => e.broken_pipe(),
            Self::Claude(e) => e.broken_pipe(),
        }
    }
}

/// Whether the run is headless (JSON out, or JSON lines in).
fn is_headless(args: &Args) -> bool {
    args.output_format != OutputFormat::Text || args.input_format == InputFormat::StreamJson
}

fn stderr_theme(state: &AppState) -> Theme {
    Theme::stderr(&state.terminal)
}

/// Runs one-shot (or headless) with `text` as the prompt; returns the exit status.
pub async fn run(state: &Arc<AppState>, args: &Args, text: String) -> anyhow::Result<u8> {
    let headless = is_headless(args);
    let approvals = super::stdin_json::approver(args);
    let questions = Arc::new(crate::tool::escalate::Escalations::new());
    // The run's token: a signal cancels it, the output stops showing with it.
    let cancel = CancellationToken::new();
    let mut spec = spec(state, args, approvals.clone(), cancel.clone());
    let schema = match args.output_schema.as_deref() {
        Some(path) => Some(super::structured::OutputSchema::load(path)?),
        None => None,
    };
    if let Some(schema) = &schema {
        spec.controls.format = Some(schema.format());
    }
    let question_events = Arc::default();
    answer_over_stdin(args, &mut spec, &questions, &question_events);
    let mut conversation = match Conversation::resolve(state, spec) {
        Ok(conversation) => conversation,
        Err(e) if headless => return Ok(setup_failed(args, &state.terminal, &e)),
        Err(e) => return Err(e.into()),
    };
    // Ctrl-C, SIGTERM and SIGHUP all stop the turn the same way: the partial answer is
    // kept and the session saved; the exit status names the signal.
    let stop = StopWatch::start(cancel.clone(), true).context("cannot listen for signals")?;
    match prepare(state, &mut conversation, args, &text, &cancel).await {
        Ok(true) => {}
        Ok(false) => {
            // A knowledge-base build was all that was asked.
            let closed = conversation.close(&loki_protocol::emitter::Discard).await;
            return Ok(closed.exit_status(Outside::default()));
        }
        Err(e) => {
            let status = prepare_failed(state, &conversation, args, e, &stop);
            // What failed is reported; the close still lets the session and servers go.
            drop(conversation.close(&loki_protocol::emitter::Discard).await);
            return status;
        }
    }
    let output = Output::new(state, args, cancel.clone());
    if let Some(observer) = output.sub_agent_observer() {
        let _ = question_events.set(Arc::clone(&observer));
        conversation.observe_sub_agents(observer);
    }
    let (result, bad_input) = ask(
        state,
        &mut conversation,
        args,
        (text, schema.as_ref()),
        &output,
        &cancel,
    )
    .await;
    if stop.signal().is_some() && !headless {
        // A tool approval menu may have been waiting in raw mode.
        crate::signals::restore_terminal();
    }
    let finished = conversation.finish(result, output.emitter()).await;
    Ok(conclude(state, args, &finished, &stop, &output, bad_input))
}

/// Runs the prompt of the command line, or every prompt of stdin with
/// `--input-format stream-json`; whether a line of input could not be used.
async fn ask(
    state: &AppState,
    conversation: &mut Conversation,
    args: &Args,
    (text, schema): (String, Option<&super::structured::OutputSchema>),
    output: &Output,
    cancel: &CancellationToken,
) -> (Result<(), CoreError>, bool) {
    let options = RunOptions {
        stream: (args.no_stream || args.code).then_some(false),
        unknown_tool_fails: true, // as in Loki
    };
    if args.input_format == InputFormat::StreamJson {
        let theme = stderr_theme(state);
        let max_bytes = state.config.max_input_size;
        let reading = super::stdin_json::Reading {
            state,
            theme: &theme,
            cancel,
            max_bytes,
        };
        super::stdin_json::run(conversation, output, options, reading).await
    } else {
        let mut input = UserInput {
            text,
            files: args.files.clone(),
            ..UserInput::default()
        };
        crate::mention::attach(state, conversation, &mut input, output.emitter());
        // `--dry-run` prints the request (its `response_format` holds the schema): there
        // is no answer to check.
        if let Some(schema) = schema.filter(|_| !args.dry_run) {
            let asked = super::structured::ask(conversation, schema, input, options).await;
            return (asked, false);
        }
        let turn = conversation
            .prompt(input, options, None, output.emitter())
            .await;
        (turn.map(|_| ()), false)
    }
}

/// The conversation the flags describe, holding its session for the whole run.
fn spec(
    state: &AppState,
    args: &Args,
    approvals: Option<Arc<crate::tool::approve::ChannelApprover>>,
    cancel: CancellationToken,
) -> ConversationSpec {
    let id = loki_protocol::event::next_conversation_id();
    let approver: Option<Arc<dyn crate::tool::approve::Approver>> = if is_headless(args) {
        // Nothing prompts: approvals come from --yolo, auto_approve_tools, deny_tools
        // and, with `--input-format stream-json`, approval lines; questions are refused.
        approvals.map(|a| a as Arc<dyn crate::tool::approve::Approver>)
    } else {
        super::flags::terminal_approver(&state.terminal, &id)
    };
    // On a terminal, questions (an agent's missing variables, `user__*` tools) are asked.
    let asker: Option<Arc<dyn crate::tool::ask::Asker>> = (!is_headless(args)
        && state.terminal.interactive())
    .then(|| Arc::new(crate::term::ask::TerminalAsker::new(&id)) as _);
    ConversationSpec {
        id: Some(id),
        approver,
        asker,
        hold_session: true,
        cancel: Some(cancel),
        carry_on: crate::conversation::CarryOn::NextRun,
        ..super::flags::spec(args, &state.terminal, state.config.cmd_prelude.as_deref())
    }
}

/// With JSON lines in, sub-agents' questions and the conversation's own (an MCP
/// server's form) are events that `answer` lines answer; `events` is where they go once
/// the output exists.
fn answer_over_stdin(
    args: &Args,
    spec: &mut ConversationSpec,
    questions: &Arc<crate::tool::escalate::Escalations>,
    events: &Arc<std::sync::OnceLock<Arc<dyn loki_protocol::emitter::Emitter>>>,
) {
    if args.input_format != InputFormat::StreamJson {
        return;
    }
    spec.escalations = Some(Arc::clone(questions));
    if let Some(id) = spec.id.clone() {
        spec.asker = Some(Arc::new(super::stdin_json::StreamJsonAsker {
            board: Arc::clone(questions),
            events: Arc::clone(events),
            conversation: id,
        }));
    }
}

/// Reports how the run ended (warnings and errors on stderr) and returns the exit status.
fn conclude(
    state: &AppState,
    args: &Args,
    finished: &Finished<()>,
    stop: &StopWatch,
    output: &Output,
    bad_input: bool,
) -> u8 {
    // The json result waited for the close, which knows the session it was kept in.
    let kept_in = finished.closed.session.as_ref().map(|(id, _)| id.as_str());
    match output {
        Output::Result(json) => json.release(kept_in),
        Output::Claude(claude) => claude.release(kept_in),
        _ => {}
    }
    let theme = stderr_theme(state);
    let broken_pipe = output.broken_pipe();
    let finish_failed = match &finished.closed.saved {
        Ok(applied) => {
            // "Saved as a new session because another writer changed it" must be seen.
            for warning in applied.warnings() {
                term::report_warning(&theme, warning);
            }
            false
        }
        Err(e) => {
            term::report_error(&theme, &e.to_string());
            true
        }
    };
    if let Err(e) = &finished.ran
        && !finish_failed
        && !broken_pipe
        && !matches!(e, CoreError::Cancelled)
    {
        let message = super::flags::limit_message(args, e).unwrap_or_else(|| e.to_string());
        term::report_error(&theme, &message);
    }
    finished.exit_status(Outside {
        stopped: stop.signal(),
        broken_pipe,
        bad_input,
    })
}

/// Applies the flags to the conversation (taking its session's lock, held until the
/// session is written, so a concurrent run on it waits and then starts from what this run
/// saved) and the RAG flags. False when a knowledge-base build was all that was asked.
async fn prepare(
    state: &Arc<AppState>,
    conversation: &mut Conversation,
    args: &Args,
    text: &str,
    cancel: &CancellationToken,
) -> anyhow::Result<bool> {
    conversation.prepare().await?;
    for warning in conversation.take_warnings() {
        term::report_warning(&stderr_theme(state), &warning);
    }
    let has_prompt = !text.trim().is_empty()
        || !args.files.is_empty()
        || args.input_format == InputFormat::StreamJson;
    Ok(
        super::rag::prepare(state, conversation, args, has_prompt, false, cancel).await?
            != super::rag::RagStep::Done,
    )
}

/// The flags could not be applied (unknown role or session, a bad prelude, Ctrl-C while
/// waiting for the session): headless runs still report a started-and-aborted turn.
fn prepare_failed(
    state: &AppState,
    conversation: &Conversation,
    args: &Args,
    e: anyhow::Error,
    stop: &StopWatch,
) -> anyhow::Result<u8> {
    let cancelled = matches!(e.downcast_ref::<CoreError>(), Some(CoreError::Cancelled));
    if !is_headless(args) {
        return if cancelled {
            Ok(stop.exit_code_or(130))
        } else {
            Err(e)
        };
    }
    let (id, model) = (conversation.id().clone(), conversation.status().model);
    let caps = &state.terminal;
    let status = match e.downcast::<CoreError>() {
        Ok(core) => report_setup(id, model, args, caps, &core),
        Err(other) => {
            let core = CoreError::InvalidRequest(format!("{other:#}"));
            report_setup(id, model, args, caps, &core)
        }
    };
    Ok(if cancelled {
        stop.exit_code_or(130)
    } else {
        status
    })
}

/// Headless: the run failed before it could start (unknown model, role or session). The
/// event contract still holds: one `turn_started`, one `turn_aborted`, exit status 1.
pub(crate) fn setup_failed(args: &Args, caps: &TerminalCaps, err: &CoreError) -> u8 {
    report_setup(
        "c1".into(),
        args.model.clone().unwrap_or_default(),
        args,
        caps,
        err,
    )
}

fn report_setup(
    id: loki_protocol::event::ConversationId,
    model: String,
    args: &Args,
    caps: &TerminalCaps,
    err: &CoreError,
) -> u8 {
    let theme = Theme::stderr(caps);
    let output = match args.output_format {
        OutputFormat::Json => Output::Result(JsonResult::new()),
        OutputFormat::StreamJson => {
            Output::Lines(Arc::new(JsonLines::new(CancellationToken::new())))
        }
        // `--input-format stream-json` with text output: just the error line.
        OutputFormat::Text => {
            term::report_error(&theme, &err.to_string());
            return err.exit_code();
        }
    };
    let sink = Sink::new(id, output.emitter());
    sink.emit(loki_protocol::event::Event::TurnStarted(
        loki_protocol::event::TurnStarted {
            model,
            stream: !args.no_stream,
            session_id: None,
        },
    ));
    sink.abort(err);
    term::report_error(&theme, &err.to_string());
    err.exit_code()
}
