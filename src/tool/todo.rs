//! The todo tools (`todo__init`, `todo__add`, `todo__done`, `todo__list`,
//! `todo__clear`): an agent with `auto_continue` keeps a list of the steps of its task.
//! The list belongs to the conversation (it survives compression and is saved with its
//! session, so resuming the session resumes the list), and while items are open the
//! conversation asks the agent to go on ([`continuation`]).

use std::sync::Mutex;

use serde_json::{Value, json};

use super::{ToolEnv, ToolError};
use crate::client::ToolSpec;

/// One of the todo tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TodoTool {
    /// Start a new list for a goal.
    Init,
    /// Add an item.
    Add,
    /// Mark an item done.
    Done,
    /// Show the list.
    List,
    /// Empty the list.
    Clear,
}

/// Every todo tool, in the order they are offered.
pub const ALL: [TodoTool; 5] = [
    TodoTool::Init,
    TodoTool::Add,
    TodoTool::Done,
    TodoTool::List,
    TodoTool::Clear,
];

/// One item.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Item {
    /// Its number, from 1.
    pub id: u64,
    /// What to do.
    pub desc: String,
    /// Whether it is done.
    pub done: bool,
}

/// A conversation's todo list.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TodoList {
    /// What the list is for.
    pub goal: String,
    /// The items, in order.
    pub items: Vec<Item>,
}

impl TodoList {
    /// Whether there is nothing on it (no goal, no items).
    pub fn is_empty(&self) -> bool {
        self.goal.is_empty() && self.items.is_empty()
    }

    /// Items not done yet.
    pub fn open(&self) -> usize {
        self.items.iter().filter(|i| !i.done).count()
    }

    /// The list as text: the goal, the progress, one line per item.
    pub fn render(&self) -> String {
        let mut lines = Vec::new();
        if !self.goal.is_empty() {
            lines.push(format!("Goal: {}", self.goal));
        }
        let done = self.items.len() - self.open();
        lines.push(format!("Progress: {done}/{} completed", self.items.len()));
        for item in &self.items {
            let mark = if item.done { "✓" } else { "○" };
            lines.push(format!("  {mark} {}. {}", item.id, item.desc));
        }
        lines.join("\n")
    }
}

/// The instructions added to an agent's system prompt when it keeps a todo list.
pub const INSTRUCTIONS: &str = "\n\n## Task tracking\n\
You have a todo list (todo__init, todo__add, todo__done, todo__list, todo__clear). \
For any task with more than one step: call todo__init with the goal, add each step with \
todo__add before you start, and mark each step with todo__done as soon as it is finished \
and checked. While steps are open you will be asked to continue; finish them one by one.";

/// The default prompt that asks an agent to go on while items are open.
pub const CONTINUATION: &str = "[SYSTEM REMINDER - TODO CONTINUATION]\n\
You have unfinished items on your todo list. Rules:\n\
1. Before marking an item done, check that the work really works.\n\
2. If an item is broad, split it into specific items with todo__add first.\n\
3. Continue with the next open item now, calling tools right away.";

/// The message that asks an agent to go on: `prompt` (or the default) and the list.
pub fn continuation(prompt: Option<&str>, list: &TodoList) -> String {
    format!("{}\n\n{}", prompt.unwrap_or(CONTINUATION), list.render())
}

impl TodoTool {
    /// The function name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Init => "todo__init",
            Self::Add => "todo__add",
            Self::Done => "todo__done",
            Self::List => "todo__list",
            Self::Clear => "todo__clear",
        }
    }

    /// The declaration sent to the model.
    pub fn spec(self) -> ToolSpec {
        let none = json!({"type": "object", "properties": {}});
        let (description, parameters) = match self {
            Self::Init => (
                "Start a new todo list for a goal (the old list is dropped).",
                json!({"type": "object", "properties": {"goal": {"type": "string", "description": "What the list is for"}}, "required": ["goal"]}),
            ),
            Self::Add => (
                "Add an item to the todo list; returns its id.",
                json!({"type": "object", "properties": {"task": {"type": "string", "description": "One specific step"}}, "required": ["task"]}),
            ),
            Self::Done => (
                "Mark a todo item done.",
                json!({"type": "object", "properties": {"id": {"type": "integer", "description": "The item's id"}}, "required": ["id"]}),
            ),
            Self::List => ("Show the todo list.", none),
            Self::Clear => ("Empty the todo list.", none),
        };
        ToolSpec {
            name: self.name().into(),
            description: description.into(),
            parameters,
        }
    }

    /// Changes or reads the conversation's list.
    pub fn run(self, args: &Value, env: &ToolEnv<'_>) -> Result<String, ToolError> {
        let Some(list) = env.todo else {
            return Err(ToolError::Failed(
                "this conversation keeps no todo list".into(),
            ));
        };
        Ok(apply(self, args, list).to_string())
    }
}

fn apply(tool: TodoTool, args: &Value, list: &Mutex<TodoList>) -> Value {
    let mut list = list
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match tool {
        TodoTool::Init => {
            *list = TodoList {
                goal: args["goal"].as_str().unwrap_or_default().to_string(),
                items: Vec::new(),
            };
            json!({"status": "ok", "message": "Initialized new todo list"})
        }
        TodoTool::Add => {
            let task = args["task"].as_str().unwrap_or_default().trim();
            if task.is_empty() {
                return json!({"error": "task description is required"});
            }
            // Ids come from a session file too: the largest possible one is not followed.
            let Some(id) = list
                .items
                .iter()
                .map(|i| i.id)
                .max()
                .unwrap_or(0)
                .checked_add(1)
            else {
                return json!({"error": "the todo list has no free id left; start a new one"});
            };
            list.items.push(Item {
                id,
                desc: task.to_string(),
                done: false,
            });
            json!({"status": "ok", "id": id})
        }
        TodoTool::Done => {
            let id = args["id"]
                .as_u64()
                .or_else(|| args["id"].as_str().and_then(|s| s.trim().parse().ok()));
            let Some(id) = id else {
                return json!({"error": "id is required and must be a number"});
            };
            match list.items.iter_mut().find(|i| i.id == id) {
                Some(item) => {
                    item.done = true;
                    json!({"status": "ok", "message": format!("Marked todo {id} as done")})
                }
                None => json!({"error": format!("Todo {id} not found")}),
            }
        }
        TodoTool::List => {
            let todos: Vec<Value> = list
                .items
                .iter()
                .map(|i| json!({"id": i.id, "desc": i.desc, "done": i.done}))
                .collect();
            json!({"goal": list.goal, "todos": todos})
        }
        TodoTool::Clear => {
            *list = TodoList::default();
            json!({"status": "ok", "message": "Todo list cleared"})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tools_keep_a_numbered_list() {
        let list = Mutex::new(TodoList::default());
        let run = |tool, args: Value| apply(tool, &args, &list);
        let steps = [
            (
                TodoTool::Init,
                json!({"goal": "ship"}),
                json!({"status": "ok", "message": "Initialized new todo list"}),
            ),
            (
                TodoTool::Add,
                json!({"task": "write"}),
                json!({"status": "ok", "id": 1}),
            ),
            (
                TodoTool::Add,
                json!({"task": "test"}),
                json!({"status": "ok", "id": 2}),
            ),
            (
                TodoTool::Add,
                json!({"task": " "}),
                json!({"error": "task description is required"}),
            ),
            (
                TodoTool::Done,
                json!({"id": "1"}),
                json!({"status": "ok", "message": "Marked todo 1 as done"}),
            ),
            (
                TodoTool::Done,
                json!({"id": 9}),
                json!({"error": "Todo 9 not found"}),
            ),
            (
                TodoTool::Done,
                json!({}),
                json!({"error": "id is required and must be a number"}),
            ),
        ];
        for (tool, args, expected) in steps {
            assert_eq!(run(tool, args), expected);
        }
        let shown = list.lock().unwrap().render();
        assert_eq!(
            shown,
            "Goal: ship\nProgress: 1/2 completed\n  ✓ 1. write\n  ○ 2. test"
        );
        assert_eq!(
            run(TodoTool::List, json!({}))["todos"][1],
            json!({"id": 2, "desc": "test", "done": false})
        );
        assert_eq!(list.lock().unwrap().open(), 1);
        run(TodoTool::Clear, json!({}));
        assert_eq!(*list.lock().unwrap(), TodoList::default());
    }
}
