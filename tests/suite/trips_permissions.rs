//! Issue 56: trips_permissions.
//!
//! What a refusal tells the model is true: an ask rule under `--yolo` names the rule and
//! where it lives, a hook's block names the hook, a project's rule names its settings file,
//! a path outside the tree names what can let it run. Plan mode refuses memory writes and
//! does not take an MCP server's `readOnlyHint` on trust. A hook answer loki cannot act
//! on refuses the call. In SDK mode `set_model` with an unknown model is an error and
//! `system/init` lists the tools actually offered. The todo list is resumed with its
//! session.

use std::io::{BufRead, BufReader, Write};

use serde_json::{Value, json};

use super::mcp::{mcp_env, server_bin, tool_result};
use crate::common::fake_llm::openai;
use crate::common::{TestEnv, stdout};

fn env_with(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "enabled_tools: execute_command,fs_write,fs_cat\n{extra}{cfg}"
    ));
    env
}

/// Runs one prompt in which the model makes `call` (name, JSON arguments) once, then
/// answers; the tool result the model got back.
fn one_call(env: &TestEnv, args: &[&str], call: (&str, &str)) -> String {
    env.server
        .push(openai::tool_call_stream(&[("c1", call.0, call.1)]));
    env.server.push(openai::text_stream(&["done"]));
    env.loki().args(args).arg("go").assert().success();
    tool_result(&env.server.last_request().json())
}

#[test]
fn an_ask_rule_under_yolo_names_the_rule_and_where_to_change_it() {
    let env = env_with("permissions:\n  ask: [\"fs_write(src/**)\"]\n");
    let result = one_call(
        &env,
        &["--yolo"],
        ("fs_write", r#"{"path":"src/a.rs","contents":"x\n"}"#),
    );
    assert!(!env.work_dir().join("src/a.rs").exists(), "{result}");
    assert!(
        !result.contains("--yolo or auto_approve_tools allow it"),
        "{result}"
    );
    assert!(
        result.contains("the user's permission rule `fs_write(src/**)`"),
        "{result}"
    );
    assert!(
        result.contains("change or remove that rule in the user's configuration"),
        "{result}"
    );
}

#[test]
fn a_hook_that_exits_2_is_named_as_the_one_that_blocked() {
    let env = env_with(
        "hooks:\n  PreToolUse:\n    - matcher: execute_command\n      hooks:\n        - type: command\n          command: \"echo 'no touching here' >&2; exit 2\"\n",
    );
    let result = one_call(
        &env,
        &["--yolo"],
        ("execute_command", r#"{"command":"touch made"}"#),
    );
    assert!(!env.work_dir().join("made").exists(), "{result}");
    assert!(!result.contains("user declined"), "{result}");
    assert!(
        result.contains("blocked by the PreToolUse hook `echo 'no touching here' >&2; exit 2`"),
        "{result}"
    );
    assert!(result.contains("no touching here"), "{result}");
}

#[test]
fn a_project_rule_names_the_project_settings_file() {
    let env = env_with("");
    env.write(
        ".claude/settings.json",
        r#"{"permissions": {"deny": ["Bash(touch:*)"]}}"#,
    );
    let result = one_call(
        &env,
        &["--yolo"],
        ("execute_command", r#"{"command":"touch made"}"#),
    );
    assert!(!env.work_dir().join("made").exists(), "{result}");
    assert!(!result.contains("user's permission rule"), "{result}");
    let file = env.work_dir().join(".claude/settings.json");
    assert!(
        result.contains(&format!(
            "the permission rule `Bash(touch:*)` of the project settings file {}",
            file.display()
        )),
        "{result}"
    );
}

#[test]
fn a_path_outside_the_tree_names_what_can_let_it_run() {
    let env = env_with("auto_approve_tools: [fs_write]\n");
    let result = one_call(
        &env,
        &[],
        ("fs_write", r#"{"path":"../outside.txt","contents":"x\n"}"#),
    );
    assert!(!env.root().join("outside.txt").exists(), "{result}");
    assert!(
        !result.contains("auto_approve_tools allow it"),
        "auto_approve_tools is configured and did not: {result}"
    );
    assert!(result.contains("outside the working directory"), "{result}");
    assert!(
        result.contains("--yolo or a PreToolUse hook's allow does"),
        "{result}"
    );
}

/// In plan mode remembering is a side effect like a file write: refused without a
/// question, while searching memory still runs.
#[test]
fn plan_mode_refuses_memory_writes_without_asking() {
    let env = env_with("");
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&cfg.replace(
        "enabled_tools: execute_command,fs_write,fs_cat",
        "enabled_tools: all",
    ));
    std::fs::create_dir_all(env.config_dir().join("workspace")).unwrap();
    env.server.push(openai::tool_call_stream(&[(
        "r1",
        "memory__remember",
        r#"{"fact":"The user drinks green tea."}"#,
    )]));
    env.server.push(openai::text_stream(&["planned"]));
    let out = env
        .loki()
        .args([
            "--permission-mode",
            "plan",
            "--output-format",
            "stream-json",
            "remember that I drink green tea",
        ])
        .assert()
        .success();
    let events: Vec<Value> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(
        !events
            .iter()
            .any(|e| e["type"] == "tool_call_approval_requested"),
        "plan mode asked: {events:#?}"
    );
    let result = tool_result(&env.server.last_request().json());
    assert!(result.contains("plan mode"), "{result}");
    let memory = env.config_dir().join("workspace/MEMORY.md");
    assert!(
        !std::fs::read_to_string(memory)
            .unwrap_or_default()
            .contains("green tea")
    );
    env.server.push(openai::tool_call_stream(&[(
        "s1",
        "memory__search",
        r#"{"query":"tea"}"#,
    )]));
    env.server.push(openai::text_stream(&["searched"]));
    env.loki()
        .args(["--permission-mode", "plan", "what tea?"])
        .assert()
        .success();
    let result = tool_result(&env.server.last_request().json());
    assert!(!result.contains("plan mode"), "{result}");
}

/// The test server annotates `echo` with `readOnlyHint: true`; in plan mode that claim
/// does not let it run unasked (with no one to ask, it is refused), while without plan
/// mode it runs as before.
#[test]
fn plan_mode_does_not_trust_an_mcp_read_only_hint() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "enabled_mcp_servers: test\n",
    );
    env.server.push(openai::tool_call_stream(&[(
        "e1",
        "test_echo",
        r#"{"text":"hi"}"#,
    )]));
    env.server.push(openai::text_stream(&["planned"]));
    let out = env
        .loki()
        .args([
            "--permission-mode",
            "plan",
            "--output-format",
            "stream-json",
            "echo hi",
        ])
        .assert()
        .success();
    let result = tool_result(&env.server.last_request().json());
    assert!(
        !result.contains("echo: hi"),
        "it ran in plan mode: {result}"
    );
    assert!(result.contains("readOnlyHint"), "{result}");
    assert!(
        stdout(&out).contains("tool_call_approval_requested"),
        "{}",
        stdout(&out)
    );
    env.server.push(openai::tool_call_stream(&[(
        "e2",
        "test_echo",
        r#"{"text":"hi"}"#,
    )]));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().arg("echo hi").assert().success();
    let result = tool_result(&env.server.last_request().json());
    assert!(result.contains("echo: hi"), "{result}");
}

/// A `PreToolUse` hook whose answer loki cannot act on refuses the call, naming the hook
/// and the problem; before, the model's own input ran unchanged.
#[test]
fn a_malformed_hook_answer_refuses_the_call() {
    let cases = [
        (
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":"touch other"}}"#,
            "updatedInput",
        ),
        (
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"maybe"}}"#,
            "permissionDecision \"maybe\"",
        ),
    ];
    for (answer, problem) in cases {
        let hook = format!("cat >/dev/null; echo '{answer}'");
        let env = env_with(&format!(
            "hooks:\n  PreToolUse:\n    - matcher: execute_command\n      hooks:\n        - type: command\n          command: {}\n",
            serde_json::to_string(&hook).unwrap()
        ));
        let result = one_call(
            &env,
            &["--yolo"],
            ("execute_command", r#"{"command":"touch made"}"#),
        );
        assert!(
            !env.work_dir().join("made").exists(),
            "the original input ran: {result}"
        );
        let result: Value = serde_json::from_str(&result).unwrap();
        let result = result["tool_call_error"].as_str().unwrap_or_default();
        assert!(
            result.contains(&format!("the PreToolUse hook `{hook}`")),
            "{result}"
        );
        assert!(result.contains(problem), "{result}");
    }
}

/// loki started as the Claude Agent SDK starts it, read line by line.
struct Sdk {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Sdk {
    fn start(env: &TestEnv, extra: &[&str]) -> Self {
        let mut child = env
            .loki_std()
            .args([
                "--output-format",
                "stream-json",
                "--verbose",
                "--input-format",
                "stream-json",
            ])
            .args(extra)
            .env("CLAUDE_AGENT_SDK_VERSION", "0.2.189")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Sends a prompt; every message up to its `result`.
    fn prompt(&mut self, text: &str) -> Vec<Value> {
        self.send(&json!({"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": null, "session_id": ""}));
        let mut seen = Vec::new();
        loop {
            let message = self.next();
            let done = message["type"] == "result";
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    fn finish(mut self) {
        drop(self.stdin.take());
        assert!(self.child.wait().unwrap().success());
    }
}

#[test]
fn sdk_set_model_with_an_unknown_model_is_an_error_and_keeps_the_model() {
    let env = env_with("");
    env.server.push(openai::text_stream(&["hello back"]));
    let mut sdk = Sdk::start(&env, &[]);
    sdk.send(&json!({"type": "control_request", "request_id": "m1", "request": {"subtype": "set_model", "model": "claude-nope-9"}}));
    let answer = sdk.next();
    assert_eq!(answer["type"], "control_response", "{answer}");
    assert_eq!(answer["response"]["subtype"], "error", "{answer}");
    assert_eq!(answer["response"]["request_id"], "m1");
    let error = answer["response"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("claude-nope-9"), "{answer}");
    let seen = sdk.prompt("hi");
    assert_eq!(seen.last().unwrap()["result"], "hello back", "{seen:#?}");
    let init = seen.iter().find(|m| m["subtype"] == "init").unwrap();
    assert_eq!(init["model"], "fake:gpt-4o-mini", "{init}");
    assert_eq!(
        env.server.last_request().json()["model"],
        "gpt-4o-mini",
        "the old model answered"
    );
    // A model loki has is taken.
    sdk.send(&json!({"type": "control_request", "request_id": "m2", "request": {"subtype": "set_model", "model": "fake:text-only"}}));
    let answer = sdk.next();
    assert_eq!(answer["response"]["subtype"], "success", "{answer}");
    sdk.finish();
}

#[test]
fn sdk_init_lists_the_tools_offered_in_this_run() {
    let env = env_with("");
    env.server.push(openai::text_stream(&["hello back"]));
    let mut sdk = Sdk::start(&env, &["--disallowedTools", "Write"]);
    let seen = sdk.prompt("hi");
    sdk.finish();
    let init = seen.iter().find(|m| m["subtype"] == "init").unwrap();
    let tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    // The configured tools (execute_command, fs_cat) by Claude's names, less `Write`.
    assert_eq!(tools, ["Read", "Bash"], "{init}");
    let offered: Vec<String> = env.server.last_request().json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    assert!(
        offered.iter().any(|t| t == "execute_command"),
        "{offered:?}"
    );
}

/// The SDK's `plan` mode is loki's plan mode too: an MCP tool that calls itself read-only
/// (`readOnlyHint`) does not run unasked, whether plan comes with the start or from
/// `set_permission_mode`; back in `default` it runs.
#[test]
fn sdk_plan_mode_does_not_trust_an_mcp_read_only_hint() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "enabled_mcp_servers: test\n",
    );
    let echo = |env: &TestEnv, id: &str| {
        env.server.push(openai::tool_call_stream(&[(
            id,
            "test_echo",
            r#"{"text":"hi"}"#,
        )]));
        env.server.push(openai::text_stream(&["planned"]));
    };
    let mut sdk = Sdk::start(&env, &["--permission-mode", "plan"]);
    echo(&env, "e1");
    sdk.prompt("echo hi");
    let result = tool_result(&env.server.last_request().json());
    assert!(
        !result.contains("echo: hi"),
        "it ran in plan mode: {result}"
    );
    sdk.send(&json!({"type": "control_request", "request_id": "p1", "request": {"subtype": "set_permission_mode", "mode": "default"}}));
    assert_eq!(sdk.next()["response"]["subtype"], "success");
    echo(&env, "e2");
    sdk.prompt("echo hi");
    let result = tool_result(&env.server.last_request().json());
    assert!(result.contains("echo: hi"), "{result}");
    sdk.send(&json!({"type": "control_request", "request_id": "p2", "request": {"subtype": "set_permission_mode", "mode": "plan"}}));
    assert_eq!(sdk.next()["response"]["subtype"], "success");
    echo(&env, "e3");
    sdk.prompt("echo hi");
    let result = tool_result(&env.server.last_request().json());
    assert!(
        !result.contains("echo: hi"),
        "it ran in plan mode: {result}"
    );
    sdk.finish();
}

/// Todo items written in one run come back when the session is resumed: the model's
/// `todo__list` in the second run sees them.
#[test]
fn the_todo_list_is_saved_with_the_session_and_resumed() {
    let env = env_with("");
    env.server.push(openai::tool_call_stream(&[
        ("i", "todo__init", r#"{"goal":"ship it"}"#),
        ("a", "todo__add", r#"{"task":"write the code"}"#),
    ]));
    // Open items ask the model to go on; the same answer again ends the turn.
    env.server.push(openai::text_stream(&["planned"]));
    env.server.push(openai::text_stream(&["planned"]));
    env.loki()
        .args(["--auto-continue", "-s", "work", "plan it"])
        .assert()
        .success();
    let saved = std::fs::read_to_string(env.session_file("work")).unwrap();
    assert!(saved.contains("goal: ship it"), "{saved}");
    env.server
        .push(openai::tool_call_stream(&[("l", "todo__list", "{}")]));
    env.server.push(openai::text_stream(&["listed"]));
    env.server.push(openai::text_stream(&["listed"]));
    env.loki()
        .args(["--auto-continue", "-s", "work", "where are we?"])
        .assert()
        .success();
    let listed: Value = env
        .server
        .requests()
        .iter()
        .map(|r| tool_result(&r.json()))
        .find(|r| r.contains("todos"))
        .and_then(|r| serde_json::from_str(&r).ok())
        .expect("todo__list ran");
    assert_eq!(listed["goal"], "ship it", "{listed}");
    assert_eq!(listed["todos"][0]["desc"], "write the code", "{listed}");
    assert_eq!(listed["todos"][0]["done"], false, "{listed}");
}
