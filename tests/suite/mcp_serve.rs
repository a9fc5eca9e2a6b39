//! `loki --mcp-server`: an rmcp client (the official SDK, as Claude Desktop or an editor
//! would use) lists and calls what loki offers, over stdio and over streamable HTTP. A
//! role tool runs a loki conversation against the fake provider; a knowledge-base tool
//! returns the matching passage.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::fake_llm::openai;

/// An environment with a role `poet` and a keyword knowledge base `zoo`.
fn env() -> TestEnv {
    let env = TestEnv::new();
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(roles.join("poet.md"), "You write very short poems.\n").unwrap();
    let macros = env.config_dir().join("macros");
    std::fs::create_dir_all(&macros).unwrap();
    std::fs::write(
        macros.join("ode.yaml"),
        "variables:\n  - name: subject\nsteps:\n  - .role poet\n  - An ode to {{subject}}\n",
    )
    .unwrap();
    env.write("kb/a.txt", "Llamas hum when they are content.");
    env.write("kb/b.txt", "Penguins cannot fly.");
    env.loki()
        .args(["--rag", "zoo", "--rag-docs", "kb"])
        .assert()
        .success();
    env
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap()
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

/// Lists and calls over `client`; checks what the fake model was sent.
async fn exercise<S: rmcp::Service<rmcp::RoleClient>>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, S>,
    env: &TestEnv,
) {
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in ["role_poet", "role_code", "kb_search_zoo", "macro_ode"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(!names.contains(&"role_shell"), "{names:?}");

    env.server
        .push(openai::text_stream(&["Soft hum, calm llama."]));
    let result = client
        .call_tool(
            CallToolRequestParams::new("role_poet")
                .with_arguments(args(json!({"prompt": "a poem about llamas"}))),
        )
        .await
        .unwrap();
    assert_eq!(text(&result), "Soft hum, calm llama.");
    assert_ne!(result.is_error, Some(true));
    let sent = env.server.last_request().json();
    let sent = sent["messages"].to_string();
    assert!(sent.contains("You write very short poems."), "{sent}");
    assert!(sent.contains("a poem about llamas"), "{sent}");

    let found = client
        .call_tool(
            CallToolRequestParams::new("kb_search_zoo")
                .with_arguments(args(json!({"query": "do llamas hum", "top_k": 1}))),
        )
        .await
        .unwrap();
    let found = text(&found);
    assert!(
        found.contains("Llamas hum when they are content."),
        "{found}"
    );
    assert!(!found.contains("Penguins"), "{found}");

    env.server
        .push(openai::text_stream(&["O rain, soft rain."]));
    let ode = client
        .call_tool(
            CallToolRequestParams::new("macro_ode").with_arguments(args(json!({"args": ["rain"]}))),
        )
        .await
        .unwrap();
    assert_eq!(text(&ode), "O rain, soft rain.");
    let sent = env.server.last_request().json()["messages"].to_string();
    assert!(
        sent.contains("You write very short poems.") && sent.contains("An ode to rain"),
        "{sent}"
    );

    // A missing argument is the tool's error, which the calling model reads; an unknown
    // tool is a protocol error.
    let missing = client
        .call_tool(CallToolRequestParams::new("role_poet").with_arguments(args(json!({}))))
        .await
        .unwrap();
    assert_eq!(missing.is_error, Some(true), "{missing:?}");
    assert!(
        text(&missing).contains("`prompt` is required"),
        "{missing:?}"
    );
    let unknown = client
        .call_tool(CallToolRequestParams::new("role_nobody").with_arguments(args(json!({}))))
        .await;
    assert!(unknown.is_err(), "{unknown:?}");

    let prompts = client.list_all_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "poet"), "{prompts:?}");
    let prompt = client
        .get_prompt(
            rmcp::model::GetPromptRequestParams::new("poet")
                .with_arguments(args(json!({"input": "about rain"}))),
        )
        .await
        .unwrap();
    let message = serde_json::to_string(&prompt.messages).unwrap();
    assert!(
        message.contains("You write very short poems.\\n\\nabout rain"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_uses_roles_and_knowledge_bases_over_stdio() {
    let env = env();
    let mut cmd = tokio::process::Command::from(env.loki_std());
    cmd.arg("--mcp-server");
    let transport = rmcp::transport::TokioChildProcess::new(cmd).unwrap();
    let client = ().serve(transport).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "loki");
    exercise(&client, &env).await;
    client.cancel().await.unwrap();
}

/// `loki --mcp-server ADDR` on a free loopback port in `env`; its address once it says
/// it is listening.
fn serve_http(env: &TestEnv) -> (Killed, String) {
    use std::io::BufRead;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let child = env
        .loki_std()
        .args(["--mcp-server", &addr])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let mut line = String::new();
    std::io::BufReader::new(child.0.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains(&format!("http://{addr}/mcp")), "{line}");
    (child, addr)
}

fn initialize_request(id: u64) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}
    })
    .to_string()
}

/// POSTs `body` to `/mcp` with `headers` (and the Accept header clients send).
fn post(addr: &str, headers: &[(&str, &str)], body: &str) -> crate::common::http::Response {
    let mut all = vec![("Accept", "application/json, text/event-stream")];
    all.extend_from_slice(headers);
    crate::common::http::request_with(addr, "POST", "/mcp", &all, Some(body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_uses_roles_and_knowledge_bases_over_http() {
    let env = env();
    let (_child, addr) = serve_http(&env);
    // A web page the user visits cannot reach it: a foreign Origin is refused, and so is
    // a host name other than a loopback one (a name made to resolve to 127.0.0.1).
    let page = post(
        &addr,
        &[("Origin", "http://attacker.example")],
        &initialize_request(1),
    );
    assert_eq!(page.status, 403, "{}", page.body);
    let rebound = post(
        &addr,
        &[("Host", "attacker.example:80")],
        &initialize_request(1),
    );
    assert_eq!(rebound.status, 403, "{}", rebound.body);
    loki::client::http::install_crypto_provider();
    let url = format!("http://{addr}/mcp");
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
    let client = ().serve(transport).await.unwrap();
    exercise(&client, &env).await;
    client.cancel().await.unwrap();
}

#[test]
fn http_sessions_open_end_and_refuse_what_is_not_theirs() {
    let env = env();
    let (_child, addr) = serve_http(&env);
    let opened = post(&addr, &[], &initialize_request(1));
    assert_eq!(opened.status, 200, "{}", opened.body);
    let reply = opened.json();
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(reply["result"]["serverInfo"]["name"], "loki");
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();

    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let noted = post(&addr, &[("Mcp-Session-Id", &session)], initialized);
    assert_eq!(noted.status, 202, "{}", noted.body);
    let list = r#"{"jsonrpc":"2.0","id":"two","method":"tools/list"}"#;
    let listed = post(&addr, &[("Mcp-Session-Id", &session)], list);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.json()["id"], "two");
    assert!(
        listed.json()["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
    // Without a session a request is still served; an unknown one is refused.
    assert_eq!(post(&addr, &[], list).json()["id"], "two");
    let future = post(
        &addr,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2099-01-01"),
        ],
        list,
    );
    assert_eq!(future.status, 400, "{}", future.body);
    let stale = post(&addr, &[("Mcp-Session-Id", "nope")], list);
    assert_eq!(stale.status, 404, "{}", stale.body);
    let unknown = post(
        &addr,
        &[],
        r#"{"jsonrpc":"2.0","id":3,"method":"server/discover"}"#,
    );
    assert_eq!(unknown.json()["error"]["code"], -32601, "{}", unknown.body);
    let batch = post(&addr, &[], &format!("[{list}]"));
    assert_eq!(batch.status, 400, "{}", batch.body);
    let garbage = post(&addr, &[], "{not json");
    assert_eq!(garbage.json()["error"]["code"], -32700, "{}", garbage.body);

    let stream = crate::common::http::request_with(&addr, "GET", "/mcp", &[], None);
    assert_eq!(stream.status, 405);
    let ended = crate::common::http::request_with(
        &addr,
        "DELETE",
        "/mcp",
        &[("Mcp-Session-Id", &session)],
        None,
    );
    assert_eq!(ended.status, 200, "{}", ended.body);
    let after = post(&addr, &[("Mcp-Session-Id", &session)], list);
    assert_eq!(after.status, 404, "{}", after.body);
}

#[test]
fn a_cancelled_http_call_stops_its_conversation() {
    let env = env();
    // The model starts answering, then goes quiet.
    env.server
        .push(openai::text_stream(&["Soft", " hum", " calm"]).hang_after(2));
    let (_child, addr) = serve_http(&env);
    let opened = post(&addr, &[], &initialize_request(1));
    let session = opened.header("mcp-session-id").unwrap().to_string();
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "role_poet", "arguments": {"prompt": "llamas"}}})
    .to_string();
    let caller = {
        let (addr, session) = (addr.clone(), session.clone());
        std::thread::spawn(move || post(&addr, &[("Mcp-Session-Id", &session)], &call))
    };
    env.server
        .wait_for_requests(1, std::time::Duration::from_secs(20));
    let started = std::time::Instant::now();
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#;
    let noted = post(&addr, &[("Mcp-Session-Id", &session)], cancel);
    assert_eq!(noted.status, 202, "{}", noted.body);
    let answered = caller.join().unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the call ran on for {:?}",
        started.elapsed()
    );
    let reply = answered.json();
    assert_eq!(reply["id"], 7, "{reply}");
    assert_eq!(reply["result"]["isError"], true, "{reply}");
}

#[test]
fn one_loki_uses_another_as_an_mcp_server() {
    // The serving loki answers with its own model; the client loki finds its tools over
    // HTTP (asking `server/discover` first, then initialising) and calls one.
    let serving = env();
    serving
        .server
        .push(openai::text_stream(&["Soft hum, calm llama."]));
    let (_child, addr) = serve_http(&serving);
    let client = super::mcp::mcp_env(
        json!({"lk": {"type": "http", "url": format!("http://{addr}/mcp")}}),
        "enabled_mcp_servers: lk\nmcp_tool_exposure: direct\n",
    );
    client.server.push(openai::tool_call_stream(&[(
        "c1",
        "lk_role_poet",
        r#"{"prompt":"a poem about llamas"}"#,
    )]));
    client.server.push(openai::text_stream(&["Here it is."]));
    let out = client
        .loki()
        .args(["--yolo", "ask the poet"])
        .assert()
        .success();
    assert_eq!(crate::common::stdout(&out), "Here it is.\n");
    let offered = client.server.requests()[0].json();
    assert!(
        offered["tools"].to_string().contains("lk_kb_search_zoo"),
        "{offered}"
    );
    let sent = client.server.last_request().json();
    assert_eq!(super::mcp::tool_result(&sent), "Soft hum, calm llama.");
    let asked = serving.server.last_request().json()["messages"].to_string();
    assert!(asked.contains("a poem about llamas"), "{asked}");
}

/// Kills the server however the test ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_public_address_is_refused() {
    let env = TestEnv::new();
    let out = env
        .loki()
        .args(["--mcp-server", "0.0.0.0:0"])
        .assert()
        .failure();
    let err = crate::common::stderr(&out);
    assert!(err.contains("loopback"), "{err}");
    // Over HTTP nothing may run unapproved: the port is open to every local user.
    let out = env
        .loki()
        .args(["--mcp-server", "127.0.0.1:0", "--yolo"])
        .assert()
        .failure();
    let err = crate::common::stderr(&out);
    assert!(err.contains("--yolo is refused"), "{err}");
}

#[test]
fn a_request_over_sixteen_mebibytes_gets_an_error_with_its_id_and_the_server_goes_on() {
    use std::io::{BufRead, BufReader, Write};
    let env = env();
    let mut child = env
        .loki_std()
        .arg("--mcp-server")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answer_to = |id: u64| -> Value {
        loop {
            let mut line = String::new();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "no answer to {id}"
            );
            let value: Value = serde_json::from_str(&line).unwrap();
            if value["id"] == id {
                return value;
            }
        }
    };
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
    )
    .unwrap();
    assert!(answer_to(1).get("result").is_some());
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let huge = "a".repeat(17 * 1024 * 1024);
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "role_poet", "arguments": {"prompt": huge}}})
    )
    .unwrap();
    let refused = answer_to(9);
    let message = refused["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(message.contains("bytes"), "{refused}");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":10,"method":"tools/list"}}"#
    )
    .unwrap();
    assert!(answer_to(10)["result"]["tools"].is_array());
    drop(stdin);
    let _ = child.wait();
    assert!(env.server.requests().is_empty(), "the model was asked");
}

#[test]
fn on_stdio_a_cancelled_call_stops_unanswered_and_closing_stdin_shuts_down() {
    use std::io::{BufRead, BufReader, Write};
    let env = env();
    env.server
        .push(openai::text_stream(&["Soft", " hum", " calm"]).hang_after(2));
    let mut child = env
        .loki_std()
        .arg("--mcp-server")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    send(serde_json::from_str(&initialize_request(1)).unwrap());
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "role_poet", "arguments": {"prompt": "llamas"}}}));
    env.server
        .wait_for_requests(1, std::time::Duration::from_secs(20));
    send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "changed my mind"}}),
    );
    // A ping sent after the cancellation is answered; the cancelled call never is.
    std::thread::sleep(std::time::Duration::from_millis(300));
    send(json!({"jsonrpc": "2.0", "id": 11, "method": "ping"}));
    let mut answered = Vec::new();
    loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "no answer to the ping"
        );
        let value: Value = serde_json::from_str(&line).unwrap();
        answered.push(value["id"].clone());
        if value["id"] == 11 {
            break;
        }
    }
    assert_eq!(answered, vec![json!(1), json!(11)]);
    drop(stdin);
    let started = std::time::Instant::now();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert!(!rest.contains("\"id\":7"), "{rest}");
}

#[test]
fn at_most_eight_calls_run_at_once_and_the_ninth_waits_its_turn() {
    use std::io::{BufRead, BufReader, Write};
    use std::time::Duration;
    let env = env();
    for _ in 0..9 {
        env.server
            .push(openai::text_stream(&["Soft", " hum"]).hang_after(1));
    }
    let mut child = env
        .loki_std()
        .arg("--mcp-server")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let _child = Killed(child);
    writeln!(stdin, "{}", initialize_request(1)).unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    for id in 100..109 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "role_poet", "arguments": {"prompt": format!("poem {id}")}}});
        writeln!(stdin, "{call}").unwrap();
    }
    env.server.wait_for_requests(8, Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(env.server.request_count(), 8, "a ninth call did not wait");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 100}});
    writeln!(stdin, "{cancel}").unwrap();
    let all = env.server.wait_for_requests(9, Duration::from_secs(30));
    assert_eq!(all.len(), 9, "the ninth call never ran");
}
