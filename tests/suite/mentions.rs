//! `@` mentions: `@path` attaches a file as `-f` does, `@dir/` a listing, quoted forms
//! for names with spaces; what names nothing stays plain text; what the fences deny is
//! left out with a note. The same in the one-shot CLI, `--input-format stream-json`,
//! ACP and the REPL (with Tab completing paths after `@`).

use std::process::Command;

use serde_json::Value;

use crate::common::pty::Pty;
use crate::common::{LOKI, TestEnv, stderr};

fn sent_text(env: &TestEnv) -> String {
    let body = env.server.last_request().json();
    super::acp::last_user(&body)
}

fn with_config(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("{extra}{cfg}"));
    env
}

#[test]
fn a_mentioned_file_is_attached_and_the_mention_kept() {
    let env = TestEnv::new();
    env.write("notes.txt", "the notes say hello\n");
    env.loki().args(["explain @notes.txt."]).assert().success();
    assert_eq!(
        sent_text(&env),
        "explain @notes.txt.\n\n============ FILE: notes.txt ============\nthe notes say hello"
    );
}

#[test]
fn a_mentioned_directory_is_listed_without_ignored_names() {
    let env = TestEnv::new();
    env.write("proj/src/main.rs", "fn main() { secret_body() }\n");
    env.write("proj/README.md", "readme\n");
    env.write("proj/.gitignore", "*.log\n");
    env.write("proj/build.log", "noise\n");
    env.loki().args(["what is in @proj/"]).assert().success();
    let text = sent_text(&env);
    assert!(text.starts_with("what is in @proj/\n\n"), "{text}");
    assert!(
        text.contains("============ DIR: proj/ ============"),
        "{text}"
    );
    for name in ["proj/README.md", "proj/src/", "proj/src/main.rs"] {
        assert!(text.contains(name), "{name}: {text}");
    }
    assert!(!text.contains("build.log"), "{text}");
    assert!(
        !text.contains("secret_body"),
        "a listing, not contents: {text}"
    );
}

#[test]
fn quoted_mentions_name_files_with_spaces() {
    let env = TestEnv::new();
    env.write("my notes.txt", "spaced out\n");
    env.write("other notes.md", "single quoted\n");
    env.loki()
        .args([r#"compare @"my notes.txt" with @'other notes.md'"#])
        .assert()
        .success();
    let text = sent_text(&env);
    assert!(
        text.contains("============ FILE: my notes.txt ============\nspaced out"),
        "{text}"
    );
    assert!(
        text.contains("============ FILE: other notes.md ============\nsingle quoted"),
        "{text}"
    );
}

#[test]
fn an_at_that_names_nothing_is_plain_text() {
    let env = TestEnv::new();
    env.write("example.com", "not to be attached\n");
    let prompt = "mail me@example.com and ask @someone about @missing.txt";
    env.loki().args([prompt]).assert().success();
    assert_eq!(sent_text(&env), prompt);
}

#[test]
fn a_denied_mention_is_left_out_with_a_note() {
    let env = with_config("permissions:\n  deny: [\"Read(.env)\"]\n");
    env.write(".env", "API_KEY=do-not-send\n");
    env.write("notes.txt", "fine to send\n");
    let out = env
        .loki()
        .args(["check @.env and @notes.txt"])
        .assert()
        .success();
    let text = sent_text(&env);
    assert!(!text.contains("do-not-send"), "{text}");
    assert!(text.contains("fine to send"), "{text}");
    let err = stderr(&out);
    assert!(
        err.contains("@.env not attached: reading it is denied by") && err.contains("Read(.env)"),
        "{err}"
    );
}

#[test]
fn the_sandbox_deny_list_keeps_credentials_out_of_mentions() {
    let env = with_config("sandbox:\n  mode: workspace-write\n");
    let key = env.root().join("home/.ssh/id_rsa");
    std::fs::create_dir_all(key.parent().unwrap()).unwrap();
    std::fs::write(&key, "PRIVATE KEY MATERIAL\n").unwrap();
    let out = env
        .loki()
        .args(["what is @~/.ssh/id_rsa"])
        .assert()
        .success();
    assert_eq!(sent_text(&env), "what is @~/.ssh/id_rsa");
    assert!(
        stderr(&out).contains("@~/.ssh/id_rsa not attached: the sandbox keeps credentials"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn stream_json_messages_attach_mentions() {
    let env = TestEnv::new();
    env.write("notes.txt", "streamed notes\n");
    let line = r#"{"type":"user","message":{"role":"user","content":"explain @notes.txt"}}"#;
    env.loki()
        .args([
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .write_stdin(line)
        .assert()
        .success();
    assert_eq!(
        sent_text(&env),
        "explain @notes.txt\n\n============ FILE: notes.txt ============\nstreamed notes"
    );
}

#[test]
fn an_acp_prompt_attaches_mentions() {
    let env = TestEnv::new();
    env.write("notes.txt", "notes for the editor\n");
    let loki_env: serde_json::Map<String, Value> = env
        .env_pairs()
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/acp_client.py");
    let output = Command::new("timeout")
        .args(["120", "python3", script])
        .arg(LOKI)
        .arg(env.work_dir())
        .args(["mention", "summarize @notes.txt"])
        .env("LOKI_TEST_ENV", Value::Object(loki_env).to_string())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the ACP client failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no report ({e}): {stdout}"));
    assert_eq!(report["mention"]["stop"], "end_turn", "{report}");
    assert_eq!(
        sent_text(&env),
        "summarize @notes.txt\n\n============ FILE: notes.txt ============\nnotes for the editor"
    );
}

#[test]
fn tab_after_an_at_completes_paths_in_the_repl() {
    let env = TestEnv::new();
    env.write("notes.txt", "typed notes\n");
    env.write("src/main.rs", "fn main() {}\n");
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("fake:gpt-4o-mini)> ");
    // `nts` is a subsequence of `notes.txt` alone.
    pty.send("explain @nts\t");
    pty.expect("@notes.txt");
    pty.send("\r");
    pty.expect("Hello from fake");
    let text = sent_text(&env);
    assert!(text.starts_with("explain @notes.txt"), "{text}");
    assert!(
        text.ends_with("============ FILE: notes.txt ============\ntyped notes"),
        "{text}"
    );
}
