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

/// Writes by what the prompt asks, for the programs of `tests/data/claude_sdk_shapes.py`;
/// after a tool, its result is echoed.
fn shapes_route(request: &Recorded) -> Reply {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if let Some(result) = messages
        .last()
        .filter(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
    {
        return openai::text_stream(&[&format!("tool said: {result}")]);
    }
    let asked = body.to_string();
    let write = |path: &str, contents: &str| {
        let args = serde_json::json!({"path": path, "contents": contents}).to_string();
        openai::tool_call_stream(&[("call_s", "fs_write", &args)])
    };
    if asked.contains("write the env file") {
        write(".env", "SECRET=1\n")
    } else if asked.contains("write the original file") {
        write("original.txt", "hello\n")
    } else {
        openai::text_stream(&["nothing to do"])
    }
}

/// Runs `tests/data/claude_sdk_shapes.py SCENARIO` against loki; its report.
fn shapes_program(env: &TestEnv, scenario: &str) -> Value {
    crate::common::clients::require_python_module("claude_agent_sdk");
    let loki_env: serde_json::Map<String, Value> = env
        .env_pairs()
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/claude_sdk_shapes.py"
    );
    let output = Command::new("timeout")
        .args(["120", "python3", script])
        .arg(LOKI)
        .arg(env.work_dir())
        .arg(scenario)
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

fn shapes_setup() -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command,fs_write\n{cfg}"));
    env.server.respond_for("/v1/chat", shapes_route);
    env
}

#[test]
fn claude_s_documented_env_hook_blocks_the_write() {
    let env = shapes_setup();
    let report = shapes_program(&env, "env_hook");

    // The program saw Claude's `Write` in Claude's shape, in the message and the hook.
    let uses = report["uses"].as_array().unwrap();
    assert_eq!(uses[0]["name"], "Write", "{report:#}");
    assert_eq!(
        uses[0]["input"],
        serde_json::json!({"file_path": ".env", "content": "SECRET=1\n"})
    );
    assert_eq!(report["seen"][0]["tool"], "Write", "{report:#}");
    assert_eq!(report["seen"][0]["file_path"], ".env");

    // The hook's deny held (accept-edits would have written it), and the model is told.
    assert!(!env.work_dir().join(".env").exists(), "{report:#}");
    let told = env
        .server
        .requests()
        .iter()
        .any(|r| r.json().to_string().contains("Cannot modify .env files"));
    assert!(told, "the model was told why");
}

#[test]
fn can_use_tool_sees_claude_s_input_and_its_edit_runs() {
    let env = shapes_setup();
    let report = shapes_program(&env, "redirect");

    let asked = report["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{report:#}");
    assert_eq!(asked[0]["tool"], "Write");
    assert_eq!(
        asked[0]["input"],
        serde_json::json!({"file_path": "original.txt", "content": "hello\n"})
    );
    // The program's changed file_path is where the file went.
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("changed.txt")).unwrap(),
        "hello\n"
    );
    assert!(!env.work_dir().join("original.txt").exists());
    // PostToolUse sees the input that ran and Claude's Write response.
    let response = &report["responses"][0];
    assert_eq!(response["input"]["file_path"], "changed.txt", "{report:#}");
    assert_eq!(response["response"]["filePath"], "changed.txt");
    assert_eq!(response["response"]["success"], true);
}

/// One prompt from `tests/data/claude_sdk_details.py` in `dir` with the SDK options
/// `options`; its messages and the calls `can_use_tool` was asked about.
fn ask(env: &TestEnv, dir: &std::path::Path, prompt: &str, options: Value) -> Value {
    crate::common::clients::require_python_module("claude_agent_sdk");
    let loki_env: serde_json::Map<String, Value> = env
        .env_pairs()
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/claude_sdk_details.py"
    );
    let output = Command::new("timeout")
        .args(["120", "python3", script, LOKI])
        .arg(dir)
        .arg(prompt)
        .arg(options.to_string())
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

fn answer(report: &Value) -> String {
    of_kind(&report["messages"], "assistant")
        .iter()
        .filter_map(|m| m["text"].as_str())
        .collect()
}

/// `continue_conversation` goes on with the newest session started in the program's
/// directory, not the newest of any directory.
#[test]
fn continue_conversation_takes_this_directory_s_last_session() {
    let env = setup();
    let here = env.work_dir();
    let elsewhere = env.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let first = ask(&env, &here, "hello there", serde_json::json!({}));
    let mine = result(&first["messages"])["session_id"].clone();
    // A newer session, in another directory (a later second: the old rule took the
    // greatest `sdk-<time>-…` name).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    ask(
        &env,
        &elsewhere,
        "hello from elsewhere",
        serde_json::json!({}),
    );

    let again = ask(
        &env,
        &here,
        "what came first?",
        serde_json::json!({"continue_conversation": true}),
    );
    assert_eq!(answer(&again), "first: hello there", "{again:#}");
    assert_eq!(result(&again["messages"])["session_id"], mine);
}

/// `session_id` (`--session-id UUID`) is the run's session id, and `resume` with it goes
/// on with that conversation in a new process; the result's `stop_reason` is Claude's
/// (`end_turn`) and its usage has Claude's fields.
#[test]
fn a_chosen_session_id_is_the_session_and_resumes() {
    let env = setup();
    let id = "0b6e5b1c-6f0a-4c8e-9a55-1d2f3e4a5b6c";
    let first = ask(
        &env,
        &env.work_dir(),
        "hello there",
        serde_json::json!({"session_id": id}),
    );
    let messages = &first["messages"];
    assert_eq!(of_kind(messages, "system")[0]["data"]["session_id"], id);
    let done = result(messages);
    assert_eq!(done["session_id"], id, "{done:#}");
    assert_eq!(done["stop_reason"], "end_turn", "{done:#}");
    assert!(
        done["usage"]["cache_read_input_tokens"].is_u64(),
        "{done:#}"
    );
    assert!(
        done["usage"]["input_tokens"].as_u64().unwrap() > 0,
        "{done:#}"
    );
    assert!(
        done["model_usage"]["fake:gpt-4o-mini"]["contextWindow"].is_u64(),
        "{done:#}"
    );

    let resumed = ask(
        &env,
        &env.work_dir(),
        "what came first?",
        serde_json::json!({"resume": id}),
    );
    assert_eq!(answer(&resumed), "first: hello there", "{resumed:#}");
    assert_eq!(result(&resumed["messages"])["session_id"], id);
}

/// A turn that reaches `max_turns` ends as Claude's `error_max_turns` (not an error),
/// with the model calls it made and what they used.
#[test]
fn max_turns_ends_as_error_max_turns_with_its_turns_and_usage() {
    let env = setup();
    let report = ask(
        &env,
        &env.work_dir(),
        "make a file",
        serde_json::json!({"max_turns": 1}),
    );
    let done = result(&report["messages"]);
    assert_eq!(done["subtype"], "error_max_turns", "{done:#}");
    assert_eq!(done["is_error"], false, "{done:#}");
    assert_eq!(done["num_turns"], 1, "{done:#}");
    assert!(
        done["usage"]["input_tokens"].as_u64().unwrap() > 0,
        "{done:#}"
    );
    assert!(!env.work_dir().join("made").exists());
}

/// The program's permission mode is the conversation's: `system/init` reports it, and in
/// `acceptEdits` a write runs without asking the program.
#[test]
fn the_program_s_permission_mode_is_the_conversation_s() {
    let env = setup();
    let report = ask(
        &env,
        &env.work_dir(),
        "write the notes",
        serde_json::json!({"permission_mode": "acceptEdits"}),
    );
    let init = of_kind(&report["messages"], "system")[0];
    assert_eq!(init["data"]["permissionMode"], "acceptEdits", "{report:#}");
    assert_eq!(result(&report["messages"])["subtype"], "success");
    assert_eq!(report["asked"], serde_json::json!([]), "{report:#}");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("notes.md")).unwrap(),
        "new notes\n"
    );
}
