//! The event vocabulary every front end consumes — the public schema of
//! `--output-format stream-json` (see `docs/events.md`).
//!
//! Every event travels in an [`Envelope`] naming the conversation it belongs to. Each
//! run of `Engine::run` emits exactly one `turn_started` first and
//! exactly one `turn_finished` or `turn_aborted` last — also when it fails before the
//! model is called. In between: one `model_call_started` per model call (one per tool
//! round), text and reasoning deltas, `tool_call_started` / `tool_call_progress` /
//! `tool_call_finished` keyed by `call_id`, retries, session events and notices.

use std::sync::Arc;

use serde::Serialize;

use loki_wire::message::Usage;

/// Which conversation something belongs to (`c1`, `c2`, …): unique within the process.
pub type ConversationId = Arc<str>;

/// `c1`, `c2`, …: conversation ids, unique within the process.
pub fn next_conversation_id() -> ConversationId {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("c{n}").into()
}

/// Which run of `Engine::run` an event belongs to: `r1`, `r2`, …, unique
/// within the process.
pub type RunId = std::sync::Arc<str>;

/// An event, the conversation it belongs to, that conversation's parent (for a
/// sub-conversation) and the run it happened in (absent for events outside a run, such as
/// a session saved by a command). Serialised flat:
/// `{"conversation":"c2","parent":"c1","run":"r3","type":"assistant_delta","text":"hi"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Envelope {
    /// The conversation.
    pub conversation: ConversationId,
    /// The conversation that started this one, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<ConversationId>,
    /// The agent the conversation runs, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<std::sync::Arc<str>>,
    /// The run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<RunId>,
    /// What happened.
    #[serde(flatten)]
    pub event: Event,
}

impl Envelope {
    /// An envelope for `event` of `conversation`, with no parent and outside a run.
    pub fn new(conversation: ConversationId, event: Event) -> Self {
        Self {
            conversation,
            parent: None,
            agent: None,
            run: None,
            event,
        }
    }
}

/// `r1`, `r2`, …: run ids, unique within the process.
pub fn next_run_id() -> RunId {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("r{n}").into()
}

/// Something that happened during a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The run began (exactly once per run, before anything else).
    TurnStarted(TurnStarted),
    /// A model call begins (once, or once per tool round).
    ModelCallStarted(ModelCallStarted),
    /// Answer text, in arrival order. Emitted for every text delta of the provider.
    AssistantDelta(TextDelta),
    /// Reasoning ("thinking") text, in arrival order.
    ReasoningDelta(TextDelta),
    /// The model asked for a tool call (its arguments are complete). Emitted before the
    /// call is approved or refused.
    ToolCallStarted(ToolCallStarted),
    /// A call needs approval: whoever drives the conversation is asked (a terminal
    /// menu, a line of `--input-format stream-json`, an HTTP client, a parent agent).
    ToolCallApprovalRequested(ToolCallApprovalRequested),
    /// The answer to [`Event::ToolCallApprovalRequested`].
    ToolCallApprovalDecided(ToolCallApprovalDecided),
    /// A running call reported progress (MCP progress notifications).
    ToolCallProgress(ToolCallProgress),
    /// A tool call ended — ran, failed, or was refused; its result went back to the model.
    ToolCallFinished(ToolCallFinished),
    /// Token usage reported by the provider for one model response.
    Usage(Usage),
    /// A failed model call is tried again after a pause.
    Retry(Retry),
    /// The model stayed overloaded (429, 5xx) after its retries, so the call went to the
    /// next of `fallback_models`, which answered.
    ModelFallback(ModelFallback),
    /// The session's older messages are being summarised.
    SessionCompressing,
    /// The session was compressed.
    SessionCompressed(SessionCompressed),
    /// The temporary session is being given a title.
    SessionAutonaming,
    /// The temporary session got a title.
    SessionAutonamed(SessionAutonamed),
    /// The session was written to disk.
    SessionSaved(SessionSaved),
    /// An informational or warning line for the user (skipped files, unavailable tools…).
    Notice(Notice),
    /// The run completed (exactly once per successful run, last).
    TurnFinished(TurnFinished),
    /// The run stopped early — cancelled or failed (exactly once per such run, last).
    TurnAborted(TurnAborted),
    /// A sub-agent was started (the envelope names its new conversation and its parent).
    AgentStarted(AgentStarted),
    /// A sub-agent ended; its answer (or why it has none) goes to the parent.
    AgentFinished(AgentFinished),
    /// A question from a sub-agent waits for the user (`user__*`, escalations): answer
    /// it with an `answer` line on `--input-format stream-json`.
    QuestionAsked(QuestionAsked),
    /// The question was answered, refused or timed out.
    QuestionAnswered(QuestionAnswered),
    /// The agent run's budget (`max_tokens`, `max_cost`) was spent: the run and its
    /// sub-agents stop.
    BudgetExhausted(BudgetExhausted),
    /// The turn changed files through loki's tools; what they held before is kept for a
    /// rewind (sent before `turn_finished`).
    CheckpointCreated(CheckpointCreated),
}

/// Payload of [`Event::CheckpointCreated`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckpointCreated {
    /// The turn's number in its conversation (1 for the first prompt).
    pub turn: usize,
    /// The files it changed (absolute paths).
    pub files: Vec<String>,
}

/// Payload of [`Event::AgentStarted`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentStarted {
    /// The id the parent uses for it (`agent__check`, `agent__collect`).
    pub id: String,
    /// The task it was given.
    pub task: String,
}

/// Payload of [`Event::AgentFinished`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentFinished {
    /// The id the parent uses for it.
    pub id: String,
    /// `completed`, `failed` or `cancelled`.
    pub status: &'static str,
    /// Its answer (for `completed`), or what it had produced when it stopped.
    pub output: String,
    /// Why it failed, for `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Tokens it spent, its own sub-agents included.
    pub tokens: u64,
    /// What it cost in US dollars, when its models' prices are known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// How long it ran, in milliseconds.
    pub elapsed_ms: u64,
}

/// Payload of [`Event::QuestionAsked`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuestionAsked {
    /// Answer it by this id.
    pub question_id: String,
    /// Who asks (`c1 › c4 (explore)`).
    pub from: String,
    /// `text`, `confirm`, `select` or `multi_select`.
    pub kind: &'static str,
    /// The question.
    pub prompt: String,
    /// The choices, for `select` and `multi_select`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// Seconds until the fallback answer is used.
    pub timeout_secs: u64,
}

impl QuestionAsked {
    /// `question` of `from`, to be answered by `question_id` within `timeout_secs` (0: no
    /// limit).
    pub fn new(question_id: String, from: &str, question: &Question, timeout_secs: u64) -> Self {
        let (kind, options) = match question {
            Question::Text { .. } => ("text", Vec::new()),
            Question::Confirm { .. } => ("confirm", Vec::new()),
            Question::Select { options, .. } => ("select", options.clone()),
            Question::MultiSelect { options, .. } => ("multi_select", options.clone()),
        };
        Self {
            question_id,
            from: from.to_string(),
            kind,
            prompt: question.prompt().to_string(),
            options,
            timeout_secs,
        }
    }
}

/// Payload of [`Event::QuestionAnswered`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuestionAnswered {
    /// The question.
    pub question_id: String,
    /// `answered`, `refused` or `timed_out`.
    pub outcome: &'static str,
}

/// Payload of [`Event::BudgetExhausted`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetExhausted {
    /// `max_tokens` or `max_cost`.
    pub budget: &'static str,
    /// The limit.
    pub limit: f64,
    /// What was spent when it was passed.
    pub used: f64,
    /// One line for the user.
    pub message: String,
}

/// Payload of [`Event::TurnStarted`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnStarted {
    /// `client:model`.
    pub model: String,
    /// Whether the answer will stream.
    pub stream: bool,
    /// The open session's id, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// Payload of [`Event::ModelCallStarted`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelCallStarted {
    /// `client:model`.
    pub model: String,
    /// 1 for the first call of the run, 2 after the first tool round, …
    pub round: usize,
}

/// Payload of text deltas.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextDelta {
    /// The new text.
    pub text: String,
}

/// Payload of [`Event::ToolCallStarted`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallStarted {
    /// Provider call id.
    pub call_id: String,
    /// Function name.
    pub name: String,
    /// JSON arguments as text.
    pub arguments: String,
}

/// Payload of [`Event::ToolCallApprovalRequested`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallApprovalRequested {
    /// Provider call id: the approval is answered by it.
    pub call_id: String,
    /// The tool as shown (an MCP call by the server's own tool name).
    pub name: String,
    /// Exactly what is approved, as one line: `<tool> wants to <what it does>`.
    pub text: String,
    /// A longer preview (a diff for writes and patches), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// Whether "allow always" may be answered.
    pub allow_always: bool,
}

/// Payload of [`Event::ToolCallApprovalDecided`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallApprovalDecided {
    /// Provider call id.
    pub call_id: String,
    /// `allow`, `allow_always`, `deny`, `cancel` or `refused`.
    pub decision: &'static str,
    /// The message for the model (a denial with a reason, a refusal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Payload of [`Event::ToolCallProgress`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallProgress {
    /// Provider call id.
    pub call_id: String,
    /// One line, e.g. ``MCP `docs`: 1/3 indexing``.
    pub message: String,
}

/// Why a tool call produced no result, for programs (`kind`) and people (`message`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ToolFailure {
    /// `unknown_tool`, `bad_arguments`, `failed`, `exited`, `declined`, `refused`,
    /// `loop`, `cancelled` or `not_run`.
    pub kind: &'static str,
    /// One line.
    pub message: String,
}

/// Payload of [`Event::ToolCallFinished`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallFinished {
    /// Provider call id.
    pub call_id: String,
    /// Function name.
    pub name: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// The result as sent to the model.
    pub result: String,
    /// What went wrong, when it did not succeed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolFailure>,
}

/// Payload of [`Event::Retry`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Retry {
    /// Which retry this is (1-based).
    pub attempt: u32,
    /// Most retries.
    pub max: u32,
    /// The pause before it, in milliseconds.
    pub delay_ms: u64,
    /// What failed, in a few words.
    pub reason: String,
}

impl Retry {
    /// The retry as a warning line: `HTTP 429; retrying in 1.0s (1/3)`.
    pub fn notice(&self) -> Notice {
        Notice::warning(format!(
            "{}; retrying in {:.1}s ({}/{})",
            self.reason,
            std::time::Duration::from_millis(self.delay_ms).as_secs_f64(),
            self.attempt,
            self.max
        ))
    }
}

/// Payload of [`Event::ModelFallback`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelFallback {
    /// The model that failed (`client:model`).
    pub from: String,
    /// The model that answered instead.
    pub to: String,
    /// Why `from` was given up, in a few words.
    pub reason: String,
}

impl ModelFallback {
    /// The fallback as a warning line: `` `a` answered HTTP 503; answered by `b` ``.
    pub fn notice(&self) -> Notice {
        Notice::warning(format!(
            "{} ({}); answered by {}",
            self.reason, self.from, self.to
        ))
    }
}

/// Payload of [`Event::SessionCompressed`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionCompressed {
    /// Tokens of the conversation before.
    pub tokens_before: usize,
    /// And after.
    pub tokens_after: usize,
}

/// Payload of [`Event::SessionAutonamed`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionAutonamed {
    /// The title.
    pub title: String,
}

/// Payload of [`Event::SessionSaved`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSaved {
    /// Its name.
    pub name: String,
    /// Its id.
    pub id: String,
    /// The file written.
    pub path: String,
    /// Set when the conversation had to be saved as a new session (another writer
    /// changed the old one meanwhile): why, in one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forked: Option<String>,
}

/// Severity of a [`Notice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    /// Neutral information.
    Info,
    /// Something the user may want to act on.
    Warning,
    /// What is being waited for right now (shown as the spinner's label on a terminal).
    Status,
}

/// Payload of [`Event::Notice`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Notice {
    /// Severity.
    pub level: NoticeLevel,
    /// One line.
    pub message: String,
}

impl Notice {
    /// An informational notice. Known secrets in the text are redacted (see
    /// [`loki_wire::secrets`]): a notice can quote a provider's or a tool's message.
    pub fn info(message: impl Into<String>) -> Self {
        Self {
            level: NoticeLevel::Info,
            message: loki_wire::secrets::redacted(message.into()),
        }
    }

    /// A passing status (what is being waited for): on a terminal it becomes the spinner's
    /// label instead of a line of its own. Redacted like [`Notice::info`].
    pub fn status(message: impl Into<String>) -> Self {
        Self {
            level: NoticeLevel::Status,
            message: loki_wire::secrets::redacted(message.into()),
        }
    }

    /// A warning, redacted like [`Notice::info`].
    pub fn warning(message: impl Into<String>) -> Self {
        Self {
            level: NoticeLevel::Warning,
            message: loki_wire::secrets::redacted(message.into()),
        }
    }
}

/// Payload of [`Event::TurnFinished`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnFinished {
    /// Usage summed over every model response of the run.
    pub usage: Usage,
    /// The provider's finish reason of the last response (`stop`, `length`, …).
    pub finish_reason: Option<String>,
    /// What the run cost in US dollars, when the model's prices are known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// How fast the model answered: time to first token, output tokens per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed: Option<Speed>,
}

/// Why a run was aborted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortReason {
    /// The user pressed Ctrl-C (or the program driving loki cancelled).
    Cancelled,
    /// The input, a session, the provider or the configuration failed; `error` says why.
    Error,
}

/// Payload of [`Event::TurnAborted`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnAborted {
    /// Why.
    pub reason: AbortReason,
    /// The one-line error message, for `error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The error's stable code (`upstream_error`, `not_found`, …), for `error`: what the
    /// server's error bodies say for the same failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    /// The answer text received before the stop.
    pub partial: String,
    /// What the run cost before it stopped (model calls and MCP sampling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<loki_wire::message::Usage>,
}

/// The speed of a finished turn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Speed {
    /// Milliseconds from sending the turn's first request to the first token of its
    /// answer.
    pub time_to_first_token_ms: u64,
    /// Output tokens per second of generation, when the answer was streamed over a
    /// measurable time (a non-streamed answer arrives at once and has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens_per_second: Option<f64>,
}

/// What is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    /// Free text.
    Text {
        /// The question.
        prompt: String,
    },
    /// Yes or no.
    Confirm {
        /// The question.
        prompt: String,
    },
    /// One of `options`.
    Select {
        /// The question.
        prompt: String,
        /// The choices.
        options: Vec<String>,
    },
    /// Any of `options`.
    MultiSelect {
        /// The question.
        prompt: String,
        /// The choices.
        options: Vec<String>,
    },
}

impl Question {
    /// The question's text.
    pub fn prompt(&self) -> &str {
        match self {
            Self::Text { prompt }
            | Self::Confirm { prompt }
            | Self::Select { prompt, .. }
            | Self::MultiSelect { prompt, .. } => prompt,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_flat_with_type_tag_and_conversation() {
        let e = Envelope::new(
            "c1".into(),
            Event::AssistantDelta(TextDelta { text: "hi".into() }),
        );
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"conversation":"c1","type":"assistant_delta","text":"hi"}"#
        );
        let e = Envelope {
            conversation: "c2".into(),
            parent: Some("c1".into()),
            agent: None,
            run: Some("r4".into()),
            event: Event::TurnAborted(TurnAborted {
                reason: AbortReason::Cancelled,
                error: None,
                code: None,
                partial: "p".into(),
                usage: None,
            }),
        };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"conversation":"c2","parent":"c1","run":"r4","type":"turn_aborted","reason":"cancelled","partial":"p"}"#
        );
        let e = Envelope::new("c3".into(), Event::SessionCompressing);
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"conversation":"c3","type":"session_compressing"}"#
        );
    }
}
