//! The terminal's [`Asker`]: questions from conversations (the `user__*` tools) asked with
//! `inquire`, one at a time — when several conversations want the terminal at once they
//! wait their turn, and questions from any conversation but the front end's own are
//! labelled with the conversation that asks. Approvals take the same turn
//! ([`one_at_a_time`]). Questions of other conversations can be withdrawn (answered
//! elsewhere, timed out) and are drawn by [`withdrawable`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use futures_util::future::BoxFuture;

use super::withdrawable::{self, OTHER};

use crate::tool::ask::{Answer, Asker};
use loki_protocol::event::Question;
use loki_wire::sanitize;

static TERMINAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Waits until no other question or approval is on the terminal; hold the guard while
/// asking.
pub async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    TERMINAL.lock().await
}

/// The terminal when no question or approval holds it (for reading type-ahead).
pub fn try_terminal() -> Result<tokio::sync::MutexGuard<'static, ()>, tokio::sync::TryLockError> {
    TERMINAL.try_lock()
}

/// Asks the person at the terminal.
#[derive(Debug, Clone)]
pub struct TerminalAsker {
    /// The front end's own conversation: its questions are not labelled.
    own: String,
}

impl TerminalAsker {
    /// An asker for a front end whose own conversation is `own`.
    pub fn new(own: &str) -> Self {
        Self { own: own.into() }
    }
}

impl Asker for TerminalAsker {
    fn ask<'a>(&'a self, from: &'a str, question: &'a Question) -> BoxFuture<'a, Answer> {
        let prompt = sanitize::approval_line(question.prompt()).into_owned();
        let prompt = if from == self.own {
            prompt
        } else {
            format!("[{}] {prompt}", sanitize::approval_line(from))
        };
        let question = question.clone();
        let own = from == self.own;
        Box::pin(async move {
            let turn = one_at_a_time().await;
            if own {
                let asking = tokio::task::spawn_blocking(move || ask(&prompt, &question));
                // A stop signal does not wait for an answer: the thread reading keys is
                // left behind and the front end finishes (see `signals::stopping`).
                return tokio::select! {
                    biased;
                    () = crate::signals::stopping() => Answer::Cancelled,
                    answer = asking => answer.unwrap_or(Answer::Cancelled),
                };
            }
            // Another conversation's question may be answered elsewhere meanwhile: when
            // this future is dropped, the question leaves the screen, and the terminal is
            // given up only once it has. When the REPL's prompt comes back first, the
            // question is put off and asked again once the terminal is free.
            let dropped = Arc::new(AtomicBool::new(false));
            let _withdraw = WithdrawOnDrop(Arc::clone(&dropped));
            let mut turn = turn;
            loop {
                let round = PROMPTS.load(Ordering::Acquire);
                let (prompt, question, dropped) =
                    (prompt.clone(), question.clone(), Arc::clone(&dropped));
                let answer = tokio::task::spawn_blocking(move || {
                    let _turn = turn;
                    let withdrawn = || {
                        if crate::signals::is_stopping() {
                            Some("loki is stopping")
                        } else if dropped.load(Ordering::Acquire) {
                            Some("no longer asked")
                        } else if PROMPTS.load(Ordering::Acquire) != round {
                            Some("asked again after your next prompt")
                        } else {
                            None
                        }
                    };
                    withdrawable::ask(&prompt, &question, &withdrawn)
                })
                .await
                .unwrap_or(Answer::Cancelled);
                if !matches!(answer, Answer::Refused(_)) || PROMPTS.load(Ordering::Acquire) == round
                {
                    return answer;
                }
                turn = one_at_a_time().await;
            }
        })
    }
}

/// Counts the REPL's prompts: a question of another conversation still open when the
/// prompt comes back is put off until the terminal is free again.
static PROMPTS: AtomicU64 = AtomicU64::new(0);

/// Puts off the open questions of other conversations: the REPL's prompt takes the
/// terminal (take it with [`one_at_a_time`] after this).
pub fn put_off_others() {
    PROMPTS.fetch_add(1, Ordering::AcqRel);
}

/// Sets the flag when the asking future is dropped.
struct WithdrawOnDrop(Arc<AtomicBool>);

impl Drop for WithdrawOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

fn ask(prompt: &str, question: &Question) -> Answer {
    use inquire::InquireError::{OperationCanceled, OperationInterrupted};
    let clean = |options: &[String]| -> Vec<String> {
        options
            .iter()
            .map(|o| sanitize::approval_line(o).into_owned())
            .collect()
    };
    // Shown options are escaped; the answer maps back to the option as the model sent it.
    let original = |options: &[String], shown: &str| -> String {
        options
            .iter()
            .find(|o| sanitize::approval_line(o) == shown)
            .cloned()
            .unwrap_or_else(|| shown.to_string())
    };
    let result = match question {
        Question::Text { .. } => inquire::Text::new(prompt).prompt().map(Answer::Text),
        Question::Confirm { .. } => inquire::Confirm::new(prompt).prompt().map(Answer::Confirm),
        Question::Select { options, .. } => {
            // The person may answer in their own words, as in Loki.
            let mut shown = clean(options);
            let custom = !shown.iter().any(|o| o == OTHER);
            if custom {
                shown.push(OTHER.to_string());
            }
            match inquire::Select::new(prompt, shown).prompt() {
                Ok(choice) if custom && choice == OTHER => inquire::Text::new("Your answer:")
                    .prompt()
                    .map(Answer::Text),
                other => other.map(|shown| Answer::Choice(original(options, &shown))),
            }
        }
        Question::MultiSelect { options, .. } => inquire::MultiSelect::new(prompt, clean(options))
            .prompt()
            .map(|shown| Answer::Choices(shown.iter().map(|s| original(options, s)).collect())),
    };
    match result {
        Ok(answer) => answer,
        Err(OperationCanceled | OperationInterrupted) => Answer::Cancelled,
        Err(e) => Answer::Refused(format!("the question could not be asked: {e}")),
    }
}
