//! Hooks from config.yaml through the real binary: a `PreToolUse` hook that blocks a
//! command (exit 2, its stderr told to the model) and sees Claude's JSON, a `PostToolUse`
//! hook adding context, `UserPromptSubmit` adding context and blocking, `SessionStart`
//! context, a `Stop` hook sending the turn on once, a hook that hangs (timed out, the
//! call goes on), and the hooks of a sub-agent's calls.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::fake_llm::{Recorded, Reply, openai};
use crate::common::{TestEnv, stderr, stdout};

fn hooks_env(hooks: &str, extra: &str) -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "enabled_tools: execute_command,fs_cat\n{extra}hooks:\n{hooks}{cfg}"
    ));
    env
}

fn last_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rfind(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn tool_result(body: &Value) -> Option<String> {
    let last = body["messages"].as_array()?.last()?;
    (last["role"] == "tool").then(|| last["content"].as_str().unwrap_or_default().to_string())
}

/// Commands by what the prompt asks; after a tool, the result is echoed.
fn route(request: &Recorded) -> Reply {
    let body = request.json();
    if let Some(result) = tool_result(&body) {
        return openai::text_stream(&[&format!("result: {result}")]);
    }
    let last = last_user(&body);
    let command = |c: &str| {
        openai::tool_call_stream(&[("c1", "execute_command", &json!({"command": c}).to_string())])
    };
    if last.contains("run forbidden") {
        command("echo forbidden > made")
    } else if last.contains("run allowed") {
        command("touch allowed")
    } else if last.contains("read notes") {
        openai::tool_call_stream(&[("c2", "fs_cat", r#"{"path":"notes.md"}"#)])
    } else {
        openai::text_stream(&[&format!("answer to: {}", last.lines().next().unwrap_or(""))])
    }
}

const TOOL_HOOKS: &str = r#"  PreToolUse:
    - matcher: "Bash"
      hooks:
        - type: command
          command: "cat > pre-input.json; if grep -q forbidden pre-input.json; then echo 'no forbidden commands' >&2; exit 2; fi"
  PostToolUse:
    - matcher: "fs_cat|Read"
      hooks:
        - type: command
          command: "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"checked by post\"}}'"
"#;

#[test]
fn tool_hooks_block_see_claude_s_json_and_add_context() {
    let env = hooks_env(TOOL_HOOKS, "");
    std::fs::write(env.work_dir().join("notes.md"), "the notes\n").unwrap();
    env.server.respond_for("/v1/chat", route);

    // Blocked before it runs, even with --yolo; the model is told the hook's reason.
    let out = env
        .loki()
        .args(["--yolo", "run forbidden"])
        .assert()
        .success();
    assert!(
        stdout(&out).contains("no forbidden commands"),
        "{}",
        stdout(&out)
    );
    assert!(!env.work_dir().join("made").exists());

    // A call it lets through runs; the hook saw Claude's description of it.
    env.loki()
        .args(["--yolo", "run allowed"])
        .assert()
        .success();
    assert!(env.work_dir().join("allowed").exists());
    let seen: Value = serde_json::from_str(
        &std::fs::read_to_string(env.work_dir().join("pre-input.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(seen["hook_event_name"], "PreToolUse");
    assert_eq!(seen["tool_name"], "Bash");
    assert_eq!(seen["tool_input"]["command"], "touch allowed");
    assert!(
        seen["cwd"].as_str().is_some_and(|c| !c.is_empty()),
        "{seen}"
    );

    // PostToolUse adds to what the model reads (a read needs no approval).
    env.loki().arg("read notes").assert().success();
    let result = tool_result(&env.server.last_request().json()).unwrap();
    assert!(result.contains("the notes"), "{result}");
    assert!(result.contains("checked by post"), "{result}");
}

const PROMPT_HOOKS: &str = r#"  UserPromptSubmit:
    - hooks:
        - type: command
          command: "input=$(cat); case \"$input\" in *secret*) echo 'no secrets here' >&2; exit 2;; esac; echo 'today is hook day'"
  SessionStart:
    - hooks:
        - type: command
          command: "echo 'session context from hook'"
  Stop:
    - hooks:
        - type: command
          command: "[ -f stopped-once ] || { touch stopped-once; echo 'also say bye' >&2; exit 2; }"
"#;

#[test]
fn prompt_session_and_stop_hooks() {
    let env = hooks_env(PROMPT_HOOKS, "");
    env.server.respond_for("/v1/chat", route);
    let out = env.loki().arg("tell me").assert().success();
    let requests = env.server.requests();
    assert_eq!(requests.len(), 2, "the Stop hook sent the turn on once");
    let first = last_user(&requests[0].json());
    assert!(first.starts_with("tell me"), "{first}");
    assert!(first.contains("today is hook day"), "{first}");
    assert!(first.contains("session context from hook"), "{first}");
    assert_eq!(last_user(&requests[1].json()), "also say bye");
    assert!(
        stdout(&out).contains("answer to: also say bye"),
        "{}",
        stdout(&out)
    );

    // A blocked prompt is not sent: one line naming the hook's reason, exit status ≠ 0.
    let out = env.loki().arg("a secret thing").assert().failure();
    assert!(stderr(&out).contains("no secrets here"), "{}", stderr(&out));
    assert_eq!(env.server.requests().len(), 2);
    // In the JSON formats a blocked prompt is a run that aborted, not silence.
    let out = env
        .loki()
        .args(["--output-format", "json", "a secret thing"])
        .assert()
        .failure();
    let result: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["ok"], false, "{result}");
    assert!(
        result["error"]
            .as_str()
            .unwrap_or_default()
            .contains("no secrets here"),
        "{result}"
    );
    let out = env
        .loki()
        .args(["--output-format", "stream-json", "a secret thing"])
        .assert()
        .failure();
    let events = stdout(&out);
    assert!(
        events.contains("\"turn_started\"") && events.contains("\"turn_aborted\""),
        "{events}"
    );
    assert_eq!(env.server.requests().len(), 2);
}

#[test]
fn a_hook_that_hangs_is_stopped_and_the_call_goes_on() {
    let hooks = "  PreToolUse:\n    - hooks:\n        - type: command\n          command: \"sleep 30\"\n          timeout: 1\n";
    let env = hooks_env(hooks, "");
    env.server.respond_for("/v1/chat", route);
    let started = Instant::now();
    let out = env
        .loki()
        .args(["--yolo", "run allowed"])
        .assert()
        .success();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(
        stderr(&out).contains("did not finish within 1s"),
        "{}",
        stderr(&out)
    );
    assert!(env.work_dir().join("allowed").exists());
}

#[test]
fn a_sub_agent_s_calls_go_through_the_same_hooks() {
    let env = hooks_env(TOOL_HOOKS, "");
    for (name, config) in [
        (
            "boss",
            "instructions: You are BOSS.\ncan_spawn_agents: true\n",
        ),
        (
            "worker",
            "instructions: You are WORKER.\nglobal_tools:\n  - execute_command\n",
        ),
    ] {
        let dir = env.config_dir().join("agents").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.yaml"), config).unwrap();
    }
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        let results: Vec<String> = body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .filter_map(|m| m["content"].as_str().map(str::to_string))
            .collect();
        if system.contains("WORKER") {
            return match results.first() {
                None => openai::tool_call_stream(&[(
                    "w1",
                    "execute_command",
                    r#"{"command":"echo forbidden > made"}"#,
                )]),
                Some(result) => openai::text_stream(&[&format!("worker saw: {result}")]),
            };
        }
        match results.len() {
            0 => openai::tool_call_stream(&[(
                "s1",
                "agent__spawn",
                &json!({"agent": "worker", "prompt": "do it"}).to_string(),
            )]),
            1 => {
                let spawned: Value = serde_json::from_str(&results[0]).unwrap_or_default();
                openai::tool_call_stream(&[(
                    "s2",
                    "agent__collect",
                    &json!({"id": spawned["id"]}).to_string(),
                )])
            }
            _ => openai::text_stream(&[&format!("boss heard: {}", results[1])]),
        }
    });
    let out = env
        .loki()
        .args(["--yolo", "-a", "boss", "go"])
        .assert()
        .success();
    assert!(!env.work_dir().join("made").exists());
    assert!(
        stdout(&out).contains("no forbidden commands"),
        "{}",
        stdout(&out)
    );
}

/// Calls by what the prompt asks, in loki's shapes (as any model makes them); after a
/// tool, its result is echoed.
fn shapes_route(request: &Recorded) -> Reply {
    let body = request.json();
    if let Some(result) = tool_result(&body) {
        return openai::text_stream(&[&format!("result: {result}")]);
    }
    let last = last_user(&body);
    let call =
        |tool: &str, args: Value| openai::tool_call_stream(&[("c1", tool, &args.to_string())]);
    if last.contains("write env") {
        call(
            "fs_write",
            json!({"path": ".env", "contents": "SECRET=1\n"}),
        )
    } else if last.contains("write redirect") {
        call(
            "fs_write",
            json!({"path": "redirect-me.txt", "contents": "moved\n"}),
        )
    } else if last.contains("write other") {
        call("fs_write", json!({"path": "ok.txt", "contents": "fine\n"}))
    } else if last.contains("edit secret") {
        call(
            "fs_edit",
            json!({"path": "secret/key.txt", "old_string": "a", "new_string": "b"}),
        )
    } else if last.contains("edit other") {
        call(
            "fs_edit",
            json!({"path": "ok.txt", "old_string": "fine", "new_string": "edited"}),
        )
    } else if last.contains("list private") {
        call("fs_ls", json!({"path": "private"}))
    } else if last.contains("run echo") {
        call("execute_command", json!({"command": "echo hi"}))
    } else {
        openai::text_stream(&["nothing"])
    }
}

fn shapes_env(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "enabled_tools: execute_command,fs_write,fs_edit,fs_ls\n{extra}{cfg}"
    ));
    env.server.respond_for("/v1/chat", shapes_route);
    env
}

const SHAPE_HOOKS: &str = r#"hooks:
  PreToolUse:
    - matcher: "Write|Edit|Bash"
      hooks:
        - type: command
          command: "cat >> seen.jsonl; echo >> seen.jsonl"
    - matcher: "Write"
      hooks:
        - type: command
          command: "if grep -q redirect-me; then echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"updatedInput\":{\"file_path\":\"redirected.txt\",\"content\":\"moved\"}}}'; fi"
"#;

#[test]
fn command_hooks_see_claude_s_shapes_and_edit_in_them() {
    let env = shapes_env(SHAPE_HOOKS);
    for prompt in ["write other", "edit other", "run echo", "write redirect"] {
        env.loki().args(["--yolo", prompt]).assert().success();
    }
    let seen: Vec<Value> = std::fs::read_to_string(env.work_dir().join("seen.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(seen.len(), 4, "{seen:#?}");
    assert_eq!(seen[0]["tool_name"], "Write");
    assert_eq!(
        seen[0]["tool_input"],
        json!({"file_path": "ok.txt", "content": "fine\n"})
    );
    assert_eq!(seen[1]["tool_name"], "Edit");
    assert_eq!(seen[1]["tool_input"]["file_path"], "ok.txt");
    assert_eq!(seen[1]["tool_input"]["old_string"], "fine");
    assert_eq!(seen[2]["tool_name"], "Bash");
    assert_eq!(seen[2]["tool_input"], json!({"command": "echo hi"}));
    // The hook's updatedInput, in Claude's shape, is what ran.
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("redirected.txt")).unwrap(),
        "moved"
    );
    assert!(!env.work_dir().join("redirect-me.txt").exists());
}

#[test]
fn claude_permission_rules_match_loki_s_tools() {
    let env = shapes_env(
        "permissions:\n  deny: [\"Write(.env)\", \"Edit(secret/**)\"]\n  ask: [\"LS(private)\"]\n",
    );
    let work = env.work_dir();
    std::fs::create_dir_all(work.join("secret")).unwrap();
    std::fs::write(work.join("secret/key.txt"), "a\n").unwrap();
    std::fs::create_dir_all(work.join("private")).unwrap();
    std::fs::write(work.join("private/hidden-name.txt"), "x").unwrap();

    // Deny rules hold even with --yolo, and the model is told which rule.
    let out = env.loki().args(["--yolo", "write env"]).assert().success();
    assert!(stdout(&out).contains("Write(.env)"), "{}", stdout(&out));
    assert!(!work.join(".env").exists());
    let out = env
        .loki()
        .args(["--yolo", "edit secret"])
        .assert()
        .success();
    assert!(stdout(&out).contains("Edit(secret/**)"), "{}", stdout(&out));
    assert_eq!(
        std::fs::read_to_string(work.join("secret/key.txt")).unwrap(),
        "a\n"
    );
    // Other paths are not covered.
    env.loki()
        .args(["--yolo", "write other"])
        .assert()
        .success();
    assert!(work.join("ok.txt").exists());
    // `LS(…)` names loki's `fs_ls`: asked about (and so refused with no one to ask).
    let out = env
        .loki()
        .args(["--yolo", "list private"])
        .assert()
        .success();
    assert!(!stdout(&out).contains("hidden-name"), "{}", stdout(&out));
    assert!(stdout(&out).contains("LS(private)"), "{}", stdout(&out));
}

/// A `PermissionRequest` hook answers the approval loki was about to ask for: `allow`
/// runs a command nothing else lets run headless; `SessionEnd` runs when the
/// conversation closes; an event no one knows is a warning, and the other hooks of the
/// file still run.
#[test]
fn permission_request_session_end_and_an_unknown_event() {
    let hooks = r#"  PermissionRequest:
    - matcher: "Bash"
      hooks:
        - type: command
          command: "cat > permission-input.json; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"allow\"}}}'"
  SessionEnd:
    - hooks:
        - type: command
          command: "cat > session-end.json"
  FutureEvent:
    - hooks:
        - type: command
          command: "touch future-ran"
"#;
    let env = hooks_env(hooks, "");
    env.server.respond_for("/v1/chat", route);
    let out = env.loki().arg("run allowed").assert().success();
    assert!(env.work_dir().join("allowed").exists(), "{}", stdout(&out));
    let input: Value = serde_json::from_str(
        &std::fs::read_to_string(env.work_dir().join("permission-input.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(input["hook_event_name"], "PermissionRequest", "{input}");
    assert_eq!(input["tool_name"], "Bash", "{input}");
    let end: Value = serde_json::from_str(
        &std::fs::read_to_string(env.work_dir().join("session-end.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(end["hook_event_name"], "SessionEnd", "{end}");
    assert!(
        stderr(&out).contains("unknown event `FutureEvent`"),
        "{}",
        stderr(&out)
    );
    assert!(!env.work_dir().join("future-ran").exists());
}

/// A `PermissionRequest` hook's `deny` refuses the call with its message; the user is
/// not asked.
#[test]
fn a_permission_request_hook_denies_with_its_message() {
    let hooks = r#"  PermissionRequest:
    - hooks:
        - type: command
          command: "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"deny\",\"message\":\"not on fridays\"}}}'"
"#;
    let env = hooks_env(hooks, "");
    env.server.respond_for("/v1/chat", route);
    let out = env.loki().arg("run allowed").assert().success();
    assert!(!env.work_dir().join("allowed").exists());
    assert!(stdout(&out).contains("not on fridays"), "{}", stdout(&out));
}
