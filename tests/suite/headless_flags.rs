//! Claude Code's headless flags in every run (issue 54, item 7): `-p/--print`,
//! `--allowedTools`, `--disallowedTools`, `--max-turns`, `--max-budget-usd` (and the
//! `max_cost` key), `--append-system-prompt`, `--permission-mode` by Claude's names, and
//! `--output-format json --compat claude`. Each through the real binary against the fake
//! provider, whose recorded requests show what the model was sent.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::fake_llm::openai;
use crate::common::{TestEnv, stderr, stdout};

/// An environment whose model may call `tools`.
fn env_with_tools(tools: &str) -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: {tools}\n{cfg}"));
    env
}

/// The stream-json events of a run's stdout.
fn events(out: &assert_cmd::assert::Assert) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}")))
        .collect()
}

/// The `tool_call_finished` event of `call_id`.
fn finished<'a>(events: &'a [Value], call_id: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_call_finished" && e["call_id"] == call_id)
        .unwrap_or_else(|| panic!("no tool_call_finished for {call_id}: {events:#?}"))
}

fn command_call(id: &str, command: &str) -> (String, String, String) {
    (
        id.to_string(),
        "execute_command".to_string(),
        json!({ "command": command }).to_string(),
    )
}

fn tool_calls(calls: &[(String, String, String)]) -> crate::common::fake_llm::Reply {
    let borrowed: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    openai::tool_call_stream(&borrowed)
}

#[test]
fn print_answers_a_prompt_given_as_arguments() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["Four."]));
    let out = env.loki().args(["-p", "what is 2+2?"]).assert().success();
    assert_eq!(stdout(&out).trim(), "Four.");
    let body = env.server.last_request().json();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"], "what is 2+2?", "{body:#}");
}

#[test]
fn print_reads_the_prompt_from_stdin() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["Piped answer."]));
    let out = env
        .loki()
        .arg("--print")
        .write_stdin("summarise this piped text\n")
        .assert()
        .success();
    assert_eq!(stdout(&out).trim(), "Piped answer.");
    let body = env.server.last_request().json();
    assert!(
        body.to_string().contains("summarise this piped text"),
        "{body:#}"
    );
}

#[test]
fn print_without_any_prompt_is_one_line_and_exit_1() {
    let env = TestEnv::new();
    let out = env.loki().arg("-p").write_stdin("").assert().code(1);
    assert!(
        stderr(&out).contains("-p needs a prompt"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.server.request_count(), 0);
}

#[test]
fn append_system_prompt_ends_the_system_message() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["Bonjour."]));
    env.loki()
        .args([
            "-p",
            "--prompt",
            "You are terse.",
            "--append-system-prompt",
            "Always answer in French.",
            "hello",
        ])
        .assert()
        .success();
    let body = env.server.last_request().json();
    let system = &body["messages"][0];
    assert_eq!(system["role"], "system", "{body:#}");
    let text = system["content"].as_str().unwrap();
    assert!(text.starts_with("You are terse."), "{text}");
    assert!(
        text.trim_end().ends_with("Always answer in French."),
        "{text}"
    );
}

#[test]
fn allowed_tools_rule_runs_a_matching_command_unasked_and_refuses_another() {
    let env = env_with_tools("execute_command");
    env.server.push(tool_calls(&[
        command_call("c1", "echo allowed-ran"),
        command_call("c2", "touch made-it"),
    ]));
    env.server.push(openai::text_stream(&["Done."]));
    let out = env
        .loki()
        .args([
            "-p",
            "--allowedTools",
            "Bash(echo:*) Read",
            "--output-format",
            "stream-json",
            "go",
        ])
        .timeout(Duration::from_secs(30))
        .assert()
        .success();
    let all = events(&out);
    let echo = finished(&all, "c1");
    assert_eq!(echo["ok"], true, "{echo}");
    assert!(echo["result"].as_str().unwrap().contains("allowed-ran"));
    let touch = finished(&all, "c2");
    assert_eq!(touch["ok"], false, "{touch}");
    assert_eq!(touch["error"]["kind"], "refused", "{touch}");
    assert!(!env.work_dir().join("made-it").exists());
}

/// Runs loki with `args` while the model calls `touch made-it` (stream-json output),
/// and checks the call was refused and nothing made.
fn touch_refused(args: &[&str]) -> TestEnv {
    let env = env_with_tools("execute_command,fs_cat");
    env.server
        .push(tool_calls(&[command_call("c1", "touch made-it")]));
    env.server.push(openai::text_stream(&["Could not."]));
    let out = env.loki().args(args).assert().success();
    let refused = finished(&events(&out), "c1").clone();
    assert_eq!(refused["ok"], false, "{refused}");
    assert!(!env.work_dir().join("made-it").exists());
    env
}

#[test]
fn disallowed_tools_refuse_even_with_yolo_by_rule_or_by_name() {
    let env = touch_refused(&[
        "--yolo",
        "--disallowedTools",
        "Bash(touch:*)",
        "--output-format",
        "stream-json",
        "make a file",
    ]);

    // A bare name refuses every call of the tool.
    env.server
        .push(tool_calls(&[command_call("c2", "echo hi")]));
    env.server.push(openai::text_stream(&["No shell."]));
    let out = env
        .loki()
        .args([
            "--yolo",
            "--disallowedTools",
            "Read,Bash",
            "--output-format",
            "stream-json",
            "say hi",
        ])
        .assert()
        .success();
    let refused = finished(&events(&out), "c2").clone();
    assert_eq!(refused["ok"], false, "{refused}");
}

#[test]
fn max_turns_stops_after_that_many_tool_rounds_with_exit_1() {
    let env = env_with_tools("execute_command");
    env.server
        .push(tool_calls(&[command_call("c1", "touch one")]));
    env.server
        .push(tool_calls(&[command_call("c2", "touch two")]));
    env.server.push(openai::text_stream(&["never asked"]));
    let out = env
        .loki()
        .args(["-p", "--yolo", "--max-turns", "1", "make files"])
        .assert()
        .code(1);
    assert!(env.work_dir().join("one").exists());
    assert!(!env.work_dir().join("two").exists());
    assert_eq!(env.server.request_count(), 2);
    let err = stderr(&out);
    assert!(err.contains("reached max turns (1)"), "{err}");
    let errors = err.lines().filter(|l| l.starts_with("error")).count();
    assert_eq!(errors, 1, "{err}");
}

#[test]
fn max_budget_usd_stops_a_priced_run_with_exit_1() {
    let env = TestEnv::new();
    // 1000 in at $2/M and 500 out at $8/M: $0.006.
    env.server
        .push(openai::text_stream_with_usage(&["Costly."], 1000, 500));
    let out = env
        .loki()
        .args(["-p", "-m", "fake:priced", "--max-budget-usd", "0.001", "hi"])
        .assert()
        .code(1);
    let err = stderr(&out);
    assert!(err.contains("exceeded USD budget (0.001)"), "{err}");
    assert!(err.contains("max_cost $0.0010 reached"), "{err}");
}

#[test]
fn max_cost_caps_a_plain_run_from_config_and_from_the_environment() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("max_cost: 0.001\n{cfg}"));
    env.server
        .push(openai::text_stream_with_usage(&["Costly."], 1000, 500));
    let out = env
        .loki()
        .args(["-m", "fake:priced", "hi"])
        .assert()
        .code(1);
    assert!(
        stderr(&out).contains("budget spent: max_cost"),
        "{}",
        stderr(&out)
    );

    env.write_config(&cfg);
    env.server
        .push(openai::text_stream_with_usage(&["Costly."], 1000, 500));
    let out = env
        .loki()
        .env("LOKI_MAX_COST", "0.001")
        .args(["-m", "fake:priced", "hi"])
        .assert()
        .code(1);
    assert!(
        stderr(&out).contains("budget spent: max_cost"),
        "{}",
        stderr(&out)
    );

    // Under the cap, the run succeeds.
    env.server
        .push(openai::text_stream_with_usage(&["Cheap."], 10, 5));
    env.loki()
        .env("LOKI_MAX_COST", "1")
        .args(["-m", "fake:priced", "hi"])
        .assert()
        .success();
}

#[test]
fn permission_mode_takes_claude_s_names() {
    let env = env_with_tools("fs_write");
    env.server.push(openai::tool_call_stream(&[(
        "w",
        "fs_write",
        r#"{"path":"notes.md","contents":"new notes\n"}"#,
    )]));
    env.server.push(openai::text_stream(&["Written."]));
    env.loki()
        .args(["-p", "--permission-mode", "acceptEdits", "write the notes"])
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("notes.md")).unwrap(),
        "new notes\n"
    );
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .args(["-p", "--permission-mode", "bypassPermissions", "hi"])
        .assert()
        .success();
}

#[test]
fn json_with_compat_claude_prints_claude_s_result_object() {
    let env = TestEnv::new();
    env.server
        .push(openai::text_stream_with_usage(&["Hello", " world"], 12, 2));
    let out = env
        .loki()
        .args(["-p", "--output-format", "json", "--compat", "claude", "hi"])
        .assert()
        .success();
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    let result: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(result["type"], "result", "{result:#}");
    assert_eq!(result["subtype"], "success", "{result:#}");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], "Hello world");
    assert_eq!(result["num_turns"], 1);
    assert_eq!(result["usage"]["input_tokens"], 12);
    assert_eq!(result["usage"]["output_tokens"], 2);
    assert!(result["total_cost_usd"].is_number(), "{result:#}");
    assert!(result["duration_ms"].is_u64(), "{result:#}");
    assert!(
        result["session_id"].as_str().is_some_and(|s| !s.is_empty()),
        "{result:#}"
    );
}

#[test]
fn json_with_compat_claude_reports_max_turns_as_its_subtype() {
    let env = env_with_tools("execute_command");
    env.server
        .push(tool_calls(&[command_call("c1", "touch one")]));
    env.server
        .push(tool_calls(&[command_call("c2", "touch two")]));
    let out = env
        .loki()
        .args([
            "-p",
            "--yolo",
            "--max-turns",
            "1",
            "--output-format",
            "json",
            "--compat",
            "claude",
            "make files",
        ])
        .assert()
        .code(1);
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["subtype"], "error_max_turns", "{result:#}");
    assert_eq!(result["num_turns"], 2, "{result:#}");
    // Its session id is the history entry the run was kept in: `--resume` takes it.
    let id = result["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    env.server.push(openai::text_stream(&["Went on."]));
    let out = env
        .loki()
        .args(["--resume", &id, "go on"])
        .assert()
        .success();
    assert!(stdout(&out).contains("Went on."), "{id}: {}", stderr(&out));
    // The message names the flag the user gave, not the setting it became.
    let said = result["result"].as_str().unwrap_or_default();
    assert!(said.contains("--max-turns 1"), "{said}");
    assert!(!said.contains("max_tool_rounds"), "{said}");
}

#[test]
fn stream_json_with_compat_claude_prints_claude_s_stream_messages() {
    let env = TestEnv::new();
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_write",
        r#"{"path":"made.txt","contents":"hi"}"#,
    )]));
    env.server.push(openai::text_stream(&["Wrote it."]));
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: fs_write\n{cfg}"));
    let out = env
        .loki()
        .args([
            "-p",
            "--output-format",
            "stream-json",
            "--compat",
            "claude",
            "--allowedTools",
            "Write",
            "write made.txt",
        ])
        .assert()
        .success();
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let types: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(types.first(), Some(&"system"), "{types:?}");
    assert_eq!(types.last(), Some(&"result"), "{types:?}");
    // The tool call in Claude's shape, and its result, between them.
    let tool_use = lines
        .iter()
        .filter(|l| l["type"] == "assistant")
        .flat_map(|l| {
            l["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|block| block["type"] == "tool_use")
        .unwrap_or_else(|| panic!("no tool_use in {lines:?}"));
    assert_eq!(tool_use["name"], "Write");
    assert_eq!(tool_use["input"]["file_path"], "made.txt");
    let result = lines.last().unwrap();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["result"], "Wrote it.");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("made.txt")).unwrap(),
        "hi"
    );
}

#[test]
fn claude_s_stream_json_print_refuses_loki_flags_it_cannot_honour_and_fails_like_a_one_shot() {
    let env = TestEnv::new();
    let stream = ["-p", "--output-format", "stream-json", "--compat", "claude"];
    // loki's own run flags are refused, not dropped.
    for extra in [
        ["-f", "notes.txt"],
        ["-s", "work"],
        ["--prompt", "Be brief."],
    ] {
        let out = env
            .loki()
            .args(stream)
            .args(extra)
            .arg("look")
            .assert()
            .code(2);
        assert!(
            stderr(&out).contains("cannot be used with --compat claude"),
            "{}",
            stderr(&out)
        );
    }
    // A turn that fails is the process's failure: an error line, exit status 1, and the
    // `result` message still says what happened.
    env.server
        .set_default(openai::error(401, "bad key", "invalid_request_error"));
    let out = env.loki().args(stream).arg("hi").assert().code(1);
    assert!(stderr(&out).contains("error:"), "{}", stderr(&out));
    let last: Value = serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(last["subtype"], "error_during_execution", "{last}");
    // --append-system-prompt is added once.
    env.server.set_default(openai::text_stream(&["ok"]));
    env.loki()
        .args(stream)
        .args(["--append-system-prompt", "APPX", "hi"])
        .assert()
        .success();
    let sent = env.server.last_request().json().to_string();
    assert_eq!(sent.matches("APPX").count(), 1, "{sent}");
}

/// Claude Code's documentation writes the flags after the prompt (`claude -p "query"
/// --output-format json`): loki's long options there are options, not prompt words — a
/// deny rule written last still denies; the prompt keeps its words in order.
#[test]
fn long_options_after_the_prompt_are_options_and_the_prompt_keeps_its_words() {
    let env = touch_refused(&[
        "--yolo",
        "-p",
        "make a file",
        "--disallowedTools",
        "Bash(touch:*)",
        "--output-format",
        "stream-json",
        "please",
    ]);
    let body = env.server.requests()[0].json();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap()["content"],
        "make a file please",
        "{body}"
    );

    // Short options and unknown long ones stay words of the prompt; `--` keeps the rest.
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .args(["explain", "grep", "-r", "--color", "--", "--model"])
        .assert()
        .success();
    let body = env.server.last_request().json();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap()["content"],
        "explain grep -r --color -- --model",
        "{body}"
    );
}

/// `--compat claude` shapes json and stream-json output: where it would change nothing it
/// is refused (exit 2), not dropped.
#[test]
fn compat_claude_where_it_changes_nothing_is_a_usage_error() {
    let env = TestEnv::new();
    let out = env
        .loki()
        .args(["-p", "--compat", "claude", "hi"])
        .assert()
        .code(2);
    assert!(
        stderr(&out).contains("--compat claude shapes --output-format json or stream-json"),
        "{}",
        stderr(&out)
    );
    let out = env
        .loki()
        .args([
            "--compat",
            "claude",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .write_stdin("")
        .assert()
        .code(2);
    assert!(
        stderr(&out).contains("--input-format stream-json"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.server.request_count(), 0);
}

/// Claude Code offers every tool; loki none until `enabled_tools` names some. Where
/// nothing does, `--allowedTools` offers the tools it allows, so they are not allowed in
/// vain; where `enabled_tools` is set, it decides.
#[test]
fn allowed_tools_are_offered_when_nothing_names_the_tools() {
    let env = TestEnv::new();
    env.server
        .push(tool_calls(&[command_call("c1", "touch made-it")]));
    env.server.push(openai::text_stream(&["Made."]));
    env.loki()
        .args(["-p", "make a file", "--allowedTools", "Bash(touch:*)"])
        .assert()
        .success();
    let names = crate::common::tool_names(&env.server.requests()[0].json());
    assert!(names.iter().any(|n| n == "execute_command"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("fs_")), "{names:?}");
    assert!(env.work_dir().join("made-it").exists());

    let env = env_with_tools("fs_cat");
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .args(["-p", "hi", "--allowedTools", "Bash"])
        .assert()
        .success();
    let tools = env.server.requests()[0].json()["tools"].to_string();
    assert!(!tools.contains("execute_command"), "{tools}");
}
