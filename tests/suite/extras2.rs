//! Issue 54, item 8 (second half): `--effort` mapped to each provider's reasoning
//! control, `fallback_models` tried on overload, `--fork-session`/`.fork`, `.diff` and
//! the `status_line` command — each through the real binary.

use serde_json::json;

use crate::common::fake_llm::{Reply, anthropic, openai};
use crate::common::{TestEnv, default_config, stderr, stdout};

/// An environment on the standard config with `extra` top-level keys in front.
fn env_with(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write_config(&format!(
        "{extra}{}",
        default_config(&env.server.base_url())
    ));
    env
}

#[test]
fn effort_sets_openai_reasoning_effort_and_set_changes_it() {
    let env = env_with("");
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .args(["--effort", "high", "hi"])
        .assert()
        .success();
    assert_eq!(env.server.last_request().json()["reasoning_effort"], "high");

    // From config.yaml, and `.set reasoning_effort` overrides it for the conversation.
    let env = env_with("reasoning_effort: low\n");
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().arg("hi").assert().success();
    assert_eq!(env.server.last_request().json()["reasoning_effort"], "low");
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .env("LOKI_REASONING_EFFORT", "medium")
        .arg("hi")
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().json()["reasoning_effort"],
        "medium"
    );

    // Without a level nothing is sent: the provider's default holds.
    let env = env_with("");
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().arg("hi").assert().success();
    assert!(
        env.server
            .last_request()
            .json()
            .get("reasoning_effort")
            .is_none()
    );
}

#[test]
fn effort_is_a_claude_thinking_budget_bounded_by_max_tokens() {
    let env = TestEnv::new();
    env.write_config(&format!(
        "model: claude:claude-sonnet-4-5\ntemperature: 0.5\nclients:\n  - type: claude\n    api_base: {}\n    api_key: sk-ant-test\n    models:\n      - name: claude-sonnet-4-5\n        max_output_tokens: 8192\n    extra:\n      retry_base_delay_ms: 10\n",
        env.server.base_url()
    ));
    env.server.push(anthropic::text_stream(&["ok"]));
    env.loki()
        .args(["--effort", "medium", "hi"])
        .assert()
        .success();
    let body = env.server.last_request().json();
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 4096})
    );
    // Thinking refuses a set temperature.
    assert!(body.get("temperature").is_none(), "{body}");

    env.server.push(anthropic::text_stream(&["ok"]));
    env.loki()
        .args(["--effort", "high", "hi"])
        .assert()
        .success();
    let body = env.server.last_request().json();
    assert_eq!(body["thinking"]["budget_tokens"], 8191, "{body}");
}

#[test]
fn an_unknown_effort_level_is_a_usage_error() {
    let env = env_with("");
    let out = env
        .loki()
        .args(["--effort", "max", "hi"])
        .assert()
        .failure();
    assert!(stderr(&out).contains("low"), "{}", stderr(&out));
    assert_eq!(env.server.request_count(), 0);
}

/// The standard config with `fallback_models` and no retries, so the test does not wait.
fn fallback_env(fallbacks: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write_config(&format!(
        "fallback_models: {fallbacks}\n{}",
        default_config(&env.server.base_url()).replace("max_retries: 2", "max_retries: 1")
    ));
    env
}

/// Answers 429 for `gpt-4o-mini`, 503 for `text-only`, and `ok from MODEL` otherwise.
fn overloaded_unless_priced(env: &TestEnv) {
    env.server.respond_for("/", |request| {
        let model = request.json()["model"].as_str().unwrap_or("").to_string();
        match model.as_str() {
            "gpt-4o-mini" => openai::error(429, "slow down", "rate_limit_exceeded"),
            "text-only" => openai::error(503, "overloaded", "server_error"),
            _ => openai::text_stream(&["ok from ", &model]),
        }
    });
}

#[test]
fn an_overloaded_model_hands_the_call_to_the_next_fallback() {
    let env = fallback_env("[fake:text-only, fake:priced]");
    overloaded_unless_priced(&env);
    let out = env
        .loki()
        .args(["--output-format", "stream-json", "hi"])
        .assert()
        .success();
    let text = stdout(&out);
    let events: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let answer: String = events
        .iter()
        .filter(|v| v["type"] == "assistant_delta")
        .filter_map(|v| v["text"].as_str())
        .collect();
    assert_eq!(answer, "ok from priced", "{text}");
    let fallback = events
        .iter()
        .find(|v| v["type"] == "model_fallback")
        .unwrap_or_else(|| panic!("no model_fallback event in {text}"));
    assert_eq!(fallback["from"], "fake:gpt-4o-mini");
    assert_eq!(fallback["to"], "fake:priced");
    assert_eq!(fallback["reason"], "`fake` is rate limiting (HTTP 429)");
    // Each model got its retry before the next was tried, in order.
    let models: Vec<String> = env
        .server
        .requests()
        .iter()
        .map(|r| r.json()["model"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        models,
        [
            "gpt-4o-mini",
            "gpt-4o-mini",
            "text-only",
            "text-only",
            "priced"
        ]
    );

    // In plain text the note goes to stderr and names the model that answered.
    let out = env.loki().arg("hi").assert().success();
    assert!(stdout(&out).contains("ok from priced"));
    let err = stderr(&out);
    assert!(err.contains("answered by fake:priced"), "{err}");
}

#[test]
fn a_request_error_is_not_handed_to_a_fallback() {
    let env = fallback_env("[fake:priced]");
    env.server.respond_for("/", |request| {
        if request.json()["model"] == "gpt-4o-mini" {
            openai::error(400, "bad request", "invalid_request_error")
        } else {
            Reply::json(200, json!({}))
        }
    });
    env.loki().arg("hi").assert().failure();
    assert_eq!(env.server.request_count(), 1);
}

/// The user and assistant messages of the stored session `name`.
fn session_messages(env: &TestEnv, name: &str) -> usize {
    let text = std::fs::read_to_string(env.session_file(name))
        .unwrap_or_else(|e| panic!("session {name}: {e}"));
    let yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    yaml["messages"].as_sequence().map_or(0, Vec::len)
}

/// The names of the stored sessions.
fn session_names(env: &TestEnv) -> Vec<String> {
    let dir = env.config_dir().join("sessions").join("by-name");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn fork_session_continues_in_a_copy_and_leaves_the_original() {
    let env = env_with("");
    env.server.set_default(openai::text_stream(&["ok"]));
    env.loki().args(["-s", "orig", "first"]).assert().success();
    assert_eq!(session_messages(&env, "orig"), 2);

    let out = env
        .loki()
        .args(["-s", "orig", "--fork-session", "second"])
        .assert()
        .success();
    let err = stderr(&out);
    assert_eq!(session_messages(&env, "orig"), 2, "{err}");
    let fork = session_names(&env)
        .into_iter()
        .find(|n| n.starts_with("orig-fork-"))
        .unwrap_or_else(|| panic!("no fork in {:?}: {err}", session_names(&env)));
    assert_eq!(session_messages(&env, &fork), 4);
    // The fork's request carried the original's history.
    let sent = env.server.last_request().json();
    assert_eq!(sent["messages"].as_array().map(Vec::len), Some(3), "{sent}");

    // -C forks the directory's latest session the same way.
    env.loki()
        .args(["-C", "--fork-session", "third"])
        .assert()
        .success();
    assert_eq!(session_messages(&env, &fork), 4);
}

#[test]
fn dot_fork_in_the_repl_names_the_copy() {
    let env = env_with("save_session: true\n");
    env.server.set_default(openai::text_stream(&["ok"]));
    env.loki().args(["-s", "orig", "first"]).assert().success();
    let mut pty = crate::common::pty::Pty::spawn(&env, &["-s", "orig"], &[("NO_COLOR", "1")]);
    pty.expect("orig) ");
    pty.send(".fork copy\r");
    pty.expect("into `copy`");
    pty.expect("copy) ");
    pty.send("second\r");
    pty.expect("ok");
    pty.expect("copy) ");
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
    assert_eq!(session_messages(&env, "orig"), 2);
    assert_eq!(session_messages(&env, "copy"), 4);
}

#[test]
fn dot_diff_shows_the_last_turn_and_the_session() {
    let env = super::checkpoints::env_with_tools();
    env.server
        .respond_for("/v1/chat", super::checkpoints::route);
    let mut pty = crate::common::pty::Pty::spawn(&env, &["--yolo"], &[("NO_COLOR", "1")]);
    pty.expect("mini)> ");
    pty.send(".diff\r");
    pty.expect("changed no files in the last turn");
    pty.expect("mini)> ");
    pty.send("create a\r");
    pty.expect("done");
    pty.expect("mini)> ");
    pty.send("change a and add b\r");
    pty.expect("done");
    pty.expect("mini)> ");
    pty.send(".diff\r");
    let turn = pty.expect("+new");
    assert!(turn.contains("-v1") && turn.contains("+v2"), "{turn:?}");
    assert!(turn.contains("--- /dev/null"), "{turn:?}");
    pty.expect("mini)> ");
    pty.send(".diff session\r");
    let session = pty.expect("+new");
    // Over the session a.txt is new: no `-v1` line, only what it holds now.
    assert!(
        session.contains("+v2") && !session.contains("-v1"),
        "{session:?}"
    );
    pty.expect("mini)> ");
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}

#[test]
fn the_status_line_command_reads_the_state_and_shows_its_first_line() {
    let env = TestEnv::new();
    let script = env.write(
        "status.sh",
        "#!/bin/sh\nread -r state\nmodel=$(printf '%s' \"$state\" | sed 's/.*\"model\":\"\\([^\"]*\\)\".*/\\1/')\nprintf 'STATUS[%s]\\033[31m\\nsecond line\\n' \"$model\"\n",
    );
    env.write_config(&format!(
        "status_line:\n  command: sh {}\n{}",
        script.display(),
        default_config(&env.server.base_url())
    ));
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    let shown = pty.expect(")> ");
    assert!(shown.contains("STATUS[fake:gpt-4o-mini]"), "{shown:?}");
    // Sanitised: the escape is shown, not obeyed; only the first line.
    assert!(
        !shown.contains("\x1b[31m") && !shown.contains("second line"),
        "{shown:?}"
    );
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}

#[test]
fn a_failing_or_slow_status_line_command_is_ignored() {
    let env = TestEnv::new();
    env.write_config(&format!(
        "status_line:\n  command: sleep 5; echo never\n  timeout_ms: 200\n{}",
        default_config(&env.server.base_url())
    ));
    let start = std::time::Instant::now();
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    let shown = pty.expect(")> ");
    assert!(!shown.contains("never"), "{shown:?}");
    assert!(start.elapsed() < std::time::Duration::from_secs(4));
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}

#[test]
fn edit_message_goes_on_from_the_edited_prompt() {
    let env = TestEnv::new();
    let editor = env.write("edit.sh", "#!/bin/sh\nprintf 'changed first\\n' > \"$1\"\n");
    env.write_config(&format!(
        "editor: sh {}\nsave_session: true\n{}",
        editor.display(),
        default_config(&env.server.base_url())
    ));
    env.server.set_default(openai::text_stream(&["ok"]));
    let mut pty = crate::common::pty::Pty::spawn(&env, &["-s", "work"], &[("NO_COLOR", "1")]);
    pty.expect("work) ");
    pty.send("first\r");
    pty.expect("ok");
    pty.expect("work) ");
    pty.send("second\r");
    pty.expect("ok");
    pty.expect("work) ");
    pty.send(".edit message 3\r");
    pty.expect("there is no message 3");
    pty.expect("work) ");
    pty.send(".edit message 1\r");
    pty.expect("back to before message 1");
    pty.expect("work) ");
    let sent = env.server.last_request().json();
    let users: Vec<&str> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(users, ["changed first"], "{sent}");
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
    assert_eq!(session_messages(&env, "work"), 2);
}

/// Keys typed between one command and the next prompt (here while the status-line
/// command runs) reach the line editor as typed: not echoed by the terminal under the
/// prompt, and Enter submits the line instead of becoming a newline in it.
#[test]
fn a_line_typed_before_the_prompt_is_drawn_is_submitted_as_typed() {
    let env = TestEnv::new();
    let started = env.work_dir().join("status-started");
    let script = env.write(
        "status.sh",
        format!(
            "#!/bin/sh\ncat > /dev/null\ntouch {}\nsleep 1\necho READY\n",
            started.display()
        ),
    );
    env.write_config(&format!(
        "status_line:\n  command: sh {}\n  timeout_ms: 5000\n{}",
        script.display(),
        default_config(&env.server.base_url())
    ));
    env.server.push(openai::text_stream(&["first answer"]));
    env.server.push(openai::text_stream(&["second answer"]));
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(")> ");
    let _ = std::fs::remove_file(&started);
    pty.send("first question\r");
    pty.expect("first answer");
    // The next prompt's status line is running: type before the prompt exists.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the status line never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    pty.send("second question\r");
    let shown = pty.expect("second answer");
    assert!(!shown.contains("second question\r\n\r\n"), "{shown:?}");
    let sent = env.server.last_request().json();
    let last = sent["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"], "second question", "{sent}");
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}
