//! Input loki does not control — `-f` files and devices, piped stdin, config, role and
//! session files, MCP servers — is bounded in size and depth, and its errors say what was
//! expected and which setting to change.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::fake_llm::openai;
use crate::common::{TestEnv, stderr, stdout};
use crate::suite::mcp::{mcp_env, server_bin, tool_result};

/// The start and end of a long text, for assertion messages.
fn ends(text: &str) -> String {
    if text.len() <= 400 {
        return text.to_string();
    }
    let head: String = text.chars().take(200).collect();
    let tail: String = text
        .chars()
        .rev()
        .take(200)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{head} … {tail} ({} bytes)", text.len())
}

/// A call of the test server's `echo` tool answering `echo: ` and `bytes` of `fill`.
fn big_call(tool: &str, bytes: usize, fill: char) -> crate::common::fake_llm::Reply {
    let args = json!({"text": fill.to_string(), "times": bytes}).to_string();
    openai::tool_call_stream(&[("c1", tool, &args)])
}

/// 12 MB of quotes is 24 MB once JSON-escaped: over rmcp's fixed 16 MiB line limit, which
/// dropped the answer and left the call waiting for `tool_timeout`.
#[test]
fn a_12_mb_mcp_result_arrives_and_is_cut_with_a_note() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "enabled_mcp_servers: test\ntool_timeout: 45\n",
    );
    env.server.push(big_call("test_echo", 12_000_000, '"'));
    env.server.push(openai::text_stream(&["Read it."]));
    let out = env.loki().arg("fetch it").assert().success();
    assert_eq!(stdout(&out), "Read it.\n");
    let result = tool_result(&env.server.last_request().json());
    assert!(
        result.starts_with("echo: \"\"\"")
            && result.contains("[output truncated: showed 32768 of 12000006 bytes")
            // An MCP result is no file: the model is told to ask the tool for less.
            && result.contains("call the tool again asking for less")
            && !result.contains("fs_read"),
        "{}",
        ends(&result)
    );
    assert!(result.len() < 64 * 1024, "{}", ends(&result));
}

#[test]
fn an_mcp_message_over_the_limit_fails_its_call_at_once() {
    let env = mcp_env(
        json!({"test": {"type": "stdio", "command": server_bin()}}),
        "enabled_mcp_servers: test\ntool_timeout: 120\nmcp_max_message_size: 1000000\n",
    );
    env.server.push(big_call("test_echo", 3_000_000, 'x'));
    env.server.push(openai::text_stream(&["Too big."]));
    let started = Instant::now();
    let out = env.loki().arg("fetch it").assert().success();
    assert_eq!(stdout(&out), "Too big.\n");
    let result = tool_result(&env.server.last_request().json());
    assert!(
        result.contains("MCP server `test` sent a message larger than 1000000 bytes")
            && result.contains("raise `mcp_max_message_size`"),
        "{}",
        ends(&result)
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert!(!stderr(&out).contains("unknown key"), "{}", stderr(&out));

    // The server stays usable.
    env.server.push(openai::tool_call_stream(&[(
        "c2",
        "test_echo",
        r#"{"text":"hi"}"#,
    )]));
    env.server.push(openai::text_stream(&["Echoed."]));
    env.loki().arg("echo").assert().success();
    assert_eq!(tool_result(&env.server.last_request().json()), "echo: hi");
}

#[test]
fn an_oversized_answer_over_streamable_http_fails_its_call_at_once() {
    let (_server, url) = crate::suite::mcp::remote("--http", "tok");
    let env = mcp_env(
        json!({"remote": {"type": "http", "url": url, "headers": {"Authorization": "Bearer tok"}}}),
        "enabled_mcp_servers: remote\ntool_timeout: 120\nmcp_max_message_size: 1000000\n",
    );
    env.server.push(big_call("remote_echo", 3_000_000, 'x'));
    env.server.push(openai::text_stream(&["Too big."]));
    let started = Instant::now();
    let out = env.loki().arg("fetch it").assert().success();
    assert_eq!(stdout(&out), "Too big.\n");
    let result = tool_result(&env.server.last_request().json());
    assert!(
        result.contains("MCP server `remote` sent a message larger than 1000000 bytes")
            && result.contains("raise `mcp_max_message_size`"),
        "{}",
        ends(&result)
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn an_unreachable_http_server_is_named_with_the_reason() {
    let env = mcp_env(
        json!({"remote": {"type": "http", "url": "http://127.0.0.1:9/mcp?token=secret"}}),
        "enabled_mcp_servers: remote\n",
    );
    env.server.push(openai::text_stream(&["Fine."]));
    let out = env.loki().arg("hi").assert().success();
    assert_eq!(stdout(&out), "Fine.\n");
    let err = stderr(&out);
    assert!(
        err.contains("MCP server `remote` failed to start: cannot reach http://127.0.0.1:9/mcp: ")
            && err.contains("refused"),
        "{err}"
    );
    assert!(!err.contains("rmcp::") && !err.contains("secret"), "{err}");
}

/// loki under a 2 GiB address-space limit and a 30 s timeout, so that a run that reads
/// without bound (as before these limits) fails instead of exhausting the machine.
fn guarded(env: &TestEnv, args: &[&str]) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new("sh");
    cmd.env_clear();
    for (k, v) in env.env_pairs() {
        cmd.env(k, v);
    }
    cmd.current_dir(env.work_dir())
        .arg("-c")
        .arg(r#"ulimit -v 2097152; exec "$0" "$@""#)
        .arg(crate::common::LOKI)
        .args(args)
        .timeout(Duration::from_secs(30));
    cmd
}

fn with_config(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("{extra}{cfg}"));
    env
}

#[test]
fn devices_are_refused_unless_allowed_and_then_judged_by_their_first_bytes() {
    let env = TestEnv::new();
    let started = Instant::now();
    let out = guarded(&env, &["-f", "/dev/zero", "what is this"])
        .assert()
        .failure();
    assert!(
        stderr(&out).contains(
            "/dev/zero is not a regular file (a character device); pipe its contents instead, \
             or set `allow_special_files: true`"
        ),
        "{}",
        stderr(&out)
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(env.server.request_count(), 0);

    // Allowed, a device of random bytes is binary from its first 8 KiB.
    let env = with_config("allow_special_files: true\n");
    let out = guarded(&env, &["-f", "/dev/urandom", "what is this"])
        .assert()
        .failure();
    assert!(
        stderr(&out).contains("/dev/urandom looks like a binary file"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.server.request_count(), 0);
}

#[cfg(unix)]
#[test]
fn an_allowed_fifo_is_read_up_to_the_limit() {
    let env = with_config("allow_special_files: true\nmax_input_size: 100000\n");
    let fifo = env.work_dir().join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    // A writer that would go on for ever.
    std::thread::spawn(move || {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(fifo) {
            let line = [b'a'; 4096];
            while f.write_all(&line).is_ok() {}
        }
    });
    let out = guarded(&env, &["-f", "pipe", "summarise"])
        .assert()
        .failure();
    assert!(
        stderr(&out).contains(
            "pipe would take the input over the 97.7 KiB limit; attach less, or raise \
             `max_input_size` in config.yaml (now 100000)"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.server.request_count(), 0);
}

#[test]
fn a_file_over_the_limit_is_refused_before_it_is_read() {
    let env = TestEnv::new();
    // 1.5 GiB, sparse: text at the start, so only its size can refuse it.
    let path = env.write("huge.log", "log line\n".repeat(100));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(1536 * 1024 * 1024)
        .unwrap();
    let started = Instant::now();
    let out = guarded(&env, &["-f", "huge.log", "summarise"])
        .assert()
        .failure();
    assert!(
        stderr(&out).contains(
            "huge.log (1.5 GiB) would take the input over the 8 MiB limit; attach less, or \
             raise `max_input_size` in config.yaml (now 8388608)"
        ),
        "{}",
        stderr(&out)
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(env.server.request_count(), 0);
}

#[test]
fn the_limit_covers_all_files_and_piped_stdin_together() {
    let env = with_config("max_input_size: 1000\n");
    env.write("a.txt", "a".repeat(600));
    env.write("b.txt", "b".repeat(600));
    env.loki().args(["-f", "a.txt", "go"]).assert().success();
    let out = env
        .loki()
        .args(["-f", "a.txt", "-f", "b.txt", "go"])
        .assert()
        .failure();
    assert!(
        stderr(&out).contains("b.txt (600 bytes) would take the input over the 1000 bytes limit"),
        "{}",
        stderr(&out)
    );
    let out = env
        .loki()
        .arg("go")
        .write_stdin("s".repeat(5000))
        .assert()
        .failure();
    assert!(
        stderr(&out).contains(
            "piped input would take the input over the 1000 bytes limit; attach less, or \
             raise `max_input_size` in config.yaml (now 1000)"
        ),
        "{}",
        stderr(&out)
    );
    // Piped text and a file share the budget.
    let out = env
        .loki()
        .args(["-f", "a.txt"])
        .write_stdin("s".repeat(600))
        .assert()
        .failure();
    assert!(
        stderr(&out).contains("a.txt (600 bytes) would take"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.server.request_count(), 1);
}

#[test]
fn an_empty_directory_is_a_warning_or_a_clear_error() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.work_dir().join("empty")).unwrap();
    let out = env.loki().args(["-f", "empty"]).assert().failure();
    assert!(
        stderr(&out).contains(
            "nothing to send: empty holds no text files to attach; give a prompt, or point -f at files"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.server.request_count(), 0);

    env.server.push(openai::text_stream(&["Hello."]));
    let out = env.loki().args(["-f", "empty", "hello"]).assert().success();
    assert_eq!(stdout(&out), "Hello.\n");
    assert!(
        stderr(&out).contains("nothing attached from empty: no text files in it"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_negative_wrap_says_what_is_expected() {
    let env = with_config("wrap: -5\n");
    let out = env.loki().arg("hi").assert().failure();
    let err = stderr(&out);
    assert!(
        err.contains("config.yaml:1:7: wrap: expected `no`, `auto` or a column count, got `-5`"),
        "{err}"
    );
    assert!(!err.contains("untagged"), "{err}");
    assert_eq!(env.server.request_count(), 0);
}

#[test]
fn a_bad_session_content_says_what_is_expected() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["Hello."]));
    env.loki().args(["-s", "notes", "hi"]).assert().success();
    let file = env.session_file("notes");
    let text = std::fs::read_to_string(&file).unwrap();
    // The first message's content (a block scalar) becomes a mapping.
    let mut lines: Vec<&str> = Vec::new();
    let mut replaced = false;
    let mut skipping = false;
    for line in text.lines() {
        if skipping && line.starts_with("    ") {
            continue;
        }
        skipping = false;
        if !replaced && line.starts_with("  content:") {
            lines.push("  content: {oops: 1}");
            replaced = true;
            skipping = true;
            continue;
        }
        lines.push(line);
    }
    assert!(replaced, "{text}");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = env.loki().args(["-s", "notes", "again"]).assert().failure();
    let err = stderr(&out);
    assert!(
        err.contains(
            "invalid type: map, expected text, or a list of parts such as `{type: text, text: ...}`"
        ),
        "{err}"
    );
    assert!(!err.contains("untagged"), "{err}");
}

#[test]
fn a_byte_order_mark_does_not_hide_the_first_key() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    // The first key picks a model other than the client's first.
    env.write_config(&format!(
        "\u{feff}{}",
        cfg.replace("model: fake:gpt-4o-mini", "model: fake:text-only")
    ));
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(roles.join("terse.md"), "\u{feff}Answer in one word.\n").unwrap();
    env.server.push(openai::text_stream(&["Blue."]));
    let out = env
        .loki()
        .args(["-r", "terse", "-s", "sky", "colour of the sky?"])
        .assert()
        .success();
    assert!(!stderr(&out).contains("unknown key"), "{}", stderr(&out));
    let body = env.server.last_request().json();
    assert_eq!(body["model"], "text-only");
    assert_eq!(body["messages"][0]["content"], "Answer in one word.");

    // A session file saved with a byte order mark keeps its model.
    let file = env.session_file("sky");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("model: fake:text-only"), "{text}");
    std::fs::write(
        &file,
        format!("\u{feff}{}", text.replace("fake:text-only", "fake:priced")),
    )
    .unwrap();
    env.server.push(openai::text_stream(&["Still blue."]));
    let out = env
        .loki()
        .args(["-s", "sky", "and now?"])
        .assert()
        .success();
    assert!(!stderr(&out).contains("unknown key"), "{}", stderr(&out));
    assert_eq!(env.server.last_request().json()["model"], "priced");
}

#[test]
fn a_deeply_nested_config_is_refused_at_once() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "{cfg}wrap: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    ));
    let line = cfg.lines().count() + 1;
    let started = Instant::now();
    let out = env
        .loki()
        .arg("hi")
        .timeout(Duration::from_secs(20))
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "config.yaml:{line}:71: nested more than 64 levels deep (brackets or braces); \
             no loki setting nests that deep"
        )),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(env.server.request_count(), 0);
}
