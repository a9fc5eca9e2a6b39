//! OpenAI's Codex CLI (`@openai/codex`, pinned in tests/clients/package.json), unchanged
//! and with its default configuration, against `loki --serve`: the only setting is a
//! model provider whose `base_url` is loki's server. Every Codex request offers a
//! `namespace` tool and the built-in `web_search`; loki flattens the one and drops the
//! other with a warning, the fake model calls Codex's shell tool, Codex runs it and the
//! answer comes back — and a resumed thread carries the history.

use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::server::Served;
use crate::common::TestEnv;
use crate::common::clients::npm_bin;
use crate::common::fake_llm::{Recorded, Reply, openai};

const OPEN: &str = "api:\n  auth:\n    mode: Disabled";

/// What is in the file the model asks Codex to read.
const MARKER: &str = "codex-read-this-7731";

/// A listener every proxy variable points at: a Codex that tried to reach the internet
/// (updates, telemetry, OpenAI itself) would connect here. It keeps each request line
/// (`CONNECT host:443 …`).
fn trap() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let tries = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&tries);
    std::thread::spawn(move || {
        for mut connection in listener.incoming().flatten() {
            let _ = connection.set_read_timeout(Some(std::time::Duration::from_secs(2)));
            let mut head = [0u8; 512];
            let read = connection.read(&mut head).unwrap_or(0);
            let text = String::from_utf8_lossy(&head[..read]);
            let line = text.lines().next().unwrap_or("(nothing sent)").to_string();
            seen.lock().unwrap().push(line);
        }
    });
    (format!("http://{addr}"), tries)
}

/// The last message of a chat request the fake received.
fn last_message(request: &Recorded) -> Value {
    let body = request.json();
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default()
}

/// The fake model: asked about the marker, it reasons and calls Codex's shell tool;
/// given the tool's output, it answers with it; anything else (Codex's own side
/// requests, the resumed turn) gets a plain answer. Replies go by content, not by order.
fn model(request: &Recorded) -> Reply {
    let last = last_message(request);
    let text = last["content"].to_string();
    if last["role"] == "tool" {
        let found = if text.contains(MARKER) {
            MARKER
        } else {
            "nothing"
        };
        return openai::text_stream(&["The file says ", found, "."]);
    }
    if text.contains("marker.txt") {
        let call = json!({"tool_calls": [{"index": 0, "id": "call_shell", "type": "function",
            "function": {"name": "exec_command",
                         "arguments": json!({"cmd": "cat marker.txt"}).to_string()}}]});
        let thinking = json!({"reasoning_content": "The user wants the file read."});
        return openai::stream_from_deltas(&[thinking, call], "tool_calls", 10, 5);
    }
    openai::text_stream(&["Resumed and ready."])
}

/// Runs `codex exec ARGS` in `env`'s work dir with `home` as `CODEX_HOME`.
fn codex(env: &TestEnv, home: &std::path::Path, proxy: &str, args: &[&str]) -> Output {
    let mut command = Command::new("timeout");
    command
        .arg("180")
        .arg(npm_bin("codex"))
        .arg("exec")
        .args(args)
        .current_dir(env.work_dir())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", env.root().join("home"))
        .env("CODEX_HOME", home)
        .env("LOKI_API_KEY", "unused")
        .stdin(Stdio::null());
    for var in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
    ] {
        command.env(var, proxy);
    }
    command.env("NO_PROXY", "127.0.0.1,localhost");
    command.env("no_proxy", "127.0.0.1,localhost");
    command.output().expect("codex runs")
}

/// Every line of Codex's thread files (`sessions/…/rollout-*.jsonl`) under `dir`.
fn rollouts(dir: &std::path::Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            all.push_str(&rollouts(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            all.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    all
}

fn shown(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn codex_exec_with_its_default_configuration_runs_a_shell_call_and_resumes_its_thread() {
    let env = TestEnv::new();
    env.write("marker.txt", MARKER);
    env.server.respond_for("/v1/chat/completions", model);
    let served = Served::start(&env, OPEN);
    let home = env.root().join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    // Codex's defaults, plus the one thing that has to be said: where the model is. Its
    // plugin catalogue (fetched from github.com and chatgpt.com at start) and its
    // analytics (sent to ab.chatgpt.com) are off: the test has no internet, and neither
    // has anything to do with the model.
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model = \"fake:gpt-4o-mini\"\nmodel_provider = \"loki\"\n\n\
             [model_providers.loki]\nname = \"loki\"\nbase_url = \"http://{}/v1\"\n\
             env_key = \"LOKI_API_KEY\"\nwire_api = \"responses\"\n\n\
             [features]\nplugins = false\n\n[analytics]\nenabled = false\n",
            served.addr
        ),
    )
    .unwrap();
    let (proxy, tries) = trap();

    let first = codex(
        &env,
        &home,
        &proxy,
        &["--skip-git-repo-check", "What does marker.txt say?"],
    );
    assert!(first.status.success(), "{}", shown(&first));
    let said = String::from_utf8_lossy(&first.stdout);
    assert!(
        said.contains(&format!("The file says {MARKER}.")),
        "{}",
        shown(&first)
    );
    let requests = env.server.requests();
    // The first request offered Codex's tools, its namespace flattened, and no web search.
    let offered = requests[0].json()["tools"].to_string();
    assert!(offered.contains("\"exec_command\""), "{offered}");
    assert!(offered.contains("multi_agent_v1__"), "{offered}");
    assert!(!offered.contains("web_search"), "{offered}");
    // Codex ran the call and sent its output, with the reasoning it was given, back.
    let answered = requests
        .iter()
        .find(|r| last_message(r)["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool result reached the model: {}", shown(&first)));
    let body = answered.json();
    assert!(body["messages"].to_string().contains(MARKER), "{body}");
    let call = body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| !m["tool_calls"].is_null()))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        call["tool_calls"][0]["function"]["name"], "exec_command",
        "{body}"
    );
    // The reasoning reached Codex as a reasoning item: its thread keeps it (and sends it
    // back with the resumed turn below, which loki takes).
    let thread = rollouts(&home.join("sessions"));
    assert!(
        thread.contains("\"type\":\"reasoning\"")
            && thread.contains("The user wants the file read."),
        "{thread}"
    );

    let before = env.server.request_count();
    let resumed = codex(
        &env,
        &home,
        &proxy,
        &[
            "resume",
            "--skip-git-repo-check",
            "--last",
            "Anything else?",
        ],
    );
    assert!(resumed.status.success(), "{}", shown(&resumed));
    assert!(
        String::from_utf8_lossy(&resumed.stdout).contains("Resumed and ready."),
        "{}",
        shown(&resumed)
    );
    let later = env.server.requests();
    let turn = later[before..]
        .iter()
        .find(|r| {
            last_message(r)["content"]
                .to_string()
                .contains("Anything else?")
        })
        .unwrap_or_else(|| panic!("the resumed turn reached no model: {}", shown(&resumed)));
    let history = turn.json()["messages"].to_string();
    for earlier in ["What does marker.txt say?", MARKER, "exec_command"] {
        assert!(
            history.contains(earlier),
            "{earlier} missing from {history}"
        );
    }
    let tries = tries.lock().unwrap().clone();
    assert!(
        tries.is_empty(),
        "Codex tried to reach the internet: {tries:?}"
    );
}
