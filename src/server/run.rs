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
use crate::conversation::{Conversation, ConversationSpec, Remote};
use crate::error::CoreError;
use crate::tool::approve::{
    ApprovalRequest, ApproveAll, Approver, ChannelApprover, DenyAll, NotWaiting,
};
use loki_protocol::emitter::Emitter;
use loki_protocol::event::Envelope;
use loki_protocol::op::Decision;
use loki_protocol::op::Op;
use loki_protocol::op::{RunOptions, RunOutcome, UserInput};

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

/// A run this instance holds open, by request id: who may answer it, and the
/// conversation's [`Remote`], through which its approvals and answers go as ops.
pub(super) struct Live {
    owner: String,
    session: Option<String>,
    remote: Remote,
    /// The calls waiting for an HTTP approval (a run that asks).
    asks: Option<Arc<HttpApprover>>,
}

/// One request's run: what it sends, in which conversation, who started it and how its
/// tool calls are approved.
pub(super) struct Run {
    /// The conversation.
    pub spec: ConversationSpec,
    /// The prompt.
    pub input: UserInput,
    /// Who started it, and where.
    pub key: RunKey,
    /// How its calls that need approval are decided.
    pub approvals: ApprovalPolicy,
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

/// The approver of a run that asks: each call waits for `POST …/approvals/{call_id}`
/// (delivered as an [`Op::Approve`] through the conversation's [`Remote`]) or gives up
/// after `timeout`.
pub(super) struct HttpApprover {
    inner: ChannelApprover,
    timeout: Duration,
}

impl HttpApprover {
    /// The calls waiting for a decision.
    fn waiting(&self) -> Vec<String> {
        self.inner.waiting()
    }
}

impl Approver for HttpApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        // Registered now, before the request is announced (see the announcing approver).
        let decide = self.inner.approve(request);
        Box::pin(async move {
            match tokio::time::timeout(self.timeout, decide).await {
                Ok(decision) => decision,
                Err(_) => Decision::Refuse(format!(
                    "no approval arrived within {} s; the call was not run",
                    self.timeout.as_secs()
                )),
            }
        })
    }

    fn answer_call(&self, call_id: &str, decision: Decision) -> Result<(), NotWaiting> {
        self.inner.answer(call_id, decision)
    }

    fn input_ended(&self) {
        self.inner.close();
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
    /// The approver for `policy`; for one that asks, also the handle that lists what waits.
    fn approver(&self, policy: ApprovalPolicy) -> (Arc<dyn Approver>, Option<Arc<HttpApprover>>) {
        match policy {
            ApprovalPolicy::Auto => (Arc::new(ApproveAll), None),
            ApprovalPolicy::Deny => (Arc::new(DenyAll), None),
            ApprovalPolicy::Ask => {
                let asks = Arc::new(HttpApprover {
                    inner: ChannelApprover::new(),
                    timeout: Duration::from_secs(self.api().approval_timeout_seconds.max(1)),
                });
                (Arc::clone(&asks) as Arc<dyn Approver>, Some(asks))
            }
        }
    }

    /// Answers the waiting call `call_id` of a run `caller` started — that run (`at`
    /// names its id, or the session it runs in), or any of the caller's — with an
    /// [`Op::Approve`] through its conversation. Two of the caller's runs waiting on the
    /// same call id (providers number calls per answer) are answered neither: the caller
    /// is told their run ids.
    pub(super) fn decide(
        &self,
        caller: &str,
        at: &Where,
        call_id: &str,
        decision: Decision,
    ) -> Decided {
        let Ok(live) = self.live.lock() else {
            return Decided::NotWaiting;
        };
        let candidates: Vec<(&String, &Live)> = live
            .iter()
            .filter(|(_, run)| run.owner == caller)
            .filter(|(id, run)| match at {
                Where::Any => true,
                Where::Run(wanted) => *id == wanted,
                Where::Session(wanted) => run.session.as_deref() == Some(wanted.as_str()),
            })
            .filter(|(_, run)| {
                run.asks
                    .as_ref()
                    .is_some_and(|a| a.waiting().iter().any(|c| c == call_id))
            })
            .collect();
        match candidates.as_slice() {
            [] => Decided::NotWaiting,
            [(_, run)] => {
                let op = Op::Approve {
                    call: call_id.to_string(),
                    decision,
                };
                match run.remote.submit(op) {
                    Ok(()) => Decided::Answered,
                    Err(_) => Decided::NotWaiting,
                }
            }
            several => {
                let mut runs: Vec<String> = several.iter().map(|(id, _)| (*id).clone()).collect();
                runs.sort();
                Decided::Ambiguous(runs)
            }
        }
    }

    /// The remote of run `id` (a request id) while it is open here: its questions are
    /// answered through it ([`Op::Answer`]).
    pub(super) fn remote_of(&self, id: &str) -> Option<Remote> {
        let live = self.live.lock().ok()?;
        live.get(id).map(|run| run.remote.clone())
    }

    /// Opens the conversation `run` describes and runs its prompt in it, as a task; the
    /// events go to `emitter`. The run stops when `cancel` is cancelled (the client went
    /// away, or the server shuts down) or after `request_timeout_seconds`; its session
    /// is saved either way.
    pub(super) fn start(
        self: &Arc<Self>,
        run: Run,
        emitter: Arc<dyn Emitter>,
        cancel: CancellationToken,
    ) -> tokio::task::JoinHandle<Ran> {
        let server = Arc::clone(self);
        let limit = Duration::from_secs(server.api().request_timeout_seconds.max(1));
        let timer = RunTimer::start(limit, cancel.clone());
        let Run {
            mut spec,
            input,
            key,
            approvals,
        } = run;
        let (approver, asks) = self.approver(approvals);
        spec.approver = Some(approver);
        spec.cancel = Some(cancel);
        spec.force_save = true;
        spec.hold_session = true;
        self.confine(&mut spec);
        tokio::spawn(async move {
            let _active = server.metrics.turn();
            let mut ran = server
                .run_once(spec, input, &key, asks, emitter.as_ref())
                .await;
            server.let_go(&key.id);
            ran.timed_out = timer.stop().then_some(limit.as_secs());
            ran
        })
    }

    /// Commands run in `api.tools.root`, in its sandbox; a root that cannot be confined
    /// turns the tools off (a run never falls back to unconfined commands).
    fn confine(&self, spec: &mut ConversationSpec) {
        if let Some(root) = self.api().tools.root.clone() {
            match self.sandbox_for(&root) {
                Ok(sandbox) => spec.sandbox = sandbox,
                Err(e) => {
                    tracing::warn!("tools are off for this run: {e}");
                    spec.no_tools = true;
                }
            }
            spec.cwd = Some(root);
        }
        spec.no_tools |= !self.api().tools.enabled;
    }

    /// Opens the conversation, submits the prompt and closes it (saving its session);
    /// the run is held open here meanwhile, so approvals and answers reach it.
    async fn run_once(
        &self,
        mut spec: ConversationSpec,
        input: UserInput,
        key: &RunKey,
        asks: Option<Arc<HttpApprover>>,
        emitter: &dyn Emitter,
    ) -> Ran {
        let id = spec
            .id
            .clone()
            .unwrap_or_else(loki_protocol::event::next_conversation_id);
        spec.id = Some(id.clone());
        let mut ran = Ran {
            result: Err(CoreError::Cancelled),
            session: None,
            conversation: id.to_string(),
            timed_out: None,
        };
        let mut conversation = match Conversation::open(&self.state, spec).await {
            Ok(conversation) => conversation,
            Err(e) => {
                ran.result = Err(e);
                return ran;
            }
        };
        if let Ok(mut live) = self.live.lock() {
            live.insert(
                key.id.clone(),
                Live {
                    owner: key.owner.clone(),
                    session: key.session.clone(),
                    remote: conversation.remote(),
                    asks,
                },
            );
        }
        let result = conversation
            .prompt(input, RunOptions::default(), None, emitter)
            .await;
        if let Ok(outcome) = &result {
            self.count(&key.id, outcome, conversation.cost_of(outcome.usage));
        }
        let finished = conversation.finish(result, emitter).await;
        ran.session = finished.closed.session.clone();
        ran.result = finished.into_result();
        ran
    }

    /// Counts a finished run in the metrics and logs its model speed.
    fn count(&self, run: &str, outcome: &RunOutcome, cost: Option<f64>) {
        self.metrics.count(outcome, cost);
        if let Some(speed) = outcome.speed {
            tracing::info!(
                run = %run,
                ttft_ms = speed.time_to_first_token_ms,
                tokens_per_s = speed.output_tokens_per_second.map_or_else(String::new, |r| format!("{r:.1}")),
                output_tokens = outcome.usage.output_tokens,
                "model speed"
            );
        }
    }

    /// Run `id` has ended: nothing of it waits any more.
    fn let_go(&self, id: &str) {
        if let Ok(mut live) = self.live.lock()
            && let Some(run) = live.remove(id)
        {
            run.remote.input_ended();
        }
    }
}

/// The `request_timeout_seconds` of one run: cancels it when the time is up.
struct RunTimer {
    token: CancellationToken,
    fired: Arc<std::sync::atomic::AtomicBool>,
}

impl RunTimer {
    fn start(limit: Duration, token: CancellationToken) -> Self {
        let fired = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (timer, flag) = (token.clone(), Arc::clone(&fired));
        tokio::spawn(async move {
            tokio::select! {
                () = tokio::time::sleep(limit) => {
                    flag.store(true, std::sync::atomic::Ordering::Relaxed);
                    timer.cancel();
                }
                () = timer.cancelled() => {}
            }
        });
        Self { token, fired }
    }

    /// Lets the timer go (the run has ended); whether it had stopped the run.
    fn stop(self) -> bool {
        let fired = self.fired.load(std::sync::atomic::Ordering::Relaxed);
        self.token.cancel();
        fired
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

#[cfg(test)]
mod tests {
    use super::*;

    fn request(call_id: &str) -> ApprovalRequest {
        ApprovalRequest {
            call_id: call_id.into(),
            tool: "execute_command".into(),
            summary: "run `ls`".into(),
            preview: None,
            allow_always: true,
            from: "c1".into(),
            why_asked: None,
        }
    }

    #[tokio::test]
    async fn an_http_approval_arrives_as_an_answer_to_the_call() {
        let approver = Arc::new(HttpApprover {
            inner: ChannelApprover::new(),
            timeout: Duration::from_secs(5),
        });
        let asking = Arc::clone(&approver);
        let waiting = tokio::spawn(async move { asking.approve(&request("c1")).await });
        while approver.waiting().is_empty() {
            tokio::task::yield_now().await;
        }
        assert_eq!(approver.waiting(), vec!["c1".to_string()]);
        assert!(approver.answer_call("c2", Decision::Approve).is_err());
        assert!(approver.answer_call("c1", Decision::Approve).is_ok());
        assert!(matches!(waiting.await, Ok(Decision::Approve)));
    }

    #[tokio::test]
    async fn an_http_approval_that_never_comes_refuses_the_call() {
        let approver = HttpApprover {
            inner: ChannelApprover::new(),
            timeout: Duration::from_millis(10),
        };
        let decided = approver.approve(&request("c1")).await;
        assert!(matches!(decided, Decision::Refuse(why) if why.contains("no approval")));
        approver.input_ended();
        let refused = approver.approve(&request("c2")).await;
        assert!(matches!(refused, Decision::Refuse(_)));
    }
}
