//! What the debug log may show of a request body: the one redaction every provider's
//! request goes through (it is applied in [`super::wire::send_signed`], the only place a
//! request body is logged).
//!
//! Tool results are where secrets turn up (a `.env` file read by `fs_read`, a command's
//! output), so their content is replaced by its size in every wire format loki speaks:
//!
//! | format | shape of a tool result |
//! |---|---|
//! | OpenAI, Azure, Cohere, Ollama, llama-server, Vertex (OpenAI publishers) | `{"role": "tool", "content": …}` |
//! | Claude, Claude on Vertex | `{"type": "tool_result", "content": …}` |
//! | OpenAI Responses | `{"type": "function_call_output", "output": …}` |
//! | Gemini, Gemini on Vertex | `{"functionResponse": {"name": …, "response": …}}` |
//! | Bedrock Converse | `{"toolResult": {"toolUseId": …, "content": …}}` |
//!
//! The whole line is then passed through [`loki_wire::secrets::redact`] like every log record.

use serde_json::Value;

/// A request body for the debug log: tool output replaced by `[N bytes of tool output]`,
/// known secrets by their marker.
pub fn request_body(body: &Value) -> String {
    let mut body = body.clone();
    hide_tool_output(&mut body);
    loki_wire::secrets::redact(&body.to_string()).into_owned()
}

fn size_note(value: &Value) -> Value {
    let size = match value {
        Value::String(s) => s.len(),
        other => other.to_string().len(),
    };
    Value::String(format!("[{size} bytes of tool output]"))
}

fn replace(map: &mut serde_json::Map<String, Value>, key: &str) {
    if let Some(value) = map.get_mut(key) {
        *value = size_note(value);
    }
}

fn hide_tool_output(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(hide_tool_output),
        Value::Object(map) => {
            let str_at = |key: &str| map.get(key).and_then(Value::as_str);
            let role_tool = str_at("role") == Some("tool");
            let kind = str_at("type");
            let (tool_result, call_output) = (
                kind == Some("tool_result"),
                kind == Some("function_call_output"),
            );
            if role_tool || tool_result {
                replace(map, "content");
            }
            if call_output {
                replace(map, "output");
            }
            if let Some(Value::Object(inner)) = map.get_mut("functionResponse") {
                replace(inner, "response");
            }
            if let Some(Value::Object(inner)) = map.get_mut("toolResult") {
                replace(inner, "content");
            }
            map.values_mut().for_each(hide_tool_output);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SECRET: &str = "SECRET=hunter2-from-dotenv";

    fn logged(body: Value) -> String {
        let line = request_body(&body);
        assert!(!line.contains("hunter2"), "tool output leaked: {line}");
        assert!(line.contains("bytes of tool output]"), "{line}");
        line
    }

    #[test]
    fn tool_output_is_hidden_in_every_wire_format() {
        // OpenAI-style (OpenAI, Azure, Cohere, Ollama).
        logged(json!({"messages": [
            {"role": "user", "content": "read it"},
            {"role": "tool", "tool_call_id": "c1", "content": SECRET}
        ]}));
        // Cohere's document form.
        logged(json!({"messages": [{"role": "tool", "tool_call_id": "c1",
            "content": [{"type": "document", "document": {"data": SECRET}}]}]}));
        // Claude.
        let line = logged(json!({"messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": SECRET}
        ]}]}));
        assert!(line.contains("\"tool_use_id\":\"t1\""), "{line}");
        // Responses API.
        logged(
            json!({"input": [{"type": "function_call_output", "call_id": "c", "output": SECRET}]}),
        );
        // Gemini.
        let line = logged(json!({"contents": [{"role": "user", "parts": [
            {"functionResponse": {"name": "fs_read", "response": {"content": SECRET}}}
        ]}]}));
        assert!(line.contains("\"name\":\"fs_read\""), "{line}");
        // Bedrock.
        logged(json!({"messages": [{"role": "user", "content": [
            {"toolResult": {"toolUseId": "t", "content": [{"text": SECRET}], "status": "success"}}
        ]}]}));
    }

    #[test]
    fn the_rest_of_the_body_is_kept() {
        let line = request_body(&json!({"model": "m", "messages": [
            {"role": "user", "content": "hello"},
            {"role": "tool", "content": "12345"}
        ]}));
        assert_eq!(
            line,
            r#"{"model":"m","messages":[{"role":"user","content":"hello"},{"role":"tool","content":"[5 bytes of tool output]"}]}"#
        );
    }
}
