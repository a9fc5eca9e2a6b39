//! loki's tools in Claude Code's shapes: for each loki tool shown under a Claude name,
//! how its arguments look as Claude's tool input (`fs_write {path, contents}` is `Write
//! {file_path, content}`), how input a program or hook edited maps back to loki's
//! arguments before the tool runs, and how its result looks as Claude's `tool_response`.
//!
//! One table, [`SHAPES`], used by every path that shows a tool under a Claude name: the
//! SDK mode's `tool_use` blocks and `can_use_tool` requests, the program's and the
//! settings' hooks. A tool not in it keeps its loki name and arguments.
//!
//! Edited input maps back field by field; a field loki's tool has no counterpart for is
//! refused rather than dropped, when dropping it would run something other than what
//! the editor asked for (`Grep`'s `-i`, `WebSearch`'s `blocked_domains`). Fields that
//! only describe a call (`Bash`'s `description`) are dropped, and loki's own argument
//! names are accepted too, so hooks written for loki's shapes keep working.

use serde_json::{Map, Value, json};

/// How a tool's result looks to a hook's `tool_response`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    /// The result text, as loki's tool returned it.
    Text,
    /// `{filePath, content, success}`, as Claude's `Write` answers.
    Written,
    /// `{filePath, oldString, newString, replaceAll, success}`, as Claude's `Edit`.
    Edited,
    /// `{type: "text", file: {filePath, content}}`, as Claude's `Read`.
    Read,
    /// `{stdout, stderr, interrupted, isImage}`, as Claude's `Bash` (loki's output holds
    /// both streams and the exit code, so it is all `stdout`).
    Shell,
}

/// One loki tool under its Claude name.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// loki's tool.
    pub loki: &'static str,
    /// The Claude tool it is shown as.
    pub claude: &'static str,
    /// `(loki argument, Claude field)` pairs; arguments not listed keep their names.
    pub fields: &'static [(&'static str, &'static str)],
    /// Claude fields that only describe the call: dropped on the way back.
    pub notes: &'static [&'static str],
    /// Claude fields loki's tool cannot honour: edited input that has one is refused.
    pub unsupported: &'static [&'static str],
    /// How its result looks to a hook.
    pub response: Response,
}

/// `Grep`'s fields that loki's `fs_grep` has no counterpart for.
const GREP_ONLY: &[&str] = &[
    "type",
    "output_mode",
    "-i",
    "-n",
    "-A",
    "-B",
    "-C",
    "multiline",
    "head_limit",
];

/// Every loki tool with a Claude shape.
pub const SHAPES: &[Shape] = &[
    Shape {
        loki: "fs_write",
        claude: "Write",
        fields: &[("path", "file_path"), ("contents", "content")],
        notes: &[],
        unsupported: &[],
        response: Response::Written,
    },
    Shape {
        loki: "fs_read",
        claude: "Read",
        fields: &[
            ("path", "file_path"),
            ("offset", "offset"),
            ("limit", "limit"),
        ],
        notes: &[],
        unsupported: &[],
        response: Response::Read,
    },
    Shape {
        loki: "fs_cat",
        claude: "Read",
        fields: &[("path", "file_path")],
        notes: &[],
        unsupported: &["offset", "limit"],
        response: Response::Read,
    },
    Shape {
        loki: "fs_edit",
        claude: "Edit",
        fields: &[
            ("path", "file_path"),
            ("old_string", "old_string"),
            ("new_string", "new_string"),
            ("replace_all", "replace_all"),
        ],
        notes: &[],
        unsupported: &[],
        response: Response::Edited,
    },
    // Claude has no diff tool: a patch is an `Edit` of `file_path` with loki's diff.
    Shape {
        loki: "fs_patch",
        claude: "Edit",
        fields: &[("path", "file_path"), ("contents", "patch")],
        notes: &[],
        unsupported: &["old_string", "new_string", "replace_all"],
        response: Response::Text,
    },
    Shape {
        loki: "execute_command",
        claude: "Bash",
        fields: &[("command", "command"), ("background", "run_in_background")],
        notes: &["description"],
        unsupported: &["timeout"],
        response: Response::Shell,
    },
    Shape {
        loki: "fs_glob",
        claude: "Glob",
        fields: &[("pattern", "pattern"), ("path", "path")],
        notes: &[],
        unsupported: &[],
        response: Response::Text,
    },
    Shape {
        loki: "fs_grep",
        claude: "Grep",
        fields: &[
            ("pattern", "pattern"),
            ("path", "path"),
            ("include", "glob"),
        ],
        notes: &[],
        unsupported: GREP_ONLY,
        response: Response::Text,
    },
    Shape {
        loki: "fs_ls",
        claude: "LS",
        fields: &[("path", "path")],
        notes: &[],
        unsupported: &["ignore"],
        response: Response::Text,
    },
    // loki fetches the whole page: there is no `prompt` to run over it.
    Shape {
        loki: "fetch_url",
        claude: "WebFetch",
        fields: &[("url", "url")],
        notes: &["prompt"],
        unsupported: &[],
        response: Response::Text,
    },
    Shape {
        loki: "web_search",
        claude: "WebSearch",
        fields: &[("query", "query")],
        notes: &[],
        unsupported: &["allowed_domains", "blocked_domains"],
        response: Response::Text,
    },
    // `task` is Claude's `Task` itself; an orchestrator's `agent__spawn` is shown as it.
    Shape {
        loki: "task",
        claude: "Task",
        fields: &[
            ("description", "description"),
            ("prompt", "prompt"),
            ("subagent_type", "subagent_type"),
        ],
        notes: &[],
        unsupported: &[],
        response: Response::Text,
    },
    Shape {
        loki: "agent__spawn",
        claude: "Task",
        fields: &[("agent", "subagent_type"), ("prompt", "prompt")],
        notes: &["description"],
        unsupported: &[],
        response: Response::Text,
    },
];

/// Edited Claude input that loki's tool cannot run as the editor meant it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// A field with no counterpart in loki's tool.
    #[error(
        "{claude}'s `{field}` has no counterpart in loki's `{loki}`, so the edited call did not run"
    )]
    Unsupported {
        /// The Claude tool.
        claude: &'static str,
        /// The field.
        field: String,
        /// loki's tool.
        loki: &'static str,
    },
    /// Input that is not a JSON object.
    #[error("the edited input for {claude} is not a JSON object")]
    NotAnObject {
        /// The Claude tool.
        claude: &'static str,
    },
}

/// The Claude shape of loki tool `tool`, when it has one.
pub fn of(tool: &str) -> Option<&'static Shape> {
    SHAPES.iter().find(|s| s.loki == tool)
}

/// loki's arguments `args` for `tool` as Claude's input for its Claude name (unchanged
/// for a tool without a Claude shape).
pub fn to_claude(tool: &str, args: &Value) -> Value {
    let (Some(shape), Some(object)) = (of(tool), args.as_object()) else {
        return args.clone();
    };
    let renamed = object.iter().map(|(key, value)| {
        let field = shape
            .fields
            .iter()
            .find(|(loki, _)| loki == key)
            .map_or(key.as_str(), |(_, claude)| claude);
        (field.to_string(), value.clone())
    });
    Value::Object(renamed.collect())
}

/// Claude's `input` for loki tool `tool` (a program's `updatedInput`) as loki's
/// arguments. Claude's field names win over loki's when both are given.
pub fn to_loki(tool: &str, input: &Value) -> Result<Value, ShapeError> {
    let Some(shape) = of(tool) else {
        return Ok(input.clone());
    };
    let object = input.as_object().ok_or(ShapeError::NotAnObject {
        claude: shape.claude,
    })?;
    let mut kept = Map::new();
    let mut renamed = Map::new();
    for (key, value) in object {
        if let Some((loki, _)) = shape.fields.iter().find(|(_, claude)| claude == key) {
            renamed.insert((*loki).to_string(), value.clone());
        } else if shape.unsupported.contains(&key.as_str()) {
            return Err(ShapeError::Unsupported {
                claude: shape.claude,
                field: key.clone(),
                loki: shape.loki,
            });
        } else if !shape.notes.contains(&key.as_str()) {
            kept.insert(key.clone(), value.clone());
        }
    }
    kept.extend(renamed);
    Ok(Value::Object(kept))
}

/// What a hook's `tool_response` holds for a call of `tool` with loki's `args` that
/// returned `result` (`ok`: it succeeded; a failure is its message, as text).
pub fn response(tool: &str, args: &Value, result: &str, ok: bool) -> Value {
    let kind = of(tool).map_or(Response::Text, |s| s.response);
    let path = &args["path"];
    match kind {
        _ if !ok => json!(result),
        Response::Text => json!(result),
        Response::Written => json!({
            "filePath": path,
            "content": args["contents"],
            "success": true,
        }),
        Response::Edited => json!({
            "filePath": path,
            "oldString": args["old_string"],
            "newString": args["new_string"],
            "replaceAll": args["replace_all"].as_bool().unwrap_or(false),
            "success": true,
        }),
        Response::Read => json!({"type": "text", "file": {"filePath": path, "content": result}}),
        Response::Shell => json!({
            "stdout": result,
            "stderr": "",
            "interrupted": false,
            "isImage": false,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// loki's arguments and Claude's input for one call of every shaped tool.
    fn examples() -> Vec<(&'static str, Value, Value)> {
        vec![
            (
                "fs_write",
                json!({"path": "a.txt", "contents": "hi"}),
                json!({"file_path": "a.txt", "content": "hi"}),
            ),
            (
                "fs_read",
                json!({"path": "a.txt", "offset": 3, "limit": 10}),
                json!({"file_path": "a.txt", "offset": 3, "limit": 10}),
            ),
            (
                "fs_cat",
                json!({"path": "a.txt"}),
                json!({"file_path": "a.txt"}),
            ),
            (
                "fs_edit",
                json!({"path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": true}),
                json!({"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": true}),
            ),
            (
                "fs_patch",
                json!({"path": "a.txt", "contents": "@@ -1 +1 @@\n-a\n+b\n"}),
                json!({"file_path": "a.txt", "patch": "@@ -1 +1 @@\n-a\n+b\n"}),
            ),
            (
                "execute_command",
                json!({"command": "ls"}),
                json!({"command": "ls"}),
            ),
            (
                "fs_glob",
                json!({"pattern": "**/*.rs", "path": "src"}),
                json!({"pattern": "**/*.rs", "path": "src"}),
            ),
            (
                "fs_grep",
                json!({"pattern": "fn", "path": "src", "include": "*.rs"}),
                json!({"pattern": "fn", "path": "src", "glob": "*.rs"}),
            ),
            ("fs_ls", json!({"path": "."}), json!({"path": "."})),
            (
                "fetch_url",
                json!({"url": "https://example.com"}),
                json!({"url": "https://example.com"}),
            ),
            (
                "web_search",
                json!({"query": "rust"}),
                json!({"query": "rust"}),
            ),
            (
                "task",
                json!({"description": "find it", "prompt": "do it", "subagent_type": "explore"}),
                json!({"description": "find it", "prompt": "do it", "subagent_type": "explore"}),
            ),
            (
                "agent__spawn",
                json!({"agent": "coder", "prompt": "do it"}),
                json!({"subagent_type": "coder", "prompt": "do it"}),
            ),
        ]
    }

    #[test]
    fn every_shaped_tool_round_trips() {
        let examples = examples();
        for shape in SHAPES {
            assert!(
                examples.iter().any(|(tool, ..)| *tool == shape.loki),
                "no example for {}",
                shape.loki
            );
        }
        for (tool, loki, claude) in examples {
            assert_eq!(to_claude(tool, &loki), claude, "{tool}");
            assert_eq!(to_loki(tool, &claude), Ok(loki), "{tool}");
        }
    }

    #[test]
    fn edited_input_maps_back_or_is_refused() {
        // Notes are dropped; loki's own names are accepted; Claude's win.
        assert_eq!(
            to_loki(
                "execute_command",
                &json!({"command": "ls", "description": "list"})
            ),
            Ok(json!({"command": "ls"}))
        );
        assert_eq!(
            to_loki("fs_write", &json!({"path": "old", "contents": "x"})),
            Ok(json!({"path": "old", "contents": "x"}))
        );
        assert_eq!(
            to_loki(
                "fs_write",
                &json!({"path": "old", "file_path": "new", "content": "x"})
            ),
            Ok(json!({"path": "new", "contents": "x"}))
        );
        assert!(matches!(
            to_loki("web_search", &json!({"query": "q", "blocked_domains": ["a.com"]})),
            Err(ShapeError::Unsupported { field, .. }) if field == "blocked_domains"
        ));
        assert!(to_loki("fs_grep", &json!({"pattern": "x", "-i": true})).is_err());
        assert!(to_loki("fs_cat", &json!({"file_path": "a", "offset": 2})).is_err());
        assert!(to_loki("fs_write", &json!("a")).is_err());
        // A tool without a Claude shape keeps its arguments both ways.
        let todo = json!({"task": "x"});
        assert_eq!(to_claude("todo__add", &todo), todo);
        assert_eq!(to_loki("todo__add", &todo), Ok(todo));
    }

    #[test]
    fn results_look_like_claudes() {
        let write = json!({"path": "a.txt", "contents": "hi"});
        assert_eq!(
            response("fs_write", &write, "wrote 2 bytes to a.txt", true),
            json!({"filePath": "a.txt", "content": "hi", "success": true})
        );
        assert_eq!(
            response(
                "execute_command",
                &json!({"command": "ls"}),
                "a\n[exit code: 0]",
                true
            )["stdout"],
            "a\n[exit code: 0]"
        );
        assert_eq!(
            response("fs_read", &json!({"path": "a"}), "     1\tx\n", true)["file"]["content"],
            "     1\tx\n"
        );
        assert_eq!(
            response("fs_write", &write, "denied", false),
            json!("denied")
        );
        assert_eq!(response("fs_glob", &json!({}), "a.rs", true), json!("a.rs"));
    }
}
