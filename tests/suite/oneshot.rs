//! `loki "question"`: what is sent, what is printed, every one-shot flag.

use serde_json::json;

use crate::common::fake_llm::openai;
use crate::common::{TestEnv, assert_plain, stderr, stdout};

#[test]
fn streams_the_answer_and_sends_an_openai_request() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream_with_usage(
        &["Hello", ", ", "world"],
        9,
        3,
    ));
    let out = env.loki().args(["what", "is", "up?"]).assert().success();
    assert_eq!(stdout(&out), "Hello, world\n");
    assert_plain(&stdout(&out));
    assert_plain(&stderr(&out));

    let req = env.server.last_request();
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.header("authorization"), Some("Bearer test-key"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(
        req.json(),
        json!({
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "what is up?"}],
            "stream": true,
            // A server on this machine is asked for usage in the stream, and always
            // gets an output limit (docs/configuration.md, "Output limit of local models").
            "stream_options": {"include_usage": true},
            "max_tokens": 4096
        })
    );
}

#[test]
fn no_stream_flag_sends_a_plain_request() {
    let env = TestEnv::new();
    env.server.push(openai::text_json("All at once."));
    let out = env.loki().args(["-S", "hi"]).assert().success();
    assert_eq!(stdout(&out), "All at once.\n");
    let body = env.server.last_request().json();
    assert!(body.get("stream").is_none(), "{body}");
}

#[test]
fn stream_false_in_config_and_env_override() {
    let env = TestEnv::new();
    env.server.push(openai::text_json("from config"));
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("stream: false\n{cfg}"));
    env.loki().arg("hi").assert().success();
    assert!(env.server.last_request().json().get("stream").is_none());

    env.server.push(openai::text_stream(&["env"]));
    let out = env
        .loki()
        .env("LOKI_STREAM", "true")
        .arg("hi")
        .assert()
        .success();
    assert_eq!(stdout(&out), "env\n");
    assert_eq!(env.server.last_request().json()["stream"], json!(true));
}

#[test]
fn model_flag_and_loki_model_env_pick_the_model() {
    let env = TestEnv::new();
    env.loki()
        .args(["-m", "fake:text-only", "hi"])
        .assert()
        .success();
    assert_eq!(env.server.last_request().json()["model"], "text-only");

    env.loki()
        .env("LOKI_MODEL", "fake:other-model")
        .arg("hi")
        .assert()
        .success();
    assert_eq!(env.server.last_request().json()["model"], "other-model");

    // -m wins over LOKI_MODEL.
    env.loki()
        .env("LOKI_MODEL", "fake:other-model")
        .args(["--model", "fake:gpt-4o-mini", "hi"])
        .assert()
        .success();
    assert_eq!(env.server.last_request().json()["model"], "gpt-4o-mini");
}

#[test]
fn prompt_flag_becomes_the_system_message() {
    let env = TestEnv::new();
    env.loki()
        .args(["--prompt", "You are terse.", "hi"])
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "hi"}
        ])
    );
}

#[test]
fn stdin_is_combined_with_the_arguments() {
    let env = TestEnv::new();
    env.loki()
        .arg("write a commit message")
        .write_stdin("diff --git a/x b/x\n+added\n")
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().json()["messages"][0]["content"],
        "write a commit message\ndiff --git a/x b/x\n+added"
    );
}

#[test]
fn stdin_alone_is_the_prompt() {
    let env = TestEnv::new();
    env.loki().write_stdin("just stdin\n").assert().success();
    assert_eq!(
        env.server.last_request().json()["messages"][0]["content"],
        "just stdin"
    );
}

#[test]
fn reasoning_is_wrapped_in_think_tags_when_piped() {
    let env = TestEnv::new();
    env.server.push(openai::reasoning_stream(
        &["Let me ", "think."],
        &["The ", "answer."],
    ));
    let out = env.loki().arg("q").assert().success();
    assert_eq!(
        stdout(&out),
        "<think>\nLet me think.\n</think>\n\nThe answer.\n"
    );
}

#[test]
fn reasoning_in_a_non_streamed_answer() {
    let env = TestEnv::new();
    env.server.push(openai::reasoning_json("hmm", "42"));
    let out = env.loki().args(["-S", "q"]).assert().success();
    assert_eq!(stdout(&out), "<think>\nhmm\n</think>\n\n42\n");
}

#[test]
fn dry_run_prints_the_input_and_sends_nothing() {
    let env = TestEnv::new();
    env.write("notes.txt", "alpha\n");
    let out = env
        .loki()
        .args(["--dry-run", "-f", "notes.txt", "summarise"])
        .assert()
        .success();
    assert_eq!(
        stdout(&out),
        "summarise\n\n============ FILE: notes.txt ============\nalpha\n"
    );
    assert_eq!(env.server.requests().len(), 0);

    let out = env
        .loki()
        .args(["--dry-run", "--prompt", "sys", "hi"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "--- system ---\nsys\n\n--- user ---\nhi\n");
    assert_eq!(env.server.requests().len(), 0);
}

#[test]
fn code_flag_prints_only_the_code() {
    let env = TestEnv::new();
    env.server.push(openai::text_json(
        "Sure! Here you go:\n\n```bash\nls -la | sort\n```\n\nHope this helps.",
    ));
    let out = env
        .loki()
        .args(["-c", "list files sorted"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "ls -la | sort\n");
    let body = env.server.last_request().json();
    assert_eq!(body["messages"][0]["role"], "system");
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("only code")
    );
    assert!(
        body.get("stream").is_none(),
        "-c waits for the whole answer"
    );
}

#[test]
fn a_streamed_reply_to_a_plain_request_is_still_understood() {
    let env = TestEnv::new();
    env.server
        .push(openai::text_stream(&["streamed ", "anyway"]));
    let out = env.loki().args(["-S", "hi"]).assert().success();
    assert_eq!(stdout(&out), "streamed anyway\n");
}

#[test]
fn list_models_info_version_and_help() {
    let env = TestEnv::new();
    let out = env.loki().arg("--list-models").assert().success();
    assert_eq!(
        stdout(&out),
        "fake:gpt-4o-mini\nfake:text-only\nfake:priced\n"
    );
    // Chat models only by default; the other types by name, or all of them with their
    // type in a tab-separated column.
    let cfg = std::fs::read_to_string(env.config_path()).unwrap().replace(
        "      - name: text-only\n",
        "      - name: text-only\n      - name: emb\n        type: embedding\n      - name: rr\n        type: reranker\n",
    );
    env.write_config(&cfg);
    let out = env.loki().arg("--list-models").assert().success();
    assert_eq!(
        stdout(&out),
        "fake:gpt-4o-mini\nfake:text-only\nfake:priced\n"
    );
    let out = env.loki().arg("--list-models=embedding").assert().success();
    assert_eq!(stdout(&out), "fake:emb\n");
    let out = env.loki().arg("--list-models=reranker").assert().success();
    assert_eq!(stdout(&out), "fake:rr\n");
    let out = env.loki().arg("--list-models=all").assert().success();
    assert_eq!(
        stdout(&out),
        "fake:gpt-4o-mini\nfake:text-only\nfake:priced\nfake:emb\tembedding\nfake:rr\treranker\n"
    );
    let out = env.loki().arg("--list-models=bogus").assert().code(2);
    assert!(stderr(&out).contains("chat"), "{}", stderr(&out));

    let out = env.loki().arg("--info").assert().success();
    let info = stdout(&out);
    assert!(
        info.contains("model                         fake:gpt-4o-mini"),
        "{info}"
    );
    let cfg = env.config_path().display().to_string();
    assert!(
        info.lines()
            .any(|l| l.starts_with("config_file") && l.ends_with(&cfg)),
        "{info}"
    );
    assert!(info.lines().any(|l| l.starts_with("log_path")), "{info}");

    let out = env.loki().arg("--version").assert().success();
    assert_eq!(
        stdout(&out),
        format!("loki {}\n", env!("CARGO_PKG_VERSION"))
    );

    let out = env.loki().arg("--help").assert().success();
    let help = stdout(&out);
    for flag in [
        "--model",
        "--prompt",
        "--file",
        "--no-stream",
        "--dry-run",
        "--code",
        "--info",
        "--list-models",
    ] {
        assert!(help.contains(flag), "help lacks {flag}");
    }
    assert_eq!(
        env.server.requests().len(),
        0,
        "info commands never call the provider"
    );
}

#[test]
fn a_long_answer_arrives_intact() {
    let env = TestEnv::new();
    env.server.push(openai::long_stream(3000));
    let out = env.loki().arg("go").assert().success();
    let expected = openai::long_stream_text(3000);
    assert_eq!(stdout(&out).trim_end(), expected.trim_end());
}

#[test]
fn unknown_config_keys_warn_but_work() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("mystery_key: 1\n{cfg}"));
    let out = env.loki().arg("hi").assert().success();
    assert!(
        stderr(&out).contains("unknown key `mystery_key`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "Hello from fake\n");
}

#[test]
fn placeholders_in_config_come_from_the_environment() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path())
        .unwrap()
        .replace("api_key: test-key", "api_key: '{{MY_FAKE_KEY}}'");
    env.write_config(&cfg);
    env.loki()
        .env("MY_FAKE_KEY", "s3cret")
        .arg("hi")
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().header("authorization"),
        Some("Bearer s3cret")
    );
}

#[test]
fn dotenv_file_supplies_variables() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path())
        .unwrap()
        .replace("api_key: test-key", "api_key: '{{DOTENV_KEY}}'");
    env.write_config(&cfg);
    std::fs::write(env.config_dir().join(".env"), "DOTENV_KEY=from-dotenv\n").unwrap();
    env.loki().arg("hi").assert().success();
    assert_eq!(
        env.server.last_request().header("authorization"),
        Some("Bearer from-dotenv")
    );
}

#[test]
fn temperature_and_top_p_are_sent_when_set() {
    let env = TestEnv::new();
    env.loki()
        .env("LOKI_TEMPERATURE", "0.2")
        .env("LOKI_TOP_P", "0.9")
        .arg("hi")
        .assert()
        .success();
    let body = env.server.last_request().json();
    assert_eq!(body["temperature"], json!(0.2));
    assert_eq!(body["top_p"], json!(0.9));
}

#[test]
fn user_agent_auto() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("user_agent: auto\n{cfg}"));
    env.loki().arg("hi").assert().success();
    assert_eq!(
        env.server.last_request().header("user-agent"),
        Some(format!("loki/{}", env!("CARGO_PKG_VERSION")).as_str())
    );
}

#[test]
fn debug_log_records_the_request_but_never_the_key() {
    let env = TestEnv::new();
    let log = env.dir.path().join("loki.log");
    env.loki()
        .env("LOKI_LOG_LEVEL", "debug")
        .env("LOKI_LOG_FILE", &log)
        .arg("log me")
        .assert()
        .success();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("/v1/chat/completions") && text.contains("log me"),
        "{text}"
    );
    assert!(
        !text.contains("test-key"),
        "the API key leaked into the log"
    );
    crate::common::assert_private(&log);
}

#[test]
fn a_whole_reply_to_a_streaming_request_is_still_understood() {
    let env = TestEnv::new();
    env.server.push(openai::text_json("all in one piece"));
    let out = env.loki().arg("hi").assert().success();
    assert_eq!(stdout(&out), "all in one piece\n");
}
