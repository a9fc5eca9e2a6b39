//! First run, the CLI and errors (issue 14, items 12–16).

use serde_json::Value;

use super::tools::{tool_results, tools_env, write_tool};
use crate::common::fake_llm::openai;
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr, stdout};

/// Every long flag `loki --help` prints.
fn help_flags(env: &TestEnv) -> Vec<String> {
    let out = env.loki().arg("--help").assert().success();
    let mut flags: Vec<String> = stdout(&out)
        .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == '<' || c == '=')
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| {
            w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
                .to_string()
        })
        .collect();
    flags.sort();
    flags.dedup();
    flags
}

#[test]
fn every_cli_flag_and_config_key_is_documented() {
    let env = TestEnv::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let usage = std::fs::read_to_string(format!("{root}/docs/usage.md")).unwrap();
    let config = std::fs::read_to_string(format!("{root}/docs/configuration.md")).unwrap();
    let flags = help_flags(&env);
    assert!(flags.len() > 20, "{flags:?}");
    let undocumented: Vec<_> = flags
        .iter()
        .filter(|f| !usage.contains(&format!("`{f}")) && !usage.contains(&format!(", {f}")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "flags missing from docs/usage.md: {undocumented:?}"
    );

    let (_, not_yet) = config
        .split_once("### Accepted now")
        .expect("section of keys nothing acts on");
    let not_yet = not_yet.split("\n## ").next().unwrap_or_default();
    let mut missing = Vec::new();
    for (key, _) in loki::config::keys::KEYS {
        let cell = format!("`{key}`");
        if !config.contains(&cell) {
            missing.push(*key);
        }
        // Keys that work must not be listed as "nothing acts on them yet".
        let works = !matches!(*key, "agent_session" | "vault_password_file" | "serve_addr");
        assert!(
            !(works && not_yet.contains(&cell)),
            "`{key}` works but docs/configuration.md says nothing acts on it"
        );
    }
    assert!(
        missing.is_empty(),
        "keys missing from docs/configuration.md: {missing:?}"
    );
}

/// The long flags of the `loki …` commands a Markdown text shows: in each line, every
/// command segment (split at `|`, `&&`, `||`, `;`, `$(`) that starts with `loki`, after
/// any `NAME=value` assignments, up to a `--` that ends loki's own options.
fn flags_in_examples(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line
            .replace("&&", "|")
            .replace("||", "|")
            .replace("$(", "|");
        for segment in line.split(['|', ';', '`', '(']) {
            let mut words = segment
                .split_whitespace()
                .skip_while(|w| w.contains('=') && !w.starts_with('-'))
                .peekable();
            if words.next() != Some("loki") {
                continue;
            }
            for word in words.take_while(|w| *w != "--") {
                let Some(name) = word.strip_prefix("--") else {
                    continue;
                };
                let name: String = name
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                if !name.is_empty() {
                    found.push(format!("--{name}"));
                }
            }
        }
    }
    found
}

#[test]
fn every_flag_in_a_docs_example_is_a_real_flag() {
    let env = TestEnv::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let mut real = help_flags(&env);
    // Accepted, not in `--help`: the Claude Agent SDK's own flags and the wrapper.
    real.extend(
        [
            "--sandbox-exec",
            "--output-format",
            "--input-format",
            "--verbose",
        ]
        .map(String::from),
    );
    let mut files = vec![format!("{root}/README.md")];
    for entry in std::fs::read_dir(format!("{root}/docs")).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path.display().to_string());
        }
    }
    let mut checked = 0;
    let mut unknown = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for flag in flags_in_examples(&text) {
            checked += 1;
            if !real.contains(&flag) {
                unknown.push(format!("{flag} in {file}"));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} flags found in the docs' examples"
    );
    unknown.sort();
    unknown.dedup();
    assert!(
        unknown.is_empty(),
        "flags the docs show that loki does not have: {unknown:#?}"
    );
}

#[test]
fn flags_are_found_in_commands_not_in_other_programs() {
    let found = flags_in_examples(
        "git diff --staged | loki --role x \"msg\"\n`OPENAI_API_KEY=k loki -m a --no-stream hi -- --not-this`\nls --all",
    );
    assert_eq!(found, ["--role", "--no-stream"]);
}

// ---- item 14 ----

#[test]
fn info_describes_the_role_and_session_given() {
    let env = TestEnv::new();
    let out = env
        .loki()
        .args(["--info", "-r", "shell"])
        .assert()
        .success();
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["role", "shell"]),
        "{text}"
    );
    assert!(text.contains("role_prompt"), "{text}");
    let out = env
        .loki()
        .args(["--info", "-r", "no-such-role"])
        .assert()
        .failure();
    assert!(stderr(&out).contains("no-such-role"), "{}", stderr(&out));

    env.server.push(openai::text_stream(&["noted"]));
    env.loki()
        .args(["-s", "demo", "remember this"])
        .assert()
        .success();
    let out = env.loki().args(["--info", "-s", "demo"]).assert().success();
    let text = stdout(&out);
    let row = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .map(|l| l[name.len()..].trim().to_string())
    };
    assert_eq!(row("session").as_deref(), Some("demo"), "{text}");
    assert_eq!(row("session_messages").as_deref(), Some("2"), "{text}");
    let out = env.loki().args(["--info", "-s", "nope"]).assert().failure();
    assert!(stderr(&out).contains("nope"), "{}", stderr(&out));
}

#[test]
fn closing_stdout_early_does_not_print_interrupted() {
    use std::io::Read;
    let env = TestEnv::new();
    env.server.push(openai::long_stream(20000));
    // As `loki go | head -c 10`, with loki's own exit status checked (not the pipe's).
    let mut child = env
        .loki_std()
        .arg("go")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 10];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!err.contains("interrupted"), "{err}");
}

#[test]
fn a_call_no_one_can_approve_is_not_called_declined_by_the_user() {
    let env = tools_env("");
    env.server.push(openai::tool_call_stream(&[(
        "w1",
        "fs_write",
        r#"{"path":"out.txt","contents":"hello"}"#,
    )]));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().arg("write hello to out.txt").assert().success();
    let results = tool_results(&env.server.last_request().json());
    let text = &results[0].1;
    assert!(!text.contains("user declined"), "{text}");
    assert!(text.contains("no one is at a terminal"), "{text}");
    assert!(!env.work_dir().join("out.txt").exists());
}

#[test]
fn messages_md_header_has_no_empty_parentheses() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("save: true\n{cfg}"));
    env.server.push(openai::text_stream(&["plain"]));
    env.loki().arg("no role here").assert().success();
    env.server.push(openai::text_stream(&["framed"]));
    env.loki()
        .args(["-r", "shell", "with a role"])
        .assert()
        .success();
    let log = std::fs::read_to_string(env.root().join("cache/loki/messages.md")).unwrap();
    let headers: Vec<&str> = log.lines().filter(|l| l.starts_with("# CHAT:")).collect();
    assert_eq!(headers.len(), 2, "{log}");
    assert!(headers[0].ends_with(']'), "{log}");
    assert!(!log.contains("()"), "{log}");
    assert!(headers[1].ends_with("] (shell)"), "{log}");
}

#[test]
fn list_models_prints_ids_a_pipe_can_cut() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap().replace(
        "      - name: text-only\n",
        "      - name: text-only\n      - name: emb\n        type: embedding\n",
    );
    env.write_config(&cfg);
    let out = env.loki().arg("--list-models=all").assert().success();
    let text = stdout(&out);
    let ids: Vec<&str> = text
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert!(ids.contains(&"fake:gpt-4o-mini"), "{text}");
    assert!(ids.contains(&"fake:emb"), "{text}");
    for id in &ids {
        assert!(
            !id.contains(' ') && id.starts_with("fake:"),
            "not a plain id: {id:?}"
        );
    }
    assert!(text.contains("fake:emb\tembedding\n"), "{text}");
}

#[test]
fn build_tools_checks_hidden_files_and_names_them() {
    let env = tools_env("visible_tools: [shown.sh]\n");
    let ok = "#!/usr/bin/env bash\n# @describe Say hi.\nmain() { echo hi; }\n";
    write_tool(&env, "shown.sh", ok);
    write_tool(&env, "hidden.sh", ok);
    write_tool(&env, "broken.py", "def run(x):\n    \"\"\"Broken.\"\"\"\n");
    let out = env.loki().arg("--build-tools").assert().code(1);
    let err = stderr(&out);
    assert!(err.contains("broken.py:1:"), "{err}");
    let note = err
        .lines()
        .find(|l| l.contains("hidden by visible_tools"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        note.contains("hidden.sh") && note.contains("broken.py"),
        "{note}"
    );
    assert!(!note.contains("shown.sh"), "{note}");
    let printed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(printed["name"], "shown");
}

#[test]
fn the_execute_menu_takes_single_key_shortcuts() {
    let env = TestEnv::new();
    env.server.push(openai::text_json("echo loki-shortcut-ran"));
    let mut pty = Pty::spawn(
        &env,
        &["-e", "say hi"],
        &[("NO_COLOR", "1"), ("SHELL", "/bin/sh")],
    );
    pty.expect("echo loki-shortcut-ran");
    pty.expect("quit");
    pty.send("e");
    let out = pty.read_to_end();
    assert!(out.contains("loki-shortcut-ran\r\n"), "{out:?}");
    assert_eq!(pty.exit_code(), 0);

    env.server.push(openai::text_json("echo never-run"));
    let mut pty = Pty::spawn(
        &env,
        &["-e", "say hi"],
        &[("NO_COLOR", "1"), ("SHELL", "/bin/sh")],
    );
    pty.expect("quit");
    pty.send("q");
    let out = pty.read_to_end();
    assert!(!out.contains("never-run\r\n"), "{out:?}");
    assert_eq!(pty.exit_code(), 0);
}

// ---- item 13 ----

#[test]
fn a_refused_connection_is_not_retried() {
    let env = TestEnv::new();
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let cfg = std::fs::read_to_string(env.config_path()).unwrap().replace(
        &env.server.base_url(),
        &format!("http://127.0.0.1:{port}/v1"),
    );
    env.write_config(&cfg);
    let started = std::time::Instant::now();
    let out = env.loki().arg("hi").assert().failure();
    let err = stderr(&out);
    assert!(err.contains("cannot reach"), "{err}");
    assert!(!err.contains("retrying"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

// ---- item 15 ----

/// The default config plus a model `fake:tiny` that accepts `max` input tokens.
fn env_with_limit(max: u64) -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap().replace(
        "      - name: text-only\n",
        &format!("      - name: text-only\n      - name: tiny\n        max_input_tokens: {max}\n"),
    );
    env.write_config(&format!("compression_threshold: 100000\n{cfg}"));
    env
}

#[test]
fn over_max_input_tokens_is_refused_before_sending() {
    let env = env_with_limit(60);
    let long = "tell me about the weather in this town ".repeat(30);
    let out = env
        .loki()
        .args(["-m", "fake:tiny", &long])
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(err.contains("Exceed max_input_tokens limit"), "{err}");
    assert!(err.contains("accepts 60 (max_input_tokens)"), "{err}");
    assert_eq!(env.server.request_count(), 0);
    // Under the limit it is sent.
    env.server.push(openai::text_stream(&["fine"]));
    env.loki()
        .args(["-m", "fake:tiny", "short"])
        .assert()
        .success();
    assert_eq!(env.server.request_count(), 1);
}

#[test]
fn a_session_over_max_input_tokens_is_compressed_first() {
    let env = env_with_limit(300);
    let mut yaml = String::from("model: fake:tiny\nmessages:\n");
    for i in 0..5 {
        let words = format!("turn {i} ") + &"lorem ipsum dolor sit amet ".repeat(8);
        yaml.push_str(&format!("- role: user\n  content: '{words}'\n"));
        yaml.push_str(&format!("- role: assistant\n  content: 'answer {words}'\n"));
    }
    let path = env.config_dir().join("sessions/long.yaml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, yaml).unwrap();
    env.server.push(openai::text_json("a short summary"));
    env.server.push(openai::text_stream(&["answered"]));
    let out = env
        .loki()
        .args(["-s", "long", "one more question"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "answered\n");
    let requests = env.server.requests();
    assert_eq!(requests.len(), 2, "a summary request, then the question");
    let last = requests[1].json();
    let sent = last["messages"].to_string();
    assert!(sent.contains("a short summary"), "{sent}");
    assert!(!sent.contains("turn 0 "), "{sent}");
}

// ---- item 12 ----

#[test]
fn cancelling_the_setup_exits_0_with_one_quiet_line() {
    let env = TestEnv::bare();
    let mut pty = Pty::spawn(&env, &["hi"], &[("NO_COLOR", "1")]);
    pty.expect("Which provider");
    pty.send("\x1b"); // Esc
    let screen = pty.read_to_end();
    assert_eq!(pty.exit_code(), 0, "{screen:?}");
    assert!(
        screen.contains("setup cancelled; nothing was written"),
        "{screen:?}"
    );
    assert!(!screen.contains("error"), "{screen:?}");
    assert!(!env.config_path().exists());
}

#[test]
fn setup_lists_the_models_an_openai_compatible_server_reports() {
    let env = TestEnv::bare();
    env.server.push_for(
        "/v1/models",
        openai::models_list(&["m-one", "m-two", "text-embed"]),
    );
    env.server
        .push_for("/v1/chat", openai::text_stream(&["set up with m-two"]));
    let base = env.server.base_url();
    let mut pty = Pty::spawn(&env, &["hi"], &[("NO_COLOR", "1")]);
    pty.expect("Which provider");
    pty.send("other");
    pty.expect("other OpenAI-compatible");
    pty.send("\r");
    pty.expect("Client name");
    pty.send("\r"); // `local`
    pty.expect("API base URL");
    pty.send(&format!("{base}\r"));
    pty.expect("API key");
    pty.send("sk-local\r");
    pty.expect("reported by the server");
    pty.expect("text-embed");
    pty.send("\x1b[B\r"); // from m-one down to m-two
    pty.expect("encrypted vault");
    pty.send("n\r");
    let screen = pty.read_to_end();
    assert!(screen.contains("set up with m-two"), "{screen:?}");
    assert_eq!(pty.exit_code(), 0);

    let config = std::fs::read_to_string(env.config_path()).unwrap();
    assert!(config.contains("model: local:m-two"), "{config}");
    for id in ["m-one", "m-two", "text-embed"] {
        assert!(config.contains(&format!("- name: {id}")), "{config}");
    }
    let listing = env
        .server
        .requests()
        .into_iter()
        .find(|r| r.path.starts_with("/v1/models"))
        .expect("the setup asked for the models");
    assert_eq!(listing.header("authorization"), Some("Bearer sk-local"));
}
