//! The turn loop.
//!
//! Protocol of one turn (the engine has emitted `turn_started` already and emits the
//! closing `turn_finished` / `turn_aborted`):
//! 1. build the request from the system prompt, the history and the new user message;
//! 2. resolve the conversation's tool scope (MCP servers it leases included);
//! 3. per model call: emit `model_call_started`, open the provider stream, retrying
//!    retryable failures with backoff (each announced by a `retry` event), abandoning
//!    the wait on cancellation;
//! 4. forward text and reasoning deltas as they arrive, flushing the emitter after each
//!    network batch; collect tool-call fragments and usage;
//! 5. run a tool round (`tool_call_started`, `tool_call_progress`, `tool_call_finished`)
//!    and call the model again, until it answers without calls;
//! 6. record the exchange in the history (a new pair, an extended answer for
//!    `.continue`, a replaced answer for `.regenerate`).
//!
//! Cancellation or a failure at any point keeps the partial answer in the history
//! (marked `interrupted` when cancelled), hands it to the sink for `turn_aborted`, and
//! returns the error.

use futures_util::StreamExt;

use super::emitter::Sink;
use super::tool_round::Toolbox;
use crate::client::{ChatRequest, ProviderError, ProviderStream};
use crate::conversation::context::RequestContext;
use crate::error::CoreError;
use crate::input;
use crate::state::AppState;
use crate::usage::speed::{CallTimes, SpeedMeter};
use loki_protocol::event::Speed;
use loki_protocol::event::{
    Event, ModelCallStarted, Notice, TextDelta, ToolCallFinished, ToolCallStarted,
};
use loki_protocol::op::{RunOutcome, UserInput};
use loki_wire::message::{Message, Role, ToolCall, Usage};
use loki_wire::provider_event::{FinishReason, ProviderEvent};

/// The `.file` argument that stands for the last answer.
const LAST_REPLY: &str = "%%";

/// Attaches MCP resource `arg` (`mcp:SERVER:URI`): its text as a document, its images
/// as images, other binary parts described; `left` is what `max_input_size` still allows.
async fn attach_resource(
    state: &AppState,
    ctx: &RequestContext,
    arg: &str,
    loaded: &mut input::Loaded,
    left: &mut usize,
) -> Result<(), CoreError> {
    let failed = |why: String| CoreError::InvalidRequest(format!("cannot attach `{arg}`: {why}"));
    let Some((name, uri)) = arg
        .strip_prefix("mcp:")
        .and_then(|rest| rest.split_once(':'))
        .filter(|(n, u)| !n.is_empty() && !u.is_empty())
    else {
        return Err(failed("write it as mcp:SERVER:URI".into()));
    };
    let names = [name.to_string()];
    let (_lease, warnings) = state.mcp.acquire(&names).await;
    let Some(server) = state.mcp.running(&names).into_iter().next() else {
        let why = warnings
            .into_iter()
            .next()
            .unwrap_or_else(|| format!("MCP server `{name}` is not running"));
        return Err(failed(why));
    };
    let side = crate::tool::mcp_client::ConversationSide {
        asker: ctx.asker.as_ref(),
        conversation: &ctx.id,
        cwd: &ctx.cwd,
        sampler: None,
    };
    let timeout = std::time::Duration::from_secs(state.config.tool_timeout.max(1));
    let (text, blobs) = server
        .read_resource(uri, timeout, &ctx.cancel, &side)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let size = text.len() + blobs.iter().map(|(_, b)| b.len()).sum::<usize>();
    if size > *left {
        return Err(failed(format!(
            "{} is over what max_input_size ({}) leaves",
            input::human_size(size),
            input::human_size(state.config.max_input_size)
        )));
    }
    *left -= size;
    let mut contents = text;
    for (mime, blob) in blobs {
        if mime.starts_with("image/") {
            loaded.images.push(format!("data:{mime};base64,{blob}"));
        } else {
            contents.push_str(&format!(
                "\n[binary {mime}, {} bytes of base64]",
                blob.len()
            ));
        }
    }
    loaded.documents.push(input::Document {
        kind: "MCP",
        source: arg.to_string(),
        contents,
    });
    Ok(())
}

/// Loads attachments and builds the user message.
pub(super) async fn prepare_input(
    state: &AppState,
    ctx: &RequestContext,
    user: &UserInput,
    emitter: &Sink<'_>,
) -> Result<Message, CoreError> {
    // Sources a `document_loaders` entry handles go through the loader.
    let loaders = &state.config.document_loaders;
    let last_reply = last_reply(ctx, user)?;
    let (resources, files): (Vec<&String>, Vec<&String>) = user
        .files
        .iter()
        .filter(|f| *f != LAST_REPLY)
        .partition(|f| f.starts_with("mcp:"));
    let files = files.into_iter();
    let (with_loader, plain): (Vec<&String>, Vec<&String>) = files.partition(|f| {
        crate::rag::loaders::has_extension_loader(f, loaders)
            || f.split_once(':')
                .is_some_and(|(n, _)| loaders.contains_key(n))
    });
    let plain: Vec<String> = plain.into_iter().cloned().collect();
    let mut loaded = load_plain(state, ctx, &plain, user).await?;
    let mut left = state.config.max_input_size.saturating_sub(
        user.text.len()
            + loaded
                .documents
                .iter()
                .map(|d| d.contents.len())
                .sum::<usize>(),
    );
    for arg in resources {
        tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return Err(CoreError::Cancelled),
            read = attach_resource(state, ctx, arg, &mut loaded, &mut left) => read?,
        }
    }
    if let Some(contents) = last_reply {
        loaded.documents.insert(
            0,
            input::Document {
                kind: "REPLY",
                source: "the last answer".into(),
                contents,
            },
        );
    }
    if !loaded.empty_dirs.is_empty() {
        emitter.emit(Event::Notice(Notice::warning(format!(
            "nothing attached from {}: no text files in it",
            loaded.empty_dirs.join(", ")
        ))));
    }
    let skipped = std::mem::take(&mut loaded.skipped);
    let (convertible, skipped): (Vec<String>, Vec<String>) = skipped
        .into_iter()
        .partition(|f| crate::rag::loaders::has_extension_loader(f, loaders));
    loaded.skipped = skipped;
    for arg in with_loader.into_iter().chain(convertible.iter()) {
        load_converted(state, ctx, arg, user, &mut loaded).await?;
    }
    if !loaded.skipped.is_empty() {
        emitter.emit(Event::Notice(Notice::info(format!(
            "skipped {} binary or image file(s): {}",
            loaded.skipped.len(),
            loaded.skipped.join(", ")
        ))));
    }
    // Images given as parts of the message (stream-json input, the server).
    loaded.images.extend(user.images.iter().cloned());
    Ok(input::user_message(&user.text, loaded, &ctx.model)?)
}

/// `%%` in the attachments: the last answer of this conversation (`.file %% -- translate
/// it`); an error when there is none yet.
fn last_reply(ctx: &RequestContext, user: &UserInput) -> Result<Option<String>, CoreError> {
    if !user.files.iter().any(|f| f == LAST_REPLY) {
        return Ok(None);
    }
    super::command::last_answer(ctx).map(Some).ok_or_else(|| {
        CoreError::Conflict(
            "`%%` stands for the last answer, and there is none yet in this conversation".into(),
        )
    })
}

/// Files, directories, globs and URLs read as they are, within `max_input_size` (the
/// prompt, with piped stdin, counts towards it too).
async fn load_plain(
    state: &AppState,
    ctx: &RequestContext,
    plain: &[String],
    user: &UserInput,
) -> Result<input::Loaded, CoreError> {
    if plain.is_empty() {
        return Ok(input::Loaded::default());
    }
    let agent = state.config.user_agent();
    let limits = input::InputLimits {
        max_bytes: state.config.max_input_size,
        allow_special: state.config.allow_special_files,
    };
    let load = input::load_within(plain, &ctx.cwd, agent.as_deref(), limits, user.text.len());
    tokio::select! {
        biased;
        _ = ctx.cancel.cancelled() => Err(CoreError::Cancelled),
        loaded = load => Ok(loaded?),
    }
}

/// One attachment a `document_loaders` entry converts; its text counts towards
/// `max_input_size` like any other attachment.
async fn load_converted(
    state: &AppState,
    ctx: &RequestContext,
    arg: &str,
    user: &UserInput,
    loaded: &mut input::Loaded,
) -> Result<(), CoreError> {
    let loaders = &state.config.document_loaders;
    let load = crate::rag::loaders::load_with_loader(arg, &ctx.cwd, loaders);
    let docs = tokio::select! {
        biased;
        _ = ctx.cancel.cancelled() => return Err(CoreError::Cancelled),
        docs = load => docs,
    };
    if let Some(docs) = docs {
        loaded
            .documents
            .extend(docs?.into_iter().map(|d| input::Document {
                kind: "FILE",
                source: d.path,
                contents: d.text,
            }));
    }
    let total = user.text.len()
        + loaded
            .documents
            .iter()
            .map(|d| d.contents.len())
            .sum::<usize>();
    if total > state.config.max_input_size {
        return Err(input::InputError::TooLarge {
            what: format!("{arg} (as converted by its document loader)"),
            limit: state.config.max_input_size,
        }
        .into());
    }
    Ok(())
}

/// What one model response produced.
#[derive(Default)]
struct Collected {
    text: String,
    reasoning: String,
    reasoning_signature: Option<String>,
    calls: Vec<PartialCall>,
    /// Calls beyond [`MAX_PARALLEL_CALLS`] in this response (not run, but reported).
    dropped_calls: usize,
    usage: Usage,
    finish: Option<FinishReason>,
    /// When the request went out and the first token came back.
    times: Option<CallTimes>,
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    signature: Option<String>,
}

/// What a turn does with the conversation.
#[derive(Debug, Clone)]
pub(super) enum TurnKind {
    /// A new user message.
    New(Message),
    /// Extend the last assistant message (`.continue`).
    Continue,
    /// Replace the last assistant message (`.regenerate`).
    Regenerate,
    /// Answer the history as it stands (it ends with the results of calls the caller ran).
    Resume,
}

/// Runs the turn; see the module docs for the protocol.
pub(super) async fn run_turn(
    state: &AppState,
    ctx: &mut RequestContext,
    kind: TurnKind,
    stream: bool,
    options: loki_protocol::op::RunOptions,
    emitter: &Sink<'_>,
) -> Result<RunOutcome, CoreError> {
    let (kind, mut messages) = super::messages::build(ctx, kind)?;
    super::messages::leave_out_images(ctx, &mut messages, emitter);
    if ctx.dry_run {
        return Ok(dry_run(state, ctx, messages, emitter));
    }
    super::messages::check_input_limit(ctx, &messages)?;
    // The conversation's tools: its MCP servers are leased (started if needed) first.
    let mut toolbox = Toolbox::prepare(state, ctx, emitter).await?;
    add_context_parts(state, ctx, &toolbox, &mut messages, emitter);
    ctx.tool_policy.seen.clear();
    // Assistant tool-call messages and tool results of this turn, in order.
    let mut steps: Vec<Message> = Vec::new();
    let (mut total, mut speed, mut rounds) = (Usage::default(), SpeedMeter::default(), 0usize);
    loop {
        rounds += 1;
        model_call_started(ctx, rounds, emitter);
        let request = chat_request(ctx, &messages, stream, &toolbox);
        let mut collected = Collected::default();
        let result = call_model(ctx, &request, emitter, &mut collected, &mut speed).await;
        total.add(collected.usage);
        emitter.spent(collected.usage);
        charge_budget(ctx, collected.usage, emitter);
        if let Err(err) = result {
            return Err(keep_failed(
                ctx, &kind, steps, &collected, total, err, emitter,
            ));
        }
        let calls = finished_calls(std::mem::take(&mut collected.calls));
        let dropped = std::mem::take(&mut collected.dropped_calls);
        announce_calls(&calls, dropped, emitter);
        // Calls of the caller's own tools end the turn: the caller runs them and sends
        // the results back (`Continuation::Resume`).
        if calls_client_tool(ctx, &calls) {
            let finished = finished(total, rounds, &speed);
            return Ok(client_turn(
                ctx, &kind, steps, collected, calls, finished, emitter,
            ));
        }
        let no_tools = toolbox.tools.is_empty();
        let last_round = rounds >= state.config.max_tool_rounds.max(1);
        if no_tools && tell_no_tools(&calls, rounds == 1 && !last_round, &mut messages, emitter) {
            continue;
        }
        let unknown = calls
            .iter()
            .find(|c| !toolbox.can_call(&c.name))
            .filter(|_| options.unknown_tool_fails && !no_tools);
        if let Some(call) = unknown {
            // Nothing of this response runs; the calls are answered so the history stays
            // valid, and the work before it is kept.
            let name = call.name.clone();
            let why =
                format!("not run: the same response called `{name}`, which is not a tool here");
            let (finished, unrun) = (finished(total, rounds, &speed), Unrun { calls, why: &why });
            let outcome = finish_turn(ctx, &kind, steps, collected, finished, unrun, emitter);
            emitter.set_partial(&outcome.text);
            return Err(CoreError::UnknownTool(name));
        }
        if calls.is_empty() || no_tools || last_round {
            let stopped = !calls.is_empty() && !no_tools;
            let why = if no_tools {
                "not run: no tools are enabled for this conversation"
            } else {
                if state.config.max_turns.is_some() {
                    "not run: the turn reached --max-turns"
                } else {
                    "not run: the turn reached max_tool_rounds"
                }
            };
            let (finished, unrun) = (finished(total, rounds, &speed), Unrun { calls, why });
            let outcome = finish_turn(ctx, &kind, steps, collected, finished, unrun, emitter);
            if stopped {
                // The work so far is kept; the turn did not finish, and says why.
                emitter.set_partial(&outcome.text);
                return Err(turn_limit(
                    rounds,
                    state.config.max_tool_rounds,
                    state.config.max_turns,
                ));
            }
            return Ok(outcome);
        }
        emitter.flush();
        let assistant = assistant_message(&mut collected, &calls);
        messages.push(assistant.clone());
        steps.push(assistant);
        let Some(round) = toolbox.run_round(state, ctx, &calls, emitter).await else {
            account_unfinished(ctx, total);
            answer_cancelled(ctx, &calls, &mut steps, emitter);
            record(ctx, &kind, steps, String::new(), Vec::new(), true);
            return Err(CoreError::Cancelled);
        };
        toolbox.note_loaded(state, ctx, &calls, &round.messages);
        let notes = follow_ups(ctx, dropped, emitter);
        if absorb(round, notes, &mut messages, &mut steps) {
            let finished = finished(total, rounds, &speed);
            return end_silent(ctx, &kind, steps, collected, finished, emitter);
        }
    }
}

/// The context parts of the turn (knowledge base, memory, project notes…) added to its
/// messages; their notices shown once.
fn add_context_parts(
    state: &AppState,
    ctx: &RequestContext,
    toolbox: &Toolbox,
    messages: &mut Vec<Message>,
    emitter: &Sink<'_>,
) {
    let query = super::context_parts::last_user_text(messages);
    let parts = super::context_parts::ContextParts::gather(state, ctx, &toolbox.tools, &query);
    for notice in &parts.notices {
        super::context_parts::warn_once(emitter, notice);
    }
    parts.add_to(messages);
}

/// A model call failed: what arrived before the failure is kept, and so is what it
/// cost; the error goes on.
fn keep_failed(
    ctx: &mut RequestContext,
    kind: &TurnKind,
    steps: Vec<Message>,
    collected: &Collected,
    total: Usage,
    err: CoreError,
    emitter: &Sink<'_>,
) -> CoreError {
    account_unfinished(ctx, total);
    let interrupted = matches!(err, CoreError::Cancelled);
    if !collected.text.is_empty() || !steps.is_empty() {
        let text = collected.text.clone();
        record(ctx, kind, steps, text, Vec::new(), interrupted);
    }
    emitter.set_partial(&collected.text);
    err
}

/// Says that model call `round` of the turn starts.
fn model_call_started(ctx: &RequestContext, round: usize, emitter: &Sink<'_>) {
    emitter.emit(Event::ModelCallStarted(ModelCallStarted {
        model: ctx.model.id(),
        round,
    }));
}

/// Whether the model called one of the caller's own tools (an OpenAI client's `tools`).
fn calls_client_tool(ctx: &RequestContext, calls: &[ToolCall]) -> bool {
    calls
        .iter()
        .any(|c| ctx.client_tools.iter().any(|t| t.name == c.name))
}

/// The error of a turn stopped by `max_tool_rounds` (its work so far kept), naming
/// `--max-turns` when that flag set the limit.
fn turn_limit(rounds: usize, max: usize, max_turns: Option<u64>) -> CoreError {
    CoreError::TurnLimit(match max_turns {
        Some(turns) => format!(
            "stopped after {turns} tool round(s) (--max-turns {turns}); raise --max-turns to \
             let it go on"
        ),
        None => format!(
            "stopped after {rounds} model calls in one turn (max_tool_rounds = {max}); \
             raise max_tool_rounds, or say `continue` to let it go on"
        ),
    })
}

/// Appends a round's results, and the notes sent with them, to the request and to the
/// turn's record. True when the turn ends there: every tool wrote nothing and there is
/// nothing else to send, so (as in Loki) the model is not asked again.
fn absorb(
    round: super::tool_round::Round,
    notes: Vec<Message>,
    messages: &mut Vec<Message>,
    steps: &mut Vec<Message>,
) -> bool {
    let ends = round.silent && notes.is_empty();
    for message in round.messages.into_iter().chain(notes) {
        messages.push(message.clone());
        steps.push(message);
    }
    ends
}

/// `--dry-run`: the assembled input, shown as the answer, instead of a model call.
fn dry_run(
    state: &AppState,
    ctx: &RequestContext,
    mut messages: Vec<Message>,
    emitter: &Sink<'_>,
) -> RunOutcome {
    let query = super::context_parts::last_user_text(&messages);
    let parts = super::context_parts::ContextParts::gather(state, ctx, &[], &query);
    for notice in &parts.notices {
        super::context_parts::warn_once(emitter, notice);
    }
    parts.add_to(&mut messages);
    let text = loki_wire::secrets::redact(&super::messages::dry_run_text(&messages)).into_owned();
    emitter.emit(Event::AssistantDelta(TextDelta { text: text.clone() }));
    emitter.flush();
    RunOutcome {
        text,
        ..RunOutcome::default()
    }
}

/// The request for one model call: the messages (repeated tool results as one line when
/// asked), the sampling settings, the tools.
fn chat_request(
    ctx: &RequestContext,
    messages: &[Message],
    stream: bool,
    toolbox: &Toolbox,
) -> ChatRequest {
    let mut sent = messages.to_vec();
    if ctx.stale_tool_results > 0 {
        super::messages::drop_repeated_results(&mut sent);
    }
    ChatRequest {
        messages: sent,
        temperature: ctx.temperature,
        top_p: ctx.top_p,
        max_tokens: ctx.max_output_tokens,
        stream,
        tools: with_client_tools(&toolbox.specs, &ctx.client_tools),
        controls: ctx.controls.clone(),
    }
}

/// The response's calls, each as `tool_call_started`; calls past the per-response limit
/// as one warning.
fn announce_calls(calls: &[ToolCall], dropped: usize, emitter: &Sink<'_>) {
    if dropped > 0 {
        emitter.emit(Event::Notice(Notice::warning(format!(
            "the model asked for {dropped} more tool calls than the {MAX_PARALLEL_CALLS} run per response; they were not run and the model is told"
        ))));
    }
    for call in calls {
        emitter.emit(Event::ToolCallStarted(ToolCallStarted {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        }));
    }
}

/// Calls of the caller's own tools end the turn with the calls for the caller to run.
fn client_turn(
    ctx: &mut RequestContext,
    kind: &TurnKind,
    steps: Vec<Message>,
    collected: Collected,
    calls: Vec<ToolCall>,
    finished: Finished,
    emitter: &Sink<'_>,
) -> RunOutcome {
    finished.charge(ctx);
    record(
        ctx,
        kind,
        steps,
        collected.text.clone(),
        calls.clone(),
        false,
    );
    emitter.flush();
    RunOutcome {
        finish_reason: Some("tool_calls".into()),
        client_calls: calls,
        ..finished.outcome(collected)
    }
}

/// Calls in a conversation without tools: warned about, and the first time (`once`)
/// the model is told, so it answers without them — no tool results, as a request that
/// declares no tools may not carry any. Whether it was told (call it again).
fn tell_no_tools(
    calls: &[ToolCall],
    once: bool,
    messages: &mut Vec<Message>,
    emitter: &Sink<'_>,
) -> bool {
    if calls.is_empty() {
        return false;
    }
    warn_no_tools(calls, emitter);
    if once {
        messages.push(no_tools_note(calls));
    }
    once
}

/// What the model is told when it called tools in a conversation that has none.
fn no_tools_note(calls: &[ToolCall]) -> Message {
    let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    Message::text(
        loki_wire::message::Role::User,
        format!(
            "(loki: no tools are enabled in this conversation, so {} did not run. Answer without tools.)",
            names.join(", ")
        ),
    )
}

fn warn_no_tools(calls: &[ToolCall], emitter: &Sink<'_>) {
    emitter.emit(Event::Notice(Notice::warning(format!(
        "the model asked to call {} but no tools are enabled for this conversation",
        calls
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ))));
}

/// The model's response as the assistant message that carries its calls (and its
/// signed reasoning, which some providers need back).
fn assistant_message(collected: &mut Collected, calls: &[ToolCall]) -> Message {
    let mut assistant = Message::text(Role::Assistant, collected.text.clone());
    assistant.tool_calls = calls.to_vec();
    assistant.reasoning =
        collected
            .reasoning_signature
            .take()
            .map(|signature| loki_wire::message::SignedReasoning {
                text: std::mem::take(&mut collected.reasoning),
                signature,
            });
    assistant
}

/// A round stopped before its calls ran (by the user, or by a spent budget, which it
/// names): every call gets an answer (and a `tool_call_finished`), or the provider would
/// reject the history.
fn answer_cancelled(
    ctx: &RequestContext,
    calls: &[ToolCall],
    steps: &mut Vec<Message>,
    emitter: &Sink<'_>,
) {
    let why = match ctx.budget.as_ref().and_then(|b| b.exhausted()) {
        Some(over) => over.to_string(),
        None => "cancelled by the user".to_string(),
    };
    let why = why.as_str();
    for call in calls {
        steps.push(unrun_call(call, "cancelled", why, emitter));
    }
}

/// The answer to a call that did not run (`kind`: `cancelled`, `not_run`): its
/// `tool_call_finished` event, and the tool message saying `why`, which the provider
/// needs for every call in the history.
fn unrun_call(call: &ToolCall, kind: &'static str, why: &str, emitter: &Sink<'_>) -> Message {
    let content = serde_json::json!({ "tool_call_error": why }).to_string();
    emitter.emit(Event::ToolCallFinished(ToolCallFinished {
        call_id: call.id.clone(),
        name: call.name.clone(),
        ok: false,
        result: content.clone(),
        error: Some(loki_protocol::event::ToolFailure {
            kind,
            message: why.to_string(),
        }),
    }));
    let mut message = Message::text(Role::Tool, content);
    message.tool_call_id = Some(call.id.clone());
    message
}

/// What goes to the model with a round's results: a note about calls past the limit, and
/// what the user typed meanwhile.
fn follow_ups(ctx: &RequestContext, dropped: usize, emitter: &Sink<'_>) -> Vec<Message> {
    let mut notes = Vec::new();
    if dropped > 0 {
        notes.push(Message::text(
            Role::User,
            format!(
                "[loki] {dropped} further tool calls in your last response were not run: at most {MAX_PARALLEL_CALLS} calls are run per response. Make the rest again in smaller batches if they are still needed."
            ),
        ));
    }
    let queued = ctx.queue.take();
    if !queued.is_empty() {
        let text = queued.join("\n\n");
        emitter.emit(Event::Notice(Notice::info(format!(
            "sent with the tool results: {text}"
        ))));
        notes.push(Message::text(Role::User, text));
    }
    notes
}

/// The tools offered to the model: the conversation's, then the caller's own (those
/// named like one of the conversation's are left out).
fn with_client_tools(
    own: &[crate::client::ToolSpec],
    client: &[crate::client::ToolSpec],
) -> Vec<crate::client::ToolSpec> {
    let mut specs = own.to_vec();
    specs.extend(
        client
            .iter()
            .filter(|c| !own.iter().any(|o| o.name == c.name))
            .cloned(),
    );
    specs
}

/// A turn that ends early (stopped by the user or a spent budget, or failed) still used
/// what its model calls so far reported: it counts in the conversation's usage (`.info`,
/// a sub-agent's tokens in `.agents`) like a finished turn's.
fn account_unfinished(ctx: &mut RequestContext, total: Usage) {
    if total != Usage::default() {
        crate::usage::add_turn(&mut ctx.usage, &ctx.model.config, total);
    }
}

/// The event saying the agent run's budget is spent (`over`).
pub(super) fn budget_exhausted(over: &crate::usage::Exhausted) -> Event {
    Event::BudgetExhausted(loki_protocol::event::BudgetExhausted {
        budget: over.budget,
        limit: over.limit,
        used: over.used,
        message: over.to_string(),
    })
}

/// Charges the agent run's budget with one response; the first time it is spent, says so
/// (the budget has already cancelled the tree).
pub(super) fn charge_budget(ctx: &RequestContext, usage: Usage, emitter: &Sink<'_>) {
    let Some(budget) = &ctx.budget else { return };
    if let Some(over) = budget.charge(&ctx.model.config, usage) {
        emitter.emit(budget_exhausted(&over));
        emitter.flush();
    }
}

/// Most tool calls accepted in one response.
const MAX_PARALLEL_CALLS: usize = 128;

/// Tool calls of one response with ids (some providers omit them: the id made here is
/// unique across turns and conversations, see [`crate::client::call_id`]); index gaps
/// dropped.
fn finished_calls(calls: Vec<PartialCall>) -> Vec<ToolCall> {
    calls
        .into_iter()
        .filter(|c| !c.name.is_empty())
        .map(|c| ToolCall {
            id: if c.id.is_empty() {
                crate::client::call_id::generated()
            } else {
                c.id
            },
            name: c.name,
            arguments: c.arguments,
            signature: c.signature,
        })
        .collect()
}

/// The totals of a finished turn.
struct Finished {
    total: Usage,
    rounds: usize,
    speed: Option<Speed>,
}

impl Finished {
    /// Charges the turn to the conversation: its usage added to the totals, its speed
    /// kept for `.info`. Done before the turn is recorded, however it ended.
    fn charge(&self, ctx: &mut RequestContext) {
        crate::usage::add_turn(&mut ctx.usage, &ctx.model.config, self.total);
        ctx.last_speed = self.speed;
    }

    /// What the driver gets back from a turn that ended: the answer text, why it
    /// stopped and what it cost (no calls of the driver's own tools: `client_turn` adds
    /// those).
    fn outcome(self, collected: Collected) -> RunOutcome {
        RunOutcome {
            text: collected.text,
            usage: self.total,
            steps: self.rounds,
            finish_reason: collected.finish.as_ref().map(finish_name),
            client_calls: Vec::new(),
            speed: self.speed,
        }
    }
}

fn finished(total: Usage, rounds: usize, speed: &SpeedMeter) -> Finished {
    Finished {
        total,
        rounds,
        speed: speed.speed(),
    }
}

/// The tool calls of the last response, which will not run, and why.
struct Unrun<'a> {
    calls: Vec<ToolCall>,
    why: &'a str,
}

/// Ends the turn after a round whose tools all wrote nothing (script tools recorded as
/// `DONE`): as in Loki, the model is not asked again, since it has nothing new to read.
/// The rounds are the record; the answer is the text that came with the calls. (Never
/// an error: a `Result` so that `run_turn` returns it as it is.)
fn end_silent(
    ctx: &mut RequestContext,
    kind: &TurnKind,
    steps: Vec<Message>,
    collected: Collected,
    finished: Finished,
    emitter: &Sink<'_>,
) -> Result<RunOutcome, CoreError> {
    finished.charge(ctx);
    record(ctx, kind, steps, String::new(), Vec::new(), false);
    emitter.flush();
    Ok(finished.outcome(collected))
}

/// Records the final answer and reports the end of the turn.
fn finish_turn(
    ctx: &mut RequestContext,
    kind: &TurnKind,
    steps: Vec<Message>,
    collected: Collected,
    finished: Finished,
    Unrun { calls, why }: Unrun<'_>,
    emitter: &Sink<'_>,
) -> RunOutcome {
    if collected.text.is_empty() && calls.is_empty() {
        emitter.emit(Event::Notice(Notice::warning(
            "the model returned an empty answer",
        )));
    }
    if collected.finish == Some(FinishReason::Length) {
        emitter.emit(Event::Notice(Notice::warning(cut_off_warning(ctx))));
    }
    finished.charge(ctx);
    if calls.is_empty() {
        record(ctx, kind, steps, collected.text.clone(), calls, false);
    } else {
        // Calls that will not run (no tools enabled, or the round limit) still get an
        // answer each, or the provider would reject the saved history on the next turn.
        let mut steps = steps;
        let mut assistant = Message::text(Role::Assistant, collected.text.clone());
        for call in &calls {
            assistant.tool_calls.push(call.clone());
            steps.push(unrun_call(call, "not_run", why, emitter));
        }
        let at = steps.len() - calls.len();
        steps.insert(at, assistant);
        record(ctx, kind, steps, String::new(), Vec::new(), false);
    }
    emitter.flush();
    finished.outcome(collected)
}

/// The warning for an answer cut off at the output limit, with what carries on from the
/// front end that runs the conversation.
fn cut_off_warning(ctx: &RequestContext) -> String {
    use crate::conversation::CarryOn;
    let limit = ctx
        .max_output_tokens
        .or(ctx.model.config.max_output_tokens)
        .map_or_else(String::new, |n| format!(" ({n} tokens)"));
    let hint = match (ctx.carry_on, &ctx.session) {
        (CarryOn::DotContinue, _) => ".continue carries on".to_string(),
        (CarryOn::NextRun, Some(session)) => format!(
            "`loki -s {} continue` carries on; raise max_output_tokens for longer answers",
            session.name()
        ),
        (CarryOn::NextRun | CarryOn::RaiseLimit, _) => {
            "raise max_output_tokens for longer answers".to_string()
        }
    };
    format!("the answer was cut off at the model's output limit{limit} — {hint}")
}

/// Writes the outcome of a turn into the conversation. An interrupted answer is kept and
/// marked. (A failed turn that produced no text is not recorded at all.)
fn record(
    ctx: &mut RequestContext,
    kind: &TurnKind,
    steps: Vec<Message>,
    text: String,
    calls: Vec<ToolCall>,
    interrupted: bool,
) {
    if let Some(session) = &ctx.session {
        session.mark_dirty();
    }
    let mut assistant = Message::text(Role::Assistant, text.clone());
    assistant.tool_calls = calls;
    assistant.interrupted = interrupted;
    let has_steps = !steps.is_empty();
    if has_steps && text.is_empty() && assistant.tool_calls.is_empty() {
        // Stopped after tool results and before any new text: the rounds are the record.
        match kind {
            TurnKind::New(user) => {
                ctx.history.push(user.clone());
                ctx.history.extend(steps);
            }
            TurnKind::Regenerate => {
                ctx.history.pop();
                ctx.history.extend(steps);
            }
            TurnKind::Continue | TurnKind::Resume => ctx.history.extend(steps),
        }
        return;
    }
    match kind {
        TurnKind::New(user) => {
            ctx.history.push(user.clone());
            ctx.history.extend(steps);
            ctx.history.push(assistant);
        }
        TurnKind::Resume => {
            ctx.history.extend(steps);
            ctx.history.push(assistant);
        }
        _ if has_steps => {
            // A continued or regenerated answer that used tools: the rounds and the new
            // answer follow the old answer (or replace it).
            if matches!(kind, TurnKind::Regenerate) {
                ctx.history.pop();
            }
            ctx.history.extend(steps);
            ctx.history.push(assistant);
        }
        TurnKind::Continue => {
            if let Some(last) = ctx.history.last_mut() {
                last.append_text(&text);
                last.interrupted = interrupted;
            }
        }
        TurnKind::Regenerate => {
            ctx.history.pop();
            ctx.history.push(assistant);
        }
    }
}

/// The request for a side answer (a title, a summary, facts for memory): `messages`
/// with the given sampling, no tools, not streamed, no output limit of its own.
pub(super) fn side_request(
    messages: Vec<Message>,
    temperature: Option<f64>,
    top_p: Option<f64>,
) -> ChatRequest {
    ChatRequest {
        controls: Default::default(),
        messages,
        temperature,
        top_p,
        max_tokens: None,
        stream: false,
        tools: Vec::new(),
    }
}

/// A whole answer without tools or events (titles, summaries, memory extraction), from
/// `model` when given (`small_model`), else the conversation's; an agent run's budget is
/// charged with it.
pub(super) async fn complete_text_on(
    ctx: &RequestContext,
    model: Option<&(
        crate::client::Model,
        std::sync::Arc<dyn crate::client::Provider>,
    )>,
    request: &ChatRequest,
) -> Result<String, CoreError> {
    let collector = loki_protocol::emitter::CollectingEmitter::new();
    let silent = Sink::for_context(ctx, &collector);
    let mut collected = Collected::default();
    let (model, provider) = match model {
        Some((model, provider)) => (model, provider.as_ref()),
        None => (&ctx.model, ctx.provider.as_ref()),
    };
    let mut stream = open_stream_on(ctx, model, provider, request, &silent).await?;
    loop {
        let next = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return Err(CoreError::Cancelled),
            next = stream.next() => next,
        };
        match next {
            None => break,
            Some(Ok(batch)) => {
                for event in batch {
                    apply_event(event, &silent, &mut collected);
                }
            }
            Some(Err(e)) => return Err(e.into()),
        }
    }
    charge_budget(ctx, collected.usage, &silent);
    Ok(collected.text)
}

/// Opens the stream (with retries) and consumes it into `out`, forwarding deltas; a
/// finished stream is timed into `speed`.
async fn call_model(
    ctx: &RequestContext,
    request: &ChatRequest,
    emitter: &Sink<'_>,
    out: &mut Collected,
    speed: &mut SpeedMeter,
) -> Result<(), CoreError> {
    out.times = Some(CallTimes::start());
    let mut stream = open_stream(ctx, request, emitter).await?;
    loop {
        let next = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return Err(CoreError::Cancelled),
            next = stream.next() => next,
        };
        let batch = match next {
            None => {
                estimate_missing_usage(ctx, request, emitter, out);
                if let Some(times) = out.times {
                    speed.add(times, out.usage.output_tokens);
                }
                return Ok(());
            }
            Some(Ok(batch)) => batch,
            Some(Err(e)) => return Err(e.into()),
        };
        for event in batch {
            apply_event(event, emitter, out);
        }
        emitter.flush();
    }
}

/// A response that ended without usage (a server that gives none, or one not asked for
/// it) is counted here with the model's tokenizer, marked as estimated, so budgets,
/// `.info` and the JSON output see what it cost.
fn estimate_missing_usage(
    ctx: &RequestContext,
    request: &ChatRequest,
    emitter: &Sink<'_>,
    out: &mut Collected,
) {
    if out.usage != Usage::default() {
        return;
    }
    let counter = crate::tokens::Counter::for_model(ctx.model.real_name());
    let input = crate::session::compress::count_tokens(&request.messages, counter);
    let output = counter.count(&out.text)
        + counter.count(&out.reasoning)
        + out
            .calls
            .iter()
            .map(|c| counter.count(&c.name) + counter.count(&c.arguments))
            .sum::<usize>();
    out.usage = Usage {
        input_tokens: input as u64,
        output_tokens: output as u64,
        cached_tokens: 0,
        estimated: true,
    };
    emitter.emit(Event::Usage(out.usage));
}

fn apply_event(event: ProviderEvent, emitter: &Sink<'_>, out: &mut Collected) {
    if matches!(
        event,
        ProviderEvent::Text(_) | ProviderEvent::Reasoning(_) | ProviderEvent::ToolCallDelta { .. }
    ) && let Some(times) = out.times.as_mut()
    {
        times.token();
    }
    match event {
        ProviderEvent::Text(text) => {
            out.text.push_str(&text);
            emitter.emit(Event::AssistantDelta(TextDelta { text }));
        }
        ProviderEvent::Reasoning(text) => {
            out.reasoning.push_str(&text);
            emitter.emit(Event::ReasoningDelta(TextDelta { text }));
        }
        ProviderEvent::ToolCallDelta {
            index,
            id,
            name,
            arguments,
        } => {
            // A server's index is trusted only up to a sane number of parallel calls; the
            // rest are counted and reported.
            if index >= MAX_PARALLEL_CALLS {
                if index < MAX_PARALLEL_CALLS * 64 {
                    out.dropped_calls = out.dropped_calls.max(index + 1 - MAX_PARALLEL_CALLS);
                }
                return;
            }
            if out.calls.len() <= index {
                out.calls.resize_with(index + 1, PartialCall::default);
            }
            let call = &mut out.calls[index];
            if let Some(id) = id {
                call.id = id;
            }
            // The name arrives whole in the first fragment; some servers repeat it.
            if let Some(name) = name
                && call.name.is_empty()
            {
                call.name = name;
            }
            call.arguments.push_str(&arguments);
        }
        ProviderEvent::ReasoningSignature(signature) => out.reasoning_signature = Some(signature),
        ProviderEvent::ToolCallSignature { index, signature } => {
            if index < MAX_PARALLEL_CALLS {
                if out.calls.len() <= index {
                    out.calls.resize_with(index + 1, PartialCall::default);
                }
                out.calls[index].signature = Some(signature);
            }
        }
        ProviderEvent::Usage(usage) => {
            // Some servers repeat running totals; the last report of a response wins.
            out.usage = usage;
            emitter.emit(Event::Usage(usage));
        }
        ProviderEvent::Finish(reason) => out.finish = Some(reason),
    }
}

/// Calls the provider, retrying retryable errors per the client's policy; a model still
/// overloaded (429, 5xx) after its retries hands the call to the next of
/// `fallback_models`, and the one that answers is announced as `model_fallback`.
async fn open_stream(
    ctx: &RequestContext,
    request: &ChatRequest,
    emitter: &Sink<'_>,
) -> Result<ProviderStream, CoreError> {
    let mut result = open_stream_on(ctx, &ctx.model, ctx.provider.as_ref(), request, emitter).await;
    let first = ctx.model.id();
    // Why the conversation's model was given up: what the event reports.
    let mut first_reason = None;
    for (model, provider) in &ctx.fallbacks {
        let reason = match &result {
            Err(CoreError::Provider(err)) if overloaded(err) => short_reason(err),
            _ => return result,
        };
        let next = model.id();
        if next == first {
            continue;
        }
        tracing::warn!("{reason}; trying fallback model {next}");
        let reason = first_reason.get_or_insert(reason).clone();
        result = open_stream_on(ctx, model, provider.as_ref(), request, emitter).await;
        if result.is_ok() {
            emitter.emit(Event::ModelFallback(loki_protocol::event::ModelFallback {
                from: first,
                to: next,
                reason: loki_wire::secrets::redacted(reason),
            }));
            emitter.flush();
            break;
        }
    }
    result
}

/// Whether an error means the model is overloaded rather than the request wrong: what
/// another model may answer.
fn overloaded(err: &ProviderError) -> bool {
    matches!(
        err,
        ProviderError::RateLimited { .. } | ProviderError::Server { .. }
    )
}

/// [`open_stream`] on a given model and provider.
async fn open_stream_on(
    ctx: &RequestContext,
    model: &crate::client::Model,
    provider: &dyn crate::client::Provider,
    request: &ChatRequest,
    emitter: &Sink<'_>,
) -> Result<ProviderStream, CoreError> {
    let policy = provider.retry_policy();
    let mut attempt = 0;
    loop {
        let result = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return Err(CoreError::Cancelled),
            result = provider.chat(model, request) => result,
        };
        let err = match result {
            Ok(stream) => return Ok(stream),
            Err(err) => err,
        };
        attempt += 1;
        let Some(delay) = policy.delay_for(&err, attempt, fastrand::f64()) else {
            return Err(err.into());
        };
        emitter.emit(Event::Retry(loki_protocol::event::Retry {
            attempt,
            max: policy.max_retries,
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            reason: loki_wire::secrets::redacted(short_reason(&err)),
        }));
        emitter.flush();
        tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return Err(CoreError::Cancelled),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

fn short_reason(err: &ProviderError) -> String {
    match err {
        ProviderError::RateLimited { client, .. } => {
            format!("`{client}` is rate limiting (HTTP 429)")
        }
        ProviderError::Server { client, status, .. } => {
            format!("`{client}` answered HTTP {status}")
        }
        ProviderError::Connect { client, .. } => format!("cannot reach `{client}`"),
        ProviderError::Closed { client, .. } => {
            format!("`{client}` closed the connection before answering")
        }
        other => other.to_string(),
    }
}

fn finish_name(reason: &FinishReason) -> String {
    match reason {
        FinishReason::Stop => "stop".into(),
        FinishReason::Length => "length".into(),
        FinishReason::ToolCalls => "tool_calls".into(),
        FinishReason::ContentFilter => "content_filter".into(),
        FinishReason::Other(s) => s.clone(),
    }
}
