//! Secret redaction: a run that touches every writer with known secrets (an API key and a
//! vault entry), then no file left behind and no output contains them.

use crate::common::fake_llm::openai;
use crate::common::{TestEnv, stderr, stdout};

const API_KEY: &str = "sk-fake-key-9876543210";
const SECRET: &str = "vault-secret-0123456789";

fn add(env: &TestEnv, name: &str, value: &str) {
    env.loki()
        .args(["--add-secret", name])
        .write_stdin(value)
        .assert()
        .success();
}

#[test]
fn no_writer_lets_a_known_secret_through() {
    let env = TestEnv::new();
    crate::common::write_private(&env.config_dir().join("vault-pass"), "pass-phrase-1234\n");
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "vault_password_file: vault-pass\nsave: true\nenabled_tools: all\n{}",
        cfg.replace("api_key: test-key", "api_key: '{{FAKE_KEY}}'")
    ));
    add(&env, "FAKE_KEY", API_KEY);
    add(&env, "PROJECT_SECRET", SECRET);
    // A file the model's tool will read (it is ours, so it is not searched below).
    let planted = env.write("notes/credentials.txt", format!("token={SECRET}\n"));
    let log = env.config_dir().join("loki.log");
    let mut outputs = Vec::new();
    let run = |args: &[&str], outputs: &mut Vec<String>| {
        let out = env
            .loki()
            .env("LOKI_LOG_LEVEL", "debug")
            .env("LOKI_LOG_FILE", &log)
            .args(args)
            .assert();
        outputs.push(stdout(&out));
        outputs.push(stderr(&out));
        out
    };

    // messages.md (save: true) and the log.
    env.server.push(openai::text_stream(&["Noted."]));
    run(&[&format!("remember {SECRET}")], &mut outputs).success();
    let messages_md = std::fs::read_to_string(env.root().join("cache/loki/messages.md")).unwrap();
    assert!(
        messages_md.contains("remember «secret:PROJECT_SECRET»"),
        "{messages_md}"
    );

    // A session file.
    env.server.push(openai::text_stream(&["Kept."]));
    run(&["-s", "keep", &format!("keep {SECRET}")], &mut outputs).success();
    let session = std::fs::read_to_string(env.session_file("keep")).unwrap();
    assert!(
        session.contains("keep «secret:PROJECT_SECRET»"),
        "{session}"
    );

    // --dry-run output.
    let out = run(&["--dry-run", &format!("dry {SECRET}")], &mut outputs).success();
    assert!(
        stdout(&out).contains("dry «secret:PROJECT_SECRET»"),
        "{}",
        stdout(&out)
    );

    // An error that quotes the key and the secret.
    env.server.push(openai::error(
        401,
        &format!("Incorrect API key provided: {API_KEY} (also saw {SECRET})"),
        "invalid_request_error",
    ));
    let out = run(&["fail please"], &mut outputs).failure();
    assert!(
        stderr(&out).contains("«secret:FAKE_KEY»")
            && stderr(&out).contains("«secret:PROJECT_SECRET»"),
        "{}",
        stderr(&out)
    );

    // Tool output, before it is sent to the model.
    env.server.push(openai::tool_call_stream(&[(
        "r",
        "fs_read",
        r#"{"path":"notes/credentials.txt"}"#,
    )]));
    env.server.push(openai::text_stream(&["Read."]));
    run(&["read the notes"], &mut outputs).success();
    let results = super::tools::tool_results(&env.server.last_request().json());
    assert!(
        results[0].1.contains("token=«secret:PROJECT_SECRET»"),
        "{results:?}"
    );
    for request in env.server.requests() {
        for (_, content) in super::tools::tool_results(&request.json()) {
            assert!(!content.contains(SECRET), "{content}");
        }
    }

    // Nothing loki wrote, and nothing it printed, holds either value.
    assert!(log.exists(), "the debug log was written");
    let mut searched = 0;
    for entry in walkdir::WalkDir::new(env.root()) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() || entry.path() == planted {
            continue;
        }
        let bytes = std::fs::read(entry.path()).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        searched += 1;
        for value in [API_KEY, SECRET] {
            assert!(
                !text.contains(value),
                "{} contains a secret:\n{text}",
                entry.path().display()
            );
        }
    }
    assert!(searched >= 5, "only {searched} files were searched");
    for text in &outputs {
        assert!(!text.contains(API_KEY) && !text.contains(SECRET), "{text}");
    }
}
