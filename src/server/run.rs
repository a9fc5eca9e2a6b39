//! Running one request's conversation: it runs as a task of its own (so a session is
//! saved even when the client goes away), its events go to a channel the response reads,
//! and the client going away cancels it. Approvals of its tool calls wait for an HTTP
//! request naming the call (or the timeout), never a terminal.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::Server;
use crate::conversation::{Conversation, ConversationSpec, Op, Reply};
use crate::engine::event::Envelope;
use crate::engine::{CoreError, Emitter, RunOutcome, UserInput};
use crate::tool::approve::{
    ApprovalRequest, ApproveAll, Approver, ChannelApprover, Decision, DenyAll,
};

/// A run whose tool calls may wait for an HTTP approval.
#[derive(Debug, Clone)]
pub(super) struct RunKey {
    /// The request's id (`req_…`, the `started` event's `request_id`).
    pub id: String,
    /// The subject that started it: the only one who may answer its calls.
    pub owner: String,
    /// The session it runs in.
    pub session: Option<String>,
}

/// A run waiting for approvals.
pub(super) struct Waiting {
    owner: String,
    session: Option<String>,
    approver: Arc<ChannelApprover>,
}

/// Which of a caller's runs an approval is for.
#[derive(Debug, Clone)]
pub(super) enum Where {
    /// Whichever has a call of that id waiting.
    Any,
    /// The run of this request id.
    Run(String),
    /// A run in this session.
    Session(String),
}

/// What became of an approval.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Decided {
    /// The call was answered.
    Answered,
    /// None of the caller's runs is waiting on that call.
    NotWaiting,
    /// Several of the caller's runs wait on a call with that id: these run ids.
    Ambiguous(Vec<String>),
}

/// How tool calls that need approval are decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalPolicy {
    /// A `tool_call_approval_requested` event, answered by `POST …/approvals/{call_id}`.
    #[default]
    Ask,
    /// Every call runs.
    Auto,
    /// Every call that needs approval is refused.
    Deny,
}

impl ApprovalPolicy {
    /// Its name: `ask`, `auto` or `deny`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ask => "ask",
            Self::Auto => "auto",
            Self::Deny => "deny",
        }
    }

    /// `ask`, `auto` or `deny`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "ask" => Some(Self::Ask),
            "auto" => Some(Self::Auto),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }
}

/// A [`ChannelApprover`] that gives up after a while.
struct TimedApprover {
    inner: Arc<ChannelApprover>,
    timeout: Duration,
}

impl Approver for TimedApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            match tokio::time::timeout(self.timeout, self.inner.approve(request)).await {
                Ok(decision) => decision,
                Err(_) => Decision::Refuse(format!(
                    "no approval arrived within {} s; the call was not run",
                    self.timeout.as_secs()
                )),
            }
        })
    }
}

/// Turns one event into what the response sends (SSE text).
type Format = Box<dyn Fn(&Envelope) -> Vec<String> + Send + Sync>;

/// Sends each event, formatted by the endpoint, to the response; cancels the run when
/// the client has gone.
pub struct ChannelEmitter {
    tx: UnboundedSender<String>,
    format: Format,
    cancel: CancellationToken,
    /// Cancelled when the emitter goes, so the watcher lets go of its sender and the
    /// response ends.
    done: CancellationToken,
}

impl Drop for ChannelEmitter {
    fn drop(&mut self) {
        self.done.cancel();
    }
}

impl ChannelEmitter {
    /// Events formatted by `format` into `tx`; `cancel` stops the run once `tx` is closed.
    pub fn new(
        tx: UnboundedSender<String>,
        format: impl Fn(&Envelope) -> Vec<String> + Send + Sync + 'static,
        cancel: CancellationToken,
    ) -> Self {
        // The client going away is noticed even while nothing is sent.
        let watch = tx.clone();
        let stop = cancel.clone();
        let done = CancellationToken::new();
        let finished = done.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = watch.closed() => stop.cancel(),
                () = stop.cancelled() => {}
                () = finished.cancelled() => {}
            }
        });
        Self {
            tx,
            format: Box::new(format),
            cancel,
            done,
        }
    }

    /// Sends `text` as it is.
    pub fn send(&self, text: String) {
        if self.tx.send(text).is_err() {
            self.cancel.cancel();
        }
    }
}

impl Emitter for ChannelEmitter {
    fn emit(&self, envelope: Envelope) {
        for text in (self.format)(&envelope) {
            self.send(text);
        }
    }
}

/// What a run left.
pub struct Ran {
    /// How the run went (an error before it started included).
    pub result: Result<RunOutcome, CoreError>,
    /// The session it ran in: id and name.
    pub session: Option<(String, String)>,
    /// The conversation's id.
    pub conversation: String,
    /// The run was stopped by `request_timeout_seconds`, of this many seconds.
    pub timed_out: Option<u64>,
}

impl Ran {
    /// The API error of a failed run (see [`run_error`]).
    pub fn api_error(&self, e: &CoreError) -> super::reply::ApiError {
        run_error(self.timed_out, e)
    }
}

/// The API error of a run that failed with `e`: one the request timeout stopped
/// (`timed_out`, its limit in seconds) is `504 request_timeout`, not a cancellation.
pub fn run_error(timed_out: Option<u64>, e: &CoreError) -> super::reply::ApiError {
    match (timed_out, e) {
        (Some(limit), CoreError::Cancelled) => super::reply::ApiError::new(
            axum::http::StatusCode::GATEWAY_TIMEOUT,
            "request_timeout",
            format!(
                "the request ran past request_timeout_seconds ({limit} s) and was stopped; what arrived is kept"
            ),
        ),
        _ => super::reply::ApiError::from(e),
    }
}

impl Server {
    /// The approver for `policy`, registered for `run` while it lasts when it asks:
    /// only `run.owner` may answer its calls.
    pub(super) fn approver(&self, policy: ApprovalPolicy, run: &RunKey) -> Arc<dyn Approver> {
        match policy {
            ApprovalPolicy::Auto => Arc::new(ApproveAll),
            ApprovalPolicy::Deny => Arc::new(DenyAll),
            ApprovalPolicy::Ask => {
                let channel = Arc::new(ChannelApprover::new());
                if let Ok(mut approvals) = self.approvals.lock() {
                    approvals.insert(
                        run.id.clone(),
                        Waiting {
                            owner: run.owner.clone(),
                            session: run.session.clone(),
                            approver: Arc::clone(&channel),
                        },
                    );
                }
                Arc::new(TimedApprover {
                    inner: channel,
                    timeout: Duration::from_secs(self.api().approval_timeout_seconds.max(1)),
                })
            }
        }
    }

    /// Answers the waiting call `call_id` of a run `caller` started — that run (`at`
    /// names its id, or the session it runs in), or any of the caller's. Two of the
    /// caller's runs waiting on the same call id (providers number calls per answer) are
    /// answered neither: the caller is told their run ids.
    pub(super) fn decide(
        &self,
        caller: &str,
        at: &Where,
        call_id: &str,
        decision: Decision,
    ) -> Decided {
        let Ok(approvals) = self.approvals.lock() else {
            return Decided::NotWaiting;
        };
        let candidates: Vec<(&String, &Waiting)> = approvals
            .iter()
            .filter(|(_, waiting)| waiting.owner == caller)
            .filter(|(run, waiting)| match at {
                Where::Any => true,
                Where::Run(id) => *run == id,
                Where::Session(id) => waiting.session.as_deref() == Some(id.as_str()),
            })
            .filter(|(_, waiting)| waiting.approver.waiting().iter().any(|c| c == call_id))
            .collect();
        match candidates.as_slice() {
            [] => Decided::NotWaiting,
            [(_, waiting)] => match waiting.approver.answer(call_id, decision) {
                Ok(()) => Decided::Answered,
                Err(_) => Decided::NotWaiting,
            },
            several => {
                let mut runs: Vec<String> = several.iter().map(|(run, _)| (*run).clone()).collect();
                runs.sort();
                Decided::Ambiguous(runs)
            }
        }
    }

    /// Opens the conversation `spec` describes and runs `input` in it, as a task; the
    /// events go to `emitter`. The run stops when `cancel` is cancelled (the client went
    /// away, or the server shuts down); its session is saved either way.
    pub(super) fn start(
        self: &Arc<Self>,
        mut spec: ConversationSpec,
        input: UserInput,
        emitter: Arc<dyn Emitter>,
        cancel: CancellationToken,
        approvals_key: String,
    ) -> tokio::task::JoinHandle<Ran> {
        let server = Arc::clone(self);
        // A run may take `request_timeout_seconds` at most.
        let limit = Duration::from_secs(server.api().request_timeout_seconds.max(1));
        let timer = cancel.clone();
        let timed_out = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fired = Arc::clone(&timed_out);
        tokio::spawn(async move {
            tokio::select! {
                () = tokio::time::sleep(limit) => {
                    fired.store(true, std::sync::atomic::Ordering::Relaxed);
                    timer.cancel();
                }
                () = timer.cancelled() => {}
            }
        });
        let run_token = cancel.clone();
        spec.cancel = Some(cancel);
        spec.force_save = true;
        spec.hold_session = true;
        let confined = server.api().tools.root.clone().map(|root| {
            let sandbox = server.sandbox_for(&root);
            spec.cwd = Some(root);
            sandbox
        });
        match confined {
            Some(Ok(sandbox)) => spec.sandbox = sandbox,
            Some(Err(e)) => {
                // No confinement, no tools: a run never falls back to unconfined commands.
                tracing::warn!("tools are off for this run: {e}");
                spec.no_tools = true;
            }
            None => {}
        }
        tokio::spawn(async move {
            let _active = server.metrics.turn();
            let id = spec
                .id
                .clone()
                .unwrap_or_else(crate::context::next_conversation_id);
            spec.id = Some(id.clone());
            let mut ran = Ran {
                result: Err(CoreError::Cancelled),
                session: None,
                conversation: id.to_string(),
                timed_out: None,
            };
            spec.no_tools |= !server.api().tools.enabled;
            let mut conversation = match Conversation::open(&server.state, spec).await {
                Ok(conversation) => conversation,
                Err(e) => {
                    ran.result = Err(e);
                    server.forget(&approvals_key);
                    return ran;
                }
            };
            let result = conversation
                .submit(Op::prompt(input), emitter.as_ref())
                .await
                .map(Reply::into_outcome);
            if let Ok(outcome) = &result {
                let cost = conversation.cost_of(outcome.usage);
                server.metrics.count(outcome, cost);
                if let Some(speed) = outcome.speed {
                    tracing::info!(
                        run = %approvals_key,
                        ttft_ms = speed.time_to_first_token_ms,
                        tokens_per_s = speed.output_tokens_per_second.map_or_else(String::new, |r| format!("{r:.1}")),
                        output_tokens = outcome.usage.output_tokens,
                        "model speed"
                    );
                }
            }
            let closed = conversation.close(emitter.as_ref()).await;
            ran.session = closed.session.clone();
            ran.result = match (result, closed.into_saved()) {
                (Ok(outcome), Ok(_)) => Ok(outcome),
                (Err(e), _) | (Ok(_), Err(e)) => Err(e),
            };
            server.forget(&approvals_key);
            if timed_out.load(std::sync::atomic::Ordering::Relaxed) {
                ran.timed_out = Some(limit.as_secs());
            }
            // Lets the run's timer go.
            run_token.cancel();
            ran
        })
    }

    fn forget(&self, key: &str) {
        if let Ok(mut approvals) = self.approvals.lock()
            && let Some(waiting) = approvals.remove(key)
        {
            waiting.approver.close();
        }
    }
}

/// The loki event stream: every event as `event: <type>` with the envelope as data (the
/// schema of `--output-format stream-json`), less what only the server's host should
/// know (the path of a saved session file); a session's name is shown without
/// `namespace`, the caller's own prefix in the store. `done` is not among them: the run
/// sends it once the session is saved (`finish_stream`), so a failed save is never
/// followed by a quiet `done`.
pub fn loki_event(envelope: &Envelope, namespace: &str) -> Option<(String, String)> {
    let mut value = serde_json::to_value(envelope).ok()?;
    let kind = value["type"].as_str().unwrap_or("event").to_string();
    if kind == "session_saved"
        && let Some(fields) = value.as_object_mut()
    {
        fields.remove("path");
        if let Some(serde_json::Value::String(name)) = fields.get_mut("name")
            && let Some(alias) = name.strip_prefix(namespace)
            && !namespace.is_empty()
        {
            *name = alias.to_string();
        }
    }
    Some((kind, value.to_string()))
}

/// The end of a streamed run, after its session was saved: an `error` event when the run
/// or the save failed (the request timeout says so as `request_timeout`), then `done`.
pub fn finish_stream(ran: &Ran) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Err(e) = &ran.result {
        let error = ran.api_error(e);
        let data = serde_json::json!({"error": {"code": error.code, "message": error.message}});
        out.push(("error".to_string(), data.to_string()));
    }
    out.push(("done".to_string(), "{}".to_string()));
    out
}
