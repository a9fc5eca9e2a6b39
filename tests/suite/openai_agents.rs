//! The OpenAI Agents SDK (Python `openai-agents`, pinned in tests/clients/requirements.txt)
//! against `loki --serve`: an Agent with a function tool, run plain and streamed; the SDK
//! runs the tool the fake model calls and its result reaches the final answer.

use serde_json::{Value, json};

use super::server::Served;
use crate::common::TestEnv;
use crate::common::clients::require_python_module;
use crate::common::fake_llm::{Recorded, Reply, openai};

const OPEN: &str = "api:\n  auth:\n    mode: Disabled";

/// The fake model: given the tool's result, it answers with it; asked about the weather,
/// it calls the tool. Replies go by content, not by arrival order.
fn model(request: &Recorded) -> Reply {
    let body = request.json();
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    if last["role"] == "tool" {
        let result = last["content"].as_str().unwrap_or_default().to_string();
        return openai::text_stream(&["The forecast: ", &result]);
    }
    let city = if last["content"].to_string().contains("streamed") {
        "Bergen"
    } else {
        "Oslo"
    };
    let id = format!("call_{city}");
    let arguments = json!({ "city": city }).to_string();
    openai::tool_call_stream(&[(&id, "weather", &arguments)])
}

#[test]
fn an_agents_sdk_agent_calls_its_function_tool_plain_and_streamed() {
    require_python_module("agents");
    let env = TestEnv::new();
    env.server.respond_for("/v1/chat/completions", model);
    let served = Served::start(&env, OPEN);
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openai_agents_client.py");
    let out = std::process::Command::new("timeout")
        .arg("120")
        .arg("python3")
        .arg(script)
        .arg(format!("http://{}/v1", served.addr))
        .env("OPENAI_AGENTS_DISABLE_TRACING", "1")
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(got["calls"], json!(["Oslo", "Bergen"]), "{got}");
    assert_eq!(got["plain"], "The forecast: sunny-in-Oslo-42", "{got}");
    assert_eq!(got["streamed"], "The forecast: sunny-in-Bergen-42", "{got}");
    assert_eq!(got["streamed_text"], got["streamed"], "{got}");
    let items = got["streamed_items"].to_string();
    for kind in [
        "tool_call_item",
        "tool_call_output_item",
        "message_output_item",
    ] {
        assert!(items.contains(kind), "{kind} not in {items}");
    }
    // Each run is two model calls; the second carries the tool's result.
    let sent = env.server.requests();
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert!(
        sent[1].json()["messages"]
            .to_string()
            .contains("sunny-in-Oslo-42")
    );
}
