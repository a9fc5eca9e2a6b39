//! OpenAI's Responses API (`POST /v1/responses`), which the OpenAI Agents SDK and
//! Codex-style clients speak. A request is turned into a chat completion — `instructions`
//! as the system message, the `input` items as messages (function calls and their
//! outputs included), function tools as the client's tools — and the answer, whole or
//! streamed, is rewritten into a `response` object and its events. `previous_response_id`
//! continues a conversation this service answered: the exchange of each response is kept
//! in memory (the last [`KEPT`], each for the subject that made it) and, with several
//! instances on one database, in `loki_responses` for the others.

use std::collections::VecDeque;
use std::sync::Mutex;

use axum::body::Body;
use axum::response::Response;
use serde_json::{Map, Value, json};

/// How many responses are kept for `previous_response_id`.
const KEPT: usize = 1000;

/// The exchanges of recent responses, for `previous_response_id`.
#[derive(Default)]
pub(super) struct Kept {
    entries: Mutex<VecDeque<Exchange>>,
}

struct Exchange {
    id: String,
    owner: String,
    /// The chat messages up to and including the answer.
    messages: Vec<Value>,
}

impl Kept {
    /// The messages of response `id`, if `owner` made it.
    pub(super) fn messages(&self, id: &str, owner: &str) -> Option<Vec<Value>> {
        let entries = self.entries.lock().ok()?;
        entries
            .iter()
            .find(|e| e.id == id && e.owner == owner)
            .map(|e| e.messages.clone())
    }

    fn keep(&self, id: String, owner: String, messages: Vec<Value>) {
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= KEPT {
                entries.pop_front();
            }
            entries.push_back(Exchange {
                id,
                owner,
                messages,
            });
        }
    }
}

/// Keeps an exchange for `previous_response_id`: in this instance's memory, and with a
/// cluster in the database too, so a follow-up sent to another instance finds it. The
/// returned future is the database write; the answer's last event waits for it.
fn keep(
    server: &std::sync::Arc<super::Server>,
    id: String,
    owner: String,
    messages: Vec<Value>,
) -> futures_util::future::BoxFuture<'static, ()> {
    let cluster = server.cluster.clone();
    let shared = cluster
        .as_ref()
        .map(|_| Value::Array(messages.clone()).to_string());
    server.responses.keep(id.clone(), owner.clone(), messages);
    Box::pin(async move {
        if let (Some(cluster), Some(shared)) = (cluster, shared)
            && let Err(e) = cluster.keep_response(&id, &owner, &shared).await
        {
            tracing::warn!(response = %id, "response not kept for other instances: {e}");
        }
    })
}

/// The messages of response `id` for `owner`: from this instance's memory, else (with a
/// cluster) from the database.
async fn earlier(server: &super::Server, id: &str, owner: &str) -> Option<Vec<Value>> {
    if let Some(messages) = server.responses.messages(id, owner) {
        return Some(messages);
    }
    let cluster = server.cluster.as_ref()?;
    match cluster.response(id, owner).await {
        Ok(Some(text)) => serde_json::from_str(&text).ok(),
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(response = %id, "cannot look the response up: {e}");
            None
        }
    }
}

/// Why a Responses request cannot be answered as a chat completion.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum NotChat {
    /// `input` is neither text nor items.
    #[error("`input` is a string or a list of items")]
    Input,
    /// A tool that is not a function.
    #[error("tools of type `{0}` are not supported; function tools are")]
    ToolType(String),
    /// A message item without a role.
    #[error("every message item needs a `role`")]
    NoRole,
    /// An item of a type loki does not take.
    #[error("input items of type `{0}` are not supported")]
    ItemType(String),
}

/// A Responses request as a chat completions request, and the messages it sends (kept
/// with the answer for the next `previous_response_id`).
pub(super) fn as_chat(body: &Value, earlier: Vec<Value>) -> Result<(Value, Vec<Value>), NotChat> {
    let mut messages = earlier;
    if let Some(instructions) = body["instructions"].as_str() {
        // Instructions hold for this response only, as OpenAI's do.
        messages.retain(|m| m["role"] != "system");
        messages.insert(0, json!({"role": "system", "content": instructions}));
    }
    match &body["input"] {
        Value::String(text) => messages.push(json!({"role": "user", "content": text})),
        Value::Array(items) => {
            for item in items {
                messages.push(item_message(item)?);
            }
        }
        _ => return Err(NotChat::Input),
    }
    let mut chat = Map::new();
    chat.insert("model".into(), body["model"].clone());
    chat.insert("messages".into(), Value::Array(merge_calls(&messages)));
    if let Some(tools) = body["tools"].as_array() {
        let mut functions = Vec::new();
        for tool in tools {
            if tool["type"] != "function" {
                return Err(NotChat::ToolType(
                    tool["type"].as_str().unwrap_or("?").to_string(),
                ));
            }
            functions.push(json!({"type": "function", "function": {
                "name": tool["name"], "description": tool["description"],
                "parameters": tool["parameters"]}}));
        }
        chat.insert("tools".into(), Value::Array(functions));
    }
    if let Some(choice) = body.get("tool_choice").filter(|c| !c.is_null()) {
        let choice = match choice["type"].as_str() {
            Some("function") => json!({"type": "function", "function": {"name": choice["name"]}}),
            _ => choice.clone(),
        };
        chat.insert("tool_choice".into(), choice);
    }
    for (from, to) in [
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("max_output_tokens", "max_tokens"),
        ("stream", "stream"),
    ] {
        if let Some(value) = body.get(from).filter(|v| !v.is_null()) {
            chat.insert(to.into(), value.clone());
        }
    }
    if body["text"]["format"]["type"] == "json_schema" {
        let format = &body["text"]["format"];
        chat.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {"name": format["name"],
                "schema": format["schema"], "strict": format["strict"]}}),
        );
    } else if body["text"]["format"]["type"] == "json_object" {
        chat.insert("response_format".into(), json!({"type": "json_object"}));
    }
    if chat.get("stream") == Some(&json!(true)) {
        chat.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Ok((Value::Object(chat), messages))
}

/// One `input` item as a chat message.
fn item_message(item: &Value) -> Result<Value, NotChat> {
    let kind = item["type"].as_str().unwrap_or("message");
    Ok(match kind {
        "message" => {
            let role = match item["role"].as_str() {
                Some("developer" | "system") => "system",
                Some(role @ ("user" | "assistant")) => role,
                _ => return Err(NotChat::NoRole),
            };
            json!({"role": role, "content": text_of(&item["content"])})
        }
        "function_call" => json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": item["call_id"], "type": "function",
            "function": {"name": item["name"], "arguments": item["arguments"]}}]}),
        "function_call_output" => json!({"role": "tool", "tool_call_id": item["call_id"],
            "content": item["output"].as_str().map_or_else(|| item["output"].to_string(), str::to_string)}),
        other => return Err(NotChat::ItemType(other.to_string())),
    })
}

/// A content (a string, or `input_text`/`output_text` parts) as text.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Consecutive assistant messages that only call tools become one with all the calls
/// (the Responses API lists each call as its own item).
fn merge_calls(messages: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    for message in messages {
        let calls_only = message["role"] == "assistant" && message["content"].is_null();
        if calls_only
            && let Some(last) = out.last_mut()
            && last["role"] == "assistant"
            && let (Some(kept), Some(more)) = (
                last["tool_calls"].as_array_mut(),
                message["tool_calls"].as_array(),
            )
        {
            kept.extend(more.iter().cloned());
            continue;
        }
        out.push(message.clone());
    }
    out
}

/// What the answer adds to the conversation: its text and calls as chat messages.
fn answer_messages(text: &str, calls: &[Value]) -> Vec<Value> {
    let mut message = json!({"role": "assistant", "content": text});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls.to_vec());
    }
    vec![message]
}

/// How an answer ended, from the chat completion's `finish_reason`: a cut-off answer is
/// `incomplete`, with the reason the Responses API names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Completed,
    /// `incomplete_details.reason`: `max_output_tokens` or `content_filter`.
    Incomplete(&'static str),
}

impl Ending {
    fn of(finish_reason: Option<&str>) -> Self {
        match finish_reason {
            Some("length") => Self::Incomplete("max_output_tokens"),
            Some("content_filter") => Self::Incomplete("content_filter"),
            _ => Self::Completed,
        }
    }

    /// The `status` of the response and of its message item.
    fn status(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Incomplete(_) => "incomplete",
        }
    }

    fn details(self) -> Value {
        match self {
            Self::Completed => Value::Null,
            Self::Incomplete(reason) => json!({ "reason": reason }),
        }
    }
}

/// The `output` items of an answer.
fn output_items(id: &str, text: &str, calls: &[Value], ending: Ending) -> Vec<Value> {
    let mut output = Vec::new();
    if !text.is_empty() || calls.is_empty() {
        output.push(
            json!({"type": "message", "id": format!("msg_{id}"), "status": ending.status(),
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}),
        );
    }
    for call in calls {
        output.push(json!({"type": "function_call", "id": format!("fc_{}", call["id"].as_str().unwrap_or("")),
            "call_id": call["id"], "name": call["function"]["name"],
            "arguments": call["function"]["arguments"], "status": "completed"}));
    }
    output
}

/// A `response` object; `incomplete` is its `incomplete_details` (null unless the status
/// is `incomplete`). `usage` is the chat completion's, cached tokens included.
fn response_object(
    id: &str,
    model: &Value,
    created: u64,
    (status, incomplete): (&str, Value),
    output: Vec<Value>,
    usage: &Value,
) -> Value {
    let input = usage["prompt_tokens"].as_u64().unwrap_or(0);
    let out = usage["completion_tokens"].as_u64().unwrap_or(0);
    let cached = usage["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap_or(0);
    json!({
        "id": id, "object": "response", "created_at": created, "status": status,
        "model": model, "output": output, "error": null, "incomplete_details": incomplete,
        "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": input, "output_tokens": out, "total_tokens": input + out,
                  "input_tokens_details": {"cached_tokens": cached},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    })
}

/// Where a response is kept when it completes.
pub(super) struct Keeping<'a> {
    pub server: &'a std::sync::Arc<super::Server>,
    pub owner: String,
    pub sent: Vec<Value>,
    pub model: Value,
}

/// A chat completion answer (whole or streamed) as a Responses answer, kept for
/// `previous_response_id`.
pub(super) fn rewrite(answer: Response, stream: bool, keeping: Keeping<'_>) -> Response {
    let (mut parts, body) = answer.into_parts();
    if !parts.status.is_success() {
        return Response::from_parts(parts, body);
    }
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    let id = format!("resp_{}", uuid::Uuid::new_v4().simple());
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let server = std::sync::Arc::clone(keeping.server);
    let Keeping {
        owner, sent, model, ..
    } = keeping;
    let body = if stream {
        let mut state = Streamed::new(id, model, created, sent, owner, server);
        let events = futures_util::StreamExt::then(body.into_data_stream(), move |chunk| {
            let out = chunk.map(|bytes| bytes::Bytes::from(state.rewrite(&bytes)));
            let keeping = state.keeping.take();
            async move {
                if let Some(keeping) = keeping {
                    keeping.await;
                }
                out
            }
        });
        Body::from_stream(events)
    } else {
        let whole = async move {
            let bytes = axum::body::to_bytes(body, 64 * 1024 * 1024)
                .await
                .unwrap_or_default();
            let chat: Value = serde_json::from_slice(&bytes).unwrap_or_default();
            let message = &chat["choices"][0]["message"];
            let text = message["content"].as_str().unwrap_or_default();
            let calls: Vec<Value> = message["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let mut messages = sent;
            messages.extend(answer_messages(text, &calls));
            keep(&server, id.clone(), owner, messages).await;
            let ending = Ending::of(chat["choices"][0]["finish_reason"].as_str());
            let output = output_items(&id, text, &calls, ending);
            let object = response_object(
                &id,
                &model,
                created,
                (ending.status(), ending.details()),
                output,
                &chat["usage"],
            );
            Ok::<_, std::convert::Infallible>(bytes::Bytes::from(object.to_string()))
        };
        Body::from_stream(futures_util::stream::once(whole))
    };
    Response::from_parts(parts, body)
}

/// The state of a streamed answer being rewritten into Responses events.
struct Streamed {
    id: String,
    model: Value,
    created: u64,
    sent: Vec<Value>,
    owner: String,
    server: std::sync::Arc<super::Server>,
    sequence: u64,
    text: String,
    text_open: bool,
    calls: Vec<Value>,
    usage: Value,
    /// The chat completion's `finish_reason`, once sent.
    finish_reason: Option<String>,
    done: bool,
    /// The exchange being kept for other instances: the last event waits for it.
    keeping: Option<futures_util::future::BoxFuture<'static, ()>>,
}

impl Streamed {
    fn new(
        id: String,
        model: Value,
        created: u64,
        sent: Vec<Value>,
        owner: String,
        server: std::sync::Arc<super::Server>,
    ) -> Self {
        Self {
            id,
            model,
            created,
            sent,
            owner,
            server,
            sequence: 0,
            text: String::new(),
            text_open: false,
            calls: Vec::new(),
            usage: Value::Null,
            finish_reason: None,
            done: false,
            keeping: None,
        }
    }

    fn event(&mut self, mut data: Value) -> String {
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        let name = data["type"]
            .as_str()
            .unwrap_or("response.event")
            .to_string();
        format!("event: {name}\ndata: {data}\n\n")
    }

    /// The response object while in progress (`None`) or at its end.
    fn response(&self, ending: Option<Ending>) -> Value {
        let (status, output) = match ending {
            Some(ending) => (
                (ending.status(), ending.details()),
                output_items(&self.id, &self.text, &self.calls, ending),
            ),
            None => (("in_progress", Value::Null), Vec::new()),
        };
        response_object(
            &self.id,
            &self.model,
            self.created,
            status,
            output,
            &self.usage,
        )
    }

    fn rewrite(&mut self, bytes: &[u8]) -> String {
        let mut out = String::new();
        if self.sequence == 0 {
            let created = json!({"type": "response.created", "response": self.response(None)});
            out.push_str(&self.event(created));
            let progress = json!({"type": "response.in_progress", "response": self.response(None)});
            out.push_str(&self.event(progress));
        }
        for line in String::from_utf8_lossy(bytes).lines() {
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            if data.trim() == "[DONE]" {
                out.push_str(&self.finish());
                continue;
            }
            let Ok(chunk) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            if !chunk["error"].is_null() {
                let failed = json!({"type": "error", "message": chunk["error"]["message"],
                    "code": chunk["error"]["code"]});
                out.push_str(&self.event(failed));
                continue;
            }
            if !chunk["usage"].is_null() {
                self.usage = chunk["usage"].clone();
            }
            if let Some(reason) = chunk["choices"][0]["finish_reason"].as_str() {
                self.finish_reason = Some(reason.to_string());
            }
            let delta = &chunk["choices"][0]["delta"];
            if let Some(piece) = delta["content"].as_str().filter(|p| !p.is_empty()) {
                out.push_str(&self.text_delta(piece));
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                out.push_str(&self.call(call));
            }
        }
        out
    }

    fn text_delta(&mut self, piece: &str) -> String {
        let mut out = String::new();
        let item = format!("msg_{}", self.id);
        if !self.text_open {
            self.text_open = true;
            let added = json!({"type": "response.output_item.added", "output_index": 0,
                "item": {"type": "message", "id": item, "status": "in_progress",
                         "role": "assistant", "content": []}});
            out.push_str(&self.event(added));
            let part = json!({"type": "response.content_part.added", "item_id": item,
                "output_index": 0, "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []}});
            out.push_str(&self.event(part));
        }
        self.text.push_str(piece);
        let delta = json!({"type": "response.output_text.delta", "item_id": item,
            "output_index": 0, "content_index": 0, "delta": piece, "logprobs": []});
        out.push_str(&self.event(delta));
        out
    }

    fn close_text(&mut self) -> String {
        self.close_text_as("completed")
    }

    /// Ends the message item with `status` (`incomplete` for an answer cut off).
    fn close_text_as(&mut self, status: &str) -> String {
        if !self.text_open {
            return String::new();
        }
        self.text_open = false;
        let item = format!("msg_{}", self.id);
        let mut out = String::new();
        let text = self.text.clone();
        let done = json!({"type": "response.output_text.done", "item_id": item,
            "output_index": 0, "content_index": 0, "text": text, "logprobs": []});
        out.push_str(&self.event(done));
        let part = json!({"type": "response.content_part.done", "item_id": item,
            "output_index": 0, "content_index": 0,
            "part": {"type": "output_text", "text": text, "annotations": []}});
        out.push_str(&self.event(part));
        let message = json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "message", "id": item, "status": status, "role": "assistant",
                     "content": [{"type": "output_text", "text": text, "annotations": []}]}});
        out.push_str(&self.event(message));
        out
    }

    fn call(&mut self, call: &Value) -> String {
        let mut out = self.close_text();
        let index = usize::from(!self.text.is_empty()) + self.calls.len();
        self.calls
            .push(json!({"id": call["id"], "type": "function", "function": call["function"]}));
        let item = json!({"type": "function_call",
            "id": format!("fc_{}", call["id"].as_str().unwrap_or("")),
            "call_id": call["id"], "name": call["function"]["name"],
            "arguments": call["function"]["arguments"], "status": "completed"});
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        added["arguments"] = json!("");
        out.push_str(&self.event(
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        ));
        out.push_str(
            &self.event(json!({"type": "response.function_call_arguments.delta",
            "item_id": item["id"], "output_index": index, "delta": item["arguments"]})),
        );
        out.push_str(
            &self.event(json!({"type": "response.function_call_arguments.done",
            "item_id": item["id"], "output_index": index, "arguments": item["arguments"]})),
        );
        out.push_str(&self.event(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        ));
        out
    }

    fn finish(&mut self) -> String {
        if self.done {
            return String::new();
        }
        self.done = true;
        // A cut-off answer ends with `response.incomplete`, not `response.completed`,
        // and its message item says so too.
        let ending = Ending::of(self.finish_reason.as_deref());
        let mut out = self.close_text_as(ending.status());
        let mut messages = std::mem::take(&mut self.sent);
        messages.extend(answer_messages(&self.text, &self.calls));
        self.keeping = Some(keep(
            &self.server,
            self.id.clone(),
            self.owner.clone(),
            messages,
        ));
        let name = match ending {
            Ending::Completed => "response.completed",
            Ending::Incomplete(_) => "response.incomplete",
        };
        let last = json!({"type": name, "response": self.response(Some(ending))});
        out.push_str(&self.event(last));
        out
    }
}

/// `POST /v1/responses`.
pub(super) async fn create(
    axum::extract::State(server): axum::extract::State<std::sync::Arc<super::Server>>,
    axum::Extension(info): axum::Extension<super::RequestInfo>,
    bytes: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    use axum::response::IntoResponse;
    let body: Value = match super::api::body(bytes) {
        Ok(body) => body,
        Err(e) => return e.openai().into_response(),
    };
    let earlier = match body["previous_response_id"].as_str() {
        None => Vec::new(),
        Some(previous) => match earlier(&server, previous, &info.caller.subject).await {
            Some(messages) => messages,
            None => {
                return super::reply::ApiError::new(
                    axum::http::StatusCode::NOT_FOUND,
                    "previous_response_not_found",
                    format!("no response `{previous}` to continue (kept: the last {KEPT} in memory, an hour in a shared session_store)"),
                )
                .openai()
                .into_response();
            }
        },
    };
    let (chat, sent) = match as_chat(&body, earlier) {
        Ok(found) => found,
        Err(why) => {
            return super::reply::ApiError::bad_request(why.to_string())
                .openai()
                .into_response();
        }
    };
    let stream = chat["stream"] == true;
    let keeping = Keeping {
        server: &server,
        owner: info.caller.subject.clone(),
        sent,
        model: body["model"].clone(),
    };
    let bytes = Ok(axum::body::Bytes::from(chat.to_string()));
    let answer = super::openai::chat_completions(
        axum::extract::State(std::sync::Arc::clone(&server)),
        axum::Extension(info),
        bytes,
    )
    .await;
    rewrite(answer, stream, keeping)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_a_chat_says_why() {
        let input = as_chat(&json!({"model": "m", "input": 3}), Vec::new());
        assert_eq!(input, Err(NotChat::Input));
        let tool = json!({"model": "m", "input": "hi", "tools": [{"type": "web_search"}]});
        let refused = as_chat(&tool, Vec::new()).err().map(|e| e.to_string());
        assert_eq!(
            refused.as_deref(),
            Some("tools of type `web_search` are not supported; function tools are")
        );
        let item = json!({"model": "m", "input": [{"type": "reasoning"}]});
        assert_eq!(
            as_chat(&item, Vec::new()),
            Err(NotChat::ItemType("reasoning".into()))
        );
        let roleless = json!({"model": "m", "input": [{"type": "message", "content": "x"}]});
        assert_eq!(as_chat(&roleless, Vec::new()), Err(NotChat::NoRole));
        let fine = as_chat(&json!({"model": "m", "input": "hi"}), Vec::new());
        assert!(fine.is_ok());
    }
}
