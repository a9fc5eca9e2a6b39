//! What the agents of one tree share: their inboxes (`agent__send_message`,
//! `agent__check_inbox`) and the board of questions sub-agents escalate to the root
//! ([`EscalatingAsker`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use crate::tool::ask::{Answer, Asker};
use crate::tool::escalate::Escalations;
use loki_protocol::emitter::Emitter;
use loki_protocol::event::ConversationId;
use loki_protocol::event::Question;
use loki_protocol::event::{Envelope, Event, QuestionAnswered, QuestionAsked};

/// The id the root of a tree answers to in messages.
pub(super) const ROOT: &str = "parent";

/// Shared by every agent of one tree.
pub(super) struct Team {
    /// Who answers questions at the root (a terminal, or nobody).
    pub root_asker: Arc<dyn Asker>,
    /// The questions waiting for an answer.
    pub board: Arc<Escalations>,
    /// How long a question waits.
    pub escalation_timeout: Duration,
    inboxes: Mutex<HashMap<String, Vec<Value>>>,
}

impl Team {
    pub fn new(root_asker: Arc<dyn Asker>, board: Arc<Escalations>, timeout: Duration) -> Self {
        let mut inboxes = HashMap::new();
        inboxes.insert(ROOT.to_string(), Vec::new());
        Self {
            root_asker,
            board,
            escalation_timeout: timeout,
            inboxes: Mutex::new(inboxes),
        }
    }

    fn inboxes(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Value>>> {
        self.inboxes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Gives agent `id` an inbox.
    pub fn join(&self, id: &str) {
        self.inboxes().entry(id.to_string()).or_default();
    }

    /// Delivers `message` from `from` to `to`.
    pub fn send(&self, from: &str, to: &str, message: &str) -> Value {
        let mut inboxes = self.inboxes();
        let Some(inbox) = inboxes.get_mut(to) else {
            let known: Vec<&String> = inboxes.keys().filter(|k| k.as_str() != from).collect();
            return json!({"status": "error", "message": format!("no agent `{to}` in this team; known: {known:?}")});
        };
        inbox.push(json!({"from": from, "message": message}));
        json!({"status": "ok", "message": format!("delivered to {to}")})
    }

    /// Empties agent `id`'s inbox.
    pub fn drain(&self, id: &str) -> Value {
        let messages = self
            .inboxes()
            .get_mut(id)
            .map(std::mem::take)
            .unwrap_or_default();
        json!({"messages": messages, "count": messages.len()})
    }

    /// The questions waiting, for the model.
    pub fn pending_escalations(&self) -> Option<Value> {
        let pending = self.board.pending();
        (!pending.is_empty()).then(|| {
            Value::Array(
                pending
                    .into_iter()
                    .map(|e| {
                        let mut q = json!({
                            "escalation_id": e.id,
                            "from": e.from,
                            "question": e.question.prompt(),
                        });
                        if let Question::Select { options, .. }
                        | Question::MultiSelect { options, .. } = &e.question
                        {
                            q["options"] = json!(options);
                        }
                        q
                    })
                    .collect(),
            )
        })
    }
}

/// A sub-agent's asker: its question goes on the tree's board and to the root's asker,
/// labelled with who asks. The first answer wins — the person at the root, an `answer`
/// line, or the root agent's `agent__reply_escalation`; after the timeout the sub-agent is
/// told to decide itself. A root that cannot ask (headless) leaves the question to the
/// others.
pub(super) struct EscalatingAsker {
    pub team: Arc<Team>,
    pub label: String,
    pub observer: Option<Arc<dyn Emitter>>,
    pub conversation: ConversationId,
    pub parent: ConversationId,
    pub agent: Arc<str>,
}

impl EscalatingAsker {
    fn emit(&self, event: Event) {
        if let Some(observer) = &self.observer {
            observer.emit(Envelope {
                conversation: self.conversation.clone(),
                parent: Some(self.parent.clone()),
                agent: Some(Arc::clone(&self.agent)),
                run: None,
                event,
            });
            observer.flush();
        }
    }
}

fn kind(question: &Question) -> &'static str {
    match question {
        Question::Text { .. } => "text",
        Question::Confirm { .. } => "confirm",
        Question::Select { .. } => "select",
        Question::MultiSelect { .. } => "multi_select",
    }
}

impl Asker for EscalatingAsker {
    fn ask<'a>(&'a self, _from: &'a str, question: &'a Question) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            let team = &self.team;
            let (id, reply) = team.board.open(&self.label, question);
            let options = match question {
                Question::Select { options, .. } | Question::MultiSelect { options, .. } => {
                    options.clone()
                }
                _ => Vec::new(),
            };
            self.emit(Event::QuestionAsked(QuestionAsked {
                question_id: id.clone(),
                from: self.label.clone(),
                kind: kind(question),
                prompt: question.prompt().to_string(),
                options,
                timeout_secs: team.escalation_timeout.as_secs(),
            }));
            // A root that answers through this same board already has the question.
            let through_board = team.root_asker.answers_through(&team.board);
            let at_root = async {
                if through_board {
                    return std::future::pending().await;
                }
                match team.root_asker.ask(&self.label, question).await {
                    // Nobody at the root: wait for the others.
                    Answer::Refused(_) => std::future::pending().await,
                    answer => answer,
                }
            };
            let (answer, outcome) = tokio::select! {
                answer = at_root => (answer, "answered"),
                answer = reply => match answer {
                    Ok(answer) => (answer, "answered"),
                    Err(_) => (Answer::Refused("the question was withdrawn".into()), "refused"),
                },
                () = tokio::time::sleep(team.escalation_timeout) => (
                    Answer::Refused(format!(
                        "nobody answered within {} s; decide with your best judgement and say what you assumed",
                        team.escalation_timeout.as_secs()
                    )),
                    "timed_out",
                ),
            };
            team.board.withdraw(&id);
            let outcome = match &answer {
                Answer::Cancelled => "refused",
                _ => outcome,
            };
            self.emit(Event::QuestionAnswered(QuestionAnswered {
                question_id: id,
                outcome,
            }));
            answer
        })
    }
}
