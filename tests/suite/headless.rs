//! Headless output and input: `--output-format stream-json|json` and
//! `--input-format stream-json`, and the event contract they expose (`docs/events.md`):
//! exactly one `turn_started` first and one `turn_finished` / `turn_aborted` last per run,
//! every event tagged with its conversation, tool calls keyed by `call_id`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use super::mcp::{mcp_env, server_bin};
use crate::common::TestEnv;
use crate::common::fake_llm::{Reply, openai};

/// Every stdout line as JSON (failing on anything that is not).
fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}")))
        .collect()
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

/// Checks the contract for a stream of one or more runs; returns the runs.
fn runs(events: &[Value]) -> Vec<Vec<Value>> {
    let mut runs: Vec<Vec<Value>> = Vec::new();
    let mut open = false;
    for event in events {
        let kind = event["type"].as_str().unwrap();
        assert!(
            event["conversation"]
                .as_str()
                .is_some_and(|c| !c.is_empty()),
            "no conversation: {event}"
        );
        match kind {
            "turn_started" => {
                assert!(!open, "turn_started inside a run: {events:#?}");
                open = true;
                runs.push(vec![event.clone()]);
            }
            _ => {
                assert!(open, "{kind} outside a run: {events:#?}");
                runs.last_mut().unwrap().push(event.clone());
                if kind == "turn_finished" || kind == "turn_aborted" {
                    open = false;
                }
            }
        }
    }
    assert!(!open, "a run was not closed: {events:#?}");
    for run in &runs {
        let conversation = &run[0]["conversation"];
        assert!(run.iter().all(|e| &e["conversation"] == conversation));
    }
    runs
}

fn stream_json(env: &TestEnv) -> assert_cmd::Command {
    let mut cmd = env.loki();
    cmd.args(["--output-format", "stream-json"]);
    cmd
}

fn answer(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["type"] == "assistant_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect()
}

#[test]
fn a_plain_answer_streams_documented_events_and_nothing_else() {
    let env = TestEnv::new();
    env.server
        .push(openai::text_stream_with_usage(&["Hello", " world"], 12, 2));
    let out = stream_json(&env).arg("hi").assert().success();
    let all = events(&out.get_output().stdout);
    let runs = runs(&all);
    assert_eq!(runs.len(), 1);
    let kinds = types(&all);
    assert_eq!(kinds.first(), Some(&"turn_started"));
    assert_eq!(kinds.last(), Some(&"turn_finished"));
    assert_eq!(all[0]["model"], "fake:gpt-4o-mini");
    assert_eq!(all[0]["stream"], true);
    assert_eq!(kinds[1], "model_call_started");
    assert_eq!(all[1]["round"], 1);
    assert_eq!(answer(&all), "Hello world");
    let finished = all.last().unwrap();
    assert_eq!(finished["usage"]["input_tokens"], 12);
    assert_eq!(finished["usage"]["output_tokens"], 2);
    assert_eq!(finished["finish_reason"], "stop");
    assert!(out.get_output().stderr.is_empty());
}

#[test]
fn a_tool_round_reports_calls_by_id_with_results() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: fs_cat\n{cfg}"));
    env.write("notes.txt", "the secret word is plum\n");
    env.server.push(openai::tool_call_stream(&[(
        "call_7",
        "fs_cat",
        r#"{"path":"notes.txt"}"#,
    )]));
    env.server.push(openai::text_stream(&["It is plum."]));
    let out = stream_json(&env).arg("what word?").assert().success();
    let all = events(&out.get_output().stdout);
    assert_eq!(runs(&all).len(), 1);
    let started = all
        .iter()
        .find(|e| e["type"] == "tool_call_started")
        .unwrap();
    assert_eq!(started["call_id"], "call_7");
    assert_eq!(started["name"], "fs_cat");
    assert_eq!(started["arguments"], r#"{"path":"notes.txt"}"#);
    let finished = all
        .iter()
        .find(|e| e["type"] == "tool_call_finished")
        .unwrap();
    assert_eq!(finished["call_id"], "call_7");
    assert_eq!(finished["ok"], true);
    assert!(finished.get("error").is_none(), "{finished}");
    assert!(finished["result"].as_str().unwrap().contains("plum"));
    let rounds: Vec<&Value> = all
        .iter()
        .filter(|e| e["type"] == "model_call_started")
        .map(|e| &e["round"])
        .collect();
    assert_eq!(rounds, [&json!(1), &json!(2)]);
    assert_eq!(answer(&all), "It is plum.");
}

#[test]
fn a_refused_call_is_an_event_and_nothing_prompts() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command\n{cfg}"));
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "execute_command",
        r#"{"command":"touch made-it"}"#,
    )]));
    env.server.push(openai::text_stream(&["Could not."]));
    let out = stream_json(&env)
        .arg("make a file")
        .timeout(Duration::from_secs(30))
        .assert()
        .success();
    let all = events(&out.get_output().stdout);
    runs(&all);
    let finished = all
        .iter()
        .find(|e| e["type"] == "tool_call_finished")
        .unwrap();
    assert_eq!(finished["call_id"], "c1");
    assert_eq!(finished["ok"], false);
    assert_eq!(finished["error"]["kind"], "refused", "{finished}");
    assert!(
        finished["error"]["message"]
            .as_str()
            .unwrap()
            .contains("needs approval"),
        "{finished}"
    );
    assert!(!env.work_dir().join("made-it").exists());
}

#[test]
fn yolo_lets_a_headless_run_call_tools_that_need_approval() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command\n{cfg}"));
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "execute_command",
        r#"{"command":"touch made-it"}"#,
    )]));
    env.server.push(openai::text_stream(&["Done."]));
    let out = stream_json(&env)
        .args(["--yolo", "make a file"])
        .assert()
        .success();
    let all = events(&out.get_output().stdout);
    let finished = all
        .iter()
        .find(|e| e["type"] == "tool_call_finished")
        .unwrap();
    assert_eq!(finished["ok"], true, "{finished}");
    assert!(env.work_dir().join("made-it").exists());
}

#[test]
fn mcp_progress_reaches_the_call_that_caused_it() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "enabled_mcp_servers: test\n",
    );
    env.server
        .push(openai::tool_call_stream(&[("slow_1", "test_slow", "{}")]));
    env.server.push(openai::text_stream(&["Finished."]));
    let out = stream_json(&env).arg("be slow").assert().success();
    let all = events(&out.get_output().stdout);
    runs(&all);
    let progress: Vec<&Value> = all
        .iter()
        .filter(|e| e["type"] == "tool_call_progress")
        .collect();
    assert!(!progress.is_empty(), "{all:#?}");
    assert!(progress.iter().all(|p| p["call_id"] == "slow_1"));
    assert!(
        progress
            .iter()
            .any(|p| p["message"] == "MCP `test`: 1/3 working"),
        "{progress:?}"
    );
    let finished = all
        .iter()
        .find(|e| e["type"] == "tool_call_finished")
        .unwrap();
    assert_eq!(finished["result"], "slow done");
}

#[test]
fn a_provider_error_ends_the_run_with_turn_aborted_and_exit_1() {
    let env = TestEnv::new();
    env.server.push(openai::error(
        401,
        "Incorrect API key provided",
        "invalid_request_error",
    ));
    let out = stream_json(&env).arg("hi").assert().code(1);
    let all = events(&out.get_output().stdout);
    let runs = runs(&all);
    assert_eq!(runs.len(), 1);
    let aborted = all.last().unwrap();
    assert_eq!(aborted["type"], "turn_aborted");
    assert_eq!(aborted["reason"], "error");
    assert!(
        aborted["error"]
            .as_str()
            .unwrap()
            .contains("Incorrect API key"),
        "{aborted}"
    );
    // Humans still get the one-line error on stderr.
    let err = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(err.contains("error:"), "{err}");
}

#[test]
fn runs_that_fail_before_the_model_is_called_still_start_and_end() {
    let env = TestEnv::new();
    // A missing file.
    let out = stream_json(&env)
        .args(["-f", "missing.txt", "summarise"])
        .assert()
        .code(1);
    let all = events(&out.get_output().stdout);
    assert_eq!(types(&all), ["turn_started", "turn_aborted"], "{all:#?}");
    assert!(
        all[1]["error"].as_str().unwrap().contains("missing.txt"),
        "{all:#?}"
    );
    // An unknown model.
    let out = stream_json(&env)
        .args(["-m", "nowhere:model", "hi"])
        .assert()
        .code(1);
    let all = events(&out.get_output().stdout);
    assert_eq!(types(&all), ["turn_started", "turn_aborted"], "{all:#?}");
    // An unknown role.
    let out = stream_json(&env)
        .args(["-r", "no-such-role", "hi"])
        .assert()
        .code(1);
    let all = events(&out.get_output().stdout);
    assert_eq!(types(&all), ["turn_started", "turn_aborted"], "{all:#?}");
    assert_eq!(env.server.request_count(), 0);
    // No configuration at all.
    let bare = TestEnv::bare();
    let out = stream_json(&bare).arg("hi").assert().code(1);
    let all = events(&out.get_output().stdout);
    assert_eq!(types(&all), ["turn_started", "turn_aborted"], "{all:#?}");
    assert!(
        all[1]["error"]
            .as_str()
            .unwrap()
            .contains("no configuration"),
        "{all:#?}"
    );
}

/// Reads the child's stdout lines until one contains `text`; returns them.
fn read_lines_until(child: &mut Child, text: &str) -> Vec<String> {
    let stdout = child.stdout.as_mut().unwrap();
    let mut reader = BufReader::new(stdout);
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).unwrap();
        assert!(n > 0, "stdout ended before {text:?}: {lines:?}");
        let found = line.contains(text);
        lines.push(line.trim_end().to_string());
        if found {
            return lines;
        }
    }
}

#[test]
fn ctrl_c_aborts_with_the_partial_answer_and_exit_130() {
    let env = TestEnv::new();
    let parts: Vec<String> = (0..60).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    env.server
        .push(openai::text_stream(&refs).frame_delay(Duration::from_millis(100)));
    let mut child = env
        .loki_std()
        .args(["--output-format", "stream-json", "talk slowly"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = read_lines_until(&mut child, "w2 ");
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    lines.extend(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_string),
    );
    let all: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    runs(&all);
    let aborted = all.last().unwrap();
    assert_eq!(aborted["type"], "turn_aborted");
    assert_eq!(aborted["reason"], "cancelled");
    assert!(
        aborted["partial"].as_str().unwrap().starts_with("w0 w1 w2"),
        "{aborted}"
    );
    assert!(!aborted["partial"].as_str().unwrap().contains("w59"));
}

#[test]
fn json_output_is_one_object_with_answer_tools_usage_and_session() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "enabled_tools: fs_cat\n{}",
        cfg.replace(
            "        supports_vision: true",
            "        supports_vision: true\n        input_price: 1\n        output_price: 2"
        )
    ));
    env.write("notes.txt", "plum\n");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_cat",
        r#"{"path":"notes.txt"}"#,
    )]));
    env.server
        .push(openai::text_stream_with_usage(&["It is plum."], 1000, 500));
    let out = env
        .loki()
        .args(["--output-format", "json", "-s", "work", "what word?"])
        .assert()
        .success();
    let all = events(&out.get_output().stdout);
    assert_eq!(all.len(), 1, "{all:#?}");
    let result = &all[0];
    assert_eq!(result["type"], "result");
    assert_eq!(result["ok"], true);
    assert_eq!(result["answer"], "It is plum.");
    assert_eq!(result["model"], "fake:gpt-4o-mini");
    assert!(result["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(result["finish_reason"], "stop");
    assert_eq!(result["error"], Value::Null);
    // Usage is summed over both model calls of the run.
    assert!(
        result["usage"]["input_tokens"].as_u64().unwrap() >= 1000,
        "{result}"
    );
    assert!(result["cost_usd"].as_f64().unwrap() > 0.0, "{result}");
    let calls = result["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["call_id"], "c1");
    assert_eq!(calls[0]["ok"], true);
    assert!(calls[0]["result"].as_str().unwrap().contains("plum"));
    // The session was saved.
    assert!(env.session_file("work").exists());
}

#[test]
fn json_output_reports_a_failure_in_the_object() {
    let env = TestEnv::new();
    env.server
        .push(openai::error(500, "upstream exploded", "server_error").status(400));
    let out = env
        .loki()
        .args(["--output-format", "json", "hi"])
        .assert()
        .code(1);
    let all = events(&out.get_output().stdout);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["ok"], false);
    assert_eq!(all[0]["finish_reason"], "error");
    assert!(
        all[0]["error"]
            .as_str()
            .unwrap()
            .contains("upstream exploded"),
        "{}",
        all[0]
    );
}

#[test]
fn a_stream_without_usage_is_asked_for_it_and_else_counted_as_an_estimate() {
    let env = TestEnv::new();
    // A local OpenAI-compatible server (the test client is on loopback) that sends no
    // usage: loki asked for it, then counts it itself.
    env.server.push(crate::common::fake_llm::Reply::sse(vec![
        openai::role_frame(),
        openai::text_frame("the answer is forty-two"),
        openai::data_frame(&openai::chunk_json("{}", Some("stop"))),
        openai::done_frame(),
    ]));
    let out = env
        .loki()
        .args(["--output-format", "json", "what is the answer?"])
        .assert()
        .success();
    let sent = env.server.last_request().json();
    assert_eq!(sent["stream_options"]["include_usage"], true, "{sent}");
    let all = events(&out.get_output().stdout);
    let usage = &all[0]["usage"];
    assert_eq!(usage["estimated"], true, "{}", all[0]);
    assert!(usage["output_tokens"].as_u64().unwrap() >= 4, "{usage}");
    assert!(usage["input_tokens"].as_u64().unwrap() >= 5, "{usage}");
    // A server that reports usage is taken at its word, not marked.
    env.server
        .push(openai::text_stream_with_usage(&["hi"], 7, 1));
    let out = env
        .loki()
        .args(["--output-format", "json", "hello"])
        .assert()
        .success();
    let all = events(&out.get_output().stdout);
    assert_eq!(all[0]["usage"]["input_tokens"], 7, "{}", all[0]);
    assert_eq!(all[0]["usage"].get("estimated"), None, "{}", all[0]);
    // A plain one-shot is kept in the history: its result names that session, and
    // `--resume` takes it up.
    let id = all[0]["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no session_id in {}", all[0]))
        .to_string();
    env.server.push(openai::text_stream(&["again"]));
    env.loki()
        .args(["--resume", &id, "more"])
        .assert()
        .success();
    let sent = env.server.last_request().json();
    assert_eq!(sent["messages"][0]["content"], "hello", "{sent}");
}

/// Replies by the last user message of the request, so the order of turns is checked by
/// content rather than arrival.
fn reply_by_question(env: &TestEnv) {
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .map(|m| m["content"].to_string())
            .unwrap_or_default();
        let reply = if last.contains("first") {
            "one"
        } else if last.contains("second") {
            "two"
        } else if last.contains("third") {
            "three"
        } else if last.contains("picture") {
            "a picture"
        } else {
            "?"
        };
        openai::text_stream(&[reply])
    });
}

#[test]
fn stream_json_input_holds_three_turns_in_one_conversation() {
    let env = TestEnv::new();
    reply_by_question(&env);
    let input = [
        r#"{"type":"user","message":{"role":"user","content":"first question"}}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second question"}]}}"#,
        r#"{"type":"user","message":{"role":"user","content":"third question"}}"#,
    ]
    .join("\n");
    let out = env
        .loki()
        .args([
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .write_stdin(input)
        .assert()
        .success();
    let all = events(&out.get_output().stdout);
    let runs = runs(&all);
    assert_eq!(runs.len(), 3, "{all:#?}");
    let answers: Vec<String> = runs.iter().map(|r| answer(r)).collect();
    assert_eq!(answers, ["one", "two", "three"]);
    let conversation = &runs[0][0]["conversation"];
    assert!(runs.iter().all(|r| &r[0]["conversation"] == conversation));
    // The third request carries the whole conversation.
    let requests = env.server.requests();
    assert_eq!(requests.len(), 3);
    let messages = requests[2].json()["messages"].to_string();
    for part in [
        "first question",
        "one",
        "second question",
        "two",
        "third question",
    ] {
        assert!(messages.contains(part), "{part}: {messages}");
    }
}

#[test]
fn stream_json_input_takes_image_parts_and_reports_bad_lines() {
    let env = TestEnv::new();
    reply_by_question(&env);
    let mut child = env
        .loki_std()
        .args(["--input-format", "stream-json", "--output-format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "not json at all").unwrap();
    writeln!(
        stdin,
        r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"text","text":"what is in this picture?"}},{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}}}]}}}}"#
    )
    .unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    // A bad line is reported and the run goes on; the exit status says something failed.
    assert_eq!(output.status.code(), Some(1));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("input line 1: not JSON"), "{err}");
    let all = events(&output.stdout);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["answer"], "a picture");
    let sent = env.server.last_request().json();
    let content = &sent["messages"].as_array().unwrap().last().unwrap()["content"];
    assert_eq!(content[1]["type"], "image_url", "{content}");
    assert_eq!(
        content[1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgo="
    );
}

#[test]
fn text_output_is_unchanged_by_the_event_contract() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["plain"]));
    let out = env.loki().arg("hi").assert().success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), "plain\n");
    let _ = Reply::json(200, json!({}));
}

#[test]
fn known_secrets_never_reach_the_json_stream() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    // A key long enough to be redacted, which a tool then reads from a file.
    let key = "sk-test-0123456789abcdef";
    env.write_config(&format!(
        "enabled_tools: fs_cat\n{}",
        cfg.replace("api_key: test-key", &format!("api_key: {key}"))
    ));
    env.write("leak.txt", format!("the key is {key}\n"));
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_cat",
        r#"{"path":"leak.txt"}"#,
    )]));
    env.server.push(openai::text_stream(&["Done."]));
    let out = stream_json(&env).arg("read it").assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(!stdout.contains(key), "{stdout}");
    assert!(stdout.contains("«secret:"), "{stdout}");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_cat",
        r#"{"path":"leak.txt"}"#,
    )]));
    env.server.push(openai::text_stream(&["Done."]));
    let out = env
        .loki()
        .args(["--output-format", "json", "read it"])
        .assert();
    let json_out = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        json_out.contains("fs_cat") && json_out.contains("«secret:"),
        "{json_out}"
    );
    assert!(!json_out.contains(key), "{json_out}");
}

#[test]
fn ctrl_c_during_a_tool_call_still_finishes_the_call_then_the_run() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "enabled_mcp_servers: test\n",
    );
    env.server
        .push(openai::tool_call_stream(&[("slow_1", "test_slow", "{}")]));
    let mut child = env
        .loki_std()
        .args(["--output-format", "stream-json", "be slow"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = read_lines_until(&mut child, "tool_call_progress");
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    lines.extend(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_string),
    );
    let all: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    runs(&all);
    let finished = all
        .iter()
        .find(|e| e["type"] == "tool_call_finished")
        .unwrap_or_else(|| panic!("no tool_call_finished: {all:#?}"));
    assert_eq!(finished["call_id"], "slow_1");
    assert_eq!(finished["error"]["kind"], "cancelled");
    assert_eq!(all.last().unwrap()["reason"], "cancelled");
}

/// Reads events from `reader` until one of type `kind`; returns the events read.
pub(super) fn read_events_until(reader: &mut impl BufRead, kind: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).unwrap();
        assert!(n > 0, "stdout ended before {kind}: {seen:#?}");
        let event: Value = serde_json::from_str(line.trim_end()).unwrap();
        let found = event["type"] == kind;
        seen.push(event);
        if found {
            return seen;
        }
    }
}

#[test]
fn calls_are_approved_and_denied_one_by_one_over_stream_json() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command\n{cfg}"));
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        let after_tool = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .is_some_and(|m| m["role"] == "tool");
        if after_tool {
            openai::text_stream(&["One made, one not."])
        } else {
            openai::tool_call_stream(&[
                ("c1", "execute_command", r#"{"command":"touch yes-file"}"#),
                ("c2", "execute_command", r#"{"command":"touch no-file"}"#),
            ])
        }
    });
    let mut child = env
        .loki_std()
        .args([
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(
        stdin,
        r#"{{"type":"user","message":{{"role":"user","content":"make two files"}}}}"#
    )
    .unwrap();
    // The first call waits for its answer; nothing has run yet.
    let first = read_events_until(&mut stdout, "tool_call_approval_requested");
    let asked = first.last().unwrap();
    assert_eq!(asked["call_id"], "c1", "{asked}");
    assert_eq!(asked["name"], "execute_command");
    assert!(
        asked["text"].as_str().unwrap().contains("touch yes-file"),
        "{asked}"
    );
    assert!(asked["run"].as_str().is_some_and(|r| r.starts_with('r')));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!env.work_dir().join("yes-file").exists());
    writeln!(
        stdin,
        r#"{{"type":"approval","call_id":"c1","decision":"allow"}}"#
    )
    .unwrap();
    // Then the second.
    let second = read_events_until(&mut stdout, "tool_call_approval_requested");
    let decided = second
        .iter()
        .find(|e| e["type"] == "tool_call_approval_decided")
        .unwrap();
    assert_eq!(decided["call_id"], "c1");
    assert_eq!(decided["decision"], "allow");
    assert_eq!(second.last().unwrap()["call_id"], "c2");
    writeln!(
        stdin,
        r#"{{"type":"approval","call_id":"c2","decision":"deny","message":"one is enough"}}"#
    )
    .unwrap();
    let rest = read_events_until(&mut stdout, "turn_finished");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let finished: Vec<&Value> = rest
        .iter()
        .filter(|e| e["type"] == "tool_call_finished")
        .collect();
    assert_eq!(finished.len(), 2, "{rest:#?}");
    assert_eq!(finished[0]["call_id"], "c1");
    assert_eq!(finished[0]["ok"], true, "{}", finished[0]);
    assert_eq!(finished[1]["call_id"], "c2");
    assert_eq!(finished[1]["error"]["kind"], "declined", "{}", finished[1]);
    assert!(env.work_dir().join("yes-file").exists());
    assert!(!env.work_dir().join("no-file").exists());
    // The model was told why.
    let last = env.server.last_request().json().to_string();
    assert!(last.contains("one is enough"), "{last}");
}

#[test]
fn a_call_waiting_for_approval_is_refused_when_stdin_ends() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command\n{cfg}"));
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "execute_command",
        r#"{"command":"touch made-it"}"#,
    )]));
    env.server.push(openai::text_stream(&["Could not."]));
    let out = env
        .loki()
        .args([
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .write_stdin(r#"{"type":"user","message":{"role":"user","content":"make a file"}}"#)
        .timeout(Duration::from_secs(30))
        .assert()
        .success();
    let all = events(&out.get_output().stdout);
    runs(&all);
    let decided = all
        .iter()
        .find(|e| e["type"] == "tool_call_approval_decided")
        .unwrap();
    assert_eq!(decided["decision"], "refused", "{decided}");
    let finished = all
        .iter()
        .find(|e| e["type"] == "tool_call_finished")
        .unwrap();
    assert_eq!(finished["error"]["kind"], "refused", "{finished}");
    assert!(!env.work_dir().join("made-it").exists());
}

/// A program drives one conversation the way real clients do: stdin stays open, each
/// line is written only after the answer to the previous one arrived, an approval comes
/// in between, and the session holds all three turns when stdin ends.
#[test]
fn a_client_keeps_stdin_open_and_waits_for_each_answer_before_the_next_line() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command\n{cfg}"));
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let after_tool = messages.last().is_some_and(|m| m["role"] == "tool");
        let last_user = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        if after_tool {
            openai::text_stream(&["made it"])
        } else if last_user.contains("make a file") {
            openai::tool_call_stream(&[("m1", "execute_command", r#"{"command":"touch made"}"#)])
        } else if last_user.contains("what came first") {
            // The whole conversation so far is sent: turn one's question is in it.
            let first = messages
                .iter()
                .find(|m| m["role"] == "user")
                .and_then(|m| m["content"].as_str())
                .unwrap_or_default()
                .to_string();
            openai::text_stream(&[&format!("first: {first}")])
        } else {
            openai::text_stream(&["hello back"])
        }
    });
    let mut child = env
        .loki_std()
        .args([
            "-s",
            "kept",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let say = |stdin: &mut std::process::ChildStdin, text: &str| {
        writeln!(
            stdin,
            r#"{{"type":"user","message":{{"role":"user","content":"{text}"}}}}"#
        )
        .unwrap();
        stdin.flush().unwrap();
    };
    say(&mut stdin, "hello there");
    let one = read_events_until(&mut stdout, "turn_finished");
    assert_eq!(answer(&one), "hello back", "{one:#?}");

    say(&mut stdin, "make a file");
    let asked = read_events_until(&mut stdout, "tool_call_approval_requested");
    assert_eq!(asked.last().unwrap()["call_id"], "m1");
    assert!(
        !env.work_dir().join("made").exists(),
        "not before the answer"
    );
    writeln!(
        stdin,
        r#"{{"type":"approval","call_id":"m1","decision":"allow"}}"#
    )
    .unwrap();
    stdin.flush().unwrap();
    let two = read_events_until(&mut stdout, "turn_finished");
    assert_eq!(answer(&two), "made it", "{two:#?}");
    assert!(env.work_dir().join("made").exists());

    say(&mut stdin, "what came first?");
    let three = read_events_until(&mut stdout, "turn_finished");
    assert_eq!(answer(&three), "first: hello there", "{three:#?}");

    // Each turn had one start and one end, in one conversation.
    let conversations: std::collections::BTreeSet<String> = one
        .iter()
        .chain(&two)
        .chain(&three)
        .filter_map(|e| e["conversation"].as_str().map(str::to_string))
        .collect();
    assert_eq!(conversations.len(), 1, "{conversations:?}");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let saved = std::fs::read_to_string(env.session_file("kept")).unwrap();
    for text in [
        "hello there",
        "make a file",
        "what came first?",
        "first: hello there",
    ] {
        assert!(saved.contains(text), "{text} missing from {saved}");
    }
}
