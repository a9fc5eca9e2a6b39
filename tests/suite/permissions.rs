//! Permission modes and rules through the real binary: plan mode (only reads run, the
//! model is told), accept-edits (edits in the tree run unasked, commands and paths
//! outside still need approval), rules (a prefix that allows one simple command, a deny
//! that wins over yolo, an ask), what `--info` shows, a bad rule at start, and in the
//! REPL `.mode`, Shift-Tab and carrying a plan out.

use serde_json::Value;

use crate::common::fake_llm::{Recorded, Reply, openai};
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr, stdout};

fn env_with(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "enabled_tools: execute_command,fs_write,fs_cat\n{extra}{cfg}"
    ));
    std::fs::write(env.work_dir().join("notes.md"), "the notes\n").unwrap();
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

/// One tool call per prompt (`write X`, `run X`, `read X`), then the results echoed.
fn route(request: &Recorded) -> Reply {
    let body = request.json();
    let results: Vec<String> = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    let last = last_user(&body);
    let asked_for = last.split_once(' ');
    if body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"] == "tool")
    {
        return openai::text_stream(&[&format!("results: {}", results.join(" | "))]);
    }
    match asked_for {
        Some(("write", path)) => openai::tool_call_stream(&[(
            "w",
            "fs_write",
            &serde_json::json!({"path": path, "contents": "x\n"}).to_string(),
        )]),
        Some(("run", command)) => openai::tool_call_stream(&[(
            "r",
            "execute_command",
            &serde_json::json!({"command": command}).to_string(),
        )]),
        Some(("read", path)) => openai::tool_call_stream(&[(
            "c",
            "fs_cat",
            &serde_json::json!({"path": path}).to_string(),
        )]),
        _ => openai::text_stream(&["Plan: 1. change a.txt 2. run the tests"]),
    }
}

#[test]
fn plan_mode_runs_only_reads_and_tells_the_model() {
    let env = env_with("");
    env.server.respond_for("/v1/chat", route);
    let out = env
        .loki()
        .args(["--permission-mode", "plan", "--yolo", "write a.txt"])
        .assert()
        .success();
    // --yolo comes first and plan is applied after it: plan mode holds.
    assert!(
        stdout(&out).contains("plan mode: only tools that read run"),
        "{}",
        stdout(&out)
    );
    assert!(!env.work_dir().join("a.txt").exists());
    let system = env.server.requests()[0].json()["messages"][0].clone();
    assert_eq!(system["role"], "system", "{system}");
    assert!(
        system["content"]
            .as_str()
            .unwrap()
            .contains("You are in plan mode")
    );
    let out = env
        .loki()
        .args(["--permission-mode", "plan", "read notes.md"])
        .assert()
        .success();
    assert!(stdout(&out).contains("the notes"), "{}", stdout(&out));
}

#[test]
fn accept_edits_runs_edits_in_the_tree_and_nothing_else() {
    let env = env_with("permission_mode: accept-edits\n");
    env.server.respond_for("/v1/chat", route);
    env.loki().arg("write a.txt").assert().success();
    assert!(env.work_dir().join("a.txt").exists());
    let out = env.loki().arg("write ../outside.txt").assert().success();
    assert!(!env.root().join("outside.txt").exists(), "{}", stdout(&out));
    let out = env.loki().arg("run touch made").assert().success();
    assert!(!env.work_dir().join("made").exists(), "{}", stdout(&out));
    let out = env.loki().arg("--info").assert().success();
    assert!(stdout(&out).contains("accept-edits"), "{}", stdout(&out));
}

#[test]
fn rules_allow_a_prefix_deny_over_yolo_and_ask() {
    let env = env_with(
        "permissions:\n  allow: [\"Bash(echo hi:*)\"]\n  ask: [\"fs_write(src/**)\"]\n  deny: [\"execute_command(touch:*)\"]\n",
    );
    env.server.respond_for("/v1/chat", route);
    // Allowed without a terminal to ask on: a simple command with the prefix.
    let out = env.loki().arg("run echo hi there").assert().success();
    assert!(stdout(&out).contains("hi there"), "{}", stdout(&out));
    // The same prefix chained to another command is not covered: asked, so refused here.
    let out = env
        .loki()
        .arg("run echo hi; echo sneaky > s.txt")
        .assert()
        .success();
    assert!(!env.work_dir().join("s.txt").exists(), "{}", stdout(&out));
    // Deny wins over --yolo, in a chain too.
    let out = env
        .loki()
        .args(["--yolo", "run echo ok && touch denied"])
        .assert()
        .success();
    assert!(
        stdout(&out).contains("execute_command(touch:*)"),
        "{}",
        stdout(&out)
    );
    assert!(!env.work_dir().join("denied").exists());
    // Ask wins over --yolo: with no terminal, the write is refused.
    let out = env
        .loki()
        .args(["--yolo", "write src/a.rs"])
        .assert()
        .success();
    assert!(
        !env.work_dir().join("src/a.rs").exists(),
        "{}",
        stdout(&out)
    );
    env.loki().args(["--yolo", "write b.rs"]).assert().success();
    assert!(env.work_dir().join("b.rs").exists());
    let info = stdout(&env.loki().arg("--info").assert().success());
    assert!(info.contains("deny  execute_command(touch:*)"), "{info}");
}

#[test]
fn a_bad_rule_is_one_line_at_start() {
    let env = env_with("permissions:\n  deny: [\"Bash(rm\"]\npermission_mode: sometimes\n");
    let out = env.loki().arg("hi").assert().failure();
    let err = stderr(&out);
    assert!(err.contains("permission_mode"), "{err}");
    let env = env_with("permissions:\n  deny: [\"Bash(rm\"]\n");
    let err = stderr(&env.loki().arg("hi").assert().failure());
    assert!(
        err.contains("Bash(rm") && err.contains("permissions"),
        "{err}"
    );
}

#[test]
fn the_repl_switches_modes_and_carries_a_plan_out() {
    let env = env_with("");
    env.server.respond_for("/v1/chat", route);
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("fake:gpt-4o-mini)> ");
    pty.send(".mode\r");
    pty.expect("permission_mode: default");
    pty.expect("fake:gpt-4o-mini)> ");
    // Shift-Tab: default → accept-edits → plan, shown at the prompt.
    pty.send("\x1b[Z");
    pty.expect("permission_mode: accept-edits");
    pty.expect("[accept-edits]");
    pty.send("\x1b[Z");
    pty.expect("permission_mode: plan");
    pty.expect("[plan]");
    pty.send("what would you change?\r");
    pty.expect("Plan: 1. change a.txt");
    pty.expect("Carry it out");
    // The first choice: accept-edits, and the model is told to go on.
    pty.send("\r");
    pty.expect("permission_mode: accept-edits");
    pty.expect("[accept-edits]");
    let last = last_user(&env.server.last_request().json());
    assert_eq!(last, "Carry out the plan.");
    pty.send(".mode default\r");
    pty.expect("permission_mode: default");
    pty.expect("fake:gpt-4o-mini)> ");
    pty.send(".exit\r");
    pty.read_to_end();
}

#[test]
fn a_role_or_an_agent_sets_the_mode() {
    let env = env_with("");
    env.server.respond_for("/v1/chat", route);
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(
        roles.join("planner.md"),
        "---\npermission_mode: plan\n---\nPlan first.\n",
    )
    .unwrap();
    let out = env
        .loki()
        .args(["-r", "planner", "--yolo", "write a.txt"])
        .assert()
        .success();
    assert!(stdout(&out).contains("plan mode"), "{}", stdout(&out));
    assert!(!env.work_dir().join("a.txt").exists());
    let agent = env.config_dir().join("agents/editor");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(
        agent.join("config.yaml"),
        "instructions: Edit.\npermission_mode: accept-edits\nglobal_tools:\n  - fs_write\n",
    )
    .unwrap();
    env.loki()
        .args(["-a", "editor", "write b.txt"])
        .assert()
        .success();
    assert!(
        env.work_dir().join("b.txt").exists(),
        "accept-edits: no approval needed"
    );
}
