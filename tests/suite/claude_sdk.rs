//! loki behind the Claude Agent SDK: the SDK's own Python package starts loki as its CLI
//! (`cli_path`) and drives it with `query()` and `ClaudeSDKClient`
//! (`tests/data/claude_sdk_client.py`): Claude's message shapes, `can_use_tool` for the
//! calls that need approval (tools by Claude's names), hooks, partial messages, an
//! interrupt, several turns on one connection, and `resume` of the session.

use std::process::Command;

use serde_json::Value;

use crate::common::fake_llm::{Recorded, Reply, openai};
use crate::common::{LOKI, TestEnv};

/// The SDK is a test dependency: `.ci/run` installs it; a machine without it fails here
/// with the command that installs it.
fn sdk_present() {
    let found = Command::new("python3")
        .args(["-c", "import claude_agent_sdk"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "the Claude Agent SDK is missing: pip install claude-agent-sdk (.ci/run does)"
    );
}

fn route(request: &Recorded) -> Reply {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let users: Vec<String> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    let last = users.last().cloned().unwrap_or_default();
    if let Some(result) = messages
        .last()
        .filter(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
    {
        if last.contains("calculator") || last.contains("other server") {
            return openai::text_stream(&[&format!("tool said: {result}")]);
        }
        return openai::text_stream(&["tool done"]);
    }
    if last.contains("use the calculator") {
        return openai::tool_call_stream(&[("call_c", "calc_add", r#"{"a":1,"b":2}"#)]);
    }
    if last.contains("ask the other server") {
        return openai::tool_call_stream(&[(
            "call_e",
            "ext_env_value",
            r#"{"name":"SECRET_TOKEN"}"#,
        )]);
    }
    if last.contains("make a file") {
        openai::tool_call_stream(&[("call_b", "execute_command", r#"{"command":"touch made"}"#)])
    } else if last.contains("write the notes") {
        openai::tool_call_stream(&[(
            "call_w",
            "fs_write",
            r#"{"path":"notes.md","contents":"new notes\n"}"#,
        )])
    } else if last.contains("a slow one") {
        openai::text_stream(&["slow start", " and more"]).hang_after(2)
    } else if last.contains("what came first") {
        let first = users.first().cloned().unwrap_or_default();
        openai::text_stream(&[&format!("first: {first}")])
    } else {
        openai::text_stream(&["hello back"])
    }
}

fn program(env: &TestEnv, args: &[&str]) -> Value {
    let loki_env: serde_json::Map<String, Value> = env
        .env_pairs()
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/claude_sdk_client.py"
    );
    // Bounded: a stall fails the test instead of hanging the suite.
    let output = Command::new("timeout")
        .args(["120", "python3", script])
        .arg(LOKI)
        .arg(env.work_dir())
        .args(args)
        .env("LOKI_TEST_ENV", Value::Object(loki_env).to_string())
        .env("CLAUDE_CODE_STREAM_CLOSE_TIMEOUT", "20000")
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the SDK program failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no report ({e}): {stdout}"))
}

fn of_kind<'a>(messages: &'a Value, kind: &str) -> Vec<&'a Value> {
    messages
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["kind"] == kind)
        .collect()
}

fn result(messages: &Value) -> &Value {
    of_kind(messages, "result")
        .pop()
        .unwrap_or_else(|| panic!("no result: {messages:#}"))
}

fn texts(messages: &Value) -> String {
    of_kind(messages, "assistant")
        .iter()
        .flat_map(|m| m["blocks"].as_array().cloned().unwrap_or_default())
        .filter_map(|b| b["text"].as_str().map(str::to_string))
        .collect()
}

fn setup() -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command,fs_write\n{cfg}"));
    std::fs::write(env.work_dir().join("notes.md"), "old notes\n").unwrap();
    env.server.respond_for("/v1/chat", route);
    env
}

#[test]
fn query_gets_claude_s_messages_from_any_model() {
    sdk_present();
    let env = setup();
    let report = program(&env, &["query"]);
    let messages = &report["messages"];
    let init = of_kind(messages, "system");
    assert_eq!(init[0]["subtype"], "init", "{messages:#}");
    assert!(
        init[0]["data"]["session_id"]
            .as_str()
            .is_some_and(|s| s.starts_with("sdk-"))
    );
    assert_eq!(texts(messages), "hello back");
    let done = result(messages);
    assert_eq!(done["subtype"], "success", "{done}");
    assert_eq!(done["is_error"], false);
    assert_eq!(done["result"], "hello back");
    assert_eq!(done["num_turns"], 1);
    // What loki sent: the prompt, with no system prompt of Claude's.
    let sent = env.server.last_request().json();
    assert!(sent.to_string().contains("hello there"), "{sent}");
}

#[test]
fn a_client_approves_through_can_use_tool_runs_hooks_interrupts_and_resumes() {
    sdk_present();
    let env = setup();
    let report = program(&env, &["client"]);

    // A command: the model's call is shown as Claude's `Bash`, the program is asked,
    // allows it, the result comes back as a user message, then the answer.
    let command = &report["command"];
    let uses: Vec<&Value> = of_kind(command, "assistant")
        .iter()
        .flat_map(|m| m["blocks"].as_array().into_iter().flatten())
        .filter(|b| b["tool_use"].is_string())
        .collect();
    assert_eq!(uses.len(), 1, "{command:#}");
    assert_eq!(uses[0]["tool_use"], "Bash");
    assert_eq!(uses[0]["input"]["command"], "touch made");
    let results = of_kind(command, "user");
    assert_eq!(results[0]["results"][0]["id"], "call_b", "{command:#}");
    assert_eq!(results[0]["results"][0]["is_error"], false);
    assert!(env.work_dir().join("made").exists());
    assert_eq!(result(command)["subtype"], "success");
    assert!(texts(command).contains("tool done"));
    // Partial messages stream while the answer comes.
    assert!(!of_kind(command, "stream").is_empty(), "{command:#}");

    // A write the program denies is not written; the model is told.
    let write = &report["write"];
    assert_eq!(result(write)["subtype"], "success", "{write:#}");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("notes.md")).unwrap(),
        "old notes\n"
    );
    let told = env
        .server
        .requests()
        .iter()
        .any(|r| r.json().to_string().contains("not that file"));
    assert!(told, "the model was told why");

    let asked = report["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "{asked:#?}");
    assert_eq!(asked[0]["tool"], "Bash");
    assert_eq!(asked[0]["input"]["command"], "touch made");
    assert_eq!(asked[1]["tool"], "Write");

    // Hooks: every prompt through UserPromptSubmit, the Bash call through PreToolUse
    // (the Write call is not `Bash`), and Stop after each turn that ran.
    let hooked = report["hooked"].as_array().unwrap();
    let events: Vec<&str> = hooked.iter().filter_map(|h| h["event"].as_str()).collect();
    assert_eq!(
        events.iter().filter(|e| **e == "PreToolUse").count(),
        1,
        "{hooked:#?}"
    );
    assert!(hooked.iter().any(|h| h["prompt"] == "make a file"));
    assert!(events.contains(&"Stop"));
    // A prompt a hook blocks does not reach the model.
    let blocked = result(&report["blocked"]);
    assert_eq!(blocked["is_error"], true, "{blocked}");
    assert!(
        blocked["result"]
            .as_str()
            .unwrap()
            .contains("no forbidden prompts")
    );
    assert!(
        !env.server
            .requests()
            .iter()
            .any(|r| r.json().to_string().contains("forbidden thing"))
    );

    // interrupt() stops the slow answer; the connection goes on.
    let slow = result(&report["slow"]);
    assert_eq!(slow["subtype"], "error_during_execution", "{slow}");
    let again = &report["again"];
    assert_eq!(texts(again), "first: make a file", "{again:#}");

    // The session is a loki session: `resume` goes on with it in a new process.
    let session = result(again)["session_id"].as_str().unwrap().to_string();
    let resumed = program(&env, &["resume", &session]);
    assert_eq!(texts(&resumed["messages"]), "first: make a file");
    assert_eq!(result(&resumed["messages"])["session_id"], session.as_str());
}

/// Started as the SDK starts it, loki answers what it cannot do with an error
/// `control_response` and goes on: a control request it does not know, a line that is
/// not JSON (skipped), then a prompt that runs; stdin ending ends it with status 0. A
/// `loki` run that merely inherited the SDK's variables (an agent typing `loki "hi"`) is
/// not taken for the SDK.
#[test]
fn unknown_control_requests_are_errors_and_the_run_goes_on() {
    use std::io::{BufRead, BufReader, Write};
    let env = setup();
    let mut child = env
        .loki_std()
        .args([
            "--output-format",
            "stream-json",
            "--verbose",
            "--system-prompt",
            "",
            "--input-format",
            "stream-json",
        ])
        .env("CLAUDE_AGENT_SDK_VERSION", "0.2.189")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut next = || -> Value {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    };
    writeln!(stdin, r#"{{"type":"control_request","request_id":"r1","request":{{"subtype":"rewind_files","user_message_id":"u"}}}}"#).unwrap();
    let answer = next();
    assert_eq!(answer["type"], "control_response", "{answer}");
    assert_eq!(answer["response"]["subtype"], "error");
    assert_eq!(answer["response"]["request_id"], "r1");
    writeln!(stdin, "not json at all").unwrap();
    writeln!(stdin, r#"{{"type":"user","message":{{"role":"user","content":"hello there"}},"parent_tool_use_id":null,"session_id":""}}"#).unwrap();
    drop(stdin);
    let mut seen = Vec::new();
    loop {
        let message = next();
        let done = message["type"] == "result";
        seen.push(message);
        if done {
            break;
        }
    }
    assert_eq!(seen.last().unwrap()["result"], "hello back", "{seen:#?}");
    assert!(child.wait().unwrap().success());

    // The variables alone do not make a run the SDK's.
    let plain = env
        .loki()
        .env("CLAUDE_AGENT_SDK_VERSION", "0.2.189")
        .arg("hello there")
        .output()
        .unwrap();
    assert!(plain.status.success(), "{plain:?}");
    assert_eq!(String::from_utf8_lossy(&plain.stdout).trim(), "hello back");
}

/// `--mcp-config` as the SDK passes it: a server living in the program (reached with
/// `mcp_message`) and one loki starts; `PreToolUse` hooks see every call (not only the
/// ones that need approval) and may change its input, `PostToolUse` hooks add to the
/// result, and `can_use_tool` may change what runs. Tools are named as Claude names
/// them (`mcp__calc__add`).
#[test]
fn sdk_mcp_servers_hooks_around_every_call_and_edited_input() {
    sdk_present();
    let env = setup();
    let server = super::mcp::server_bin();
    let report = program(&env, &["servers", &server]);

    // The program's own server ran the call with the input the hook gave.
    let calc = &report["calc"];
    assert!(texts(calc).contains("tool said: sum=42"), "{calc:#}");
    assert!(texts(calc).contains("checked by the program"), "{calc:#}");
    let uses: Vec<&Value> = of_kind(calc, "assistant")
        .into_iter()
        .flat_map(|m| m["blocks"].as_array().into_iter().flatten())
        .filter(|b| b.get("tool_use").is_some())
        .collect();
    assert_eq!(uses[0]["tool_use"], "mcp__calc__add", "{uses:?}");
    let seen = report["seen"].as_array().expect("seen");
    assert!(
        seen.iter()
            .any(|s| s["pre"] == "mcp__calc__add" && s["input"]["a"] == 1),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|s| s["a"] == 40 && s["b"] == 2),
        "the tool ran with the hook's input: {seen:?}"
    );
    assert!(
        seen.iter().any(|s| s["post"] == "mcp__calc__add"
            && s["response"].as_str().is_some_and(|r| r.contains("sum=42"))),
        "{seen:?}"
    );
    // No can_use_tool for a call a hook allowed.
    assert!(
        !seen.iter().any(|s| s["asked"] == "mcp__calc__add"),
        "{seen:?}"
    );

    // The server loki started got the environment the program gave it.
    assert!(
        texts(&report["ext"]).contains("tool said: from-the-program"),
        "{}",
        report["ext"]
    );

    // can_use_tool's updated input is what ran.
    assert!(seen.iter().any(|s| s["asked"] == "Bash"), "{seen:?}");
    assert!(env.work_dir().join("edited").exists());
    assert!(!env.work_dir().join("made").exists());

    let status = report["status"]["mcpServers"].as_array().expect("status");
    let names: Vec<&str> = status.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["calc", "ext"], "{status:?}");
    assert!(
        status.iter().all(|s| s["status"] == "connected"),
        "{status:?}"
    );
}
