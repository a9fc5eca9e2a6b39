//! MCP servers end to end: a real MCP server (examples/mcp_server.rs, built with rmcp's
//! server side) over stdio, the fake provider calling its tools, both exposure modes,
//! approval, secret injection, and servers that fail or crash.

use serde_json::{Value, json};

use crate::common::fake_llm::openai;
use crate::common::{TestEnv, stderr, stdout};

/// The test server binary (built with the tests: `cargo test` builds examples).
pub(crate) fn server_bin() -> String {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let bin = dir.join("examples/mcp_server");
    assert!(
        bin.exists(),
        "{} missing: run `cargo build --example mcp_server` (cargo test builds it)",
        bin.display()
    );
    bin.display().to_string()
}

pub(crate) fn mcp_env(servers: Value, extra: &str) -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    // Servers here start in milliseconds, but a loaded CI machine must not turn the
    // default start wait into a failed test; tests of the wait itself set their own.
    let wait = if extra.contains("mcp_start_wait") {
        ""
    } else {
        "mcp_start_wait: 30\n"
    };
    env.write_config(&format!("{extra}{wait}{cfg}"));
    let functions = env.config_dir().join("functions");
    std::fs::create_dir_all(&functions).unwrap();
    std::fs::write(
        functions.join("mcp.json"),
        json!({"mcpServers": servers}).to_string(),
    )
    .unwrap();
    env
}

pub(crate) fn tool_result(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

#[test]
fn stdio_server_tools_are_offered_directly_and_secrets_reach_its_env() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin(), "env": {"SECRET_TOKEN": "{{MCP_SECRET}}"}}}),
        "enabled_mcp_servers: test\n",
    );
    env.server.push(openai::tool_call_stream(&[(
        "call_1",
        "test_env_value",
        r#"{"name":"SECRET_TOKEN"}"#,
    )]));
    env.server.push(openai::text_stream(&["The token is set."]));
    let out = env
        .loki()
        .env("MCP_SECRET", "s3cr3t-value")
        .arg("what is the token?")
        .assert()
        .success();
    assert_eq!(stdout(&out), "The token is set.\n");
    let first = env.server.requests()[0].json();
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for expected in ["test_echo", "test_add", "test_note", "test_env_value"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    let echo = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "test_echo")
        .unwrap();
    assert!(echo["function"]["parameters"]["properties"]["text"].is_object());
    assert_eq!(
        tool_result(&env.server.last_request().json()),
        "s3cr3t-value"
    );

    // Structured content and tool errors go back to the model as results.
    env.server.push(openai::tool_call_stream(&[
        ("c1", "test_add", r#"{"a":2,"b":40}"#),
        ("c2", "test_fail", "{}"),
    ]));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .env("MCP_SECRET", "x")
        .arg("add")
        .assert()
        .success();
    let messages = env.server.last_request().json()["messages"].clone();
    let results: Vec<String> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert!(results[0].contains("\"sum\":42"), "{results:?}");
    assert!(
        results[1].contains("MCP tool invocation failed") && results[1].contains("boom"),
        "{results:?}"
    );
}

#[test]
fn meta_functions_search_describe_and_invoke_with_approval() {
    let notes = tempfile::NamedTempFile::new().unwrap();
    let notes_path = notes.path().display().to_string();
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin(), "env": {"MCP_TEST_NOTES": notes_path}}}),
        // Only the meta functions are declared (not `task`, which delegation adds).
        "enabled_mcp_servers: test\nmcp_tool_exposure: meta\ndelegation: false\n",
    );
    env.server.push(openai::tool_call_stream(&[
        (
            "c1",
            "mcp__search_test",
            r#"{"query":"append a line to notes"}"#,
        ),
        ("c2", "mcp__describe_test", r#"{"tool":"note"}"#),
    ]));
    env.server.push(openai::tool_call_stream(&[(
        "c3",
        "mcp__invoke_test",
        r#"{"tool":"note","arguments":{"line":"hello"}}"#,
    )]));
    env.server.push(openai::text_stream(&["Noted."]));
    // Piped, nobody can approve: the writing tool is declined, reads are not asked.
    env.loki().arg("take a note").assert().success();
    let requests = env.server.requests();
    let names: Vec<String> = requests[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        ["mcp__search_test", "mcp__describe_test", "mcp__invoke_test"]
    );
    let second = requests[1].json();
    let results: Vec<String> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    let hits: Value = serde_json::from_str(&results[0]).unwrap();
    assert_eq!(hits[0]["name"], "note", "{hits}");
    assert!(results[1].contains("\"line\""), "{}", results[1]);
    assert!(
        tool_result(&requests[2].json()).contains("declined"),
        "{}",
        tool_result(&requests[2].json())
    );
    assert_eq!(std::fs::read_to_string(notes.path()).unwrap(), "");

    // With --yolo the invocation runs.
    env.server.push(openai::tool_call_stream(&[(
        "c4",
        "mcp__invoke_test",
        r#"{"tool":"note","arguments":{"line":"hello"}}"#,
    )]));
    env.server.push(openai::text_stream(&["Noted."]));
    env.loki()
        .args(["--yolo", "take a note"])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(notes.path()).unwrap(), "hello\n");
}

#[test]
fn failing_missing_and_crashing_servers_never_block_the_answer() {
    let env = mcp_env(
        json!({
            "test": {"type": "stdio", "command": server_bin()},
            "refuses": {"type": "stdio", "command": server_bin(), "args": ["--fail-to-start"]},
            "ghost": {"type": "stdio", "command": "/nonexistent/mcp-server"},
            "nokey": {"type": "stdio", "command": server_bin(), "env": {"T": "{{NOT_SET_ANYWHERE}}"}}
        }),
        "enabled_mcp_servers: test,refuses,ghost,nokey,typo\n",
    );
    env.server
        .push(openai::tool_call_stream(&[("c1", "test_crash", "{}")]));
    env.server.push(openai::text_stream(&["Still here."]));
    let out = env.loki().arg("crash it").assert().success();
    assert_eq!(stdout(&out), "Still here.\n");
    let err = stderr(&out);
    for expected in [
        "MCP server `refuses` failed to start",
        // A server that exits at once: its status, its last words and where the rest is.
        "exited with status 2 before the session started: test server: refusing to start \
         (its stderr is in ",
        "MCP server `ghost` failed to start",
        "cannot run `/nonexistent/mcp-server`",
        "MCP server `nokey` is not usable",
        "NOT_SET_ANYWHERE",
        "unknown MCP server `typo`",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in {err}");
    }
    let result = tool_result(&env.server.last_request().json());
    assert!(result.contains("MCP tool invocation failed"), "{result}");
    // Only the working server's tools were offered.
    let tools = env.server.requests()[0].json()["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"test_crash"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("refuses_")
            || n.starts_with("ghost_")
            || n.starts_with("nokey_")),
        "{names:?}"
    );
}

/// Sends `line` and waits for `until`, then for the prompt `prompt`.
fn submit(pty: &mut crate::common::pty::Pty, line: &str, until: &str, prompt: &str) -> String {
    pty.send(line);
    pty.send("\r");
    let mut out = pty.expect(until);
    out.push_str(&pty.expect(prompt));
    out
}

/// `.info` until the server's row shows `state`.
fn wait_for_state(pty: &mut crate::common::pty::Pty, server: &str, state: &str, prompt: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let info = submit(pty, ".info", "log_path", prompt);
        let row = info
            .lines()
            .find(|l| l.contains(&format!("mcp:{server}")))
            .unwrap_or_default()
            .to_string();
        if row.contains(state) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "mcp:{server} never became {state:?}; last: {row:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn repl_starts_and_stops_servers_as_settings_and_roles_change() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "",
    );
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(
        roles.join("tooly.md"),
        "---\nenabled_mcp_servers: test\n---\nUse the test server.\n",
    )
    .unwrap();
    let prompt = "fake:gpt-4o-mini)> ";
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(prompt);
    wait_for_state(&mut pty, "test", "idle", prompt);

    submit(
        &mut pty,
        ".set enabled_mcp_servers nope",
        "unknown MCP server(s) nope; configured in functions/mcp.json: test",
        prompt,
    );
    submit(
        &mut pty,
        ".set enabled_mcp_servers test",
        "enabled_mcp_servers: test",
        prompt,
    );
    wait_for_state(&mut pty, "test", "running (9 tools)", prompt);
    submit(
        &mut pty,
        ".set enabled_mcp_servers null",
        "enabled_mcp_servers",
        prompt,
    );
    wait_for_state(&mut pty, "test", "idle", prompt);

    // A role that uses the server starts it; leaving the role stops it.
    let role_prompt = "fake:gpt-4o-mini)tooly> ";
    pty.send(".role tooly\r");
    pty.expect(role_prompt);
    wait_for_state(&mut pty, "test", "running", role_prompt);
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "test_echo",
        r#"{"text":"hi"}"#,
    )]));
    env.server.push(openai::text_stream(&["Echoed."]));
    submit(&mut pty, "echo hi", "Echoed.", role_prompt);
    assert_eq!(tool_result(&env.server.last_request().json()), "echo: hi");
    submit(&mut pty, ".exit role", "", prompt);
    wait_for_state(&mut pty, "test", "idle", prompt);
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}

/// Starts the test server in a remote mode; returns it (killed on drop) and its URL.
pub(crate) struct Remote(std::process::Child);

impl Drop for Remote {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) fn remote(mode: &str, token: &str) -> (Remote, String) {
    remote_with(mode, token, &[])
}

/// [`remote`] with environment variables for the server.
pub(crate) fn remote_with(mode: &str, token: &str, env: &[(&str, &str)]) -> (Remote, String) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(server_bin())
        .args([mode, token])
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Remote(child), line.trim().to_string())
}

fn remote_round_trip(kind: &str, mode: &str) {
    let (_server, url) = remote(mode, "tok-123");
    let env = mcp_env(
        json!({
            "remote": {"type": kind, "url": url, "headers": {"Authorization": "Bearer {{MCP_TOKEN}}"}},
            "locked": {"type": kind, "url": url, "headers": {"Authorization": "Bearer wrong"}}
        }),
        "enabled_mcp_servers: remote,locked\n",
    );
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "remote_echo",
        r#"{"text":"over the wire"}"#,
    )]));
    env.server.push(openai::text_stream(&["Done."]));
    let out = env
        .loki()
        .env("MCP_TOKEN", "tok-123")
        .arg("echo remotely")
        .assert()
        .success();
    assert_eq!(stdout(&out), "Done.\n");
    assert_eq!(
        tool_result(&env.server.last_request().json()),
        "echo: over the wire"
    );
    let err = stderr(&out);
    assert!(
        err.contains("MCP server `locked` failed to start"),
        "{kind}: {err}"
    );
}

#[test]
fn streamable_http_server_with_auth_header() {
    remote_round_trip("http", "--http");
}

/// Issue 24: every POST to a streamable HTTP server carries `Mcp-Method` (and `Mcp-Name`
/// for a tool call), and `initialize`, which opens the session before a version is
/// agreed, names the version it proposes in `MCP-Protocol-Version`.
#[test]
fn every_post_carries_the_standard_headers() {
    // Unpinned, loki asks for the 2026-07-28 revision with `server/discover`; pinned to
    // 2025-11-25 it uses `initialize`. Every POST names its method either way.
    for (pin, first, version) in [
        (None, "server/discover", "2026-07-28"),
        (Some("2025-11-25"), "initialize", "2025-11-25"),
    ] {
        let log = tempfile::NamedTempFile::new().unwrap();
        let log_path = log.path().display().to_string();
        let (_server, url) = remote_with("--http", "tok-123", &[("MCP_HEADER_LOG", &log_path)]);
        let mut entry =
            json!({"type": "http", "url": url, "headers": {"Authorization": "Bearer tok-123"}});
        if let Some(pin) = pin {
            entry["protocolVersion"] = json!(pin);
        }
        let env = mcp_env(json!({ "remote": entry }), "enabled_mcp_servers: remote\n");
        env.server.push(openai::tool_call_stream(&[(
            "c1",
            "remote_echo",
            r#"{"text":"hi"}"#,
        )]));
        env.server.push(openai::text_stream(&["Done."]));
        env.loki().arg("echo remotely").assert().success();
        let logged = std::fs::read_to_string(log.path()).unwrap();
        let lines: Vec<Vec<&str>> = logged.lines().map(|l| l.split('\t').collect()).collect();
        assert!(!lines.is_empty(), "no POST was logged");
        for line in &lines {
            assert_ne!(line[0], "-", "a POST without Mcp-Method: {logged}");
        }
        assert_eq!(lines[0][0], first, "{logged}");
        assert_eq!(lines[0][2], version, "{logged}");
        let call = lines
            .iter()
            .find(|l| l[0] == "tools/call")
            .expect("tools/call");
        assert_eq!(call[1], "echo", "{logged}");
        assert_eq!(call[2], version, "{logged}");
    }
}

#[test]
fn legacy_sse_server_with_auth_header() {
    remote_round_trip("sse", "--sse");
}

#[test]
fn a_call_that_outlasts_tool_timeout_is_abandoned_with_an_error_result() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "enabled_mcp_servers: test\ntool_timeout: 1\n",
    );
    env.server
        .push(openai::tool_call_stream(&[("c1", "test_slow", "{}")]));
    env.server.push(openai::text_stream(&["Gave up."]));
    let started = std::time::Instant::now();
    let out = env.loki().arg("be slow").assert().success();
    assert_eq!(stdout(&out), "Gave up.\n");
    let result = tool_result(&env.server.last_request().json());
    assert!(result.contains("did not answer within 1s"), "{result}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn progress_of_a_long_call_is_shown_while_it_runs() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "enabled_mcp_servers: test\n",
    );
    env.server
        .push(openai::tool_call_stream(&[("c1", "test_slow", "{}")]));
    env.server.push(openai::text_stream(&["Finished."]));
    let out = env.loki().arg("be slow").assert().success();
    assert_eq!(stdout(&out), "Finished.\n");
    let err = stderr(&out);
    assert!(err.contains("MCP `test`: 1/3 working"), "{err}");
    assert_eq!(tool_result(&env.server.last_request().json()), "slow done");
}

#[test]
fn a_direct_tool_that_changes_state_is_not_run_without_approval() {
    let notes = tempfile::NamedTempFile::new().unwrap();
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin(), "env": {"MCP_TEST_NOTES": notes.path().display().to_string()}}}),
        "enabled_mcp_servers: test\n",
    );
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "test_note",
        r#"{"line":"unapproved"}"#,
    )]));
    env.server.push(openai::text_stream(&["Could not."]));
    env.loki().arg("note it").assert().success();
    assert!(
        tool_result(&env.server.last_request().json()).contains("declined"),
        "{}",
        tool_result(&env.server.last_request().json())
    );
    assert_eq!(std::fs::read_to_string(notes.path()).unwrap(), "");
}

#[test]
fn images_from_a_tool_reach_a_vision_model_as_image_parts() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "enabled_mcp_servers: test\n",
    );
    env.server
        .push(openai::tool_call_stream(&[("c1", "test_picture", "{}")]));
    env.server.push(openai::text_stream(&["A dot."]));
    // fake:gpt-4o-mini supports vision in the test config.
    env.loki().arg("show me").assert().success();
    let messages = env.server.last_request().json()["messages"].clone();
    let tool = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool["content"].as_str().unwrap().contains("a tiny picture"),
        "{tool}"
    );
    let last = messages.as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(
        last["content"][1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgo="
    );

    // A model without vision gets only the description.
    env.server
        .push(openai::tool_call_stream(&[("c1", "test_picture", "{}")]));
    env.server.push(openai::text_stream(&["No eyes."]));
    let cfg = std::fs::read_to_string(env.config_path()).unwrap().replace(
        "      - name: text-only\n",
        "      - name: text-only\n        supports_function_calling: true\n",
    );
    env.write_config(&cfg);
    env.loki()
        .args(["-m", "fake:text-only", "show me"])
        .assert()
        .success();
    let messages = env.server.last_request().json()["messages"].clone();
    assert_eq!(messages.as_array().unwrap().last().unwrap()["role"], "tool");
}

#[test]
fn a_tool_list_change_is_picked_up_before_the_next_turn() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "enabled_mcp_servers: test\n",
    );
    let prompt = "fake:gpt-4o-mini)> ";
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(prompt);
    env.server
        .push(openai::tool_call_stream(&[("c1", "test_unlock", "{}")]));
    env.server.push(openai::text_stream(&["Unlocked."]));
    submit(&mut pty, "unlock it", "Unlocked.", prompt);
    let names = |body: &Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let before = names(&env.server.requests()[0].json());
    assert!(!before.iter().any(|n| n == "test_secret"), "{before:?}");
    env.server.push(openai::text_stream(&["Sure."]));
    submit(&mut pty, "anything new?", "Sure.", prompt);
    let after = names(&env.server.last_request().json());
    assert!(after.iter().any(|n| n == "test_secret"), "{after:?}");
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}

#[test]
fn pooled_servers_are_reused_instead_of_restarted() {
    let pids = tempfile::NamedTempFile::new().unwrap();
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin(), "env": {"MCP_TEST_PIDS": pids.path().display().to_string()}}}),
        "mcp_pool:\n  idle_timeout_seconds: 60\n",
    );
    let prompt = "fake:gpt-4o-mini)> ";
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(prompt);
    submit(
        &mut pty,
        ".set enabled_mcp_servers test",
        "enabled_mcp_servers: test",
        prompt,
    );
    wait_for_state(&mut pty, "test", "running", prompt);
    submit(
        &mut pty,
        ".set enabled_mcp_servers null",
        "enabled_mcp_servers",
        prompt,
    );
    wait_for_state(&mut pty, "test", "kept for reuse", prompt);
    submit(
        &mut pty,
        ".set enabled_mcp_servers test",
        "enabled_mcp_servers: test",
        prompt,
    );
    wait_for_state(&mut pty, "test", "running", prompt);
    let started = std::fs::read_to_string(pids.path()).unwrap();
    assert_eq!(started.lines().count(), 1, "restarted: {started}");
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}

#[test]
fn a_malformed_mcp_json_is_one_warning_and_the_answer_still_arrives() {
    let env = mcp_env(json!({}), "enabled_mcp_servers: all\n");
    std::fs::write(env.config_dir().join("functions/mcp.json"), "{not json").unwrap();
    env.server.push(openai::text_stream(&["Fine."]));
    let out = env.loki().arg("hi").assert().success();
    assert_eq!(stdout(&out), "Fine.\n");
    let err = stderr(&out);
    assert!(
        err.contains("MCP servers are unavailable: mcp.json:"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_server_kept_for_reuse_stops_when_its_idle_timeout_is_up_with_nothing_else_happening() {
    let pids = tempfile::NamedTempFile::new().unwrap();
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin(), "env": {"MCP_TEST_PIDS": pids.path().display().to_string()}}}),
        "mcp_pool:\n  idle_timeout_seconds: 1\n",
    );
    let prompt = "fake:gpt-4o-mini)> ";
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(prompt);
    submit(
        &mut pty,
        ".set enabled_mcp_servers test",
        "enabled_mcp_servers: test",
        prompt,
    );
    wait_for_state(&mut pty, "test", "running", prompt);
    submit(
        &mut pty,
        ".set enabled_mcp_servers null",
        "enabled_mcp_servers",
        prompt,
    );
    let pid = std::fs::read_to_string(pids.path()).unwrap();
    let pid = pid.lines().next().unwrap().trim().to_string();
    let alive = |pid: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.split(") ").nth(1).unwrap_or("").starts_with('Z'))
    };
    assert!(alive(&pid), "kept for reuse at first");
    let waited = std::time::Instant::now();
    while alive(&pid) {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(8),
            "server {pid} still running past mcp_pool.idle_timeout_seconds"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}
