//! Headless output and input (`--output-format json|stream-json`,
//! `--input-format stream-json`), the convention of `claude -p`.
//!
//! `stream-json` writes every engine event as one JSON object per line on stdout, as it
//! happens, and nothing else (the schema is in `docs/events.md`). `json` writes one
//! object per run when it ends: the answer, the tool calls with their results, usage,
//! cost, session id, finish reason and error. `--input-format stream-json` reads user
//! messages as JSON lines from stdin and answers each in turn in the same conversation.

use std::io::Write;
use std::sync::Mutex;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use loki_protocol::emitter::Emitter;
use loki_protocol::event::{AbortReason, Envelope, Event};
use loki_protocol::op::UserInput;

/// Writes `bytes` to stdout, known secrets redacted (`«secret:NAME»`); true when the
/// reader went away.
pub(super) fn write_stdout(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let clean = loki_wire::secrets::redact(&text);
    let mut out = std::io::stdout().lock();
    let result = out.write_all(clean.as_bytes()).and_then(|()| out.flush());
    matches!(result, Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// `--output-format stream-json`: one event per line.
pub struct JsonLines {
    buffer: Mutex<Vec<u8>>,
    broken: std::sync::atomic::AtomicBool,
    cancel: CancellationToken,
}

impl JsonLines {
    /// Cancels `cancel` when stdout is closed by its reader.
    pub fn new(cancel: CancellationToken) -> Self {
        Self {
            buffer: Mutex::new(Vec::with_capacity(8192)),
            broken: std::sync::atomic::AtomicBool::new(false),
            cancel,
        }
    }

    /// True when stdout was closed by the reader.
    pub fn broken_pipe(&self) -> bool {
        self.broken.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Emitter for JsonLines {
    fn emit(&self, envelope: Envelope) {
        let closing = matches!(
            envelope.event,
            Event::TurnFinished(_) | Event::TurnAborted(_)
        );
        if let Ok(mut buffer) = self.buffer.lock()
            && serde_json::to_writer(&mut *buffer, &envelope).is_ok()
        {
            buffer.push(b'\n');
        }
        if closing {
            self.flush();
        }
    }

    fn flush(&self) {
        let Ok(mut buffer) = self.buffer.lock() else {
            return;
        };
        if buffer.is_empty() {
            return;
        }
        if !self.broken_pipe() && write_stdout(&buffer) {
            self.broken
                .store(true, std::sync::atomic::Ordering::Relaxed);
            self.cancel.cancel();
        }
        buffer.clear();
    }
}

/// `--output-format json`: one result object per run (per conversation, when several
/// share the emitter).
pub struct JsonResult {
    runs: Mutex<std::collections::HashMap<loki_protocol::event::ConversationId, RunResult>>,
    broken: std::sync::atomic::AtomicBool,
    /// `-c`: the answer is the code it contains.
    code_only: bool,
    /// Results kept until the conversation is closed ([`JsonResult::release`]), for a
    /// single run: a plain one-shot's session (its history entry) exists only then.
    held: Option<Held>,
}

/// Results kept until the conversation closes, when the session a plain one-shot was
/// kept in (its history entry) is known; each with whether its `session_id` is still to
/// be filled in with it.
#[derive(Default)]
pub(super) struct Held(Mutex<Vec<(Value, bool)>>);

impl Held {
    /// Keeps `result`; `provisional` when its `session_id` waits for the close.
    pub(super) fn push(&self, result: Value, provisional: bool) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((result, provisional));
    }

    /// The results kept, each provisional `session_id` replaced by `session` (when the
    /// conversation was kept in one).
    pub(super) fn take(&self, session: Option<&str>) -> Vec<Value> {
        let results = std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        results
            .into_iter()
            .map(|(mut result, provisional)| {
                if provisional && let Some(id) = session {
                    result["session_id"] = json!(id);
                }
                result
            })
            .collect()
    }
}

#[derive(Default)]
struct RunResult {
    model: String,
    session_id: Option<String>,
    answer: String,
    reasoning: String,
    tool_calls: Vec<Value>,
    notices: Vec<Value>,
}

impl JsonResult {
    /// An empty result.
    pub fn new() -> Self {
        Self {
            runs: Mutex::new(std::collections::HashMap::new()),
            broken: std::sync::atomic::AtomicBool::new(false),
            code_only: false,
            held: None,
        }
    }

    /// Results written when [`JsonResult::release`] is called rather than at once.
    pub fn held(self) -> Self {
        Self {
            held: Some(Held::default()),
            ..self
        }
    }

    /// Writes the held results, a missing `session_id` filled with `session` (the id of
    /// the session the closed conversation was kept in).
    pub fn release(&self, session: Option<&str>) {
        if let Some(held) = &self.held {
            for result in held.take(session) {
                self.print(result);
            }
        }
    }

    /// A result whose `answer` is only the code of the answer (`-c`).
    pub fn code_only() -> Self {
        Self {
            code_only: true,
            ..Self::new()
        }
    }

    /// True when stdout was closed by the reader.
    pub fn broken_pipe(&self) -> bool {
        self.broken.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn write(&self, object: Value) {
        match &self.held {
            Some(held) => {
                let provisional = object["session_id"].is_null();
                held.push(object, provisional);
            }
            None => self.print(object),
        }
    }

    fn print(&self, mut object: Value) {
        if let Ok(mut line) = serde_json::to_vec(&object.take()) {
            line.push(b'\n');
            if write_stdout(&line) {
                self.broken
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }
}

impl Default for JsonResult {
    fn default() -> Self {
        Self::new()
    }
}

impl Emitter for JsonResult {
    fn emit(&self, envelope: Envelope) {
        let Ok(mut runs) = self.runs.lock() else {
            return;
        };
        let conversation = envelope.conversation;
        let run = runs.entry(conversation.clone()).or_default();
        match envelope.event {
            Event::TurnStarted(started) => {
                *run = RunResult {
                    model: started.model,
                    session_id: started.session_id,
                    ..RunResult::default()
                };
            }
            Event::AssistantDelta(d) => run.answer.push_str(&d.text),
            Event::ReasoningDelta(d) => run.reasoning.push_str(&d.text),
            Event::ToolCallStarted(call) => run.tool_calls.push(json!({
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            })),
            Event::ToolCallFinished(done) => {
                let entry = run
                    .tool_calls
                    .iter_mut()
                    .rev()
                    .find(|c| c["call_id"] == done.call_id.as_str() && c.get("ok").is_none());
                let fields = json!({
                    "ok": done.ok,
                    "result": done.result,
                    "error": done.error,
                });
                match entry {
                    Some(Value::Object(call)) => {
                        if let Value::Object(fields) = fields {
                            call.extend(fields);
                        }
                    }
                    _ => run.tool_calls.push(json!({
                        "call_id": done.call_id,
                        "name": done.name,
                        "ok": done.ok,
                        "result": done.result,
                        "error": done.error,
                    })),
                }
            }
            Event::Notice(notice) => run.notices.push(json!(notice)),
            Event::Retry(retry) => run.notices.push(json!(retry.notice())),
            Event::ModelFallback(fallback) => run.notices.push(json!(fallback.notice())),
            Event::TurnFinished(done) => {
                let mut run = std::mem::take(run);
                if self.code_only {
                    let code = crate::render::code::extract(&run.answer).text;
                    run.answer = code.trim_end_matches('\n').to_string();
                }
                self.write(json!({
                    "type": "result",
                    "conversation": conversation,
                    "ok": true,
                    "model": run.model,
                    "session_id": run.session_id,
                    "answer": run.answer,
                    "reasoning": (!run.reasoning.is_empty()).then_some(run.reasoning),
                    "tool_calls": run.tool_calls,
                    "usage": done.usage,
                    "cost_usd": done.cost_usd,
                    "finish_reason": done.finish_reason,
                    "speed": done.speed,
                    "notices": run.notices,
                    "error": Value::Null,
                }));
            }
            Event::TurnAborted(aborted) => {
                let run = std::mem::take(run);
                self.write(json!({
                    "type": "result",
                    "conversation": conversation,
                    "ok": false,
                    "model": run.model,
                    "session_id": run.session_id,
                    "answer": aborted.partial,
                    "reasoning": (!run.reasoning.is_empty()).then_some(run.reasoning),
                    "tool_calls": run.tool_calls,
                    "usage": aborted.usage,
                    "cost_usd": Value::Null,
                    "finish_reason": match aborted.reason {
                        AbortReason::Cancelled => "cancelled",
                        AbortReason::Error => "error",
                    },
                    "notices": run.notices,
                    "error": aborted.error.unwrap_or_else(|| "interrupted".into()),
                }));
            }
            _ => {}
        }
    }
}

/// Why a line of `--input-format stream-json` was not a user message.
#[derive(Debug, thiserror::Error)]
#[error("input line {line}: {reason}")]
pub struct InputLineError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// One line of `--input-format stream-json`.
#[derive(Debug, Clone, PartialEq)]
pub enum InputLine {
    /// A user message: the next prompt.
    Prompt(UserInput),
    /// The answer to a `tool_call_approval_requested` event.
    Approval {
        /// The call it answers.
        call_id: String,
        /// What to do.
        decision: loki_protocol::op::Decision,
    },
    /// The answer to a sub-agent's `question_asked` event.
    Answer {
        /// The question it answers.
        question_id: String,
        /// The answer (`yes`/`no`, an option, options separated by commas, or text).
        answer: String,
    },
}

/// Why an image part of an input line cannot be sent.
#[derive(Debug, thiserror::Error)]
enum BadImage {
    #[error("an image's `media_type` must be image/…, not `{}`", .0.escape_debug())]
    MediaType(String),
    #[error("an image's `data` is not base64 ({0})")]
    NotBase64(base64::DecodeError),
    #[error("an image data: URL has no data")]
    NoData,
    #[error("an image data: URL must be base64 (`data:image/png;base64,…`)")]
    DataNotBase64,
    /// The URL's first 60 characters.
    #[error("an image URL must be http(s) or data:, not `{}`", .0.escape_debug())]
    Scheme(String),
}

/// An inline image must be an `image/*` type with valid base64 data.
fn check_image_data(media: &str, data: &str) -> Result<(), BadImage> {
    use base64::Engine;
    if !media.starts_with("image/") || media.chars().any(|c| c.is_whitespace() || c == ';') {
        return Err(BadImage::MediaType(media.to_string()));
    }
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map(|_| ())
        .map_err(BadImage::NotBase64)
}

/// An image URL is sent to the provider: http, https or a `data:image/…` URL.
fn check_image_url(url: &str) -> Result<(), BadImage> {
    if let Some(rest) = url.strip_prefix("data:") {
        let (head, data) = rest.split_once(',').ok_or(BadImage::NoData)?;
        let media = head
            .strip_suffix(";base64")
            .ok_or(BadImage::DataNotBase64)?;
        return check_image_data(media, data);
    }
    match url.split_once("://") {
        Some(("http" | "https", rest)) if !rest.is_empty() => Ok(()),
        _ => Err(BadImage::Scheme(url.chars().take(60).collect())),
    }
}

/// Parses one line of `--input-format stream-json`: a user message
/// `{"type":"user","message":{"role":"user","content":"…"}}`, where `content` may also be a
/// list of parts — `{"type":"text","text":…}`, `{"type":"image","source":{"type":"base64",
/// "media_type":…,"data":…}}` (or `{"type":"url","url":…}`), or
/// `{"type":"image_url","image_url":{"url":…}}` — or an approval
/// `{"type":"approval","call_id":…,"decision":"allow"|"allow_always"|"deny"}` (a denial
/// may carry a `message` for the model), or the answer to a sub-agent's question
/// `{"type":"answer","question_id":…,"answer":…}`. `None` for a blank line.
pub fn parse_input_line(line: &str, number: usize) -> Result<Option<InputLine>, InputLineError> {
    let bad = |reason: &str| InputLineError {
        line: number,
        reason: reason.into(),
    };
    if line.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(line).map_err(|e| InputLineError {
        line: number,
        reason: format!("not JSON ({e})"),
    })?;
    match value["type"].as_str() {
        Some("user") => parse_user_message(&value, &bad).map(|i| Some(InputLine::Prompt(i))),
        Some("approval") => parse_approval(&value, &bad).map(Some),
        Some("answer") => {
            let question_id = value["question_id"]
                .as_str()
                .filter(|id| !id.is_empty())
                .ok_or_else(|| bad("an answer needs the `question_id` of the question"))?;
            let answer = match &value["answer"] {
                Value::String(text) => text.clone(),
                Value::Bool(yes) => if *yes { "yes" } else { "no" }.to_string(),
                Value::Array(items) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(","),
                _ => {
                    return Err(bad(
                        "`answer` must be text, true/false or a list of options",
                    ));
                }
            };
            Ok(Some(InputLine::Answer {
                question_id: question_id.to_string(),
                answer,
            }))
        }
        _ => Err(bad(
            r#"expected {"type":"user","message":{"role":"user","content":…}}, {"type":"approval","call_id":…,"decision":…} or {"type":"answer","question_id":…,"answer":…}"#,
        )),
    }
}

fn parse_approval(
    value: &Value,
    bad: &dyn Fn(&str) -> InputLineError,
) -> Result<InputLine, InputLineError> {
    use loki_protocol::op::Decision;
    let call_id = value["call_id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .ok_or_else(|| bad("an approval needs the `call_id` of the call it answers"))?;
    let message = value["message"].as_str().filter(|m| !m.trim().is_empty());
    let decision = match (value["decision"].as_str(), message) {
        (Some("allow"), _) => Decision::Approve,
        (Some("allow_always"), _) => Decision::ApproveAlways,
        (Some("deny"), None) => Decision::Deny,
        (Some("deny"), Some(message)) => Decision::DenyWithMessage(message.to_string()),
        _ => {
            return Err(bad(
                "`decision` must be \"allow\", \"allow_always\" or \"deny\"",
            ));
        }
    };
    Ok(InputLine::Approval {
        call_id: call_id.to_string(),
        decision,
    })
}

fn parse_user_message(
    value: &Value,
    bad: &dyn Fn(&str) -> InputLineError,
) -> Result<UserInput, InputLineError> {
    let message = &value["message"];
    if message["role"] != "user" {
        return Err(bad("`message.role` must be \"user\""));
    }
    let mut input = UserInput::default();
    match &message["content"] {
        Value::String(text) => input.text.clone_from(text),
        Value::Array(parts) => {
            let mut texts = Vec::new();
            for part in parts {
                match part["type"].as_str() {
                    Some("text") => {
                        texts.push(
                            part["text"]
                                .as_str()
                                .ok_or_else(|| bad("a text part has no `text`"))?
                                .to_string(),
                        );
                    }
                    Some("image") => {
                        let source = &part["source"];
                        let url = match source["type"].as_str() {
                            Some("base64") => {
                                let media = source["media_type"].as_str().unwrap_or("image/png");
                                let data = source["data"]
                                    .as_str()
                                    .ok_or_else(|| bad("an image part has no `source.data`"))?;
                                check_image_data(media, data).map_err(|e| bad(&e.to_string()))?;
                                format!("data:{media};base64,{data}")
                            }
                            Some("url") => {
                                let url = source["url"]
                                    .as_str()
                                    .ok_or_else(|| bad("an image part has no `source.url`"))?;
                                check_image_url(url).map_err(|e| bad(&e.to_string()))?;
                                url.to_string()
                            }
                            _ => {
                                return Err(bad(
                                    "an image part's `source.type` must be base64 or url",
                                ));
                            }
                        };
                        input.images.push(url);
                    }
                    Some("image_url") => {
                        let url = part["image_url"]["url"]
                            .as_str()
                            .ok_or_else(|| bad("an image_url part has no `image_url.url`"))?;
                        check_image_url(url).map_err(|e| bad(&e.to_string()))?;
                        input.images.push(url.to_string());
                    }
                    _ => return Err(bad("content parts must be text, image or image_url")),
                }
            }
            input.text = texts.join("\n");
        }
        _ => return Err(bad("`message.content` must be a string or a list of parts")),
    }
    if input.text.trim().is_empty() && input.images.is_empty() {
        return Err(bad("the message is empty"));
    }
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_images_are_told_in_the_words_users_see() {
        let said = |r: Result<(), BadImage>| r.unwrap_err().to_string();
        assert_eq!(
            said(check_image_data("text/plain", "AAAA")),
            "an image's `media_type` must be image/…, not `text/plain`"
        );
        assert!(
            said(check_image_data("image/png", "**"))
                .starts_with("an image's `data` is not base64 (")
        );
        assert_eq!(
            said(check_image_url("data:image/png")),
            "an image data: URL has no data"
        );
        assert_eq!(
            said(check_image_url("data:image/png,AAAA")),
            "an image data: URL must be base64 (`data:image/png;base64,…`)"
        );
        assert_eq!(
            said(check_image_url("ftp://x\n")),
            "an image URL must be http(s) or data:, not `ftp://x\\n`"
        );
        assert!(check_image_url("https://example.com/a.png").is_ok());
    }

    fn prompt(line: &str, number: usize) -> UserInput {
        match parse_input_line(line, number).unwrap() {
            Some(InputLine::Prompt(input)) => input,
            other => panic!("not a prompt: {other:?}"),
        }
    }

    #[test]
    fn parses_approvals() {
        use loki_protocol::op::Decision;
        let line = |decision: &str| {
            parse_input_line(
                &format!(r#"{{"type":"approval","call_id":"call_7",{decision}}}"#),
                1,
            )
        };
        let approval = |decision| {
            Some(InputLine::Approval {
                call_id: "call_7".into(),
                decision,
            })
        };
        assert_eq!(
            line(r#""decision":"allow""#).unwrap(),
            approval(Decision::Approve)
        );
        assert_eq!(
            line(r#""decision":"allow_always""#).unwrap(),
            approval(Decision::ApproveAlways)
        );
        assert_eq!(
            line(r#""decision":"deny""#).unwrap(),
            approval(Decision::Deny)
        );
        assert_eq!(
            line(r#""decision":"deny","message":"not that file""#).unwrap(),
            approval(Decision::DenyWithMessage("not that file".into()))
        );
        assert!(line(r#""decision":"maybe""#).is_err());
        assert!(parse_input_line(r#"{"type":"approval","decision":"allow"}"#, 2).is_err());
    }

    #[test]
    fn parses_text_and_parts() {
        let plain = prompt(
            r#"{"type":"user","message":{"role":"user","content":"hi"}}"#,
            1,
        );
        assert_eq!(plain.text, "hi");
        let parts = prompt(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"what is it?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}}"#,
            2,
        );
        assert_eq!(parts.text, "what is it?");
        assert_eq!(parts.images, ["data:image/png;base64,AAAA"]);
        assert!(parse_input_line("", 3).unwrap().is_none());
        let err = parse_input_line(r#"{"type":"assistant"}"#, 4).unwrap_err();
        assert!(err.to_string().starts_with("input line 4:"), "{err}");
        assert!(parse_input_line("nope", 5).is_err());
    }
}
