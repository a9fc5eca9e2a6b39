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
    /// Every variable it declares with `@env` (it gets them even when they hold one of
    /// loki's own credentials).
    pub declared_env: Vec<String>,
    /// Programs that must be installed (`@meta require-tools`).
    pub require_tools: Vec<String>,
    /// The interpreter named by a `#!` line (Python and TypeScript), e.g. `python3.11`.
    pub interpreter: Option<Vec<String>>,
    /// Parameter names in declaration order (TypeScript passes them positionally).
    pub positional: Vec<String>,
    /// The function a call runs: `None` for a tool file's own entry point (`main`,
    /// `run`); a function's name for one of an agent's several tools.
    pub entry: Option<String>,
}

/// Script language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// Bash.
    Bash,
    /// Python 3.
    Python,
    /// TypeScript (run with `npx tsx`).
    TypeScript,
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
    let text = crate::atomic_file::read_regular_text(path, crate::atomic_file::MAX_CONFIG_FILE)
        .map_err(|e| err(0, e.to_string()))?;
    parse_text(path, &text)
}

/// Parses the annotations of `text`, a tool file at `path` (its name and extension
/// choose the tool's name and language).
pub(crate) fn parse_text(path: &Path, text: &str) -> Result<ScriptTool, ScriptError> {
    let err = |line: usize, message: String| ScriptError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| err(0, "the file name is not valid UTF-8".into()))?
        .to_string();
    let lang = match path.extension().and_then(|e| e.to_str()) {
        Some("sh") => Lang::Bash,
        Some("py") => Lang::Python,
        Some("ts") => Lang::TypeScript,
        _ => {
            return Err(err(
                0,
                "unsupported tool file extension (use .sh, .py or .ts)".into(),
            ));
        }
    };
    let mut tool = match lang {
        Lang::Bash => parse_bash(text).map_err(|(line, m)| err(line, m))?,
        Lang::Python => parse_python(text).map_err(|(line, m)| err(line, m))?,
        Lang::TypeScript => parse_typescript(text).map_err(|(line, m)| err(line, m))?,
    };
    if lang != Lang::Bash {
        tool.interpreter = shebang(text);
        // `# @env NAME` (Python) or `// @env NAME` (TypeScript) comment lines.
        tool.declared_env = text
            .lines()
            .filter_map(|l| {
                let l = l.trim_start();
                l.strip_prefix("# @env ")
                    .or_else(|| l.strip_prefix("// @env "))
            })
            .filter_map(|rest| rest.split_whitespace().next())
            .map(|name| name.trim_end_matches('!').to_string())
            .collect();
    }
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
        declared_env: Vec::new(),
        require_tools: Vec::new(),
        interpreter: None,
        positional: Vec::new(),
        entry: None,
    }
}

type ParseResult = Result<ScriptTool, (usize, String)>;

fn parse_bash(text: &str) -> ParseResult {
    let mut tool = empty(Lang::Bash);
    let mut params = Parameters::default();
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
                tool.declared_env
                    .push(name.trim_end_matches('!').to_string());
                if let Some(name) = name.strip_suffix('!') {
                    tool.required_env.push(name.to_string());
                } else if let Some(default) = default.filter(|d| !d.starts_with('`')) {
                    tool.env_defaults
                        .push((name.to_string(), default.to_string()));
                }
            }
            "option" | "flag" | "arg" => {
                params.add(parse_param(tag, body).map_err(|e| (i + 1, e.to_string()))?);
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
    tool.parameters = params.schema();
    Ok(tool)
}

/// An annotation or type hint that declares no usable parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ParamError {
    /// `@option` (or `@flag`, `@arg`) with nothing after it.
    #[error("`@{0}` needs a name")]
    NoName(String),
    /// The first word has no name part (`--!`).
    #[error("`@{tag} {body}`: missing name")]
    MissingName { tag: String, body: String },
    /// `[a|b` without its `]`.
    #[error("`{0}`: unclosed `[` in the choice list")]
    UnclosedChoices(String),
    /// A TypeScript union of anything but string literals.
    #[error("unsupported union `{0}` (only string literals)")]
    Union(String),
    /// A TypeScript type with no JSON schema equivalent here.
    #[error("unsupported type `{0}`")]
    TsType(String),
    /// A Python type hint with no JSON schema equivalent here.
    #[error("unsupported type hint `{0}`")]
    PythonType(String),
}

struct Param {
    name: String,
    required: bool,
    schema: Value,
}

impl Param {
    /// A parameter of a Python or TypeScript signature: the schema of its type, with the
    /// description its doc comment gives it and its default when it has them.
    fn of_signature(
        name: &str,
        mut schema: Value,
        docs: &[(String, String)],
        default: Option<Value>,
        required: bool,
    ) -> Self {
        if let Some((_, doc)) = docs.iter().find(|(n, _)| n == name) {
            schema["description"] = Value::String(doc.clone());
        }
        if let Some(default) = default {
            schema["default"] = default;
        }
        Param {
            name: name.to_string(),
            required,
            schema,
        }
    }
}

/// A tool's parameter schema, built a parameter at a time in the order they are declared.
#[derive(Default)]
struct Parameters {
    properties: Map<String, Value>,
    required: Vec<Value>,
}

impl Parameters {
    fn add(&mut self, param: Param) {
        if param.required {
            self.required.push(Value::String(param.name.clone()));
        }
        self.properties.insert(param.name, param.schema);
    }

    fn schema(self) -> Value {
        json!({"type": "object", "properties": self.properties, "required": self.required})
    }
}

/// `name: hint = default` split at the `=`: the head and the default's text.
fn split_default(param: &str) -> (&str, Option<&str>) {
    match param.split_once('=') {
        Some((head, default)) => (head.trim(), Some(default.trim())),
        None => (param, None),
    }
}

/// `--name!`, `-n --name*[a|b]`, `--name=default <VALUE>`, `name+`, followed by a
/// description.
fn parse_param(tag: &str, body: &str) -> Result<Param, ParamError> {
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
        .ok_or_else(|| ParamError::NoName(tag.to_string()))?;
    let spec = spec.trim_start_matches('-');
    let name_end = spec
        .find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(spec.len());
    let (raw_name, modifiers) = spec.split_at(name_end);
    if raw_name.is_empty() {
        return Err(ParamError::MissingName {
            tag: tag.to_string(),
            body: body.to_string(),
        });
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
            .ok_or_else(|| ParamError::UnclosedChoices(spec.to_string()))?;
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
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("def run("))
        .ok_or((0, "no top-level `def run(…)` function".to_string()))?;
    python_function(&lines, start, "run")
}

/// The tool declared by the top-level `def <name>(…)` at line `start`.
fn python_function(lines: &[&str], start: usize, name: &str) -> ParseResult {
    let mut tool = empty(Lang::Python);
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
    let mut params = Parameters::default();
    for param in split_top_level(&signature[open + 1..close]) {
        let param = param.trim();
        if param.is_empty() || param == "*" || param.starts_with("**") || param == "/" {
            continue;
        }
        let (head, default) = split_default(param);
        let (name, hint) = match head.split_once(':') {
            Some((n, t)) => (n.trim(), t.trim()),
            None => {
                return Err((
                    start + 1,
                    format!("parameter `{head}` of {name}() has no type hint"),
                ));
            }
        };
        let param = name;
        let (schema, optional) =
            python_type(hint).map_err(|m| (start + 1, format!("parameter `{param}`: {m}")))?;
        params.add(Param::of_signature(
            param,
            schema,
            &arg_docs,
            default.and_then(python_literal),
            default.is_none() && !optional,
        ));
    }
    tool.parameters = params.schema();
    Ok(tool)
}

/// `#!/usr/bin/env python3.11` → `["python3.11"]`; `#!/usr/local/bin/bun` → that path.
fn shebang(text: &str) -> Option<Vec<String>> {
    let line = text.lines().next()?.strip_prefix("#!")?;
    let mut words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    if words.first().is_some_and(|w| w.ends_with("/env")) {
        words.remove(0);
        if words.first().is_some_and(|w| w == "-S") {
            words.remove(0);
        }
    }
    (!words.is_empty()).then_some(words)
}

/// The interpreter a `#!` line names (`["node"]`, `["python3.11"]`), if any.
pub fn interpreter_of(text: &str) -> Option<Vec<String>> {
    shebang(text)
}

fn parse_typescript(text: &str) -> ParseResult {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| ts_export(l) == Some("run"))
        .ok_or((
        0,
        "no `export function run(…)` (arrow functions and function expressions are not recognised)"
            .to_string(),
    ))?;
    typescript_function(&lines, start, "run")
}

/// The name of the function an `export function NAME(` (or `export async function`)
/// line declares.
fn ts_export(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("export ")?;
    let rest = rest.strip_prefix("async ").unwrap_or(rest).trim_start();
    let rest = rest.strip_prefix("function")?.trim_start();
    let name = rest.split('(').next()?.trim();
    (!name.is_empty() && rest.contains('(')).then_some(name)
}

/// The function `name` (at 1-based `line`) of an agent's tools file as the tool of that
/// name; an error when it has no description (its `doc` comment).
fn entry_point(
    mut tool: ScriptTool,
    name: &str,
    line: usize,
    doc: &str,
) -> Result<ScriptTool, (usize, String)> {
    if tool.description.trim().is_empty() {
        return Err((line, format!("`{name}` has no {doc} description")));
    }
    tool.name = name.to_string();
    tool.entry = Some(name.to_string());
    Ok(tool)
}

/// The exported functions of an agent's `tools.ts` (not `_`-prefixed ones), each with
/// its JSDoc comment as description.
fn agent_typescript(text: &str) -> Result<Vec<ScriptTool>, (usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut tools = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = ts_export(line) else {
            continue;
        };
        if name.starts_with('_') {
            continue;
        }
        tools.push(entry_point(
            typescript_function(&lines, i, name)?,
            name,
            i + 1,
            "JSDoc",
        )?);
    }
    Ok(tools)
}

/// The function `name` declared at line `start` (its JSDoc comment is the lines above).
fn typescript_function(lines: &[&str], start: usize, name: &str) -> ParseResult {
    let mut tool = empty(Lang::TypeScript);
    let mut signature = String::new();
    for line in &lines[start..] {
        signature.push_str(line.trim());
        signature.push(' ');
        if balanced(&signature) {
            break;
        }
    }
    let open = signature.find('(').unwrap_or(0);
    let close = matching_paren(&signature, open).ok_or((start + 1, "unclosed `(`".to_string()))?;
    let (description, arg_docs) = jsdoc(&lines[..start]);
    tool.description = description;
    let mut params = Parameters::default();
    for param in split_top_level(&signature[open + 1..close]) {
        let param = param.trim();
        if param.is_empty() {
            continue;
        }
        if param.starts_with("...") || param.starts_with('{') {
            return Err((
                start + 1,
                format!("`{param}`: rest and destructured parameters are not supported"),
            ));
        }
        let (head, default) = split_default(param);
        let (param_name, hint) = head
            .split_once(':')
            .map(|(n, t)| (n.trim(), t.trim()))
            .ok_or((
                start + 1,
                format!("parameter `{head}` of {name}() has no type"),
            ))?;
        let (param_name, question) = match param_name.strip_suffix('?') {
            Some(n) => (n, true),
            None => (param_name, false),
        };
        let (schema, nullable) =
            ts_type(hint).map_err(|m| (start + 1, format!("parameter `{param_name}`: {m}")))?;
        tool.positional.push(param_name.to_string());
        params.add(Param::of_signature(
            param_name,
            schema,
            &arg_docs,
            default
                .and_then(|d| serde_json::from_str::<Value>(d).ok())
                .filter(|d| !d.is_null()),
            !(question || nullable || default.is_some()),
        ));
    }
    tool.parameters = params.schema();
    Ok(tool)
}

fn matching_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in text.char_indices().skip_while(|(i, _)| *i < open) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The JSON schema of a TypeScript type, and whether it admits `null`/`undefined`.
fn ts_type(hint: &str) -> Result<(Value, bool), ParamError> {
    let parts: Vec<&str> = hint.split('|').map(str::trim).collect();
    let nullable = parts.iter().any(|p| matches!(*p, "null" | "undefined"));
    let parts: Vec<&str> = parts
        .into_iter()
        .filter(|p| !matches!(*p, "null" | "undefined"))
        .collect();
    if parts.len() > 1
        || parts
            .first()
            .is_some_and(|p| p.starts_with('"') || p.starts_with('\''))
    {
        let values: Vec<Value> = parts
            .iter()
            .map(|p| {
                unquoted(p)
                    .map(|v| Value::String(v.to_string()))
                    .ok_or_else(|| ParamError::Union(hint.to_string()))
            })
            .collect::<Result<_, _>>()?;
        return Ok((json!({"type": "string", "enum": values}), nullable));
    }
    let single = parts.first().copied().unwrap_or("");
    let element = single.strip_suffix("[]").or_else(|| {
        single
            .strip_prefix("Array<")
            .and_then(|s| s.strip_suffix('>'))
    });
    if let Some(element) = element {
        return Ok((
            json!({"type": "array", "items": ts_type(element)?.0}),
            nullable,
        ));
    }
    let simple = match single {
        "string" => "string",
        "number" => "number",
        "boolean" => "boolean",
        other => return Err(ParamError::TsType(other.to_string())),
    };
    Ok((json!({ "type": simple }), nullable))
}

/// The JSDoc block that ends right before line `lines.len()`: description and `@param`s.
fn jsdoc(lines: &[&str]) -> (String, Vec<(String, String)>) {
    let Some(end) = lines.iter().rposition(|l| l.trim().ends_with("*/")) else {
        return (String::new(), Vec::new());
    };
    if lines[end + 1..].iter().any(|l| !l.trim().is_empty()) {
        return (String::new(), Vec::new());
    }
    let Some(begin) = lines[..=end]
        .iter()
        .rposition(|l| l.trim().starts_with("/**"))
    else {
        return (String::new(), Vec::new());
    };
    let mut description = Vec::new();
    let mut params: Vec<(String, String)> = Vec::new();
    for line in &lines[begin..=end] {
        let line = line
            .trim()
            .trim_start_matches("/**")
            .trim_end_matches("*/")
            .trim_start_matches('*')
            .trim();
        if let Some(rest) = line.strip_prefix("@param") {
            let rest = rest.trim();
            let rest = if rest.starts_with('{') {
                rest.split_once('}').map_or(rest, |(_, r)| r.trim())
            } else {
                rest
            };
            let (name, text) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            let text = text.trim().trim_start_matches('-').trim();
            params.push((name.to_string(), text.to_string()));
        } else if line.starts_with('@') {
            continue;
        } else if params.is_empty() {
            description.push(line);
        }
    }
    (description.join(" ").trim().to_string(), params)
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
fn python_type(hint: &str) -> Result<(Value, bool), ParamError> {
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
        other => return Err(ParamError::PythonType(other.to_string())),
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
    if let Some(inner) = unquoted(text) {
        return Some(Value::String(inner.to_string()));
    }
    serde_json::from_str(text).ok()
}

/// The text of a string literal in double or single quotes (`"a"`, `'a'`), as Python and
/// TypeScript both write them; `None` for anything else.
fn unquoted(text: &str) -> Option<&str> {
    ['"', '\'']
        .into_iter()
        .find_map(|quote| text.strip_prefix(quote)?.strip_suffix(quote))
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
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("sh" | "py" | "ts")
            )
        })
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

/// The tools of an agent's tools file: each bash function under a `# @cmd` annotation
/// (the `@option`/`@flag`/`@arg` lines after it are its parameters; file-level `@env`
/// and `@meta` lines apply to all), or each public top-level Python function
/// (`def name(…)`, not starting with `_`). Functions starting with `_` are private.
pub fn parse_agent_tools(path: &Path) -> Result<Vec<ScriptTool>, ScriptError> {
    let err = |line: usize, message: String| ScriptError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let text = crate::atomic_file::read_regular_text(path, crate::atomic_file::MAX_CONFIG_FILE)
        .map_err(|e| err(0, e.to_string()))?;
    let mut tools = match path.extension().and_then(|e| e.to_str()) {
        Some("sh") => agent_bash(&text).map_err(|(line, m)| err(line, m))?,
        Some("py") => agent_python(&text).map_err(|(line, m)| err(line, m))?,
        Some("ts") => agent_typescript(&text).map_err(|(line, m)| err(line, m))?,
        _ => {
            return Err(err(
                0,
                "an agent's tools file is tools.sh, tools.py or tools.ts".into(),
            ));
        }
    };
    for tool in &mut tools {
        tool.path = path.to_path_buf();
        if matches!(tool.lang, Lang::Python | Lang::TypeScript) {
            tool.interpreter = shebang(&text);
        }
    }
    Ok(tools)
}

/// `# @cmd` blocks of a bash tools file, each ending at its function's definition.
fn agent_bash(text: &str) -> Result<Vec<ScriptTool>, (usize, String)> {
    let mut shared = empty(Lang::Bash);
    let mut tools = Vec::new();
    // The block being read: its first line, its annotation lines.
    let mut block: Option<(usize, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(description) = trimmed.strip_prefix("# @cmd") {
            block = Some((i + 1, vec![description.trim()]));
            continue;
        }
        if let Some((start, lines)) = block.as_mut() {
            if trimmed.starts_with("# @") {
                lines.push(line);
                continue;
            }
            if let Some(name) = function_name(trimmed) {
                // A private function (`_instructions` under its own `@cmd`, as Loki's
                // examples write it) is never a tool.
                if name.starts_with('_') {
                    block = None;
                    continue;
                }
                let mut annotations = format!("# @describe {}\n", lines[0]);
                for line in &lines[1..] {
                    annotations.push_str(line);
                    annotations.push('\n');
                }
                // Annotation line `l` (the `@describe` made of `@cmd` is line 1) is file
                // line `start + l - 1`.
                let mut tool =
                    parse_bash(&annotations).map_err(|(l, m)| (*start + l.saturating_sub(1), m))?;
                if tool.description.trim().is_empty() {
                    return Err((*start, format!("`{name}` has no description after `@cmd`")));
                }
                tool.name = name.to_string();
                tool.entry = Some(name.to_string());
                tools.push(tool);
                block = None;
            }
            continue;
        }
        if trimmed.starts_with("# @env") || trimmed.starts_with("# @meta") {
            let parsed = parse_bash(line).map_err(|(_, m)| (i + 1, m))?;
            shared.declared_env.extend(parsed.declared_env);
            shared.required_env.extend(parsed.required_env);
            shared.env_defaults.extend(parsed.env_defaults);
            shared.require_tools.extend(parsed.require_tools);
        }
    }
    if let Some((start, _)) = block {
        return Err((start, "`@cmd` is not followed by a function".into()));
    }
    for tool in &mut tools {
        tool.declared_env
            .extend(shared.declared_env.iter().cloned());
        tool.required_env
            .extend(shared.required_env.iter().cloned());
        tool.env_defaults
            .extend(shared.env_defaults.iter().cloned());
        tool.require_tools
            .extend(shared.require_tools.iter().cloned());
    }
    Ok(tools)
}

/// The function a bash line defines (`name() {`, `function name {`), if it is public.
fn function_name(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("function ").unwrap_or(line);
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))?;
    let name = &rest[..end];
    let after = rest[end..].trim_start();
    let defines =
        after.starts_with("()") || (line.starts_with("function ") && after.starts_with('{'));
    (defines && !name.is_empty()).then_some(name)
}

/// Public top-level functions of a Python tools file.
fn agent_python(text: &str) -> Result<Vec<ScriptTool>, (usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut tools = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("def ") else {
            continue;
        };
        let Some(name) = rest.split('(').next().map(str::trim) else {
            continue;
        };
        if name.starts_with('_') || name.is_empty() {
            continue;
        }
        tools.push(entry_point(
            python_function(&lines, i, name)?,
            name,
            i + 1,
            "docstring",
        )?);
    }
    Ok(tools)
}

/// How to start one call of a script tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
}

/// The wrapper that runs a call: sets the arguments up and calls the tool's entry point.
pub fn wrapper(tool: &ScriptTool, args: &Value) -> Invocation {
    match tool.lang {
        Lang::Bash => {
            let mut script = String::from("argc() { :; }\n");
            // What the model left out takes its declared default (`@option --n=5`,
            // `@arg x=val`, `@option --m[=a|b]`), as argc gives it.
            let mut args = args.clone();
            if let (Value::Object(given), Some(properties)) = (
                &mut args,
                tool.parameters.get("properties").and_then(Value::as_object),
            ) {
                for (key, property) in properties {
                    if let Some(default) = property.get("default")
                        && given.get(key).is_none_or(Value::is_null)
                    {
                        given.insert(key.clone(), default.clone());
                    }
                }
            }
            if let Value::Object(map) = &args {
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
            let entry = tool.entry.as_deref().unwrap_or("main");
            script.push_str(&format!("source \"$LLM_TOOL_PATH\"\n{entry}\n"));
            Invocation {
                program: "bash".into(),
                args: vec!["-c".into(), script],
                env: Vec::new(),
            }
        }
        Lang::TypeScript => {
            let code = "(async () => {\n\
                        const { pathToFileURL } = await import('node:url');\n\
                        const fs = await import('node:fs');\n\
                        const m = await import(pathToFileURL(process.env.LLM_TOOL_PATH).href);\n\
                        const args = JSON.parse(process.env.LLM_TOOL_ARGS).map((v) => v === null ? undefined : v);\n\
                        const result = await m[process.env.LLM_TOOL_ENTRY](...args);\n\
                        if (result !== undefined && result !== null) {\n\
                        \x20 fs.appendFileSync(process.env.LLM_OUTPUT, typeof result === 'string' ? result : JSON.stringify(result));\n\
                        }\n\
                        })().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });\n";
            let positional: Vec<Value> = tool
                .positional
                .iter()
                .map(|name| args.get(name).cloned().unwrap_or(Value::Null))
                .collect();
            let mut command = tool
                .interpreter
                .clone()
                .unwrap_or_else(|| vec!["npx".into(), "tsx".into()]);
            let program = command.remove(0);
            command.extend(["-e".to_string(), code.to_string()]);
            Invocation {
                program,
                args: command,
                env: vec![
                    ("LLM_TOOL_ARGS".into(), Value::Array(positional).to_string()),
                    (
                        "LLM_TOOL_ENTRY".into(),
                        tool.entry.clone().unwrap_or("run".into()),
                    ),
                ],
            }
        }
        Lang::Python => {
            let code = "import importlib.util, json, os, sys\n\
                        spec = importlib.util.spec_from_file_location('tool', os.environ['LLM_TOOL_PATH'])\n\
                        module = importlib.util.module_from_spec(spec)\n\
                        spec.loader.exec_module(module)\n\
                        result = getattr(module, os.environ['LLM_TOOL_ENTRY'])(**json.loads(sys.argv[1]))\n\
                        if result is not None:\n\
                        \x20   with open(os.environ['LLM_OUTPUT'], 'a') as out:\n\
                        \x20       out.write(result if isinstance(result, str) else json.dumps(result))\n";
            let mut command = tool
                .interpreter
                .clone()
                .unwrap_or_else(|| vec!["python3".into()]);
            let program = command.remove(0);
            command.extend(["-c".to_string(), code.to_string(), args.to_string()]);
            Invocation {
                program,
                args: command,
                env: vec![(
                    "LLM_TOOL_ENTRY".into(),
                    tool.entry.clone().unwrap_or("run".into()),
                )],
            }
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

    #[test]
    fn an_agent_file_declares_one_tool_per_public_function() {
        let dir = tempfile::tempdir().unwrap();
        let bash = dir.path().join("tools.sh");
        std::fs::write(
            &bash,
            "# @env TOKEN!\n# @meta require-tools jq\n\n# @cmd Generates instructions\n_instructions() { echo hi; }\n\n# @cmd Say hello\n# @option --name! Who\nhello() { :; }\n\n# @cmd Count\n# @flag --loud Shout\nfunction count {\n  :\n}\n\n_private() { :; }\n",
        )
        .unwrap();
        let tools = parse_agent_tools(&bash).unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["hello", "count"]);
        assert_eq!(tools[0].entry.as_deref(), Some("hello"));
        assert_eq!(tools[0].parameters["required"], json!(["name"]));
        assert_eq!(tools[1].parameters["properties"]["loud"]["type"], "boolean");
        assert_eq!(tools[1].required_env, ["TOKEN"]);
        assert_eq!(tools[1].require_tools, ["jq"]);
        let call = wrapper(&tools[1], &json!({"loud": true}));
        assert!(
            call.args[1].ends_with("source \"$LLM_TOOL_PATH\"\ncount\n"),
            "{:?}",
            call.args
        );
        std::fs::write(&bash, "# @cmd Dangling\n").unwrap();
        assert!(parse_agent_tools(&bash).is_err());
        // A mistake is reported at its own line (the `@option` on line 3).
        std::fs::write(&bash, "\n# @cmd Bad\n# @option --x[=a|b\nbad() { :; }\n").unwrap();
        let e = parse_agent_tools(&bash).unwrap_err();
        assert_eq!(e.line, 3, "{e}");

        let python = dir.path().join("tools.py");
        std::fs::write(
            &python,
            "def greet(name: str) -> str:\n    \"\"\"Greet someone.\n\n    Args:\n        name: Who\n    \"\"\"\n    return name\n\n\ndef _hidden(x: int):\n    pass\n\n\ndef add(a: int, b: int = 1) -> int:\n    \"\"\"Add numbers.\"\"\"\n    return a + b\n",
        )
        .unwrap();
        let tools = parse_agent_tools(&python).unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["greet", "add"]);
        assert_eq!(tools[1].parameters["required"], json!(["a"]));
        let call = wrapper(&tools[0], &json!({"name": "x"}));
        assert!(
            call.env
                .contains(&("LLM_TOOL_ENTRY".to_string(), "greet".to_string()))
        );
    }

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
        assert_eq!(tool.declared_env, ["TRACKER_TOKEN", "TRACKER_URL"]);
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
    fn typescript_signatures_become_a_schema() {
        let source = r#"#!/usr/bin/env -S bun run
/**
 * Demonstrates the supported parameter types.
 *
 * @param text - A required string
 * @param mode - One of two modes
 * @param tags - Tags (generic array)
 * @param count - How many
 * @param note - An optional note
 * @param loud - Shout
 */
export async function run(
  text: string,
  mode: "fast" | "slow",
  tags: Array<string>,
  count: number = 3,
  note?: string,
  loud: boolean | null = null,
): Promise<string> {
  return text;
}
"#;
        let mut tool = parse_typescript(source).unwrap();
        tool.interpreter = shebang(source);
        assert_eq!(
            tool.description,
            "Demonstrates the supported parameter types."
        );
        assert_eq!(
            tool.parameters,
            json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "A required string"},
                    "mode": {"type": "string", "enum": ["fast", "slow"], "description": "One of two modes"},
                    "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags (generic array)"},
                    "count": {"type": "number", "description": "How many", "default": 3},
                    "note": {"type": "string", "description": "An optional note"},
                    "loud": {"type": "boolean", "description": "Shout"}
                },
                "required": ["text", "mode", "tags"]
            })
        );
        assert_eq!(
            tool.positional,
            ["text", "mode", "tags", "count", "note", "loud"]
        );
        let call = wrapper(&tool, &json!({"mode": "fast", "text": "hi"}));
        assert_eq!(call.program, "bun");
        assert_eq!(call.args[..2], ["run".to_string(), "-e".to_string()]);
        assert_eq!(
            call.env,
            [
                (
                    "LLM_TOOL_ARGS".to_string(),
                    r#"["hi","fast",null,null,null,null]"#.to_string()
                ),
                ("LLM_TOOL_ENTRY".to_string(), "run".to_string())
            ]
        );
        assert!(parse_typescript("export function run(...rest: string[]) {}").is_err());
        assert!(parse_typescript("const run = (x: string) => x;").is_err());
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
        let call = wrapper(
            &tool,
            &json!({"query": "it's $(rm -rf /)", "label": ["a b", "c"], "verbose": true, "limit": 5}),
        );
        assert_eq!(call.program, "bash");
        let script = &call.args[1];
        assert!(
            script.contains(r"argc_query='it'\''s $(rm -rf /)'"),
            "{script}"
        );
        assert!(script.contains("argc_label=('a b' 'c')"), "{script}");
        assert!(script.contains("argc_verbose=1"), "{script}");
        assert!(script.contains("argc_limit='5'"), "{script}");
        assert!(script.ends_with("main\n"));
    }

    #[test]
    fn an_agent_s_typescript_file_offers_each_exported_function() {
        let text = r#"#!/usr/bin/env node
import { readFileSync } from "node:fs";

/**
 * Add two numbers.
 * @param a - The first
 * @param b - The second
 */
export function add(a: number, b: number = 1): string {
  return String(a + b);
}

/** Say hello. */
export async function hello(name?: string): Promise<string> {
  return `hi ${name}`;
}

export function _instructions(): string {
  return "private";
}

function helper(x: string): string {
  return x;
}
"#;
        let tools = agent_typescript(text).unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["add", "hello"]);
        assert_eq!(tools[0].entry.as_deref(), Some("add"));
        assert_eq!(tools[0].description, "Add two numbers.");
        assert_eq!(tools[0].parameters["required"], json!(["a"]));
        assert_eq!(
            tools[0].parameters["properties"]["a"]["description"],
            "The first"
        );
        assert_eq!(tools[0].positional, ["a", "b"]);
        assert_eq!(tools[1].parameters["required"], json!([]));
        let undocumented = "export function bare(x: string) {}\n";
        assert!(agent_typescript(undocumented).is_err());
    }
}
