//! REPL trips: yes/no questions that leave part of a typed word behind, prompts that
//! outlive a hangup, agents without function calling, escalated questions, budgets,
//! knowledge bases listing a file twice, rows wider than the terminal, the Ctrl-O file.
//! Each is driven through the real binary in a pseudo-terminal.

use std::time::{Duration, Instant};

use super::agent_tree::screen_text;
use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::pty::Pty;

const PROMPT: &str = "fake:gpt-4o-mini)> ";

fn start(env: &TestEnv, args: &[&str]) -> Pty {
    let mut pty = Pty::spawn(env, args, &[("NO_COLOR", "1")]);
    pty.expect(PROMPT);
    pty
}

fn write_agent(env: &TestEnv, name: &str, config: &str) {
    let dir = env.config_dir().join("agents").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.yaml"), config).unwrap();
}

fn kill(pty: &Pty, signal: &str) {
    let pid = pty.session.get_process().pid().as_raw().to_string();
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .unwrap();
    assert!(status.success());
}

/// The exit code of the process on `pty` if it ends within `wait` (the process is
/// reaped: drain its output after this, not before).
fn exit_within(pty: &Pty, wait: Duration) -> Option<i32> {
    let deadline = Instant::now() + wait;
    while Instant::now() < deadline {
        let status = format!("{:?}", pty.session.get_process().status());
        // `Ok(Exited(Pid(n), code))` once it ended, `Ok(StillAlive)` before.
        if status.contains("Exited") {
            let code = status
                .rsplit(", ")
                .next()
                .and_then(|s| s.trim_end_matches(')').parse().ok());
            return Some(code.unwrap_or(-1));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

// ----- item 1: `yes⏎` / `no⏎` at a yes/no question -----

/// Answers "Carry the conversation…?" with `typed` (sent as the keys come) and checks
/// that nothing of it reached the model as a message.
fn carry_question_takes_the_whole_word(typed: &[&str], carried: bool) {
    let env = TestEnv::new();
    let mut pty = start(&env, &[]);
    env.server.push(openai::text_stream(&["noted"]));
    pty.send("remember 42\r");
    pty.expect("noted");
    pty.expect(PROMPT);
    pty.send(".session notes\r");
    pty.expect("into session `notes`?");
    for keys in typed {
        pty.send(keys);
        std::thread::sleep(Duration::from_millis(60));
    }
    pty.expect("session: notes");
    pty.expect("notes) ");
    // Whatever was left of the word would be sent by now.
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        env.server.requests().len(),
        1,
        "a leftover became a message"
    );
    env.server.push(openai::text_stream(&["fine"]));
    pty.send("next\r");
    pty.expect("fine");
    let messages = env.server.last_request().json()["messages"].clone();
    let texts: Vec<String> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        texts.contains(&"remember 42".to_string()),
        carried,
        "{texts:?}"
    );
    assert_eq!(texts.last().map(String::as_str), Some("next"), "{texts:?}");
}

#[test]
fn yes_typed_whole_answers_and_leaves_nothing_for_the_prompt() {
    carry_question_takes_the_whole_word(&["yes\r"], true);
}

#[test]
fn no_typed_letter_by_letter_answers_and_leaves_nothing_for_the_prompt() {
    carry_question_takes_the_whole_word(&["N", "o", "\r"], false);
}

// ----- item 2: a signal at "Build it now?" -----

fn signal_at_build_it_now(signal: &str, code: i32) {
    let env = TestEnv::new();
    write_agent(
        &env,
        "kb",
        "instructions: You answer from notes.\ndocuments:\n  - notes.md\n",
    );
    std::fs::write(env.config_dir().join("agents/kb/notes.md"), "PELICAN\n").unwrap();
    let mut pty = start(&env, &[]);
    pty.send(".agent kb\r");
    pty.expect("Build it now?");
    std::thread::sleep(Duration::from_millis(300));
    kill(&pty, signal);
    let ended = exit_within(&pty, Duration::from_secs(3));
    assert_eq!(ended, Some(code), "loki outlived {signal} at the question");
}

#[test]
fn sighup_at_build_it_now_ends_loki() {
    signal_at_build_it_now("HUP", 129);
}

#[test]
fn sigterm_at_build_it_now_ends_loki() {
    signal_at_build_it_now("TERM", 143);
}

// ----- item 3: `.agent` with function calling off -----

#[test]
fn an_agent_is_refused_when_function_calling_is_off() {
    let env = TestEnv::new();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("function_calling_support: false\n{config}"));
    write_agent(
        &env,
        "helper",
        "instructions: You help.\nglobal_tools: [fs_cat]\n",
    );
    let mut pty = start(&env, &[]);
    pty.send(".agent helper\r");
    let mut out = pty.expect("function calling");
    out.push_str(&pty.expect(PROMPT));
    assert!(
        out.contains("error: agent `helper` needs function calling, which is off"),
        "{out:?}"
    );
    assert!(!out.contains("agent: helper"), "{out:?}");
    pty.send(".info agent\r");
    pty.expect("no agent is active");
    pty.expect(PROMPT);
}

// ----- item 8: the Ctrl-O file -----

#[test]
fn ctrl_o_leaves_no_temporary_file() {
    let env = TestEnv::new();
    let tmp = env.root().join("tmp");
    let bin = env.root().join("bin");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    let editor = bin.join("fake-editor");
    std::fs::write(&editor, "#!/bin/sh\nprintf 'from the editor' > \"$1\"\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let editor = editor.display().to_string();
    let tmp_text = tmp.display().to_string();
    let mut pty = Pty::spawn(
        &env,
        &[],
        &[
            ("NO_COLOR", "1"),
            ("EDITOR", &editor),
            ("TMPDIR", &tmp_text),
        ],
    );
    pty.expect(PROMPT);
    pty.send("draft");
    pty.send("\x0f"); // Ctrl-O
    pty.expect("from the editor");
    let left: Vec<String> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("-repl.md"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

// ----- item 5: usage received before a budget stop -----

/// The tool results in a request.
fn tool_results(body: &serde_json::Value) -> usize {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .count()
}

#[test]
fn usage_before_a_budget_stop_is_counted() {
    use serde_json::json;
    let env = TestEnv::new();
    write_agent(
        &env,
        "boss",
        "instructions: You are BOSS.\ncan_spawn_agents: true\nmax_tokens: 1000\n",
    );
    write_agent(
        &env,
        "worker",
        "instructions: You are WORKER.\nglobal_tools: [get_current_time]\n",
    );
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        if system.contains("WORKER") {
            // A tool call whose usage spends the budget: the worker stops before it runs.
            let delta = json!({"tool_calls": [{"index": 0, "id": "t1", "type": "function",
                "function": {"name": "get_current_time", "arguments": "{}"}}]});
            return openai::stream_from_deltas(&[delta], "tool_calls", 900, 200);
        }
        match tool_results(&body) {
            0 => openai::tool_call_stream(&[(
                "s1",
                "agent__spawn",
                r#"{"agent":"worker","prompt":"spend it"}"#,
            )]),
            _ => {
                let text = body.to_string();
                let id = text
                    .split("agent_worker_")
                    .nth(1)
                    .and_then(|rest| rest.split(['"', '\\']).next())
                    .unwrap_or_default()
                    .to_string();
                let args = json!({"id": format!("agent_worker_{id}")}).to_string();
                openai::tool_call_stream(&[("c1", "agent__collect", &args)])
            }
        }
    });
    let mut pty = start(&env, &[]);
    pty.send(".agent boss\r");
    pty.expect("boss>");
    pty.send("go\r");
    pty.expect("budget spent");
    pty.expect("boss>");
    pty.send(".agents\r");
    let listed = pty.expect("spend it");
    assert!(listed.contains("1100 tokens"), "{listed:?}");
    pty.expect("boss>");
    pty.send(".info\r");
    pty.expect("\nusage ");
    let usage = pty.expect("\n");
    assert!(!usage.contains("none yet"), "usage {usage:?}");
}

// ----- item 7: `.help` and `.info` rows fitted to the width -----

/// `text` without escape sequences.
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[test]
fn help_and_info_rows_fit_the_terminal() {
    let env = TestEnv::new();
    let mut pty = start(&env, &[]);
    let _ = pty.session.get_process_mut().set_window_size(60, 24);
    std::thread::sleep(Duration::from_millis(200));
    for (command, last) in [(".help", "leaves loki."), (".info", "usage")] {
        pty.send(command);
        pty.send("\r");
        let out = pty.expect(last);
        let out = format!("{out}{}", pty.expect(PROMPT));
        let text = plain(&out);
        let rows: Vec<&str> = text.split(['\n', '\r']).collect();
        let widest = rows.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(widest < 60, "{command}: a row of {widest} columns:\n{text}");
        assert!(rows.len() > 5, "{command}: {text}");
    }
}

// ----- item 4: escalated questions with colour, and Ctrl-C at one -----

/// The tool results in a request, parsed.
fn results_of(body: &serde_json::Value) -> Vec<serde_json::Value> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let text = m["content"].as_str().unwrap_or_default();
            serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.into()))
        })
        .collect()
}

fn tool_call(name: &str, args: &serde_json::Value) -> crate::common::fake_llm::Reply {
    openai::tool_call_stream(&[("call", name, &args.to_string())])
}

/// A boss (with `extra` settings) that spawns a worker asking "Which colour?" and
/// collects it until it is done.
fn asking_team(extra: &str) -> TestEnv {
    asking_team_with(
        extra,
        "user__input",
        serde_json::json!({"question": "Which colour?"}),
    )
}

/// [`asking_team`] with the worker's question `tool` called with `args`.
fn asking_team_with(extra: &str, tool: &'static str, args: serde_json::Value) -> TestEnv {
    use serde_json::json;
    let env = TestEnv::new();
    write_agent(
        &env,
        "boss",
        &format!("instructions: You are BOSS.\ncan_spawn_agents: true\n{extra}"),
    );
    write_agent(&env, "worker", "instructions: You are WORKER.\n");
    env.server.respond_for("/v1/chat", move |request| {
        let body = request.json();
        let done = results_of(&body);
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        if system.contains("WORKER") {
            return match done.first() {
                None => tool_call(tool, &args),
                Some(answer) => openai::text_stream(&[&format!("colour: {answer}")]),
            };
        }
        let last = done.last().cloned().unwrap_or_default();
        if done.is_empty() {
            return tool_call(
                "agent__spawn",
                &json!({"agent": "worker", "prompt": "paint"}),
            );
        }
        if last["status"] == "completed" {
            return openai::text_stream(&["boss done"]);
        }
        tool_call("agent__collect", &json!({"id": done[0]["id"]}))
    });
    env
}

#[test]
fn a_timed_out_escalated_question_leaves_no_row_with_colour_on() {
    timed_out_question_with_colour(asking_team("escalation_timeout: 2\n"));
    timed_out_question_with_colour(asking_team_with(
        "escalation_timeout: 2\n",
        "user__ask",
        serde_json::json!({"question": "Which colour?", "options": ["red", "blue"]}),
    ));
}

fn timed_out_question_with_colour(env: TestEnv) {
    let mut pty = Pty::spawn(&env, &["-a", "boss"], &[]);
    let mut parser = vt100::Parser::new(24, 80, 1000);
    assert!(pty.drive(&mut parser, Duration::from_secs(15), |s| {
        s.contents().contains("boss>")
    }));
    pty.send("go\r");
    assert!(pty.drive(&mut parser, Duration::from_secs(15), |s| {
        s.contents().contains("Which colour?")
    }));
    assert!(pty.drive(&mut parser, Duration::from_secs(20), |s| {
        s.contents().contains("boss done")
    }));
    pty.drive(&mut parser, Duration::from_millis(800), |_| false);
    let text = screen_text(&mut parser);
    let open: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("Which colour?") && !l.contains("no longer asked"))
        .collect();
    assert!(open.is_empty(), "{open:?}\n{text}");
}

#[test]
fn ctrl_c_at_an_escalated_question_stops_the_whole_turn() {
    let env = asking_team("");
    let mut pty = Pty::spawn(&env, &["-a", "boss"], &[("NO_COLOR", "1")]);
    pty.expect("boss>");
    pty.send("go\r");
    pty.expect("Which colour?");
    std::thread::sleep(Duration::from_millis(500));
    let boss_calls = || {
        env.server
            .requests()
            .iter()
            .filter(|r| r.json()["messages"][0].to_string().contains("You are BOSS"))
            .count()
    };
    let before = boss_calls();
    pty.send("\x03");
    pty.expect("boss>");
    // The boss was not asked again once the question was given up: its turn stopped.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(boss_calls(), before, "the root's turn carried on");
}

// ----- item 9: a secret added with `.vault add` reaches MCP servers at once -----

#[test]
fn a_secret_added_in_the_repl_reaches_mcp_servers_without_a_restart() {
    let env = TestEnv::new();
    // No vault yet; its password comes from a file once it is made.
    crate::common::write_private(&env.config_dir().join("pw"), "correct horse battery");
    let functions = env.config_dir().join("functions");
    std::fs::create_dir_all(&functions).unwrap();
    std::fs::write(
        functions.join("mcp.json"),
        serde_json::json!({"mcpServers": {"test": {"type": "stdio",
            "command": super::mcp::server_bin(),
            "env": {"SECRET_TOKEN": "{{API_TOKEN}}"}}}})
        .to_string(),
    )
    .unwrap();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "vault_password_file: pw\nenabled_mcp_servers: test\nmcp_start_wait: 30\n{cfg}"
    ));
    let ask = |env: &TestEnv| {
        env.server.push(openai::tool_call_stream(&[(
            "c1",
            "test_env_value",
            r#"{"name":"SECRET_TOKEN"}"#,
        )]));
        env.server.push(openai::text_stream(&["seen"]));
    };
    let mut pty = start(&env, &[]);
    // Before: the placeholder has nothing to take its value from.
    ask(&env);
    pty.send("token?\r");
    pty.expect("seen");
    pty.expect(PROMPT);
    let before = super::mcp::tool_result(&env.server.last_request().json());
    assert_ne!(before, "«secret:API_TOKEN»", "{before}");
    pty.send(".vault add API_TOKEN\r");
    pty.expect("Enter the secret value:");
    pty.send("tok-added-while-running\r");
    pty.expect("added to the vault");
    pty.expect(PROMPT);
    ask(&env);
    pty.send("token now?\r");
    pty.expect("seen");
    pty.expect(PROMPT);
    assert_eq!(
        super::mcp::tool_result(&env.server.last_request().json()),
        "«secret:API_TOKEN»",
        "the server did not get the new secret"
    );
    pty.send(".exit\r");
    pty.read_to_end();
}

// ----- item 9: widening, then narrowing, with a wrapped input line -----

#[test]
fn widening_then_narrowing_draws_a_wrapped_input_line_once() {
    for (typed, sizes) in [
        (100, [120u16, 50]),
        (60, [120, 50]),
        (100, [160, 80]),
        (150, [200, 40]),
    ] {
        widen_then_narrow(typed, &sizes);
    }
}

fn widen_then_narrow(typed: usize, sizes: &[u16]) {
    let env = TestEnv::new();
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    let mut screen = vt100::Parser::new(24, 80, 0);
    assert!(pty.drive(&mut screen, Duration::from_secs(15), |s| {
        s.contents().contains("for commands")
    }));
    pty.send(&"x".repeat(typed));
    assert!(pty.drive(&mut screen, Duration::from_secs(5), |s| {
        s.contents().matches('x').count() >= typed
    }));
    for &cols in sizes {
        let _ = pty.session.get_process_mut().set_window_size(cols, 24);
        screen.screen_mut().set_size(24, cols);
        pty.drive(&mut screen, Duration::from_millis(800), |_| false);
    }
    pty.send("y");
    assert!(pty.drive(&mut screen, Duration::from_secs(5), |s| {
        s.contents().contains("xy")
    }));
    pty.drive(&mut screen, Duration::from_millis(300), |_| false);
    let (_, cols) = screen.screen().size();
    let prompts = screen
        .screen()
        .rows(0, cols)
        .filter(|r| r.contains("> x"))
        .count();
    assert_eq!(
        prompts,
        1,
        "{typed} typed, sizes {sizes:?}; the prompt once:\n{}",
        screen.screen().contents()
    );
    pty.send("\x15.exit\r");
    pty.read_to_end();
}

/// In tmux, which re-wraps its lines on a resize (as most terminals do; `vt100` above
/// does not): 79 cells of prompt and input at 80 columns, widened to 160 and narrowed to
/// 40, leave the cursor on the last column of the same row, where a terminal that does
/// not reflow would clamp it too.
#[test]
fn widening_then_narrowing_in_tmux_draws_the_input_line_once() {
    let found = std::process::Command::new("sh")
        .args(["-c", "command -v tmux"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(found, "`tmux` is needed by this test (.ci/run installs it)");
    let env = TestEnv::new();
    let socket = env.root().join("resize.sock");
    let tmux = |args: &[&str]| {
        let out = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut command = vec!["env".to_string(), "-i".to_string()];
    for (k, v) in env.env_pairs() {
        command.push(format!("{k}={v}"));
    }
    command.extend(["NO_COLOR=1".into(), "TERM=screen".into()]);
    command.push(crate::common::LOKI.to_string());
    let command: Vec<&str> = command.iter().map(String::as_str).collect();
    let mut args = vec!["new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "-c"];
    let work = env.work_dir().display().to_string();
    args.push(&work);
    args.extend(&command);
    tmux(&args);
    let screen = |tmux: &dyn Fn(&[&str]) -> String| tmux(&["capture-pane", "-t", "t", "-p"]);
    let wait_for = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let shown = screen(&tmux);
            if shown.contains(what) {
                return shown;
            }
            assert!(Instant::now() < deadline, "no {what:?} in:\n{shown}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait_for(PROMPT.trim_end());
    let typed = "x".repeat(79 - PROMPT.chars().count());
    tmux(&["send-keys", "-t", "t", "-l", &typed]);
    wait_for(&typed);
    for cols in ["160", "40"] {
        tmux(&["resize-window", "-t", "t", "-x", cols, "-y", "24"]);
        std::thread::sleep(Duration::from_millis(700));
    }
    tmux(&["send-keys", "-t", "t", "-l", "y"]);
    wait_for("xy");
    std::thread::sleep(Duration::from_millis(300));
    let shown = screen(&tmux);
    assert_eq!(
        shown.matches(PROMPT.trim_end()).count(),
        1,
        "the prompt once:\n{shown}"
    );
    let _ = tmux(&["kill-server"]);
}
