//! Zed's Claude adapter (`@zed-industries/claude-agent-acp`, pinned in tests/clients) runs
//! loki as its Claude Code CLI (`CLAUDE_CODE_EXECUTABLE`), unchanged, driven from an
//! editor through the official ACP Python SDK (`tests/data/zed_adapter_client.py`) with
//! its input kept open: a new session, a prompt answered with text, a call that needs
//! permission (the editor is asked and allows it; the file is written), and a cancel in
//! the middle of a slow answer.

use std::process::Command;

use serde_json::Value;

use crate::common::clients::{npm_bin, require_python_module};
use crate::common::fake_llm::{Recorded, Reply, openai};
use crate::common::{LOKI, TestEnv};

fn route(request: &Recorded) -> Reply {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    if messages.last().is_some_and(|m| m["role"] == "tool") {
        return openai::text_stream(&["the notes are written"]);
    }
    if last_user.contains("write the notes") {
        openai::tool_call_stream(&[(
            "call_w",
            "fs_write",
            r#"{"path":"notes.md","contents":"new notes\n"}"#,
        )])
    } else if last_user.contains("a slow one") {
        openai::text_stream(&["slow start", " and more"]).hang_after(2)
    } else {
        openai::text_stream(&["hello back"])
    }
}

/// Runs the editor against the adapter; its report.
fn editor(env: &TestEnv) -> Value {
    require_python_module("acp");
    let adapter = npm_bin("claude-agent-acp");
    let mut vars: serde_json::Map<String, Value> = env
        .env_pairs()
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    vars.insert("CLAUDE_CODE_EXECUTABLE".into(), Value::String(LOKI.into()));
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/zed_adapter_client.py"
    );
    // Bounded: a stall fails the test instead of hanging the suite.
    let output = Command::new("timeout")
        .args(["180", "python3", script])
        .arg(&adapter)
        .arg(env.work_dir())
        .env("LOKI_TEST_ENV", Value::Object(vars).to_string())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the editor failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no report ({e}): {stdout}"))
}

fn text_of(updates: &Value) -> String {
    updates
        .as_array()
        .into_iter()
        .flatten()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

#[test]
fn zed_s_claude_adapter_runs_on_loki_prompts_asks_and_cancels() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command,fs_write\n{cfg}"));
    std::fs::write(env.work_dir().join("notes.md"), "old notes\n").unwrap();
    env.server.respond_for("/v1/chat", route);
    let report = editor(&env);

    // The session offers loki's models, the configured one current.
    let options = report["new"]["configOptions"].as_array().unwrap();
    let model = options.iter().find(|o| o["id"] == "model").unwrap();
    assert_eq!(model["currentValue"], "fake:gpt-4o-mini", "{model:#}");
    assert!(
        model["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["value"] == "fake:priced"),
        "{model:#}"
    );

    // A prompt answered with text ends with end_turn.
    let hello = &report["hello"];
    assert_eq!(hello["stop"], "end_turn", "{hello:#}");
    assert_eq!(text_of(&hello["updates"]), "hello back", "{hello:#}");

    // The write needs permission: the editor is asked about Claude's `Write`, allows
    // it, and the file is written; the card ends completed.
    let write = &report["write"];
    assert_eq!(write["stop"], "end_turn", "{write:#}");
    let asked = report["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert_eq!(asked[0]["tool_call"]["toolCallId"], "call_w", "{asked:#?}");
    assert!(
        asked[0]["tool_call"]["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("Write")),
        "{asked:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("notes.md")).unwrap(),
        "new notes\n"
    );
    let updates = write["updates"].as_array().unwrap();
    assert!(
        updates
            .iter()
            .any(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "call_w"),
        "{write:#}"
    );
    assert!(
        updates
            .iter()
            .any(|u| u["sessionUpdate"] == "tool_call_update"
                && u["toolCallId"] == "call_w"
                && u["status"] == "completed"),
        "{write:#}"
    );
    assert!(text_of(&write["updates"]).contains("the notes are written"));

    // session/cancel in the middle of a slow answer: stopReason cancelled, and what
    // came before the cancel was shown.
    let slow = &report["slow"];
    assert_eq!(slow["stop"], "cancelled", "{slow:#}");
    assert!(
        text_of(&slow["updates"]).starts_with("slow start"),
        "{slow:#}"
    );
}
