//! `--input-format stream-json`: prompts, approvals and answers as JSON lines on stdin,
//! answered in one conversation. Prompts run one after another; while one runs, stdin is
//! still read, so an approval line answers the `tool_call_approval_requested` event of a
//! call waiting now, an answer line the `question_asked` event of a sub-agent, and
//! prompts that arrive meanwhile wait their turn. When stdin ends, calls
//! still waiting for approval are refused.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::mpsc::Receiver;
use tokio_util::sync::CancellationToken;

use super::args::{Args, InputFormat};
use super::headless::{InputLine, parse_input_line};
use super::oneshot::Output;
use crate::conversation::{Conversation, Remote};
use crate::error::CoreError;
use crate::render::theme::Theme;
use crate::term;
use crate::term::stdin_lines::{Read, stdin_lines};
use crate::tool::approve::ChannelApprover;
use loki_protocol::op::Op;
use loki_protocol::op::{RunOptions, UserInput};

/// The approver answered by approval lines, when stdin carries JSON lines and `--yolo`
/// does not approve everything anyway.
pub fn approver(args: &Args) -> Option<Arc<ChannelApprover>> {
    (args.input_format == InputFormat::StreamJson && !args.yolo)
        .then(|| Arc::new(ChannelApprover::new()))
}

/// Reading stdin: the lines not handled yet, and whether it ended.
struct Input<'a> {
    lines: Receiver<std::io::Result<Read>>,
    /// `max_input_size`: the most bytes of one line.
    max_bytes: usize,
    queue: VecDeque<(usize, String)>,
    number: usize,
    ended: bool,
    bad: bool,
    /// Where approvals and answers go while a turn runs.
    remote: Remote,
    /// The conversation's token: once cancelled, no more lines are read.
    cancel: CancellationToken,
    theme: &'a Theme,
}

impl Input<'_> {
    /// Takes in one read from stdin: an approval is answered at once, anything else
    /// waits in the queue.
    fn take(&mut self, read: Option<std::io::Result<Read>>) {
        match read {
            Some(Ok(Read::TooLong { bytes, .. })) => {
                self.number += 1;
                let number = self.number;
                term::report_error(
                    self.theme,
                    &format!(
                        "input line {number}: {} is over max_input_size ({}); skipped",
                        crate::input::human_size(bytes),
                        crate::input::human_size(self.max_bytes)
                    ),
                );
                self.bad = true;
            }
            Some(Ok(Read::NotUtf8)) => {
                self.number += 1;
                let number = self.number;
                term::report_error(
                    self.theme,
                    &format!("input line {number}: not UTF-8; skipped"),
                );
                self.bad = true;
            }
            Some(Ok(Read::Line(line))) => {
                self.number += 1;
                match parse_input_line(&line, self.number) {
                    Ok(Some(InputLine::Approval { call_id, decision })) => {
                        self.answer(self.number, &call_id, decision);
                    }
                    Ok(Some(InputLine::Answer {
                        question_id,
                        answer,
                    })) => {
                        let op = Op::Answer {
                            question: question_id,
                            reply: answer,
                        };
                        self.submit(self.number, op);
                    }
                    _ => self.queue.push_back((self.number, line)),
                }
            }
            None => self.end(),
            Some(Err(e)) => {
                term::report_error(self.theme, &format!("cannot read stdin: {e}"));
                self.bad = true;
                self.end();
            }
        }
    }

    fn end(&mut self) {
        self.ended = true;
        self.remote.input_ended();
    }

    fn answer(&mut self, number: usize, call_id: &str, decision: loki_protocol::op::Decision) {
        let op = Op::Approve {
            call: call_id.to_string(),
            decision,
        };
        self.submit(number, op);
    }

    /// An approval or an answer, to the conversation now (a turn may be waiting for it).
    fn submit(&mut self, number: usize, op: Op) {
        if let Err(reason) = self.remote.submit(op) {
            term::report_error(self.theme, &format!("input line {number}: {reason}"));
            self.bad = true;
        }
    }

    /// The next line to handle, waiting for stdin when none is queued; `None` at the end
    /// of stdin or when the conversation is cancelled.
    async fn next(&mut self) -> Option<(usize, String)> {
        loop {
            if let Some(line) = self.queue.pop_front() {
                return Some(line);
            }
            if self.ended {
                return None;
            }
            tokio::select! {
                biased;
                () = self.cancel.cancelled() => return None,
                read = self.lines.recv() => self.take(read),
            }
        }
    }
}

/// What reading prompts from stdin needs besides the conversation.
pub(super) struct Reading<'a> {
    /// The shared services (`@` mentions are checked against its rules).
    pub state: &'a crate::state::AppState,
    /// How errors about input lines are shown on stderr.
    pub theme: &'a Theme,
    /// The conversation's token: once cancelled, no more lines are read.
    pub cancel: &'a CancellationToken,
    /// `max_input_size`: the most bytes of one line.
    pub max_bytes: usize,
}

/// Answers each prompt of stdin in `conversation`; the first failed turn decides the
/// result even if later ones succeed. Also returns whether a line could not be used.
pub(super) async fn run(
    conversation: &mut Conversation,
    output: &Output,
    options: RunOptions,
    reading: Reading<'_>,
) -> (Result<(), CoreError>, bool) {
    let Reading {
        state,
        theme,
        cancel,
        max_bytes,
    } = reading;
    let mut input = Input {
        lines: stdin_lines(max_bytes),
        max_bytes,
        queue: VecDeque::new(),
        number: 0,
        ended: false,
        bad: false,
        remote: conversation.remote(),
        cancel: cancel.clone(),
        theme,
    };
    let mut result = Ok(());
    while let Some((number, line)) = input.next().await {
        let mut prompt = match parse_input_line(&line, number) {
            Ok(Some(InputLine::Prompt(prompt))) => prompt,
            Ok(Some(InputLine::Approval { call_id, decision })) => {
                input.answer(number, &call_id, decision);
                continue;
            }
            Ok(Some(InputLine::Answer { .. }) | None) => continue,
            Err(e) => {
                term::report_error(theme, &e.to_string());
                input.bad = true;
                continue;
            }
        };
        crate::mention::attach(state, conversation, &mut prompt, output.emitter());
        let turn = run_reading(conversation, prompt, options, output, &mut input).await;
        let stop = matches!(turn, Err(CoreError::Cancelled)) || output.broken_pipe();
        if turn.is_err() || result.is_ok() {
            result = turn;
        }
        if stop {
            break;
        }
    }
    (result, input.bad)
}

/// One turn, reading stdin meanwhile (approvals are answered as they come).
async fn run_reading(
    conversation: &mut Conversation,
    prompt: UserInput,
    options: RunOptions,
    output: &Output,
    input: &mut Input<'_>,
) -> Result<(), CoreError> {
    let op = Op::Prompt {
        input: prompt,
        options,
        role: None,
    };
    let turn = conversation.submit(op, output.emitter());
    tokio::pin!(turn);
    loop {
        tokio::select! {
            biased;
            result = &mut turn => return result.map(|_| ()),
            read = input.lines.recv(), if !input.ended => input.take(read),
        }
    }
}

/// The asker of a `--input-format stream-json` conversation: each question (a form an
/// MCP server sends, field by field) is a `question_asked` event, answered by an
/// `answer` line naming its `question_id`; once stdin ends, questions are refused.
pub struct StreamJsonAsker {
    /// The board `answer` lines answer.
    pub board: Arc<crate::tool::escalate::Escalations>,
    /// Where the events go (set once the output exists).
    pub events: Arc<std::sync::OnceLock<Arc<dyn loki_protocol::emitter::Emitter>>>,
    /// The conversation asking.
    pub conversation: loki_protocol::event::ConversationId,
}

impl StreamJsonAsker {
    fn emit(&self, event: loki_protocol::event::Event) {
        if let Some(events) = self.events.get() {
            events.emit(loki_protocol::event::Envelope {
                conversation: self.conversation.clone(),
                parent: None,
                agent: None,
                run: None,
                event,
            });
            events.flush();
        }
    }
}

impl crate::tool::ask::Asker for StreamJsonAsker {
    fn answers_through(&self, board: &crate::tool::escalate::Escalations) -> bool {
        std::ptr::eq(Arc::as_ptr(&self.board), board)
    }

    fn ask<'a>(
        &'a self,
        from: &'a str,
        question: &'a loki_protocol::event::Question,
    ) -> futures_util::future::BoxFuture<'a, crate::tool::ask::Answer> {
        Box::pin(self.board.ask_announced(
            from,
            question,
            None,
            "the input ended before an answer came",
            |event| self.emit(event),
        ))
    }
}
