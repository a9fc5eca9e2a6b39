//! Input loki does not control — `-f` files and devices, piped stdin, config, role and
//! session files, MCP servers — is bounded in size and depth, and its errors say what was
//! expected and which setting to change.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::fake_llm::openai;
use crate::common::{stderr, stdout};
use crate::suite::mcp::{mcp_env, server_bin, tool_result};

/// The start and end of a long text, for assertion messages.
fn ends(text: &str) -> String {
    if text.len() <= 400 {
        return text.to_string();
    }
    let head: String = text.chars().take(200).collect();
    let tail: String = text
        .chars()
        .rev()
        .take(200)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{head} … {tail} ({} bytes)", text.len())
}

/// A call of the test server's `echo` tool answering `echo: ` and `bytes` of `fill`.
fn big_call(tool: &str, bytes: usize, fill: char) -> crate::common::fake_llm::Reply {
    let args = json!({"text": fill.to_string(), "times": bytes}).to_string();
    openai::tool_call_stream(&[("c1", tool, &args)])
}

/// 12 MB of quotes is 24 MB once JSON-escaped: over rmcp's fixed 16 MiB line limit, which
/// dropped the answer and left the call waiting for `tool_timeout`.
#[test]
fn a_12_mb_mcp_result_arrives_and_is_cut_with_a_note() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "enabled_mcp_servers: test\ntool_timeout: 45\n",
    );
    env.server.push(big_call("test_echo", 12_000_000, '"'));
    env.server.push(openai::text_stream(&["Read it."]));
    let out = env.loki().arg("fetch it").assert().success();
    assert_eq!(stdout(&out), "Read it.\n");
    let result = tool_result(&env.server.last_request().json());
    assert!(
        result.starts_with("echo: \"\"\"")
            && result.contains("[output truncated: showed 32768 of 12000006 bytes"),
        "{}",
        ends(&result)
    );
    assert!(result.len() < 64 * 1024, "{}", ends(&result));
}

#[test]
fn an_mcp_message_over_the_limit_fails_its_call_at_once() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "enabled_mcp_servers: test\ntool_timeout: 120\nmcp_max_message_size: 1000000\n",
    );
    env.server.push(big_call("test_echo", 3_000_000, 'x'));
    env.server.push(openai::text_stream(&["Too big."]));
    let started = Instant::now();
    let out = env.loki().arg("fetch it").assert().success();
    assert_eq!(stdout(&out), "Too big.\n");
    let result = tool_result(&env.server.last_request().json());
    assert!(
        result.contains("MCP server `test` sent a message larger than 1000000 bytes")
            && result.contains("raise `mcp_max_message_size`"),
        "{}",
        ends(&result)
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert!(!stderr(&out).contains("unknown key"), "{}", stderr(&out));

    // The server stays usable.
    env.server.push(openai::tool_call_stream(&[(
        "c2",
        "test_echo",
        r#"{"text":"hi"}"#,
    )]));
    env.server.push(openai::text_stream(&["Echoed."]));
    env.loki().arg("echo").assert().success();
    assert_eq!(tool_result(&env.server.last_request().json()), "echo: hi");
}

#[test]
fn an_oversized_answer_over_streamable_http_fails_its_call_at_once() {
    let (_server, url) = crate::suite::mcp::remote("--http", "tok");
    let env = mcp_env(
        json!({"remote": {"type": "http", "url": url, "headers": {"Authorization": "Bearer tok"}}}),
        "enabled_mcp_servers: remote\ntool_timeout: 120\nmcp_max_message_size: 1000000\n",
    );
    env.server.push(big_call("remote_echo", 3_000_000, 'x'));
    env.server.push(openai::text_stream(&["Too big."]));
    let started = Instant::now();
    let out = env.loki().arg("fetch it").assert().success();
    assert_eq!(stdout(&out), "Too big.\n");
    let result = tool_result(&env.server.last_request().json());
    assert!(
        result.contains("MCP server `remote` sent a message larger than 1000000 bytes")
            && result.contains("raise `mcp_max_message_size`"),
        "{}",
        ends(&result)
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn an_unreachable_http_server_is_named_with_the_reason() {
    let env = mcp_env(
        json!({"remote": {"type": "http", "url": "http://127.0.0.1:9/mcp?token=secret"}}),
        "enabled_mcp_servers: remote\n",
    );
    env.server.push(openai::text_stream(&["Fine."]));
    let out = env.loki().arg("hi").assert().success();
    assert_eq!(stdout(&out), "Fine.\n");
    let err = stderr(&out);
    assert!(
        err.contains("MCP server `remote` failed to start: cannot reach http://127.0.0.1:9/mcp: ")
            && err.contains("refused"),
        "{err}"
    );
    assert!(!err.contains("rmcp::") && !err.contains("secret"), "{err}");
}
