//! OAuth sign-in (`--authenticate`) against the fake server as the authorisation
//! server, and requests made with the saved tokens.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;

use serde_json::json;

use crate::common::fake_llm::{Reply, anthropic, gemini};
use crate::common::{TestEnv, stderr, stdout};

fn token_file(env: &TestEnv, client: &str) -> std::path::PathBuf {
    env.root()
        .join("cache/loki/oauth")
        .join(format!("{client}_oauth_tokens.json"))
}

/// Spawns `loki --authenticate <client>`, returns it with the URL it printed.
fn start_sign_in(
    env: &TestEnv,
    client: &str,
) -> (
    std::process::Child,
    BufReader<std::process::ChildStderr>,
    String,
) {
    let mut child = env
        .loki_std()
        .args(["--authenticate", client])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut url = String::new();
    loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "no URL printed");
        if line.starts_with("http") {
            url = line.trim().to_string();
            break;
        }
        assert!(line.contains("Open this URL") || url.is_empty(), "{line}");
    }
    (child, err, url)
}

fn query_param(url: &str, key: &str) -> String {
    let query = url.split_once('?').unwrap().1;
    query
        .split('&')
        .find_map(|p| p.strip_prefix(&format!("{key}=")))
        .map(|v| v.replace("%3A", ":").replace("%2F", "/"))
        .unwrap()
}

fn finish(mut child: std::process::Child, mut err: BufReader<std::process::ChildStderr>) -> String {
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    assert!(child.wait().unwrap().success(), "{rest}");
    rest
}

#[test]
fn claude_sign_in_pastes_code_and_state_then_requests_use_the_token() {
    let env = TestEnv::new();
    let base = env.server.root_url();
    env.write_config(&format!(
        "model: claude:claude-sonnet-4-5\nclients:\n  - type: claude\n    auth: oauth\n    api_base: {base}/v1\n    oauth_token_url: {base}/oauth/token\n"
    ));
    // Before signing in, a request says what to do.
    let out = env.loki().arg("hi").assert().code(1);
    assert!(
        stderr(&out).contains(
            "OAuth configured but no tokens found for 'claude'. Run: 'loki --authenticate claude'"
        ),
        "{}",
        stderr(&out)
    );

    env.server.push_for(
        "/oauth/token",
        Reply::json(200, json!({"access_token": "at-1", "refresh_token": "rt-1", "expires_in": 3600, "token_type": "Bearer"})),
    );
    let (mut child, err, url) = start_sign_in(&env, "claude");
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    let state = query_param(&url, "state");
    let challenge = query_param(&url, "code_challenge");
    writeln!(child.stdin.take().unwrap(), "the-code#{state}").unwrap();
    let rest = finish(child, err);
    assert!(
        rest.contains(
            "Successfully authenticated client 'claude' with Anthropic via OAuth. Tokens saved."
        ),
        "{rest}"
    );
    let exchange = env.server.last_request().json();
    assert_eq!(exchange["grant_type"], "authorization_code");
    assert_eq!(exchange["code"], "the-code");
    assert_eq!(exchange["state"], state.as_str());
    // The verifier hashes to the challenge that was sent.
    let verifier = exchange["code_verifier"].as_str().unwrap();
    use base64::Engine;
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    assert_eq!(
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref()),
        challenge
    );
    crate::common::assert_private(&token_file(&env, "claude"));

    env.server.push(anthropic::text_stream(&["Signed in."]));
    let out = env
        .loki()
        .args(["--prompt", "Be brief.", "hi"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "Signed in.\n");
    let request = env.server.last_request();
    assert_eq!(request.header("authorization"), Some("Bearer at-1"));
    assert_eq!(request.header("anthropic-beta"), Some("oauth-2025-04-20"));
    assert!(request.header("x-api-key").is_none());
    let system = request.json()["system"].clone();
    assert!(
        system[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("You are Claude Code"),
        "{system}"
    );
    assert_eq!(system[1]["text"], "Be brief.");

    // An expired token is refreshed and the new one saved.
    std::fs::write(
        token_file(&env, "claude"),
        json!({"access_token": "at-old", "refresh_token": "rt-1", "expires_at": 1}).to_string(),
    )
    .unwrap();
    env.server.push_for(
        "/oauth/token",
        Reply::json(200, json!({"access_token": "at-2", "expires_in": 3600})),
    );
    env.server.push(anthropic::text_stream(&["Refreshed."]));
    env.loki().arg("hi").assert().success();
    let requests = env.server.requests();
    let refresh = requests[requests.len() - 2].json();
    assert_eq!(refresh["grant_type"], "refresh_token");
    assert_eq!(refresh["refresh_token"], "rt-1");
    assert_eq!(
        env.server.last_request().header("authorization"),
        Some("Bearer at-2")
    );
    let saved = std::fs::read_to_string(token_file(&env, "claude")).unwrap();
    assert!(saved.contains("at-2") && saved.contains("rt-1"), "{saved}");

    // A pasted code without the state is refused.
    let (mut child, err, _) = start_sign_in(&env, "claude");
    writeln!(child.stdin.take().unwrap(), "no-state").unwrap();
    let mut rest = String::new();
    BufReader::new(err.into_inner())
        .read_to_string(&mut rest)
        .unwrap();
    assert!(!child.wait().unwrap().success());
    assert!(rest.contains("Expected format: <code>#<state>"), "{rest}");
}

#[test]
fn gemini_sign_in_comes_back_through_the_loopback_listener() {
    let env = TestEnv::new();
    let base = env.server.root_url();
    env.write_config(&format!(
        "model: gemini:gemini-2.5-flash\nclients:\n  - type: gemini\n    auth: oauth\n    api_base: {base}/v1beta\n    oauth_client_id: test-client.apps.googleusercontent.com\n    oauth_client_secret: test-secret\n    oauth_token_url: {base}/token\n"
    ));
    env.server.push_for(
        "/token",
        Reply::json(
            200,
            json!({"access_token": "ya29.g", "refresh_token": "1//r", "expires_in": 3599}),
        ),
    );
    let (child, err, url) = start_sign_in(&env, "gemini");
    let redirect = query_param(&url, "redirect_uri");
    let state = query_param(&url, "state");
    assert!(
        redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"),
        "{redirect}"
    );
    // The browser comes back with the code.
    let addr = redirect
        .trim_start_matches("http://")
        .trim_end_matches("/callback");
    let mut socket = std::net::TcpStream::connect(addr).unwrap();
    // Sent in two pieces, as a slow browser might.
    socket
        .write_all(format!("GET /callback?code=4%2Fabc&state={state} HTTP/1.1\r\n").as_bytes())
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    socket
        .write_all(format!("Host: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    let mut page = String::new();
    socket.read_to_string(&mut page).unwrap();
    assert!(page.contains("You can close this tab"), "{page}");
    let rest = finish(child, err);
    assert!(rest.contains("with Google via OAuth"), "{rest}");
    let form = env.server.last_request().body_str();
    for field in [
        "grant_type=authorization_code",
        "code=4%2Fabc",
        "client_secret=test-secret",
        "code_verifier=",
    ] {
        assert!(form.contains(field), "{form}");
    }

    env.server.push(gemini::text_stream(&["Hi."]));
    env.loki().arg("hi").assert().success();
    let request = env.server.last_request();
    assert_eq!(request.header("authorization"), Some("Bearer ya29.g"));
    assert!(request.header("x-goog-api-key").is_none());

    // Unknown clients are named.
    let out = env.loki().args(["--authenticate", "nope"]).assert().code(1);
    assert!(
        stderr(&out).contains("Client 'nope' not found or doesn't support OAuth"),
        "{}",
        stderr(&out)
    );
}
