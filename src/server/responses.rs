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

use super::response_tools::Names;

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
pub(super) fn keep(
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
    /// A message item without a role.
    #[error("every message item needs a `role`")]
    NoRole,
    /// An item of a type loki does not take.
    #[error("input items of type `{0}` are not supported")]
    ItemType(String),
}

/// A Responses request as a chat completions request.
#[derive(Debug)]
pub(super) struct Chat {
    /// The chat completions request.
    pub body: Value,
    /// The conversation it sends, without the `instructions` (which hold for this
    /// response only): kept with the answer for the next `previous_response_id`.
    pub sent: Vec<Value>,
    /// How to split the names of namespaced functions the model calls.
    pub names: super::response_tools::Names,
    /// What was dropped from the request (built-in tools), for the response.
    pub warnings: Vec<String>,
}

/// A Responses request as a chat completions request, continuing `earlier` (the
/// conversation of the previous response, without its instructions).
pub(super) fn as_chat(body: &Value, earlier: Vec<Value>) -> Result<Chat, NotChat> {
    let mut sent = earlier;
    match &body["input"] {
        Value::String(text) => sent.push(json!({"role": "user", "content": text})),
        Value::Array(items) => {
            for item in items {
                sent.push(item_message(item)?);
            }
        }
        _ => return Err(NotChat::Input),
    }
    let mut messages = Vec::with_capacity(sent.len() + 1);
    if let Some(instructions) = body["instructions"].as_str() {
        messages.push(json!({"role": "system", "content": instructions}));
    }
    messages.extend(chat_messages(&sent));
    let mut chat = Map::new();
    chat.insert("model".into(), body["model"].clone());
    chat.insert("messages".into(), Value::Array(messages));
    let tools = super::response_tools::tools(body["tools"].as_array().map_or(&[], Vec::as_slice));
    if body["tools"].is_array() {
        chat.insert("tools".into(), Value::Array(tools.functions));
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
    if let Some(format) = answer_format(&body["text"]["format"]) {
        chat.insert("response_format".into(), format);
    }
    if chat.get("stream") == Some(&json!(true)) {
        chat.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Ok(Chat {
        body: Value::Object(chat),
        sent,
        names: tools.names,
        warnings: tools.warnings,
    })
}

/// `text.format` as a chat completions `response_format`.
fn answer_format(format: &Value) -> Option<Value> {
    match format["type"].as_str() {
        Some("json_schema") => Some(
            json!({"type": "json_schema", "json_schema": {"name": format["name"],
                "schema": format["schema"], "strict": format["strict"]}}),
        ),
        Some("json_object") => Some(json!({"type": "json_object"})),
        _ => None,
    }
}

/// The role of the marker a `reasoning` item leaves among the chat messages: folded
/// into the next assistant message by [`chat_messages`].
const REASONING: &str = "reasoning";

/// One `input` item as a chat message (or, for `reasoning`, a marker).
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
        "function_call" => {
            let name = match (item["namespace"].as_str(), item["name"].as_str()) {
                (Some(namespace), Some(name)) => {
                    json!(super::response_tools::flat_name(namespace, name))
                }
                _ => item["name"].clone(),
            };
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": item["call_id"], "type": "function",
                "function": {"name": name, "arguments": item["arguments"]}}]})
        }
        "function_call_output" => {
            let output = match &item["output"] {
                Value::String(text) => text.clone(),
                parts @ Value::Array(_) => text_of(parts),
                other => other.to_string(),
            };
            json!({"role": "tool", "tool_call_id": item["call_id"], "content": output})
        }
        // Reasoning the client was given with an earlier answer and sends back: kept
        // with the conversation (a provider only takes back its own signed reasoning,
        // so its text travels as the assistant message's `reasoning_content`).
        "reasoning" => {
            let text = [&item["content"], &item["summary"]]
                .into_iter()
                .map(text_of)
                .find(|t| !t.is_empty())
                .unwrap_or_default();
            json!({"role": REASONING, "content": text})
        }
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

/// The conversation as chat messages: consecutive assistant messages that only call
/// tools become one with all the calls (the Responses API lists each call as its own
/// item), and reasoning goes with the assistant message after it.
fn chat_messages(messages: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut reasoning: Vec<&str> = Vec::new();
    for message in messages {
        if message["role"] == REASONING {
            reasoning.extend(message["content"].as_str().filter(|t| !t.is_empty()));
            continue;
        }
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
        let mut message = message.clone();
        if message["role"] == "assistant" && !reasoning.is_empty() {
            message["reasoning_content"] = json!(reasoning.join("\n"));
        }
        if message["role"] != "system" {
            reasoning.clear();
        }
        out.push(message);
    }
    out
}

/// What the answer adds to the conversation: its reasoning, text and calls as one chat
/// message.
pub(super) fn answer_messages(reasoning: &str, text: &str, calls: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    if !reasoning.is_empty() {
        out.push(json!({"role": REASONING, "content": reasoning}));
    }
    let mut message = json!({"role": "assistant", "content": text});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls.to_vec());
    }
    out.push(message);
    out
}

/// How an answer ended, from the chat completion's `finish_reason`: a cut-off answer is
/// `incomplete`, with the reason the Responses API names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    Completed,
    /// `incomplete_details.reason`: `max_output_tokens` or `content_filter`.
    Incomplete(&'static str),
}

impl Ending {
    pub(super) fn of(finish_reason: Option<&str>) -> Self {
        match finish_reason {
            Some("length") => Self::Incomplete("max_output_tokens"),
            Some("content_filter") => Self::Incomplete("content_filter"),
            _ => Self::Completed,
        }
    }

    /// The `status` of the response and of its message item.
    pub(super) fn status(self) -> &'static str {
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

/// The answer's message item.
pub(super) fn message_item(id: &str, text: &str, status: &str) -> Value {
    json!({"type": "message", "id": format!("msg_{id}"), "status": status, "role": "assistant",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

/// The answer's reasoning item: the provider's reasoning text as `reasoning_text`
/// content (there is no summary, and nothing encrypted).
pub(super) fn reasoning_item(id: &str, text: &str, status: &str) -> Value {
    json!({"type": "reasoning", "id": format!("rs_{id}"), "status": status, "summary": [],
           "content": [{"type": "reasoning_text", "text": text}], "encrypted_content": null})
}

/// A call's `function_call` item; a namespaced function's name split again.
pub(super) fn call_item(call: &Value, names: &Names) -> Value {
    let flat = call["function"]["name"].as_str().unwrap_or_default();
    let (name, namespace) = names.split(flat);
    let mut item = json!({"type": "function_call",
        "id": format!("fc_{}", call["id"].as_str().unwrap_or("")),
        "call_id": call["id"], "name": name,
        "arguments": call["function"]["arguments"], "status": "completed"});
    if let Some(namespace) = namespace {
        item["namespace"] = json!(namespace);
    }
    item
}

/// What identifies one response, in every object of it.
pub(super) struct Meta {
    pub id: String,
    pub model: Value,
    pub created: u64,
    /// What was dropped from the request.
    pub warnings: Vec<String>,
    /// How to split the names of namespaced functions.
    pub names: Names,
}

impl Meta {
    /// The `output` items of a whole answer: reasoning, message, calls.
    fn output(&self, answer: &Value, ending: Ending) -> Vec<Value> {
        let text = answer["content"].as_str().unwrap_or_default();
        let reasoning = answer["reasoning_content"].as_str().unwrap_or_default();
        let calls = answer["tool_calls"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let mut output = Vec::new();
        if !reasoning.is_empty() {
            output.push(reasoning_item(&self.id, reasoning, "completed"));
        }
        if !text.is_empty() || calls.is_empty() {
            output.push(message_item(&self.id, text, ending.status()));
        }
        output.extend(calls.iter().map(|call| call_item(call, &self.names)));
        output
    }

    /// A `response` object; `ending` is `None` while in progress. `usage` is the chat
    /// completion's, cached tokens included; `warnings` say what was dropped.
    pub(super) fn object(
        &self,
        ending: Option<Ending>,
        output: Vec<Value>,
        usage: &Value,
    ) -> Value {
        let (status, incomplete) =
            ending.map_or(("in_progress", Value::Null), |e| (e.status(), e.details()));
        let input = usage["prompt_tokens"].as_u64().unwrap_or(0);
        let out = usage["completion_tokens"].as_u64().unwrap_or(0);
        let cached = usage["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap_or(0);
        let mut object = json!({
            "id": self.id, "object": "response", "created_at": self.created, "status": status,
            "model": self.model, "output": output, "error": null,
            "incomplete_details": incomplete,
            "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": input, "output_tokens": out, "total_tokens": input + out,
                      "input_tokens_details": {"cached_tokens": cached},
                      "output_tokens_details": {"reasoning_tokens": 0}},
        });
        if !self.warnings.is_empty() {
            object["warnings"] = json!(self.warnings);
        }
        object
    }
}

/// Where a response is kept when it completes, and what it says besides the answer.
pub(super) struct Keeping<'a> {
    pub server: &'a std::sync::Arc<super::Server>,
    pub owner: String,
    pub sent: Vec<Value>,
    pub model: Value,
    pub names: Names,
    pub warnings: Vec<String>,
}

/// A chat completion answer (whole or streamed) as a Responses answer, kept for
/// `previous_response_id`.
pub(super) fn rewrite(answer: Response, stream: bool, keeping: Keeping<'_>) -> Response {
    let (mut parts, body) = answer.into_parts();
    if !parts.status.is_success() {
        return Response::from_parts(parts, body);
    }
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    let server = std::sync::Arc::clone(keeping.server);
    let Keeping {
        owner,
        sent,
        model,
        names,
        warnings,
        ..
    } = keeping;
    let meta = Meta {
        id: format!("resp_{}", uuid::Uuid::new_v4().simple()),
        model,
        created: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        warnings,
        names,
    };
    let body = if stream {
        let mut state = super::response_stream::Streamed::new(meta, sent, owner, server);
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
            let bytes = super::reply::answer_bytes(body).await;
            let chat: Value = serde_json::from_slice(&bytes).unwrap_or_default();
            let message = &chat["choices"][0]["message"];
            let calls: Vec<Value> = message["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let mut messages = sent;
            messages.extend(answer_messages(
                message["reasoning_content"].as_str().unwrap_or_default(),
                message["content"].as_str().unwrap_or_default(),
                &calls,
            ));
            keep(&server, meta.id.clone(), owner, messages).await;
            let ending = Ending::of(chat["choices"][0]["finish_reason"].as_str());
            let object = meta.object(Some(ending), meta.output(message, ending), &chat["usage"]);
            Ok::<_, std::convert::Infallible>(bytes::Bytes::from(object.to_string()))
        };
        Body::from_stream(futures_util::stream::once(whole))
    };
    Response::from_parts(parts, body)
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
    let chat = match as_chat(&body, earlier) {
        Ok(chat) => chat,
        Err(why) => {
            return super::reply::ApiError::bad_request(why.to_string())
                .openai()
                .into_response();
        }
    };
    let stream = chat.body["stream"] == true;
    let bytes = Ok(axum::body::Bytes::from(chat.body.to_string()));
    let keeping = Keeping {
        server: &server,
        owner: info.caller.subject.clone(),
        sent: chat.sent,
        model: body["model"].clone(),
        names: chat.names,
        warnings: chat.warnings,
    };
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

    fn refused(body: Value) -> Option<NotChat> {
        as_chat(&body, Vec::new()).err()
    }

    #[test]
    fn what_is_not_a_chat_says_why() {
        assert_eq!(
            refused(json!({"model": "m", "input": 3})),
            Some(NotChat::Input)
        );
        let item = json!({"model": "m", "input": [{"type": "computer_call"}]});
        assert_eq!(
            refused(item),
            Some(NotChat::ItemType("computer_call".into()))
        );
        let roleless = json!({"model": "m", "input": [{"type": "message", "content": "x"}]});
        assert_eq!(refused(roleless), Some(NotChat::NoRole));
        assert!(as_chat(&json!({"model": "m", "input": "hi"}), Vec::new()).is_ok());
    }

    #[test]
    fn built_in_tools_are_dropped_with_a_warning_and_namespaces_flattened() {
        let body = json!({"model": "m", "input": "hi", "tools": [
            {"type": "web_search", "external_web_access": false},
            {"type": "namespace", "name": "multi_agent_v1", "tools": [
                {"type": "function", "name": "spawn_agent", "parameters": {}}]}]});
        let chat = as_chat(&body, Vec::new()).map_err(|e| e.to_string());
        let chat = chat.as_ref().map_err(String::as_str);
        let tools = chat.map(|c| c.body["tools"].clone());
        assert_eq!(
            tools.as_ref().map(|t| t[0]["function"]["name"].clone()),
            Ok(json!("multi_agent_v1__spawn_agent"))
        );
        assert_eq!(tools.map(|t| t.as_array().map(Vec::len)), Ok(Some(1)));
        assert_eq!(chat.map(|c| c.warnings.len()), Ok(1));
    }

    #[test]
    fn instructions_are_sent_but_not_kept_and_reasoning_goes_with_the_next_answer() {
        let body = json!({"model": "m", "instructions": "Be brief.", "input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "reasoning", "summary": [],
             "content": [{"type": "reasoning_text", "text": "think"}]},
            {"type": "function_call", "namespace": "ns", "name": "f", "call_id": "c1",
             "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1",
             "output": [{"type": "input_text", "text": "done"}]}]});
        let Ok(chat) = as_chat(&body, Vec::new()) else {
            panic!("a chat");
        };
        let messages = &chat.body["messages"];
        assert_eq!(
            messages[0],
            json!({"role": "system", "content": "Be brief."})
        );
        assert_eq!(messages[2]["reasoning_content"], "think");
        assert_eq!(messages[2]["tool_calls"][0]["function"]["name"], "ns__f");
        assert_eq!(messages[3]["content"], "done");
        assert!(
            chat.sent.iter().all(|m| m["role"] != "system"),
            "{:?}",
            chat.sent
        );
    }
}
