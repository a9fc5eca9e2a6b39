//! What MCP servers ask of loki while a call runs: a form for the user (elicitation),
//! answered at the terminal or declined when nobody is there, and the roots. Over stdio
//! the server asks with its own requests (2025-11-25); over streamable HTTP the session
//! speaks 2026-07-28 and the questions come back as an `input_required` result that loki
//! answers and retries with the server's request state.

use serde_json::{Value, json};

use super::mcp::{mcp_env, remote_with, server_bin, tool_result};
use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::pty::Pty;

/// An environment whose model calls `tool` of the server `entry`, then says "Done.".
fn calling(entry: Value, tool: &str) -> TestEnv {
    let env = mcp_env(
        json!({ "s": entry }),
        "enabled_mcp_servers: s\nmcp_tool_exposure: direct\n",
    );
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        &format!("s_{tool}"),
        "{}",
    )]));
    env.server.push(openai::text_stream(&["Done."]));
    env
}

fn stdio() -> Value {
    json!({"type": "stdio", "command": server_bin(), "env": {"MCP_TEST_ASKS": "1"}})
}

/// Answers the form at the terminal: yes to answering, the name, no to tea.
fn answer_the_form(env: &TestEnv) {
    let mut pty = Pty::spawn(env, &["who am I"], &[("NO_COLOR", "1")]);
    pty.expect("What should I call you?");
    pty.send("y\r");
    pty.expect("Name");
    pty.send("Ann\r");
    pty.expect("Tea");
    pty.send("n\r");
    pty.expect("Done.");
}

#[test]
fn a_server_s_form_is_asked_at_the_terminal() {
    let env = calling(stdio(), "ask_name");
    answer_the_form(&env);
    assert_eq!(
        tool_result(&env.server.last_request().json()),
        "hello Ann (tea: false)"
    );
}

#[test]
fn a_2026_server_gets_the_answer_with_its_request_state() {
    let (_server, url) = remote_with("--http", "", &[("MCP_TEST_ASKS", "1")]);
    let env = calling(json!({"type": "http", "url": url}), "ask_name");
    answer_the_form(&env);
    // The server checks that its request state came back unchanged.
    assert_eq!(
        tool_result(&env.server.last_request().json()),
        "hello Ann (tea: false)"
    );
}

#[test]
fn without_a_terminal_a_form_is_declined() {
    let (_server, url) = remote_with("--http", "", &[("MCP_TEST_ASKS", "1")]);
    for entry in [stdio(), json!({"type": "http", "url": url})] {
        let env = calling(entry, "ask_name");
        env.loki().arg("who am I").assert().success();
        assert_eq!(
            tool_result(&env.server.last_request().json()),
            "no name: Decline"
        );
    }
}

#[test]
fn the_roots_are_the_working_directory() {
    let (_server, url) = remote_with("--http", "", &[("MCP_TEST_ASKS", "1")]);
    for entry in [stdio(), json!({"type": "http", "url": url})] {
        let env = calling(entry, "roots");
        env.loki().arg("where am I").assert().success();
        let expected = format!("file://{}/", env.work_dir().display());
        assert_eq!(tool_result(&env.server.last_request().json()), expected);
    }
}

#[test]
fn a_2026_server_s_tool_list_change_is_seen() {
    let (_server, url) = remote_with("--http", "", &[("MCP_TEST_ASKS", "1")]);
    let env = mcp_env(
        json!({"s": {"type": "http", "url": url}}),
        "enabled_mcp_servers: s\nmcp_tool_exposure: direct\n",
    );
    let prompt = "fake:gpt-4o-mini)> ";
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(prompt);
    env.server
        .push(openai::tool_call_stream(&[("c1", "s_unlock", "{}")]));
    env.server.push(openai::text_stream(&["Unlocked."]));
    pty.send("unlock it\r");
    pty.expect("Unlocked.");
    pty.expect(prompt);
    env.server.push(openai::text_stream(&["Sure."]));
    pty.send("anything new?\r");
    pty.expect("Sure.");
    pty.expect(prompt);
    let names = |body: &Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let before = names(&env.server.requests()[0].json());
    assert!(!before.iter().any(|n| n == "s_secret"), "{before:?}");
    let after = names(&env.server.last_request().json());
    assert!(after.iter().any(|n| n == "s_secret"), "{after:?}");
}

#[test]
fn a_server_s_prompts_and_resources_are_used_from_the_repl() {
    let env = mcp_env(
        json!({ "s": stdio() }),
        "enabled_mcp_servers: s\nmcp_tool_exposure: direct\n",
    );
    let prompt = "fake:gpt-4o-mini)> ";
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(prompt);
    pty.send(".mcp prompts\r");
    pty.expect("s greet name=…");
    pty.expect(prompt);
    pty.send(".mcp resources\r");
    pty.expect("mcp:s:test://readme");
    pty.expect(prompt);

    // Tab completes the prompt's name and its argument (the list above is kept).
    env.server.push(openai::text_stream(&["Hello Ann!"]));
    pty.send(".mcp prompt s gr\t");
    pty.expect("greet");
    pty.send("na\t");
    pty.expect("name=");
    pty.send("Ann\r");
    pty.expect("Hello Ann!");
    pty.expect(prompt);
    let sent = env.server.last_request().json()["messages"].to_string();
    assert!(sent.contains("Write a warm greeting for Ann."), "{sent}");

    env.server.push(openai::text_stream(&["They hum."]));
    pty.send(".file mcp:s:test://readme -- what do llamas do?\r");
    pty.expect("They hum.");
    pty.expect(prompt);
    let sent = env.server.last_request().json()["messages"].to_string();
    assert!(sent.contains("llamas hum"), "{sent}");
    assert!(sent.contains("mcp:s:test://readme"), "{sent}");

    // A prompt added later (the server says its list changed) completes too.
    env.server
        .push(openai::tool_call_stream(&[("c1", "s_unlock", "{}")]));
    env.server.push(openai::text_stream(&["Unlocked."]));
    pty.send("unlock\r");
    pty.expect("Unlocked.");
    pty.expect(prompt);
    // The list is read again in the background when the server says it changed.
    std::thread::sleep(std::time::Duration::from_millis(500));
    env.server.push(openai::text_stream(&["Goodbye!"]));
    pty.send(".mcp prompt s fa\t");
    pty.expect("farewell");
    pty.send("\r");
    pty.expect("Goodbye!");
    pty.expect(prompt);

    pty.send(".mcp prompt s nope\r");
    pty.expect("prompt `nope` of MCP server `s`");
    pty.expect(prompt);
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}

#[test]
fn a_resource_is_attached_with_dash_f_and_a_bad_one_is_one_clear_error() {
    let env = mcp_env(json!({ "s": stdio() }), "enabled_mcp_servers: s\n");
    env.server.push(openai::text_stream(&["Read it."]));
    env.loki()
        .args(["-f", "mcp:s:test://readme", "summarise"])
        .assert()
        .success();
    let sent = env.server.last_request().json()["messages"].to_string();
    assert!(sent.contains("llamas hum"), "{sent}");

    let out = env
        .loki()
        .args(["-f", "mcp:s:test://missing", "summarise"])
        .assert()
        .failure();
    let err = crate::common::stderr(&out);
    assert!(
        err.contains("cannot attach `mcp:s:test://missing`"),
        "{err}"
    );
    let out = env
        .loki()
        .args(["-f", "mcp:ghost:x://y", "summarise"])
        .assert()
        .failure();
    let err = crate::common::stderr(&out);
    assert!(err.contains("ghost"), "{err}");
}

#[test]
fn sampling_asks_the_conversation_s_model_once_approved() {
    let (_server, url) = remote_with("--http", "", &[("MCP_TEST_ASKS", "1")]);
    for entry in [stdio(), json!({"type": "http", "url": url})] {
        // Approved (--yolo): the model answers the server's messages.
        // Replies by content: the sampling request and the conversation's rounds.
        let env = mcp_env(
            json!({ "s": entry.clone() }),
            "enabled_mcp_servers: s\nmcp_tool_exposure: direct\n",
        );
        env.server.respond_for("/v1/chat", |req| {
            let body = req.json();
            let sent = body["messages"].to_string();
            if sent.contains("Summarise: llamas hum") {
                openai::text_stream_with_usage(&["Llamas hum when happy."], 7, 5)
            } else if sent.contains("\"tool\"") {
                openai::text_stream(&["Done."])
            } else {
                openai::tool_call_stream(&[("c1", "s_summarize", "{}")])
            }
        });
        env.loki().args(["--yolo", "summarise"]).assert().success();
        let sampled = env
            .server
            .requests()
            .into_iter()
            .find(|r| {
                r.json()["messages"]
                    .to_string()
                    .contains("Summarise: llamas hum")
            })
            .unwrap_or_else(|| {
                let last = env.server.last_request().json();
                panic!("no sampling request; last: {last}")
            });
        let body = sampled.json();
        assert_eq!(body["messages"][0]["role"], "system", "{body}");
        assert_eq!(
            body["messages"][0]["content"],
            "You summarise in five words."
        );
        assert!(body.get("tools").is_none() || body["tools"].as_array().is_some_and(Vec::is_empty));
        assert_eq!(
            tool_result(&env.server.last_request().json()),
            "summary by fake:gpt-4o-mini: Llamas hum when happy."
        );

        // Nobody approves (no terminal, no --yolo): the server is told no (over
        // 2026-07-28 the call itself fails with that reason).
        let env = calling(entry, "summarize");
        env.loki().arg("summarise").assert().success();
        let result = tool_result(&env.server.last_request().json());
        assert!(
            result.contains("User rejected sampling request"),
            "{result}"
        );
        assert_eq!(
            env.server.requests().len(),
            2,
            "no sampling request was sent"
        );
    }
}

/// A hand-written stdio MCP server whose tool list has one tool without `inputSchema`
/// (a hostile or sloppy server; the rmcp servers of the suite cannot send one).
const SLOPPY_SERVER: &str = r#"#!/bin/sh
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sloppy","version":"1"}}}\n' "$id";;
    *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"good","description":"Works","inputSchema":{"type":"object"}},{"name":"broken","description":"No schema"}]}}\n' "$id";;
    *'"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"good ran"}]}}\n' "$id";;
    *) if [ -n "$id" ]; then printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"; fi;;
  esac
done
"#;

#[test]
fn a_tool_without_an_input_schema_is_left_out_and_named_not_the_whole_server() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("sloppy.sh");
    std::fs::write(&script, SLOPPY_SERVER).unwrap();
    let env = mcp_env(
        json!({ "sloppy": {"command": "sh", "args": [script.display().to_string()]} }),
        "enabled_mcp_servers: sloppy\nmcp_tool_exposure: direct\n",
    );
    env.server
        .push(openai::tool_call_stream(&[("c1", "sloppy_good", "{}")]));
    env.server.push(openai::text_stream(&["Done."]));
    let out = env.loki().args(["--yolo", "use it"]).assert().success();
    let first = env.server.requests()[0].json();
    let tools = first["tools"].to_string();
    assert!(
        tools.contains("sloppy_good") && !tools.contains("sloppy_broken"),
        "{tools}"
    );
    assert_eq!(tool_result(&env.server.last_request().json()), "good ran");
    let err = crate::common::stderr(&out);
    assert!(err.contains("tool `broken` left out"), "{err}");
}

#[test]
fn sampling_is_charged_to_the_agent_s_budget_as_it_goes() {
    let asks_twenty = json!({"type": "stdio", "command": server_bin(), "env": {"MCP_TEST_ASKS": "1", "MCP_TEST_SAMPLE_TIMES": "20"}});
    let env = mcp_env(json!({ "s": asks_twenty }), "mcp_tool_exposure: direct\n");
    let agent = env.config_dir().join("agents/sampler");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(
        agent.join("config.yaml"),
        "instructions: You use the server.\nmcp_servers: [s]\nmax_tokens: 250\n",
    )
    .unwrap();
    env.server.respond_for("/v1/chat", |req| {
        let sent = req.json()["messages"].to_string();
        if sent.contains("llamas hum") {
            openai::text_stream_with_usage(&["They hum."], 60, 20)
        } else if sent.contains("\"tool\"") {
            openai::text_stream_with_usage(&["Done."], 5, 1)
        } else {
            openai::tool_call_stream(&[("c1", "s_summarize", "{}")])
        }
    });
    let out = env
        .loki()
        .args(["--yolo", "-a", "sampler", "--output-format", "json", "go"])
        .assert()
        .code(1);
    let sampled = env
        .server
        .requests()
        .iter()
        .filter(|r| r.json()["messages"].to_string().contains("llamas hum"))
        .count();
    // 80 tokens an answer against 250 (the first request took some too): the fourth
    // answer at the latest spends it, and the server is not answered again.
    assert!((2..=4).contains(&sampled), "{sampled} sampling requests");
    let stdout = crate::common::stdout(&out);
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("{stdout}"));
    assert!(
        result["error"]
            .as_str()
            .unwrap_or_default()
            .contains("budget spent"),
        "{result}"
    );
    // What was spent is reported, sampling included.
    assert!(
        result["usage"]["input_tokens"].as_u64().unwrap_or(0) >= 120,
        "{result}"
    );
}

#[test]
fn a_form_is_answered_over_stream_json_and_declined_when_input_ends() {
    use std::io::{BufRead, Write};
    let env = calling(stdio(), "ask_name");
    let mut child = env
        .loki_std()
        .args([
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"type":"user","message":{{"role":"user","content":"who am I"}}}}"#
    )
    .unwrap();
    let answers = ["yes", "Ann", "no"];
    let mut asked = Vec::new();
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["type"] == "question_asked" {
            let answer = answers[asked.len()];
            asked.push(event["prompt"].as_str().unwrap().to_string());
            writeln!(
                stdin,
                r#"{{"type":"answer","question_id":{},"answer":"{answer}"}}"#,
                event["question_id"]
            )
            .unwrap();
        }
        if event["type"] == "turn_finished" {
            break;
        }
    }
    drop(stdin);
    let _ = child.wait();
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert!(asked[0].contains("What should I call you?"), "{asked:?}");
    assert_eq!(
        tool_result(&env.server.last_request().json()),
        "hello Ann (tea: false)"
    );

    // Nobody answers: the input ends, the form is declined.
    let env = calling(stdio(), "ask_name");
    env.loki()
        .args([
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .write_stdin(
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"who am I\"}}\n",
        )
        .assert()
        .success();
    assert_eq!(
        tool_result(&env.server.last_request().json()),
        "no name: Decline"
    );
}
