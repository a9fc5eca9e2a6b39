//! What users of a local llama.cpp `llama-server` tripped over: keep-alive connections
//! the server closes, answers without an output cap, cut-off answers in the REPL and in
//! one-shot mode, the Responses API's incomplete status and cached tokens, and speed
//! (time to first token, tokens per second).

use std::time::Duration;

use serde_json::json;

use crate::common::fake_llm::{Reply, openai};
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr, stdout};

use super::server::Served;
use super::tools::tools_env;

// ----- item 1: a keep-alive connection the server closed -----

/// The server closes the pooled connection the request after a tool call goes out on,
/// before answering it (what llama-server does in 7 of 10 tool loops). `no_response()`
/// on the kept-alive connection is the deterministic form of that race: the request is
/// written, then the socket closes without a byte. loki sends it again at once on a
/// fresh connection and says nothing.
#[test]
fn a_reused_connection_closed_by_the_server_is_retried_silently() {
    let env = tools_env("");
    env.write("notes.txt", "alpha\n");
    env.server.push(openai::tool_call_stream(&[(
        "call_1",
        "fs_read",
        r#"{"path":"notes.txt"}"#,
    )]));
    env.server.push(Reply::no_response());
    env.server.push(openai::text_stream(&["It says alpha."]));
    let out = env.loki().arg("what is in notes.txt?").assert().success();
    assert_eq!(stdout(&out), "It says alpha.\n");
    let err = stderr(&out);
    assert!(
        !err.contains("warning") && !err.contains("retrying"),
        "a closed keep-alive connection is retried without a word: {err}"
    );
    let requests = env.server.requests();
    assert_eq!(requests.len(), 3, "the dropped request is sent once more");
    assert_eq!(requests[1].body, requests[2].body);
}

/// A fresh connection the server closes without answering is a real failure, named for
/// what it is: the server closed it; it is not "cannot reach".
#[test]
fn a_server_that_closes_fresh_connections_is_named_correctly() {
    let env = TestEnv::new();
    for _ in 0..3 {
        env.server.push(Reply::no_response());
    }
    let out = env.loki().arg("hi").assert().failure();
    let err = stderr(&out);
    assert!(
        err.contains("`fake` closed the connection before answering; retrying in"),
        "{err}"
    );
    assert!(
        err.contains("error: `fake` closed the connection before answering"),
        "{err}"
    );
    assert!(!err.contains("cannot reach"), "{err}");
    assert_eq!(env.server.request_count(), 3);
}

// ----- item 2: local models get an output limit -----

/// The zero-config start on a llama-server (nothing but `LLAMACPP_API_BASE`) used to send
/// no limit at all: the answer ran until the context was full.
#[test]
fn the_zero_config_local_start_sends_an_output_limit() {
    let env = TestEnv::bare();
    env.server
        .push_for("/v1/models", openai::models_list(&["qwen3-8b"]));
    env.server
        .push_for("/v1/chat", openai::text_stream(&["ok"]));
    env.loki()
        .env("LLAMACPP_API_BASE", env.server.base_url())
        .arg("hi")
        .assert()
        .success();
    let chat = env
        .server
        .requests()
        .into_iter()
        .find(|r| r.path_only() == "/v1/chat/completions")
        .expect("a chat request");
    assert_eq!(chat.json()["max_tokens"], 4096, "{}", chat.body_str());
}

/// A configured openai-compatible client on 127.0.0.1 is local too; the limit follows
/// the context window when it is small, and `max_output_tokens` on the model or the
/// client overrides it (`0`: no limit).
#[test]
fn local_output_limits_follow_the_config() {
    let env = TestEnv::new();
    let sent = |args: &[&str]| {
        env.server.push(openai::text_stream(&["ok"]));
        env.loki().args(args).arg("hi").assert().success();
        env.server.last_request().json().get("max_tokens").cloned()
    };
    assert_eq!(sent(&[]), Some(4096.into()));

    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(
        &config
            .replace(
                "      - name: text-only\n",
                "      - name: text-only\n        max_input_tokens: 2048\n",
            )
            .replace(
                "      - name: priced\n",
                "      - name: priced\n        max_output_tokens: 0\n",
            )
            .replace("    extra:\n", "    max_output_tokens: 1000\n    extra:\n"),
    );
    // The client's value wins over the default ...
    assert_eq!(sent(&[]), Some(1000.into()));
    // ... and over the window-based default; a model's own `0` turns the limit off.
    assert_eq!(sent(&["-m", "fake:text-only"]), Some(1000.into()));
    assert_eq!(sent(&["-m", "fake:priced"]), None);

    env.write_config(&config.replace(
        "      - name: text-only\n",
        "      - name: text-only\n        max_input_tokens: 2048\n",
    ));
    assert_eq!(sent(&["-m", "fake:text-only"]), Some(1024.into()));
}

// ----- item 4: the Responses API's cut-off answers and cached tokens -----

const OPEN: &str = "api:\n  auth:\n    mode: Disabled";

/// A streamed answer cut at the output limit, whose usage says 7 prompt tokens came from
/// the provider's cache.
fn cut_answer_with_cached_tokens() -> Reply {
    Reply::sse(vec![
        openai::data_frame(&openai::chunk_json(
            r#"{"role":"assistant","content":""}"#,
            None,
        )),
        openai::data_frame(&openai::chunk_json(r#"{"content":"Once upon"}"#, None)),
        openai::data_frame(&openai::chunk_json("{}", Some("length"))),
        openai::data_frame(
            r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25,"prompt_tokens_details":{"cached_tokens":7}}}"#,
        ),
        openai::done_frame(),
    ])
}

/// The `data:` of the SSE event named `name`.
fn event_data(body: &str, name: &str) -> Option<serde_json::Value> {
    let mut lines = body.lines();
    while let Some(line) = lines.next() {
        if line == format!("event: {name}") {
            let data = lines.next()?.strip_prefix("data: ")?;
            return serde_json::from_str(data).ok();
        }
    }
    None
}

#[test]
fn a_responses_answer_cut_at_the_limit_is_incomplete_and_cached_tokens_pass_through() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);

    env.server.push(cut_answer_with_cached_tokens());
    let whole = served.post(
        "/v1/responses",
        json!({"model": "fake:gpt-4o-mini", "input": "tell a story", "max_output_tokens": 5}),
    );
    assert_eq!(whole.status, 200, "{}", whole.body);
    let object = whole.json();
    assert_eq!(object["status"], "incomplete", "{object}");
    assert_eq!(
        object["incomplete_details"],
        json!({"reason": "max_output_tokens"})
    );
    assert_eq!(object["usage"]["input_tokens_details"]["cached_tokens"], 7);
    assert_eq!(object["output"][0]["content"][0]["text"], "Once upon");
    assert_eq!(env.server.last_request().json()["max_tokens"], 5);

    env.server.push(cut_answer_with_cached_tokens());
    let streamed = served.post(
        "/v1/responses",
        json!({"model": "fake:gpt-4o-mini", "input": "tell a story", "stream": true}),
    );
    assert_eq!(streamed.status, 200, "{}", streamed.body);
    assert!(
        event_data(&streamed.body, "response.completed").is_none(),
        "{}",
        streamed.body
    );
    let item = event_data(&streamed.body, "response.output_item.done")
        .unwrap_or_else(|| panic!("no response.output_item.done in {}", streamed.body));
    assert_eq!(item["item"]["status"], "incomplete", "{item}");
    let last = event_data(&streamed.body, "response.incomplete")
        .unwrap_or_else(|| panic!("no response.incomplete in {}", streamed.body));
    assert_eq!(last["response"]["status"], "incomplete");
    assert_eq!(
        last["response"]["incomplete_details"]["reason"],
        "max_output_tokens"
    );
    assert_eq!(
        last["response"]["usage"]["input_tokens_details"]["cached_tokens"],
        7
    );

    // A whole answer completes as before.
    env.server.push(openai::text_stream(&["Done."]));
    let done = served.post(
        "/v1/responses",
        json!({"model": "fake:gpt-4o-mini", "input": "hi"}),
    );
    assert_eq!(done.json()["status"], "completed");
    assert_eq!(done.json()["incomplete_details"], serde_json::Value::Null);
}

#[test]
fn chat_completions_report_cached_prompt_tokens() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    env.server.push(cut_answer_with_cached_tokens());
    let whole = served.post(
        "/v1/chat/completions",
        json!({"model": "fake:gpt-4o-mini", "messages": [{"role": "user", "content": "go"}]}),
    );
    assert_eq!(whole.status, 200, "{}", whole.body);
    let body = whole.json();
    assert_eq!(body["usage"]["prompt_tokens_details"]["cached_tokens"], 7);
    assert_eq!(body["choices"][0]["finish_reason"], "length");

    env.server.push(cut_answer_with_cached_tokens());
    let streamed = served.post(
        "/v1/chat/completions",
        json!({"model": "fake:gpt-4o-mini", "stream": true,
            "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": "go"}]}),
    );
    let usage = streamed
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d).ok())
        .find(|chunk| !chunk["usage"].is_null())
        .unwrap_or_else(|| panic!("no usage chunk in {}", streamed.body));
    assert_eq!(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 7);
}

// ----- item 3: an answer cut off at the output limit -----

fn cut_off(text: &str) -> Reply {
    openai::stream_from_deltas(&[json!({ "content": text })], "length", 5, 4)
}

/// On a terminal with colours the renderer prints an unfinished line raw and restyles it
/// when it ends; the warning used to be written in between, so the answer appeared twice
/// with the warning glued to the end of the first copy.
#[test]
fn a_cut_off_answer_is_printed_once_in_the_repl_with_the_warning_on_its_own_line() {
    let env = TestEnv::new();
    env.server.push(cut_off("Once upon a time"));
    let mut pty = Pty::spawn(&env, &[], &[]);
    let mut screen = vt100::Parser::new(24, 80, 0);
    let prompt = "gpt-4o-mini)> ";
    let wait = Duration::from_secs(15);
    assert!(pty.drive(&mut screen, wait, |s| s.contents().contains(prompt)));
    pty.send("tell a story\r");
    let settled = pty.drive(&mut screen, wait, |s| {
        s.contents().matches(prompt).count() >= 2
    });
    let contents = screen.screen().contents();
    assert!(settled, "{contents}");
    assert_eq!(
        contents.matches("Once upon a time").count(),
        1,
        "{contents}"
    );
    let warning = contents
        .lines()
        .find(|l| l.contains("cut off"))
        .unwrap_or_else(|| panic!("no warning in {contents}"));
    assert!(warning.starts_with("warning: "), "{contents}");
    assert!(warning.contains(".continue carries on"), "{contents}");
}

/// `.continue` exists only in the REPL: a one-shot run says what works there.
#[test]
fn a_one_shot_cut_off_warning_suggests_what_works_there() {
    let env = TestEnv::new();
    env.server.push(cut_off("Once upon a time"));
    let out = env.loki().arg("tell a story").assert().success();
    assert_eq!(stdout(&out), "Once upon a time\n");
    let err = stderr(&out);
    assert!(err.contains("cut off at the model's output limit"), "{err}");
    assert!(err.contains("raise max_output_tokens"), "{err}");
    assert!(!err.contains(".continue"), "{err}");

    env.server.push(cut_off("Once upon a time"));
    let out = env
        .loki()
        .args(["-s", "story", "tell a story"])
        .assert()
        .success();
    let err = stderr(&out);
    assert!(err.contains("`loki -s story continue` carries on"), "{err}");
    assert!(!err.contains(".continue"), "{err}");
}

// ----- item 5: time to first token and tokens per second -----

/// 30 output tokens: the first text 200 ms after the request, the last 200 ms after the
/// first (one frame every 100 ms).
fn paced_answer() -> Reply {
    openai::text_stream_with_usage(&["one", " two", " three"], 10, 30)
        .frame_delay(Duration::from_millis(100))
}

/// Checks a `speed` object: the first token came after the two frames before it, and
/// the rate is 30 tokens over the 200 ms from the first text to the last (slower when
/// the machine is busy; never the end of the stream's rendering).
fn check_speed(speed: &serde_json::Value) {
    let first = speed["time_to_first_token_ms"]
        .as_u64()
        .unwrap_or_else(|| panic!("no time_to_first_token_ms in {speed}"));
    assert!((150..5000).contains(&first), "{speed}");
    let rate = speed["output_tokens_per_second"]
        .as_f64()
        .unwrap_or_else(|| panic!("no output_tokens_per_second in {speed}"));
    assert!(rate > 5.0 && rate < 400.0, "{speed}");
}

#[test]
fn the_json_result_reports_time_to_first_token_and_tokens_per_second() {
    let env = TestEnv::new();
    env.server.push(paced_answer());
    let out = env
        .loki()
        .args(["--output-format", "json", "count"])
        .assert()
        .success();
    let text = stdout(&out);
    let result: serde_json::Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "result")
        .unwrap_or_else(|| panic!("no result in {text}"));
    check_speed(&result["speed"]);
}

#[test]
fn repl_info_shows_the_last_turn_s_speed() {
    let env = TestEnv::new();
    env.server.push(paced_answer());
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    let prompt = "fake:gpt-4o-mini)> ";
    pty.expect(prompt);
    // The row after `usage`, read to its end.
    let speed_row = |pty: &mut Pty| {
        pty.send(".info\r");
        pty.expect("\nspeed");
        let row = pty.expect("\n");
        pty.expect(prompt);
        row
    };
    let before = speed_row(&mut pty);
    assert!(before.contains("none yet"), "{before}");
    pty.send("count\r");
    pty.expect("three");
    pty.expect(prompt);
    let after = speed_row(&mut pty);
    assert!(after.contains("first token "), "{after}");
    assert!(after.contains(" tokens/s (last turn)"), "{after}");
}

#[test]
fn the_server_logs_and_counts_time_to_first_token_and_tokens_per_second() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    env.server.push(paced_answer());
    let answer = served.post(
        "/v1/chat/completions",
        json!({"model": "fake:gpt-4o-mini", "messages": [{"role": "user", "content": "count"}]}),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let metrics = served.get("/metrics").body;
    let value = |name: &str| -> f64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {metrics}"))
    };
    assert_eq!(value("loki_time_to_first_token_seconds_count"), 1.0);
    let first = value("loki_time_to_first_token_seconds_sum");
    assert!((0.15..5.0).contains(&first), "{metrics}");
    assert_eq!(value("loki_output_tokens_per_second_count"), 1.0);
    let rate = value("loki_output_tokens_per_second_sum");
    assert!(rate > 5.0 && rate < 400.0, "{metrics}");
}
