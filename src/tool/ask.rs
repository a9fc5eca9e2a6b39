//! Questions to the user beside approvals: each conversation has an [`Asker`] that tools
//! (the `user__*` tools) and front ends use to ask for free text, yes/no, one of a list or
//! several of a list.
//!
//! Front ends choose the asker: the terminal one (`render::ask`) asks the person there,
//! one question at a time across conversations, labelled with who asks; [`Headless`]
//! refuses with a reason the model can act on; [`Scripted`] answers from a list (tests,
//! programs driving loki through the library).

use std::collections::VecDeque;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use loki_protocol::event::Question;

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Free text.
    Text(String),
    /// Yes (true) or no.
    Confirm(bool),
    /// The option chosen.
    Choice(String),
    /// The options chosen.
    Choices(Vec<String>),
    /// Nobody can answer here; the reason is for the model.
    Refused(String),
    /// The user stopped the turn (Ctrl-C at the question).
    Cancelled,
}

/// Asks the user of one conversation.
pub trait Asker: Send + Sync {
    /// Asks `question` on behalf of `from` (a conversation's label, shown when several
    /// conversations share one terminal).
    fn ask<'a>(&'a self, from: &'a str, question: &'a Question) -> BoxFuture<'a, Answer>;

    /// Whether this asker's questions go on `board` and are answered there (the
    /// `--input-format stream-json` asker): a sub-agent's question already on that board
    /// is not put to it a second time.
    fn answers_through(&self, _board: &crate::tool::escalate::Escalations) -> bool {
        false
    }
}

/// Refuses every question: nobody is there to answer (headless output, pipes).
#[derive(Debug, Default, Clone, Copy)]
pub struct Headless;

impl Asker for Headless {
    fn ask<'a>(&'a self, _: &'a str, _: &'a Question) -> BoxFuture<'a, Answer> {
        Box::pin(async {
            Answer::Refused(
                "no one can answer questions here (loki is running without a terminal); \
                 decide with your best judgement and say what you assumed"
                    .into(),
            )
        })
    }
}

/// Answers from a list, in order, and records what was asked. When the list is used up
/// it refuses.
#[derive(Debug, Default)]
pub struct Scripted {
    answers: Mutex<VecDeque<Answer>>,
    asked: Mutex<Vec<(String, Question)>>,
}

impl Scripted {
    /// An asker giving `answers` in order.
    pub fn new(answers: impl IntoIterator<Item = Answer>) -> Self {
        Self {
            answers: Mutex::new(answers.into_iter().collect()),
            asked: Mutex::new(Vec::new()),
        }
    }

    /// What was asked so far, with who asked.
    pub fn asked(&self) -> Vec<(String, Question)> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

impl Asker for Scripted {
    fn ask<'a>(&'a self, from: &'a str, question: &'a Question) -> BoxFuture<'a, Answer> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push((from.to_string(), question.clone()));
        }
        let answer = self
            .answers
            .lock()
            .ok()
            .and_then(|mut a| a.pop_front())
            .unwrap_or_else(|| Answer::Refused("no scripted answer left".into()));
        Box::pin(async move { answer })
    }
}

/// A sub-conversation's asker: its questions go to the parent's asker under the
/// sub-conversation's label (`c1 › c4 (explorer)`), so the person or program driving
/// the root answers for the whole tree.
pub struct RoutedAsker {
    inner: std::sync::Arc<dyn Asker>,
    label: String,
}

impl RoutedAsker {
    /// Routes to `inner`, asking as `label`.
    pub fn new(inner: std::sync::Arc<dyn Asker>, label: impl Into<String>) -> Self {
        Self {
            inner,
            label: label.into(),
        }
    }
}

impl Asker for RoutedAsker {
    fn ask<'a>(&'a self, _from: &'a str, question: &'a Question) -> BoxFuture<'a, Answer> {
        self.inner.ask(&self.label, question)
    }
}
