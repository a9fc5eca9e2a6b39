//! Signing in to a remote MCP server: the test server's `--oauth` mode is a streamable
//! HTTP MCP server behind OAuth with its own authorization server on 127.0.0.1
//! (discovery, dynamic registration, PKCE checked at the token endpoint, refresh). The
//! browser is the test server's `--browse` mode, given to loki as `LOKI_BROWSER`.

use serde_json::{Value, json};

use super::mcp::{mcp_env, remote_with, server_bin, tool_result};
use crate::common::fake_llm::openai;
use crate::common::{TestEnv, stderr};

/// The authorization server's request counts (`GET /stats`).
fn stats(url: &str) -> Value {
    use std::io::{Read, Write};
    let host = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut socket = std::net::TcpStream::connect(&host).unwrap();
    write!(
        socket,
        "GET /stats HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    socket.read_to_string(&mut reply).unwrap();
    let body = reply.split("\r\n\r\n").nth(1).unwrap_or_default();
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {reply}"))
}

fn signed_env(url: &str) -> TestEnv {
    mcp_env(
        json!({"s": {"type": "http", "url": url}}),
        "enabled_mcp_servers: s\nmcp_tool_exposure: direct\n",
    )
}

fn login(env: &TestEnv) -> assert_cmd::assert::Assert {
    env.loki()
        .env("LOKI_BROWSER", format!("{} --browse", server_bin()))
        .args(["--mcp-login", "s"])
        .assert()
}

/// Files under `dir` whose name is `name`.
fn find(dir: &std::path::Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(find(&path, name));
        } else if path.file_name().is_some_and(|n| n == name) {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_server_that_wants_sign_in_is_signed_in_to_and_used() {
    let (_server, url) = remote_with("--oauth", "", &[("MCP_TOKEN_TTL", "2")]);
    let env = signed_env(&url);

    // Before: the server cannot start, and the warning names the command.
    env.server.push(openai::text_stream(&["No tools."]));
    let out = env.loki().arg("hi").assert().success();
    let err = stderr(&out);
    assert!(
        err.contains("needs sign-in: run `loki --mcp-login s`"),
        "{err}"
    );

    // Sign in: discovery, registration, PKCE, tokens kept 0600.
    let out = login(&env).success();
    let err = stderr(&out);
    assert!(err.contains("MCP server `s`: signed in"), "{err}");
    assert!(err.contains("scopes: mcp:read"), "{err}");
    let counted = stats(&url);
    assert_eq!(counted["register"], 1, "{counted}");
    assert_eq!(counted["authorize"], 1, "{counted}");
    assert_eq!(counted["token"], 1, "{counted}");
    let files = find(&env.work_dir().join(".."), "mcp_s.json");
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // Signed in: the tools work.
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "s_echo",
        r#"{"text":"behind oauth"}"#,
    )]));
    env.server.push(openai::text_stream(&["Done."]));
    env.loki().arg("echo").assert().success();
    assert_eq!(
        tool_result(&env.server.last_request().json()),
        "echo: behind oauth"
    );

    // The token expires; the next run refreshes it.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    env.server.push(openai::tool_call_stream(&[(
        "c2",
        "s_echo",
        r#"{"text":"refreshed"}"#,
    )]));
    env.server.push(openai::text_stream(&["Done."]));
    env.loki().arg("echo").assert().success();
    assert_eq!(
        tool_result(&env.server.last_request().json()),
        "echo: refreshed"
    );
    assert_eq!(stats(&url)["refresh"], 1, "{}", stats(&url));

    let out = env.loki().arg("--info").assert().success();
    let info = crate::common::stdout(&out);
    assert!(info.contains("signed in"), "{info}");

    // Signing out forgets the tokens.
    let out = env.loki().args(["--mcp-logout", "s"]).assert().success();
    assert!(stderr(&out).contains("signed out"));
    assert!(find(&env.work_dir().join(".."), "mcp_s.json").is_empty());
}

#[test]
fn a_redirect_from_another_issuer_is_refused() {
    let (_server, url) = remote_with("--oauth", "--wrong-iss", &[]);
    let env = signed_env(&url);
    let out = login(&env).failure();
    let err = stderr(&out);
    assert!(err.contains("sign-in failed"), "{err}");
    assert!(err.to_lowercase().contains("issuer"), "{err}");
    assert!(find(&env.work_dir().join(".."), "mcp_s.json").is_empty());
    assert_eq!(stats(&url)["token"], Value::Null, "no token was asked for");
}

#[test]
fn a_static_authorization_header_turns_sign_in_off() {
    let env = mcp_env(
        json!({"s": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}}}),
        "",
    );
    let out = env.loki().args(["--mcp-login", "s"]).assert().failure();
    assert!(
        stderr(&out).contains("does not sign in"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_call_that_needs_more_scope_says_so_and_the_next_sign_in_asks_for_it() {
    let notes = tempfile::NamedTempFile::new().unwrap();
    let notes_path = notes.path().display().to_string();
    let (_server, url) = remote_with("--oauth", "", &[("MCP_TEST_NOTES", &notes_path)]);
    let env = signed_env(&url);
    login(&env).success();
    assert_eq!(stats(&url)["last_scope"], "mcp:read");

    // `note` needs mcp:write: the server answers 403 insufficient_scope.
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "s_note",
        r#"{"line":"hello"}"#,
    )]));
    env.server.push(openai::text_stream(&["Could not."]));
    env.loki().args(["--yolo", "note it"]).assert().success();
    let result = tool_result(&env.server.last_request().json());
    assert!(
        result.contains("needs more access (scope mcp:read mcp:write): run `loki --mcp-login s`"),
        "{result}"
    );

    // Signing in again asks for what was granted and what the server asked for.
    login(&env).success();
    let scope = stats(&url)["last_scope"].as_str().unwrap().to_string();
    assert!(
        scope.contains("mcp:read") && scope.contains("mcp:write"),
        "{scope}"
    );
    env.server.push(openai::tool_call_stream(&[(
        "c2",
        "s_note",
        r#"{"line":"hello"}"#,
    )]));
    env.server.push(openai::text_stream(&["Noted."]));
    env.loki().args(["--yolo", "note it"]).assert().success();
    assert_eq!(tool_result(&env.server.last_request().json()), "noted");
    assert_eq!(std::fs::read_to_string(notes.path()).unwrap(), "hello\n");
}

#[test]
fn a_legacy_sse_server_signs_in_the_same_way() {
    let (_server, url) = remote_with("--oauth", "", &[]);
    let sse = url.replace("/mcp", "/sse");
    let env = mcp_env(
        json!({"s": {"type": "sse", "url": sse}}),
        "enabled_mcp_servers: s\nmcp_tool_exposure: direct\n",
    );
    env.server.push(openai::text_stream(&["No tools."]));
    let out = env.loki().arg("hi").assert().success();
    assert!(
        stderr(&out).contains("needs sign-in: run `loki --mcp-login s`"),
        "{}",
        stderr(&out)
    );
    login(&env).success();
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "s_echo",
        r#"{"text":"over sse"}"#,
    )]));
    env.server.push(openai::text_stream(&["Done."]));
    env.loki().arg("echo").assert().success();
    assert_eq!(
        tool_result(&env.server.last_request().json()),
        "echo: over sse"
    );
}

#[test]
fn with_a_vault_the_sign_in_is_kept_in_it() {
    let (_server, url) = remote_with("--oauth", "", &[]);
    let env = mcp_env(
        json!({"s": {"type": "http", "url": url}}),
        "enabled_mcp_servers: s\nmcp_tool_exposure: direct\nvault_password_file: vault-pass\n",
    );
    crate::common::write_private(&env.config_dir().join("vault-pass"), "a long passphrase\n");
    env.loki()
        .args(["--add-secret", "OTHER"])
        .write_stdin("x")
        .assert()
        .success();
    let out = login(&env).success();
    assert!(
        stderr(&out).contains("the vault, as MCP_OAUTH_S"),
        "{}",
        stderr(&out)
    );
    assert!(find(&env.work_dir().join(".."), "mcp_s.json").is_empty());
    let listed = crate::common::stdout(&env.loki().arg("--list-secrets").assert().success());
    assert!(listed.contains("MCP_OAUTH_S"), "{listed}");

    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "s_echo",
        r#"{"text":"from the vault"}"#,
    )]));
    env.server.push(openai::text_stream(&["Done."]));
    env.loki().arg("echo").assert().success();
    assert_eq!(
        tool_result(&env.server.last_request().json()),
        "echo: from the vault"
    );

    env.loki().args(["--mcp-logout", "s"]).assert().success();
    let listed = crate::common::stdout(&env.loki().arg("--list-secrets").assert().success());
    assert!(!listed.contains("MCP_OAUTH_S"), "{listed}");
    assert!(listed.contains("OTHER"), "{listed}");
}

#[test]
fn a_challenge_after_the_session_started_names_the_login_and_its_scope() {
    // `initialize` passes without a token; `tools/list` is challenged (scope mcp:read).
    let (_server, url) = remote_with("--oauth", "--open-start", &[]);
    let env = signed_env(&url);
    env.server.push(openai::text_stream(&["No tools."]));
    let out = env.loki().arg("hi").assert().success();
    let err = stderr(&out);
    assert!(
        err.contains("needs sign-in: run `loki --mcp-login s`"),
        "{err}"
    );
    // The login meets the same challenge and asks for its scope, not every scope the
    // server supports (mcp:read mcp:write).
    login(&env).success();
    assert_eq!(stats(&url)["last_scope"], "mcp:read");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "s_echo",
        r#"{"text":"late"}"#,
    )]));
    env.server.push(openai::text_stream(&["Done."]));
    env.loki().arg("echo").assert().success();
    assert_eq!(tool_result(&env.server.last_request().json()), "echo: late");
}

/// An authorization server whose sign-in page is plain http elsewhere (or `file:`,
/// `javascript:`) is not handed to the browser: the sign-in stops at once, naming it.
#[test]
fn a_sign_in_page_that_is_not_https_is_not_opened() {
    let (_server, url) = remote_with("--oauth", "--foreign-authorize", &[]);
    let env = signed_env(&url);
    let started = std::time::Instant::now();
    let out = login(&env).failure();
    let err = stderr(&out);
    assert!(
        err.contains("will not open") && err.contains("auth.example.invalid"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(stats(&url)["token"], Value::Null, "no token was asked for");
}
