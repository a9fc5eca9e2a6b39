//! `loki --serve`: the real binary serving HTTP on a free port, against the fake
//! provider. Requests are raw HTTP/1.0 (tests/common/http.rs).

use std::io::BufRead;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::http::{self, Response};

/// A running `loki --serve`; killed when dropped.
pub(super) struct Served {
    pub(super) child: Child,
    pub(super) addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// Starts the server with `api` as the config's `api:` block.
    pub(super) fn start(env: &TestEnv, api: &str) -> Served {
        Self::start_with(env, api, &[])
    }

    /// The same, with extra environment variables.
    pub(super) fn start_with(env: &TestEnv, api: &str, vars: &[(&str, String)]) -> Served {
        let config = std::fs::read_to_string(env.config_path()).unwrap();
        // A second server of the same environment uses the `api:` block already there.
        if !config.lines().any(|l| l.starts_with("api:")) {
            env.write_config(&format!("{api}\n{config}\n"));
        }
        let mut command = env.loki_std();
        for (k, v) in vars {
            command.env(k, v);
        }
        let mut child = command
            .args(["--serve", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut lines = std::io::BufReader::new(stderr).lines();
        let first = lines.next().expect("a first line").unwrap();
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_string();
        std::thread::spawn(move || for _ in lines {});
        Served { child, addr }
    }

    pub(super) fn call(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> Response {
        let body = body.map(|b| b.to_string());
        http::request(&self.addr, method, path, key, body.as_deref())
    }

    pub(super) fn post(&self, path: &str, body: Value) -> Response {
        self.call("POST", path, None, Some(body))
    }

    pub(super) fn get(&self, path: &str) -> Response {
        self.call("GET", path, None, None)
    }
}

const OPEN: &str = "api:\n  auth:\n    mode: Disabled";

#[test]
fn serving_needs_auth_settled_and_disabled_auth_only_on_loopback() {
    let env = TestEnv::new();
    env.loki()
        .args(["--serve", "127.0.0.1:0"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no `api.auth` in config.yaml"));
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("{OPEN}\n{config}"));
    env.loki()
        .args(["--serve", "0.0.0.0:0"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "auth is disabled, which is allowed only on a loopback address",
        ));
}

#[test]
fn chat_completions_answer_like_openai_streamed_and_not() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    env.server
        .push(openai::text_stream_with_usage(&["Hello", " there"], 12, 2));
    let reply = served.post(
        "/v1/chat/completions",
        json!({"model": "fake:gpt-4o-mini", "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello?"},
            {"role": "user", "content": "say hello"}
        ]}),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = reply.json();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["message"]["content"], "Hello there");
    assert_eq!(body["usage"]["total_tokens"], 14);
    assert!(reply.header("x-request-id").unwrap().starts_with("req_"));
    let sent = env.server.requests()[0].json();
    let roles: Vec<&str> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(sent["messages"][0]["content"], "Be brief.");
    // Streamed, with usage at the end.
    env.server.push(openai::text_stream(&["one", " two"]));
    let (status, headers, mut reader) = http::open(
        &served.addr,
        "POST",
        "/v1/chat/completions",
        None,
        Some(
            &json!({"model": "fake:gpt-4o-mini", "stream": true,
            "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": "count"}]})
            .to_string(),
        ),
    );
    assert_eq!(status, 200);
    assert!(
        headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v == "text/event-stream")
    );
    let chunks = http::events(&mut reader, "[DONE]");
    let text: String = chunks
        .iter()
        .filter_map(|(_, d)| serde_json::from_str::<Value>(d).ok())
        .filter_map(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(text, "one two");
    let parsed: Vec<Value> = chunks
        .iter()
        .filter_map(|(_, d)| serde_json::from_str(d).ok())
        .collect();
    assert!(
        parsed
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "stop")
    );
    assert!(
        parsed
            .iter()
            .any(|c| c["usage"]["completion_tokens"].is_number())
    );
    assert_eq!(chunks.last().unwrap().1, "[DONE]");
}

#[test]
fn models_roles_and_errors_in_openai_shape() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    let models = served.get("/v1/models").json();
    let ids: Vec<&str> = models["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(ids.contains(&"fake:gpt-4o-mini"), "{ids:?}");
    assert!(ids.contains(&"role:shell"), "{ids:?}");
    // A role as the model: its instructions frame the prompt.
    env.server.push(openai::text_stream(&["ls -la"]));
    let reply = served.post(
        "/v1/chat/completions",
        json!({"model": "role:shell", "messages": [{"role": "user", "content": "list files"}]}),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let sent = env.server.requests().last().unwrap().json().to_string();
    assert!(sent.contains("shell"), "{sent}");
    // Unknown model: 404, OpenAI's error shape.
    let reply = served.post(
        "/v1/chat/completions",
        json!({"model": "nope:model", "messages": [{"role": "user", "content": "x"}]}),
    );
    assert_eq!(reply.status, 404, "{}", reply.body);
    assert!(
        reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nope")
    );
    // The provider failing: 502.
    env.server.push(openai::error(500, "boom", "server_error"));
    env.server.push(openai::error(500, "boom", "server_error"));
    env.server.push(openai::error(500, "boom", "server_error"));
    env.server.push(openai::error(500, "boom", "server_error"));
    let reply = served.post(
        "/v1/chat/completions",
        json!({"model": "fake:gpt-4o-mini", "messages": [{"role": "user", "content": "x"}]}),
    );
    assert_eq!(reply.status, 502, "{}", reply.body);
    // A malformed body: 400.
    let reply = served.post("/v1/chat/completions", json!({"messages": []}));
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(reply.json()["error"]["type"].is_string());
}

#[test]
fn keys_scopes_and_rate_limits() {
    let env = TestEnv::new();
    let out = env.loki().arg("--api-key-hash").assert().success();
    let text = crate::common::stdout(&out);
    let key = text
        .lines()
        .next()
        .unwrap()
        .trim_start_matches("key:")
        .trim()
        .to_string();
    let hash = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("key_hash: "))
        .unwrap()
        .trim_matches('"')
        .to_string();
    let out = env.loki().arg("--api-key-hash").assert().success();
    let reader_text = crate::common::stdout(&out);
    let reader_key = reader_text
        .lines()
        .next()
        .unwrap()
        .trim_start_matches("key:")
        .trim()
        .to_string();
    let reader_hash = reader_text
        .lines()
        .find_map(|l| l.trim().strip_prefix("key_hash: "))
        .unwrap()
        .trim_matches('"')
        .to_string();
    let api = format!(
        "api:\n  auth:\n    mode: StaticKeys\n    keys:\n      - subject: writer\n        key_hash: \"{hash}\"\n      - subject: reader\n        key_hash: \"{reader_hash}\"\n        scopes: [read]\n        rate_limit_per_minute: 3"
    );
    let log = env.root().join("server.log");
    let served = Served::start_with(
        &env,
        &api,
        &[
            ("LOKI_LOG_LEVEL", "info".into()),
            ("LOKI_LOG_PATH", log.display().to_string()),
        ],
    );
    let no_key = served.get("/v1/models");
    assert_eq!(no_key.status, 401);
    assert!(
        no_key.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("API key")
    );
    let wrong = served.call("GET", "/v1/sessions", Some("lk_wrong"), None);
    assert_eq!(wrong.status, 401);
    assert_eq!(wrong.json()["error"]["code"], "unauthorized");
    assert_eq!(
        served.call("GET", "/v1/sessions", Some(&key), None).status,
        200
    );
    assert_eq!(
        served.get("/healthz/live").status,
        200,
        "health needs no key"
    );
    // The reader may read, not write, and only three times a minute.
    let write = served.call("POST", "/v1/sessions", Some(&reader_key), Some(json!({})));
    assert_eq!(write.status, 403, "{}", write.body);
    for _ in 0..3 {
        assert_eq!(
            served
                .call("GET", "/v1/roles", Some(&reader_key), None)
                .status,
            200
        );
    }
    let limited = served.call("GET", "/v1/roles", Some(&reader_key), None);
    assert_eq!(limited.status, 429, "{}", limited.body);
    assert!(limited.header("retry-after").is_some());
    // Keys are never echoed, and every request is one log line with its id and subject.
    assert!(!limited.body.contains(&reader_key));
    drop(served);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("request_id=req_") && logged.contains("subject=reader"),
        "{logged}"
    );
    assert!(logged.contains("status=429"), "{logged}");
    assert!(
        !logged.contains(&reader_key) && !logged.contains(&key),
        "{logged}"
    );
}

#[test]
fn sessions_keep_the_conversation_across_requests() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    let created = served.post("/v1/sessions", json!({"alias": "work", "role": "shell"}));
    assert_eq!(created.status, 201, "{}", created.body);
    let session = created.json();
    assert_eq!(session["alias"], "work");
    assert_eq!(session["role"], "shell");
    let id = session["id"].as_str().unwrap().to_string();
    env.server.push(openai::text_stream(&["first answer"]));
    let first = served.post(
        &format!("/v1/sessions/{id}/completions"),
        json!({"prompt": "first question"}),
    );
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.json()["final_message"], "first answer");
    env.server.push(openai::text_stream(&["second answer"]));
    let second = served.post(
        "/v1/sessions/work/completions",
        json!({"prompt": "second question"}),
    );
    assert_eq!(second.status, 200, "{}", second.body);
    let sent = env.server.requests().last().unwrap().json().to_string();
    assert!(
        sent.contains("first question") && sent.contains("first answer"),
        "{sent}"
    );
    let listed = served.get("/v1/sessions").json();
    assert!(
        listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["alias"] == "work")
    );
    let stored = served.get(&format!("/v1/sessions/{id}")).json();
    assert_eq!(stored["messages"].as_array().unwrap().len(), 4, "{stored}");
    let emptied = served.post("/v1/sessions/work/empty", json!({}));
    assert_eq!(emptied.status, 200, "{}", emptied.body);
    assert_eq!(
        served.get("/v1/sessions/work").json()["messages"]
            .as_array()
            .map_or(0, Vec::len),
        0
    );
    assert_eq!(
        served
            .call("DELETE", "/v1/sessions/work", None, None)
            .status,
        204
    );
    let gone = served.get("/v1/sessions/work");
    assert_eq!(gone.status, 404);
    assert_eq!(gone.json()["error"]["code"], "session_not_found");
    let missing = served.post("/v1/sessions/nope/completions", json!({"prompt": "x"}));
    assert_eq!(missing.status, 404);
    let metrics = served.get("/metrics").body;
    assert!(metrics.contains("loki_turns_total 2"), "{metrics}");
    assert!(
        metrics.contains("loki_requests_total{status=\"4xx\"}"),
        "{metrics}"
    );
    assert!(metrics.contains("loki_cost_usd_total"), "{metrics}");
}

#[test]
fn a_tool_call_waits_for_an_http_approval_and_a_denied_one_is_not_run() {
    let env = TestEnv::new();
    let root = env.work_dir();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: all\n{config}"));
    let api = format!(
        "api:\n  auth:\n    mode: Disabled\n  tools:\n    enabled: true\n    root: {}",
        root.display()
    );
    let served = Served::start(&env, &api);
    for (decision, file) in [("allow", "yes.txt"), ("deny", "no.txt")] {
        env.server.push(openai::tool_call_stream(&[(
            "call_w",
            "fs_write",
            &json!({"path": file, "contents": "hi"}).to_string(),
        )]));
        env.server.push(openai::text_stream(&["done"]));
        let (status, _, mut reader) = http::open(
            &served.addr,
            "POST",
            "/v1/completions",
            None,
            Some(&json!({"prompt": "write it", "stream": true}).to_string()),
        );
        assert_eq!(status, 200);
        let before = http::events(&mut reader, "tool_call_approval_requested");
        let requested: Value = serde_json::from_str(&before.last().unwrap().1).unwrap();
        assert_eq!(requested["call_id"], "call_w");
        assert!(requested["text"].as_str().unwrap().contains(file));
        assert!(
            !root.join(file).exists(),
            "nothing runs before the approval"
        );
        // Answered by call id alone, or addressed to the run the `started` event names.
        let path = if decision == "allow" {
            "/v1/approvals/call_w".to_string()
        } else {
            let run: Value = serde_json::from_str(&before[0].1).unwrap();
            format!(
                "/v1/runs/{}/approvals/call_w",
                run["request_id"].as_str().unwrap()
            )
        };
        let answer = served.post(&path, json!({"decision": decision}));
        assert_eq!(answer.status, 200, "{}", answer.body);
        let rest = http::events(&mut reader, "done");
        let finished: Value = rest
            .iter()
            .filter(|(name, _)| name == "tool_call_finished")
            .map(|(_, d)| serde_json::from_str(d).unwrap())
            .next()
            .unwrap();
        assert_eq!(finished["ok"], decision == "allow", "{finished}");
        assert_eq!(root.join(file).exists(), decision == "allow");
    }
    assert_eq!(
        served
            .post("/v1/approvals/call_none", json!({"decision": "allow"}))
            .status,
        404
    );
}

#[test]
fn a_client_that_hangs_up_and_does_not_come_back_cancels_its_turn_and_the_session_keeps_what_arrived()
 {
    let env = TestEnv::new();
    let served = Served::start(&env, &format!("{OPEN}\n  reattach_seconds: 1"));
    assert_eq!(
        served.post("/v1/sessions", json!({"alias": "s"})).status,
        201
    );
    env.server.push(
        openai::text_stream(&["partial ", "answer ", "never", " ends"])
            .frame_delay(Duration::from_millis(600)),
    );
    let (status, _, mut reader) = http::open(
        &served.addr,
        "POST",
        "/v1/sessions/s/completions",
        None,
        Some(&json!({"prompt": "go", "stream": true}).to_string()),
    );
    assert_eq!(status, 200);
    let seen = http::events(&mut reader, "partial");
    assert!(!seen.is_empty());
    drop(reader);
    // It waits a moment for the client to come back, then stops; the session is saved
    // with what arrived.
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        served.get("/metrics").body.contains("loki_turns_active 1"),
        "the run waits for its client"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let metrics = served.get("/metrics").body;
        let stored = served.get("/v1/sessions/s").json();
        let saved = stored["messages"].to_string();
        if metrics.contains("loki_turns_active 0") && saved.contains("partial") {
            assert!(!saved.contains("ends"), "{saved}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "turn still running: {metrics}\n{saved}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_client_that_comes_back_with_last_event_id_gets_the_rest_of_the_run() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    env.server.push(
        openai::text_stream(&["first ", "second ", "third"])
            .frame_delay(Duration::from_millis(300)),
    );
    let body = json!({"prompt": "go", "stream": true}).to_string();
    let (status, _, mut reader) =
        http::open(&served.addr, "POST", "/v1/completions", None, Some(&body));
    assert_eq!(status, 200);
    let seen = http::numbered_events(&mut reader, "assistant_delta");
    drop(reader);
    let run = serde_json::from_str::<Value>(&seen[0].data).unwrap()["request_id"]
        .as_str()
        .unwrap()
        .to_string();
    let last = seen.last().unwrap().id.unwrap();
    // Another caller's view of it is nothing; the run is still going.
    let state = served.get(&format!("/v1/runs/{run}")).json();
    assert_eq!(state["status"], "running", "{state}");
    std::thread::sleep(Duration::from_millis(700));
    let (status, _, mut reader) = http::open(
        &served.addr,
        "GET",
        &format!("/v1/runs/{run}/events?after={last}"),
        None,
        None,
    );
    assert_eq!(status, 200);
    let rest = http::numbered_events(&mut reader, "done");
    let text: String = rest
        .iter()
        .filter(|e| e.name == "assistant_delta")
        .map(|e| {
            serde_json::from_str::<Value>(&e.data).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(text, "second third", "{rest:?}");
    assert_eq!(rest[0].id, Some(last + 1));
    let state = served.get(&format!("/v1/runs/{run}")).json();
    assert_eq!(state["status"], "completed", "{state}");
    assert_eq!(state["partial"], "first second third", "{state}");
    assert_eq!(served.get("/v1/runs/req_nothing").status, 404);
}

#[test]
fn stopping_the_server_mid_turn_saves_the_session() {
    let env = TestEnv::new();
    let served = Served::start(&env, &format!("{OPEN}\n  shutdown_grace_seconds: 1"));
    assert_eq!(
        served.post("/v1/sessions", json!({"alias": "s"})).status,
        201
    );
    env.server.push(
        openai::text_stream(&["kept ", "text ", "lost"]).frame_delay(Duration::from_millis(1500)),
    );
    let addr = served.addr.clone();
    let client = std::thread::spawn(move || {
        http::request(
            &addr,
            "POST",
            "/v1/sessions/s/completions",
            None,
            Some(&json!({"prompt": "go"}).to_string()),
        )
    });
    // Timed from the model request, not from the client's: on a loaded machine the run
    // may take a while to start. "kept " is sent 1.5 s after it, "text " 3 s after.
    env.server.wait_for_requests(1, Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(2000));
    let pid = served.child.id();
    terminate(pid);
    // Through the grace period a load balancer reads `stopping` and new work is refused.
    let deadline = Instant::now() + Duration::from_millis(600);
    let ready = loop {
        let ready = served.get("/healthz/ready");
        if ready.status == 503 || Instant::now() > deadline {
            break ready;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(ready.status, 503, "{}", ready.body);
    assert!(ready.body.contains("stopping"), "{}", ready.body);
    let refused = served.post("/v1/completions", json!({"prompt": "one more"}));
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(
        refused.json()["error"]["code"],
        "stopping",
        "{}",
        refused.body
    );
    assert!(
        refused.header("retry-after").is_some(),
        "{:?}",
        refused.headers
    );
    let mut served = served;
    let status = served.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let _ = client.join();
    let session_dir = env.config_dir().join("sessions");
    let saved: String = walk(&session_dir);
    assert!(saved.contains("kept"), "{saved}");
}

fn walk(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&walk(&path));
        } else if path.extension().is_some_and(|e| e == "yaml") {
            out.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    out
}

fn terminate(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
}

#[test]
fn two_servers_on_one_postgres_share_a_session_and_serialise_its_turns() {
    let pg = crate::common::postgres::Postgres::start();
    let env = TestEnv::new();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("session_store: {}\n{config}", pg.url));
    // Each answer takes a while, so the two posts overlap unless they are serialised.
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        let last = body["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        openai::text_stream(&[&format!("answer to {last}")])
            .delay_headers(Duration::from_millis(600))
    });
    let a = Served::start(&env, OPEN);
    let b = Served::start(&env, OPEN);
    let created = a.post("/v1/sessions", json!({"alias": "shared"}));
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        b.get("/v1/sessions/shared").status,
        200,
        "B sees A's session"
    );
    let (addr_a, addr_b) = (a.addr.clone(), b.addr.clone());
    let post = |addr: String, prompt: &'static str| {
        std::thread::spawn(move || {
            http::request(
                &addr,
                "POST",
                "/v1/sessions/shared/completions",
                None,
                Some(&json!({"prompt": prompt}).to_string()),
            )
        })
    };
    let one = post(addr_a, "one");
    let two = post(addr_b, "two");
    let (one, two) = (one.join().unwrap(), two.join().unwrap());
    assert_eq!(one.status, 200, "{}", one.body);
    assert_eq!(two.status, 200, "{}", two.body);
    let stored = a.get("/v1/sessions/shared").json();
    let messages: Vec<String> = stored["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(messages.len(), 4, "nothing lost: {messages:?}");
    // The second turn started from what the first saved.
    let requests = env.server.requests();
    let second = requests.last().unwrap().json().to_string();
    assert!(
        second.contains("answer to one") || second.contains("answer to two"),
        "the later turn saw the earlier one: {second}"
    );
    drop(a);
    drop(b);
    // Out to YAML files and back into a fresh store.
    env.loki()
        .args(["--migrate-sessions", "out"])
        .assert()
        .success()
        .stderr(predicates::str::contains("copied 1 session(s)"));
    let files = walk(&env.config_dir().join("sessions"));
    assert!(
        files.contains("answer to one") && files.contains("answer to two"),
        "{files}"
    );
}

#[test]
fn a_bad_session_store_is_one_clear_error() {
    let env = TestEnv::new();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "session_store: postgres://loki@127.0.0.1:9/none\n{config}"
    ));
    env.loki()
        .args(["hi"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "cannot open the session store: session database:",
        ));
}

#[test]
fn embeddings_and_rerank_pass_through_to_the_configured_models() {
    use crate::common::fake_llm::embeddings;
    let env = TestEnv::new();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&config.replacen(
        "    models:\n",
        "    models:\n      - name: emb\n        type: embedding\n      - name: rr\n        type: reranker\n",
        1,
    ));
    embeddings::install(&env.server);
    let served = Served::start(&env, OPEN);
    let reply = served.post(
        "/v1/embeddings",
        json!({"model": "fake:emb", "input": ["red apples", "blue sky"]}),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = reply.json();
    assert_eq!(body["data"].as_array().unwrap().len(), 2);
    let first = body["data"][0]["embedding"].as_array().unwrap();
    assert!(
        !first.is_empty() && first.iter().all(Value::is_f64),
        "{first:?}"
    );
    let reply = served.post(
        "/v1/rerank",
        json!({"model": "fake:rr", "query": "apples", "documents": ["the sky is blue", "apples are red [priority]"], "top_n": 1}),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let results = reply.json()["results"].clone();
    assert_eq!(results.as_array().unwrap().len(), 1);
    assert_eq!(results[0]["index"], 1, "{results}");
    let wrong = served.post(
        "/v1/embeddings",
        json!({"model": "fake:gpt-4o-mini", "input": "x"}),
    );
    assert!(wrong.status >= 400, "{}", wrong.body);
    assert!(wrong.json()["error"]["message"].is_string());
}

#[test]
fn the_playground_chats_renders_markdown_safely_and_approves_a_tool_call() {
    use crate::common::browser::Browser;
    let env = TestEnv::new();
    let root = env.work_dir();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: all\n{config}"));
    let api = format!(
        "api:\n  auth:\n    mode: Disabled\n  tools:\n    enabled: true\n    root: {}",
        root.display()
    );
    let served = Served::start(&env, &api);
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        let messages = body["messages"].as_array().unwrap();
        let last = messages.last().unwrap();
        if last["role"] == "tool" {
            return openai::text_stream(&["The file is written."]);
        }
        if last["content"]
            .as_str()
            .unwrap_or_default()
            .contains("write")
        {
            return openai::tool_call_stream(&[(
                "call_pw",
                "fs_write",
                r#"{"path":"from-browser.txt","contents":"hi"}"#,
            )]);
        }
        openai::text_stream(&[
            "Here is **bold** and <img src=x onerror=\"document.title='pwned'\">\n\n",
            "```rust\nfn main() {\n    let x = 1;\n}\n```\n",
        ])
    });
    let mut browser = Browser::start();
    browser.open(&format!("http://{}/", served.addr));
    browser.wait_for("document.querySelectorAll('#model option').length > 0");
    let models = browser.eval("[...document.querySelectorAll('#model option')].map(o => o.value)");
    assert!(models.to_string().contains("fake:gpt-4o-mini"), "{models}");
    browser.eval(
        "document.querySelector('#model').value = 'fake:gpt-4o-mini';
         document.querySelector('#prompt').value = 'hello';
         document.querySelector('#form').requestSubmit(); true",
    );
    let answer =
        browser.wait_for("document.querySelector('.msg.assistant[data-done]')?.textContent");
    assert!(
        answer.as_str().unwrap().contains("Here is bold and"),
        "{answer}"
    );
    assert_eq!(
        browser.eval("document.querySelectorAll('.msg.assistant strong').length"),
        1
    );
    assert_eq!(
        browser.eval("document.querySelectorAll('.msg.assistant img').length"),
        0,
        "raw HTML must not render"
    );
    assert_ne!(browser.eval("document.title"), "pwned");
    assert!(
        browser
            .eval("document.querySelector('.msg.assistant pre code .kw')?.textContent")
            .as_str()
            == Some("fn")
    );
    // A tool call waits for the Allow button.
    browser.eval(
        "document.querySelector('#prompt').value = 'write the file';
         document.querySelector('#form').requestSubmit(); true",
    );
    browser.wait_for("document.querySelector('.approval button.approve-allow')");
    assert!(
        !root.join("from-browser.txt").exists(),
        "nothing runs before the approval"
    );
    browser.eval("document.querySelector('.approval button.approve-allow').click(); true");
    let done = browser.wait_for(
        "[...document.querySelectorAll('.msg.assistant[data-done]')].map(e => e.textContent).join('|').includes('The file is written.')",
    );
    assert_eq!(done, true);
    assert_eq!(
        std::fs::read_to_string(root.join("from-browser.txt")).unwrap(),
        "hi"
    );
}

#[test]
fn a_client_s_tools_go_to_the_model_and_its_calls_come_back_to_the_client() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    let tools = json!([{"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    }}]);
    env.server.push(openai::tool_call_stream(&[(
        "call_9",
        "get_weather",
        r#"{"city":"Oslo"}"#,
    )]));
    let first = served.post(
        "/v1/chat/completions",
        json!({"model": "fake:gpt-4o-mini", "tools": tools,
               "messages": [{"role": "user", "content": "weather in Oslo?"}]}),
    );
    assert_eq!(first.status, 200, "{}", first.body);
    let choice = &first.json()["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["tool_calls"][0]["id"], "call_9");
    assert_eq!(
        choice["message"]["tool_calls"][0]["function"]["name"],
        "get_weather"
    );
    let sent = env.server.requests()[0].json();
    assert!(sent["tools"].to_string().contains("get_weather"), "{sent}");
    // The client ran it and sends the result back.
    env.server
        .push(openai::text_stream(&["It is 3 °C in Oslo."]));
    let second = served.post(
        "/v1/chat/completions",
        json!({"model": "fake:gpt-4o-mini", "tools": tools, "messages": [
            {"role": "user", "content": "weather in Oslo?"},
            {"role": "assistant", "content": null, "tool_calls": choice["message"]["tool_calls"]},
            {"role": "tool", "tool_call_id": "call_9", "content": "3 °C, cloudy"}
        ]}),
    );
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(
        second.json()["choices"][0]["message"]["content"],
        "It is 3 °C in Oslo."
    );
    let sent = env.server.requests().last().unwrap().json();
    let messages = sent["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "tool", "{sent}");
    assert_eq!(last["tool_call_id"], "call_9");
    assert_eq!(
        messages[messages.len() - 2]["tool_calls"][0]["id"],
        "call_9"
    );
    // Streamed: the call arrives as a tool_calls delta.
    env.server.push(openai::tool_call_stream(&[(
        "call_10",
        "get_weather",
        r#"{"city":"Rome"}"#,
    )]));
    let (_, _, mut reader) = http::open(
        &served.addr,
        "POST",
        "/v1/chat/completions",
        None,
        Some(
            &json!({"model": "fake:gpt-4o-mini", "stream": true, "tools": tools,
                     "messages": [{"role": "user", "content": "and Rome?"}]})
            .to_string(),
        ),
    );
    let chunks: Vec<Value> = http::events(&mut reader, "[DONE]")
        .iter()
        .filter_map(|(_, d)| serde_json::from_str(d).ok())
        .collect();
    assert!(
        chunks
            .iter()
            .any(|c| c["choices"][0]["delta"]["tool_calls"][0]["id"] == "call_10"),
        "{chunks:?}"
    );
    assert!(
        chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls"),
        "{chunks:?}"
    );
}

#[test]
fn a_run_past_the_request_timeout_is_stopped() {
    let env = TestEnv::new();
    let served = Served::start(&env, &format!("{OPEN}\n  request_timeout_seconds: 1"));
    env.server
        .push(openai::text_stream(&["slow ", "answer"]).frame_delay(Duration::from_secs(20)));
    let began = Instant::now();
    let reply = served.post("/v1/completions", json!({"prompt": "take your time"}));
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(reply.status, 504, "{}", reply.body);
    assert_eq!(reply.json()["error"]["code"], "request_timeout");
}

#[test]
fn a_streamed_run_past_the_request_timeout_ends_with_its_error_then_done() {
    let env = TestEnv::new();
    let served = Served::start(&env, &format!("{OPEN}\n  request_timeout_seconds: 1"));
    env.server
        .push(openai::text_stream(&["slow ", "answer"]).frame_delay(Duration::from_secs(20)));
    let body = json!({"prompt": "take your time", "stream": true}).to_string();
    let (status, _, mut reader) =
        http::open(&served.addr, "POST", "/v1/completions", None, Some(&body));
    assert_eq!(status, 200);
    let events = http::events(&mut reader, "done");
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    let error = names.iter().position(|n| *n == "error");
    let done = names.iter().position(|n| *n == "done");
    assert!(
        matches!((error, done), (Some(e), Some(d)) if e < d && d + 1 == names.len()),
        "{names:?}"
    );
    let error: Value = serde_json::from_str(&events[error.unwrap()].1).unwrap();
    assert_eq!(error["error"]["code"], "request_timeout", "{error}");
    assert_eq!(
        names.iter().filter(|n| **n == "done").count(),
        1,
        "{names:?}"
    );
}

#[test]
fn a_session_that_cannot_be_saved_says_so_before_done_and_hides_the_host_s_paths() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    assert_eq!(
        served.post("/v1/sessions", json!({"alias": "s"})).status,
        201
    );
    // A first turn saves normally: its `session_saved` names no file of the host.
    env.server.push(openai::text_stream(&["first"]));
    let body = json!({"prompt": "one", "stream": true}).to_string();
    let (_, _, mut reader) = http::open(
        &served.addr,
        "POST",
        "/v1/sessions/s/completions",
        None,
        Some(&body),
    );
    let events = http::events(&mut reader, "done");
    let saved = events
        .iter()
        .find(|(n, _)| n == "session_saved")
        .unwrap_or_else(|| panic!("{events:?}"));
    assert!(
        !saved.1.contains(env.config_dir().to_str().unwrap()),
        "{}",
        saved.1
    );
    assert!(!saved.1.contains("\"path\""), "{}", saved.1);
    assert_eq!(events.last().unwrap().0, "done", "{events:?}");
    // The store goes away mid-turn (a file where its directory was).
    env.server
        .push(openai::text_stream(&["second ", "answer"]).frame_delay(Duration::from_millis(400)));
    let body = json!({"prompt": "two", "stream": true}).to_string();
    let (_, _, mut reader) = http::open(
        &served.addr,
        "POST",
        "/v1/sessions/s/completions",
        None,
        Some(&body),
    );
    std::thread::sleep(Duration::from_millis(200));
    let sessions = env.config_dir().join("sessions");
    let kept = env.config_dir().join("sessions.kept");
    std::fs::rename(&sessions, &kept).unwrap();
    std::fs::write(&sessions, "not a directory").unwrap();
    let events = http::events(&mut reader, "done");
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.last(), Some(&"done"), "{names:?}");
    let error = events
        .iter()
        .find(|(n, _)| n == "error")
        .unwrap_or_else(|| panic!("a failed save is an error event: {names:?}"));
    assert!(
        error.1.contains("save") || error.1.contains("session"),
        "{}",
        error.1
    );
    assert!(!names.contains(&"session_saved"), "{names:?}");
}

#[test]
fn errors_name_their_request_and_an_unknown_path_is_a_json_404() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    let missing = served.get("/v1/nothing-here");
    assert_eq!(missing.status, 404);
    let body = missing.json();
    assert_eq!(body["error"]["code"], "not_found", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/v1/nothing-here"),
        "{body}"
    );
    assert_eq!(
        body["error"]["request_id"].as_str(),
        missing.header("x-request-id"),
        "{body}"
    );
    let bad = served.call("POST", "/v1/completions", None, Some(json!({"prompt": 5})));
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(
        bad.json()["error"]["request_id"].as_str(),
        bad.header("x-request-id"),
        "{}",
        bad.body
    );
    // A success is the document alone.
    let fine = served.get("/v1/models");
    assert_eq!(fine.status, 200);
    assert!(fine.json().get("request_id").is_none(), "{}", fine.body);
}

#[test]
fn an_openai_client_library_talks_to_loki() {
    use async_openai::config::OpenAIConfig;
    use async_openai::types::{
        ChatCompletionRequestUserMessageArgs, CreateChatCompletionRequestArgs,
    };
    use futures_util::StreamExt;
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    let config = OpenAIConfig::new()
        .with_api_base(format!("http://{}/v1", served.addr))
        .with_api_key("unused");
    let client = async_openai::Client::with_config(config);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let models = client.models().list().await.unwrap();
        assert!(models.data.iter().any(|m| m.id == "fake:gpt-4o-mini"));
        let request = || {
            CreateChatCompletionRequestArgs::default()
                .model("fake:gpt-4o-mini")
                .messages([ChatCompletionRequestUserMessageArgs::default()
                    .content("hello")
                    .build()
                    .unwrap()
                    .into()])
                .build()
                .unwrap()
        };
        env.server.push(openai::text_stream(&["Hi from ", "loki"]));
        let answer = client.chat().create(request()).await.unwrap();
        assert_eq!(
            answer.choices[0].message.content.as_deref(),
            Some("Hi from loki")
        );
        assert!(answer.usage.is_some());
        env.server.push(openai::text_stream(&["streamed ", "too"]));
        let mut stream = client.chat().create_stream(request()).await.unwrap();
        let mut text = String::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.unwrap();
            if let Some(choice) = chunk.choices.first()
                && let Some(piece) = &choice.delta.content
            {
                text.push_str(piece);
            }
        }
        assert_eq!(text, "streamed too");
        // Its error type carries loki's OpenAI-shaped error.
        let bad = CreateChatCompletionRequestArgs::default()
            .model("nope:model")
            .messages([ChatCompletionRequestUserMessageArgs::default()
                .content("x")
                .build()
                .unwrap()
                .into()])
            .build()
            .unwrap();
        let error = client.chat().create(bad).await.unwrap_err().to_string();
        assert!(error.contains("nope"), "{error}");
    });
}

#[test]
fn bodies_are_bounded_and_cors_answers_only_allowed_origins() {
    let env = TestEnv::new();
    let api = format!(
        "{OPEN}\n  cors:\n    allowed_origins: [\"https://app.example\"]\n  limits:\n    max_body_bytes: 2000"
    );
    let served = Served::start(&env, &api);
    let big = json!({"prompt": "x".repeat(5000)});
    let reply = served.post("/v1/completions", big);
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert_eq!(reply.json()["error"]["code"], "too_large");
    let allowed = http::request(&served.addr, "GET", "/v1/roles", None, None);
    assert!(
        allowed.header("access-control-allow-origin").is_none(),
        "no Origin, no CORS"
    );
    let with_origin = |origin: &str| {
        let mut stream = std::net::TcpStream::connect(&served.addr).unwrap();
        use std::io::{Read, Write};
        write!(
            stream,
            "OPTIONS /v1/completions HTTP/1.0\r\nHost: localhost\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: POST\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text.to_lowercase()
    };
    let ok = with_origin("https://app.example");
    assert!(ok.starts_with("http/1.0 204"), "{ok}");
    assert!(
        ok.contains("access-control-allow-origin: https://app.example"),
        "{ok}"
    );
    let other = with_origin("https://evil.example");
    assert!(!other.contains("access-control-allow-origin"), "{other}");
}

#[test]
fn info_lists_every_route_and_a_completion_streams_when_asked_by_header_or_query() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    // Every route `/v1/info` lists is answered by a route (not the "there is no" 404).
    let info = served.get("/v1/info").json();
    let endpoints = info["endpoints"].as_array().unwrap();
    assert!(endpoints.len() > 30, "{info}");
    for endpoint in endpoints {
        let (method, path) = endpoint.as_str().unwrap().split_once(' ').unwrap();
        let mut concrete = String::new();
        let mut in_placeholder = false;
        for c in path.chars() {
            match c {
                '{' => in_placeholder = true,
                '}' => {
                    in_placeholder = false;
                    concrete.push_str("nothing-here");
                }
                _ if !in_placeholder => concrete.push(c),
                _ => {}
            }
        }
        let reply = served.call(method, &concrete, None, None);
        assert!(
            !reply.body.contains("there is no"),
            "{endpoint} -> {concrete}: {} {}",
            reply.status,
            reply.body
        );
    }
    // The key check, here with auth disabled.
    let checked = served.post("/v1/auth/check", json!({}));
    assert_eq!(checked.status, 200, "{}", checked.body);
    assert!(checked.json()["subject"].is_string(), "{}", checked.body);
    // A completion without `"stream": true` streams when the client asks for events.
    for (path, headers) in [
        ("/v1/completions", vec![("Accept", "text/event-stream")]),
        ("/v1/completions?stream=true", vec![]),
    ] {
        env.server.push(openai::text_stream(&["streamed"]));
        let (status, headers, mut reader) = http::open_with(
            &served.addr,
            "POST",
            path,
            &headers,
            Some(&json!({"prompt": "hi"}).to_string()),
        );
        assert_eq!(status, 200, "{path}");
        assert!(
            headers
                .iter()
                .any(|(k, v)| k.eq_ignore_ascii_case("content-type")
                    && v.starts_with("text/event-stream")),
            "{path}: {headers:?}"
        );
        let events = http::events(&mut reader, "turn_finished");
        assert!(
            events.iter().any(|(_, data)| data.contains("streamed")),
            "{path}: {events:?}"
        );
    }
}

#[test]
fn a_streamed_chat_completion_that_fails_ends_with_the_error_body_and_its_code() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    env.server
        .set_default(openai::error(401, "bad key", "invalid_request_error"));
    let (status, _, mut reader) = http::open(
        &served.addr,
        "POST",
        "/v1/chat/completions",
        None,
        Some(
            &json!({"model": "fake:gpt-4o-mini", "stream": true,
                "messages": [{"role": "user", "content": "hi"}]})
            .to_string(),
        ),
    );
    assert_eq!(status, 200);
    let chunks = http::events(&mut reader, "[DONE]");
    let error = chunks
        .iter()
        .filter_map(|(_, data)| serde_json::from_str::<Value>(data).ok())
        .find(|v| v["error"].is_object())
        .unwrap_or_else(|| panic!("no error chunk in {chunks:?}"));
    // The same `code` a whole answer's error body has for this failure.
    assert_eq!(error["error"]["code"], "upstream_unauthorized", "{error}");
    assert_eq!(error["error"]["type"], error["error"]["code"], "{error}");
}
