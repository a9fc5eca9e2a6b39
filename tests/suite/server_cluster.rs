//! Several `loki --serve` instances on one PostgreSQL database, behind a round-robin
//! proxy, act as one service: an approval, a cancel or a reconnecting client may land on
//! any instance, and a run whose instance dies ends as failed with its partial answer.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::server::Served;
use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::http;
use crate::common::postgres::Postgres;
use crate::common::proxy::RoundRobin;

/// Sends a request through the proxy and reads the whole answer.
fn call(proxy: &RoundRobin, method: &str, path: &str, body: Option<Value>) -> http::Response {
    let body = body.map(|b| b.to_string());
    http::request(&proxy.addr, method, path, None, body.as_deref())
}

fn run_id(events: &[http::Event]) -> String {
    let started = events
        .iter()
        .find(|e| e.name == "started")
        .unwrap_or_else(|| panic!("{events:?}"));
    serde_json::from_str::<Value>(&started.data).unwrap()["request_id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Two instances on one database with tools enabled in the work dir (and `extra` in
/// their `api:` block), behind a round-robin proxy.
struct Cluster {
    env: TestEnv,
    a: Served,
    b: Served,
    proxy: RoundRobin,
    _pg: Postgres,
}

fn cluster_with_tools(extra: &str) -> Cluster {
    let pg = Postgres::start();
    let env = TestEnv::new();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "session_store: {}\nenabled_tools: all\n{config}",
        pg.url
    ));
    let api = format!(
        "api:\n  auth:\n    mode: Disabled\n{extra}  tools:\n    enabled: true\n    root: {}",
        env.work_dir().display()
    );
    let a = Served::start(&env, &api);
    let b = Served::start(&env, &api);
    let proxy = RoundRobin::start(vec![a.addr.clone(), b.addr.clone()]);
    Cluster {
        env,
        a,
        b,
        proxy,
        _pg: pg,
    }
}

#[test]
fn two_instances_behind_a_round_robin_proxy_share_runs_approvals_cancels_and_streams() {
    let Cluster {
        env,
        a,
        mut b,
        proxy,
        _pg,
    } = cluster_with_tools("  reattach_seconds: 5\n  instance_timeout_seconds: 2\n");
    let root = env.work_dir();
    let stream = |path: &str, prompt: &str| {
        let body = json!({"prompt": prompt, "stream": true}).to_string();
        http::open(&proxy.addr, "POST", path, None, Some(&body))
    };

    // 1 → A: the session. 2 → B: a run in it, waiting for an approval; its client's
    // connection drops.
    assert_eq!(proxy.next(2), 0);
    let created = call(
        &proxy,
        "POST",
        "/v1/sessions",
        Some(json!({"alias": "team"})),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    env.server.push(openai::tool_call_stream(&[(
        "call_0",
        "fs_write",
        &json!({"path": "shared.txt", "contents": "hi"}).to_string(),
    )]));
    env.server.push(openai::text_stream(&["written"]));
    let (status, _, mut reader) = stream("/v1/sessions/team/completions", "write it");
    assert_eq!(status, 200);
    let seen = http::numbered_events(&mut reader, "tool_call_approval_requested");
    let run = run_id(&seen);
    let last = seen.last().unwrap().id.expect("numbered events");
    assert_eq!(seen[0].id, Some(1), "{seen:?}");
    drop(reader);

    // 3 → A: the approval reaches the run on B.
    let approved = call(
        &proxy,
        "POST",
        &format!("/v1/runs/{run}/approvals/call_0"),
        Some(json!({"decision": "allow"})),
    );
    assert_eq!(approved.status, 200, "{}", approved.body);
    // 4 → B: the run's own instance says it is running (or already done).
    let state = call(&proxy, "GET", &format!("/v1/runs/{run}"), None);
    assert_eq!(state.status, 200, "{}", state.body);
    // 5 → A: the client comes back with Last-Event-ID and gets the rest, nothing twice.
    let last_id = last.to_string();
    let (status, _, mut reader) = http::open_with(
        &proxy.addr,
        "GET",
        &format!("/v1/runs/{run}/events"),
        &[("Last-Event-ID", last_id.as_str())],
        None,
    );
    assert_eq!(status, 200);
    let rest = http::numbered_events(&mut reader, "done");
    let names: Vec<&str> = rest.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names.last(), Some(&"done"), "{names:?}");
    assert!(names.contains(&"tool_call_finished"), "{names:?}");
    assert!(!names.contains(&"started"), "{names:?}");
    let ids: Vec<u64> = rest.iter().filter_map(|e| e.id).collect();
    assert_eq!(ids.first(), Some(&(last + 1)), "{ids:?}");
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("shared.txt")).unwrap(),
        "hi"
    );

    // 6 → B: a run whose model asks the user. 7 → A: the answer reaches it; a bad one
    // is refused by the instance it was sent to.
    env.server.push(openai::tool_call_stream(&[(
        "q1",
        "user__confirm",
        r#"{"question":"Deploy now?"}"#,
    )]));
    env.server.push(openai::text_stream(&["deploying"]));
    assert_eq!(proxy.next(2), 1);
    let (_, _, mut reader) = stream("/v1/completions", "ship it");
    let seen = http::numbered_events(&mut reader, "question_asked");
    let asking = run_id(&seen);
    let asked: Value = serde_json::from_str(&seen.last().unwrap().data).unwrap();
    assert_eq!(asked["prompt"], "Deploy now?", "{asked}");
    assert_eq!(asked["kind"], "confirm", "{asked}");
    let question = asked["question_id"].as_str().unwrap().to_string();
    let path = format!("/v1/runs/{asking}/questions/{question}");
    let bad = http::request(
        &a.addr,
        "POST",
        &path,
        None,
        Some(&json!({"answer": "maybe"}).to_string()),
    );
    assert_eq!(bad.status, 400, "{}", bad.body);
    let answered = call(&proxy, "POST", &path, Some(json!({"answer": true})));
    assert_eq!(answered.status, 200, "{}", answered.body);
    let rest = http::numbered_events(&mut reader, "done");
    assert!(
        rest.iter().any(|e| e.data.contains("deploying")),
        "{rest:?}"
    );
    let told = env.server.last_request().json()["messages"].to_string();
    assert!(told.contains("yes"), "{told}");

    // 8 → B: a slow run. 9 → A: cancelled from there.
    env.server.push(
        openai::text_stream(&["one ", "two ", "three ", "four ", "five"])
            .frame_delay(Duration::from_millis(500)),
    );
    assert_eq!(proxy.next(2), 1);
    let (_, _, mut reader) = stream("/v1/completions", "count slowly");
    let seen = http::numbered_events(&mut reader, "assistant_delta");
    let slow = run_id(&seen);
    let cancelled = call(&proxy, "POST", &format!("/v1/runs/{slow}/cancel"), None);
    assert_eq!(cancelled.status, 202, "{}", cancelled.body);
    let rest = http::numbered_events(&mut reader, "done");
    assert!(
        rest.iter().any(|e| e.name == "error"),
        "a cancelled run says so: {rest:?}"
    );
    assert!(!rest.iter().any(|e| e.data.contains("five")), "{rest:?}");

    // 10 → B: another slow run; B dies in the middle of it.
    env.server.push(
        openai::text_stream(&["kept ", "lost ", "lost ", "lost ", "lost"])
            .frame_delay(Duration::from_millis(700)),
    );
    assert_eq!(proxy.next(2), 1);
    let (_, _, mut reader) = stream("/v1/completions", "count slowly again");
    let seen = http::numbered_events(&mut reader, "assistant_delta");
    let doomed = run_id(&seen);
    let last = seen.last().unwrap().id.unwrap();
    // Long enough for the event to be copied to the database.
    std::thread::sleep(Duration::from_millis(300));
    b.child.kill().unwrap();
    b.child.wait().unwrap();
    drop(reader);
    // 11 → A: the client comes back; A ends the run for the instance that died.
    let began = Instant::now();
    let last_id = last.to_string();
    let (status, _, mut reader) = http::open_with(
        &proxy.addr,
        "GET",
        &format!("/v1/runs/{doomed}/events"),
        &[("Last-Event-ID", last_id.as_str())],
        None,
    );
    assert_eq!(status, 200);
    let rest = http::numbered_events(&mut reader, "done");
    assert!(
        began.elapsed() < Duration::from_secs(15),
        "{:?}",
        began.elapsed()
    );
    let error = rest
        .iter()
        .find(|e| e.name == "error")
        .unwrap_or_else(|| panic!("{rest:?}"));
    assert!(error.data.contains("instance_lost"), "{}", error.data);
    // 12 → (B is gone) A: the run is failed and keeps what was answered.
    let state = call(&proxy, "GET", &format!("/v1/runs/{doomed}"), None).json();
    assert_eq!(state["status"], "failed", "{state}");
    assert_eq!(state["partial"], "kept ", "{state}");
    drop(a);
}

/// A Responses API conversation goes on across instances: `previous_response_id` sent to
/// the instance that did not answer finds the exchange (kept in the database), whether
/// the first answer was streamed or not.
#[test]
fn previous_response_id_is_found_on_the_other_instance() {
    let pg = Postgres::start();
    let env = TestEnv::new();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("session_store: {}\n{config}", pg.url));
    let api = "api:\n  auth:\n    mode: Disabled";
    let a = Served::start(&env, api);
    let b = Served::start(&env, api);
    let proxy = RoundRobin::start(vec![a.addr.clone(), b.addr.clone()]);
    for stream in [false, true] {
        let first_instance = proxy.next(2);
        let secret = format!("the number is {}", 41 + usize::from(stream));
        env.server.push(openai::text_stream(&["noted"]));
        let first = call(
            &proxy,
            "POST",
            "/v1/responses",
            Some(json!({"model": "fake:gpt-4o-mini", "input": secret, "stream": stream})),
        );
        assert_eq!(first.status, 200, "{}", first.body);
        let id = if stream {
            let done = first
                .body
                .split("\n\n")
                .find(|e| e.contains("event: response.completed"))
                .and_then(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
                .unwrap_or_else(|| panic!("{}", first.body));
            serde_json::from_str::<Value>(done).unwrap()["response"]["id"].clone()
        } else {
            first.json()["id"].clone()
        };
        assert!(id.as_str().is_some_and(|i| i.starts_with("resp_")), "{id}");
        assert_ne!(
            proxy.next(2),
            first_instance,
            "the follow-up goes elsewhere"
        );
        env.server.push(openai::text_stream(&["42"]));
        let next = call(
            &proxy,
            "POST",
            "/v1/responses",
            Some(
                json!({"model": "fake:gpt-4o-mini", "input": "which number?",
                "previous_response_id": id}),
            ),
        );
        assert_eq!(next.status, 200, "{}", next.body);
        let sent = env.server.last_request().json().to_string();
        assert!(sent.contains(&secret), "stream {stream}: {sent}");
        assert!(sent.contains("noted"), "stream {stream}: {sent}");
    }
}

/// A run that is not streamed is tracked too: its approval, sent through the proxy to
/// the other instance, reaches it, and its status is known on both.
#[test]
fn an_approval_for_a_run_that_is_not_streamed_reaches_it_from_the_other_instance() {
    let Cluster {
        env,
        a: _a,
        b: _b,
        proxy,
        _pg,
    } = cluster_with_tools("");
    let root = env.work_dir();
    env.server.push(openai::tool_call_stream(&[(
        "call_0",
        "fs_write",
        &json!({"path": "whole.txt", "contents": "ok"}).to_string(),
    )]));
    env.server.push(openai::text_stream(&["written"]));
    let first = proxy.next(2);
    let addr = proxy.addr.clone();
    let waiting = std::thread::spawn(move || {
        let body = json!({"prompt": "write it"}).to_string();
        http::request(&addr, "POST", "/v1/completions", None, Some(&body))
    });
    // The run has reached its instance (`first`) once the model was asked.
    let deadline = Instant::now() + Duration::from_secs(20);
    while env.server.requests().is_empty() {
        assert!(Instant::now() < deadline, "the run never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Every try goes to the other instance (a health check takes the run's own turn);
    // until the call waits, it finds nothing (404).
    loop {
        if proxy.next(2) == first {
            assert_eq!(call(&proxy, "GET", "/healthz/live", None).status, 200);
        }
        let approved = call(
            &proxy,
            "POST",
            "/v1/approvals/call_0",
            Some(json!({"decision": "allow"})),
        );
        if approved.status == 200 {
            break;
        }
        assert_eq!(approved.status, 404, "{}", approved.body);
        assert!(Instant::now() < deadline, "the call never waited");
        std::thread::sleep(Duration::from_millis(100));
    }
    let answer = waiting.join().unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answer = answer.json();
    assert_eq!(answer["tool_calls"][0]["ok"], true, "{answer}");
    assert_eq!(
        std::fs::read_to_string(root.join("whole.txt")).unwrap(),
        "ok"
    );
    let run = answer["request_id"].as_str().unwrap().to_string();
    for _ in 0..2 {
        let state = call(&proxy, "GET", &format!("/v1/runs/{run}"), None);
        assert_eq!(state.status, 200, "{}", state.body);
        assert_eq!(state.json()["status"], "completed", "{}", state.body);
    }
}
