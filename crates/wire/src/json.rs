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
