//! `loki --serve` tried as a web page, another user and a flood would try it: auth off
//! serves only this machine's pages and host names, keys own their sessions and their
//! approvals, wrong keys are cheap and throttled, and a bad `api:` block names every
//! mistake at once.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::server::Served;
use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::http;

const OPEN: &str = "api:\n  auth:\n    mode: Disabled";

/// A new key from `loki --api-key-hash`: (key, id, hash).
fn new_key(env: &TestEnv) -> (String, String, String) {
    let out = env.loki().arg("--api-key-hash").assert().success();
    let text = crate::common::stdout(&out);
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .trim()
            .trim_matches('"')
            .to_string()
    };
    (field("key:"), field("id:"), field("key_hash:"))
}

fn key_entry(subject: &str, (_, id, hash): &(String, String, String), scopes: &str) -> String {
    format!(
        "      - subject: {subject}\n        id: \"{id}\"\n        key_hash: \"{hash}\"\n        scopes: {scopes}\n"
    )
}

#[test]
fn with_auth_off_a_web_page_or_a_rebound_host_name_gets_nothing() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    env.server.push(openai::text_stream(&["should not run"]));
    let addr = served.addr.clone();
    let prompt = json!({"prompt": "hi"}).to_string();
    // A page elsewhere posting a "simple" request (no preflight).
    let page = http::request_with(
        &addr,
        "POST",
        "/v1/completions",
        &[
            ("Origin", "http://attacker.example"),
            ("Content-Type", "text/plain"),
        ],
        Some(&prompt),
    );
    assert_eq!(page.status, 403, "{}", page.body);
    assert_eq!(page.json()["error"]["code"], "forbidden_origin");
    let null_origin = http::request_with(
        &addr,
        "POST",
        "/v1/completions",
        &[("Origin", "null")],
        Some(&prompt),
    );
    assert_eq!(null_origin.status, 403, "{}", null_origin.body);
    // A body that is not JSON, even without an Origin.
    let plain = http::request_with(
        &addr,
        "POST",
        "/v1/completions",
        &[("Content-Type", "text/plain")],
        Some(&prompt),
    );
    assert_eq!(plain.status, 415, "{}", plain.body);
    // DNS rebinding: the page's own name now points at 127.0.0.1.
    for host in [
        "attacker.example",
        "attacker.example:80",
        "localhost.attacker.example",
    ] {
        let rebound = http::request_with(&addr, "GET", "/v1/sessions", &[("Host", host)], None);
        assert_eq!(rebound.status, 403, "{host}: {}", rebound.body);
        assert_eq!(rebound.json()["error"]["code"], "forbidden_host");
    }
    assert!(
        env.server.requests().is_empty(),
        "nothing reached the model"
    );
    // This machine's names, and the server's own page, are served.
    let own = format!("http://{addr}");
    let port = addr.rsplit(':').next().unwrap();
    let localhost = format!("localhost:{port}");
    for (host, origin) in [
        (addr.as_str(), Some(own.as_str())),
        (localhost.as_str(), None),
    ] {
        let mut headers = vec![("Host", host)];
        if let Some(origin) = origin {
            headers.push(("Origin", origin));
        }
        let answer = http::request_with(&addr, "POST", "/v1/completions", &headers, Some(&prompt));
        assert_eq!(answer.status, 200, "{host}: {}", answer.body);
        env.server.push(openai::text_stream(&["again"]));
    }
    // Every answer carries the security headers; health is JSON.
    let live = served.get("/healthz/live");
    assert_eq!(live.json(), json!({"status": "ok"}));
    assert_eq!(served.get("/healthz/ready").json(), json!({"status": "ok"}));
    for answer in [&live, &page] {
        assert_eq!(answer.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(answer.header("x-frame-options"), Some("DENY"));
        assert_eq!(answer.header("referrer-policy"), Some("no-referrer"));
    }
}

#[test]
fn keys_own_their_sessions_and_only_the_run_s_owner_answers_its_approvals() {
    let env = TestEnv::new();
    let root = env.work_dir();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: all\n{config}"));
    let (alice, bob, admin) = (new_key(&env), new_key(&env), new_key(&env));
    let api = format!(
        "api:\n  auth:\n    mode: StaticKeys\n    keys:\n{}{}{}  tools:\n    enabled: true\n    root: {}",
        key_entry("alice", &alice, "[read, write]"),
        key_entry(
            "bob",
            &bob,
            "['read:sessions', 'write:sessions', 'run:models']"
        ),
        key_entry("root", &admin, "['*']"),
        root.display()
    );
    let served = Served::start(&env, &api);
    let call = |key: &str, method: &str, path: &str, body: Option<Value>| {
        served.call(method, path, Some(key), body)
    };
    let created = call(
        &alice.0,
        "POST",
        "/v1/sessions",
        Some(json!({"alias": "plans"})),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let id = created.json()["id"].as_str().unwrap().to_string();
    let bobs = call(
        &bob.0,
        "POST",
        "/v1/sessions",
        Some(json!({"alias": "bobs"})),
    );
    assert_eq!(bobs.status, 201, "{}", bobs.body);
    // Bob can neither read, use, change nor delete Alice's session: her alias is not
    // his (each key's aliases are its own, so he does not even learn it exists), and
    // her session's id is refused.
    assert_eq!(call(&bob.0, "GET", "/v1/sessions/plans", None).status, 404);
    assert_eq!(
        call(&bob.0, "DELETE", "/v1/sessions/plans", None).status,
        404
    );
    let by_id = format!("/v1/sessions/{id}");
    assert_eq!(call(&bob.0, "GET", &by_id, None).status, 403);
    assert_eq!(call(&bob.0, "DELETE", &by_id, None).status, 403);
    // And he can have a `plans` of his own.
    assert_eq!(
        call(
            &bob.0,
            "POST",
            "/v1/sessions",
            Some(json!({"alias": "plans"}))
        )
        .status,
        201
    );
    let used = call(
        &bob.0,
        "POST",
        &format!("{by_id}/completions"),
        Some(json!({"prompt": "leak it"})),
    );
    assert_eq!(used.status, 403, "{}", used.body);
    assert_eq!(
        call(&bob.0, "POST", &format!("{by_id}/empty"), None).status,
        403
    );
    let names = |key: &str| -> Vec<String> {
        let mut names: Vec<String> = call(key, "GET", "/v1/sessions", None).json()["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| {
                s["alias"]
                    .as_str()
                    .or(s["name"].as_str())
                    .map(str::to_string)
            })
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&alice.0), ["plans"]);
    assert_eq!(names(&bob.0), ["bobs", "plans"]);
    // The admin sees every session under the name the store keeps (namespace first)
    // and reaches Alice's by it.
    let all = names(&admin.0);
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(
        all.iter().all(|n| n.starts_with('s') && n.contains('.')),
        "{all:?}"
    );
    let stored: Vec<&String> = all.iter().filter(|n| n.ends_with(".plans")).collect();
    assert_eq!(stored.len(), 2, "{all:?}");
    for name in stored {
        assert_eq!(
            call(&admin.0, "GET", &format!("/v1/sessions/{name}"), None).status,
            200
        );
    }
    assert!(env.server.requests().is_empty());

    // Alice's run waits for an approval: Bob's answers do not reach it, Alice's do.
    env.server.push(openai::tool_call_stream(&[(
        "call_0",
        "fs_write",
        &json!({"path": "alice.txt", "contents": "hi"}).to_string(),
    )]));
    env.server.push(openai::text_stream(&["all set"]));
    // The scheme's case does not matter (RFC 7235).
    let bearer = format!("bearer {}", alice.0);
    let (status, _, mut reader) = http::open_with(
        &served.addr,
        "POST",
        "/v1/sessions/plans/completions",
        &[("Authorization", bearer.as_str())],
        Some(&json!({"prompt": "write it", "stream": true}).to_string()),
    );
    assert_eq!(status, 200);
    let before = http::events(&mut reader, "tool_call_approval_requested");
    let run = before
        .iter()
        .find(|(name, _)| name == "started")
        .map(|(_, data)| serde_json::from_str::<Value>(data).unwrap()["request_id"].clone())
        .and_then(|v| v.as_str().map(str::to_string))
        .expect("a started event with the request id");
    let allow = json!({"decision": "allow"});
    for path in [
        "/v1/approvals/call_0".to_string(),
        "/v1/sessions/plans/approvals/call_0".to_string(),
        format!("/v1/runs/{run}/approvals/call_0"),
    ] {
        let answer = call(&bob.0, "POST", &path, Some(allow.clone()));
        assert_eq!(answer.status, 404, "{path}: {}", answer.body);
    }
    assert!(!root.join("alice.txt").exists());
    let wrong_run = call(
        &alice.0,
        "POST",
        "/v1/runs/req_other/approvals/call_0",
        Some(allow.clone()),
    );
    assert_eq!(wrong_run.status, 404);
    // The run opened the session by its alias; an approval naming it by id reaches it.
    let answer = call(
        &alice.0,
        "POST",
        &format!("/v1/sessions/{id}/approvals/call_0"),
        Some(allow),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let after = http::events(&mut reader, "done");
    assert!(root.join("alice.txt").exists());
    // The saved session is named as Alice wrote it.
    let saved = after
        .iter()
        .find(|(name, _)| name == "session_saved")
        .map(|(_, data)| serde_json::from_str::<Value>(data).unwrap())
        .unwrap_or_else(|| panic!("{after:?}"));
    assert_eq!(saved["name"], "plans", "{saved}");
}

#[test]
fn wrong_keys_cost_no_argon2_and_a_flooding_address_is_throttled() {
    let env = TestEnv::new();
    let key = new_key(&env);
    let api = format!(
        "api:\n  auth:\n    mode: StaticKeys\n    keys:\n{}",
        key_entry("ci", &key, "[read, write]")
    );
    let served = Served::start(&env, &api);
    let started = Instant::now();
    let mut statuses = Vec::new();
    for n in 0..30 {
        // An id no entry has: refused without any argon2 check.
        let wrong = format!("lk_ffffffff_{n:048}");
        statuses.push(served.call("GET", "/v1/roles", Some(&wrong), None).status);
    }
    let spent = started.elapsed();
    assert!(statuses[..20].iter().all(|s| *s == 401), "{statuses:?}");
    // Over the allowance one new key every 2 s is still checked (a valid key behind the
    // same NAT gets in); the rest are refused unchecked.
    assert_eq!(statuses[20], 401, "{statuses:?}");
    assert!(statuses[21..].iter().all(|s| *s == 429), "{statuses:?}");
    let throttled = served.call("GET", "/v1/roles", Some("lk_x_y"), None);
    assert_eq!(throttled.status, 429);
    assert!(throttled.header("retry-after").is_some());
    // 30 argon2 checks would take seconds; a key with an unknown id takes none.
    assert!(spent < Duration::from_secs(5), "{spent:?}");
    // The right key, checked with argon2 once, gets in (on a server whose count of
    // this address's wrong keys is fresh).
    drop(served);
    let served = Served::start(&env, &api);
    assert_eq!(
        served.call("GET", "/v1/roles", Some(&key.0), None).status,
        200
    );
    let live = Instant::now();
    assert_eq!(served.get("/healthz/live").status, 200);
    assert!(live.elapsed() < Duration::from_secs(1));
}

#[test]
fn every_mistake_in_the_api_block_is_named_at_start() {
    let env = TestEnv::new();
    env.write_config(&format!(
        "api:\n  request_timeout_seconds: 0\n  trusted_proxies: ['10.0.0.0/40']\n  auth:\n    mode: StaticKeys\n    keys:\n      - subject: ci\n        key_hash: lk_plaintext_key\n        scopes: [read, 'write:everything']\n{}",
        std::fs::read_to_string(env.config_path()).unwrap()
    ));
    let out = env
        .loki()
        .args(["--serve", "127.0.0.1:0"])
        .timeout(Duration::from_secs(20))
        .assert()
        .failure();
    let err = crate::common::stderr(&out);
    for needle in [
        "request_timeout_seconds",
        "not an argon2 hash",
        "unknown scope `write:everything`",
        "`api.trusted_proxies[0]` `10.0.0.0/40`",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // `*` is the reference's notation for every scope, and is accepted.
    let env = TestEnv::new();
    let key = new_key(&env);
    let api = format!(
        "api:\n  auth:\n    mode: StaticKeys\n    keys:\n{}",
        key_entry("all", &key, "['*']")
    );
    let served = Served::start(&env, &api);
    assert_eq!(
        served
            .call("POST", "/v1/sessions", Some(&key.0), Some(json!({})))
            .status,
        201
    );
    assert_eq!(
        served.call("GET", "/metrics", Some(&key.0), None).status,
        200
    );
}

#[test]
fn a_call_nobody_approves_is_refused_after_the_approval_timeout_on_every_path() {
    let env = TestEnv::new();
    let root = env.work_dir();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    // A `Notification` hook that takes its whole minute (the default hook timeout) must
    // not hold the decision past the approval timeout.
    env.write_config(&format!(
        "enabled_tools: all\nhooks:\n  Notification:\n    - hooks:\n        - type: command\n          command: sleep 30\n{config}"
    ));
    let api = format!(
        "api:\n  auth:\n    mode: Disabled\n  approval_timeout_seconds: 2\n  tools:\n    enabled: true\n    root: {}",
        root.display()
    );
    let served = Served::start(&env, &api);
    assert_eq!(
        served.post("/v1/sessions", json!({"alias": "s"})).status,
        201
    );
    for path in ["/v1/completions", "/v1/sessions/s/completions"] {
        env.server.push(openai::tool_call_stream(&[(
            "call_t",
            "fs_write",
            &json!({"path": "late.txt", "contents": "hi"}).to_string(),
        )]));
        env.server.push(openai::text_stream(&["gave up"]));
        let started = Instant::now();
        let (status, _, mut reader) = http::open(
            &served.addr,
            "POST",
            path,
            None,
            Some(&json!({"prompt": "write it", "stream": true}).to_string()),
        );
        assert_eq!(status, 200);
        let events = http::events(&mut reader, "done");
        let finished: Value = events
            .iter()
            .find(|(name, _)| name == "tool_call_finished")
            .map(|(_, d)| serde_json::from_str(d).unwrap())
            .unwrap_or_else(|| panic!("{path}: {events:?}"));
        assert_eq!(finished["ok"], false, "{finished}");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(2) && waited < Duration::from_secs(10),
            "{path}: {waited:?}"
        );
        assert!(!root.join("late.txt").exists());
    }
}

#[test]
fn a_session_has_its_role_s_tools_confined_to_the_root_and_an_unknown_tool_is_told_to_the_model() {
    let env = TestEnv::new();
    let root = env.work_dir();
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(
        roles.join("coder.md"),
        "---\nenabled_tools: fs_write,fs_cat\n---\nYou write files.\n",
    )
    .unwrap();
    let api = format!(
        "api:\n  auth:\n    mode: Disabled\n  tools:\n    enabled: true\n    root: {}",
        root.display()
    );
    let served = Served::start(&env, &api);
    let created = served.post(
        "/v1/sessions",
        json!({"alias": "code", "role": "coder", "approval": "auto"}),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    env.server.push(openai::tool_call_stream(&[(
        "call_1",
        "fs_write",
        &json!({"path": "made.txt", "contents": "hi"}).to_string(),
    )]));
    env.server.push(openai::tool_call_stream(&[(
        "call_2",
        "no_such_tool",
        "{}",
    )]));
    env.server.push(openai::text_stream(&["all done"]));
    let answer = served.post(
        "/v1/sessions/code/completions",
        json!({"prompt": "make a file"}),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.json()["final_message"],
        "all done",
        "{}",
        answer.body
    );
    let sent = env.server.requests();
    let tools: Vec<String> = sent[0].json()["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    assert!(tools.contains(&"fs_write".to_string()), "{tools:?}");
    assert!(root.join("made.txt").exists());
    // The model hears that the tool does not exist, and goes on.
    let told = sent[2].json()["messages"].to_string();
    assert!(told.contains("no_such_tool"), "{told}");
}

#[test]
fn execute_command_changes_only_the_root_and_cannot_read_the_config_or_the_home() {
    let env = TestEnv::new();
    let root = env.work_dir();
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "top secret").unwrap();
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(
        roles.join("shell.md"),
        "---\nenabled_tools: execute_command\n---\nYou run commands.\n",
    )
    .unwrap();
    let api = format!(
        "api:\n  auth:\n    mode: Disabled\n  tools:\n    enabled: true\n    root: {}",
        root.display()
    );
    let served = Served::start(&env, &api);
    let created = served.post(
        "/v1/sessions",
        json!({"alias": "sh", "role": "shell", "approval": "auto"}),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let command = format!(
        "touch inside.txt && echo made-inside; echo t > \"$TMPDIR/t\" && echo made-temp; \
         touch {escaped}; cat {secret}; cat {config}; cd {outside} && touch moved.txt",
        escaped = outside.join("escaped.txt").display(),
        secret = outside.join("secret.txt").display(),
        config = env.config_path().display(),
        outside = outside.display(),
    );
    env.server.push(openai::tool_call_stream(&[(
        "call_1",
        "execute_command",
        &json!({ "command": command }).to_string(),
    )]));
    env.server.push(openai::text_stream(&["ran it"]));
    let answer = served.post("/v1/sessions/sh/completions", json!({"prompt": "run"}));
    assert_eq!(answer.status, 200, "{}", answer.body);
    let sent = env.server.requests();
    let result = sent[1].json()["messages"].to_string();
    assert!(
        result.contains("made-inside") && result.contains("made-temp"),
        "{result}"
    );
    assert!(root.join("inside.txt").exists(), "{result}");
    assert!(!outside.join("escaped.txt").exists(), "{result}");
    assert!(!outside.join("moved.txt").exists(), "{result}");
    assert!(!result.contains("top secret"), "{result}");
    assert!(!result.contains("api:"), "the config was read: {result}");
    // Reads outside are refused by Landlock; writes by the read-only view of everything
    // but the root.
    let refused = result.matches("Permission denied").count()
        + result.matches("Read-only file system").count();
    assert!(refused >= 4, "{result}");
}

#[test]
fn a_cli_session_is_the_admin_s_and_a_call_id_two_runs_wait_on_is_answered_by_run() {
    let env = TestEnv::new();
    let root = env.work_dir();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: all\n{config}"));
    env.server.push(openai::text_stream(&["from the terminal"]));
    env.loki().args(["-s", "mine", "hello"]).assert().success();
    let (alice, admin) = (new_key(&env), new_key(&env));
    let api = format!(
        "api:\n  auth:\n    mode: StaticKeys\n    keys:\n{}{}  tools:\n    enabled: true\n    root: {}",
        key_entry("alice", &alice, "[read, write]"),
        key_entry("root", &admin, "['*']"),
        root.display()
    );
    let served = Served::start(&env, &api);
    let call = |key: &str, method: &str, path: &str, body: Option<Value>| {
        served.call(method, path, Some(key), body)
    };
    // The terminal's session is the machine owner's: a key that is not admin does not
    // find it by its name.
    let read = call(&alice.0, "GET", "/v1/sessions/mine", None);
    assert_eq!(read.status, 404, "{}", read.body);
    let used = call(
        &alice.0,
        "POST",
        "/v1/sessions/mine/completions",
        Some(json!({"prompt": "leak it"})),
    );
    assert_eq!(used.status, 404, "{}", used.body);
    assert!(!used.body.contains(".mine"), "{}", used.body);
    assert_eq!(call(&admin.0, "GET", "/v1/sessions/mine", None).status, 200);

    // Two of Alice's runs wait on a call with the same id.
    let bearer = format!("Bearer {}", alice.0);
    let mut runs = Vec::new();
    let mut readers = Vec::new();
    for (alias, file) in [("one", "one.txt"), ("two", "two.txt")] {
        let created = call(
            &alice.0,
            "POST",
            "/v1/sessions",
            Some(json!({"alias": alias})),
        );
        assert_eq!(created.status, 201, "{}", created.body);
        env.server.push(openai::tool_call_stream(&[(
            "call_0",
            "fs_write",
            &json!({"path": file, "contents": "hi"}).to_string(),
        )]));
        let (status, _, mut reader) = http::open_with(
            &served.addr,
            "POST",
            &format!("/v1/sessions/{alias}/completions"),
            &[("Authorization", bearer.as_str())],
            Some(&json!({"prompt": "write it", "stream": true}).to_string()),
        );
        assert_eq!(status, 200);
        let before = http::events(&mut reader, "tool_call_approval_requested");
        let run = before
            .iter()
            .find(|(name, _)| name == "started")
            .and_then(|(_, data)| {
                serde_json::from_str::<Value>(data).unwrap()["request_id"]
                    .as_str()
                    .map(str::to_string)
            })
            .expect("a started event with the request id");
        runs.push(run);
        readers.push(reader);
    }
    let allow = json!({"decision": "allow"});
    let ambiguous = call(
        &alice.0,
        "POST",
        "/v1/approvals/call_0",
        Some(allow.clone()),
    );
    assert_eq!(ambiguous.status, 409, "{}", ambiguous.body);
    assert!(
        ambiguous.body.contains(&runs[0]) && ambiguous.body.contains(&runs[1]),
        "{}",
        ambiguous.body
    );
    assert!(!root.join("one.txt").exists() && !root.join("two.txt").exists());
    env.server.push(openai::text_stream(&["wrote two"]));
    let answered = call(
        &alice.0,
        "POST",
        &format!("/v1/runs/{}/approvals/call_0", runs[1]),
        Some(allow.clone()),
    );
    assert_eq!(answered.status, 200, "{}", answered.body);
    http::events(&mut readers[1], "done");
    assert!(root.join("two.txt").exists() && !root.join("one.txt").exists());
    // Only one run waits on it now: the short path reaches it.
    env.server.push(openai::text_stream(&["wrote one"]));
    let answered = call(&alice.0, "POST", "/v1/approvals/call_0", Some(allow));
    assert_eq!(answered.status, 200, "{}", answered.body);
    http::events(&mut readers[0], "done");
    assert!(root.join("one.txt").exists());
}

#[test]
fn behind_a_trusted_proxy_the_wrong_key_throttle_counts_each_forwarded_client() {
    let serve = |proxies: &str| {
        let env = TestEnv::new();
        let key = new_key(&env);
        let api = format!(
            "api:\n  auth:\n    mode: StaticKeys\n    keys:\n{}{proxies}",
            key_entry("alice", &key, "[read]")
        );
        let served = Served::start(&env, &api);
        (env, served)
    };
    let wrong = |served: &Served, forwarded: &str| {
        http::request_with(
            &served.addr,
            "GET",
            "/v1/models",
            &[
                ("Authorization", "Bearer not-a-key"),
                ("X-Forwarded-For", forwarded),
            ],
            None,
        )
        .status
    };
    let (_env, served) = serve("  trusted_proxies: ['127.0.0.1', '10.0.0.0/8']\n");
    // The client's own claim (first) is ignored; the address the proxy saw counts.
    for _ in 0..20 {
        assert_eq!(wrong(&served, "198.51.100.1, 203.0.113.5"), 401);
    }
    // One more new key is still checked (the 2 s probe), then the client is refused.
    assert_eq!(wrong(&served, "198.51.100.2, 203.0.113.5"), 401);
    assert_eq!(wrong(&served, "198.51.100.2, 203.0.113.5"), 429);
    // Another client behind the same proxy (and a second proxy hop) is not throttled.
    assert_eq!(wrong(&served, "203.0.113.6, 10.1.2.3"), 401);
    // Without trusted proxies the header is ignored: one address, one allowance.
    let (_env, served) = serve("");
    let statuses: Vec<u16> = (0..22)
        .map(|n| wrong(&served, &format!("203.0.113.{n}")))
        .collect();
    assert!(statuses[..21].iter().all(|s| *s == 401), "{statuses:?}");
    assert_eq!(statuses[21], 429, "{statuses:?}");
}

#[test]
fn a_call_in_a_conversation_without_tools_is_told_to_the_model_which_then_answers() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    env.server.push(openai::tool_call_stream(&[(
        "call_1",
        "fs_write",
        &json!({"path": "x.txt", "contents": "hi"}).to_string(),
    )]));
    env.server.push(openai::text_stream(&["in words, then"]));
    let answer = served.post("/v1/completions", json!({"prompt": "write a file"}));
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.json()["final_message"],
        "in words, then",
        "{}",
        answer.body
    );
    let sent = env.server.requests();
    assert_eq!(sent.len(), 2);
    let told = sent[1].json()["messages"].to_string();
    assert!(
        told.contains("no tools are enabled") && told.contains("fs_write"),
        "{told}"
    );
}

#[test]
fn sighup_reloads_keys_without_dropping_a_running_stream_and_a_bad_edit_keeps_the_old_ones() {
    let env = TestEnv::new();
    let (old, new) = (new_key(&env), new_key(&env));
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    let with_keys = |entries: &str| {
        format!("api:\n  auth:\n    mode: StaticKeys\n    keys:\n{entries}{config}\n")
    };
    env.write_config(&with_keys(&key_entry("old", &old, "[read, write]")));
    let served = Served::start(&env, "");
    assert_eq!(
        served.call("GET", "/v1/roles", Some(&old.0), None).status,
        200
    );
    // A stream that is running when the keys change.
    env.server
        .push(openai::text_stream(&["still ", "here"]).frame_delay(Duration::from_millis(300)));
    let bearer = format!("Bearer {}", old.0);
    let (status, _, mut running) = http::open_with(
        &served.addr,
        "POST",
        "/v1/completions",
        &[("Authorization", bearer.as_str())],
        Some(&json!({"prompt": "go", "stream": true}).to_string()),
    );
    assert_eq!(status, 200);
    let hangup = |pid: u32| {
        let sent = std::process::Command::new("kill")
            .args(["-HUP", &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    };
    env.write_config(&with_keys(&key_entry("new", &new, "[read, write]")));
    hangup(served.child.id());
    let waited = Instant::now();
    while served.call("GET", "/v1/roles", Some(&new.0), None).status != 200 {
        assert!(waited.elapsed() < Duration::from_secs(10), "not reloaded");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        served.call("GET", "/v1/roles", Some(&old.0), None).status,
        401
    );
    let events = http::events(&mut running, "done");
    let text: String = events
        .iter()
        .filter(|(name, _)| name == "assistant_delta")
        .filter_map(|(_, d)| serde_json::from_str::<Value>(d).ok())
        .filter_map(|d| d["text"].as_str().map(str::to_string))
        .collect();
    assert_eq!(text, "still here", "{events:?}");
    // A broken edit is refused whole: the keys in force stay.
    env.write_config(&format!(
        "api:\n  request_timeout_seconds: 0\n  auth:\n    mode: StaticKeys\n    keys:\n      - subject: x\n        key_hash: plaintext\n{config}\n"
    ));
    hangup(served.child.id());
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        served.call("GET", "/v1/roles", Some(&new.0), None).status,
        200
    );
    // So is one that turns tools on without the root they are confined to (the check at
    // start holds for a reload too).
    env.write_config(&format!(
        "api:\n  tools:\n    enabled: true\n  auth:\n    mode: StaticKeys\n    keys:\n{}{config}\n",
        key_entry("old", &old, "[read, write]")
    ));
    hangup(served.child.id());
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        served.call("GET", "/v1/roles", Some(&old.0), None).status,
        401,
        "a reload turned tools on without a root"
    );
    assert_eq!(served.get("/healthz/live").status, 200, "still serving");
}

#[test]
fn with_log_format_json_every_log_line_is_one_json_object_with_the_request_id() {
    let env = TestEnv::new();
    let log = env.root().join("server.log");
    let served = Served::start_with(
        &env,
        &format!("{OPEN}\n  log_format: json"),
        &[
            ("LOKI_LOG_LEVEL", "info".into()),
            ("LOKI_LOG_PATH", log.display().to_string()),
        ],
    );
    assert_eq!(served.get("/v1/roles").status, 200);
    drop(served);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let request = lines
        .iter()
        .find(|l| l["path"] == "/v1/roles")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        request["request_id"].as_str().unwrap().starts_with("req_"),
        "{request}"
    );
    assert_eq!(request["subject"], "anonymous");
    assert_eq!(request["status"], 200);
    assert_eq!(request["level"], "INFO");
    assert!(request["timestamp"].as_str().unwrap().ends_with('Z'));
}

/// An identity provider's signing key (ES256), its id, and the JWK that publishes it.
struct Signer {
    pair: ring::signature::EcdsaKeyPair,
    kid: String,
}

impl Signer {
    fn new(kid: &str) -> Signer {
        use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        Signer {
            pair,
            kid: kid.into(),
        }
    }

    fn jwk(&self) -> Value {
        use ring::signature::KeyPair;
        let point = self.pair.public_key().as_ref();
        json!({"kty": "EC", "crv": "P-256", "kid": self.kid, "use": "sig", "alg": "ES256",
            "x": b64(&point[1..33]), "y": b64(&point[33..65])})
    }

    fn token(&self, claims: &Value) -> String {
        let head = b64(json!({"alg": "ES256", "typ": "JWT", "kid": self.kid})
            .to_string()
            .as_bytes());
        let body = b64(claims.to_string().as_bytes());
        let signed = format!("{head}.{body}");
        let rng = ring::rand::SystemRandom::new();
        let signature = self.pair.sign(&rng, signed.as_bytes()).unwrap();
        format!("{signed}.{}", b64(signature.as_ref()))
    }
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[test]
fn jwt_tokens_are_checked_against_the_provider_s_keys_and_a_rotated_key_is_fetched() {
    let env = TestEnv::new();
    let first = Signer::new("k1");
    let rotated = Signer::new("k2");
    let published = std::sync::Arc::new(std::sync::Mutex::new(vec![first.jwk()]));
    let fetches = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (keys, counted) = (published.clone(), fetches.clone());
    env.server.respond_for("/idp/jwks", move |_| {
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        crate::common::fake_llm::Reply::json(200, json!({"keys": *keys.lock().unwrap()}))
    });
    let api = format!(
        "api:\n  auth:\n    mode: Jwt\n    issuer: https://idp.example\n    audience: loki\n    jwks_url: {}/idp/jwks\n    leeway_seconds: 5",
        env.server.root_url()
    );
    let served = Served::start(&env, &api);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = |sub: &str, scope: &str| {
        json!({"iss": "https://idp.example", "aud": ["loki", "other"], "sub": sub,
               "scope": scope, "exp": now + 600, "iat": now})
    };
    let alice = first.token(&claims("alice", "read:sessions write:sessions"));
    let created = served.call(
        "POST",
        "/v1/sessions",
        Some(&alice),
        Some(json!({"alias": "a"})),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        served
            .call("GET", "/v1/sessions/a", Some(&alice), None)
            .status,
        200
    );
    // The scopes are the token's: no `read:roles`.
    assert_eq!(
        served.call("GET", "/v1/roles", Some(&alice), None).status,
        403
    );
    // Refused: another audience, another issuer, expired, a forged signature.
    let mut wrong = Vec::new();
    let mut claim = claims("alice", "read:sessions");
    claim["aud"] = json!("someone-else");
    wrong.push(first.token(&claim));
    let mut claim = claims("alice", "read:sessions");
    claim["iss"] = json!("https://evil.example");
    wrong.push(first.token(&claim));
    let mut claim = claims("alice", "read:sessions");
    claim["exp"] = json!(now - 3600);
    wrong.push(first.token(&claim));
    let forged = Signer::new("k1").token(&claims("mallory", "*"));
    wrong.push(forged);
    for token in &wrong {
        assert_eq!(
            served.call("GET", "/v1/sessions", Some(token), None).status,
            401,
            "{token}"
        );
    }
    // Bob's names are his own: Alice's "a" is not even visible to him.
    let bob = first.token(&claims("bob", "read:sessions"));
    assert_eq!(
        served
            .call("GET", "/v1/sessions/a", Some(&bob), None)
            .status,
        404
    );
    assert_eq!(
        fetches.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the set is cached"
    );
    // The provider rotates its key: a token with the new id fetches the set again, once.
    published.lock().unwrap().push(rotated.jwk());
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let renewed = rotated.token(&claims("alice", "read:sessions"));
    assert_eq!(
        served
            .call("GET", "/v1/sessions/a", Some(&renewed), None)
            .status,
        200
    );
    assert_eq!(fetches.load(std::sync::atomic::Ordering::SeqCst), 2);
    let unknown = Signer::new("k9").token(&claims("alice", "read:sessions"));
    for _ in 0..3 {
        std::thread::sleep(std::time::Duration::from_millis(1100));
        assert_eq!(
            served
                .call("GET", "/v1/sessions", Some(&unknown), None)
                .status,
            401
        );
    }
    assert_eq!(
        fetches.load(std::sync::atomic::Ordering::SeqCst),
        3,
        "an unknown id refetches once"
    );
}

#[test]
fn after_the_database_restarts_the_server_reconnects_and_readiness_says_when_it_is_down() {
    let pg = crate::common::postgres::Postgres::start();
    let env = TestEnv::new();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("session_store: {}\n{config}", pg.url));
    let served = Served::start(&env, OPEN);
    assert_eq!(
        served.post("/v1/sessions", json!({"alias": "kept"})).status,
        201
    );
    assert_eq!(served.get("/healthz/ready").status, 200);
    pg.stop();
    let down = served.get("/healthz/ready");
    assert_eq!(down.status, 503, "{}", down.body);
    assert_eq!(down.json()["status"], "store_unavailable");
    let failed = served.get("/v1/sessions/kept");
    assert!(failed.status >= 500, "{}", failed.body);
    assert_eq!(served.get("/healthz/live").status, 200, "alive all along");
    pg.start_again();
    // Within the backoff's bound (5 s), without restarting loki.
    let waited = Instant::now();
    loop {
        let back = served.get("/v1/sessions/kept");
        if back.status == 200 {
            break;
        }
        assert!(waited.elapsed() < Duration::from_secs(15), "{}", back.body);
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(served.get("/healthz/ready").status, 200);
    env.server.push(openai::text_stream(&["after the restart"]));
    let turn = served.post(
        "/v1/sessions/kept/completions",
        json!({"prompt": "still there?"}),
    );
    assert_eq!(turn.status, 200, "{}", turn.body);
}

#[test]
fn sessions_reach_a_database_that_requires_tls_and_its_certificate_is_verified() {
    let pg = crate::common::postgres::Postgres::start_tls();
    let env = TestEnv::new();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    // Without TLS the database refuses loki (its pg_hba takes TCP only over TLS).
    env.write_config(&format!("session_store: {}\n{config}", pg.url));
    let plain = env
        .loki()
        .args(["--list-sessions"])
        .timeout(Duration::from_secs(20))
        .assert()
        .failure();
    let err = crate::common::stderr(&plain);
    assert!(err.contains("session") && err.lines().count() == 1, "{err}");
    // TLS with the platform's trust store: the test CA is unknown, so it is refused.
    env.write_config(&format!(
        "session_store: {}?sslmode=require\n{config}",
        pg.url
    ));
    let unverified = env
        .loki()
        .args(["--list-sessions"])
        .timeout(Duration::from_secs(20))
        .assert()
        .failure();
    let err = crate::common::stderr(&unverified);
    assert!(
        err.to_lowercase().contains("tls") || err.contains("certificate"),
        "{err}"
    );
    // With its CA, TLS works end to end.
    env.write_config(&format!(
        "session_store: {}?sslmode=verify-full&sslrootcert={}\n{config}",
        pg.url,
        pg.ca_file().display()
    ));
    let served = Served::start(&env, OPEN);
    assert_eq!(
        served
            .post("/v1/sessions", json!({"alias": "secure"}))
            .status,
        201
    );
    assert_eq!(served.get("/v1/sessions/secure").status, 200);
}

#[test]
fn a_connection_trickling_its_headers_is_closed_and_a_stream_holds_its_request_slot() {
    use std::io::{Read, Write};
    let env = TestEnv::new();
    let served = Served::start(
        &env,
        &format!(
            "{OPEN}\n  limits:\n    header_read_timeout_seconds: 1\n    max_concurrent_requests: 1"
        ),
    );
    // Slowloris: headers that never end.
    let mut slow = std::net::TcpStream::connect(&served.addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(slow, "GET /v1/roles HTTP/1.1\r\nHost: localhost\r\n").unwrap();
    let started = Instant::now();
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(300));
        let _ = write!(slow, "X-Trickle: 1\r\n");
    }
    // The server closes it (a read that waited for the client's 10 s timeout would fail
    // the bound below).
    let mut rest = Vec::new();
    let _ = slow.read_to_end(&mut rest);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // A complete request still works.
    assert_eq!(served.get("/v1/roles").status, 200);
    // One slot: a streamed answer holds it until its last byte, so the server says it
    // is saturated meanwhile, and ready again after.
    env.server
        .push(openai::text_stream(&["a", "b", "c"]).frame_delay(Duration::from_millis(400)));
    let (status, _, mut stream) = http::open(
        &served.addr,
        "POST",
        "/v1/completions",
        None,
        Some(&json!({"prompt": "slow", "stream": true}).to_string()),
    );
    assert_eq!(status, 200);
    let busy = served.get("/healthz/ready");
    assert_eq!(busy.status, 503, "{}", busy.body);
    assert_eq!(busy.json()["status"], "saturated");
    http::events(&mut stream, "done");
    drop(stream);
    let waited = Instant::now();
    while served.get("/healthz/ready").status != 200 {
        assert!(waited.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Issue 56: the header deadline holds for every request of a kept-alive connection, not
/// only its first; a timeout of 0 is refused at start.
#[test]
fn a_kept_alive_connection_trickling_its_next_request_is_closed() {
    use std::io::{Read, Write};
    let env = TestEnv::new();
    let served = Served::start(
        &env,
        &format!("{OPEN}\n  limits:\n    header_read_timeout_seconds: 1"),
    );
    let mut conn = std::net::TcpStream::connect(&served.addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    write!(
        conn,
        "GET /healthz/live HTTP/1.1\r\nHost: localhost\r\n\r\n"
    )
    .unwrap();
    // The first answer arrives on the kept-alive connection.
    let mut first = [0u8; 512];
    let n = conn.read(&mut first).unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"));
    // The next request's headers, a byte every 300 ms.
    let started = Instant::now();
    let _ = write!(conn, "GET /v1/roles HTTP/1.1\r\n");
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(300));
        if write!(conn, "X: 1\r\n").is_err() {
            break;
        }
    }
    let mut rest = Vec::new();
    let _ = conn.read_to_end(&mut rest);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the trickling request held the connection for {:?}",
        started.elapsed()
    );
    drop(served);
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&config.replace(
        "header_read_timeout_seconds: 1",
        "header_read_timeout_seconds: 0",
    ));
    let out = env.loki().args(["--serve", "127.0.0.1:0"]).assert().code(1);
    assert!(
        crate::common::stderr(&out).contains("header_read_timeout_seconds"),
        "{}",
        crate::common::stderr(&out)
    );
}

/// Issue 56: a slow identity provider and a token with a made-up key id stall nobody
/// whose key is known; a key the provider removes stops being accepted after a refresh.
#[test]
fn a_slow_key_fetch_stalls_no_known_token_and_a_removed_key_is_dropped() {
    let env = TestEnv::new();
    let first = Signer::new("k1");
    let second = Signer::new("k2");
    let published = std::sync::Arc::new(std::sync::Mutex::new(vec![first.jwk(), second.jwk()]));
    let slow = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (keys, is_slow) = (published.clone(), slow.clone());
    env.server.respond_for("/idp/jwks", move |_| {
        let reply =
            crate::common::fake_llm::Reply::json(200, json!({"keys": *keys.lock().unwrap()}));
        if is_slow.load(std::sync::atomic::Ordering::SeqCst) {
            reply.delay_headers(std::time::Duration::from_secs(4))
        } else {
            reply
        }
    });
    let api = format!(
        "api:\n  auth:\n    mode: Jwt\n    issuer: https://idp.example\n    audience: loki\n    jwks_url: {}/idp/jwks\n    leeway_seconds: 5\n    jwks_refresh_seconds: 2",
        env.server.root_url()
    );
    let served = Served::start(&env, &api);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({"iss": "https://idp.example", "aud": "loki", "sub": "alice",
                        "scope": "read:sessions", "exp": now + 600, "iat": now});
    let known = first.token(&claims);
    assert_eq!(
        served
            .call("GET", "/v1/sessions", Some(&known), None)
            .status,
        200
    );
    // The provider turns slow; a made-up key id makes loki fetch — meanwhile a token with
    // a known key is answered at once.
    slow.store(true, std::sync::atomic::Ordering::SeqCst);
    let made_up = Signer::new("nope").token(&claims);
    let addr = served.addr.clone();
    let stalled = std::thread::spawn(move || {
        crate::common::http::request(&addr, "GET", "/v1/sessions", Some(&made_up), None).status
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    let started = Instant::now();
    assert_eq!(
        served
            .call("GET", "/v1/sessions", Some(&known), None)
            .status,
        200
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "a known key waited {:?} for the slow fetch",
        started.elapsed()
    );
    assert_eq!(stalled.join().unwrap(), 401);
    // The provider drops k2; after the refresh its tokens are refused, k1's still pass.
    slow.store(false, std::sync::atomic::Ordering::SeqCst);
    let removed = second.token(&claims);
    assert_eq!(
        served
            .call("GET", "/v1/sessions", Some(&removed), None)
            .status,
        200
    );
    published.lock().unwrap().retain(|k| k["kid"] != "k2");
    let waited = Instant::now();
    while served
        .call("GET", "/v1/sessions", Some(&removed), None)
        .status
        == 200
    {
        assert!(
            waited.elapsed() < Duration::from_secs(15),
            "the removed key is still trusted"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(
        served
            .call("GET", "/v1/sessions", Some(&known), None)
            .status,
        200
    );
}

#[test]
fn a_keyed_session_is_named_as_its_owner_wrote_it_by_its_id_and_alias_and_in_refusals() {
    let env = TestEnv::new();
    let alice = new_key(&env);
    let api = format!(
        "api:\n  auth:\n    mode: StaticKeys\n    keys:\n{}",
        key_entry("alice", &alice, "[read, write]"),
    );
    let served = Served::start(&env, &api);
    let call = |method: &str, path: &str, body: Option<Value>| {
        served.call(method, path, Some(&alice.0), body)
    };
    // The key check says whose the key is; without one it is the 401 of every route.
    let checked = call("POST", "/v1/auth/check", None);
    assert_eq!(checked.status, 200, "{}", checked.body);
    assert_eq!(checked.json()["subject"], "alice", "{}", checked.body);
    assert_eq!(
        served.call("POST", "/v1/auth/check", None, None).status,
        401
    );
    let created = call("POST", "/v1/sessions", Some(json!({"alias": "work"})));
    assert_eq!(created.status, 201, "{}", created.body);
    let id = created.json()["id"].as_str().unwrap().to_string();
    // Fetched by its alias, it answers with its id and its alias, as the list does.
    let fetched = call("GET", "/v1/sessions/work", None).json();
    assert_eq!(fetched["id"], id.as_str(), "{fetched}");
    assert_eq!(fetched["alias"], "work", "{fetched}");
    env.server.push(openai::text_stream(&["first answer"]));
    let first = call(
        "POST",
        "/v1/sessions/work/completions",
        Some(json!({"prompt": "first question"})),
    );
    assert_eq!(first.status, 200, "{}", first.body);
    // A role that does not exist is that, whatever the session holds.
    let unknown = call(
        "POST",
        "/v1/sessions/work/role",
        Some(json!({"name": "zzz"})),
    );
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    // A role for a session with history is refused in the API's words, under the
    // session's own name (not the namespaced one it is stored under).
    let locked = call(
        "POST",
        "/v1/sessions/work/role",
        Some(json!({"name": "shell"})),
    );
    assert_eq!(locked.status, 409, "{}", locked.body);
    let message = locked.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with("session `work` already has 2 messages"),
        "{message}"
    );
    assert!(message.contains("POST /v1/sessions"), "{message}");
    assert!(!message.contains(".exit session"), "{message}");
}
