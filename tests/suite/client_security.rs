//! Hostile or broken provider answers (issue 12, items 5, 6, 9, 12 and the provider parts
//! of 15): tool output and keys never reach the debug log or the terminal, one huge stream
//! event costs linear time and an endless one is refused, streams that never end are cut by
//! the idle and per-request limits (keeping the partial answer), and answers that are not
//! what the protocol sends are described for what they are.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::fake_llm::{BodyMode, Frame, Reply, anthropic, bedrock, cohere, gemini, openai};
use crate::common::{TestEnv, stderr, stdout};

/// The last line of stderr, which must be loki's error line.
fn error_line(out: &assert_cmd::assert::Assert) -> String {
    let err = stderr(out);
    let line = err.lines().last().unwrap_or_default().to_string();
    assert!(line.starts_with("error: "), "stderr: {err}");
    line
}

// ---- Item 5: the debug log shows tool output only as its size, for every client ----

const CANARY: &str = "CANARY-7f3e-tool-output-in-a-file";

fn ndjson(lines: &[serde_json::Value]) -> Reply {
    let base = Reply::raw(200, "application/x-ndjson", Vec::new()).mode(BodyMode::Chunked);
    Reply {
        frames: lines
            .iter()
            .map(|l| Frame::new(format!("{l}\n").into_bytes()))
            .collect(),
        ..base
    }
}

/// A client of one type, scripted to call `fs_read` on `a.txt` and then answer `Done.`.
struct Client {
    kind: &'static str,
    /// The `clients:` entry (without the leading `- `), `{base}`/`{root}`/`{sa}` filled in.
    entry: String,
    model: &'static str,
    replies: Vec<Reply>,
}

const ARGS: &str = r#"{"path":"a.txt"}"#;

fn openai_replies() -> Vec<Reply> {
    vec![
        openai::tool_call_stream(&[("call_1", "fs_read", ARGS)]),
        openai::text_stream(&["Done."]),
    ]
}

fn claude_replies() -> Vec<Reply> {
    vec![
        anthropic::tool_use_stream(&[("toolu_1", "fs_read", ARGS)]),
        anthropic::text_stream(&["Done."]),
    ]
}

fn gemini_replies() -> Vec<Reply> {
    vec![
        gemini::function_call_stream(&[("fs_read", ARGS)]),
        gemini::text_stream(&["Done."]),
    ]
}

fn every_client(env: &TestEnv, sa: &std::path::Path) -> Vec<Client> {
    let base = env.server.base_url();
    let root = env.server.root_url();
    let tools = "\n      supports_function_calling: true";
    let vertex = |model: &'static str, replies: Vec<Reply>| Client {
        kind: "vertexai",
        entry: format!(
            "type: vertexai\n    name: vertex\n    api_base: {root}\n    project_id: p\n    location: us-east5\n    adc_file: {}\n    models:\n    - name: {model}{tools}",
            sa.display()
        ),
        model,
        replies,
    };
    vec![
        Client {
            kind: "openai",
            entry: format!(
                "type: openai\n    api_base: {base}\n    api_key: sk-openai-test\n    models:\n    - name: gpt-4o{tools}"
            ),
            model: "openai:gpt-4o",
            replies: openai_replies(),
        },
        Client {
            kind: "openai-compatible",
            entry: format!(
                "type: openai-compatible\n    name: compat\n    api_base: {base}\n    api_key: compat-test-key\n    models:\n    - name: m{tools}"
            ),
            model: "compat:m",
            replies: openai_replies(),
        },
        Client {
            kind: "azure-openai",
            entry: format!(
                "type: azure-openai\n    name: azure\n    api_base: {root}\n    api_key: azure-test-key\n    models:\n    - name: dep{tools}"
            ),
            model: "azure:dep",
            replies: openai_replies(),
        },
        Client {
            kind: "claude",
            entry: format!(
                "type: claude\n    api_base: {base}\n    api_key: sk-ant-test-key\n    models:\n    - name: claude-sonnet-4-5{tools}"
            ),
            model: "claude:claude-sonnet-4-5",
            replies: claude_replies(),
        },
        Client {
            kind: "gemini",
            entry: format!(
                "type: gemini\n    api_base: {root}/v1beta\n    api_key: AIza-test-key\n    models:\n    - name: gemini-2.5-flash{tools}"
            ),
            model: "gemini:gemini-2.5-flash",
            replies: gemini_replies(),
        },
        vertex("gemini-2.5-flash", gemini_replies()),
        vertex("claude-sonnet-4-5@20250929", claude_replies()),
        vertex("mistral-large-2411", openai_replies()),
        Client {
            kind: "bedrock",
            entry: format!(
                "type: bedrock\n    api_base: {root}\n    region: eu-west-1\n    access_key_id: AKIDTEST\n    secret_access_key: bedrock-secret-test\n    models:\n    - name: anthropic.claude-sonnet-4-5-v1:0{tools}"
            ),
            model: "bedrock:anthropic.claude-sonnet-4-5-v1:0",
            replies: vec![
                bedrock::tool_use_stream(&[("tooluse_1", "fs_read", ARGS)]),
                bedrock::text_stream(&["Done."]),
            ],
        },
        Client {
            kind: "cohere",
            entry: format!(
                "type: cohere\n    api_base: {root}/v2\n    api_key: cohere-test-key\n    models:\n    - name: command-a-03-2025{tools}"
            ),
            model: "cohere:command-a-03-2025",
            replies: vec![
                cohere::tool_call_stream(&[("fs_read_1", "fs_read", ARGS)]),
                cohere::text_stream(&["Done."]),
            ],
        },
        Client {
            kind: "ollama",
            entry: format!(
                "type: ollama\n    api_base: {root}\n    models:\n    - name: qwen3:8b{tools}"
            ),
            model: "ollama:qwen3:8b",
            replies: vec![
                ndjson(&[
                    json!({"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "fs_read", "arguments": {"path": "a.txt"}}}]}, "done": false}),
                    json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 20, "eval_count": 5}),
                ]),
                ndjson(&[
                    json!({"message": {"role": "assistant", "content": "Done."}, "done": false}),
                    json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 30, "eval_count": 3}),
                ]),
            ],
        },
    ]
}

/// A service-account file whose token endpoint is the fake server.
fn service_account(env: &TestEnv) -> PathBuf {
    let credentials = json!({
        "type": "service_account",
        "project_id": "p",
        "client_email": "loki@p.iam.gserviceaccount.com",
        "private_key": include_str!("../data/test_service_account_key.pem"),
        "token_uri": format!("{}/token", env.server.root_url()),
    });
    env.write("sa.json", credentials.to_string())
}

/// `llama-server` is left out: it is the OpenAI wire code behind a process loki starts,
/// and its test double cannot script tool calls.
#[test]
fn the_debug_log_shows_tool_output_only_as_its_size_for_every_client() {
    let env = TestEnv::new();
    env.write("a.txt", format!("{CANARY}\n"));
    let sa = service_account(&env);
    for (i, client) in every_client(&env, &sa).into_iter().enumerate() {
        env.write_config(&format!(
            "model: {}\nenabled_tools: fs_read\nclients:\n  - {}\n",
            client.model, client.entry
        ));
        env.server.clear_requests();
        env.server.push_for(
            "/token",
            Reply::json(
                200,
                json!({"access_token": "ya29.test-token", "expires_in": 3599}),
            ),
        );
        for reply in client.replies {
            env.server.push(reply);
        }
        let log = env.root().join(format!("debug-{i}.log"));
        let out = env
            .loki()
            .env("LOKI_LOG_LEVEL", "debug")
            .env("LOKI_LOG_FILE", &log)
            .arg("what is in a.txt?")
            .assert();
        let out = out.success();
        assert!(
            stdout(&out).ends_with("Done.\n"),
            "{}: {}",
            client.kind,
            stdout(&out)
        );
        let sent = env.server.last_request().body_str();
        assert!(
            sent.contains(CANARY),
            "{}: the tool result did not reach the model: {sent}",
            client.kind
        );
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.contains("bytes of tool output]"),
            "{}: {text}",
            client.kind
        );
        assert!(
            !text.contains(CANARY),
            "{}: tool output leaked into the debug log:\n{text}",
            client.kind
        );
    }
}

// ---- Item 6: known keys are redacted from error lines and log records ----

const KEY: &str = "sk-live-4f9a2b7c1d8e";

#[test]
fn a_key_echoed_by_the_provider_is_redacted_from_the_error_and_the_log() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path())
        .unwrap()
        .replace("api_key: test-key", &format!("api_key: {KEY}"));
    env.write_config(&cfg);
    env.server.push(openai::error(
        401,
        &format!(
            "Incorrect API key provided: {KEY}. You can find your API key at https://example.com."
        ),
        "invalid_request_error",
    ));
    let log = env.root().join("loki.log");
    let out = env
        .loki()
        .env("LOKI_LOG_LEVEL", "debug")
        .env("LOKI_LOG_FILE", &log)
        .arg(format!("is {KEY} my key?"))
        .assert()
        .code(1);
    let line = error_line(&out);
    assert!(!stderr(&out).contains(KEY), "{}", stderr(&out));
    assert!(
        line.contains("Incorrect API key provided: «secret:FAKE_API_KEY»"),
        "{line}"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains(KEY), "the key reached the log:\n{text}");
    assert!(text.contains("is «secret:FAKE_API_KEY» my key?"), "{text}");

    // A key from the environment, echoed in an error event in the middle of a stream.
    let key = "sk-ant-from-env-93c1f0";
    env.write_config(&format!(
        "model: claude:claude-sonnet-4-5\nclients:\n  - type: claude\n    api_base: {}\n",
        env.server.base_url()
    ));
    env.server.push(Reply::sse(vec![
        anthropic::event(&json!({"type": "message_start", "message": {"usage": {"input_tokens": 1, "output_tokens": 1}}})),
        anthropic::event(&json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
        anthropic::event(&json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Partial"}})),
        anthropic::event(&json!({"type": "error", "error": {"type": "permission_error", "message": format!("key {key} may not use this model")}})),
    ]));
    let out = env
        .loki()
        .env("ANTHROPIC_API_KEY", key)
        .arg("hi")
        .assert()
        .code(1);
    assert_eq!(stdout(&out), "Partial\n");
    let line = error_line(&out);
    assert!(!line.contains(key), "{line}");
    assert!(
        line.contains("key «secret:CLAUDE_API_KEY» may not"),
        "{line}"
    );

    // AWS secrets too.
    env.write_config(&format!(
        "model: bedrock:m\nclients:\n  - type: bedrock\n    api_base: {}\n    region: eu-west-1\n    access_key_id: AKIDTEST\n    secret_access_key: wJalrXUtnFEMI-secret\n    models:\n    - name: m\n",
        env.server.root_url()
    ));
    env.server.push(bedrock::error(
        403,
        "The request signature we calculated does not match (secret wJalrXUtnFEMI-secret)",
    ));
    let out = env.loki().arg("hi").assert().code(1);
    let line = error_line(&out);
    assert!(
        !line.contains("wJalrXUtnFEMI") && line.contains("«secret:BEDROCK_SECRET_ACCESS_KEY»"),
        "{line}"
    );
}

// ---- Item 9: one huge event is linear; an endless one is refused ----

/// A streamed answer whose only content event carries `text`, cut into 16 KB HTTP chunks.
fn one_big_event(text: &str) -> Reply {
    let event = openai::text_frame(text).bytes;
    let mut frames = vec![openai::role_frame()];
    frames.extend(Frame::pieces(&event, 16 * 1024, Duration::ZERO));
    frames.extend(openai::end_frames());
    Reply::sse(frames)
}

#[test]
fn a_20_mb_event_streams_in_linear_time() {
    let env = TestEnv::new();
    let line = format!("{}\n", "lorem ipsum dolor sit amet ".repeat(3));
    let text: String = line.repeat(20 * 1024 * 1024 / line.len());
    env.server.push(one_big_event(&text));
    let started = Instant::now();
    // 20 MB is over the 16 MiB default of max_stream_event_size: raise it.
    let out = env
        .loki()
        .env("LOKI_MAX_STREAM_EVENT_SIZE", (32 << 20).to_string())
        .arg("hi")
        .assert()
        .success();
    let elapsed = started.elapsed();
    eprintln!("20 MB event: {elapsed:?}");
    assert_eq!(
        stdout(&out).trim_end().len(),
        text.trim_end().len(),
        "the whole event arrived"
    );
    // Quadratic decoding took 19 s in a release build (minutes in a debug one).
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
}

/// `Hello`, then `endless` cut into 64 KB chunks, then silence.
fn endless_after_hello(first: Vec<Frame>, endless: &[u8]) -> Vec<Frame> {
    let mut frames = first;
    frames.extend(Frame::pieces(endless, 64 * 1024, Duration::ZERO));
    frames
}

#[test]
fn an_event_over_max_stream_event_size_is_refused_and_the_answer_kept() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path())
        .unwrap()
        .replace("max_retries: 2", "max_retries: 2\n      read_timeout: 20");
    env.write_config(&cfg);
    let endless = [
        &b"data: {\"choices\":[{\"delta\":{\"content\":\""[..],
        &[b'x'; 3 << 20],
    ]
    .concat();
    let frames = endless_after_hello(
        vec![openai::role_frame(), openai::text_frame("Hello")],
        &endless,
    );
    let count = frames.len();
    env.server.push(Reply::sse(frames).hang_after(count));
    let started = Instant::now();
    let out = env
        .loki()
        .env("LOKI_MAX_STREAM_EVENT_SIZE", "1048576")
        .arg("hi")
        .assert()
        .code(1);
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(stdout(&out), "Hello\n", "the answer so far is kept");
    let line = error_line(&out);
    assert!(
        line.contains("single stream event larger than 1 MiB")
            && line.contains("max_stream_event_size"),
        "{line}"
    );

    // NDJSON (Ollama): one line without an end.
    env.write_config(&format!(
        "model: ollama:m\nmax_stream_event_size: 1048576\nclients:\n  - type: ollama\n    api_base: {}\n    extra:\n      read_timeout: 20\n    models:\n    - name: m\n",
        env.server.root_url()
    ));
    let first =
        ndjson(&[json!({"message": {"role": "assistant", "content": "Hello"}, "done": false})]);
    let frames = endless_after_hello(first.frames.clone(), &[b'{'; 3 << 20]);
    let count = frames.len();
    env.server.push(Reply { frames, ..first }.hang_after(count));
    let out = env.loki().arg("hi").assert().code(1);
    assert_eq!(stdout(&out), "Hello\n");
    assert!(
        error_line(&out).contains("larger than 1 MiB"),
        "{}",
        stderr(&out)
    );

    // Bedrock event-stream: a frame that declares 3 MiB is refused before it arrives.
    env.write_config(&format!(
        "model: bedrock:m\nmax_stream_event_size: 1048576\nclients:\n  - type: bedrock\n    api_base: {}\n    region: eu-west-1\n    access_key_id: AKIDTEST\n    secret_access_key: bedrock-secret-test\n    extra:\n      read_timeout: 20\n    models:\n    - name: m\n",
        env.server.root_url()
    ));
    let hello = bedrock::event(
        "contentBlockDelta",
        &json!({"contentBlockIndex": 0, "delta": {"text": "Hello"}}),
    );
    let big = bedrock::event(
        "contentBlockDelta",
        &json!({"contentBlockIndex": 0, "delta": {"text": "y".repeat(3 << 20)}}),
    );
    let frames = endless_after_hello(vec![hello], &big.bytes[..1 << 20]);
    let count = frames.len();
    env.server.push(bedrock::stream(frames).hang_after(count));
    let out = env.loki().arg("hi").assert().code(1);
    assert_eq!(stdout(&out), "Hello\n");
    assert!(
        error_line(&out).contains("larger than 1 MiB"),
        "{}",
        stderr(&out)
    );
}

// ---- Item 12: streams that never end ----

#[test]
fn keep_alives_or_a_trickle_without_content_hit_the_idle_timeout() {
    let env = TestEnv::new();
    let mut frames = vec![openai::role_frame(), openai::text_frame("Partial")];
    frames.extend((0..150).map(|_| {
        let mut f = openai::keep_alive_frame();
        f.delay = Duration::from_millis(200);
        f
    }));
    frames.extend(openai::end_frames());
    env.server.push(Reply::sse(frames));
    let started = Instant::now();
    let out = env
        .loki()
        .env("LOKI_STREAM_IDLE_TIMEOUT", "2")
        .arg("hi")
        .assert()
        .code(1);
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(12), "took {elapsed:?}");
    assert_eq!(stdout(&out), "Partial\n", "the partial answer is kept");
    let line = error_line(&out);
    assert!(
        line.contains("no answer content for 2s") && line.contains("stream_idle_timeout"),
        "{line}"
    );

    // One byte every 300 ms of an event that never completes.
    let mut frames = vec![openai::role_frame(), openai::text_frame("Partial")];
    frames.extend(Frame::pieces(
        &openai::text_frame("never finished").bytes,
        1,
        Duration::from_millis(300),
    ));
    env.server.push(Reply::sse(frames));
    let started = Instant::now();
    let out = env
        .loki()
        .env("LOKI_STREAM_IDLE_TIMEOUT", "2")
        .arg("hi")
        .assert()
        .code(1);
    assert!(started.elapsed() < Duration::from_secs(12));
    assert_eq!(stdout(&out), "Partial\n");
    assert!(
        error_line(&out).contains("stream_idle_timeout"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_answer_that_never_ends_hits_the_request_timeout() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("request_timeout: 3\n{cfg}"));
    let mut frames = vec![openai::role_frame()];
    frames.extend((0..120).map(|_| {
        let mut f = openai::text_frame("tick ");
        f.delay = Duration::from_millis(250);
        f
    }));
    frames.extend(openai::end_frames());
    env.server.push(Reply::sse(frames));
    let started = Instant::now();
    let out = env.loki().arg("hi").assert().code(1);
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(12), "took {elapsed:?}");
    assert!(stdout(&out).starts_with("tick tick"), "{}", stdout(&out));
    let line = error_line(&out);
    assert!(
        line.contains("did not finish the answer within 3s") && line.contains("request_timeout"),
        "{line}"
    );

    // The limit covers waiting for the reply to start, too (set from the environment).
    env.server
        .push(openai::text_stream(&["late"]).delay_headers(Duration::from_secs(20)));
    let started = Instant::now();
    let out = env
        .loki()
        .env("LOKI_REQUEST_TIMEOUT", "2")
        .arg("hi")
        .assert()
        .code(1);
    assert!(started.elapsed() < Duration::from_secs(12));
    assert!(
        error_line(&out).contains("within 2s — the `request_timeout` limit"),
        "{}",
        stderr(&out)
    );
}

// ---- Item 15: answers that are not what the protocol sends ----

const PORTAL: &str = "<!DOCTYPE html>\n<html><head><title>Wi-Fi login required</title></head>\n<body><form>…</form></body></html>\n";

#[test]
fn a_document_instead_of_a_stream_says_what_arrived() {
    let env = TestEnv::new();
    env.server
        .push(Reply::raw(200, "text/html; charset=utf-8", PORTAL));
    let out = env.loki().arg("hi").assert().code(1);
    let line = error_line(&out);
    assert!(
        line.contains("answered HTTP 200 with `text/html; charset=utf-8`")
            && line.contains("Wi-Fi login required")
            && !line.contains("cut"),
        "{line}"
    );

    env.server.push(Reply::raw(
        200,
        "text/plain",
        "upstream connect error or disconnect/reset before headers",
    ));
    let line = error_line(&env.loki().arg("hi").assert().code(1));
    assert!(
        line.contains("`text/plain`")
            && line.contains("upstream connect error or disconnect/reset before headers"),
        "{line}"
    );

    // A native client that reads non-SSE replies as JSON says the same.
    env.write_config(&format!(
        "model: claude:claude-sonnet-4-5\nclients:\n  - type: claude\n    api_base: {}\n    api_key: sk-ant-test\n",
        env.server.base_url()
    ));
    env.server.push(Reply::raw(200, "text/html", PORTAL));
    let line = error_line(&env.loki().arg("hi").assert().code(1));
    assert!(
        line.contains("`text/html`") && line.contains("Wi-Fi login required"),
        "{line}"
    );
}

#[test]
fn a_proxy_error_page_is_reduced_to_its_title() {
    let env = TestEnv::new();
    env.server.set_default(Reply::raw(
        502,
        "text/html",
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n",
    ));
    let out = env.loki().arg("hi").assert().code(1);
    let line = error_line(&out);
    assert!(
        line.contains("(HTTP 502): 502 Bad Gateway (an HTML page)"),
        "{line}"
    );
    assert!(!stderr(&out).contains('<'), "{}", stderr(&out));
}

#[test]
fn an_api_base_that_is_not_a_url_fails_at_once_naming_client_and_value() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path())
        .unwrap()
        .replace(&env.server.base_url(), "not a url");
    env.write_config(&cfg);
    let started = Instant::now();
    let out = env.loki().arg("hi").assert().code(1);
    assert!(started.elapsed() < Duration::from_secs(5));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "no retries: {err}");
    let line = error_line(&out);
    assert!(
        line.contains("client `fake`")
            && line.contains("`not a url`")
            && line.contains("api_base")
            && !line.contains("builder error"),
        "{line}"
    );
}

#[test]
fn an_unknown_platform_is_named_with_where_to_find_the_valid_ones() {
    let env = TestEnv::bare();
    let out = env
        .loki()
        .env("LOKI_PLATFORM", "bogus")
        .arg("hi")
        .assert()
        .code(1);
    let line = error_line(&out);
    assert!(
        line.contains("LOKI_PLATFORM")
            && line.contains("unknown vendor `bogus`")
            && line.contains("known vendors: openai, claude, gemini")
            && !line.contains("no model configured"),
        "{line}"
    );
}
