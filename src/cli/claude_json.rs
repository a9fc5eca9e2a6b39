//! `--output-format json --compat claude`: one Claude Code `result` object per run, as
//! `claude -p --output-format json` prints it (`type`, `subtype`, `is_error`, `result`,
//! `session_id`, `num_turns`, `total_cost_usd`, `usage`, `duration_ms`, …), built by the
//! same [`RunResult`] the Agent SDK mode sends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use loki_protocol::emitter::Emitter;
use loki_protocol::event::{AbortReason, ConversationId, Envelope, Event};
use loki_wire::message::Usage;

use crate::claude_names::result::{RunResult, error_subtype};
use crate::state::AppState;

/// What one run has done so far.
struct Run {
    started: Instant,
    model: String,
    session_id: Option<String>,
    answer: String,
    steps: usize,
    /// What a spent budget had cost when it stopped the run.
    budget_used: Option<f64>,
}

/// The emitter: a `result` line when each of the driver's runs ends.
pub struct ClaudeResult {
    state: Arc<AppState>,
    runs: Mutex<HashMap<ConversationId, Run>>,
    broken: std::sync::atomic::AtomicBool,
    /// Results waiting for [`ClaudeResult::release`]; a `session_id` that is only the
    /// conversation's id is provisional (a plain one-shot's history entry is known at close).
    held: Option<super::headless::Held>,
}

impl ClaudeResult {
    /// Costs are priced with the models of `state`.
    pub fn new(state: Arc<AppState>) -> Self {
        Self {
            state,
            runs: Mutex::new(HashMap::new()),
            broken: std::sync::atomic::AtomicBool::new(false),
            held: None,
        }
    }

    /// Results written when [`ClaudeResult::release`] is called rather than at once.
    pub fn held(self) -> Self {
        Self {
            held: Some(super::headless::Held::default()),
            ..self
        }
    }

    /// Writes the held results, a `session_id` that was only the conversation's id
    /// replaced by `session` (the session the closed conversation was kept in), so that
    /// `--resume` takes it.
    pub fn release(&self, session: Option<&str>) {
        if let Some(held) = &self.held {
            for result in held.take(session) {
                self.print(&result);
            }
        }
    }

    fn print(&self, result: &serde_json::Value) {
        let mut line = result.to_string();
        line.push('\n');
        if super::headless::write_stdout(line.as_bytes()) {
            self.broken
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// True when stdout was closed by the reader.
    pub fn broken_pipe(&self) -> bool {
        self.broken.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// What `usage` costs on `model`, when its prices are known.
    fn cost(&self, model: &str, usage: Usage) -> f64 {
        self.state
            .providers
            .resolve(model, crate::config::clients::ModelKind::Chat)
            .ok()
            .and_then(|m| crate::usage::cost_of(&m.config, usage))
            .unwrap_or(0.0)
    }

    /// Writes the `result` of `run`.
    fn write(&self, conversation: &ConversationId, run: &Run, ending: Ending<'_>) {
        let provisional = run.session_id.is_none();
        let session = run
            .session_id
            .clone()
            .unwrap_or_else(|| conversation.to_string());
        let result = RunResult {
            subtype: ending.subtype,
            text: ending.text,
            num_turns: run.steps,
            usage: ending.usage,
            total_cost_usd: ending.cost,
            session_id: &session,
            duration_ms: u64::try_from(run.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            finish_reason: ending.finish_reason,
        }
        .to_json();
        match &self.held {
            Some(held) => held.push(result, provisional),
            None => self.print(&result),
        }
    }
}

/// How a run ended.
struct Ending<'a> {
    subtype: &'a str,
    text: &'a str,
    usage: Usage,
    cost: f64,
    finish_reason: Option<&'a str>,
}

impl Emitter for ClaudeResult {
    fn emit(&self, envelope: Envelope) {
        // Sub-agents work inside their calls; their runs are not the result.
        if envelope.parent.is_some() {
            return;
        }
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        let conversation = envelope.conversation;
        if let Event::TurnStarted(started) = envelope.event {
            runs.insert(
                conversation,
                Run {
                    started: Instant::now(),
                    model: started.model,
                    session_id: started.session_id,
                    answer: String::new(),
                    steps: 0,
                    budget_used: None,
                },
            );
            return;
        }
        let Some(run) = runs.get_mut(&conversation) else {
            return;
        };
        match envelope.event {
            Event::ModelCallStarted(call) => run.steps = call.round,
            Event::AssistantDelta(delta) => run.answer.push_str(&delta.text),
            Event::BudgetExhausted(over) => run.budget_used = Some(over.used),
            Event::TurnFinished(done) => {
                let budget_spent = run.budget_used.is_some();
                let cost = done.cost_usd.unwrap_or(0.0);
                let ending = Ending {
                    subtype: if budget_spent {
                        "error_max_budget_usd"
                    } else {
                        "success"
                    },
                    text: &run.answer,
                    usage: done.usage,
                    cost,
                    finish_reason: done.finish_reason.as_deref(),
                };
                self.write(&conversation, run, ending);
                runs.remove(&conversation);
            }
            Event::TurnAborted(aborted) => {
                let usage = aborted.usage.unwrap_or_default();
                let error = match aborted.reason {
                    AbortReason::Cancelled => "interrupted".to_string(),
                    AbortReason::Error => aborted.error.unwrap_or_default(),
                };
                let cost = run
                    .budget_used
                    .unwrap_or_else(|| self.cost(&run.model, usage));
                let ending = Ending {
                    subtype: error_subtype(&error, run.budget_used.is_some()),
                    text: &error,
                    usage,
                    cost,
                    finish_reason: None,
                };
                self.write(&conversation, run, ending);
                runs.remove(&conversation);
            }
            _ => {}
        }
    }
}
