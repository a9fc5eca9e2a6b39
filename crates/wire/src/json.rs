//! JSON as `Value`, instantiated here at full optimisation: encoding the request body every
//! provider builds (string escaping of a long conversation is most of a request's encoding
//! time), and parsing the streamed events of the providers whose decoders read them as a
//! `Value` (Anthropic, Gemini, Cohere, Ollama, Bedrock): one parse per token.

use serde_json::Value;

/// The compact JSON text of `value`.
pub fn to_vec(value: &Value) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(value)
}

/// Parses one JSON text into a `Value`.
pub fn value_from_str(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str(text)
}

/// What kind of JSON value `value` is, with its article (`a string`, `an object`), for
/// messages that say what was expected and what came instead.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_as_english() {
        assert_eq!(kind(&Value::Null), "null");
        assert_eq!(kind(&serde_json::json!([1])), "an array");
        assert_eq!(kind(&serde_json::json!({"a": 1})), "an object");
        assert_eq!(kind(&serde_json::json!("x")), "a string");
    }
}
