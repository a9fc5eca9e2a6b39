//! Showing engine events in a terminal (or a pipe).
//!
//! [`TerminalEmitter`] owns the stdout/stderr discipline: the answer and the model's
//! reasoning go to stdout (reasoning dimmed on a terminal, inside `<think>` tags
//! otherwise); the spinner, notices and tool chatter go to stderr.
//! Output is buffered per event and written on `flush`, which the engine calls once per
//! network batch, so a fast stream costs one write per read rather than one per token.
//! Without a terminal, or with `NO_COLOR`, nothing but plain text is written.
//! Text from the model, tools and servers goes through [`sanitize`] before loki adds its
//! own styling: on a terminal, control characters are shown escaped; into a pipe the
//! answer keeps its bytes. Tool lines and notices on stderr are always escaped.

pub mod code;
pub mod highlight;
pub mod live;
pub mod markdown;
pub mod question_area;
pub mod rag_progress;
mod resize;
pub mod screenful;
pub mod spinner;
pub mod table;
pub mod theme;
pub mod themes;
pub mod wrap;

use std::borrow::Cow;
use std::io::Write;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::config::Wrap;
use loki_protocol::emitter::Emitter;
use loki_protocol::event::{AbortReason, Envelope, Event, Notice, NoticeLevel};
use loki_wire::sanitize::{self, StreamSanitizer};
use markdown::{MarkdownRenderer, RenderOptions};
use spinner::Spinner;
use theme::{Style, Theme};

/// How the terminal emitter should behave.
#[derive(Debug, Clone)]
pub struct TerminalOptions {
    /// Styling for stdout (the answer).
    pub stdout: Theme,
    /// Styling for stderr (notices).
    pub stderr: Theme,
    /// stdout is a terminal (wrapping applies, reasoning is shown dimmed).
    pub stdout_tty: bool,
    /// Show a spinner on stderr while waiting.
    pub spinner: bool,
    /// Wrap width for prose, when wrapping.
    pub wrap: Option<usize>,
    /// Wrap code blocks too.
    pub wrap_code: bool,
    /// Terminal width (for the renderer's line bookkeeping).
    pub term_width: usize,
    /// Terminal height (the renderer never erases more rows than are visible).
    pub term_height: usize,
    /// Print only the code blocks of the answer, once it is complete.
    pub code_only: bool,
    /// The streams, for asking the size again after a resize.
    pub caps: crate::config::TerminalCaps,
}

impl TerminalOptions {
    /// Options for the current process: detects which streams are terminals and the
    /// terminal width (without querying the terminal).
    pub fn detect(caps: &crate::config::TerminalCaps, display: &Display, code_only: bool) -> Self {
        let (stdout_tty, stderr_tty, no_color) = (caps.stdout_tty, caps.stderr_tty, caps.no_color);
        // Asked only of a terminal, with one ioctl; a pseudo-terminal nobody sized
        // reports 0 x 0.
        let (term_width, term_height) = caps
            .size()
            .map_or((80, 24), |(w, h)| (usize::from(w), usize::from(h)));
        Self {
            stdout: Theme::detect(stdout_tty, no_color, display.highlight, display.light),
            stderr: Theme::detect(stderr_tty, no_color, true, display.light),
            stdout_tty,
            spinner: stderr_tty && !no_color,
            wrap: match display.wrap {
                Some(Wrap::Auto) => Some(term_width),
                Some(Wrap::Width(w)) => Some(usize::from(w)),
                Some(Wrap::No) | None => None,
            },
            wrap_code: display.wrap_code,
            term_width,
            term_height,
            code_only,
            caps: *caps,
        }
    }
}

/// The display settings a user can change (`highlight`, `wrap`, `wrap_code`, theme).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Display {
    /// Render markdown and colour code.
    pub highlight: bool,
    /// Wrapping of prose.
    pub wrap: Option<Wrap>,
    /// Wrap code blocks too.
    pub wrap_code: bool,
    /// Light palette.
    pub light: bool,
}

impl Display {
    /// The display settings as rows of the info table.
    pub fn info_rows(&self) -> Vec<crate::conversation::info::Row> {
        vec![
            ("highlight", self.highlight.to_string()),
            ("wrap", crate::conversation::info::wrap_text(self.wrap)),
            ("wrap_code", self.wrap_code.to_string()),
            (
                "theme",
                if self.light { "light" } else { "dark" }.to_string(),
            ),
        ]
    }

    /// The configured display settings.
    pub fn from_config(config: &crate::config::AppConfig) -> Self {
        Self {
            highlight: config.highlight,
            wrap: config.wrap,
            wrap_code: config.wrap_code,
            light: config.is_light_theme(),
        }
    }
}

struct Inner {
    out: Vec<u8>,
    renderer: MarkdownRenderer,
    spinner: Option<Spinner>,
    /// Reasoning is being shown and has not been closed yet.
    in_reasoning: bool,
    /// Any answer text has been written.
    answered: bool,
    /// The whole answer, for `code_only`.
    answer: String,
    /// The [`resize`] generation the renderer's terminal size belongs to.
    resizes_seen: u64,
    /// The answer has been finished (rendered to its end).
    finished: bool,
    /// Neutralises control characters in the answer (on a terminal).
    answer_filter: StreamSanitizer,
    /// The same for reasoning.
    reasoning_filter: StreamSanitizer,
    broken_pipe: bool,
}

/// Renders events for a person at a terminal, or as plain text into a pipe.
pub struct TerminalEmitter {
    opts: TerminalOptions,
    inner: Mutex<Inner>,
    /// Cancelled when stdout goes away (e.g. `loki … | head -1`), to stop generating.
    on_broken_pipe: Option<CancellationToken>,
    /// The live view of sub-agents, drawn below the output while the parent waits.
    live: Arc<live::LiveView>,
    /// Messages typed during the turn, announced as queued (see [`Self::with_queue`]).
    queue: Option<Arc<crate::conversation::PromptQueue>>,
}

impl TerminalEmitter {
    /// A new emitter; `cancel` is triggered if stdout is closed by the reader.
    pub fn new(opts: TerminalOptions, cancel: Option<CancellationToken>) -> Self {
        let live = live::LiveView::new(opts.spinner, opts.stderr.color);
        Self::with_live_view(opts, cancel, live)
    }

    /// A new emitter sharing `live` (a REPL keeps one live view across its turns).
    pub fn with_live_view(
        opts: TerminalOptions,
        cancel: Option<CancellationToken>,
        live: Arc<live::LiveView>,
    ) -> Self {
        let renderer = MarkdownRenderer::new(render_options(&opts));
        if opts.stdout_tty {
            resize::watch();
        }
        Self {
            inner: Mutex::new(Inner {
                out: Vec::with_capacity(8192),
                renderer,
                spinner: None,
                in_reasoning: false,
                answered: false,
                answer: String::new(),
                resizes_seen: resize::generation(),
                finished: false,
                answer_filter: StreamSanitizer::new(),
                reasoning_filter: StreamSanitizer::new(),
                broken_pipe: false,
            }),
            opts,
            on_broken_pipe: cancel,
            live,
            queue: None,
        }
    }

    /// Announces messages queued in `queue` while the turn runs ("queued: …"), between
    /// model calls (a tool result, the next call), where no answer line is half written.
    #[must_use]
    pub fn with_queue(mut self, queue: Arc<crate::conversation::PromptQueue>) -> Self {
        self.queue = Some(queue);
        self
    }

    /// The observer that draws this emitter's sub-agents (see [`live`]).
    pub fn live_view(&self) -> Arc<dyn Emitter> {
        Arc::new(live::Observer(Arc::clone(&self.live)))
    }

    /// True when stdout was closed by the reader.
    pub fn broken_pipe(&self) -> bool {
        self.inner.lock().map(|i| i.broken_pipe).unwrap_or(false)
    }

    /// Prepares the emitter for another turn (REPL).
    pub fn reset(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            self.reset_inner(&mut inner);
        }
    }

    fn reset_inner(&self, inner: &mut Inner) {
        inner.renderer = MarkdownRenderer::new(render_options(&self.opts));
        inner.in_reasoning = false;
        inner.answered = false;
        inner.answer.clear();
        inner.finished = false;
        inner.answer_filter = StreamSanitizer::new();
        inner.reasoning_filter = StreamSanitizer::new();
    }

    fn handle(&self, inner: &mut Inner, event: Event) {
        match event {
            Event::TurnStarted(_) => self.on_model_call(inner, true),
            Event::ModelCallStarted(_) => self.on_model_call(inner, false),
            Event::ReasoningDelta(delta) => self.on_reasoning(inner, &delta.text),
            Event::AssistantDelta(delta) => self.on_answer(inner, &delta.text),
            Event::ToolCallStarted(call) => {
                stop_spinner(inner);
                self.end_text_block(inner);
                self.flush_inner(inner);
                let line = format!("⚙ {} {}", call.name, compact_args(&call.arguments));
                self.stderr_line(
                    &self
                        .opts
                        .stderr
                        .paint(Style::Dim, &sanitize::approval_line(&line)),
                );
            }
            Event::ToolCallFinished(done) => self.on_tool_finished(done),
            Event::Notice(notice) if notice.level == NoticeLevel::Status => {
                if inner.spinner.is_some() && !inner.answered {
                    stop_spinner(inner);
                    inner.spinner = Spinner::start(&sanitize::display(&notice.message));
                }
            }
            Event::Notice(notice) => self.on_notice(inner, &notice),
            Event::ToolCallProgress(progress) => {
                self.handle(inner, Event::Notice(Notice::info(progress.message)));
            }
            Event::Retry(retry) => self.handle(inner, Event::Notice(retry.notice())),
            Event::ModelFallback(fallback) => self.handle(inner, Event::Notice(fallback.notice())),
            Event::SessionCompressing => self.after_answer(inner, "compressing the session…"),
            Event::SessionCompressed(done) => {
                let message = format!(
                    "session compressed (about {} → {} tokens)",
                    done.tokens_before, done.tokens_after
                );
                self.handle(inner, Event::Notice(Notice::info(message)));
            }
            Event::SessionAutonaming => self.after_answer(inner, "autonaming the session…"),
            // The approver asks on the terminal itself; sub-agents are drawn by the live
            // view; a spent budget ends the run with an error line naming it.
            Event::Usage(_)
            | Event::AgentStarted(_)
            | Event::AgentFinished(_)
            | Event::QuestionAsked(_)
            | Event::QuestionAnswered(_)
            | Event::BudgetExhausted(_)
            | Event::CheckpointCreated(_)
            | Event::SessionAutonamed(_)
            | Event::SessionSaved(_)
            | Event::ToolCallApprovalRequested(_)
            | Event::ToolCallApprovalDecided(_) => {}
            Event::TurnFinished(_) => self.finish(inner),
            Event::TurnAborted(aborted) => {
                // Only code (`-c`) is printed to be run: a cut answer's code may be a
                // cut command (`rm -rf /a/b` of `rm -rf /a/b/c`), so none of it is.
                let withheld = self.opts.code_only
                    && !code::extract(&std::mem::take(&mut inner.answer))
                        .text
                        .is_empty();
                self.finish(inner);
                if withheld {
                    self.stderr_line(&self.opts.stderr.paint(
                        Style::Dim,
                        "(the answer stopped early: its code is not printed)",
                    ));
                }
                // A reader that closed stdout is not an interruption worth reporting.
                if aborted.reason == AbortReason::Cancelled && !inner.broken_pipe {
                    self.stderr_line(&self.opts.stderr.paint(Style::Dim, "(interrupted)"));
                }
            }
        }
    }

    /// A turn (`turn`) or another model call of it starts: the spinner runs until
    /// something arrives.
    fn on_model_call(&self, inner: &mut Inner, turn: bool) {
        // Another turn on the same emitter (headless input lines): a fresh answer,
        // finished with its own line end.
        if turn && inner.finished {
            self.reset_inner(inner);
        }
        if self.opts.spinner && inner.spinner.is_none() {
            inner.spinner = Spinner::start("Generating");
        }
    }

    /// Reasoning text: dimmed on a terminal, inside `<think>` tags otherwise; left out
    /// when only code is printed.
    fn on_reasoning(&self, inner: &mut Inner, text: &str) {
        stop_spinner(inner);
        if self.opts.code_only {
            return;
        }
        if !inner.in_reasoning {
            inner.in_reasoning = true;
            if self.opts.stdout.color {
                inner.out.extend_from_slice(b"\x1b[2;3m");
            } else {
                inner.out.extend_from_slice(b"<think>\n");
            }
        }
        if self.opts.stdout_tty {
            let text = inner.reasoning_filter.push(text);
            inner.out.extend_from_slice(text.as_bytes());
        } else {
            inner.out.extend_from_slice(text.as_bytes());
        }
    }

    /// Answer text: rendered as markdown (re-wrapped after a resize) on a terminal, as
    /// it came into a pipe, kept whole when only its code blocks are printed.
    fn on_answer(&self, inner: &mut Inner, text: &str) {
        // Debug builds only: the tests' way to make loki panic mid-answer (to check that
        // the panic hook rescues the open sessions).
        #[cfg(debug_assertions)]
        if let Some(marker) = std::env::var("LOKI_TEST_PANIC")
            .ok()
            .filter(|m| !m.is_empty() && text.contains(m.as_str()))
        {
            panic!("LOKI_TEST_PANIC: the answer contained `{marker}`");
        }
        stop_spinner(inner);
        self.close_reasoning(inner);
        inner.answered = true;
        if self.opts.code_only {
            inner.answer.push_str(text);
        } else if self.opts.stdout_tty {
            let Inner {
                renderer,
                out,
                answer_filter,
                resizes_seen,
                ..
            } = inner;
            let generation = resize::generation();
            if generation != *resizes_seen {
                *resizes_seen = generation;
                if let Some((w, h)) = self.opts.caps.size() {
                    renderer.resize(usize::from(w), usize::from(h));
                }
            }
            renderer.push(answer_filter.push(text), out);
        } else {
            let Inner { renderer, out, .. } = inner;
            renderer.push(text, out);
        }
    }

    /// The line under a finished tool call: the size of its result, or its error.
    fn on_tool_finished(&self, done: loki_protocol::event::ToolCallFinished) {
        let line = if done.ok {
            self.opts.stderr.paint(
                Style::Dim,
                &sanitize::approval_line(&format!(
                    "  ↳ {} ({})",
                    done.name,
                    size_label(done.result.len())
                )),
            )
        } else {
            let error = done
                .error
                .map_or_else(|| done.result.clone(), |e| e.message);
            format!(
                "  ↳ {} {}: {}",
                sanitize::approval_line(&done.name),
                self.opts.stderr.paint(Style::Warning, "failed"),
                sanitize::approval_line(&error)
            )
        };
        self.stderr_line(&line);
    }

    /// A notice line on stderr (the spinner stops for it and starts again after).
    fn on_notice(&self, inner: &mut Inner, notice: &Notice) {
        let had_spinner = inner.spinner.is_some();
        stop_spinner(inner);
        // A notice in the middle of an answer (the output-limit warning comes just
        // before the turn ends) first ends the answer's line: the raw tail the renderer
        // would later erase and restyle must not have a line of stderr written after it,
        // or it is printed twice with the notice glued on.
        if inner.answered && !inner.finished {
            self.end_text_block(inner);
        }
        self.flush_inner(inner);
        let theme = &self.opts.stderr;
        // One line: a server's progress text cannot start a line of loki's own.
        let message = sanitize::approval_line(&notice.message);
        let line = match notice.level {
            NoticeLevel::Info | NoticeLevel::Status => theme.paint(Style::Dim, &message),
            NoticeLevel::Warning => {
                format!("{} {message}", theme.paint(Style::Warning, "warning:"))
            }
        };
        self.stderr_line(&line);
        if had_spinner && !inner.answered {
            inner.spinner = Spinner::start("Generating");
        }
    }

    /// Work after a turn (compressing or naming the session): the answer is ended
    /// before the notice saying so.
    fn after_answer(&self, inner: &mut Inner, message: &str) {
        if inner.answered {
            self.finish(inner);
        }
        self.handle(inner, Event::Notice(Notice::info(message)));
    }

    /// Ends the answer text written so far (before tool calls interrupt it); text that
    /// follows starts a fresh block.
    fn end_text_block(&self, inner: &mut Inner) {
        self.close_reasoning(inner);
        if !self.opts.code_only && inner.answered {
            end_answer(inner);
            inner.renderer = MarkdownRenderer::new(render_options(&self.opts));
        }
    }

    fn close_reasoning(&self, inner: &mut Inner) {
        if !inner.in_reasoning {
            return;
        }
        inner.in_reasoning = false;
        let pending_cr = inner.reasoning_filter.finish();
        inner.out.extend_from_slice(pending_cr.as_bytes());
        if self.opts.stdout.color {
            inner.out.extend_from_slice(b"\x1b[0m\n\n");
        } else {
            inner.out.extend_from_slice(b"\n</think>\n\n");
        }
    }

    fn finish(&self, inner: &mut Inner) {
        stop_spinner(inner);
        if std::mem::replace(&mut inner.finished, true) {
            self.flush_inner(inner);
            return;
        }
        self.close_reasoning(inner);
        if self.opts.code_only {
            let mut code = code::extract(&inner.answer);
            if let Cow::Owned(safe) = sanitize::for_terminal(&code.text, self.opts.stdout_tty) {
                code.text = safe;
            }
            if !code.text.is_empty() {
                if self.opts.stdout.color {
                    let mut hl = highlight::Highlighter::new(
                        self.opts.stdout.light,
                        themes::custom(self.opts.stdout.light),
                    );
                    hl.start_block(&code.lang);
                    for line in code.text.lines() {
                        hl.highlight_line(line, &mut inner.out);
                        inner.out.push(b'\n');
                    }
                    hl.end_block();
                } else {
                    inner.out.extend_from_slice(code.text.as_bytes());
                    if !code.text.ends_with('\n') {
                        inner.out.push(b'\n');
                    }
                }
            }
        } else {
            end_answer(inner);
        }
        self.flush_inner(inner);
    }

    fn flush_inner(&self, inner: &mut Inner) {
        if inner.out.is_empty() {
            return;
        }
        if inner.broken_pipe {
            inner.out.clear();
            return;
        }
        let mut stdout = std::io::stdout().lock();
        let result = stdout.write_all(&inner.out).and_then(|()| stdout.flush());
        question_area::wrote(&inner.out);
        inner.out.clear();
        if let Err(e) = result
            && e.kind() == std::io::ErrorKind::BrokenPipe
        {
            inner.broken_pipe = true;
            if let Some(token) = &self.on_broken_pipe {
                token.cancel();
            }
        }
    }

    fn stderr_line(&self, line: &str) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{line}");
        question_area::wrote(b"\n");
    }
}

impl Emitter for TerminalEmitter {
    fn emit(&self, envelope: Envelope) {
        let mut live = self.live.hold();
        let mut question = question_area::hold();
        live.parent_event(&envelope.event);
        let silent = matches!(
            envelope.event,
            Event::Usage(_)
                | Event::SessionSaved(_)
                | Event::SessionAutonamed(_)
                | Event::AgentStarted(_)
                | Event::AgentFinished(_)
                | Event::QuestionAsked(_)
                | Event::QuestionAnswered(_)
                | Event::BudgetExhausted(_)
                | Event::CheckpointCreated(_)
        );
        if !silent {
            live.clear();
            question.clear();
        }
        if let Some(queue) = &self.queue {
            // Typed keys are taken only while a model call streams.
            match &envelope.event {
                Event::ModelCallStarted(_) => queue.set_listening(true),
                Event::AssistantDelta(_)
                | Event::ReasoningDelta(_)
                | Event::Usage(_)
                | Event::Retry(_) => {}
                _ => queue.set_listening(false),
            }
        }
        if let Ok(mut inner) = self.inner.lock() {
            // Announced between model calls, where no answer line is half written.
            let between = matches!(
                envelope.event,
                Event::ToolCallFinished(_) | Event::ModelCallStarted(_)
            );
            let queued = match &self.queue {
                Some(q) if between => q.unannounced(),
                _ => Vec::new(),
            };
            if !queued.is_empty() {
                live.clear();
                question.clear();
            }
            for text in queued {
                self.handle(
                    &mut inner,
                    Event::Notice(loki_protocol::event::Notice::info(format!(
                        "queued: {text} (sent at the next step)"
                    ))),
                );
            }
            self.handle(&mut inner, envelope.event);
        }
    }

    fn flush(&self) {
        let mut live = self.live.hold();
        let mut question = question_area::hold();
        if let Ok(mut inner) = self.inner.lock() {
            if !inner.out.is_empty() {
                live.clear();
                question.clear();
            }
            self.flush_inner(&mut inner);
        }
    }
}

/// Tool arguments on one line: `path=src/main.rs limit=20`, long values shortened.
fn compact_args(arguments: &str) -> String {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str(arguments) else {
        return arguments.chars().take(120).collect();
    };
    let parts: Vec<String> = map
        .iter()
        .map(|(k, v)| {
            let value = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let first_line = value.lines().next().unwrap_or("");
            let mut shown: String = first_line.chars().take(80).collect();
            if shown.len() < value.len() {
                shown.push('…');
            }
            format!("{k}={shown}")
        })
        .collect();
    parts.join(" ")
}

/// `512 B`, `1.2 KB`, `3.4 MB`.
fn size_label(bytes: usize) -> String {
    match bytes {
        0..1000 => format!("{bytes} B"),
        1000..1_000_000 => format!("{:.1} KB", bytes as f64 / 1000.0),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

/// Writes the rest of the answer so far: what the sanitiser held back and the renderer's
/// last, unfinished line.
fn end_answer(inner: &mut Inner) {
    let Inner {
        renderer,
        out,
        answer_filter,
        ..
    } = inner;
    renderer.push(answer_filter.finish(), out);
    renderer.finish(out);
}

fn stop_spinner(inner: &mut Inner) {
    if let Some(mut spinner) = inner.spinner.take() {
        spinner.stop();
    }
}

fn render_options(opts: &TerminalOptions) -> RenderOptions {
    RenderOptions {
        highlight: opts.stdout.color,
        light: opts.stdout.light,
        wrap: if opts.stdout_tty { opts.wrap } else { None },
        wrap_code: opts.wrap_code,
        term_width: opts.term_width,
        term_height: opts.term_height,
    }
}
