//! The JSON schemas of tool arguments.
//!
//! [`check`]: a call's arguments against the schema the tool declared, before anything
//! runs: required properties, types (`string`, `integer`, `number`, `boolean`, `array`,
//! `object`, `null`, or a list of them) and `enum`, recursively for object properties and
//! array items. Constructs it does not know (`anyOf`, `$ref`, formats…) are not checked:
//! the tool still sees the call and may refuse it.
//!
//! [`compact`]: the schema as declared to the model. Every declaration is sent with every
//! request, so keywords that tell the model nothing (`$schema`, `$id`, `title`, an empty
//! `required` or `description`, `"default": null`) are left out of what is sent; the
//! tool keeps its full schema for checking.

use serde_json::Value;

/// Most problems listed in one message.
const MAX_PROBLEMS: usize = 5;

/// Arguments that do not fit the declared schema: the first problems found (at most
/// five), shown joined by `; `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .problems.join("; "))]
pub struct ArgumentsError {
    /// One line per problem (`` `count` must be integer (got a string) ``).
    pub problems: Vec<String>,
}

/// Checks `args` against `schema`; the problems when there are any.
pub fn check(schema: &Value, args: &Value) -> Result<(), ArgumentsError> {
    let mut problems = Vec::new();
    check_value(schema, args, "", &mut problems);
    if problems.is_empty() {
        return Ok(());
    }
    problems.truncate(MAX_PROBLEMS);
    Err(ArgumentsError { problems })
}

fn check_value(schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    if problems.len() >= MAX_PROBLEMS {
        return;
    }
    let name = if at.is_empty() { "the arguments" } else { at };
    if let Some(problem) = crate::output_schema::type_or_enum_mismatch(schema, value, is_type) {
        problems.push(format!("`{name}` {problem}"));
        return;
    }
    match value {
        Value::Object(map) => {
            for required in crate::output_schema::required_names(schema) {
                if map.get(required).is_none_or(Value::is_null) {
                    problems.push(format!("`{}` is required", join(at, required)));
                }
            }
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (key, sub) in map {
                    if let Some(sub_schema) = properties.get(key)
                        && !sub.is_null()
                    {
                        check_value(sub_schema, sub, &join(at, key), problems);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for (i, item) in items.iter().enumerate() {
                    check_value(item_schema, item, &format!("{name}[{i}]"), problems);
                }
            }
        }
        _ => {}
    }
}

/// Keywords whose value is a map of names to schemas.
const SCHEMA_MAPS: &[&str] = &["properties", "patternProperties", "$defs", "definitions"];
/// Keywords whose value is a schema or a list of schemas.
const SCHEMA_SLOTS: &[&str] = &[
    "items",
    "prefixItems",
    "additionalProperties",
    "additionalItems",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
];

/// `schema` without what the model does not need to call the tool: `$schema`, `$id`,
/// `title` (a label for forms; the property's name says as much), an empty `required` or
/// `description`, and `"default": null`. Only schema keywords go: a property named
/// `title` stays, and so does every value under `enum`, `const`, `default` or `examples`.
pub fn compact(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = serde_json::Map::with_capacity(map.len());
    for (key, value) in map {
        let empty = match value {
            Value::Array(items) => items.is_empty(),
            Value::String(text) => text.is_empty(),
            _ => false,
        };
        let noise = matches!(key.as_str(), "$schema" | "$id" | "title")
            || (matches!(key.as_str(), "required" | "description") && empty)
            || (key == "default" && value.is_null());
        if noise {
            continue;
        }
        let value = if SCHEMA_MAPS.contains(&key.as_str()) {
            match value {
                Value::Object(named) => Value::Object(
                    named
                        .iter()
                        .map(|(name, sub)| (name.clone(), compact(sub)))
                        .collect(),
                ),
                other => other.clone(),
            }
        } else if SCHEMA_SLOTS.contains(&key.as_str()) {
            match value {
                Value::Array(subs) => Value::Array(subs.iter().map(compact).collect()),
                other => compact(other),
            }
        } else {
            value.clone()
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

/// The strict check of `--output-schema`, but lenient for strings: script options
/// arrive as strings anyway, so a model sending `4` for a text option means "4".
fn is_type(value: &Value, kind: &str) -> bool {
    (kind == "string" && (value.is_number() || value.is_boolean()))
        || crate::output_schema::is_type(value, kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "text": {"type": "string"},
            "count": {"type": "integer"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "loud": {"type": "boolean"}
        }, "required": ["text"]})
    }

    #[test]
    fn required_types_and_enums_are_checked() {
        assert!(check(&schema(), &json!({"text": "hi", "count": 2, "tags": ["a"]})).is_ok());
        assert_eq!(
            check(&schema(), &json!({})).unwrap_err().to_string(),
            "`text` is required"
        );
        assert_eq!(
            check(&schema(), &json!({"text": null}))
                .unwrap_err()
                .problems,
            ["`text` is required"]
        );
        let err = check(
            &schema(),
            &json!({"text": [1], "count": "x", "mode": "warp", "tags": [{}]}),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("`text` must be string (got an array)"),
            "{err}"
        );
        assert!(
            err.contains("`count` must be integer (got a string)"),
            "{err}"
        );
        assert!(
            err.contains("`mode` must be one of \"fast\", \"slow\""),
            "{err}"
        );
        assert!(err.contains("`tags[0]` must be string"), "{err}");
        // A number for a text option is taken as its text.
        assert!(check(&schema(), &json!({"text": 5})).is_ok());
        assert!(check(&schema(), &json!("text")).is_err());
    }

    #[test]
    fn compact_drops_what_tells_the_model_nothing() {
        let full = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "readArguments",
            "type": "object",
            "description": "",
            "properties": {
                "title": {"type": "string", "title": "Title", "description": "The page title"},
                "mode": {"type": "string", "enum": ["title", ""], "default": null},
                "tags": {"type": "array", "items": {"title": "Tag", "type": "string"}},
                "pick": {"anyOf": [{"title": "A", "type": "string"}, {"type": "null"}], "default": "x"}
            },
            "$defs": {"Tag": {"title": "Tag", "type": "string"}},
            "additionalProperties": false,
            "required": []
        });
        assert_eq!(
            compact(&full),
            json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "The page title"},
                    "mode": {"type": "string", "enum": ["title", ""]},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "pick": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": "x"}
                },
                "$defs": {"Tag": {"type": "string"}},
                "additionalProperties": false
            })
        );
        // What is already compact stays as it is, and so do the arguments it accepts.
        assert_eq!(compact(&schema()), schema());
        assert!(check(&compact(&full), &json!({"title": "t", "tags": ["a"]})).is_ok());
    }

    #[test]
    fn unknown_constructs_pass() {
        let schema = json!({"anyOf": [{"type": "string"}], "properties": {"x": {"$ref": "#/y"}}});
        assert!(check(&schema, &json!({"x": 5})).is_ok());
    }
}
