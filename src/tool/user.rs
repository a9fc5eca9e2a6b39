//! The user-interaction tools (`user__ask`, `user__confirm`, `user__input`,
//! `user__checkbox`): conversation tools that put a question to the conversation's user
//! through its [`Asker`](super::ask::Asker). Offered in the REPL whenever function calling
//! is on; headless runs refuse them with a reason the model can act on.

use serde_json::{Value, json};

use super::ask::Answer;
use super::{ToolEnv, ToolError};
use crate::client::ToolSpec;
use loki_protocol::event::Question;

/// One of the user-interaction tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserTool {
    /// One of a list.
    Ask,
    /// Yes or no.
    Confirm,
    /// Free text.
    Input,
    /// Several of a list.
    Checkbox,
}

/// Every user-interaction tool, in the order they are offered.
pub const ALL: [UserTool; 4] = [
    UserTool::Ask,
    UserTool::Confirm,
    UserTool::Input,
    UserTool::Checkbox,
];

impl UserTool {
    /// The function name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ask => "user__ask",
            Self::Confirm => "user__confirm",
            Self::Input => "user__input",
            Self::Checkbox => "user__checkbox",
        }
    }

    /// The declaration sent to the model.
    pub fn spec(self) -> ToolSpec {
        // Sent with every request of a REPL turn: `question` and `options` need no words.
        let question = json!({"type": "string"});
        let options = json!({"type": "array", "items": {"type": "string"}});
        let (description, parameters) = match self {
            Self::Ask => (
                "Ask the user to pick one option; returns it, or the user's own answer when none fits.",
                json!({"type": "object", "properties": {"question": question, "options": options}, "required": ["question", "options"]}),
            ),
            Self::Confirm => (
                "Ask the user a yes/no question; returns \"yes\" or \"no\".",
                json!({"type": "object", "properties": {"question": question}, "required": ["question"]}),
            ),
            Self::Input => (
                "Ask the user for free-form text; returns what they typed.",
                json!({"type": "object", "properties": {"question": question}, "required": ["question"]}),
            ),
            Self::Checkbox => (
                "Ask the user to pick any number of options; returns a JSON array of those chosen.",
                json!({"type": "object", "properties": {"question": question, "options": options}, "required": ["question", "options"]}),
            ),
        };
        ToolSpec {
            name: self.name().into(),
            description: description.into(),
            parameters,
        }
    }

    /// Finds a tool by function name.
    pub fn find(name: &str) -> Option<Self> {
        ALL.into_iter().find(|t| t.name() == name)
    }

    /// Asks, and turns the answer into the tool's result.
    pub async fn run(self, args: &Value, env: &ToolEnv<'_>) -> Result<String, ToolError> {
        let prompt = args["question"]
            .as_str()
            .filter(|q| !q.trim().is_empty())
            .ok_or_else(|| ToolError::BadArguments("`question` is required".into()))?
            .to_string();
        let options = || -> Result<Vec<String>, ToolError> {
            let list: Vec<String> = args["options"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            if list.is_empty() {
                return Err(ToolError::BadArguments(
                    "`options` must be a non-empty list of strings".into(),
                ));
            }
            Ok(list)
        };
        let question = match self {
            Self::Ask => Question::Select {
                prompt,
                options: options()?,
            },
            Self::Confirm => Question::Confirm { prompt },
            Self::Input => Question::Text { prompt },
            Self::Checkbox => Question::MultiSelect {
                prompt,
                options: options()?,
            },
        };
        let answer = tokio::select! {
            biased;
            () = env.cancel.cancelled() => return Err(ToolError::Cancelled),
            answer = env.asker.ask(env.conversation, &question) => answer,
        };
        match answer {
            Answer::Text(text) | Answer::Choice(text) => Ok(text),
            Answer::Confirm(yes) => Ok(if yes { "yes" } else { "no" }.into()),
            Answer::Choices(chosen) => Ok(Value::from(chosen).to_string()),
            Answer::Refused(reason) => Err(ToolError::Refused(reason)),
            Answer::Cancelled => {
                env.cancel.cancel();
                Err(ToolError::Cancelled)
            }
        }
    }
}
