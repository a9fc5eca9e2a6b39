//! The standard request headers of the 2026-07-28 protocol revision (`Mcp-Method`,
//! `Mcp-Name`, `MCP-Protocol-Version`) on every POST, including the ones rmcp sends
//! without them.
//!
//! Owns: deriving those headers from a JSON-RPC message, for the requests rmcp leaves
//! bare: it adds them itself only once a 2026-07-28 session is established, so the
//! `initialize` POST that opens a session carried none. Gateways that route on them
//! (and the conformance suite's `http-standard-headers` scenario) need them there too.
//! Does not own: the headers rmcp sets (never overridden), the session id.

use std::collections::HashMap;

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::Value;

/// Methods whose `Mcp-Name` is their `params.name`.
const BY_NAME: &[&str] = &["tools/call", "prompts/get"];
/// Methods whose `Mcp-Name` is their `params.uri`.
const BY_URI: &[&str] = &[
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Adds the standard headers `message` calls for to `headers`, leaving any already
/// there as they are. Responses and malformed messages get none.
pub fn complete(message: &impl serde::Serialize, headers: &mut HashMap<HeaderName, HeaderValue>) {
    let Ok(value) = serde_json::to_value(message) else {
        return;
    };
    let Some(method) = value.get("method").and_then(Value::as_str) else {
        return;
    };
    let params = value.get("params");
    let mut add = |name: &'static str, text: &str| {
        let name = HeaderName::from_static(name);
        if headers.contains_key(&name) {
            return;
        }
        if let Ok(value) = HeaderValue::from_str(&header_text(text)) {
            headers.insert(name, value);
        }
    };
    add("mcp-method", method);
    let key = if BY_NAME.contains(&method) {
        Some("name")
    } else if BY_URI.contains(&method) {
        Some("uri")
    } else {
        None
    };
    if let Some(name) = key.and_then(|k| params?.get(k)?.as_str()) {
        add("mcp-name", name);
    }
    if method == "initialize"
        && let Some(version) = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
    {
        add("mcp-protocol-version", version);
    }
}

/// A value as it can travel in a header: as is when it is printable ASCII without
/// blanks at its ends, else base64 between `=?base64?` and `?=`.
fn header_text(text: &str) -> String {
    use base64::Engine;
    let printable = text.bytes().all(|b| (0x20..0x7f).contains(&b));
    let padded = text.starts_with([' ', '\t']) || text.ends_with([' ', '\t']);
    let looks_wrapped = text.starts_with("=?base64?") && text.ends_with("?=");
    if printable && !padded && !looks_wrapped {
        text.to_string()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(text)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers_for(message: Value) -> HashMap<String, String> {
        let mut headers = HashMap::new();
        complete(&message, &mut headers);
        headers
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_string()))
            .collect()
    }

    #[test]
    fn initialize_gets_its_method_and_version() {
        let h = headers_for(
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}),
        );
        assert_eq!(h["mcp-method"], "initialize");
        assert_eq!(h["mcp-protocol-version"], "2025-11-25");
        assert!(!h.contains_key("mcp-name"));
    }

    #[test]
    fn calls_name_their_tool_or_resource_and_odd_names_are_wrapped() {
        let h = headers_for(
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": {}}}),
        );
        assert_eq!(
            (h["mcp-method"].as_str(), h["mcp-name"].as_str()),
            ("tools/call", "echo")
        );
        let h = headers_for(serde_json::json!({"jsonrpc": "2.0", "id": 3,
            "method": "resources/read", "params": {"uri": "file:///ünï"}}));
        assert_eq!(h["mcp-name"], "=?base64?ZmlsZTovLy/DvG7Drw==?=");
        // A response carries none; a header already set is kept.
        assert!(
            headers_for(serde_json::json!({"jsonrpc": "2.0", "id": 4, "result": {}})).is_empty()
        );
        let mut set = HashMap::new();
        set.insert(
            HeaderName::from_static("mcp-method"),
            HeaderValue::from_static("x"),
        );
        complete(&serde_json::json!({"method": "ping", "id": 5}), &mut set);
        assert_eq!(set[&HeaderName::from_static("mcp-method")], "x");
    }
}
