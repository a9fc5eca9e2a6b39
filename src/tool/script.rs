//! User tools written as scripts in `functions/tools/`: their comment annotations (bash)
//! or signature and docstring (Python) become the JSON schema sent to the model, and a
//! call runs the script the way Loki does.
//!
//! Bash: `# @describe`, `# @option --name[!*+][=default][[a|b]] [<VALUE>] description`,
//! `# @flag --name`, `# @arg name…`, `# @env NAME[!][=default]`, `# @meta require-tools a,b`.
//! The call sets `argc_<name>` variables (arrays for multi-valued options) and calls
//! `main`. Python: `def run(name: type = default, …)` with a Google-style docstring
//! (`Args:` section); the call passes keyword arguments. Either way the result is what
//! the script wrote to `$LLM_OUTPUT` (or printed, or — for Python — returned).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// A parsed script tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptTool {
    /// The name (file stem).
    pub name: String,
    /// The file.
    pub path: PathBuf,
    /// Its language.
    pub lang: Lang,
    /// What it does.
    pub description: String,
    /// JSON schema of its arguments.
    pub parameters: Value,
    /// Environment variables it requires (`@env NAME!`).
    pub required_env: Vec<String>,
    /// Defaults of environment variables (`@env NAME=value`).
    pub env_defaults: Vec<(String, String)>,
    /// Programs that must be installed (`@meta require-tools`).
    pub require_tools: Vec<String>,
}

/// Script language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// Bash.
    Bash,
    /// Python 3.
    Python,
}

/// A tool file that cannot be declared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {message}", path.display())]
pub struct ScriptError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line (0 when it concerns the whole file).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses a tool file by extension.
pub fn parse(path: &Path) -> Result<ScriptTool, ScriptError> {
    let err = |line: usize, message: String| ScriptError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(0, e.to_string()))?;
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| err(0, "the file name is not valid UTF-8".into()))?
        .to_string();
    let lang = match path.extension().and_then(|e| e.to_str()) {
        Some("sh") => Lang::Bash,
        Some("py") => Lang::Python,
        _ => {
            return Err(err(
                0,
                "unsupported tool file extension (use .sh or .py)".into(),
            ));
        }
    };
    let mut tool = match lang {
        Lang::Bash => parse_bash(&text).map_err(|(line, m)| err(line, m))?,
        Lang::Python => parse_python(&text).map_err(|(line, m)| err(line, m))?,
    };
    if tool.description.trim().is_empty() {
        return Err(err(
            0,
            "the tool has no description (`# @describe …` or a docstring)".into(),
        ));
    }
    tool.name = name;
    tool.path = path.to_path_buf();
    Ok(tool)
}

fn empty(lang: Lang) -> ScriptTool {
    ScriptTool {
        name: String::new(),
        path: PathBuf::new(),
        lang,
        description: String::new(),
        parameters: json!({"type": "object", "properties": {}, "required": []}),
        required_env: Vec::new(),
        env_defaults: Vec::new(),
        require_tools: Vec::new(),
    }
}

type ParseResult = Result<ScriptTool, (usize, String)>;

fn parse_bash(text: &str) -> ParseResult {
    let mut tool = empty(Lang::Bash);
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("# @") else {
            continue;
        };
        let (tag, body) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let body = body.trim();
        match tag {
            "describe" => tool.description = body.to_string(),
            "meta" => {
                if let Some(list) = body.strip_prefix("require-tools") {
                    tool.require_tools = list
                        .split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect();
                }
            }
            "env" => {
                let (spec, _) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
                let (name, default) = match spec.split_once('=') {
                    Some((name, default)) => (name, Some(default)),
                    None => (spec, None),
                };
                let name = name.split('[').next().unwrap_or(name);
                if let Some(name) = name.strip_suffix('!') {
                    tool.required_env.push(name.to_string());
                } else if let Some(default) = default.filter(|d| !d.starts_with('`')) {
                    tool.env_defaults
                        .push((name.to_string(), default.to_string()));
                }
            }
            "option" | "flag" | "arg" => {
                let param = parse_param(tag, body).map_err(|m| (i + 1, m))?;
                if param.required {
                    required.push(Value::String(param.name.clone()));
                }
                properties.insert(param.name, param.schema);
            }
            "cmd" => {
                return Err((
                    i + 1,
                    "`@cmd` sub-commands are for agent tool files; a tool file has one `main`"
                        .into(),
                ));
            }
            _ => {}
        }
    }
    tool.parameters = json!({"type": "object", "properties": properties, "required": required});
    Ok(tool)
}

struct Param {
    name: String,
    required: bool,
    schema: Value,
}

/// `--name!`, `-n --name*[a|b]`, `--name=default <VALUE>`, `name+`, followed by a
/// description.
fn parse_param(tag: &str, body: &str) -> Result<Param, String> {
    let mut words = body.split_whitespace().peekable();
    // A short option (`-o`) before the long one is only an alias.
    if tag != "arg"
        && let Some(first) = words.peek()
        && first.starts_with('-')
        && !first.starts_with("--")
        && body.contains(" --")
    {
        words.next();
    }
    let spec = words
        .next()
        .ok_or_else(|| format!("`@{tag}` needs a name"))?;
    let spec = spec.trim_start_matches('-');
    let name_end = spec
        .find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(spec.len());
    let (raw_name, modifiers) = spec.split_at(name_end);
    if raw_name.is_empty() {
        return Err(format!("`@{tag} {body}`: missing name"));
    }
    let name = raw_name.replace('-', "_");
    let mut rest: Vec<&str> = words.collect();
    while rest
        .first()
        .is_some_and(|w| w.starts_with('<') && w.ends_with('>'))
    {
        rest.remove(0);
    }
    let description = rest.join(" ");
    if tag == "flag" {
        return Ok(Param {
            name,
            required: false,
            schema: json!({"type": "boolean", "description": description}),
        });
    }
    let required = modifiers.starts_with('!') || modifiers.starts_with('+');
    let multi = modifiers.starts_with('*') || modifiers.starts_with('+');
    let mut item = json!({"type": "string"});
    let mut default = None;
    if let Some(open) = modifiers.find('[') {
        let choices = modifiers[open + 1..]
            .strip_suffix(']')
            .ok_or_else(|| format!("`{spec}`: unclosed `[` in the choice list"))?;
        if choices.starts_with('`') || choices.starts_with("?`") {
            // Choices computed by a shell function: any string is accepted.
        } else {
            let (choices, first_is_default) = match choices.strip_prefix('=') {
                Some(c) => (c, true),
                None => (choices, false),
            };
            let values: Vec<&str> = choices.split('|').collect();
            if first_is_default {
                default = values.first().map(|v| (*v).to_string());
            }
            item["enum"] = json!(values);
        }
    } else if let Some(eq) = modifiers.find('=') {
        let value = &modifiers[eq + 1..];
        if !value.starts_with('`') {
            default = Some(value.to_string());
        }
    }
    let mut schema = if multi {
        json!({"type": "array", "items": item})
    } else {
        item
    };
    schema["description"] = Value::String(description);
    if let Some(default) = default {
        schema["default"] = Value::String(default);
    }
    Ok(Param {
        name,
        required,
        schema,
    })
}

fn parse_python(text: &str) -> ParseResult {
    let mut tool = empty(Lang::Python);
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("def run("))
        .ok_or((0, "no top-level `def run(…)` function".to_string()))?;
    // The signature may span lines; it ends at the `:` after the closing parenthesis.
    let mut signature = String::new();
    let mut end = start;
    for (i, line) in lines.iter().enumerate().skip(start) {
        signature.push_str(line.trim());
        signature.push(' ');
        end = i;
        if balanced(&signature) && line.trim_end().ends_with(':') {
            break;
        }
    }
    let open = signature.find('(').unwrap_or(0);
    let close = signature
        .rfind(')')
        .ok_or((start + 1, "unclosed `(`".to_string()))?;
    let docstring = python_docstring(&lines[end + 1..]);
    let (description, arg_docs) = split_docstring(&docstring);
    tool.description = description;
    let mut properties = Map::new();
    let mut required = Vec::new();
    for param in split_top_level(&signature[open + 1..close]) {
        let param = param.trim();
        if param.is_empty() || param == "*" || param.starts_with("**") || param == "/" {
            continue;
        }
        let (head, default) = match param.split_once('=') {
            Some((h, d)) => (h.trim(), Some(d.trim())),
            None => (param, None),
        };
        let (name, hint) = match head.split_once(':') {
            Some((n, t)) => (n.trim(), t.trim()),
            None => {
                return Err((
                    start + 1,
                    format!("parameter `{head}` of run() has no type hint"),
                ));
            }
        };
        let (mut schema, optional) =
            python_type(hint).map_err(|m| (start + 1, format!("parameter `{name}`: {m}")))?;
        if let Some(doc) = arg_docs.iter().find(|(n, _)| n == name) {
            schema["description"] = Value::String(doc.1.clone());
        }
        if let Some(default) = default.and_then(python_literal) {
            schema["default"] = default;
        }
        if default.is_none() && !optional {
            required.push(Value::String(name.to_string()));
        }
        properties.insert(name.to_string(), schema);
    }
    tool.parameters = json!({"type": "object", "properties": properties, "required": required});
    Ok(tool)
}

fn balanced(text: &str) -> bool {
    let depth = text.chars().fold(0i32, |d, c| match c {
        '(' | '[' => d + 1,
        ')' | ']' => d - 1,
        _ => d,
    });
    depth == 0 && text.contains(')')
}

/// Splits on commas outside brackets.
fn split_top_level(text: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = parts.last_mut() {
            last.push(c);
        }
    }
    parts
}

/// The JSON schema of a type hint, and whether it is `Optional`.
fn python_type(hint: &str) -> Result<(Value, bool), String> {
    let hint = hint.trim();
    if let Some(inner) = hint
        .strip_prefix("Optional[")
        .and_then(|h| h.strip_suffix(']'))
    {
        return Ok((python_type(inner)?.0, true));
    }
    if let Some((a, b)) = hint.split_once('|')
        && (b.trim() == "None" || a.trim() == "None")
    {
        let inner = if a.trim() == "None" { b } else { a };
        return Ok((python_type(inner)?.0, true));
    }
    if let Some(inner) = hint
        .strip_prefix("Literal[")
        .and_then(|h| h.strip_suffix(']'))
    {
        let values: Vec<Value> = split_top_level(inner)
            .iter()
            .filter_map(|v| python_literal(v.trim()))
            .collect();
        return Ok((json!({"type": "string", "enum": values}), false));
    }
    for prefix in ["List[", "list["] {
        if let Some(inner) = hint.strip_prefix(prefix).and_then(|h| h.strip_suffix(']')) {
            return Ok((
                json!({"type": "array", "items": python_type(inner)?.0}),
                false,
            ));
        }
    }
    let simple = match hint {
        "str" => "string",
        "int" => "integer",
        "float" => "number",
        "bool" => "boolean",
        "list" | "List" => {
            return Ok((json!({"type": "array", "items": {"type": "string"}}), false));
        }
        "dict" | "Dict" => "object",
        other => return Err(format!("unsupported type hint `{other}`")),
    };
    Ok((json!({ "type": simple }), false))
}

fn python_literal(text: &str) -> Option<Value> {
    let text = text.trim();
    match text {
        "None" => return None,
        "True" => return Some(Value::Bool(true)),
        "False" => return Some(Value::Bool(false)),
        _ => {}
    }
    for quote in ['"', '\''] {
        if let Some(inner) = text.strip_prefix(quote).and_then(|t| t.strip_suffix(quote)) {
            return Some(Value::String(inner.to_string()));
        }
    }
    serde_json::from_str(text).ok()
}

/// The docstring right after the signature (`"""…"""` or `'''…'''`).
fn python_docstring(lines: &[&str]) -> String {
    let body: Vec<&str> = lines.iter().map(|l| l.trim()).collect();
    let Some(first) = body.iter().position(|l| !l.is_empty()) else {
        return String::new();
    };
    let quote = if body[first].starts_with("\"\"\"") {
        "\"\"\""
    } else if body[first].starts_with("'''") {
        "'''"
    } else {
        return String::new();
    };
    let mut doc = String::new();
    let opening = &body[first][3..];
    if let Some(end) = opening.find(quote) {
        return opening[..end].to_string();
    }
    doc.push_str(opening);
    for line in &body[first + 1..] {
        if let Some(end) = line.find(quote) {
            doc.push('\n');
            doc.push_str(&line[..end]);
            break;
        }
        doc.push('\n');
        doc.push_str(line);
    }
    doc
}

/// The description (text before `Args:`) and `(name, description)` of each argument.
fn split_docstring(doc: &str) -> (String, Vec<(String, String)>) {
    let mut description = Vec::new();
    let mut args: Vec<(String, String)> = Vec::new();
    let mut section = "";
    for line in doc.lines().map(str::trim) {
        if matches!(line, "Args:" | "Arguments:" | "Returns:" | "Raises:") {
            section = line;
            continue;
        }
        match section {
            "" => description.push(line),
            "Args:" | "Arguments:" => {
                if let Some((name, text)) = line.split_once(':')
                    && !name.contains(' ')
                {
                    let name = name.split('(').next().unwrap_or(name).trim();
                    args.push((name.to_string(), text.trim().to_string()));
                } else if let Some(last) = args.last_mut()
                    && !line.is_empty()
                {
                    last.1.push(' ');
                    last.1.push_str(line);
                }
            }
            _ => {}
        }
    }
    (description.join(" ").trim().to_string(), args)
}

/// Every `.sh`/`.py` tool in `dir` (restricted to `visible` file names when given);
/// files that cannot be declared are returned as errors.
pub fn load_dir(dir: &Path, visible: Option<&[String]>) -> (Vec<ScriptTool>, Vec<ScriptError>) {
    let mut tools = Vec::new();
    let mut errors = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (tools, errors);
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("sh" | "py")))
        .filter(|p| {
            let file = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            visible.is_none_or(|v| v.iter().any(|name| name == file))
        })
        .collect();
    paths.sort();
    for path in paths {
        match parse(&path) {
            Ok(tool) => tools.push(tool),
            Err(e) => errors.push(e),
        }
    }
    (tools, errors)
}

/// The wrapper that runs a call: sets the arguments up and calls the tool's entry point.
pub fn wrapper(tool: &ScriptTool, args: &Value) -> (String, Vec<String>) {
    match tool.lang {
        Lang::Bash => {
            let mut script = String::from("argc() { :; }\n");
            if let Value::Object(map) = args {
                for (key, value) in map {
                    let var = format!("argc_{}", key.replace('-', "_"));
                    if !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                        continue;
                    }
                    let line = match value {
                        Value::Array(items) => format!(
                            "{var}=({})",
                            items
                                .iter()
                                .map(|v| shell_quote(&scalar(v)))
                                .collect::<Vec<_>>()
                                .join(" ")
                        ),
                        Value::Bool(true) => format!("{var}=1"),
                        Value::Bool(false) | Value::Null => continue,
                        other => format!("{var}={}", shell_quote(&scalar(other))),
                    };
                    script.push_str(&line);
                    script.push('\n');
                }
            }
            script.push_str("source \"$LLM_TOOL_PATH\"\nmain\n");
            ("bash".into(), vec!["-c".into(), script])
        }
        Lang::Python => {
            let code = "import importlib.util, json, os, sys\n\
                        spec = importlib.util.spec_from_file_location('tool', os.environ['LLM_TOOL_PATH'])\n\
                        module = importlib.util.module_from_spec(spec)\n\
                        spec.loader.exec_module(module)\n\
                        result = module.run(**json.loads(sys.argv[1]))\n\
                        if result is not None:\n\
                        \x20   with open(os.environ['LLM_OUTPUT'], 'a') as out:\n\
                        \x20       out.write(result if isinstance(result, str) else json.dumps(result))\n";
            (
                "python3".into(),
                vec!["-c".into(), code.into(), args.to_string()],
            )
        }
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASH: &str = r#"#!/usr/bin/env bash
set -e
# @describe Search the issue tracker.
# @meta require-tools jq,curl
# @env TRACKER_TOKEN! The API token
# @env TRACKER_URL=https://example.com The server
# @option --query! <JQL> The query
# @option -l --limit=20 How many
# @option --state[=open|closed|all] Which issues
# @option --label* Labels to match
# @option --field+[summary|status] Fields to return
# @flag --verbose Include details
# @arg project Project key
main() {
    echo "$argc_query" >> "$LLM_OUTPUT"
}
eval "$(argc --argc-eval "$0" "$@")"
"#;

    #[test]
    fn bash_annotations_become_a_schema() {
        let tool = parse_bash(BASH).unwrap();
        assert_eq!(tool.description, "Search the issue tracker.");
        assert_eq!(tool.require_tools, ["jq", "curl"]);
        assert_eq!(tool.required_env, ["TRACKER_TOKEN"]);
        assert_eq!(
            tool.env_defaults,
            [("TRACKER_URL".to_string(), "https://example.com".to_string())]
        );
        assert_eq!(
            tool.parameters,
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "The query"},
                    "limit": {"type": "string", "description": "How many", "default": "20"},
                    "state": {"type": "string", "enum": ["open", "closed", "all"], "description": "Which issues", "default": "open"},
                    "label": {"type": "array", "items": {"type": "string"}, "description": "Labels to match"},
                    "field": {"type": "array", "items": {"type": "string", "enum": ["summary", "status"]}, "description": "Fields to return"},
                    "verbose": {"type": "boolean", "description": "Include details"},
                    "project": {"type": "string", "description": "Project key"}
                },
                "required": ["query", "field"]
            })
        );
    }

    #[test]
    fn python_signatures_become_a_schema() {
        let source = r#"
import os
from typing import List, Literal, Optional

def run(
    city: str,
    units: Literal["metric", "imperial"] = "metric",
    days: Optional[int] = None,
    tags: List[str] = [],
    verbose: bool = False,
) -> str:
    """Get the weather forecast.

    Args:
        city: The city name
        units: Unit system
        days: How many days
            ahead to forecast
    """
    return "sunny"

def _helper():
    pass
"#;
        let tool = parse_python(source).unwrap();
        assert_eq!(tool.description, "Get the weather forecast.");
        assert_eq!(
            tool.parameters,
            json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city name"},
                    "units": {"type": "string", "enum": ["metric", "imperial"], "description": "Unit system", "default": "metric"},
                    "days": {"type": "integer", "description": "How many days ahead to forecast"},
                    "tags": {"type": "array", "items": {"type": "string"}, "default": []},
                    "verbose": {"type": "boolean", "default": false}
                },
                "required": ["city"]
            })
        );
    }

    #[test]
    fn bad_files_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let py = dir.path().join("bad.py");
        std::fs::write(&py, "def run(x):\n    \"\"\"Does x.\"\"\"\n").unwrap();
        let err = parse(&py).unwrap_err().to_string();
        assert!(
            err.ends_with("bad.py:1: parameter `x` of run() has no type hint"),
            "{err}"
        );
        let sh = dir.path().join("nodesc.sh");
        std::fs::write(&sh, "# @option --x\nmain() { :; }\n").unwrap();
        assert!(
            parse(&sh)
                .unwrap_err()
                .to_string()
                .contains("no description")
        );
        let sh = dir.path().join("cmd.sh");
        std::fs::write(&sh, "# @describe x\n# @cmd List\nlist() { :; }\n").unwrap();
        assert!(parse(&sh).unwrap_err().to_string().contains("cmd.sh:2:"));
        let rb = dir.path().join("tool.rb");
        std::fs::write(&rb, "").unwrap();
        assert!(parse(&rb).unwrap_err().to_string().contains("unsupported"));
    }

    #[test]
    fn bash_wrappers_quote_every_value() {
        let tool = parse_bash(BASH).unwrap();
        let (program, args) = wrapper(
            &tool,
            &json!({"query": "it's $(rm -rf /)", "label": ["a b", "c"], "verbose": true, "limit": 5}),
        );
        assert_eq!(program, "bash");
        let script = &args[1];
        assert!(
            script.contains(r"argc_query='it'\''s $(rm -rf /)'"),
            "{script}"
        );
        assert!(script.contains("argc_label=('a b' 'c')"), "{script}");
        assert!(script.contains("argc_verbose=1"), "{script}");
        assert!(script.contains("argc_limit='5'"), "{script}");
        assert!(script.ends_with("main\n"));
    }
}
