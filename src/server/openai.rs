//! The OpenAI-compatible endpoints: `GET /v1/models` (every chat model, and `role:NAME`,
//! `agent:NAME`, `rag:NAME` for loki's roles, agents and knowledge bases) and
//! `POST /v1/chat/completions`, streamed (`chat.completion.chunk` events, then
//! `[DONE]`) or not, with errors in OpenAI's shape.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::chat_answer::ChatShape;
use super::reply::{ApiError, json_body};
use super::run::{ApprovalPolicy, Run, RunKey};
use super::{RequestInfo, Server};
use crate::client::{AnswerFormat, Controls, ToolChoice};
use crate::conversation::ConversationSpec;
use loki_protocol::command::Command;
use loki_protocol::op::UserInput;
use loki_wire::message::{Message, Role};

/// `GET /v1/models`.
pub(super) async fn models(State(server): State<Arc<Server>>) -> Response {
    let state = &server.state;
    let models = state
        .providers
        .models(crate::config::clients::ModelKind::Chat)
        .unwrap_or_default();
    let chat = models.iter().map(crate::client::Model::id);
    let roles = crate::role::list(&state.paths.roles_dir)
        .into_iter()
        .map(|r| format!("role:{r}"));
    let agents = crate::agent::list(&state.paths.agents_dir)
        .into_iter()
        .map(|a| format!("agent:{a}"));
    let rags = crate::rag::list(&state.paths.rags_dir)
        .into_iter()
        .map(|r| format!("rag:{r}"));
    let data: Vec<Value> = chat
        .chain(roles)
        .chain(agents)
        .chain(rags)
        .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "loki"}))
        .collect();
    json_body(StatusCode::OK, &json!({"object": "list", "data": data}))
}

/// `GET /v1/models/{id}`.
pub(super) async fn model(
    State(server): State<Arc<Server>>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    let listed = models(State(server)).await;
    let known = super::reply::body_json(listed).await.and_then(|list| {
        list["data"]
            .as_array()
            .and_then(|data| data.iter().find(|m| m["id"] == id.as_str()).cloned())
    });
    match known {
        Some(model) => json_body(StatusCode::OK, &model),
        None => ApiError::new(
            StatusCode::NOT_FOUND,
            "model_not_found",
            format!("no model `{id}` (GET /v1/models lists them)"),
        )
        .openai()
        .into_response(),
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct ChatRequest {
    model: String,
    messages: Vec<Value>,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    stream_options: Option<Value>,
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    top_p: Option<f64>,
    #[serde(default)]
    tools: Option<Vec<Value>>,
    #[serde(default)]
    tool_choice: Option<Value>,
    #[serde(default)]
    max_tokens: Option<u64>,
    #[serde(default)]
    max_completion_tokens: Option<u64>,
    #[serde(default)]
    stop: Option<Value>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    response_format: Option<Value>,
    #[serde(default)]
    n: Option<u64>,
}

/// `stop`, `seed`, `response_format` and `tool_choice` of an OpenAI request.
pub(super) fn controls(
    stop: Option<&Value>,
    seed: Option<u64>,
    format: Option<&Value>,
    tool_choice: Option<&Value>,
) -> Result<Controls, ApiError> {
    let bad = |m: &str| ApiError::bad_request(m).openai();
    let stop = match stop {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(one)) => vec![one.clone()],
        Some(Value::Array(many)) => many
            .iter()
            .map(|s| s.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad("`stop` is a string or a list of strings"))?,
        Some(_) => return Err(bad("`stop` is a string or a list of strings")),
    };
    let format = match format {
        None | Some(Value::Null) => None,
        Some(f) => match f["type"].as_str() {
            Some("text") => None,
            Some("json_object") => Some(AnswerFormat::JsonObject),
            Some("json_schema") => {
                let spec = &f["json_schema"];
                Some(AnswerFormat::JsonSchema {
                    name: spec["name"].as_str().unwrap_or("answer").to_string(),
                    schema: spec["schema"].clone(),
                    strict: spec["strict"].as_bool().unwrap_or(false),
                })
            }
            _ => {
                return Err(bad(
                    "`response_format.type` is text, json_object or json_schema",
                ));
            }
        },
    };
    let tool_choice = match tool_choice {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(match c.as_str() {
            "auto" => ToolChoice::Auto,
            "none" => ToolChoice::None,
            "required" => ToolChoice::Required,
            _ => return Err(bad("`tool_choice` is auto, none, required or a function")),
        }),
        Some(c) => Some(ToolChoice::Function(
            c["function"]["name"]
                .as_str()
                .or(c["name"].as_str())
                .ok_or_else(|| bad("`tool_choice.function.name` is missing"))?
                .to_string(),
        )),
    };
    Ok(Controls {
        stop,
        seed,
        format,
        tool_choice,
        effort: None,
    })
}

/// The client's `tools` (`{"type":"function","function":{name, description, parameters}}`).
fn client_tools(tools: &[Value]) -> Result<Vec<crate::client::ToolSpec>, ApiError> {
    tools
        .iter()
        .map(|t| {
            let f = &t["function"];
            let name = f["name"]
                .as_str()
                .filter(|n| !n.is_empty())
                .ok_or_else(|| {
                    ApiError::bad_request("every tool needs `function.name`").openai()
                })?;
            Ok(crate::client::ToolSpec {
                name: name.to_string(),
                description: f["description"].as_str().unwrap_or_default().to_string(),
                parameters: if f["parameters"].is_object() {
                    f["parameters"].clone()
                } else {
                    json!({"type": "object", "properties": {}})
                },
            })
        })
        .collect()
}

/// An assistant message's `tool_calls`.
fn calls_of(message: &Value) -> Vec<loki_wire::message::ToolCall> {
    message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| loki_wire::message::ToolCall {
            id: c["id"].as_str().unwrap_or_default().to_string(),
            name: c["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            arguments: c["function"]["arguments"]
                .as_str()
                .unwrap_or("{}")
                .to_string(),
            signature: None,
        })
        .collect()
}

/// Calls in OpenAI's shape.
pub(super) fn calls_json(calls: &[loki_wire::message::ToolCall]) -> Value {
    Value::Array(
        calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments}})
            })
            .collect(),
    )
}

/// The text of an OpenAI message's `content` (a string, or text parts).
fn text_of(content: &Value) -> Result<String, ApiError> {
    match content {
        Value::String(text) => Ok(text.clone()),
        Value::Null => Ok(String::new()),
        Value::Array(parts) => Ok(parts
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")),
        _ => Err(ApiError::bad_request("`content` is a string or a list of parts").openai()),
    }
}

/// The conversation a request describes: the model (or role, agent, knowledge base),
/// the system prompt, the earlier messages, and the last user message as the prompt.
fn conversation(request: &ChatRequest) -> Result<(ConversationSpec, UserInput), ApiError> {
    let mut commands = Vec::new();
    let mut model = None;
    match request.model.split_once(':') {
        Some(("role", name)) => commands.push(Command::UseRole(name.to_string())),
        Some(("agent", name)) => commands.push(Command::UseAgent {
            name: name.to_string(),
            variables: Vec::new(),
            session: None,
        }),
        Some(("rag", name)) => commands.push(Command::UseRag(name.to_string())),
        _ => model = Some(request.model.clone()),
    }
    let mut system = Vec::new();
    let mut prior = Vec::new();
    for message in &request.messages {
        let text = text_of(&message["content"])?;
        match message["role"].as_str() {
            Some("system" | "developer") => system.push(text),
            Some("user") => prior.push(Message::text(Role::User, text)),
            Some("assistant") => {
                let mut assistant = Message::text(Role::Assistant, text);
                assistant.tool_calls = calls_of(message);
                prior.push(assistant);
            }
            Some("tool") => {
                let mut result = Message::text(Role::Tool, text);
                result.tool_call_id = message["tool_call_id"].as_str().map(str::to_string);
                prior.push(result);
            }
            _ => return Err(ApiError::bad_request("every message needs a `role`").openai()),
        }
    }
    // A conversation that ends with tool results is answered as it stands; otherwise the
    // last message is the user's prompt.
    let resume = prior.last().is_some_and(|m| m.role == Role::Tool);
    let text = if resume {
        String::new()
    } else {
        prior
            .pop()
            .filter(|m| m.role == Role::User)
            .ok_or_else(|| {
                ApiError::bad_request("the last message must be the user's or a tool result")
                    .openai()
            })?
            .text_content()
    };
    if !system.is_empty() && commands.is_empty() {
        commands.push(Command::UsePrompt(system.join("\n\n")));
    }
    for (key, value) in [
        ("temperature", request.temperature),
        ("top_p", request.top_p),
    ] {
        if let Some(value) = value {
            commands.push(Command::Set {
                key: key.into(),
                value: value.to_string(),
            });
        }
    }
    if request.n.is_some_and(|n| n != 1) {
        return Err(ApiError::bad_request(
            "`n` other than 1 is not supported: ask again for another answer",
        )
        .openai());
    }
    if let Some(max) = request.max_completion_tokens.or(request.max_tokens) {
        commands.push(Command::Set {
            key: "max_output_tokens".into(),
            value: max.to_string(),
        });
    }
    let controls = controls(
        request.stop.as_ref(),
        request.seed,
        request.response_format.as_ref(),
        request.tool_choice.as_ref(),
    )?;
    let tools = if controls.tool_choice == Some(ToolChoice::None) {
        Vec::new()
    } else {
        client_tools(request.tools.as_deref().unwrap_or_default())?
    };
    let spec = ConversationSpec {
        model,
        commands,
        client_tools: tools,
        controls,
        ..ConversationSpec::default()
    };
    let input = UserInput {
        text,
        prior,
        continuation: resume.then_some(loki_protocol::op::Continuation::Resume),
        ..UserInput::default()
    };
    Ok((spec, input))
}

/// `POST /v1/chat/completions`.
pub(super) async fn chat_completions(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let request: ChatRequest = match super::api::body(bytes) {
        Ok(r) => r,
        Err(e) => return e.openai().into_response(),
    };
    let (spec, input) = match conversation(&request) {
        Ok(found) => found,
        Err(e) => return e.into_response(),
    };
    let client_names: Vec<String> = request
        .tools
        .as_deref()
        .map(client_tools)
        .transpose()
        .ok()
        .flatten()
        .unwrap_or_default()
        .into_iter()
        .map(|t| t.name)
        .collect();
    let include_usage = request
        .stream_options
        .as_ref()
        .is_some_and(|o| o["include_usage"] == true);
    let shape = ChatShape::new(request.model.clone(), include_usage, client_names);
    // The client runs its own tools; loki's that need approval are refused (nobody
    // could approve them here).
    let run = Run {
        spec,
        input,
        key: RunKey {
            id: info.id.clone(),
            owner: info.caller.subject.clone(),
            session: None,
        },
        approvals: ApprovalPolicy::Deny,
    };
    server.answer(run, request.stream, shape).await
}

/// Usage in the chat-completions shape, with the prompt tokens the provider served from
/// its cache (`cached_tokens`, as OpenAI, Anthropic, Gemini and Bedrock report them).
pub(super) fn usage_json(usage: loki_wire::message::Usage) -> Value {
    json!({
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
    })
}

/// The provider and model `id` names, of `kind`.
fn model_of(
    server: &Server,
    id: &str,
    kind: crate::config::clients::ModelKind,
) -> Result<(Arc<dyn crate::client::Provider>, crate::client::Model), ApiError> {
    let registry = &server.state.providers;
    let model = registry
        .resolve(id, kind)
        .map_err(|e| ApiError::from(crate::error::CoreError::from(e)).openai())?;
    let provider = registry.provider(&model.client).ok_or_else(|| {
        ApiError::not_found(format!("the client of `{id}` is not configured")).openai()
    })?;
    Ok((provider, model))
}

#[derive(Debug, Deserialize)]
pub(super) struct EmbeddingsRequest {
    model: String,
    input: Value,
    /// `float` (the default) or `base64`: the vector's little-endian `f32` bytes, which
    /// the OpenAI SDKs ask for by default and decode themselves.
    #[serde(default)]
    encoding_format: Option<String>,
}

/// One vector as `encoding_format` asks: a list of numbers, or base64 of its
/// little-endian `f32` bytes.
fn encoded(vector: Vec<f32>, base64: bool) -> Value {
    if !base64 {
        return json!(vector);
    }
    let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    json!(base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        bytes
    ))
}

/// `POST /v1/embeddings`: `input` is a string or a list of strings.
pub(super) async fn embeddings(
    State(server): State<Arc<Server>>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let request: EmbeddingsRequest = super::api::body(bytes).map_err(ApiError::openai)?;
    let texts: Vec<String> = match &request.input {
        Value::String(text) => vec![text.clone()],
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                ApiError::bad_request("`input` is a string or a list of strings").openai()
            })?,
        _ => {
            return Err(ApiError::bad_request("`input` is a string or a list of strings").openai());
        }
    };
    let base64 = match request.encoding_format.as_deref() {
        None | Some("float") => false,
        Some("base64") => true,
        Some(_) => {
            return Err(ApiError::bad_request("`encoding_format` is `float` or `base64`").openai());
        }
    };
    let (provider, model) = model_of(
        &server,
        &request.model,
        crate::config::clients::ModelKind::Embedding,
    )?;
    let vectors = crate::client::embed::embed_all(
        provider.as_ref(),
        &model,
        &texts,
        crate::client::embed::Purpose::Document,
    )
    .await
    .map_err(|e| ApiError::from(crate::error::CoreError::from(e)).openai())?;
    let data: Vec<Value> = vectors
        .into_iter()
        .enumerate()
        .map(|(index, vector)| {
            json!({"object": "embedding", "index": index, "embedding": encoded(vector, base64)})
        })
        .collect();
    Ok(json_body(
        StatusCode::OK,
        &json!({"object": "list", "data": data, "model": request.model,
                "usage": {"prompt_tokens": 0, "total_tokens": 0}}),
    ))
}

#[derive(Debug, Deserialize)]
pub(super) struct RerankRequest {
    model: String,
    query: String,
    documents: Vec<String>,
    #[serde(default)]
    top_n: Option<usize>,
}

/// `POST /v1/rerank` (the Jina/Cohere shape): `results` best first.
pub(super) async fn rerank(
    State(server): State<Arc<Server>>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let request: RerankRequest = super::api::body(bytes).map_err(ApiError::openai)?;
    let (provider, model) = model_of(
        &server,
        &request.model,
        crate::config::clients::ModelKind::Reranker,
    )?;
    let top_n = request.top_n.unwrap_or(request.documents.len());
    let ranked = provider
        .rerank(&model, &request.query, &request.documents, top_n)
        .await
        .map_err(|e| ApiError::from(crate::error::CoreError::from(e)).openai())?;
    let results: Vec<Value> = ranked
        .into_iter()
        .map(|r| {
            json!({"index": r.index, "relevance_score": r.score,
                        "document": {"text": request.documents.get(r.index)}})
        })
        .collect();
    Ok(json_body(
        StatusCode::OK,
        &json!({"model": request.model, "results": results}),
    ))
}
