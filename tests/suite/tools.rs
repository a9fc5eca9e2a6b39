//! Function calling: the tool loop, the built-in tools, approval and confinement.

use serde_json::{Value, json};

use crate::common::fake_llm::openai;
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr, stdout};

/// A test environment whose configuration enables every tool.
pub(super) fn tools_env(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: all\n{extra}{cfg}"));
    env
}

/// The tool messages of a request: `(tool_call_id, content)`.
pub(super) fn tool_results(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_read_runs_without_asking_and_its_result_goes_back() {
    let env = tools_env("");
    env.write("notes.txt", "alpha\nbeta\n");
    env.server.push(openai::tool_call_stream(&[(
        "call_1",
        "fs_read",
        r#"{"path":"notes.txt"}"#,
    )]));
    env.server
        .push(openai::text_stream(&["The file has two lines."]));
    let out = env.loki().arg("what is in notes.txt?").assert().success();
    assert_eq!(stdout(&out), "The file has two lines.\n");
    assert!(
        stderr(&out).contains("fs_read path=notes.txt"),
        "{}",
        stderr(&out)
    );

    let requests = env.server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].json();
    let declared: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(declared.contains(&"fs_read") && declared.contains(&"execute_command"));
    let second = requests[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["tool_calls"][0]["function"]["name"], "fs_read");
    assert_eq!(
        tool_results(&second),
        [(
            "call_1".to_string(),
            "     1\talpha\n     2\tbeta\n".to_string()
        )]
    );
}

#[test]
fn without_enabled_tools_nothing_is_declared() {
    let env = TestEnv::new();
    env.loki().arg("hi").assert().success();
    assert!(env.server.last_request().json().get("tools").is_none());
    // A model without function calling gets no tools even when they are enabled.
    let env = tools_env("");
    env.loki()
        .args(["-m", "fake:text-only", "hi"])
        .assert()
        .success();
    assert!(env.server.last_request().json().get("tools").is_none());
}

#[test]
fn writes_are_refused_without_a_terminal_and_the_run_goes_on() {
    let env = tools_env("");
    env.server.push(openai::tool_call_stream(&[(
        "w1",
        "fs_write",
        r#"{"path":"out.txt","contents":"hello"}"#,
    )]));
    env.server
        .push(openai::text_stream(&["I could not write it."]));
    let out = env.loki().arg("write hello to out.txt").assert().success();
    assert_eq!(stdout(&out), "I could not write it.\n");
    assert!(!env.work_dir().join("out.txt").exists());
    let results = tool_results(&env.server.last_request().json());
    let error: Value = serde_json::from_str(&results[0].1).unwrap();
    assert!(
        error["tool_call_error"]
            .as_str()
            .unwrap()
            .contains("declined"),
        "{error}"
    );
    assert!(stderr(&out).contains("fs_write failed"), "{}", stderr(&out));
}

#[test]
fn yolo_approves_writes_and_commands() {
    let env = tools_env("");
    env.server.push(openai::tool_call_stream(&[
        (
            "w1",
            "fs_write",
            r#"{"path":"dir/out.txt","contents":"hello\n"}"#,
        ),
        (
            "x1",
            "execute_command",
            r#"{"command":"cat dir/out.txt; echo oops >&2; exit 3"}"#,
        ),
    ]));
    env.server.push(openai::text_stream(&["Done."]));
    env.loki().args(["--yolo", "go"]).assert().success();
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("dir/out.txt")).unwrap(),
        "hello\n"
    );
    let results = tool_results(&env.server.last_request().json());
    assert_eq!(results[0].0, "w1");
    assert!(
        results[0].1.contains("wrote 6 bytes to dir/out.txt"),
        "{results:?}"
    );
    // Both calls of the round ran; a failing command is a result, not an error.
    assert_eq!(results[1].0, "x1");
    assert!(
        results[1].1.contains("[stderr]\noops") && results[1].1.contains("[exit code: 3]"),
        "{results:?}"
    );
}

#[test]
fn paths_outside_the_working_tree_need_approval() {
    let env = tools_env("");
    std::fs::write(env.work_dir().join("../secret.txt"), "top secret").unwrap();
    env.server.push(openai::tool_call_stream(&[(
        "r1",
        "fs_cat",
        r#"{"path":"../secret.txt"}"#,
    )]));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().arg("read it").assert().success();
    let results = tool_results(&env.server.last_request().json());
    assert!(!results[0].1.contains("top secret"), "{results:?}");
    assert!(results[0].1.contains("declined"), "{results:?}");
}

#[test]
fn bad_arguments_are_reported_to_the_model() {
    let env = tools_env("deny_tools: [fs_rm]\n");
    env.write("keep.txt", "x");
    env.server.push(openai::tool_call_stream(&[
        ("b", "fs_read", "{not json"),
        ("c", "fs_read", r#"{"offset":2}"#),
        ("d", "fs_rm", r#"{"path":"keep.txt"}"#),
    ]));
    env.server.push(openai::text_stream(&["sorry"]));
    env.loki().args(["--yolo", "x"]).assert().success();
    let results = tool_results(&env.server.last_request().json());
    let errors: Vec<String> = results
        .iter()
        .map(|(_, c)| {
            serde_json::from_str::<Value>(c).unwrap()["tool_call_error"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(errors[0].contains("not valid JSON"), "{errors:?}");
    assert!(
        errors[1].contains("missing string argument `path`"),
        "{errors:?}"
    );
    assert!(
        errors[2]
            .contains("disabled by the user (deny_tools in config.yaml, or --disallowedTools)"),
        "{errors:?}"
    );
    assert!(env.work_dir().join("keep.txt").exists());
}

#[test]
fn the_loop_stops_at_max_tool_rounds() {
    let env = tools_env("max_tool_rounds: 2\n");
    env.server
        .set_default(openai::tool_call_stream(&[("t", "get_current_time", "{}")]));
    // Issue 26 item 2: a run stopped by the limit is a failure naming it.
    let out = env
        .loki()
        .args(["-s", "t", "what time is it?"])
        .assert()
        .code(1);
    assert_eq!(env.server.requests().len(), 2);
    let err = stderr(&out);
    assert!(err.contains("stopped after 2 model calls"), "{err}");
    assert!(err.contains("max_tool_rounds = 2"), "{err}");
    // Headless: `turn_aborted` with the reason, not `turn_finished`.
    let out = env
        .loki()
        .args(["--output-format", "stream-json", "what time is it?"])
        .assert()
        .code(1);
    let events = stdout(&out);
    let last: Value = serde_json::from_str(events.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "turn_aborted", "{events}");
    assert!(last.to_string().contains("max_tool_rounds"), "{last}");
    assert!(!events.contains("turn_finished"), "{events}");
    // The unanswered call got a result, so the saved history is valid to send again.
    env.server.set_default(openai::text_stream(&["12:00"]));
    env.server.clear_requests();
    env.loki().args(["-s", "t", "go on"]).assert().success();
    let messages = env.server.last_request().json()["messages"].clone();
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "assistant", "tool", "user"]
    );
    assert!(messages[4]["content"].as_str().unwrap().contains("not run"));
}

#[test]
fn tool_rounds_are_saved_in_the_session() {
    let env = tools_env("");
    env.write("a.txt", "A");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_cat",
        r#"{"path":"a.txt"}"#,
    )]));
    env.server.push(openai::text_stream(&["It says A."]));
    env.loki()
        .args(["-s", "t", "read a.txt"])
        .assert()
        .success();
    env.server.push(openai::text_stream(&["Yes."]));
    env.loki().args(["-s", "t", "sure?"]).assert().success();
    let messages = env.server.last_request().json()["messages"].clone();
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
    assert_eq!(
        messages[2],
        json!({"role": "tool", "tool_call_id": "c1", "content": "A"})
    );
}

#[test]
fn the_terminal_asks_and_remembers_always() {
    let env = tools_env("");
    env.server.push(openai::tool_call_stream(&[(
        "w1",
        "fs_write",
        r#"{"path":"a.txt","contents":"one\n"}"#,
    )]));
    env.server.push(openai::tool_call_stream(&[(
        "w2",
        "fs_write",
        r#"{"path":"a.txt","contents":"two\n"}"#,
    )]));
    env.server.push(openai::tool_call_stream(&[(
        "w3",
        "fs_write",
        r#"{"path":"b.txt","contents":"three\n"}"#,
    )]));
    env.server.push(openai::text_stream(&["All written."]));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("> ");
    pty.send("write the files\r");
    pty.expect("+one");
    pty.expect("wants to create a.txt");
    pty.expect("Run it?");
    pty.send("\r"); // yes
    pty.expect("-one");
    pty.expect("+two");
    pty.expect("wants to overwrite a.txt");
    pty.expect("Run it?");
    pty.send("\x1b[B\r"); // always
    pty.expect("All written.");
    pty.expect("> ");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("a.txt")).unwrap(),
        "two\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("b.txt")).unwrap(),
        "three\n",
        "no third question after always"
    );
    pty.send(".results\r");
    pty.expect("── fs_write {\"path\":\"b.txt\"");
    pty.expect("wrote 6 bytes to b.txt");
    pty.expect("> ");
    pty.send(".exit\r");
    pty.read_to_end();
}

#[test]
fn the_terminal_can_refuse_with_a_message_for_the_model() {
    let env = tools_env("");
    env.server.push(openai::tool_call_stream(&[(
        "x1",
        "execute_command",
        r#"{"command":"rm -rf build"}"#,
    )]));
    env.server.push(openai::text_stream(&["Understood."]));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("> ");
    pty.send("clean up\r");
    pty.expect("wants to run `rm -rf build`");
    pty.expect("Run it?");
    pty.send("\x1b[B\x1b[B\x1b[B\r"); // no, and tell the model why
    pty.expect("Tell the model:");
    pty.send("keep the build directory\r");
    pty.expect("Understood.");
    pty.expect("> ");
    let results = tool_results(&env.server.last_request().json());
    assert!(
        results[0].1.contains("keep the build directory"),
        "{results:?}"
    );
    pty.send(".exit\r");
    pty.read_to_end();
}

pub(super) fn write_tool(env: &TestEnv, file: &str, text: &str) {
    let dir = env.config_dir().join("functions/tools");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(file), text).unwrap();
}

pub(super) const GREET_SH: &str = r#"#!/usr/bin/env bash
set -e
# @describe Greet someone.
# @env GREETING=Hello The greeting word
# @option --name! Who to greet
# @option --extra* More names
# @flag --loud Shout it
main() {
    text="$GREETING, $argc_name"
    for n in "${argc_extra[@]}"; do text="$text and $n"; done
    if [[ "$argc_loud" == 1 ]]; then text="${text^^}"; fi
    echo "$text ($LLM_TOOL_NAME)" >> "$LLM_OUTPUT"
}
eval "$(argc --argc-eval "$0" "$@")"
"#;

#[test]
fn bash_script_tools_are_declared_and_run() {
    let env = tools_env("");
    write_tool(&env, "greet.sh", GREET_SH);
    write_tool(
        &env,
        "fail.sh",
        "# @describe Always fails.\nmain() { echo 'no luck' >&2; exit 4; }\n",
    );
    env.server.push(openai::tool_call_stream(&[
        (
            "g",
            "greet",
            r#"{"name":"Ada","extra":["Bob","Cy"],"loud":true}"#,
        ),
        ("f", "fail", "{}"),
    ]));
    env.server.push(openai::text_stream(&["Greeted."]));
    env.loki().args(["--yolo", "greet Ada"]).assert().success();
    let requests = env.server.requests();
    let tools = requests[0].json()["tools"].clone();
    let greet = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "greet")
        .unwrap()
        .clone();
    assert_eq!(greet["function"]["description"], "Greet someone.");
    assert_eq!(greet["function"]["parameters"]["required"], json!(["name"]));
    let results = tool_results(&requests[1].json());
    assert_eq!(results[0].1, "HELLO, ADA AND BOB AND CY (greet)\n");
    let error: Value = serde_json::from_str(&results[1].1).unwrap();
    assert_eq!(
        error,
        json!({"tool_call_error": "Tool call 'fail' exited with code 4", "stderr": "no luck"})
    );
}

#[test]
fn bash_tool_options_left_out_take_their_declared_defaults() {
    let env = tools_env("");
    write_tool(
        &env,
        "count.sh",
        "# @describe Count.\n# @option --times=3 How many\n# @option --mood[=happy|sad] Mood\n\
         main() { echo \"times=$argc_times mood=$argc_mood\" >> \"$LLM_OUTPUT\"; }\n",
    );
    let out = env
        .loki()
        .args(["--yolo", "--run-tool", "count", "{}"])
        .assert()
        .success();
    assert_eq!(stdout(&out).trim(), "times=3 mood=happy");
    let out = env
        .loki()
        .args([
            "--yolo",
            "--run-tool",
            "count",
            r#"{"times":"5","mood":"sad"}"#,
        ])
        .assert()
        .success();
    assert_eq!(stdout(&out).trim(), "times=5 mood=sad");
    // A failing script's stderr reaches the person running it from the shell.
    write_tool(
        &env,
        "fail.sh",
        "# @describe Always fails.\nmain() { echo 'Error: file not found: config.json' >&2; exit 4; }\n",
    );
    let out = env
        .loki()
        .args(["--yolo", "--run-tool", "fail", "{}"])
        .assert()
        .code(1);
    let err = stderr(&out);
    assert!(err.contains("exited with code 4"), "{err}");
    assert!(err.contains("Error: file not found: config.json"), "{err}");
    // A person runs the tool: a model that cannot call functions does not matter.
    let out = env
        .loki()
        .args([
            "-m",
            "fake:text-only",
            "--yolo",
            "--run-tool",
            "count",
            "{}",
        ])
        .assert()
        .success();
    assert_eq!(stdout(&out).trim(), "times=3 mood=happy");
}

#[test]
fn script_tools_ask_first() {
    let env = tools_env("");
    write_tool(&env, "greet.sh", GREET_SH);
    env.server.push(openai::tool_call_stream(&[(
        "g",
        "greet",
        r#"{"name":"Ada"}"#,
    )]));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().arg("greet Ada").assert().success();
    let results = tool_results(&env.server.last_request().json());
    assert!(results[0].1.contains("declined"), "{results:?}");
}

#[test]
fn python_script_tools_get_keyword_arguments() {
    assert!(
        std::process::Command::new("python3")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "python3 is required for this test (.ci/run needs it for the client SDKs too)"
    );
    let env = tools_env("auto_approve_tools: [area]\n");
    write_tool(
        &env,
        "area.py",
        r#"from typing import Literal, Optional

def run(width: float, height: float, unit: Literal["cm", "m"] = "m", label: Optional[str] = None) -> str:
    """Area of a rectangle.

    Args:
        width: Width
        height: Height
        unit: Unit of both sides
        label: Optional label
    """
    return f"{label or 'area'}: {width * height} {unit}^2"
"#,
    );
    env.server.push(openai::tool_call_stream(&[(
        "a",
        "area",
        r#"{"width":2,"height":3.5}"#,
    )]));
    env.server.push(openai::text_stream(&["7 m²"]));
    env.loki().arg("area?").assert().success();
    let results = tool_results(&env.server.last_request().json());
    assert_eq!(results[0].1, "area: 7.0 m^2");
}

#[test]
fn build_tools_prints_declarations_and_names_bad_files() {
    let env = tools_env("");
    write_tool(&env, "greet.sh", GREET_SH);
    let out = env.loki().arg("--build-tools").assert().success();
    let printed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(printed["name"], "greet");
    assert_eq!(
        printed["parameters"]["properties"]["extra"],
        json!({"type": "array", "items": {"type": "string"}, "description": "More names"})
    );
    write_tool(&env, "broken.py", "def run(x):\n    \"\"\"Broken.\"\"\"\n");
    let out = env.loki().arg("--build-tools").assert().code(1);
    assert!(
        stderr(&out).contains("broken.py:1: parameter `x` of run() has no type hint"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn repeating_the_same_call_trips_the_loop_alert() {
    let env = tools_env("");
    for _ in 0..3 {
        env.server.push(openai::tool_call_stream(&[(
            "t",
            "fs_ls",
            r#"{"path":"."}"#,
        )]));
    }
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().arg("list").assert().success();
    let results = tool_results(&env.server.last_request().json());
    assert_eq!(results.len(), 3);
    assert!(!results[1].1.contains("loop detected"), "{results:?}");
    assert!(
        results[2].1.contains("tool-call loop detected"),
        "{results:?}"
    );
}

#[test]
fn web_search_goes_to_the_configured_backend() {
    let env = tools_env("");
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "web_search: tavily\nweb_search_url: {}\n{cfg}",
        env.server.base_url()
    ));
    env.server.push(openai::tool_call_stream(&[(
        "s",
        "web_search",
        r#"{"query":"rust 2027 edition"}"#,
    )]));
    env.server.push(crate::common::fake_llm::Reply::json(
        200,
        json!({"answer": "Not announced.", "results": [
            {"title": "Rust blog", "url": "https://blog.rust-lang.org/", "content": "News\nabout Rust"}
        ]}),
    ));
    env.server.push(openai::text_stream(&["Nothing yet."]));
    env.loki()
        .env("TAVILY_API_KEY", "tvly-test")
        .args(["--yolo", "news?"])
        .assert()
        .success();
    let requests = env.server.requests();
    let search = &requests[1];
    assert_eq!(search.path_only(), "/v1/search", "base_url ends in /v1");
    assert_eq!(search.header("authorization"), Some("Bearer tvly-test"));
    assert_eq!(search.json()["query"], "rust 2027 edition");
    let results = tool_results(&requests[2].json());
    assert_eq!(
        results[0].1,
        "Not announced.\n\n- [Rust blog](https://blog.rust-lang.org/)\n  News about Rust\n"
    );
}

#[test]
fn tool_output_stays_out_of_the_debug_log() {
    let env = tools_env("");
    env.write(".env.local", "DB_PASSWORD=hunter2-secret");
    env.server.push(openai::tool_call_stream(&[(
        "r",
        "fs_cat",
        r#"{"path":".env.local"}"#,
    )]));
    env.server.push(openai::text_stream(&["ok"]));
    let log = env.dir.path().join("loki.log");
    env.loki()
        .env("LOKI_LOG_LEVEL", "debug")
        .env("LOKI_LOG_FILE", &log)
        .arg("read it")
        .assert()
        .success();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("bytes of tool output"), "{text}");
    assert!(!text.contains("hunter2"), "tool output leaked into the log");
    // The model still got it.
    assert!(
        tool_results(&env.server.last_request().json())[0]
            .1
            .contains("hunter2")
    );
}

#[test]
fn ctrl_c_during_a_tool_keeps_the_history_valid() {
    let env = tools_env("");
    env.server.push(openai::tool_call_stream(&[(
        "x",
        "execute_command",
        r#"{"command":"sleep 30"}"#,
    )]));
    env.server.push(openai::text_stream(&["Next."]));
    let mut pty = Pty::spawn(&env, &["--yolo"], &[("NO_COLOR", "1")]);
    pty.expect("> ");
    pty.send("wait a bit\r");
    pty.expect("execute_command command=sleep 30");
    std::thread::sleep(std::time::Duration::from_millis(300));
    pty.send("\x03");
    pty.expect("(interrupted)");
    pty.expect("> ");
    pty.send("go on\r");
    pty.expect("Next.");
    pty.expect("> ");
    let messages = env.server.last_request().json()["messages"].clone();
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "user"]);
    assert!(
        messages[2]["content"]
            .as_str()
            .unwrap()
            .contains("cancelled by the user")
    );
    pty.send(".exit\r");
    pty.read_to_end();
}

#[test]
fn a_session_remembers_its_enabled_tools() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("save_session: true\n{cfg}"));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("> ");
    pty.send(".session work\r");
    pty.expect("work) ");
    pty.send(".set enabled_tools fs_read,fs_ls\r");
    pty.expect("active: fs_ls, fs_read");
    pty.expect("work) ");
    pty.send("hi\r");
    pty.expect("Hello from fake");
    pty.expect("work) ");
    pty.send(".exit\r");
    pty.read_to_end();
    let state = std::fs::read_to_string(env.session_file("work")).unwrap();
    assert!(state.contains("enabled_tools: fs_read,fs_ls"), "{state}");

    env.loki().args(["-s", "work", "again"]).assert().success();
    let tools: Vec<String> = env.server.last_request().json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    // `task` comes with any tools (delegation).
    assert_eq!(tools, ["fs_ls", "fs_read", "task"]);
}

/// `fs_edit` through the real binary: a string that occurs twice or not at all is
/// reported to the model without asking anyone; a unique one is asked about with the
/// diff as the preview, and once allowed the file holds the change.
#[test]
fn fs_edit_replaces_one_exact_string_after_showing_the_diff() {
    use std::io::{BufReader, Write};
    use std::process::Stdio;
    let env = tools_env("");
    std::fs::write(env.work_dir().join("lib.rs"), "let a = 1;\nlet b = 1;\n").unwrap();
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        let results = tool_results(&body);
        match results.len() {
            0 => openai::tool_call_stream(&[
                (
                    "e1",
                    "fs_edit",
                    r#"{"path":"lib.rs","old_string":"= 1","new_string":"= 2"}"#,
                ),
                (
                    "e2",
                    "fs_edit",
                    r#"{"path":"lib.rs","old_string":"let c","new_string":"x"}"#,
                ),
            ]),
            2 => openai::tool_call_stream(&[(
                "e3",
                "fs_edit",
                r#"{"path":"lib.rs","old_string":"let b = 1","new_string":"let b = 2"}"#,
            )]),
            _ => openai::text_stream(&["edited"]),
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
        r#"{{"type":"user","message":{{"role":"user","content":"change b"}}}}"#
    )
    .unwrap();
    let seen = super::headless::read_events_until(&mut stdout, "tool_call_approval_requested");
    let asked = seen.last().unwrap();
    assert_eq!(
        asked["call_id"], "e3",
        "only the edit that can apply is asked: {asked}"
    );
    let preview = asked["preview"].as_str().expect("a diff");
    assert!(
        preview.contains("-let b = 1;") && preview.contains("+let b = 2;"),
        "{preview}"
    );
    writeln!(
        stdin,
        r#"{{"type":"approval","call_id":"e3","decision":"allow"}}"#
    )
    .unwrap();
    super::headless::read_events_until(&mut stdout, "turn_finished");
    drop(stdin);
    assert!(child.wait().unwrap().success());
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("lib.rs")).unwrap(),
        "let a = 1;\nlet b = 2;\n"
    );
    let requests = env.server.requests();
    let first_results = tool_results(&requests[1].json());
    assert!(
        first_results[0].1.contains("occurs 2 times"),
        "{first_results:?}"
    );
    assert!(
        first_results[1].1.contains("was not found"),
        "{first_results:?}"
    );
    let declared = requests[0].json()["tools"].to_string();
    assert!(
        declared.contains("\"fs_edit\""),
        "offered with enabled_tools: all"
    );
}
