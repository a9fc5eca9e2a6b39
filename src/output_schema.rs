//! `--output-schema FILE`: the JSON schema a run's final answer must match, and the
//! check of an answer against it.
//!
//! No JSON-schema crate is in the tree, and the schemas people hand to `codex exec
//! --output-schema` use a small part of the language, so this checks that part strictly:
//! `type` (one or a list), `enum`, `const`, `properties`, `required`,
//! `additionalProperties` (`false` or a schema), `items`, `minItems`/`maxItems`,
//! `minLength`/`maxLength`, `minimum`/`maximum`, and `anyOf`/`oneOf`/`allOf`. Other
//! keywords (`$ref`, `format`, `pattern`…) are not checked. The tool-argument checker
//! (`tool::schema`) is deliberately lenient (a number passes as a string); this one is
//! not, because the answer is handed to a program.

use std::path::Path;

use serde_json::Value;

/// Most problems named in one message.
const MAX_PROBLEMS: usize = 3;
/// Largest schema file read.
const MAX_SCHEMA_BYTES: u64 = 1024 * 1024;

/// Why the schema file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The file cannot be read.
    #[error("cannot read the output schema {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a JSON object.
    #[error("the output schema {path} is not a JSON schema object: {why}")]
    NotSchema {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
}

/// An answer that does not match the schema: what is wrong, on one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0)]
pub struct Mismatch(pub String);

/// Reads the schema of `--output-schema FILE`.
pub fn load(path: &Path) -> Result<Value, SchemaError> {
    let shown = path.display().to_string();
    let text = crate::atomic_file::read_regular_text(path, MAX_SCHEMA_BYTES).map_err(|source| {
        SchemaError::Read {
            path: shown.clone(),
            source,
        }
    })?;
    match serde_json::from_str::<Value>(&text) {
        Ok(schema @ Value::Object(_)) => Ok(schema),
        Ok(other) => Err(SchemaError::NotSchema {
            path: shown,
            why: format!("it is {}", loki_wire::json::kind(&other)),
        }),
        Err(e) => Err(SchemaError::NotSchema {
            path: shown,
            why: e.to_string(),
        }),
    }
}

/// The answer's JSON when it matches `schema`. A model that wraps the JSON in one code
/// fence (```json … ```) is forgiven the fence; anything else around it is not JSON.
pub fn check_answer(schema: &Value, answer: &str) -> Result<Value, Mismatch> {
    let text = unfenced(answer);
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Mismatch(format!("the answer is not JSON ({e})")))?;
    let mut problems = Vec::new();
    check(schema, &value, "$", &mut problems);
    if problems.is_empty() {
        return Ok(value);
    }
    problems.truncate(MAX_PROBLEMS);
    Err(Mismatch(problems.join("; ")))
}

/// What is sent back to the model when its answer did not match.
pub fn repair_prompt(mismatch: &Mismatch) -> String {
    format!(
        "Your answer does not match the required JSON schema: {mismatch}. Answer again with \
         only one JSON value that matches the schema: no prose, no code fence."
    )
}

/// `text` without one enclosing code fence.
fn unfenced(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let Some((_, body)) = rest.split_once('\n') else {
        return trimmed;
    };
    body.trim_end()
        .strip_suffix("```")
        .map_or(trimmed, str::trim)
}

/// Checks `value` (at `at`) against `schema`, adding what is wrong to `problems`.
fn check(schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    if problems.len() >= MAX_PROBLEMS {
        return;
    }
    let Some(keywords) = schema.as_object() else {
        // `true` (or anything that is not an object) admits everything; `false` nothing.
        if schema == &Value::Bool(false) {
            problems.push(format!("{at} is not allowed"));
        }
        return;
    };
    if let Some(problem) = type_or_enum_mismatch(schema, value, is_type) {
        problems.push(format!("{at} {problem}"));
        return;
    }
    if let Some(wanted) = keywords.get("const")
        && wanted != value
    {
        problems.push(format!("{at} must be {wanted}"));
        return;
    }
    check_combinators(keywords, value, at, problems);
    check_bounds(keywords, value, at, problems);
    match value {
        Value::Object(map) => check_object(schema, map, at, problems),
        Value::Array(items) => {
            if let Some(item_schema) = keywords.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item_schema, item, &format!("{at}[{i}]"), problems);
                }
            }
        }
        _ => {}
    }
}

/// `required`, `properties` and `additionalProperties` of an object.
fn check_object(
    schema: &Value,
    map: &serde_json::Map<String, Value>,
    at: &str,
    problems: &mut Vec<String>,
) {
    for required in required_names(schema) {
        if !map.contains_key(required) {
            problems.push(format!("{at}.{required} is required"));
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (key, sub) in map {
        let path = format!("{at}.{key}");
        match properties.and_then(|p| p.get(key)) {
            Some(sub_schema) => check(sub_schema, sub, &path, problems),
            None => match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    problems.push(format!("{path} is not an allowed property"));
                }
                Some(extra @ Value::Object(_)) => check(extra, sub, &path, problems),
                _ => {}
            },
        }
    }
}

/// `anyOf`, `oneOf` and `allOf`.
fn check_combinators(
    schema: &serde_json::Map<String, Value>,
    value: &Value,
    at: &str,
    problems: &mut Vec<String>,
) {
    let fits = |sub: &Value| {
        let mut found = Vec::new();
        check(sub, value, at, &mut found);
        found.is_empty()
    };
    let list = |key: &str| schema.get(key).and_then(Value::as_array);
    if let Some(all) = list("allOf") {
        for sub in all {
            check(sub, value, at, problems);
        }
    }
    if let Some(any) = list("anyOf")
        && !any.iter().any(fits)
    {
        problems.push(format!("{at} matches none of the anyOf schemas"));
    }
    if let Some(one) = list("oneOf")
        && one.iter().filter(|s| fits(s)).count() != 1
    {
        problems.push(format!("{at} must match exactly one of the oneOf schemas"));
    }
}

/// Lengths of strings and arrays, and the range of numbers.
fn check_bounds(
    schema: &serde_json::Map<String, Value>,
    value: &Value,
    at: &str,
    problems: &mut Vec<String>,
) {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    let (len, what) = match value {
        Value::String(s) => (Some(s.chars().count()), "characters"),
        Value::Array(a) => (Some(a.len()), "items"),
        _ => (None, ""),
    };
    let (min_key, max_key) = if value.is_string() {
        ("minLength", "maxLength")
    } else {
        ("minItems", "maxItems")
    };
    if let Some(len) = len.map(|n| n as f64) {
        if let Some(min) = bound(min_key).filter(|min| len < *min) {
            problems.push(format!("{at} must have at least {min} {what}"));
        }
        if let Some(max) = bound(max_key).filter(|max| len > *max) {
            problems.push(format!("{at} must have at most {max} {what}"));
        }
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = bound("minimum").filter(|min| n < *min) {
            problems.push(format!("{at} must be at least {min}"));
        }
        if let Some(max) = bound("maximum").filter(|max| n > *max) {
            problems.push(format!("{at} must be at most {max}"));
        }
    }
}

/// What is wrong with `value` by the schema's `type` and `enum`, worded to follow its
/// name (`must be string (got a number)`); `None` when both admit it. The tool-argument
/// checker shares it and passes its own, lenient, `is_type`.
pub(crate) fn type_or_enum_mismatch(
    schema: &Value,
    value: &Value,
    is_type: fn(&Value, &str) -> bool,
) -> Option<String> {
    if let Some(kinds) = declared_types(schema)
        && !kinds.iter().any(|k| is_type(value, k))
    {
        return Some(format!(
            "must be {} (got {})",
            kinds.join(" or "),
            loki_wire::json::kind(value)
        ));
    }
    let options = schema.get("enum").and_then(Value::as_array)?;
    if options.contains(value) {
        return None;
    }
    let shown: Vec<String> = options.iter().map(Value::to_string).collect();
    Some(format!("must be one of {}", shown.join(", ")))
}

/// The property names the schema's `required` lists.
pub(crate) fn required_names(schema: &Value) -> impl Iterator<Item = &str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The schema's `type`, as a list; `None` when it has none.
fn declared_types(schema: &Value) -> Option<Vec<&str>> {
    match schema.get("type")? {
        Value::String(one) => Some(vec![one.as_str()]),
        Value::Array(many) => Some(many.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// Whether `value` is of JSON-schema type `kind`, strictly (an unknown type name passes).
pub(crate) fn is_type(value: &Value, kind: &str) -> bool {
    match kind {
        "string" => value.is_string(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        // A type name this checker does not know is not held against the answer.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "level": {"enum": ["low", "high"]},
                "score": {"type": "integer", "minimum": 0}
            },
            "required": ["name", "level"],
            "additionalProperties": false
        })
    }

    #[test]
    fn a_matching_answer_passes_even_in_a_fence() {
        let answer = "```json\n{\"name\": \"a\", \"level\": \"low\", \"tags\": [\"x\"]}\n```";
        let value = check_answer(&schema(), answer).unwrap();
        assert_eq!(value["name"], "a");
    }

    #[test]
    fn types_required_enums_and_extra_properties_are_named() {
        let err = check_answer(&schema(), r#"{"name": 3, "level": "mid"}"#).unwrap_err();
        assert!(
            err.0.contains("$.level must be one of \"low\", \"high\""),
            "{err}"
        );
        assert!(
            err.0.contains("$.name must be string (got a number)"),
            "{err}"
        );
        let err = check_answer(&schema(), r#"{"level": "low", "extra": 1}"#).unwrap_err();
        assert_eq!(
            err.0,
            "$.name is required; $.extra is not an allowed property"
        );
        let err = check_answer(
            &schema(),
            r#"{"name": "a", "level": "low", "tags": [1, "b", "c"]}"#,
        )
        .unwrap_err();
        assert!(err.0.contains("at most 2 items"), "{err}");
        assert!(err.0.contains("$.tags[0] must be string"), "{err}");
    }

    #[test]
    fn prose_is_not_json_and_the_message_is_one_line() {
        let err = check_answer(&schema(), "Sure! Here it is:\n{}").unwrap_err();
        assert!(err.0.starts_with("the answer is not JSON"), "{err}");
        assert!(!err.0.contains('\n'), "{err}");
    }

    #[test]
    fn combinators_and_numbers_are_checked() {
        let s = json!({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 10}]});
        assert!(check_answer(&s, "\"x\"").is_ok());
        assert!(check_answer(&s, "12").is_ok());
        assert!(check_answer(&s, "3").is_err());
        let one = json!({"oneOf": [{"type": "number"}, {"type": "integer"}]});
        assert!(check_answer(&one, "1.5").is_ok());
        assert!(check_answer(&one, "2").is_err());
    }
}
