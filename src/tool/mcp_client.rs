//! The conversation's side of an MCP call: a server's form is asked field by field
//! through the conversation's [`Asker`] (so the terminal, an `answer` line of
//! `--input-format stream-json`, or nobody answers it), a page it wants visited is shown
//! for the user to open, and the roots are the conversation's working directory.

// Roots are deprecated by SEP-2577 but still what servers use.
#![allow(deprecated)]

use std::path::Path;

use futures_util::future::BoxFuture;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, Root,
};
use serde_json::{Map, Value};

use super::ask::{Answer, Asker};
use crate::mcp::client_side::{ClientSide, SamplingError};
use loki_protocol::event::Question;

/// Tries per field before a form is given up (declined).
const TRIES: usize = 3;

/// Has the conversation's model answer a server's request (MCP sampling), once the
/// user agrees. The engine implements it.
pub trait Sampler: Send + Sync {
    /// Answers `messages` (`(role, text)`, after `system`) in at most `max_tokens`;
    /// `(text, model id)`, or why not (declined, failed).
    fn sample<'a>(
        &'a self,
        server: &'a str,
        system: Option<String>,
        messages: Vec<(String, String)>,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<(String, String), SamplingError>>;
}

/// Serves the questions of one conversation's MCP calls.
pub struct ConversationSide<'a> {
    /// Who answers.
    pub asker: &'a dyn Asker,
    /// The conversation's label (shown with each question).
    pub conversation: &'a str,
    /// The working directory: the root.
    pub cwd: &'a Path,
    /// Who answers sampling requests (none: they are refused).
    pub sampler: Option<&'a dyn Sampler>,
}

impl ClientSide for ConversationSide<'_> {
    fn elicit<'a>(
        &'a self,
        server: &'a str,
        request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async move {
            match request {
                ElicitRequestParams::FormElicitationParams {
                    message,
                    requested_schema,
                    ..
                } => {
                    let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
                    form(self.asker, self.conversation, server, &message, &schema).await
                }
                ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                    page(self.asker, self.conversation, server, &message, &url).await
                }
                _ => ElicitResult::new(ElicitationAction::Decline),
            }
        })
    }

    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, SamplingError>> {
        Box::pin(async move {
            let Some(sampler) = self.sampler else {
                return Err(SamplingError::NoSampler);
            };
            let messages = request
                .messages
                .iter()
                .map(|m| {
                    let role = crate::mcp::server::role_name(&m.role);
                    let content = serde_json::to_value(&m.content).unwrap_or_default();
                    (role, sampled_text(&content))
                })
                .collect();
            let (text, model) = sampler
                .sample(
                    server,
                    request.system_prompt.clone(),
                    messages,
                    request.max_tokens,
                )
                .await?;
            let message = rmcp::model::SamplingMessage::assistant_text(text);
            Ok(CreateMessageResult::new(message, model))
        })
    }

    fn roots(&self) -> Vec<Root> {
        reqwest::Url::from_directory_path(self.cwd)
            .map(|url| {
                let mut root = Root::new(url.to_string());
                root.name = Some("working directory".into());
                vec![root]
            })
            .unwrap_or_default()
    }
}

/// The text of a sampling message's content (one block or several; non-text blocks
/// described).
fn sampled_text(content: &Value) -> String {
    let block = |b: &Value| match b["type"].as_str() {
        Some("text") => b["text"].as_str().unwrap_or_default().to_string(),
        Some(other) => format!("[{other} content]"),
        None => String::new(),
    };
    match content {
        Value::Array(blocks) => blocks.iter().map(block).collect::<Vec<_>>().join("\n"),
        other => block(other),
    }
}

/// The action for an answer that is not one.
fn stopped(answer: &Answer) -> ElicitResult {
    ElicitResult::new(match answer {
        Answer::Cancelled => ElicitationAction::Cancel,
        _ => ElicitationAction::Decline,
    })
}

/// Asks whether the user wants to answer at all, then each field of `schema` (a flat
/// object schema): a field left empty takes its `default`, or is left out when optional.
async fn form(
    asker: &dyn Asker,
    from: &str,
    server: &str,
    message: &str,
    schema: &Value,
) -> ElicitResult {
    let properties = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let consent = Question::Confirm {
        prompt: format!("MCP server `{server}` asks: {message} — answer?"),
    };
    match asker.ask(from, &consent).await {
        Answer::Confirm(true) => {}
        Answer::Confirm(false) => return ElicitResult::new(ElicitationAction::Decline),
        other => return stopped(&other),
    }
    let mut content = Map::new();
    for (name, field) in &properties {
        let needed = required.contains(&name.as_str());
        match ask_field(asker, from, name, field, needed).await {
            Ok(Some(value)) => {
                content.insert(name.clone(), value);
            }
            Ok(None) => {}
            Err(answer) => return stopped(&answer),
        }
    }
    ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
}

/// A page to open: shown in full, accepted when the user says they will visit it.
async fn page(
    asker: &dyn Asker,
    from: &str,
    server: &str,
    message: &str,
    url: &str,
) -> ElicitResult {
    let question = Question::Confirm {
        prompt: format!("MCP server `{server}` asks you to open {url} — {message} — open it?"),
    };
    match asker.ask(from, &question).await {
        Answer::Confirm(true) => ElicitResult::new(ElicitationAction::Accept),
        Answer::Confirm(false) => ElicitResult::new(ElicitationAction::Decline),
        other => stopped(&other),
    }
}

/// The options of an enum field: `enum`, or the `const` of each `oneOf`/`anyOf` entry.
fn options(field: &Value) -> Vec<String> {
    if let Some(values) = field["enum"].as_array() {
        return values.iter().map(plain).collect();
    }
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| field[*k].as_array())
        .flatten()
        .filter_map(|o| o.get("const").map(plain))
        .collect()
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Asks one field; `Ok(None)` leaves it out, `Err` stops the form.
async fn ask_field(
    asker: &dyn Asker,
    from: &str,
    name: &str,
    field: &Value,
    required: bool,
) -> Result<Option<Value>, Answer> {
    let title = field["title"].as_str().unwrap_or(name);
    let mut prompt = title.to_string();
    if let Some(description) = field["description"].as_str() {
        prompt.push_str(&format!(" ({description})"));
    }
    let default = field.get("default").cloned();
    if let Some(default) = &default {
        prompt.push_str(&format!(" [default: {}]", plain(default)));
    }
    let kind = field["type"].as_str().unwrap_or("string");
    // An empty answer where a choice is asked for (over stream-json) takes the default.
    let no_choice = |answer: &Answer| matches!(answer, Answer::Text(t) if t.is_empty());
    if kind == "boolean" {
        return match asker.ask(from, &Question::Confirm { prompt }).await {
            Answer::Confirm(yes) => Ok(Some(Value::Bool(yes))),
            answer if no_choice(&answer) && default.is_some() => Ok(default),
            answer if no_choice(&answer) && !required => Ok(None),
            other => Err(other),
        };
    }
    if kind == "array" {
        let options = options(&field["items"]);
        return match asker
            .ask(from, &Question::MultiSelect { prompt, options })
            .await
        {
            Answer::Choices(chosen) => Ok(Some(Value::from(chosen))),
            other => Err(other),
        };
    }
    let options = options(field);
    if !options.is_empty() {
        return match asker.ask(from, &Question::Select { prompt, options }).await {
            Answer::Choice(choice) => Ok(Some(Value::String(choice))),
            answer if no_choice(&answer) && default.is_some() => Ok(default),
            answer if no_choice(&answer) && !required => Ok(None),
            other => Err(other),
        };
    }
    for _ in 0..TRIES {
        let text = match asker
            .ask(
                from,
                &Question::Text {
                    prompt: prompt.clone(),
                },
            )
            .await
        {
            Answer::Text(text) => text,
            other => return Err(other),
        };
        let text = text.trim();
        if text.is_empty() {
            if default.is_some() {
                return Ok(default);
            }
            if !required {
                return Ok(None);
            }
            continue;
        }
        if let Some(value) = parse(kind, field, text) {
            return Ok(Some(value));
        }
    }
    Err(Answer::Refused(format!("no valid value for `{name}`")))
}

/// `text` as a value of `kind` within the field's bounds.
fn parse(kind: &str, field: &Value, text: &str) -> Option<Value> {
    let number = |n: f64| {
        let low = field["minimum"].as_f64().is_none_or(|m| n >= m);
        let high = field["maximum"].as_f64().is_none_or(|m| n <= m);
        low && high
    };
    match kind {
        "integer" => text
            .parse::<i64>()
            .ok()
            .filter(|n| number(*n as f64))
            .map(Value::from),
        "number" => text
            .parse::<f64>()
            .ok()
            .filter(|n| number(*n))
            .map(Value::from),
        _ => {
            let chars = text.chars().count() as u64;
            let short = field["minLength"].as_u64().is_some_and(|m| chars < m);
            let long = field["maxLength"].as_u64().is_some_and(|m| chars > m);
            (!short && !long).then(|| Value::String(text.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ask::Scripted;
    use serde_json::json;

    #[tokio::test]
    async fn a_form_is_asked_field_by_field_with_defaults_and_bounds() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name", "default": "Ann"},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "colour": {"type": "string", "enum": ["red", "blue"]},
                "tea": {"type": "boolean"},
                "nick": {"type": "string"}
            },
            "required": ["age"]
        });
        let asker = Scripted::new([
            Answer::Confirm(true),
            Answer::Text(String::new()), // name: the default
            Answer::Text("300".into()),  // age out of bounds: asked again
            Answer::Text("42".into()),
            Answer::Choice("blue".into()),
            Answer::Confirm(false),
            Answer::Text(String::new()), // nick: optional, left out
        ]);
        let result = form(&asker, "c1", "srv", "Who are you?", &schema).await;
        assert_eq!(result.action, ElicitationAction::Accept);
        assert_eq!(
            result.content,
            Some(json!({"name": "Ann", "age": 42, "colour": "blue", "tea": false}))
        );
        assert!(asker.asked()[0].1.prompt().contains("Who are you?"));
    }

    #[tokio::test]
    async fn an_empty_answer_to_a_choice_takes_the_default() {
        let schema = json!({
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["active", "pending"], "default": "pending"},
                "verified": {"type": "boolean", "default": true},
                "colour": {"type": "string", "enum": ["red", "blue"]}
            }
        });
        // As an `answer` line with "" arrives (see `escalate::answer_from_text`).
        let empty = || Answer::Text(String::new());
        let asker = Scripted::new([Answer::Confirm(true), empty(), empty(), empty()]);
        let result = form(&asker, "c1", "srv", "m", &schema).await;
        assert_eq!(result.action, ElicitationAction::Accept);
        assert_eq!(
            result.content,
            Some(json!({"status": "pending", "verified": true}))
        );
        assert_eq!(
            crate::tool::escalate::answer_from_text(&Question::Confirm { prompt: "x".into() }, ""),
            Ok(empty())
        );
    }

    #[tokio::test]
    async fn nobody_to_ask_declines_and_ctrl_c_cancels() {
        let schema = json!({"type": "object", "properties": {"x": {"type": "string"}}});
        let nobody = crate::tool::ask::Headless;
        let result = form(&nobody, "c1", "srv", "m", &schema).await;
        assert_eq!(result.action, ElicitationAction::Decline);
        let stopped = Scripted::new([Answer::Confirm(true), Answer::Cancelled]);
        let result = form(&stopped, "c1", "srv", "m", &schema).await;
        assert_eq!(result.action, ElicitationAction::Cancel);
    }
}
