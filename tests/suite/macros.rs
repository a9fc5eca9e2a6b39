//! Macros: `macros/<name>.yaml` run with `--macro` and `.macro`, their variables, their
//! isolation from the REPL's conversation, failing steps, `--list-macros`, the built-ins.

use serde_json::json;

use crate::common::fake_llm::openai;
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr, stdout};

const PROMPT: &str = "fake:gpt-4o-mini)> ";

/// A macro with a required, a defaulted and a rest variable: it switches the model, sets
/// a system prompt and asks two questions.
const VARS_MACRO: &str = r#"variables:
  - name: model
  - name: tone
    default: plain
  - name: question
    rest: true
steps:
  - .model fake:{{model}}
  - .prompt Answer in a {{tone}} way.
  - "first: {{question}}"
  - then explain it
"#;

fn write_macro(env: &TestEnv, name: &str, yaml: &str) {
    let dir = env.config_dir().join("macros");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.yaml")), yaml).unwrap();
}

#[test]
fn macro_with_variables_runs_from_the_cli() {
    let env = TestEnv::new();
    write_macro(&env, "ask", VARS_MACRO);
    env.server.push(openai::text_stream(&["answer one"]));
    env.server.push(openai::text_stream(&["answer two"]));
    let out = env
        .loki()
        .args([
            "--macro",
            "ask",
            "text-only",
            "terse",
            "why",
            "is",
            "sky",
            "blue?",
        ])
        .assert()
        .success();
    let text = stdout(&out);
    assert!(
        text.contains("answer one") && text.contains("answer two"),
        "{text}"
    );
    let err = stderr(&out);
    assert!(err.contains(">> .model fake:text-only"), "{err}");
    let requests = env.server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].json();
    assert_eq!(first["model"], "text-only");
    assert_eq!(
        first["messages"],
        json!([
            {"role": "system", "content": "Answer in a terse way."},
            {"role": "user", "content": "first: why is sky blue?"}
        ])
    );
    let second = requests[1].json();
    assert_eq!(second["model"], "text-only");
    assert_eq!(
        second["messages"],
        json!([
            {"role": "system", "content": "Answer in a terse way."},
            {"role": "user", "content": "first: why is sky blue?"},
            {"role": "assistant", "content": "answer one"},
            {"role": "user", "content": "then explain it"}
        ])
    );
}

#[test]
fn macro_defaults_fill_missing_arguments() {
    let env = TestEnv::new();
    write_macro(
        &env,
        "greet",
        "variables:\n  - name: who\n    default: world\n  - name: rest\n    rest: true\n    default: nothing more\nsteps:\n  - \"hello {{who}}, {{rest}}\"\n",
    );
    env.loki().args(["--macro", "greet"]).assert().success();
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([{"role": "user", "content": "hello world, nothing more"}])
    );
    env.loki()
        .args(["--macro", "greet", "you"])
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([{"role": "user", "content": "hello you, nothing more"}])
    );
}

#[test]
fn missing_required_variable_is_a_usage_error() {
    let env = TestEnv::new();
    write_macro(&env, "ask", VARS_MACRO);
    let out = env.loki().args(["--macro", "ask"]).assert().code(2);
    let err = stderr(&out);
    assert!(
        err.contains("missing value for variable `model`")
            && err.contains("usage: ask <model> [tone] <question>..."),
        "{err}"
    );
    assert_eq!(env.server.request_count(), 0);

    // Flags that shape a conversation the macro does not use are refused.
    let out = env
        .loki()
        .args(["--macro", "ask", "-r", "shell", "x", "y"])
        .assert()
        .code(2);
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.server.request_count(), 0);

    let out = env.loki().args(["--macro", "nope"]).assert().code(2);
    assert!(
        stderr(&out).contains("unknown macro `nope`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_failing_step_stops_the_macro_and_is_named() {
    let env = TestEnv::new();
    write_macro(
        &env,
        "bad-role",
        "steps:\n  - hello\n  - .role no-such-role\n  - never sent\n",
    );
    let out = env.loki().args(["--macro", "bad-role"]).assert().code(1);
    let err = stderr(&out);
    assert!(
        err.contains("stopped at step 2 (`.role no-such-role`)"),
        "{err}"
    );
    assert_eq!(env.server.request_count(), 1);
    assert!(!env.server.last_request().body_str().contains("never sent"));

    let env = TestEnv::new();
    write_macro(&env, "down", "steps:\n  - first question\n  - never sent\n");
    env.server
        .set_default(openai::error(500, "the server broke", "server_error"));
    let out = env.loki().args(["--macro", "down"]).assert().code(1);
    let err = stderr(&out);
    assert!(
        err.contains("stopped at step 1 (`first question`)") && err.contains("the server broke"),
        "{err}"
    );
    assert!(
        env.server
            .requests()
            .iter()
            .all(|r| !r.body_str().contains("never sent"))
    );
}

#[test]
fn interactive_only_commands_are_refused_in_a_macro() {
    let env = TestEnv::new();
    write_macro(&env, "leave", "steps:\n  - .exit\n  - never sent\n");
    let out = env.loki().args(["--macro", "leave"]).assert().code(1);
    let err = stderr(&out);
    assert!(
        err.contains("step 1 (`.exit`)") && err.contains("cannot be used in a macro"),
        "{err}"
    );
    assert_eq!(env.server.request_count(), 0);
}

#[test]
fn list_macros_shows_user_and_builtin_macros() {
    let env = TestEnv::new();
    write_macro(&env, "zeta", "steps: [hi]\n");
    let out = env.loki().arg("--list-macros").assert().success();
    assert_eq!(stdout(&out), "generate-commit-message\nzeta\n");

    // LOKI_MACROS_DIR moves the directory.
    let moved = env.root().join("moved-macros");
    std::fs::create_dir_all(&moved).unwrap();
    std::fs::write(
        moved.join("elsewhere.yaml"),
        "steps: [from the moved dir]\n",
    )
    .unwrap();
    let dir = moved.display().to_string();
    let out = env
        .loki()
        .env("LOKI_MACROS_DIR", &dir)
        .arg("--list-macros")
        .assert()
        .success();
    assert_eq!(stdout(&out), "elsewhere\ngenerate-commit-message\n");
    env.loki()
        .env("LOKI_MACROS_DIR", &dir)
        .args(["--macro", "elsewhere"])
        .assert()
        .success();
    assert!(
        env.server
            .last_request()
            .body_str()
            .contains("from the moved dir")
    );
}

#[test]
fn a_long_macro_of_settings_stops_on_sigterm() {
    let env = TestEnv::new();
    let macros = env.config_dir().join("macros");
    std::fs::create_dir_all(&macros).unwrap();
    let steps: String = (0..300_000).map(|_| "  - .set temperature 0.5\n").collect();
    std::fs::write(macros.join("long.yaml"), format!("steps:\n{steps}")).unwrap();
    let mut child = env
        .loki_std()
        .args(["--macro", "long"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the steps run (each is echoed on stderr), TERM.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains(".set temperature") {
        line.clear();
        assert!(
            std::io::BufRead::read_line(&mut stderr, &mut line).unwrap() > 0,
            "the macro never started"
        );
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "TERM was ignored"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(!status.success(), "{status:?}");
}

#[test]
fn builtin_macro_is_installed_on_first_run_and_works() {
    let env = TestEnv::new();
    let file = env
        .config_dir()
        .join("macros")
        .join("generate-commit-message.yaml");
    assert!(!file.exists());
    // A repository with one unstaged and then one staged change: the macro runs
    // `git diff` itself and prefers what is staged.
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(env.work_dir())
            .output()
            .expect("git must be installed to run this test");
        assert!(status.status.success(), "git {args:?}: {status:?}");
    };
    git(&["init", "-q"]);
    env.write("x.txt", "old\n");
    git(&["add", "x.txt"]);
    git(&["commit", "-q", "-m", "first"]);
    env.write("x.txt", "unstaged fix\n");
    env.server.push(openai::text_stream(&["Fix the parser"]));
    let out = env
        .loki()
        .args(["--macro", "generate-commit-message"])
        .assert()
        .success();
    assert!(stdout(&out).contains("Fix the parser"));
    assert!(file.exists(), "built-in macro not installed");
    let body = env.server.last_request().json();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert!(messages[0]["content"].as_str().unwrap().contains("commit"));
    let sent = messages[1]["content"].as_str().unwrap();
    assert!(
        sent.starts_with(
            "Write the commit message for this diff.\n\n============ CMD: git rev-parse"
        ),
        "{sent}"
    );
    assert!(sent.contains("+unstaged fix"), "{sent}");

    env.write("y.txt", "staged\n");
    git(&["add", "y.txt"]);
    env.server.push(openai::text_stream(&["Add y"]));
    env.loki()
        .args(["--macro", "generate-commit-message", "mention", "y"])
        .assert()
        .success();
    let body = env.server.last_request().json();
    let sent = body["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(sent.starts_with("mention y\n\n"), "{sent}");
    assert!(
        sent.contains("+staged") && !sent.contains("unstaged"),
        "{sent}"
    );

    // A clean tree: nothing to describe, no request, a failing exit.
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "all"]);
    let asked = env.server.requests().len();
    let out = env
        .loki()
        .args(["--macro", "generate-commit-message"])
        .assert()
        .code(1);
    assert!(
        crate::common::stderr(&out).contains("nothing to describe"),
        "{}",
        crate::common::stderr(&out)
    );
    assert_eq!(env.server.requests().len(), asked);

    // The user's edits are kept on later runs.
    std::fs::write(&file, "steps: [mine]\n").unwrap();
    env.loki().arg("hello").assert().success();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "steps: [mine]\n");
}

fn start(env: &TestEnv) -> Pty {
    let mut pty = Pty::spawn(env, &[], &[("NO_COLOR", "1")]);
    pty.session
        .set_expect_timeout(Some(std::time::Duration::from_secs(25)));
    pty.expect(PROMPT);
    pty
}

fn submit(pty: &mut Pty, line: &str, until: &str) -> String {
    pty.send(line);
    pty.send("\r");
    let mut out = pty.expect(until);
    out.push_str(&pty.expect(PROMPT));
    out
}

#[test]
fn repl_macro_runs_apart_from_the_repl_conversation() {
    let env = TestEnv::new();
    write_macro(&env, "ask", VARS_MACRO);
    env.server.push(openai::text_stream(&["before answer"]));
    env.server.push(openai::text_stream(&["macro one"]));
    env.server.push(openai::text_stream(&["macro two"]));
    env.server.push(openai::text_stream(&["after answer"]));
    let mut pty = start(&env);
    submit(&mut pty, "before", "before answer");
    submit(
        &mut pty,
        ".macro ask text-only 'in short' why not",
        "macro two",
    );
    let requests = env.server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].json()["model"], "text-only");
    assert_eq!(
        requests[1].json()["messages"],
        json!([
            {"role": "system", "content": "Answer in a in short way."},
            {"role": "user", "content": "first: why not"}
        ])
    );
    // The REPL's own conversation kept its model and history.
    submit(&mut pty, "after", "after answer");
    let last = env.server.last_request().json();
    assert_eq!(last["model"], "gpt-4o-mini");
    assert_eq!(
        last["messages"],
        json!([
            {"role": "user", "content": "before"},
            {"role": "assistant", "content": "before answer"},
            {"role": "user", "content": "after"}
        ])
    );

    // A failing step is reported and the REPL carries on.
    let out = submit(&mut pty, ".macro ask", "usage: ask <model>");
    assert!(out.contains("missing value for variable `model`"), "{out}");
    // Tab completes macro names.
    pty.send(".macro gen\t");
    pty.expect("generate-commit-message");
    pty.send("\r");
    // The working directory is no repository: the step's command fails, named.
    pty.expect("not a git repository");
    pty.expect(PROMPT);
    pty.send(".exit\r");
    pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
}

#[test]
fn macro_steps_can_open_and_close_a_session() {
    let env = TestEnv::new();
    write_macro(
        &env,
        "note",
        "variables:\n  - name: text\n    rest: true\nsteps:\n  - .session notes\n  - \"remember: {{text}}\"\n  - .exit session\n  - .session kept\n  - second\n",
    );
    env.server.push(openai::text_stream(&["noted"]));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .args(["--macro", "note", "the", "milk"])
        .assert()
        .success();
    // `.exit session` saved the first session; the second is saved at the end.
    let notes = std::fs::read_to_string(env.session_file("notes")).unwrap();
    assert!(
        notes.contains("remember: the milk") && notes.contains("noted"),
        "{notes}"
    );
    let kept = std::fs::read_to_string(env.session_file("kept")).unwrap();
    assert!(kept.contains("second") && !kept.contains("milk"), "{kept}");
}

#[test]
fn an_argument_cannot_turn_a_prompt_step_into_a_command() {
    let env = TestEnv::new();
    write_macro(
        &env,
        "echo",
        "variables:\n  - name: text\n    rest: true\nsteps:\n  - \"{{text}}\"\n",
    );
    env.loki()
        .args(["--macro", "echo", ".model", "fake:text-only"])
        .assert()
        .success();
    let body = env.server.last_request().json();
    assert_eq!(body["model"], "gpt-4o-mini");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": ".model fake:text-only"}])
    );
}

/// An agent whose instructions need a variable nobody gave.
fn write_agent_needing_a_user(env: &TestEnv) {
    let dir = env.config_dir().join("agents/greeter");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.yaml"),
        "instructions: Greet {{user}}.\nvariables:\n  - name: user\n    description: Who to greet\n",
    )
    .unwrap();
    write_macro(env, "greet", "steps:\n  - .agent greeter\n  - say hello\n");
}

#[test]
fn a_macro_s_agent_asks_for_its_missing_variables_in_the_repl_and_from_the_cli() {
    let env = TestEnv::new();
    write_agent_needing_a_user(&env);
    env.server.push(openai::text_stream(&["Hello, Ada."]));
    let mut pty = start(&env);
    pty.send(".macro greet\r");
    pty.expect("user (Who to greet)");
    pty.send("Ada\r");
    pty.expect("Hello, Ada.");
    pty.expect(PROMPT);
    pty.send(".exit\r");
    pty.read_to_end();
    let body = env.server.last_request().json();
    assert_eq!(body["messages"][0]["content"], "Greet Ada.", "{body}");

    env.server.push(openai::text_stream(&["Hello, Bo."]));
    let mut pty = Pty::spawn(&env, &["--macro", "greet"], &[("NO_COLOR", "1")]);
    pty.expect("user (Who to greet)");
    pty.send("Bo\r");
    pty.expect("Hello, Bo.");
    pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
    let body = env.server.last_request().json();
    assert_eq!(body["messages"][0]["content"], "Greet Bo.", "{body}");

    // Without a terminal nobody can answer: one error naming the variable, nothing sent.
    let sent = env.server.requests().len();
    let out = env.loki().args(["--macro", "greet"]).assert().failure();
    assert!(stderr(&out).contains("user"), "{}", stderr(&out));
    assert_eq!(env.server.requests().len(), sent);
}
