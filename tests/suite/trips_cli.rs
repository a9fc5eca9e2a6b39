//! Issue 56: trips_cli — what a new user hits on the command line: `--rewind` errors that
//! say what is wrong (and a prompt given with it), a reader that closes stdout early, the
//! zsh Alt-e error, built-in tools hidden by `visible_tools` run by their wrappers,
//! `--build-tools -a` with the global tools, and a tool with no output ending the turn.

use std::process::{Command, Stdio};

use serde_json::Value;

use super::checkpoints::{env_with_tools, route};
use crate::common::fake_llm::{Recorded, openai};
use crate::common::{LOKI, TestEnv, stderr, stdout};

/// Every text the model was sent, in every request.
fn sent_texts(env: &TestEnv) -> String {
    env.server
        .requests()
        .iter()
        .map(Recorded::body_str)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn rewind_errors_say_what_is_actually_wrong() {
    let env = env_with_tools();
    env.server.respond_for("/v1/chat", route);

    // A session that does not exist: said so, with how to list the ones that do.
    let out = env
        .loki()
        .args(["-s", "nosuch", "--rewind"])
        .assert()
        .code(1);
    let err = stderr(&out);
    assert!(
        err.contains("no session `nosuch`") && err.contains("loki --list-sessions"),
        "{err}"
    );
    assert!(!err.contains("no turn to rewind"), "{err}");
    assert!(!err.contains("execute_command"), "{err}");
    assert!(
        !env.session_file("nosuch").exists(),
        "no session was created"
    );

    // 0 turns: turns count from 1 (with or without -s).
    for args in [&["--rewind", "0"][..], &["-s", "work", "--rewind", "0"]] {
        let out = env.loki().args(args).assert().code(2);
        let err = stderr(&out);
        assert!(err.contains("turns count from 1"), "{args:?}: {err}");
        assert!(!err.contains("no turn to rewind"), "{args:?}: {err}");
    }

    // A session with nothing left to undo: the old message, without the execute_command
    // line, which only matters once files were put back.
    env.loki()
        .args(["-s", "work", "--yolo", "create a"])
        .assert()
        .success();
    let out = env
        .loki()
        .args(["-s", "work", "--rewind"])
        .assert()
        .success();
    assert!(stdout(&out).contains("a.txt"), "{}", stdout(&out));
    assert!(stderr(&out).contains("execute_command"), "{}", stderr(&out));
    let out = env.loki().args(["-s", "work", "--rewind"]).assert().code(1);
    let err = stderr(&out);
    assert!(err.contains("no turn to rewind"), "{err}");
    assert!(!err.contains("execute_command"), "{err}");

    // The conversation was compacted since the turn (its prompt is no longer where it
    // was): the message names what the command line can do instead.
    env.loki()
        .args(["-s", "work", "--yolo", "create a"])
        .assert()
        .success();
    let file = env.session_file("work");
    let yaml = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, yaml.replace("create a", "a summary of earlier work")).unwrap();
    let a = env.work_dir().join("a.txt");
    let out = env.loki().args(["-s", "work", "--rewind"]).assert().code(1);
    let err = stderr(&out);
    assert!(err.contains("cannot be cut back"), "{err}");
    assert!(
        err.contains("loki -s work") && err.contains(".rewind") && err.contains("Files only"),
        "{err}"
    );
    assert!(!err.contains("rewind the files only"), "{err}");
    assert!(!err.contains("execute_command"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        "v1\n",
        "nothing touched"
    );
}

#[test]
fn a_prompt_given_with_rewind_is_asked_in_the_rewound_session() {
    let env = env_with_tools();
    env.server.respond_for("/v1/chat", route);
    let (a, b) = (env.work_dir().join("a.txt"), env.work_dir().join("b.txt"));
    env.loki()
        .args(["-s", "work", "--yolo", "create a"])
        .assert()
        .success();
    env.loki()
        .args(["-s", "work", "--yolo", "change a and add b"])
        .assert()
        .success();
    let before = env.server.request_count();

    let out = env
        .loki()
        .args(["-s", "work", "--rewind", "1", "try it another way"])
        .assert()
        .success();
    // The answer alone is on stdout; what was restored went to stderr.
    assert_eq!(stdout(&out).trim(), "nothing to do");
    let err = stderr(&out);
    assert!(err.contains("restored") && err.contains("a.txt"), "{err}");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "v1\n");
    assert!(!b.exists());
    // The prompt went to the model without the undone turn, and the session keeps it.
    let asked = env.server.requests()[before..].to_vec();
    assert_eq!(asked.len(), 1, "one request for the prompt");
    let body = asked[0].body_str();
    assert!(body.contains("try it another way"), "{body}");
    assert!(!body.contains("change a and add b"), "{body}");
    let session = std::fs::read_to_string(env.session_file("work")).unwrap();
    assert!(session.contains("try it another way"), "{session}");
    assert!(!session.contains("change a and add b"), "{session}");

    // A rewind that fails asks nothing: exit 1, no request, nothing changed.
    env.loki()
        .args(["-s", "work", "--yolo", "change a and add b"])
        .assert()
        .success();
    std::fs::write(&a, "by hand\n").unwrap();
    let before = env.server.request_count();
    let out = env
        .loki()
        .args(["-s", "work", "--rewind", "1", "never asked"])
        .assert()
        .code(1);
    assert!(stderr(&out).contains("changed since"), "{}", stderr(&out));
    assert_eq!(env.server.request_count(), before);
    assert!(!sent_texts(&env).contains("never asked"));
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "by hand\n");
}

/// Runs loki with `args` and a stdout whose reader is already gone (`| head` that has
/// read all it wanted); the exit status and stderr.
fn with_closed_stdout(env: &TestEnv, args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = env
        .loki_std()
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_reader_that_closes_stdout_early_ends_loki_quietly() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["a saved answer"]));
    env.loki().args(["-s", "work", "hello"]).assert().success();
    env.server
        .push(openai::text_stream(&["an answer nobody reads"]));
    let runs: &[&[&str]] = &[
        &["--export-session", "work"],
        &["--export-session", "work", "--format", "json"],
        &["--list-sessions"],
        &["--list-roles"],
        &["--list-models"],
        &["--info"],
        &["--completions", "zsh"],
        &["--shell-integration", "bash"],
        &["one more question"],
    ];
    for args in runs {
        let (code, err) = with_closed_stdout(&env, args);
        assert!(!err.contains("roken pipe"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(code, Some(0), "{args:?}: {err}");
    }
}

/// The zsh Alt-e widget, called the way zle would, with `zle` and `bindkey` stubbed to
/// record what the widget asks of them; `loki -e` fails (the provider refuses the key).
/// Returns (BUFFER afterwards, the zle calls).
fn run_zsh_widget(env: &TestEnv, shell: &str) -> (String, String) {
    env.server
        .push(openai::error(401, "the key was refused", "invalid_api_key"));
    let script = stdout(
        &env.loki()
            .args(["--shell-integration", "zsh"])
            .assert()
            .success(),
    );
    let dir = tempfile::tempdir().unwrap();
    let integration = dir.path().join("loki.zsh");
    std::fs::write(&integration, script).unwrap();
    let zle_log = dir.path().join("zle.log");
    let bin_dir = std::path::Path::new(LOKI).parent().unwrap().display();
    let driver = format!(
        "export PATH={bin_dir}:$PATH\n\
         zle() {{ printf '%s\\n' \"zle $*\" >> '{log}'; return 0; }}\n\
         bindkey() {{ return 0; }}\n\
         . '{script}'\n\
         BUFFER='what uses the space here'\n\
         _loki_alt_e\n\
         printf '%s' \"$BUFFER\"",
        log = zle_log.display(),
        script = integration.display(),
    );
    let out = Command::new(shell)
        .arg("-c")
        .arg(driver)
        .env_clear()
        .envs(env.env_pairs())
        .current_dir(env.work_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{shell}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        std::fs::read_to_string(&zle_log).unwrap_or_default(),
    )
}

fn installed(shell: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {shell}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_zsh_alt_e_widget_shows_why_the_request_failed() {
    // The widget's body is plain POSIX-ish shell apart from `zle`, which is stubbed: bash
    // runs it everywhere (it is required), zsh too where it is installed.
    assert!(installed("bash"), "bash is required for this test");
    let mut shells = vec!["bash"];
    if installed("zsh") {
        shells.push("zsh");
    } else {
        eprintln!("zsh not installed; the widget ran under bash only");
    }
    for shell in shells {
        let env = TestEnv::new();
        let (buffer, zle) = run_zsh_widget(&env, shell);
        assert_eq!(
            buffer, "what uses the space here",
            "{shell}: the line is kept"
        );
        let message = zle
            .lines()
            .find(|l| l.starts_with("zle -M "))
            .unwrap_or_else(|| panic!("{shell}: no zle -M in {zle:?}"));
        assert!(
            message.contains("error") && message.contains("refused"),
            "{shell}: {message}"
        );
    }
    let script = stdout(
        &TestEnv::new()
            .loki()
            .args(["--shell-integration", "zsh"])
            .assert()
            .success(),
    );
    assert!(script.contains("zle -M"), "{script}");
}

/// The names of the tools a request declared.
fn declared(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

/// A script tool that reads notes.txt through the `fs_cat` built-in's wrapper.
const PEEK_SH: &str = r#"#!/usr/bin/env bash
set -e
# @describe Show the notes.
main() {
    "$LLM_ROOT_DIR/functions/bin/fs_cat" '{"path":"notes.txt"}' >> "$LLM_OUTPUT"
}
"#;

#[test]
fn built_ins_hidden_by_visible_tools_still_run_through_their_wrappers() {
    let env = super::tools::tools_env("visible_tools: [peek.sh]\n");
    env.write("notes.txt", "alpha\n");
    super::tools::write_tool(&env, "peek.sh", PEEK_SH);
    // By name from a shell (what the wrapper runs).
    let out = env
        .loki()
        .args(["--run-tool", "fs_cat", r#"{"path":"notes.txt"}"#])
        .assert()
        .success();
    assert!(stdout(&out).contains("alpha"), "{}", stderr(&out));
    // A script tool calling the wrapper of a hidden built-in; the model is offered the
    // script alone. (The default sandbox does not let a tool run programs from the
    // config directory, so this one runs unconfined.)
    env.server
        .push(openai::tool_call_stream(&[("p", "peek", "{}")]));
    env.server.push(openai::text_stream(&["read it"]));
    let out = env
        .loki()
        .args([
            "--yolo",
            "--sandbox",
            "danger-full-access",
            "show the notes",
        ])
        .assert()
        .success();
    assert_eq!(stdout(&out).trim(), "read it");
    let requests = env.server.requests();
    assert_eq!(declared(&requests[0].json()), ["peek", "task"]);
    let results = super::tools::tool_results(&requests[1].json());
    assert!(results[0].1.contains("alpha"), "{results:?}");
}

const AGENT_TOOLS: &str = r#"#!/usr/bin/env bash
set -euo pipefail

# @cmd Say hello to someone
# @option --name! Who to greet
hello() {
    echo "hello $argc_name" >> "$LLM_OUTPUT"
}
"#;

#[test]
fn build_tools_for_an_agent_declares_its_global_tools_too() {
    let env = TestEnv::new();
    let dir = env.config_dir().join("agents/helper");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.yaml"),
        "name: helper\ndescription: Helps.\ninstructions: You help.\nglobal_tools:\n  - fs_cat\n  - get_current_time\n",
    )
    .unwrap();
    std::fs::write(dir.join("tools.sh"), AGENT_TOOLS).unwrap();
    let out = env
        .loki()
        .args(["--build-tools", "-a", "helper"])
        .assert()
        .success();
    let text = stdout(&out);
    let printed: Vec<String> = serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .map(|spec| spec.unwrap()["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(printed, ["hello", "fs_cat", "get_current_time"], "{text}");
    assert!(
        stderr(&out).contains("1 tool(s) of its own and 2 global tool(s)"),
        "{}",
        stderr(&out)
    );
    // The same declarations a conversation with the agent offers the model.
    env.server.push(openai::text_stream(&["hi"]));
    env.loki().args(["-a", "helper", "hi"]).assert().success();
    // (The conversation adds the user-interaction tools of its own.)
    let mut sent: Vec<String> = declared(&env.server.last_request().json())
        .into_iter()
        .filter(|name| !name.starts_with("user__"))
        .collect();
    sent.sort();
    let mut printed = printed;
    printed.sort();
    assert_eq!(sent, printed);

    // A global tool hidden by visible_tools is named, not silently left out.
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("visible_tools: [fs_cat]\n{cfg}"));
    let out = env
        .loki()
        .args(["--build-tools", "-a", "helper"])
        .assert()
        .code(1);
    assert!(
        stderr(&out).contains(
            "`get_current_time` of agent `helper` does not exist or is hidden by visible_tools"
        ),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("\"name\": \"fs_cat\""));
}

#[test]
fn a_round_of_tools_that_write_nothing_ends_the_turn() {
    let env = super::tools::tools_env("");
    super::tools::write_tool(
        &env,
        "noop.sh",
        "# @describe Does nothing.\nmain() { :; }\n",
    );
    super::tools::write_tool(
        &env,
        "say.sh",
        "# @describe Says something.\nmain() { echo said >> \"$LLM_OUTPUT\"; }\n",
    );
    // Only tools with no output: one request, no follow-up; the round is in the session.
    env.server.push(openai::tool_call_stream(&[
        ("n1", "noop", "{}"),
        ("n2", "noop", "{}"),
    ]));
    env.server.push(openai::text_stream(&["never asked for"]));
    let out = env
        .loki()
        .args(["-s", "quiet", "--yolo", "do nothing"])
        .assert()
        .success();
    assert_eq!(env.server.request_count(), 1, "{}", stderr(&out));
    assert!(!stdout(&out).contains("never asked for"));
    assert!(!stderr(&out).contains("empty answer"), "{}", stderr(&out));
    let session = std::fs::read_to_string(env.session_file("quiet")).unwrap();
    assert!(
        session.contains("DONE") && session.contains("n2"),
        "{session}"
    );

    // The next turn's history is valid: the calls with their results.
    env.server.push(openai::text_stream(&["fine"]));
    env.loki()
        .args(["-s", "quiet", "--yolo", "and now?"])
        .assert()
        .success();
    let results = super::tools::tool_results(&env.server.last_request().json());
    assert_eq!(results.len(), 2, "{results:?}");

    // One tool of the round wrote something: the model reads the results.
    let env = super::tools::tools_env("");
    super::tools::write_tool(
        &env,
        "noop.sh",
        "# @describe Does nothing.\nmain() { :; }\n",
    );
    super::tools::write_tool(
        &env,
        "say.sh",
        "# @describe Says something.\nmain() { echo said >> \"$LLM_OUTPUT\"; }\n",
    );
    env.server.push(openai::tool_call_stream(&[
        ("n1", "noop", "{}"),
        ("s1", "say", "{}"),
    ]));
    env.server.push(openai::text_stream(&["heard it"]));
    let out = env.loki().args(["--yolo", "talk"]).assert().success();
    assert_eq!(env.server.request_count(), 2);
    assert_eq!(stdout(&out).trim(), "heard it");
}
