//! Streamed runs of loki's own API (`"stream": true` on `/v1/completions` and
//! `/v1/sessions/{id}/completions`): each is [`Tracked`] by the instance that runs it,
//! its events numbered in a [`RunLog`] that every reader follows, so a client that lost
//! its connection comes back with `Last-Event-ID` — to this instance or, through the
//! [`Cluster`], to any other. A run whose readers are all gone is cancelled after
//! `api.reattach_seconds`; its questions (`question_asked`) are answered over HTTP.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::Server;
use super::cluster::{Cluster, Notice};
use super::run::{Ran, Where, loki_event};
use super::run_log::RunLog;
use crate::error::CoreError;
use crate::tool::ask::{Answer, Asker};
use crate::tool::escalate::{AnswerError, Escalations, answer_from_text};
use loki_protocol::emitter::Emitter;
use loki_protocol::event::ConversationId;
use loki_protocol::event::Question;
use loki_protocol::event::{Envelope, Event};
use loki_protocol::op::Op;

/// How long an ended run stays known here (its status, and its events for a late
/// reconnection); with a cluster the database keeps both for an hour.
const KEEP_ENDED: Duration = Duration::from_secs(60);

/// A streamed run on this instance.
pub(super) struct Tracked {
    /// The request id that started it (`started`'s `request_id`).
    pub id: String,
    /// The subject that started it.
    pub owner: String,
    /// The session it runs in (its id).
    pub session: Option<String>,
    /// Its events.
    pub log: Arc<RunLog>,
    /// Stops it.
    pub cancel: CancellationToken,
    /// Its open questions.
    pub questions: Arc<Escalations>,
    /// How it ended, once it has.
    ended: Mutex<Option<Ended>>,
    /// Cancelled when it has ended.
    finished: CancellationToken,
    /// The task copying its events to the database.
    mirror: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub(super) struct Ended {
    /// `completed`, `failed` or `cancelled`.
    pub status: &'static str,
    /// Why, when it did not complete.
    pub error: Option<String>,
}

impl Tracked {
    /// How it ended; `None` while it runs.
    pub fn ended(&self) -> Option<Ended> {
        self.ended.lock().ok().and_then(|e| e.clone())
    }
}

/// The streamed runs this instance knows, by request id.
pub(super) type TrackedRuns = Mutex<HashMap<String, Arc<Tracked>>>;

/// Puts each event of the run, in the loki event schema, in its log.
pub(super) struct LogEmitter {
    log: Arc<RunLog>,
    /// The caller's prefix in the session store, taken off session names.
    namespace: String,
}

impl Emitter for LogEmitter {
    fn emit(&self, envelope: Envelope) {
        if let Some((name, data)) = loki_event(&envelope, &self.namespace) {
            self.log.push(&name, &data);
        }
    }
}

/// The asker of a streamed run: a question is a `question_asked` event, answered by
/// `POST /v1/runs/{run_id}/questions/{question_id}` (on any instance) within
/// `approval_timeout_seconds`; otherwise the model is told to decide itself.
struct RunAsker {
    board: Arc<Escalations>,
    events: Arc<dyn Emitter>,
    conversation: ConversationId,
    timeout: Duration,
}

impl RunAsker {
    fn emit(&self, event: Event) {
        self.events.emit(Envelope {
            conversation: self.conversation.clone(),
            parent: None,
            agent: None,
            run: None,
            event,
        });
    }
}

impl Asker for RunAsker {
    fn ask<'a>(&'a self, from: &'a str, question: &'a Question) -> BoxFuture<'a, Answer> {
        Box::pin(self.board.ask_announced(
            from,
            question,
            Some(self.timeout),
            "the run ended before an answer came",
            |event| self.emit(event),
        ))
    }
}

/// Events to two places: a run that is not streamed is tracked (its log) and collected
/// for its JSON answer.
pub(super) struct Both(pub Arc<dyn Emitter>, pub Arc<dyn Emitter>);

impl Emitter for Both {
    fn emit(&self, envelope: Envelope) {
        self.0.emit(envelope.clone());
        self.1.emit(envelope);
    }

    fn flush(&self) {
        self.0.flush();
        self.1.flush();
    }
}

/// What a streamed run is started with.
pub(super) struct Stream {
    /// The run.
    pub tracked: Arc<Tracked>,
    /// Where its events go.
    pub emitter: Arc<dyn Emitter>,
    /// Its asker.
    pub asker: Arc<dyn Asker>,
    /// Its conversation's id.
    pub conversation: ConversationId,
}

impl Server {
    /// Starts tracking run `id` of `owner` (in `session`), stopped by `cancel`:
    /// known to the other instances when there are any.
    pub(super) async fn track(
        &self,
        id: &str,
        owner: &str,
        session: Option<String>,
        cancel: CancellationToken,
        namespace: String,
    ) -> Stream {
        let mut mirror = None;
        if let Some(cluster) = &self.cluster {
            match cluster.begin(id, owner, session.as_deref()).await {
                Ok(()) => mirror = Some(tokio::sync::mpsc::unbounded_channel()),
                Err(e) => tracing::warn!(run = %id, "other instances will not see this run: {e}"),
            }
        }
        let (tx, rx) = mirror.map_or((None, None), |(tx, rx)| (Some(tx), Some(rx)));
        let log = RunLog::new(tx);
        let copies = match (&self.cluster, rx) {
            (Some(cluster), Some(rx)) => {
                let shown = Arc::downgrade(&log);
                Some(
                    cluster.mirror(id, owner, session.as_deref(), rx, move |seq| {
                        if let Some(log) = shown.upgrade() {
                            log.copied_through(seq);
                        }
                    }),
                )
            }
            _ => None,
        };
        let tracked = Arc::new(Tracked {
            id: id.to_string(),
            owner: owner.to_string(),
            session,
            log: Arc::clone(&log),
            cancel,
            questions: Arc::new(Escalations::new()),
            ended: Mutex::new(None),
            finished: CancellationToken::new(),
            mirror: Mutex::new(copies),
        });
        if let Ok(mut runs) = self.streams.lock() {
            runs.insert(id.to_string(), Arc::clone(&tracked));
        }
        log.push(
            "started",
            &serde_json::json!({"request_id": id}).to_string(),
        );
        let emitter: Arc<dyn Emitter> = Arc::new(LogEmitter { log, namespace });
        let conversation = loki_protocol::event::next_conversation_id();
        let asker = Arc::new(RunAsker {
            board: Arc::clone(&tracked.questions),
            events: Arc::clone(&emitter),
            conversation: conversation.clone(),
            timeout: Duration::from_secs(self.api().approval_timeout_seconds.max(1)),
        });
        Stream {
            tracked,
            emitter,
            asker,
            conversation,
        }
    }

    /// Answers question `question` of `tracked` with `text`: checked against the
    /// question as it was asked, then delivered as an [`Op::Answer`] through the run's
    /// conversation.
    pub(super) fn answer_question(
        &self,
        tracked: &Tracked,
        question: &str,
        text: &str,
    ) -> Result<(), AnswerError> {
        let not_waiting = || AnswerError::NotWaiting(question.to_string());
        let asked = tracked
            .questions
            .pending()
            .into_iter()
            .find(|e| e.id == question)
            .ok_or_else(not_waiting)?;
        answer_from_text(&asked.question, text)?;
        let op = Op::Answer {
            question: question.to_string(),
            reply: text.to_string(),
        };
        self.remote_of(&tracked.id)
            .ok_or_else(not_waiting)?
            .submit(op)
            .map_err(|_| AnswerError::Gone(question.to_string()))
    }

    /// The run `id` when this instance runs it (or ran it lately).
    pub(super) fn tracked(&self, id: &str) -> Option<Arc<Tracked>> {
        self.streams.lock().ok()?.get(id).cloned()
    }

    /// Cancels `tracked` once nobody has followed it for `api.reattach_seconds` (here
    /// or, with a cluster, on another instance).
    pub(super) fn hold(self: &Arc<Self>, tracked: &Arc<Tracked>) {
        let server = Arc::clone(self);
        let tracked = Arc::clone(tracked);
        tokio::spawn(async move {
            let grace = Duration::from_secs(server.api().reattach_seconds);
            let mut alone: Option<Instant> = None;
            loop {
                tokio::select! {
                    () = tracked.finished.cancelled() => return,
                    () = tracked.cancel.cancelled() => return,
                    () = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
                if tracked.log.watchers() > 0 {
                    alone = None;
                    continue;
                }
                let since = *alone.get_or_insert_with(Instant::now);
                if since.elapsed() < grace {
                    continue;
                }
                let elsewhere = match &server.cluster {
                    Some(cluster) => cluster.watched(&tracked.id, Duration::from_secs(3)).await,
                    None => false,
                };
                if elsewhere {
                    alone = None;
                } else {
                    tracing::info!(run = %tracked.id, "no client follows the run; it is cancelled");
                    tracked.cancel.cancel();
                    return;
                }
            }
        });
    }

    /// Ends `tracked` with what `ran` left: its last events (an `error` when it failed,
    /// then `done`, after the session was saved), its status here and in the database.
    pub(super) async fn end(
        &self,
        tracked: &Arc<Tracked>,
        ran: &Result<Ran, tokio::task::JoinError>,
    ) {
        let ended = match ran {
            Ok(ran) => {
                for (name, data) in super::run::finish_stream(ran) {
                    tracked.log.push(&name, &data);
                }
                match &ran.result {
                    Ok(_) => Ended {
                        status: "completed",
                        error: None,
                    },
                    Err(CoreError::Cancelled) if ran.timed_out.is_none() => Ended {
                        status: "cancelled",
                        error: Some("the run was cancelled".into()),
                    },
                    Err(e) => Ended {
                        status: "failed",
                        error: Some(ran.api_error(e).message),
                    },
                }
            }
            Err(e) => {
                let message = e.to_string();
                let data =
                    serde_json::json!({"error": {"code": "internal_error", "message": message}});
                tracked.log.push("error", &data.to_string());
                tracked.log.push("done", "{}");
                Ended {
                    status: "failed",
                    error: Some(message),
                }
            }
        };
        if let Ok(mut slot) = tracked.ended.lock() {
            *slot = Some(ended.clone());
        }
        tracked.finished.cancel();
        tracked.questions.close();
        let copies = tracked.mirror.lock().ok().and_then(|mut m| m.take());
        if let (Some(cluster), Some(copies)) = (&self.cluster, copies) {
            let _ = tokio::time::timeout(Duration::from_secs(10), copies).await;
            let partial = tracked.log.partial();
            if let Err(e) = cluster
                .finish(&tracked.id, ended.status, ended.error.as_deref(), &partial)
                .await
            {
                tracing::warn!(run = %tracked.id, "its end is not recorded for other instances: {e}");
            }
        }
        let runs = Arc::clone(&self.streams);
        let id = tracked.id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(KEEP_ENDED).await;
            if let Ok(mut runs) = runs.lock() {
                runs.remove(&id);
            }
        });
    }

    /// Acts on what other instances sent for runs here (answers, cancels), as they say
    /// so and every couple of seconds in case a notice was missed.
    pub(super) fn follow_signals(self: &Arc<Self>, cluster: &Arc<Cluster>) {
        let server = Arc::downgrade(self);
        let cluster = Arc::clone(cluster);
        tokio::spawn(async move {
            let mut notices = cluster.notices();
            let mut poll = tokio::time::interval(Duration::from_secs(2));
            loop {
                let runs: Vec<String> = tokio::select! {
                    notice = notices.recv() => match notice {
                        Ok(Notice::Signal(run)) => vec![run],
                        Ok(Notice::Events(_)) => continue,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => Vec::new(),
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                    },
                    _ = poll.tick() => {
                        let Some(server) = server.upgrade() else { return };
                        let running = server.running();
                        cluster.signalled(&running).await.unwrap_or_default()
                    }
                };
                let Some(server) = server.upgrade() else {
                    return;
                };
                for run in runs {
                    server.apply_signals(&cluster, &run).await;
                }
            }
        });
    }

    /// The ids of the runs running here.
    fn running(&self) -> Vec<String> {
        self.streams
            .lock()
            .map(|runs| {
                runs.values()
                    .filter(|t| t.ended().is_none())
                    .map(|t| t.id.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    async fn apply_signals(&self, cluster: &Cluster, run: &str) {
        let Some(tracked) = self.tracked(run).filter(|t| t.ended().is_none()) else {
            return;
        };
        let signals = match cluster.signals(run).await {
            Ok(signals) => signals,
            Err(e) => {
                tracing::warn!(run = %run, "cannot read what other instances sent: {e}");
                return;
            }
        };
        if signals.cancel {
            tracked.cancel.cancel();
        }
        for (kind, item, answer) in signals.answers {
            match kind.as_str() {
                "approval" => match super::api::approval_from_json(&answer) {
                    Ok(decision) => {
                        self.decide(
                            &tracked.owner,
                            &Where::Run(run.to_string()),
                            &item,
                            decision,
                        );
                    }
                    Err(e) => {
                        tracing::warn!(run = %run, "an approval from another instance: {}", e.message)
                    }
                },
                "question" => {
                    let text: String = serde_json::from_str(&answer).unwrap_or(answer);
                    if let Err(e) = self.answer_question(&tracked, &item, &text) {
                        tracing::warn!(run = %run, "an answer from another instance: {e}");
                    }
                }
                _ => {}
            }
        }
    }
}
