//! Issue 54's smaller items, through the real binary: `--init`/`.init` write AGENTS.md
//! from the model's answer (asking before replacing one), `--output-schema` checks the
//! final answer (structured output asked for, one repair round, exit 1 after), and
//! `--add-dir`/`.add-dir` let file tools reach another directory.

use serde_json::{Value, json};

use crate::common::fake_llm::{Recorded, Reply, openai};
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr, stdout};

/// The text of the last user message of a request.
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

fn repo_env() -> TestEnv {
    let env = TestEnv::new();
    env.write("README.md", "# Widget\nA widget factory.\n");
    env.write(
        "Cargo.toml",
        "[package]\nname = \"widget\"\nversion = \"0.1.0\"\n",
    );
    std::fs::create_dir_all(env.work_dir().join("src")).unwrap();
    env
}

#[test]
fn init_writes_agents_md_from_the_model_s_answer() {
    let env = repo_env();
    env.server.push(openai::text_stream(&[
        "```markdown\n# AGENTS.md\n\n",
        "Build with `cargo build`; test with `cargo test`.\n```",
    ]));
    let out = env.loki().arg("--init").assert().success();
    let written = std::fs::read_to_string(env.work_dir().join("AGENTS.md")).unwrap();
    assert_eq!(
        written,
        "# AGENTS.md\n\nBuild with `cargo build`; test with `cargo test`.\n",
        "{}",
        stderr(&out)
    );
    // The answer was shown, and the model saw the repository's view.
    assert!(stdout(&out).contains("cargo build"), "{}", stdout(&out));
    let asked = last_user(&env.server.last_request().json());
    for part in [
        "AGENTS.md",
        "src/",
        "A widget factory.",
        "name = \"widget\"",
        "- `cargo test`",
    ] {
        assert!(asked.contains(part), "{part} missing from {asked}");
    }
}

#[test]
fn init_refuses_to_replace_agents_md_without_a_terminal_unless_forced() {
    let env = repo_env();
    env.write("AGENTS.md", "old notes\n");
    let out = env.loki().arg("--init").assert().failure().code(1);
    let err = stderr(&out);
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("AGENTS.md")).unwrap(),
        "old notes\n"
    );
    assert_eq!(
        env.server.request_count(),
        0,
        "nothing is sent before refusing"
    );

    env.server.push(openai::text_stream(&["# New notes\n"]));
    env.loki().args(["--init", "--force"]).assert().success();
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("AGENTS.md")).unwrap(),
        "# New notes\n"
    );
    // The existing notes were shown to the model, to keep what is still true.
    assert!(last_user(&env.server.last_request().json()).contains("old notes"));
}

#[test]
fn dot_init_asks_before_replacing_agents_md() {
    let env = repo_env();
    env.write("AGENTS.md", "old notes\n");
    env.server.push(openai::text_stream(&["# First draft\n"]));
    env.server.push(openai::text_stream(&["# Second draft\n"]));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(")> ");
    pty.send(".init\r");
    pty.expect("replace it");
    pty.send("n");
    pty.expect("kept the existing AGENTS.md");
    let agents = env.work_dir().join("AGENTS.md");
    assert_eq!(std::fs::read_to_string(&agents).unwrap(), "old notes\n");
    pty.expect(")> ");
    pty.send(".init\r");
    pty.expect("replace it");
    pty.send("y");
    pty.expect("wrote ");
    assert_eq!(
        std::fs::read_to_string(&agents).unwrap(),
        "# Second draft\n"
    );
    pty.expect(")> ");
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}

const SCHEMA: &str = r#"{
  "type": "object",
  "properties": {"title": {"type": "string"}, "done": {"type": "boolean"}},
  "required": ["title", "done"],
  "additionalProperties": false
}"#;

fn schema_env() -> (TestEnv, String) {
    let env = TestEnv::new();
    let path = env.write("schema.json", SCHEMA);
    (env, path.to_string_lossy().into_owned())
}

#[test]
fn output_schema_prints_a_matching_answer_and_asks_for_structured_output() {
    let (env, schema) = schema_env();
    env.server
        .push(openai::text_stream(&[r#"{"title": "x", "done": true}"#]));
    let out = env
        .loki()
        .args(["--output-schema", &schema, "make a todo"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "{\"title\":\"x\",\"done\":true}\n");
    let body = env.server.last_request().json();
    assert_eq!(body["response_format"]["type"], "json_schema", "{body}");
    let sent = &body["response_format"]["json_schema"]["schema"];
    assert_eq!(sent, &serde_json::from_str::<Value>(SCHEMA).unwrap());
    assert_eq!(env.server.request_count(), 1);

    // With --dry-run there is no answer to check: the input is shown, nothing is sent.
    let out = env
        .loki()
        .args(["--output-schema", &schema, "--dry-run", "make a todo"])
        .assert()
        .success();
    assert!(stdout(&out).contains("make a todo"), "{}", stdout(&out));
    assert_eq!(env.server.request_count(), 1);
}

#[test]
fn output_schema_repairs_a_mismatch_once() {
    let (env, schema) = schema_env();
    env.server.push(openai::text_stream(&[r#"{"title": "x"}"#]));
    env.server
        .push(openai::text_stream(&[r#"{"title": "x", "done": false}"#]));
    let out = env
        .loki()
        .args(["--output-schema", &schema, "make a todo"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "{\"title\":\"x\",\"done\":false}\n");
    let requests = env.server.requests();
    assert_eq!(requests.len(), 2);
    let repair = last_user(&requests[1].json());
    assert!(repair.contains("$.done is required"), "{repair}");
}

#[test]
fn output_schema_fails_with_one_line_after_the_repair_round() {
    let (env, schema) = schema_env();
    env.server
        .push(openai::text_stream(&["Sure, here it is: done"]));
    env.server.push(openai::text_stream(&[
        r#"{"title": 3, "done": true, "x": 1}"#,
    ]));
    let out = env
        .loki()
        .args(["--output-schema", &schema, "make a todo"])
        .assert()
        .failure()
        .code(1);
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("does not match the output schema"), "{err}");
    assert!(err.contains("$.title must be string"), "{err}");
    assert!(err.contains("$.x is not an allowed property"), "{err}");
    let first_repair = last_user(&env.server.requests()[1].json());
    assert!(first_repair.contains("not JSON"), "{first_repair}");
}

#[test]
fn output_schema_that_is_not_json_is_an_error() {
    let env = TestEnv::new();
    let path = env.write("schema.json", "{ not json");
    let out = env
        .loki()
        .args(["--output-schema", path.to_str().unwrap(), "hi"])
        .assert()
        .failure()
        .code(1);
    assert!(
        stderr(&out).contains("is not a JSON schema object"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.server.request_count(), 0);
}

/// `write PATH`: one `fs_write` call; after a tool, its result echoed.
fn write_route(request: &Recorded) -> Reply {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if let Some(last) = messages.last().filter(|m| m["role"] == "tool") {
        return openai::text_stream(&[&format!(
            "result: {}",
            last["content"].as_str().unwrap_or_default()
        )]);
    }
    match last_user(&body).split_once(' ') {
        Some(("write", path)) => openai::tool_call_stream(&[(
            "c1",
            "fs_write",
            &json!({"path": path, "contents": "x\n"}).to_string(),
        )]),
        _ => openai::text_stream(&["ok"]),
    }
}

fn write_env() -> (TestEnv, std::path::PathBuf) {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: fs_write\n{cfg}"));
    env.server.respond_for("/v1/chat", write_route);
    let shared = env.work_dir().parent().unwrap().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    (env, shared)
}

#[test]
fn add_dir_lets_file_tools_write_outside_the_tree() {
    let (env, shared) = write_env();
    // Without it, a path outside the tree is asked about (headless: refused).
    let out = env
        .loki()
        .args(["--permission-mode", "accept-edits", "write ../shared/a.txt"])
        .assert()
        .success();
    assert!(!shared.join("a.txt").exists(), "{}", stdout(&out));
    assert!(stdout(&out).contains("--add-dir"), "{}", stdout(&out));
    let out = env
        .loki()
        .args([
            "--permission-mode",
            "accept-edits",
            "--add-dir",
            "../shared",
            "write ../shared/a.txt",
        ])
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(shared.join("a.txt")).unwrap_or_default(),
        "x\n",
        "{}",
        stdout(&out)
    );
    // A directory that is not there is refused at once (exit 2), before anything runs.
    let sent = env.server.requests().len();
    let out = env
        .loki()
        .args(["--add-dir", "../nowhere", "hello"])
        .assert()
        .code(2);
    assert!(
        stderr(&out).contains("--add-dir ../nowhere: not a directory"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.server.requests().len(), sent);
}

#[test]
fn dot_add_dir_lets_file_tools_write_there_for_the_rest_of_the_repl() {
    let (env, shared) = write_env();
    let mut pty = Pty::spawn(
        &env,
        &["--permission-mode", "accept-edits"],
        &[("NO_COLOR", "1")],
    );
    pty.expect(")> ");
    pty.send(".add-dir ../nowhere\r");
    pty.expect("not a directory");
    pty.expect(")> ");
    pty.send(".add-dir ../shared\r");
    pty.expect("added ");
    pty.expect(")> ");
    pty.send("write ../shared/b.txt\r");
    pty.expect("result: ");
    pty.expect(")> ");
    assert_eq!(
        std::fs::read_to_string(shared.join("b.txt")).unwrap_or_default(),
        "x\n"
    );
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}
