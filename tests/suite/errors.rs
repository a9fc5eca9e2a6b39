//! Bad input and failing providers: one clear line, a non-zero exit, nothing lost.

use std::io::Read;
use std::time::{Duration, Instant};

use crate::common::fake_llm::openai;
use crate::common::{TestEnv, assert_plain, stderr, stdout};

/// The error line loki printed (the last line of stderr).
fn error_line(out: &assert_cmd::assert::Assert) -> String {
    let err = stderr(out);
    let line = err.lines().last().unwrap_or_default().to_string();
    assert!(line.starts_with("error: "), "stderr: {err}");
    line
}

#[test]
fn http_401_names_the_client_and_the_fix() {
    let env = TestEnv::new();
    env.server.push(openai::error(
        401,
        "Incorrect API key provided",
        "invalid_request_error",
    ));
    let out = env.loki().arg("hi").assert().code(1);
    let line = error_line(&out);
    assert!(
        line.contains("`fake` rejected the credentials (HTTP 401)"),
        "{line}"
    );
    assert!(
        line.contains("Incorrect API key provided") && line.contains("check the API key"),
        "{line}"
    );
    assert_eq!(env.server.requests().len(), 1, "401 is not retried");
    assert_eq!(stdout(&out), "");
}

#[test]
fn http_404_points_at_the_model_list() {
    let env = TestEnv::new();
    env.server.push(openai::error(
        404,
        "The model `gpt-9` does not exist",
        "invalid_request_error",
    ));
    let out = env.loki().args(["-m", "fake:gpt-9", "hi"]).assert().code(1);
    let line = error_line(&out);
    assert!(
        line.contains("model `gpt-9`") && line.contains("--list-models"),
        "{line}"
    );
}

#[test]
fn http_429_is_retried_honouring_retry_after() {
    let env = TestEnv::new();
    env.server
        .push(openai::error(429, "Rate limit reached", "rate_limit").header("retry-after", "0.3"));
    env.server.push(openai::text_stream(&["ok"]));
    let started = Instant::now();
    let out = env.loki().arg("hi").assert().success();
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "Retry-After was not honoured"
    );
    assert_eq!(stdout(&out), "ok\n");
    assert_eq!(env.server.requests().len(), 2);
    assert!(
        stderr(&out).contains("rate limiting (HTTP 429); retrying in 0.3s (1/2)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn persistent_5xx_gives_up_after_the_retries() {
    let env = TestEnv::new();
    env.server
        .set_default(openai::error(503, "overloaded", "server_error"));
    let out = env.loki().arg("hi").assert().code(1);
    assert_eq!(env.server.requests().len(), 3, "1 attempt + max_retries 2");
    let line = error_line(&out);
    assert!(
        line.contains("server error (HTTP 503)") && line.contains("overloaded"),
        "{line}"
    );
}

#[test]
fn a_cut_stream_keeps_the_partial_answer() {
    let env = TestEnv::new();
    // role chunk + 2 text chunks, then the connection drops.
    env.server
        .push(openai::text_stream(&["partial ", "answer", " never seen"]).cut_after(3));
    let out = env.loki().arg("hi").assert().code(1);
    assert_eq!(stdout(&out), "partial answer\n");
    let line = error_line(&out);
    assert!(line.contains("cut before the answer finished"), "{line}");
    assert_eq!(
        env.server.requests().len(),
        1,
        "a stream cut mid-answer is not retried"
    );
}

#[test]
fn malformed_frames_are_reported_after_the_good_ones() {
    let env = TestEnv::new();
    env.server.push(openai::malformed_stream());
    let out = env.loki().arg("hi").assert().code(1);
    assert_eq!(stdout(&out), "Hello\n");
    let line = error_line(&out);
    assert!(
        line.contains("malformed response") && line.contains("invalid JSON"),
        "{line}"
    );
}

#[test]
fn a_silent_server_times_out() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path())
        .unwrap()
        .replace("max_retries: 2", "max_retries: 2\n      read_timeout: 1");
    env.write_config(&cfg);
    env.server
        .push(openai::text_stream(&["slow ", "start"]).hang_after(2));
    let started = Instant::now();
    let out = env.loki().arg("hi").assert().code(1);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(stdout(&out), "slow \n", "partial answer kept");
    let line = error_line(&out);
    assert!(
        line.contains("sent nothing for 1s") && line.contains("read_timeout"),
        "{line}"
    );
}

#[test]
fn unreachable_server_is_a_connect_error() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path())
        .unwrap()
        .replace(&env.server.base_url(), "http://127.0.0.1:9/v1");
    env.write_config(&cfg);
    let out = env.loki().arg("hi").assert().code(1);
    let line = error_line(&out);
    assert!(
        line.contains("cannot reach `fake` at http://127.0.0.1:9/v1/chat/completions"),
        "{line}"
    );
    // A refused connection is final: no retries (issue 14, item 13).
    assert_eq!(stderr(&out).matches("retrying").count(), 0);
}

#[test]
fn unknown_client_in_model_id() {
    let env = TestEnv::new();
    let out = env.loki().args(["-m", "nope:model", "hi"]).assert().code(1);
    let line = error_line(&out);
    assert!(
        line.contains("unknown client `nope`") && line.contains("configured clients: fake"),
        "{line}"
    );
    assert!(env.server.requests().is_empty());
}

#[test]
fn missing_api_key_names_the_variable() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path())
        .unwrap()
        .replace("api_key: test-key", "api_key: '{{FAKE_SERVICE_KEY}}'");
    env.write_config(&cfg);
    let out = env.loki().arg("hi").assert().code(1);
    let line = error_line(&out);
    assert!(
        line.contains("no API key for client `fake`: set FAKE_SERVICE_KEY"),
        "{line}"
    );
    assert!(env.server.requests().is_empty());
}

#[test]
fn malformed_yaml_points_at_the_line() {
    let env = TestEnv::new();
    env.write_config("model: fake:x\nclients: [\n  - type: openai\n");
    let out = env.loki().arg("hi").assert().code(1);
    let line = error_line(&out);
    let path = env.config_path().display().to_string();
    assert!(line.starts_with(&format!("error: {path}:")), "{line}");
    assert_eq!(stderr(&out).lines().count(), 1);
}

#[test]
fn wrong_value_type_points_at_the_key() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("{cfg}stream: sometimes\n"));
    let out = env.loki().arg("hi").assert().code(1);
    let line = error_line(&out);
    assert!(
        line.contains("config.yaml:") && line.contains("stream"),
        "{line}"
    );
}

#[test]
fn bad_env_override_is_named() {
    let env = TestEnv::new();
    let out = env
        .loki()
        .env("LOKI_TEMPERATURE", "hot")
        .arg("hi")
        .assert()
        .code(1);
    let line = error_line(&out);
    assert!(
        line.contains("LOKI_TEMPERATURE") && line.contains("expected a number"),
        "{line}"
    );
}

#[test]
fn empty_input_is_an_error() {
    let env = TestEnv::new();
    let out = env.loki().write_stdin("   \n").assert().code(1);
    assert!(error_line(&out).contains("no input"));
    assert!(env.server.requests().is_empty());
}

#[test]
fn ctrl_c_mid_stream_keeps_the_partial_answer_and_exits_130() {
    let env = TestEnv::new();
    let parts: Vec<String> = (0..50).map(|i| format!("tok{i} ")).collect();
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    env.server
        .push(openai::text_stream(&refs).frame_delay(Duration::from_millis(100)));
    let mut child = env
        .loki_std()
        .arg("count slowly")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout_pipe = child.stdout.take().unwrap();
    // Wait until some of the answer has arrived.
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("tok2") {
        let n = stdout_pipe.read(&mut buf).unwrap();
        assert!(n > 0, "loki closed stdout early");
        seen.extend_from_slice(&buf[..n]);
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    stdout_pipe.read_to_end(&mut seen).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let text = String::from_utf8_lossy(&seen);
    assert!(text.starts_with("tok0 tok1 tok2"), "{text}");
    assert!(
        !text.contains("tok49"),
        "the stream was not stopped: {text}"
    );
    assert!(text.ends_with('\n'));
    assert_plain(&text);
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("(interrupted)"), "{err}");
}

#[test]
fn no_config_without_a_terminal_names_the_path_and_variables() {
    let env = TestEnv::bare();
    let out = env.loki().arg("hi").assert().code(1);
    let line = error_line(&out);
    let path = env.config_path().display().to_string();
    assert!(
        line.contains(&path) && line.contains("OPENAI_API_KEY"),
        "{line}"
    );
    assert!(!env.config_path().exists());
}

#[test]
fn closing_stdout_early_is_not_an_error() {
    let env = TestEnv::new();
    env.server.push(openai::long_stream(20000));
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{} go | head -c 10", crate::common::LOKI))
        .envs(env.env_pairs())
        .current_dir(env.work_dir())
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(output.stdout.len(), 10);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("error"));
}

#[test]
fn proxy_setting_routes_requests() {
    let env = TestEnv::new();
    let proxy = env.server.root_url();
    let cfg = std::fs::read_to_string(env.config_path())
        .unwrap()
        .replace(&env.server.base_url(), "http://llm.example.invalid/v1")
        .replace(
            "max_retries: 2",
            &format!("max_retries: 0\n      proxy: {proxy}"),
        );
    env.write_config(&cfg);
    env.server.push(openai::text_stream(&["via proxy"]));
    let out = env.loki().arg("hi").assert().success();
    assert_eq!(stdout(&out), "via proxy\n");
    let req = env.server.last_request();
    assert_eq!(req.header("host"), Some("llm.example.invalid"));
    assert_eq!(req.path, "/v1/chat/completions");
}

#[test]
fn an_absurd_retry_after_is_not_a_crash() {
    let env = TestEnv::new();
    env.server
        .push(openai::error(429, "slow down", "rate_limit").header("retry-after", "inf"));
    env.server.push(openai::text_stream(&["fine"]));
    let out = env.loki().arg("hi").assert().success();
    assert_eq!(stdout(&out), "fine\n");
}

#[test]
fn a_cut_answer_prints_none_of_its_code_with_dash_c() {
    let env = TestEnv::new();
    // The stream stops inside the command: what came is `rm -rf /tmp/x` of
    // `rm -rf /tmp/x/victim`.
    env.server.push(
        openai::text_stream(&["Here:\n\n```sh\nrm -rf /tmp/x", "/victim\n```\n"]).cut_after(2),
    );
    let out = env.loki().args(["-c", "clean up"]).assert().code(1);
    assert_eq!(stdout(&out), "", "nothing to run reaches stdout");
    let err = stderr(&out);
    assert!(err.contains("was cut"), "{err}");
    assert!(err.contains("its code is not printed"), "{err}");
    // A whole answer's code is printed as before.
    env.server
        .push(openai::text_stream(&["Here:\n\n```sh\nls -la\n```\n"]));
    let out = env.loki().args(["-c", "list"]).assert().success();
    assert_eq!(stdout(&out), "ls -la\n");
}

#[test]
fn an_error_object_in_an_openai_stream_is_the_provider_s_error() {
    let env = TestEnv::new();
    env.server.push(crate::common::fake_llm::Reply::sse(vec![
        openai::data_frame(&openai::chunk_json(
            "{\"role\":\"assistant\",\"content\":\"Par\"}",
            None,
        )),
        openai::data_frame(
            r#"{"error":{"message":"overloaded mid-stream","type":"server_error"}}"#,
        ),
    ]));
    let out = env.loki().arg("hi").assert().code(1);
    let err = stderr(&out);
    assert!(err.contains("`fake` stopped with an error"), "{err}");
    assert!(err.contains("overloaded mid-stream"), "{err}");
    assert!(!err.contains("malformed"), "{err}");
}

#[test]
fn two_listings_at_once_are_a_usage_error_not_one_dropped() {
    let env = TestEnv::new();
    for pair in [
        ["--list-roles", "--list-models"],
        ["--list-secrets", "--list-roles"],
    ] {
        let out = env.loki().args(pair).assert().code(2);
        assert!(
            stderr(&out).contains("cannot be used with"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn a_tool_rule_on_the_command_line_that_does_not_parse_is_refused() {
    let env = TestEnv::new();
    for (flag, rule) in [
        ("--disallowedTools", "Bash(rm:*"),
        ("--allowedTools", "Bash("),
    ] {
        let out = env.loki().args([flag, rule, "hi"]).assert().code(2);
        let err = stderr(&out);
        assert!(err.contains(flag) && err.contains(rule), "{err}");
    }
    assert!(env.server.requests().is_empty());
}
