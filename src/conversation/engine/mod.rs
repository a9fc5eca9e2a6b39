//! The Engine: the one pipeline every front end drives.
//!
//! `Engine::run` takes a conversation ([`RequestContext`]), a [`RunRequest`] and an
//! [`Emitter`]; it assembles the input, talks to the provider (with retries and
//! cancellation), and reports everything as [`Event`]s. It never prints or prompts.

pub mod command;
mod compaction;
pub mod confinement;
pub mod context_parts;
pub mod emitter;
pub mod fork;
pub mod mcp_sampling;
mod messages;
pub mod retrieval;
pub mod rewind;
pub mod rule_check;
pub mod scope;
mod single_call;
pub mod tasks;
mod tool_round;
mod turn;

use futures_util::future::BoxFuture;
use std::sync::Arc;

pub use emitter::Sink;
pub(crate) use tool_round::declared_tools;

use crate::conversation::context::RequestContext;
use crate::error::CoreError;
use crate::session::tracker::SessionHold;
use crate::state::AppState;
use loki_protocol::emitter::Emitter;
use loki_protocol::event::{self, Event};
use loki_protocol::op::Continuation;
use loki_protocol::op::RunOptions;
use loki_protocol::op::RunOutcome;
use loki_protocol::op::UserInput;

/// One call of [`Engine::run`].
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// The prompt, if any.
    pub input: Option<UserInput>,
    /// Switches.
    pub options: RunOptions,
}

/// Tokens of the conversation: exact for OpenAI-family models, estimated otherwise (see
/// [`crate::tokens`]).
pub fn session_tokens(ctx: &RequestContext) -> usize {
    let counter = crate::tokens::Counter::for_model(ctx.model.real_name());
    crate::session::compress::count_tokens(&ctx.history, counter)
}

/// Whether the conversation has reached `threshold` tokens. The cheap estimate settles
/// it when it is far from the threshold (it is never off by a factor of two); the exact
/// count is only taken near it.
pub fn reaches_tokens(ctx: &RequestContext, threshold: usize) -> bool {
    let estimate = crate::session::compress::estimate_tokens(&ctx.history);
    if estimate >= threshold.saturating_mul(2) {
        return true;
    }
    if estimate < threshold / 2 {
        return false;
    }
    session_tokens(ctx) >= threshold
}

/// The tokens of `messages` when they exceed `max`. The cheap estimate settles clear
/// cases (it is never off by a factor of two), so the tokenizer is only loaded near the
/// limit.
pub(crate) fn tokens_over(
    ctx: &RequestContext,
    parts: &[&[loki_wire::message::Message]],
    max: usize,
) -> Option<usize> {
    use crate::session::compress::{count_tokens, estimate_tokens};
    let estimate: usize = parts.iter().map(|p| estimate_tokens(p)).sum();
    if estimate < max / 2 {
        return None;
    }
    let counter = crate::tokens::Counter::for_model(ctx.model.real_name());
    let tokens: usize = parts.iter().map(|p| count_tokens(p, counter)).sum();
    (tokens > max).then_some(tokens)
}

/// The pipeline. Cheap to clone; holds only the shared state (everything that belongs
/// to one conversation — its working directory included — is on its [`RequestContext`]).
#[derive(Debug, Clone)]
pub(super) struct Engine {
    state: Arc<AppState>,
}

impl Engine {
    /// An engine over the shared state.
    pub fn new(state: Arc<AppState>) -> Self {
        Self { state }
    }

    /// The shared state.
    pub fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    /// Runs one request to completion, cancellation or failure. The run emits exactly
    /// one `turn_started` first and one `turn_finished` or `turn_aborted` last (also when
    /// it fails before the model is called); a cancelled or failed turn keeps its partial
    /// answer in the conversation and in `turn_aborted`.
    ///
    /// With a session open, the turn holds the session's lock (unless the caller already
    /// does) and starts from the history as stored now, so turns of several writers on
    /// one session follow each other instead of overwriting each other.
    #[inline(never)]
    pub fn run<'a>(
        &'a self,
        ctx: &'a mut RequestContext,
        request: RunRequest,
        emitter: &'a dyn Emitter,
    ) -> BoxFuture<'a, Result<RunOutcome, CoreError>> {
        Box::pin(async move {
            let sink = Sink::for_context(ctx, emitter).with_run(event::next_run_id());
            let stream =
                request.options.stream.unwrap_or(ctx.stream) && !ctx.model.config.no_stream;
            sink.emit(Event::TurnStarted(event::TurnStarted {
                model: ctx.model.id(),
                stream,
                session_id: ctx.session.as_ref().map(|s| s.id().to_string()),
            }));
            let checkpoint = begin_checkpoint(ctx, &request);
            let mut result = self.run_started(ctx, request, stream, &sink).await;
            if let Some(record) = checkpoint.and_then(|recorder| recorder.finish()) {
                sink.emit(Event::CheckpointCreated(event::CheckpointCreated {
                    turn: record.turn,
                    files: record
                        .files
                        .iter()
                        .map(|f| f.path.display().to_string())
                        .collect(),
                }));
            }
            // A budget that ran out cancelled the run: say which. One passed by the final
            // answer ends the run the same way (the answer was shown and is kept): a run over
            // its budget never reports plain success.
            let budget_over = ctx.budget.as_ref().and_then(|b| b.exhausted());
            let root = ctx.depth == 0;
            if let (Err(CoreError::Cancelled), Some(over)) | (Ok(_), Some(over)) =
                (&result, budget_over)
                && (root || result.is_err())
            {
                result = Err(CoreError::Budget(over.to_string()));
            }
            match &result {
                Ok(outcome) => {
                    if !sink.ended() {
                        sink.emit(Event::TurnFinished(event::TurnFinished {
                            usage: outcome.usage,
                            finish_reason: outcome.finish_reason.clone(),
                            cost_usd: crate::usage::cost_of(&ctx.model.config, outcome.usage),
                            speed: outcome.speed,
                        }));
                    }
                    sink.flush();
                }
                Err(e) => sink.abort(e),
            }
            result
        })
    }

    /// A run refused before it started (a `UserPromptSubmit` hook blocked its prompt):
    /// its `turn_started` and `turn_aborted` all the same, so a program reading events
    /// sees one pair per prompt whatever became of it.
    pub fn refuse(
        &self,
        ctx: &RequestContext,
        options: &RunOptions,
        emitter: &dyn Emitter,
        error: &CoreError,
    ) {
        let sink = Sink::for_context(ctx, emitter).with_run(event::next_run_id());
        sink.emit(Event::TurnStarted(event::TurnStarted {
            model: ctx.model.id(),
            stream: options.stream.unwrap_or(ctx.stream) && !ctx.model.config.no_stream,
            session_id: ctx.session.as_ref().map(|s| s.id().to_string()),
        }));
        sink.abort(error);
    }

    async fn run_started(
        &self,
        ctx: &mut RequestContext,
        request: RunRequest,
        stream: bool,
        sink: &Sink<'_>,
    ) -> Result<RunOutcome, CoreError> {
        if request.input.is_none() {
            return Ok(RunOutcome::default());
        }
        // The turn holds the session's lock (unless a one-shot run holds it already).
        let _hold = self.lock_session(ctx, sink).await?;
        self.run_locked(ctx, request, stream, sink).await
    }

    /// Takes the open session's lock for `ctx` (see [`RequestContext::lock_session`]),
    /// reporting waits and merges as notices; released when the hold is dropped.
    async fn lock_session(
        &self,
        ctx: &mut RequestContext,
        sink: &Sink<'_>,
    ) -> Result<SessionHold, CoreError> {
        let cancel = ctx.cancel.clone();
        let notify = |line: &str| {
            sink.emit(Event::Notice(event::Notice::info(line)));
            sink.flush();
        };
        ctx.lock_session(&self.state, Some(&cancel), &notify).await
    }

    #[inline(never)]
    fn run_locked<'a>(
        &'a self,
        ctx: &'a mut RequestContext,
        request: RunRequest,
        stream: bool,
        emitter: &'a Sink<'_>,
    ) -> BoxFuture<'a, Result<RunOutcome, CoreError>> {
        Box::pin(async move {
            let options = request.options;
            let Some(input) = request.input else {
                return Ok(RunOutcome::default());
            };
            let raw_input = input.text.clone();
            if !input.prior.is_empty() {
                ctx.history.extend(input.prior.iter().cloned());
                if let Some(session) = &ctx.session {
                    session.mark_dirty();
                }
            }
            let kind = match input.continuation {
                Some(Continuation::Continue) => turn::TurnKind::Continue,
                Some(Continuation::Regenerate) => turn::TurnKind::Regenerate,
                Some(Continuation::Resume) => turn::TurnKind::Resume,
                None => {
                    let message = turn::prepare_input(&self.state, ctx, &input, emitter).await?;
                    self.compress_to_fit(ctx, &message, emitter).await?;
                    turn::TurnKind::New(
                        retrieval::augment(&self.state, ctx, &input.text, message, emitter).await?,
                    )
                }
            };
            let outcome = turn::run_turn(&self.state, ctx, kind, stream, options, emitter).await?;
            if ctx.session.is_some() && !ctx.dry_run {
                self.keep_under_threshold(ctx, emitter).await?;
            }
            if !ctx.dry_run && crate::conversation::policy::names_each_turn(ctx) {
                self.autoname_sink(ctx, emitter).await;
            }
            if ctx.save
                && ctx.session.is_none()
                && !ctx.dry_run
                && let Err(e) = self.log_exchange(ctx, &raw_input, &input.files, &outcome.text)
            {
                emitter.emit(Event::Notice(event::Notice::warning(format!(
                    "cannot append to {}: {e}",
                    self.state.paths.messages_file.display()
                ))));
            }
            Ok(outcome)
        })
    }

    /// A session whose history and `next` message exceed the model's `max_input_tokens`
    /// is compressed first, when there is enough of it to summarise. What still does not
    /// fit is refused before sending (see `turn::check_input_limit`).
    async fn compress_to_fit(
        &self,
        ctx: &mut RequestContext,
        next: &loki_wire::message::Message,
        emitter: &Sink<'_>,
    ) -> Result<(), CoreError> {
        let Some(max) = ctx.model.config.max_input_tokens.filter(|m| *m > 0) else {
            return Ok(());
        };
        if ctx.session.is_none()
            || ctx.dry_run
            || crate::session::compress::split_for_summary(
                &ctx.history,
                usize::MAX,
                crate::tokens::Counter::for_model(ctx.model.real_name()),
            )
            .is_none()
        {
            return Ok(());
        }
        let parts = [ctx.history.as_slice(), std::slice::from_ref(next)];
        if tokens_over(ctx, &parts, max as usize).is_some() {
            self.compress(ctx, emitter).await?;
        }
        Ok(())
    }

    /// `small_model` with its provider, for titles, summaries and memory extraction; `None`
    /// (the conversation's own model) when unset or unusable, which is said once per
    /// call as a warning.
    fn small_model(
        &self,
        ctx: &RequestContext,
        emitter: &Sink<'_>,
    ) -> Option<(
        crate::client::Model,
        std::sync::Arc<dyn crate::client::Provider>,
    )> {
        let id = self.state.config.small_model.as_deref()?.trim();
        if id.is_empty() || id == ctx.model.id() {
            return None;
        }
        let resolved = self
            .state
            .providers
            .resolve(id, crate::config::clients::ModelKind::Chat)
            .and_then(|model| {
                let provider = crate::conversation::provider_for(&self.state, &model)?;
                Ok((model, provider))
            });
        match resolved {
            Ok(found) => Some(found),
            Err(e) => {
                emitter.emit(Event::Notice(event::Notice::warning(format!(
                    "small_model: {e}; using {} instead",
                    ctx.model.id()
                ))));
                None
            }
        }
    }

    /// The open session's compression threshold (0: never compress): the session's own,
    /// else the agent's, else the conversation's.
    fn compression_threshold(&self, ctx: &RequestContext) -> usize {
        ctx.session
            .as_ref()
            .and_then(|s| s.lock().get().compression_threshold)
            .or_else(|| {
                ctx.agent
                    .as_ref()
                    .and_then(|a| a.def.config.compression_threshold)
            })
            .unwrap_or(ctx.compression_threshold)
    }

    /// After a turn, brings a session that reached its threshold back well under it: big
    /// tool results of finished turns are shortened first, and only when that is not
    /// enough are the older messages summarised (see [`Engine::compress`]).
    async fn keep_under_threshold(
        &self,
        ctx: &mut RequestContext,
        emitter: &Sink<'_>,
    ) -> Result<(), CoreError> {
        let threshold = self.compaction_limit(ctx);
        if threshold == 0 || !reaches_tokens(ctx, threshold) {
            return Ok(());
        }
        let counter = crate::tokens::Counter::for_model(ctx.model.real_name());
        if crate::session::compress::trim_tool_results(&mut ctx.history, threshold, counter)
            && !reaches_tokens(ctx, threshold)
        {
            return Ok(());
        }
        self.compress(ctx, emitter).await?;
        Ok(())
    }

    /// [`Engine::autoname`], with a failure reported as a warning (the session is then
    /// saved under a timestamp alone).
    pub async fn autoname_or_warn(&self, ctx: &mut RequestContext, emitter: &dyn Emitter) {
        let sink = Sink::for_context(ctx, emitter);
        self.autoname_sink(ctx, &sink).await;
        sink.flush();
    }

    async fn autoname_sink(&self, ctx: &mut RequestContext, emitter: &Sink<'_>) {
        if let Err(e) = self.autoname(ctx, emitter).await {
            emitter.emit(Event::Notice(event::Notice::warning(format!(
                "could not name the session: {e}"
            ))));
        }
    }

    /// Gives a temporary session a title with the `create-title` role, from its first
    /// question, unless it has one. The title ends up in the name the session is saved
    /// under. Returns the title.
    async fn autoname(
        &self,
        ctx: &mut RequestContext,
        emitter: &Sink<'_>,
    ) -> Result<Option<String>, CoreError> {
        let Some(session) = &ctx.session else {
            return Ok(None);
        };
        let untitled = session.name() == crate::session::TEMP_SESSION
            && session.lock().get().autoname.is_none();
        let first_question = ctx
            .history
            .iter()
            .find(|m| m.role == loki_wire::message::Role::User)
            .map(loki_wire::message::Message::text_content);
        let Some(question) = first_question.filter(|q| untitled && !q.trim().is_empty()) else {
            return Ok(None);
        };
        emitter.emit(Event::SessionAutonaming);
        emitter.flush();
        let vars = ctx.system_vars();
        let role = crate::role::Role::load(&self.state.paths.roles_dir, "create-title", &vars)?;
        let excerpt: String = question.chars().take(2000).collect();
        let request = turn::side_request(
            role.frame(loki_wire::message::Message::text(
                loki_wire::message::Role::User,
                excerpt,
            )),
            role.temperature,
            role.top_p,
        );
        let small = self.small_model(ctx, emitter);
        let answer = turn::complete_text_on(ctx, small.as_ref(), &request).await?;
        let title = loki_wire::openai_wire::strip_think(&answer)
            .trim()
            .trim_matches(['"', '\'', '.'])
            .to_string();
        if crate::session::id::slugify(&title).is_empty() {
            return Ok(None);
        }
        if let Some(session) = &ctx.session {
            session.lock().get_mut().autoname = Some(title.clone());
        }
        emitter.emit(Event::SessionAutonamed(event::SessionAutonamed {
            title: title.clone(),
        }));
        Ok(Some(title))
    }

    /// Summarises the older part of the session with the model and replaces it with the
    /// summary (`.compress session`, and automatically past the threshold).
    async fn compress(
        &self,
        ctx: &mut RequestContext,
        emitter: &Sink<'_>,
    ) -> Result<bool, CoreError> {
        let Some(split) = self.split_for_summary(ctx) else {
            return Ok(false);
        };
        if let Some(hooks) = ctx.tool_hooks.clone() {
            hooks.pre_compact("auto").await;
        }
        let kept = split.1.len();
        match self.summarise(ctx, emitter, split).await {
            Err(e) if !matches!(e, CoreError::Cancelled) => {
                Ok(self.without_summary(ctx, emitter, &e, kept))
            }
            other => other,
        }
    }

    /// A summary failed. The session is kept whole and summarised after a later turn —
    /// unless it no longer fits the model's window: then the older messages (earlier
    /// summaries excepted) stop being sent and stay in the session file
    /// (`compressed_messages`); the `kept` most recent ones, and at least the last
    /// exchange, go on. True when messages were set aside.
    fn without_summary(
        &self,
        ctx: &mut RequestContext,
        emitter: &Sink<'_>,
        error: &CoreError,
        kept: usize,
    ) -> bool {
        let window = ctx.model.config.max_input_tokens.filter(|m| *m > 0);
        let overflowing = window.is_some_and(|w| {
            tokens_over(ctx, &[ctx.history.as_slice()], w as usize * 8 / 10).is_some()
        });
        if !overflowing {
            emitter.emit(Event::Notice(event::Notice::warning(format!(
                "could not summarise the session ({error}); it is kept whole and summarised after a later turn"
            ))));
            return false;
        }
        let cut = if kept == 0 {
            ctx.history
                .iter()
                .rposition(|m| m.role == loki_wire::message::Role::User)
                .unwrap_or(ctx.history.len())
        } else {
            ctx.history.len() - kept
        };
        let (older, recent) = ctx.history.split_at(cut);
        let (summaries, set_aside): (Vec<_>, Vec<_>) = older
            .iter()
            .cloned()
            .partition(|m| m.role == loki_wire::message::Role::System);
        if set_aside.is_empty() {
            return false;
        }
        let mut history = summaries;
        history.extend_from_slice(recent);
        ctx.history = history;
        let count = set_aside.len();
        if let Some(session) = &ctx.session {
            session
                .lock()
                .get_mut()
                .compressed_messages
                .extend(set_aside);
        }
        emitter.emit(Event::Notice(event::Notice::warning(format!(
            "could not summarise the session ({error}); kept the {} most recent messages \
             ({count} older ones stay in the session file, unsent)",
            ctx.history.len()
        ))));
        true
    }

    /// The older part of the session to summarise and the recent tail kept verbatim. The
    /// kept tail takes at most half the threshold, so that the session ends well under it
    /// and is not summarised again before as much new content has arrived.
    #[allow(clippy::type_complexity)]
    fn split_for_summary(
        &self,
        ctx: &RequestContext,
    ) -> Option<(
        Vec<loki_wire::message::Message>,
        Vec<loki_wire::message::Message>,
    )> {
        let budget = match self.compaction_limit(ctx) {
            0 => usize::MAX,
            threshold => threshold / 2,
        };
        let counter = crate::tokens::Counter::for_model(ctx.model.real_name());
        crate::session::compress::split_for_summary(&ctx.history, budget, counter)
    }

    /// `.compress session`, asked for explicitly: like [`Engine::compress`], but a
    /// session too short to keep a recent tail is summarised whole.
    pub async fn compress_now(
        &self,
        ctx: &mut RequestContext,
        emitter: &dyn Emitter,
    ) -> Result<bool, CoreError> {
        let sink = Sink::for_context(ctx, emitter);
        let emitter = &sink;
        let split = self.split_for_summary(ctx).or_else(|| {
            let worth = ctx
                .history
                .iter()
                .any(|m| m.role != loki_wire::message::Role::System);
            worth.then(|| (ctx.history.clone(), Vec::new()))
        });
        if let (Some(hooks), Some(_)) = (ctx.tool_hooks.clone(), &split) {
            hooks.pre_compact("manual").await;
        }
        match split {
            Some(split) => self.summarise(ctx, emitter, split).await,
            None => Ok(false),
        }
    }

    #[inline(never)]
    fn summarise<'a>(
        &'a self,
        ctx: &'a mut RequestContext,
        emitter: &'a Sink<'_>,
        (old, kept): (
            Vec<loki_wire::message::Message>,
            Vec<loki_wire::message::Message>,
        ),
    ) -> BoxFuture<'a, Result<bool, CoreError>> {
        Box::pin(async move {
            self.flush_memory(ctx, emitter, &old).await?;
            emitter.emit(Event::SessionCompressing);
            emitter.flush();
            let config = &self.state.config;
            let prompt = config
                .summarization_prompt
                .clone()
                .unwrap_or_else(|| crate::session::compress::DEFAULT_SUMMARIZATION_PROMPT.into());
            let mut messages = crate::session::compress::for_summary(&old);
            messages.push(loki_wire::message::Message::text(
                loki_wire::message::Role::User,
                prompt,
            ));
            let request = turn::side_request(messages, ctx.temperature, ctx.top_p);
            let small = self.small_model(ctx, emitter);
            let summary = turn::complete_text_on(ctx, small.as_ref(), &request).await?;
            let prefix = config
                .summary_context_prompt
                .clone()
                .unwrap_or_else(|| crate::session::compress::DEFAULT_SUMMARY_CONTEXT_PROMPT.into());
            let before = session_tokens(ctx);
            // The todo list lives outside the history; the summary says where it stands.
            let todo = ctx
                .todo
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone();
            let todo = if todo.items.is_empty() {
                String::new()
            } else {
                format!("\n\nThe todo list so far:\n{}", todo.render())
            };
            let mut history = vec![loki_wire::message::Message::text(
                loki_wire::message::Role::System,
                format!(
                    "{prefix}{}{todo}",
                    loki_wire::openai_wire::strip_think(&summary)
                ),
            )];
            history.extend(kept);
            ctx.history = history;
            if let Some(session) = &ctx.session {
                session.lock().get_mut().compressed_messages.extend(old);
            }
            emitter.emit(Event::SessionCompressed(event::SessionCompressed {
                tokens_before: before,
                tokens_after: session_tokens(ctx),
            }));
            emitter.flush();
            Ok(true)
        })
    }

    /// `save: true`: appends the exchange to `messages.md` (outside sessions).
    fn log_exchange(
        &self,
        ctx: &RequestContext,
        input: &str,
        files: &[String],
        output: &str,
    ) -> std::io::Result<()> {
        use std::io::Write;
        let path = &self.state.paths.messages_file;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let summary: String = input
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(80)
            .collect();
        let role = ctx
            .role
            .as_ref()
            .map(|r| format!(" ({})", r.name))
            .unwrap_or_default();
        let when = ctx.system_vars().now;
        let mut raw = String::new();
        if !files.is_empty() {
            raw.push_str(&format!(".file {} -- ", files.join(" ")));
        }
        raw.push_str(input);
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(path)?;
        let entry =
            format!("# CHAT: {summary} [{when}]{role}\n{raw}\n--------\n{output}\n--------\n\n");
        file.write_all(loki_wire::secrets::redact(&entry).as_bytes())
    }
}

/// A user's turn (not a sub-agent's, whose changes belong to it) begins its checkpoint:
/// the recorder it was begun on, when checkpoints are kept.
fn begin_checkpoint(
    ctx: &RequestContext,
    request: &RunRequest,
) -> Option<Arc<crate::checkpoint::Recorder>> {
    // Off the record, nothing is kept.
    let recorder = ctx
        .checkpoints
        .clone()
        .filter(|_| ctx.depth == 0 && !ctx.otr.get())?;
    let input = request.input.as_ref()?;
    if input.continuation.is_some() {
        return None;
    }
    let turn = 1 + ctx
        .history
        .iter()
        .filter(|m| m.role == loki_wire::message::Role::User && m.tool_call_id.is_none())
        .count();
    recorder.begin(&checkpoint_key(ctx), turn, &input.text, ctx.history.len());
    Some(recorder)
}

/// Where a conversation's checkpoints are journaled: its session, else itself.
pub fn checkpoint_key(ctx: &RequestContext) -> String {
    match &ctx.session {
        Some(session) => format!("{}{}", crate::checkpoint::SESSION_KEY, session.id()),
        None => format!("conversation-{}", ctx.id),
    }
}
