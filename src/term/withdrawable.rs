//! Questions that can be taken back. A sub-agent's question escalated to the terminal may
//! also be answered by the root agent or an `answer` line, time out, or lose its turn;
//! `inquire` cannot be stopped from outside its read, so these questions are drawn here:
//! keys are polled, and the moment the question is withdrawn its rows are erased and the
//! terminal restored — no menu left among the output, no key swallowed afterwards.
//!
//! Owns: the form (free text, yes/no, one of a list, any of a list) as a state machine of
//! keys, and the loop that reads keys and draws the form in the
//! [`question_area`](crate::render::question_area), which other output makes room for.

use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::raw::{Raw, drop_type_ahead};
use crate::render::question_area;
use crate::tool::ask::Answer;
use loki_protocol::event::Question;
use loki_wire::sanitize;

/// The last choice of a list question: an answer in the person's own words.
pub(super) const OTHER: &str = "Other (custom)";
/// Most options listed at once (the list scrolls).
const VISIBLE: usize = 8;
/// How often the loop looks whether the question was withdrawn.
const POLL: Duration = Duration::from_millis(50);
/// How long Ctrl-C waits for the interrupt it raised to withdraw the question.
const INTERRUPT_WAIT: Duration = Duration::from_secs(2);

/// Asks `question` (labelled `prompt`) until it is answered, given up (Esc; Ctrl-C also
/// interrupts the turn, as Ctrl-C does elsewhere), or
/// `withdrawn` says why it no longer is — then its rows leave the screen (that reason
/// in their place) and `Answer::Refused` returns.
pub fn ask(
    prompt: &str,
    question: &Question,
    withdrawn: &dyn Fn() -> Option<&'static str>,
) -> Answer {
    let Ok(raw) = Raw::start() else {
        return Answer::Refused("there is no terminal to ask on".into());
    };
    // What was typed before the question showed was meant for something else.
    drop_type_ahead();
    let mut form = Form::new(prompt, question);
    question_area::draw(&form.rows());
    let answer = loop {
        if let Some(why) = withdrawn() {
            question_area::take_down(Some(&format!("· {prompt} — {why}")));
            drop(raw);
            return Answer::Refused("the question was withdrawn".into());
        }
        if question_area::moved() {
            question_area::draw(&form.rows());
        }
        match crossterm::event::poll(POLL) {
            Ok(false) => {}
            Ok(true) => match crossterm::event::read() {
                Ok(Event::Key(key)) => match form.key(key) {
                    Step::Done(answer) => break answer,
                    Step::Interrupt => {
                        question_area::take_down(Some(&form.answered(&Answer::Cancelled)));
                        drop(raw);
                        interrupt_the_turn();
                        // The asker stays until the interrupt withdraws the question, so
                        // the sub-agent does not take "cancelled" as its answer and hand
                        // its parent a result before the turn is stopped.
                        let until = std::time::Instant::now() + INTERRUPT_WAIT;
                        while withdrawn().is_none() && std::time::Instant::now() < until {
                            std::thread::sleep(POLL);
                        }
                        return Answer::Cancelled;
                    }
                    Step::Wait => question_area::draw(&form.rows()),
                },
                Ok(Event::Resize(..)) => question_area::draw(&form.rows()),
                Ok(_) => {}
                Err(e) => break Answer::Refused(format!("the question could not be asked: {e}")),
            },
            Err(e) => break Answer::Refused(format!("the question could not be asked: {e}")),
        }
    };
    question_area::take_down(Some(&form.answered(&answer)));
    drop(raw);
    answer
}

/// Ctrl-C at the question: the key the raw terminal kept from becoming SIGINT is made
/// into one, so it stops what Ctrl-C stops everywhere else — the whole turn, not only
/// the sub-agent that asked.
fn interrupt_the_turn() {
    #[cfg(unix)]
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::INT);
}

/// What a key did.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    Wait,
    Done(Answer),
    /// Ctrl-C: the question is given up and the turn interrupted.
    Interrupt,
}

#[derive(Debug)]
enum Kind {
    /// Free text; `custom` when it is the "Other" answer of a list.
    Text { custom: bool },
    /// Yes or no, typed and confirmed with Enter; `wrong` after another word.
    Confirm { wrong: bool },
    /// One (or, `multi`, any) of `options` (as the model sent them; `shown` escaped).
    Pick {
        options: Vec<String>,
        shown: Vec<String>,
        at: usize,
        marked: Vec<bool>,
        multi: bool,
    },
}

/// A question being answered.
#[derive(Debug)]
struct Form {
    prompt: String,
    kind: Kind,
    line: String,
}

impl Form {
    fn new(prompt: &str, question: &Question) -> Self {
        let pick = |options: &[String], multi: bool| {
            let mut shown: Vec<String> = options
                .iter()
                .map(|o| sanitize::approval_line(o).into_owned())
                .collect();
            if !multi && !shown.iter().any(|o| o == OTHER) {
                shown.push(OTHER.to_string());
            }
            Kind::Pick {
                options: options.to_vec(),
                marked: vec![false; shown.len()],
                shown,
                at: 0,
                multi,
            }
        };
        let kind = match question {
            Question::Text { .. } => Kind::Text { custom: false },
            Question::Confirm { .. } => Kind::Confirm { wrong: false },
            Question::Select { options, .. } => pick(options, false),
            Question::MultiSelect { options, .. } => pick(options, true),
        };
        Self {
            prompt: prompt.to_string(),
            kind,
            line: String::new(),
        }
    }

    fn key(&mut self, key: KeyEvent) -> Step {
        if key.kind == KeyEventKind::Release {
            return Step::Wait;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Step::Done(Answer::Cancelled),
            KeyCode::Char('c') if ctrl => return Step::Interrupt,
            KeyCode::Char('d') if ctrl && self.line.is_empty() => {
                return Step::Done(Answer::Cancelled);
            }
            _ => {}
        }
        if matches!(self.kind, Kind::Pick { .. }) {
            return self.pick_key(key);
        }
        match key.code {
            KeyCode::Enter => return self.submit_line(),
            KeyCode::Backspace => {
                self.line.pop();
            }
            KeyCode::Char('u') if ctrl => self.line.clear(),
            KeyCode::Char('w') if ctrl => {
                let kept = self.line.trim_end().rfind(' ').map_or(0, |i| i + 1);
                self.line.truncate(kept);
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => self.line.push(c),
            _ => {}
        }
        Step::Wait
    }

    fn submit_line(&mut self) -> Step {
        let line = std::mem::take(&mut self.line);
        match &mut self.kind {
            Kind::Text { .. } => Step::Done(Answer::Text(line)),
            Kind::Confirm { wrong } => match line.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => Step::Done(Answer::Confirm(true)),
                "n" | "no" => Step::Done(Answer::Confirm(false)),
                _ => {
                    *wrong = true;
                    Step::Wait
                }
            },
            Kind::Pick { .. } => Step::Wait,
        }
    }

    fn pick_key(&mut self, key: KeyEvent) -> Step {
        let Kind::Pick {
            options,
            shown,
            at,
            marked,
            multi,
        } = &mut self.kind
        else {
            return Step::Wait;
        };
        let count = shown.len().max(1);
        match key.code {
            KeyCode::Up | KeyCode::BackTab => *at = (*at + count - 1) % count,
            KeyCode::Down | KeyCode::Tab => *at = (*at + 1) % count,
            KeyCode::Char(' ') if *multi => {
                if let Some(mark) = marked.get_mut(*at) {
                    *mark = !*mark;
                }
            }
            KeyCode::Enter if *multi => {
                let chosen = options
                    .iter()
                    .zip(marked.iter())
                    .filter(|(_, m)| **m)
                    .map(|(o, _)| o.clone())
                    .collect();
                return Step::Done(Answer::Choices(chosen));
            }
            KeyCode::Enter => match options.get(*at) {
                Some(option) => return Step::Done(Answer::Choice(option.clone())),
                // "Other (custom)": the answer is typed.
                None => self.kind = Kind::Text { custom: true },
            },
            _ => {}
        }
        Step::Wait
    }

    /// The rows drawn for the question now.
    fn rows(&self) -> Vec<String> {
        let prompt = &self.prompt;
        match &self.kind {
            Kind::Text { custom: false } => vec![format!("? {prompt} {}", self.line)],
            Kind::Text { custom: true } => vec![
                format!("? {prompt}"),
                format!("  Your answer: {}", self.line),
            ],
            Kind::Confirm { wrong } => {
                let hint = if *wrong {
                    "(type y or n, then Enter)"
                } else {
                    "(y/n)"
                };
                vec![format!("? {prompt} {hint} {}", self.line)]
            }
            Kind::Pick {
                shown,
                at,
                marked,
                multi,
                ..
            } => {
                let hint = if *multi {
                    "(↑↓ move, space marks, Enter answers)"
                } else {
                    "(↑↓ move, Enter chooses)"
                };
                let start = (at + 1).saturating_sub(VISIBLE);
                let mut rows = vec![format!("? {prompt} {hint}")];
                for (i, option) in shown.iter().enumerate().skip(start).take(VISIBLE) {
                    let pointer = if i == *at { '❯' } else { ' ' };
                    let mark = match (multi, marked.get(i)) {
                        (true, Some(true)) => "[x] ",
                        (true, _) => "[ ] ",
                        _ => "",
                    };
                    rows.push(format!("{pointer} {mark}{option}"));
                }
                rows
            }
        }
    }

    /// The line left on screen once the question is answered.
    fn answered(&self, answer: &Answer) -> String {
        let what = match answer {
            Answer::Text(text) => sanitize::approval_line(text).into_owned(),
            Answer::Confirm(yes) => if *yes { "yes" } else { "no" }.to_string(),
            Answer::Choice(choice) => sanitize::approval_line(choice).into_owned(),
            Answer::Choices(chosen) => chosen
                .iter()
                .map(|c| sanitize::approval_line(c).into_owned())
                .collect::<Vec<_>>()
                .join(", "),
            Answer::Refused(reason) => format!("not answered: {reason}"),
            Answer::Cancelled => "cancelled".to_string(),
        };
        format!("? {} · {what}", self.prompt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(form: &mut Form, keys: &[KeyCode]) -> Step {
        let mut step = Step::Wait;
        for code in keys {
            step = form.key(KeyEvent::new(*code, KeyModifiers::NONE));
        }
        step
    }

    fn typed(text: &str) -> Vec<KeyCode> {
        text.chars().map(KeyCode::Char).collect()
    }

    /// `text` typed, then Enter.
    fn entered(text: &str) -> Vec<KeyCode> {
        let mut k = typed(text);
        k.push(KeyCode::Enter);
        k
    }

    #[test]
    fn text_is_edited_and_answered_on_enter() {
        let mut form = Form::new("Which?", &Question::Text { prompt: "x".into() });
        let mut k = typed("teal");
        k.extend([KeyCode::Backspace]);
        k.extend(entered("l green"));
        assert_eq!(
            keys(&mut form, &k),
            Step::Done(Answer::Text("teal green".into()))
        );
    }

    #[test]
    fn yes_no_wants_a_word_and_enter() {
        let mut form = Form::new("Go?", &Question::Confirm { prompt: "x".into() });
        assert_eq!(keys(&mut form, &entered("one")), Step::Wait);
        assert!(form.rows()[0].contains("type y or n"));
        assert_eq!(
            keys(&mut form, &entered("yes")),
            Step::Done(Answer::Confirm(true))
        );
    }

    #[test]
    fn a_list_is_chosen_with_arrows_and_other_asks_for_words() {
        let question = Question::Select {
            prompt: "x".into(),
            options: vec!["red".into(), "blue\x1b[2J".into()],
        };
        let mut form = Form::new("Colour?", &question);
        assert!(form.rows().iter().any(|r| r.contains("blue\\x1b[2J")));
        assert_eq!(
            keys(&mut form, &[KeyCode::Down, KeyCode::Enter]),
            Step::Done(Answer::Choice("blue\x1b[2J".into()))
        );
        let mut form = Form::new("Colour?", &question);
        assert_eq!(keys(&mut form, &[KeyCode::Up, KeyCode::Enter]), Step::Wait);
        assert_eq!(
            keys(&mut form, &entered("olive")),
            Step::Done(Answer::Text("olive".into()))
        );
    }

    #[test]
    fn many_are_marked_with_space() {
        let question = Question::MultiSelect {
            prompt: "x".into(),
            options: vec!["a".into(), "b".into(), "c".into()],
        };
        let mut form = Form::new("Which?", &question);
        let step = keys(
            &mut form,
            &[
                KeyCode::Char(' '),
                KeyCode::Down,
                KeyCode::Down,
                KeyCode::Char(' '),
                KeyCode::Enter,
            ],
        );
        assert_eq!(
            step,
            Step::Done(Answer::Choices(vec!["a".into(), "c".into()]))
        );
    }

    #[test]
    fn esc_and_ctrl_c_give_up() {
        let mut form = Form::new("Which?", &Question::Text { prompt: "x".into() });
        assert_eq!(
            keys(&mut form, &[KeyCode::Esc]),
            Step::Done(Answer::Cancelled)
        );
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(form.key(ctrl_c), Step::Interrupt);
    }
}
