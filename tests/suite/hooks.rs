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
