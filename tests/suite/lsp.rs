//! Language-server tools (`lsp_diagnostics`, `lsp_references`) against `examples/fake_lsp`:
//! lazy start, one server per language, stopped with loki, confined to the working tree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use loki::lsp::{LspConfig, LspPool};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::tools::tool_results;
use crate::common::fake_llm::openai;
use crate::common::{TestEnv, stdout};

/// The fake language server (built by `cargo test` as an example).
fn fake_lsp() -> String {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let bin = dir.join("examples/fake_lsp");
    assert!(
        bin.exists(),
        "{} missing: run `cargo build --example fake_lsp` (cargo test builds it)",
        bin.display()
    );
    bin.display().to_string()
}

/// Every tool enabled and declared, with `servers` as `lsp_servers`.
fn lsp_env(servers: Value) -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "enabled_tools: all\nload_tools_after: 0\nlsp_servers: {servers}\n{cfg}"
    ));
    env
}

/// The fake server for `.txt` files, logging its starts to the returned file.
fn fake_env() -> (TestEnv, PathBuf) {
    let env = lsp_env(json!({"fake": {"command": fake_lsp(), "extensions": ["txt"]}}));
    let log = env.root().join("lsp.log");
    (env, log)
}

fn loki(env: &TestEnv, log: &Path) -> assert_cmd::Command {
    let mut cmd = env.loki();
    cmd.env("FAKE_LSP_LOG", log);
    cmd
}

/// The tool results of the last request to the model.
fn last_results(env: &TestEnv) -> Vec<String> {
    tool_results(&env.server.last_request().json())
        .into_iter()
        .map(|(_, content)| content)
        .collect()
}

/// The pids the fake server logged at start.
fn starts(log: &Path) -> Vec<i32> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.strip_prefix("started "))
        .map(|pid| pid.parse().unwrap())
        .collect()
}

/// Whether `pid` is a live process (a zombie counts as gone).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn diagnostics_of_a_file_go_back_to_the_model() {
    let (env, log) = fake_env();
    env.write("a.txt", "alpha beta\nERROR here\n  WARN x\n");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "lsp_diagnostics",
        r#"{"path":"a.txt"}"#,
    )]));
    env.server.push(openai::text_stream(&["One error."]));
    let out = loki(&env, &log).arg("check a.txt").assert().success();
    assert_eq!(stdout(&out), "One error.\n");
    let first = env.server.requests()[0].json();
    let declared: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        declared.contains(&"lsp_diagnostics") && declared.contains(&"lsp_references"),
        "{declared:?}"
    );
    assert_eq!(
        last_results(&env),
        ["a.txt:2:1: error: found ERROR\na.txt:3:3: warning: found WARN"]
    );
}

#[test]
fn references_are_found_across_files() {
    let (env, log) = fake_env();
    env.write("a.txt", "alpha beta\n");
    env.write("sub/b.txt", "call beta twice: beta\nbetamax\n");
    env.write("c.md", "beta\n");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "lsp_references",
        r#"{"path":"a.txt","line":1,"column":8}"#,
    )]));
    env.server.push(openai::text_stream(&["Three uses."]));
    loki(&env, &log)
        .arg("where is beta used?")
        .assert()
        .success();
    assert_eq!(
        last_results(&env),
        [
            "a.txt:1:7: alpha beta\nsub/b.txt:1:6: call beta twice: beta\nsub/b.txt:1:18: call beta twice: beta"
        ]
    );
}

#[test]
fn one_server_serves_every_call_and_stops_with_loki() {
    let (env, log) = fake_env();
    env.write("a.txt", "fine\n");
    env.write("b.txt", "ERROR\n");
    // Two calls in one round (run concurrently), then one more after a change on disk.
    env.server.push(openai::tool_call_stream(&[
        ("c1", "lsp_diagnostics", r#"{"path":"a.txt"}"#),
        ("c2", "lsp_diagnostics", r#"{"path":"b.txt"}"#),
    ]));
    env.server.push(openai::tool_call_stream(&[(
        "c3",
        "fs_write",
        r#"{"path":"a.txt","contents":"now WARN\n"}"#,
    )]));
    env.server.push(openai::tool_call_stream(&[(
        "c4",
        "lsp_diagnostics",
        r#"{"path":"a.txt"}"#,
    )]));
    env.server.push(openai::text_stream(&["Done."]));
    let out = loki(&env, &log)
        .args(["--yolo", "check both"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "Done.\n");
    let requests = env.server.requests();
    assert_eq!(
        tool_results(&requests[1].json()),
        [
            ("c1".to_string(), "no diagnostics".to_string()),
            (
                "c2".to_string(),
                "b.txt:1:1: error: found ERROR".to_string()
            ),
        ]
    );
    // The file changed on disk: the server is sent the new text.
    assert_eq!(
        last_results(&env).last().unwrap(),
        "a.txt:1:5: warning: found WARN"
    );
    let pids = starts(&log);
    assert_eq!(pids.len(), 1, "started more than once: {pids:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while running(pids[0]) {
        assert!(
            Instant::now() < deadline,
            "the language server {} outlived loki",
            pids[0]
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn paths_outside_the_working_tree_are_refused_before_any_server_starts() {
    let (env, log) = fake_env();
    std::fs::write(env.root().join("secret.txt"), "ERROR secret\n").unwrap();
    let absolute = env.root().join("secret.txt").display().to_string();
    #[cfg(unix)]
    std::os::unix::fs::symlink("../secret.txt", env.work_dir().join("link.txt")).unwrap();
    let mut calls = vec![
        ("c1", "lsp_diagnostics", json!({"path": "../secret.txt"})),
        ("c2", "lsp_diagnostics", json!({"path": absolute})),
        (
            "c3",
            "lsp_references",
            json!({"path": "sub/../../secret.txt", "line": 1, "column": 1}),
        ),
    ];
    if cfg!(unix) {
        calls.push(("c4", "lsp_diagnostics", json!({"path": "link.txt"})));
    }
    let calls: Vec<(&str, &str, String)> = calls
        .into_iter()
        .map(|(id, name, args)| (id, name, args.to_string()))
        .collect();
    let calls: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|(id, name, args)| (*id, *name, args.as_str()))
        .collect();
    env.server.push(openai::tool_call_stream(&calls));
    env.server.push(openai::text_stream(&["Refused."]));
    loki(&env, &log).arg("read the secret").assert().success();
    let results = last_results(&env);
    assert_eq!(results.len(), calls.len());
    for result in results {
        assert!(
            result.contains("outside the working directory") && !result.contains("found ERROR"),
            "{result}"
        );
    }
    assert!(!log.exists(), "a language server started");
}

#[test]
fn a_server_that_cannot_start_is_an_error_naming_its_config() {
    let env = lsp_env(json!({"fake": {"command": "/no/such/lsp-server", "extensions": ["txt"]}}));
    env.write("a.txt", "ERROR\n");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "lsp_diagnostics",
        r#"{"path":"a.txt"}"#,
    )]));
    env.server.push(openai::text_stream(&["No server."]));
    let out = env.loki().arg("check a.txt").assert().success();
    assert_eq!(stdout(&out), "No server.\n");
    let results = last_results(&env);
    let error: Value = serde_json::from_str(&results[0]).unwrap();
    let error = error["tool_call_error"].as_str().unwrap();
    assert!(
        error.contains("lsp_servers.fake")
            && error.contains("could not start")
            && error.contains("/no/such/lsp-server")
            && !error.contains('\n'),
        "{error}"
    );
}

#[test]
fn a_server_that_exits_is_reported_and_started_again_by_the_next_call() {
    let (env, log) = fake_env();
    env.write("a.txt", "ERROR\n");
    for id in ["c1", "c2"] {
        env.server.push(openai::tool_call_stream(&[(
            id,
            "lsp_diagnostics",
            r#"{"path":"a.txt"}"#,
        )]));
    }
    env.server.push(openai::text_stream(&["It crashed."]));
    loki(&env, &log)
        .env("FAKE_LSP_CRASH", "1")
        .arg("check a.txt")
        .assert()
        .success();
    let requests = env.server.requests();
    for (request, id) in requests[1..].iter().zip(["c1", "c2"]) {
        let results = tool_results(&request.json());
        let (_, content) = results.iter().find(|(call, _)| call == id).unwrap();
        assert!(
            content.contains("lsp_servers.fake")
                && content.contains("exit status: 3")
                && content.contains("crashing as asked"),
            "{content}"
        );
    }
    assert_eq!(starts(&log).len(), 2);
}

#[test]
fn files_no_server_handles_and_bad_arguments_are_errors() {
    let (env, log) = fake_env();
    env.write("a.md", "ERROR\n");
    env.write("a.txt", "ERROR\n");
    env.server.push(openai::tool_call_stream(&[
        ("c1", "lsp_diagnostics", r#"{"path":"a.md"}"#),
        ("c2", "lsp_diagnostics", r#"{}"#),
        (
            "c3",
            "lsp_references",
            r#"{"path":"a.txt","line":0,"column":1}"#,
        ),
        ("c4", "lsp_diagnostics", r#"{"path":"missing.txt"}"#),
    ]));
    env.server.push(openai::text_stream(&["Errors."]));
    loki(&env, &log).arg("check").assert().success();
    let results = last_results(&env);
    for (result, expected) in results.iter().zip([
        "no language server handles `a.md`",
        "missing string argument `path`",
        "`line` must be a number from 1",
        "missing.txt",
    ]) {
        assert!(
            result.contains("tool_call_error") && result.contains(expected),
            "{result}"
        );
    }
    assert!(!log.exists(), "a language server started");
}

/// A pool of the fake server for `.txt` files, logging to `log`.
fn fake_pool(log: &Path) -> LspPool {
    LspPool::new(BTreeMap::from([(
        "fake".to_string(),
        LspConfig {
            command: fake_lsp(),
            args: vec!["--log".into(), log.display().to_string()],
            extensions: vec!["txt".into()],
        },
    )]))
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

#[test]
fn concurrent_first_calls_start_one_server_and_shutdown_stops_it_politely() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    std::fs::create_dir(&root).unwrap();
    for name in ["a", "b", "c", "d"] {
        std::fs::write(root.join(format!("{name}.txt")), format!("{name}\nERROR\n")).unwrap();
    }
    let log = dir.path().join("lsp.log");
    let pool = fake_pool(&log);
    let cancel = CancellationToken::new();
    block_on(async {
        let calls = ["a", "b", "c", "d"].map(|name| {
            let file = root.join(format!("{name}.txt"));
            let (pool, root, cancel) = (&pool, &root, &cancel);
            async move { pool.diagnostics(root, &file, cancel).await }
        });
        for (name, result) in ["a", "b", "c", "d"]
            .iter()
            .zip(futures_util::future::join_all(calls).await)
        {
            assert_eq!(
                result.unwrap(),
                format!("{name}.txt:2:1: error: found ERROR")
            );
        }
        let pids = starts(&log);
        assert_eq!(pids.len(), 1, "{pids:?}");
        pool.shutdown().await;
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains(&format!("exited {}", pids[0])), "{text}");
        assert!(!running(pids[0]));
        // The next call starts it again.
        let again = pool.diagnostics(&root, &root.join("a.txt"), &cancel).await;
        assert_eq!(again.unwrap(), "a.txt:2:1: error: found ERROR");
    });
    let pids = starts(&log);
    assert_eq!(pids.len(), 2, "{pids:?}");
    // Dropping the pool (here with the runtime) kills what is still running.
    drop(pool);
    let deadline = Instant::now() + Duration::from_secs(10);
    while running(pids[1]) {
        assert!(Instant::now() < deadline, "{} outlived the pool", pids[1]);
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_cancelled_call_returns_at_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "x\n").unwrap();
    let pool = fake_pool(&dir.path().join("lsp.log"));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = block_on(pool.diagnostics(dir.path(), &dir.path().join("a.txt"), &cancel));
    assert!(
        matches!(result, Err(loki::lsp::LspError::Cancelled)),
        "{result:?}"
    );
}

/// `lsp_servers` plus `extra` config lines, every tool enabled.
fn lsp_env_with(servers: Value, extra: &str) -> TestEnv {
    let env = lsp_env(servers);
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("{extra}\n{cfg}"));
    env
}

/// A "language server" that never answers anything (not even `initialize`).
fn silent_server() -> Value {
    json!({"hang": {"command": "sleep", "args": ["600"], "extensions": ["txt"]}})
}

#[test]
fn edits_that_break_a_file_carry_its_new_errors() {
    let (env, log) = fake_env();
    env.write("a.txt", "fine\n");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_write",
        r#"{"path":"a.txt","contents":"fine\nERROR one\n"}"#,
    )]));
    env.server.push(openai::tool_call_stream(&[(
        "c2",
        "fs_edit",
        r#"{"path":"a.txt","old_string":"fine","new_string":"ERROR two"}"#,
    )]));
    env.server.push(openai::tool_call_stream(&[(
        "c3",
        "fs_patch",
        r#"{"path":"a.txt","contents":"--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-ERROR two\n+WARN two\n ERROR one\n"}"#,
    )]));
    env.server.push(openai::text_stream(&["Broken."]));
    loki(&env, &log)
        .args(["--yolo", "edit a.txt"])
        .assert()
        .success();
    let requests = env.server.requests();
    let result = |n: usize| tool_results(&requests[n].json()).pop().unwrap().1;
    assert_eq!(
        result(1),
        "wrote 15 bytes to a.txt\n\n[diagnostics after the edit: 1 error]\n\
         a.txt:2:1: error: found ERROR"
    );
    // The new error first; the one from before is marked.
    assert_eq!(
        result(2),
        "replaced 1 occurrence in a.txt\n\n\
         [diagnostics after the edit: 2 errors; 1 of them before the edit too]\n\
         a.txt:1:1: error: found ERROR\n\
         a.txt:2:1: error: found ERROR (before the edit)"
    );
    // A warning is listed (there are few).
    assert_eq!(
        result(3),
        "patched a.txt\n\n\
         [diagnostics after the edit: 1 error, 1 warning; 1 of them before the edit too]\n\
         a.txt:1:1: warning: found WARN\n\
         a.txt:2:1: error: found ERROR (before the edit)"
    );
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("a.txt")).unwrap(),
        "WARN two\nERROR one\n"
    );
    assert_eq!(starts(&log).len(), 1);
}

#[test]
fn a_clean_edit_adds_nothing_to_the_result() {
    let (env, log) = fake_env();
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_write",
        r#"{"path":"a.txt","contents":"all fine\n"}"#,
    )]));
    env.server.push(openai::text_stream(&["Clean."]));
    loki(&env, &log)
        .args(["--yolo", "write a.txt"])
        .assert()
        .success();
    assert_eq!(last_results(&env), ["wrote 9 bytes to a.txt"]);
    // The server was asked (and found nothing).
    assert_eq!(starts(&log).len(), 1);
}

#[test]
fn a_server_that_never_answers_does_not_hold_up_the_edit() {
    let env = lsp_env_with(silent_server(), "lsp_diagnostics_timeout: 1");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_write",
        r#"{"path":"a.txt","contents":"ERROR\n"}"#,
    )]));
    env.server.push(openai::text_stream(&["Written."]));
    let started = Instant::now();
    env.loki()
        .args(["--yolo", "write a.txt"])
        .assert()
        .success();
    // Neither the edit nor loki's exit waits for the server's 30 s start time-out.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_eq!(
        last_results(&env),
        ["wrote 6 bytes to a.txt\n\n\
          [diagnostics after the edit: none from the `hang` language server within 1 s]"]
    );
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("a.txt")).unwrap(),
        "ERROR\n"
    );
}

#[test]
fn a_server_that_crashes_leaves_the_edit_done_with_a_note() {
    let (env, log) = fake_env();
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_write",
        r#"{"path":"a.txt","contents":"ERROR\n"}"#,
    )]));
    env.server.push(openai::text_stream(&["Written."]));
    loki(&env, &log)
        .env("FAKE_LSP_CRASH", "1")
        .args(["--yolo", "write a.txt"])
        .assert()
        .success();
    let result = last_results(&env).pop().unwrap();
    assert!(
        result.starts_with(
            "wrote 6 bytes to a.txt\n\n[diagnostics after the edit: unavailable: language server `fake`"
        ) && result.contains("exit status: 3")
            && result.ends_with(']'),
        "{result}"
    );
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("a.txt")).unwrap(),
        "ERROR\n"
    );
}

#[test]
fn without_a_server_for_the_file_an_edit_does_not_wait() {
    // A server that would hold every edit up for the whole 30 s, but only for `.txt`.
    let env = lsp_env_with(silent_server(), "");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_write",
        r#"{"path":"b.md","contents":"ERROR\n"}"#,
    )]));
    env.server.push(openai::text_stream(&["Written."]));
    let started = Instant::now();
    env.loki()
        .env("LOKI_LSP_DIAGNOSTICS_TIMEOUT", "30")
        .args(["--yolo", "write b.md"])
        .assert()
        .success();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert_eq!(last_results(&env), ["wrote 6 bytes to b.md"]);
    // No server configured at all: the same.
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: all\nload_tools_after: 0\n{cfg}"));
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_write",
        r#"{"path":"a.txt","contents":"ERROR\n"}"#,
    )]));
    env.server.push(openai::text_stream(&["Written."]));
    let started = Instant::now();
    env.loki()
        .env("LOKI_LSP_DIAGNOSTICS_TIMEOUT", "30")
        .args(["--yolo", "write a.txt"])
        .assert()
        .success();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert_eq!(last_results(&env), ["wrote 6 bytes to a.txt"]);
}

#[test]
fn a_timeout_of_zero_turns_diagnostics_after_edits_off() {
    let (env, log) = fake_env();
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_write",
        r#"{"path":"a.txt","contents":"ERROR\n"}"#,
    )]));
    env.server.push(openai::text_stream(&["Written."]));
    loki(&env, &log)
        .env("LOKI_LSP_DIAGNOSTICS_TIMEOUT", "0")
        .args(["--yolo", "write a.txt"])
        .assert()
        .success();
    assert_eq!(last_results(&env), ["wrote 6 bytes to a.txt"]);
    assert!(!log.exists(), "a language server started");
}
