//! [`Escalations`]: the questions sub-agents put to the root of their tree, waiting for an
//! answer. One board serves a whole tree of agents. A question is answered by whoever
//! comes first: the person at the terminal, an `answer` line of
//! `--input-format stream-json`, or the root agent through `agent__reply_escalation`;
//! otherwise it times out and the sub-agent gets a fallback telling it to decide itself.

use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::{Notify, oneshot};

use super::ask::Answer;
use loki_protocol::event::{Event, Question, QuestionAnswered, QuestionAsked};

/// The open questions of one tree of agents.
#[derive(Debug, Default)]
pub struct Escalations {
    board: Mutex<Board>,
    changed: Notify,
}

#[derive(Debug, Default)]
struct Board {
    next: u64,
    pending: Vec<Pending>,
    /// Nobody can answer any more (stdin ended): new questions are withdrawn at once.
    closed: bool,
}

#[derive(Debug)]
struct Pending {
    id: String,
    from: String,
    question: Question,
    reply: oneshot::Sender<Answer>,
}

/// A question waiting for an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    /// Its id (`esc_1`, …).
    pub id: String,
    /// Who asks (`c1 › c4 (explore)`).
    pub from: String,
    /// The question.
    pub question: Question,
}

impl Escalations {
    /// An empty board.
    pub fn new() -> Self {
        Self::default()
    }

    fn board(&self) -> std::sync::MutexGuard<'_, Board> {
        self.board
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Asks `question` from `from` where the answer comes from outside (`answer` lines of
    /// stream-json input, a server's answer endpoint): announces it and its outcome
    /// through `emit` (`question_asked`, then `question_answered`) and waits for the
    /// answer within `timeout` (`None`: until nobody can answer). When nobody can answer
    /// any more, the model is told `gone`; after the timeout, to decide itself.
    pub async fn ask_announced(
        &self,
        from: &str,
        question: &Question,
        timeout: Option<Duration>,
        gone: &str,
        emit: impl Fn(Event),
    ) -> Answer {
        let (id, reply) = self.open(from, question);
        let seconds = timeout.map_or(0, |t| t.as_secs());
        emit(Event::QuestionAsked(QuestionAsked::new(
            id.clone(),
            from,
            question,
            seconds,
        )));
        let waited = match timeout {
            Some(timeout) => tokio::time::timeout(timeout, reply).await,
            None => Ok(reply.await),
        };
        let (answer, outcome) = match waited {
            Ok(Ok(answer)) => (answer, "answered"),
            Ok(Err(_)) => (Answer::Refused(gone.into()), "refused"),
            Err(_) => {
                self.withdraw(&id);
                (
                    Answer::Refused(format!(
                        "no answer came within {seconds} s; decide with your best judgement and say what you assumed"
                    )),
                    "timed_out",
                )
            }
        };
        emit(Event::QuestionAnswered(QuestionAnswered {
            question_id: id,
            outcome,
        }));
        answer
    }

    /// Puts `question` from `from` on the board: its id, and where its answer arrives.
    /// On a closed board the answer never comes (its receiver errs at once).
    pub fn open(&self, from: &str, question: &Question) -> (String, oneshot::Receiver<Answer>) {
        let (reply, answer) = oneshot::channel();
        let id = {
            let mut board = self.board();
            board.next += 1;
            let id = format!("esc_{}", board.next);
            if board.closed {
                return (id, answer);
            }
            board.pending.push(Pending {
                id: id.clone(),
                from: from.to_string(),
                question: question.clone(),
                reply,
            });
            id
        };
        self.changed.notify_waiters();
        (id, answer)
    }

    /// Answers question `id` with the text `reply`, read as the question expects
    /// (`yes`/`no`, an option, options separated by commas).
    pub fn reply(&self, id: &str, reply: &str) -> Result<(), AnswerError> {
        let question = self
            .board()
            .pending
            .iter()
            .find(|p| p.id == id)
            .map(|p| p.question.clone())
            .ok_or_else(|| no_such(id))?;
        self.answer(id, answer_from_text(&question, reply)?)
    }

    /// Answers question `id`.
    pub fn answer(&self, id: &str, answer: Answer) -> Result<(), AnswerError> {
        let pending = {
            let mut board = self.board();
            let at = board
                .pending
                .iter()
                .position(|p| p.id == id)
                .ok_or_else(|| no_such(id))?;
            board.pending.remove(at)
        };
        pending
            .reply
            .send(answer)
            .map_err(|_| AnswerError::Gone(id.to_string()))
    }

    /// Withdraws every question, and every question asked from now on: nobody is left
    /// to answer (the input ended).
    pub fn close(&self) {
        let mut board = self.board();
        board.closed = true;
        board.pending.clear();
    }

    /// Takes question `id` off the board (answered elsewhere, or given up).
    pub fn withdraw(&self, id: &str) {
        self.board().pending.retain(|p| p.id != id);
    }

    /// The questions waiting now, oldest first.
    pub fn pending(&self) -> Vec<Escalation> {
        self.board()
            .pending
            .iter()
            .map(|p| Escalation {
                id: p.id.clone(),
                from: p.from.clone(),
                question: p.question.clone(),
            })
            .collect()
    }

    /// Resolves when a new question is put on the board (call
    /// [`tokio::sync::futures::Notified::enable`] before checking the board, so a question
    /// put on it in between is not missed).
    pub fn opened(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }
}

/// Why an answer was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// No question of that id waits.
    #[error("no question `{0}` is waiting")]
    NotWaiting(String),
    /// The question was withdrawn while the answer came.
    #[error("question `{0}` is no longer waiting")]
    Gone(String),
    /// A yes/no question got something else.
    #[error("answer `yes` or `no`, not `{0}`")]
    NotYesNo(String),
    /// A choice that is not offered.
    #[error("`{reply}` is not one of: {options}")]
    NotAnOption {
        /// What was answered.
        reply: String,
        /// The options, comma-separated.
        options: String,
    },
}

fn no_such(id: &str) -> AnswerError {
    AnswerError::NotWaiting(id.to_string())
}

/// `reply` as an answer to `question`.
pub fn answer_from_text(question: &Question, reply: &str) -> Result<Answer, AnswerError> {
    let reply = reply.trim();
    Ok(match question {
        Question::Text { .. } => Answer::Text(reply.to_string()),
        // No choice made: the asker's default, where it has one (an MCP form's field).
        Question::Confirm { .. } | Question::Select { .. } if reply.is_empty() => {
            Answer::Text(String::new())
        }
        Question::Confirm { .. } => match reply.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Answer::Confirm(true),
            "n" | "no" | "false" => Answer::Confirm(false),
            _ => return Err(AnswerError::NotYesNo(reply.to_string())),
        },
        Question::Select { options, .. } => {
            let chosen = pick(options, reply)?;
            Answer::Choice(chosen)
        }
        Question::MultiSelect { options, .. } => {
            let chosen: Result<Vec<String>, AnswerError> = reply
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| pick(options, s))
                .collect();
            Answer::Choices(chosen?)
        }
    })
}

fn pick(options: &[String], reply: &str) -> Result<String, AnswerError> {
    options
        .iter()
        .find(|o| o.as_str() == reply)
        .or_else(|| options.iter().find(|o| o.eq_ignore_ascii_case(reply)))
        .cloned()
        .ok_or_else(|| AnswerError::NotAnOption {
            reply: reply.to_string(),
            options: options.join(", "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn questions_are_answered_once_by_id() {
        let board = Escalations::new();
        let question = Question::Confirm {
            prompt: "Delete it?".into(),
        };
        let (id, answer) = board.open("c1 › c2 (coder)", &question);
        assert_eq!(id, "esc_1");
        assert_eq!(board.pending()[0].from, "c1 › c2 (coder)");
        assert!(board.reply(&id, "maybe").is_err());
        board.reply(&id, "YES").unwrap();
        assert_eq!(answer.await.unwrap(), Answer::Confirm(true));
        assert!(board.pending().is_empty());
        assert!(
            board
                .reply(&id, "no")
                .unwrap_err()
                .to_string()
                .contains("no question")
        );
    }

    /// The kinds of the events an announced question sent, with the outcome.
    fn kinds(events: &Mutex<Vec<Event>>) -> Vec<String> {
        let events = events.lock().unwrap();
        events
            .iter()
            .map(|e| match e {
                Event::QuestionAsked(_) => "asked".to_string(),
                Event::QuestionAnswered(a) => a.outcome.to_string(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[tokio::test]
    async fn announced_questions_end_answered_refused_or_timed_out() {
        let question = Question::Confirm {
            prompt: "Go?".into(),
        };
        let board = Escalations::new();
        let events = Mutex::new(Vec::new());
        let emit = |e: Event| events.lock().unwrap().push(e);
        let timeout = Some(Duration::from_millis(50));
        let (answer, ()) = tokio::join!(
            board.ask_announced("c1", &question, timeout, "gone", emit),
            async { board.reply(&board.pending()[0].id, "yes").unwrap() }
        );
        assert_eq!(answer, Answer::Confirm(true));
        let answer = board
            .ask_announced("c1", &question, timeout, "gone", emit)
            .await;
        assert!(matches!(answer, Answer::Refused(m) if m.starts_with("no answer came within")));
        assert!(
            board.pending().is_empty(),
            "a timed-out question is withdrawn"
        );
        board.close();
        let answer = board
            .ask_announced("c1", &question, None, "gone", emit)
            .await;
        assert_eq!(answer, Answer::Refused("gone".into()));
        assert_eq!(
            kinds(&events),
            [
                "asked",
                "answered",
                "asked",
                "timed_out",
                "asked",
                "refused"
            ]
        );
    }

    #[test]
    fn replies_are_read_as_the_question_expects() {
        let options = vec!["Red".to_string(), "Blue".to_string()];
        let select = Question::Select {
            prompt: "Colour?".into(),
            options: options.clone(),
        };
        assert_eq!(
            answer_from_text(&select, "blue").unwrap(),
            Answer::Choice("Blue".into())
        );
        assert!(answer_from_text(&select, "green").is_err());
        let multi = Question::MultiSelect {
            prompt: "Colours?".into(),
            options,
        };
        assert_eq!(
            answer_from_text(&multi, "Red, Blue").unwrap(),
            Answer::Choices(vec!["Red".into(), "Blue".into()])
        );
    }
}
