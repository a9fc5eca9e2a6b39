//! Native provider clients against the fake server speaking their wire formats.

use serde_json::json;

use crate::common::fake_llm::anthropic;
use crate::common::{TestEnv, stderr, stdout};

fn claude_env(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write_config(&format!(
        "model: claude:claude-sonnet-4-5\n{extra}clients:\n  - type: claude\n    api_base: {}\n    api_key: sk-ant-test\n    models:\n      - name: claude-sonnet-4-5\n        supports_function_calling: true\n        max_output_tokens: 1024\n    extra:\n      retry_base_delay_ms: 10\n",
        env.server.base_url()
    ));
    env
}

#[test]
fn claude_streams_with_its_own_headers_and_body() {
    let env = claude_env("");
    env.server
        .push(anthropic::text_stream(&["Hello", ", Ada."]));
    let out = env
        .loki()
        .args(["--prompt", "Be brief.", "hi"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "Hello, Ada.\n");
    let request = env.server.last_request();
    assert_eq!(request.path_only(), "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert!(request.header("authorization").is_none());
    let body = request.json();
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["max_tokens"], 1024);
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"][0]["text"], "Be brief.");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    );
}

#[test]
fn claude_tool_use_round_trips() {
    let env = claude_env("enabled_tools: fs_read\n");
    env.write("a.txt", "alpha");
    env.server.push(anthropic::tool_use_stream(&[(
        "toolu_01",
        "fs_read",
        r#"{"path":"a.txt"}"#,
    )]));
    env.server.push(anthropic::text_stream(&["It says alpha."]));
    let out = env.loki().arg("what is in a.txt?").assert().success();
    assert_eq!(stdout(&out), "Let me check.\nIt says alpha.\n");
    let first = env.server.requests()[0].json();
    assert_eq!(first["tools"][0]["name"], "fs_read");
    assert!(first["tools"][0]["input_schema"]["properties"]["path"].is_object());
    let messages = env.server.last_request().json()["messages"].clone();
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_01", "name": "fs_read", "input": {"path": "a.txt"}}
        ]})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "     1\talpha\n"}
        ]})
    );
}

#[test]
fn claude_errors_are_one_line_and_keep_the_partial_answer() {
    let env = claude_env("");
    env.server.push(anthropic::error_mid_stream("Partial answ"));
    let out = env.loki().arg("hi").assert().code(1);
    assert_eq!(stdout(&out), "Partial answ\n");
    assert!(
        stderr(&out).contains("overloaded_error: Overloaded"),
        "{}",
        stderr(&out)
    );

    env.server
        .push(anthropic::error(529, "overloaded_error", "Overloaded"));
    env.server.push(anthropic::text_stream(&["Recovered."]));
    let out = env.loki().arg("again").assert().success();
    assert_eq!(stdout(&out), "Recovered.\n");

    env.server.set_default(anthropic::error(
        401,
        "authentication_error",
        "invalid x-api-key",
    ));
    let out = env.loki().arg("x").assert().code(1);
    let err = stderr(&out);
    assert!(
        err.contains("401") && err.contains("invalid x-api-key"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
