//! The workspace and long-term memory end to end: identity files and recalled memory in
//! the system prompt, `memory__remember`, the memory flush before compaction (accepted
//! and declined in a PTY, skipped when no one can review it), `small_model`, a failed
//! summary, `load_tools`, `.context`, `.memory` and `.otr`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use crate::common::TestEnv;
use crate::common::fake_llm::{Recorded, openai};
use crate::common::pty::Pty;
use crate::common::tool_names;

/// The first message of a request when it is the system prompt.
fn system_of(body: &Value) -> String {
    let first = &body["messages"][0];
    if first["role"] == "system" {
        first["content"].as_str().unwrap_or_default().to_string()
    } else {
        String::new()
    }
}

fn last_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

fn is_extraction(req: &Recorded) -> bool {
    last_text(&req.json()).contains("durable facts")
}

fn is_summary(req: &Recorded) -> bool {
    last_text(&req.json()).starts_with("Summarize the discussion")
}

fn with_config(env: &TestEnv, extra: &str) {
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("{extra}\n{cfg}"));
}

#[test]
fn identity_files_and_the_relevant_memory_entry_reach_the_system_prompt() {
    let env = TestEnv::new();
    let ws = env.config_dir().join("workspace");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("IDENTITY.md"), "You are Ferris, a crab.").unwrap();
    std::fs::write(ws.join("SOUL.md"), "Never run rm -rf.").unwrap();
    std::fs::write(ws.join("USER.md"), "The user is called Ada.").unwrap();
    let mut memory = String::from("# Memory\n\n## Facts\n\n");
    for i in 0..1000 {
        memory.push_str(&format!("- build {i} used toolchain {i} on runner {i}\n"));
    }
    memory.push_str("- the user's cat is called Marmalade\n");
    std::fs::write(ws.join("MEMORY.md"), memory).unwrap();
    env.server.push(openai::text_stream(&["Marmalade."]));
    env.loki()
        .args(["what is my cat called?"])
        .assert()
        .success();
    let body = env.server.last_request().json();
    let system = system_of(&body);
    assert!(
        system.contains("# Your Identity\nYou are Ferris"),
        "{system}"
    );
    assert!(
        system.contains("# Core Guardrails\nThese are non-negotiable"),
        "{system}"
    );
    assert!(system.contains("Never run rm -rf."), "{system}");
    assert!(
        system.contains("# User Profile\nThe user is called Ada."),
        "{system}"
    );
    assert!(
        system.contains("[MEMORY]") && system.contains("[/MEMORY]"),
        "{system}"
    );
    assert!(system.contains("Marmalade"), "{system}");
    // Top-k of a thousand entries: the prompt stays small.
    assert!(
        system.len() < 3000,
        "{} bytes of system prompt",
        system.len()
    );

    // memory: false leaves all of it out.
    with_config(&env, "memory: false");
    env.server.push(openai::text_stream(&["?"]));
    env.loki()
        .args(["what is my cat called?"])
        .assert()
        .success();
    assert!(!env.server.last_request().body_str().contains("Marmalade"));
}

#[test]
fn remembered_facts_are_dated_private_and_recalled_later() {
    let env = TestEnv::new();
    with_config(&env, "enabled_tools: all");
    // Without a workspace the memory tools are not offered.
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().args(["hello"]).assert().success();
    let names = tool_names(&env.server.last_request().json());
    assert!(
        !names.iter().any(|n| n.starts_with("memory__")),
        "{names:?}"
    );
    std::fs::create_dir_all(env.config_dir().join("workspace")).unwrap();
    env.server.push(openai::tool_call_stream(&[(
        "r1",
        "memory__remember",
        r#"{"fact":"The user drinks green tea."}"#,
    )]));
    env.server.push(openai::text_stream(&["Not noted."]));
    // Writing to memory is approved like a file write: without a terminal or --yolo it
    // is refused, and nothing reaches MEMORY.md.
    let out = env
        .loki()
        .args([
            "--output-format",
            "stream-json",
            "remember that I drink green tea",
        ])
        .assert()
        .success();
    let asked = crate::common::stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "tool_call_approval_requested")
        .expect("the write is asked about");
    assert_eq!(asked["preview"], "The user drinks green tea.", "{asked}");
    let file = env.config_dir().join("workspace/MEMORY.md");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap_or_default()
            .find("green tea")
            .is_none()
    );
    env.server.push(openai::tool_call_stream(&[(
        "r1",
        "memory__remember",
        r#"{"fact":"The user drinks green tea."}"#,
    )]));
    env.server.push(openai::text_stream(&["Noted."]));
    env.loki()
        .args(["--yolo", "remember that I drink green tea"])
        .assert()
        .success();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\n- The user drinks green tea.\n"), "{text}");
    assert!(text.contains("\n## 20"), "dated heading: {text}");
    crate::common::assert_private(&file);
    env.server.push(openai::text_stream(&["Green tea."]));
    env.loki()
        .args(["which tea do I drink?"])
        .assert()
        .success();
    assert!(system_of(&env.server.last_request().json()).contains("green tea"));

    // Off the record the model cannot write memory.
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().args(["--otr", "hello"]).assert().success();
    let names = tool_names(&env.server.last_request().json());
    assert!(!names.iter().any(|n| n == "memory__remember"), "{names:?}");
    assert!(names.iter().any(|n| n == "memory__search"), "{names:?}");
}

/// A model for compaction tests: extraction answers `facts`, summaries a fixed text,
/// anything else a short answer.
fn compacting_model(env: &TestEnv, facts: &'static str) {
    env.server.respond_for("/v1/chat", move |req| {
        if is_extraction(req) {
            openai::text_json(facts)
        } else if is_summary(req) {
            openai::text_json("They talked about pets.")
        } else {
            openai::text_stream(&["Nice to know."])
        }
    });
}

fn long_line(topic: &str) -> String {
    format!("{topic} {}", "and more words about it ".repeat(40))
}

#[test]
fn the_memory_flush_is_written_only_after_the_diff_is_accepted() {
    for accept in [true, false] {
        let env = TestEnv::new();
        with_config(&env, "compression_threshold: 300\nsave_session: true");
        std::fs::create_dir_all(env.config_dir().join("workspace")).unwrap();
        compacting_model(
            &env,
            "- The user's dog is called Rex.\n- The user lives in Lyon.",
        );
        let mut pty = Pty::spawn(&env, &["-s", "pets"], &[("NO_COLOR", "1")]);
        pty.expect("pets) ");
        for topic in ["my dog Rex", "my garden"] {
            pty.send(&long_line(topic));
            pty.send("\r");
            pty.expect("Nice to know.");
            pty.expect("pets) ");
        }
        pty.send(&long_line("I live in Lyon"));
        pty.send("\r");
        let shown = pty.expect("Run it?");
        assert!(
            shown.contains("+- The user's dog is called Rex."),
            "{shown}"
        );
        assert!(shown.contains("+## Auto-captured"), "{shown}");
        assert!(shown.contains("memory wants to append 2 facts"), "{shown}");
        if accept {
            pty.send("\r");
        } else {
            pty.send("\x1b[B\r");
        }
        pty.expect("session compressed");
        pty.expect("pets) ");
        pty.send(".exit\r");
        pty.exit_code();
        let file = env.config_dir().join("workspace/MEMORY.md");
        if accept {
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(text.contains("- The user lives in Lyon."), "{text}");
            crate::common::assert_private(&file);
        } else {
            assert!(!file.exists(), "declined, yet written");
        }
    }
}

#[test]
fn without_a_reviewer_the_flush_is_skipped_and_always_writes_unasked() {
    let env = TestEnv::new();
    with_config(&env, "compression_threshold: 300");
    std::fs::create_dir_all(env.config_dir().join("workspace")).unwrap();
    compacting_model(&env, "- The user's dog is called Rex.");
    for topic in ["my dog Rex", "my garden", "my bike"] {
        env.loki()
            .args(["-s", "pets", &long_line(topic)])
            .assert()
            .success();
    }
    let requests = env.server.requests();
    assert!(requests.iter().any(is_summary), "compaction happened");
    assert!(
        !requests.iter().any(is_extraction),
        "no one could review: no extraction"
    );
    assert!(!env.config_dir().join("workspace/MEMORY.md").exists());

    let env = TestEnv::new();
    with_config(&env, "compression_threshold: 300\nmemory_flush: always");
    std::fs::create_dir_all(env.config_dir().join("workspace")).unwrap();
    compacting_model(&env, "- The user's dog is called Rex.");
    for topic in ["my dog Rex", "my garden", "my bike"] {
        env.loki()
            .args(["-s", "pets", &long_line(topic)])
            .assert()
            .success();
    }
    let text = std::fs::read_to_string(env.config_dir().join("workspace/MEMORY.md")).unwrap();
    assert!(text.contains("- The user's dog is called Rex."), "{text}");
}

#[test]
fn small_model_answers_titles_summaries_and_extraction() {
    let env = TestEnv::new();
    with_config(
        &env,
        "compression_threshold: 300\nmemory_flush: always\nsmall_model: fake:text-only",
    );
    std::fs::create_dir_all(env.config_dir().join("workspace")).unwrap();
    compacting_model(&env, "- The user has a dog.");
    for topic in ["my dog Rex", "my garden", "my bike"] {
        env.loki()
            .args(["-s", "pets", &long_line(topic)])
            .assert()
            .success();
    }
    let requests = env.server.requests();
    let model_of = |r: &Recorded| r.json()["model"].as_str().unwrap_or_default().to_string();
    let side: Vec<String> = requests
        .iter()
        .filter(|r| is_summary(r) || is_extraction(r))
        .map(model_of)
        .collect();
    assert!(side.len() >= 2, "{side:?}");
    assert!(side.iter().all(|m| m == "text-only"), "{side:?}");
    let turns: Vec<String> = requests
        .iter()
        .filter(|r| !is_summary(r) && !is_extraction(r))
        .map(model_of)
        .collect();
    assert!(turns.iter().all(|m| m == "gpt-4o-mini"), "{turns:?}");
}

#[test]
fn a_failed_summary_keeps_the_session_and_sets_old_messages_aside_only_when_full() {
    // No known window: the session stays whole, to be summarised after a later turn.
    let env = TestEnv::new();
    with_config(&env, "compression_threshold: 300\nmemory: false");
    let failing = |env: &TestEnv| {
        env.server.respond_for("/v1/chat", move |req| {
            if is_summary(req) {
                openai::error(400, "summaries are broken today", "invalid_request_error")
            } else {
                openai::text_stream(&["Answered."])
            }
        });
    };
    failing(&env);
    let mut last = None;
    for topic in ["first", "middle", "last"] {
        last = Some(
            env.loki()
                .args(["-s", "keep", &long_line(topic)])
                .assert()
                .success()
                .stdout(predicates::str::contains("Answered.")),
        );
    }
    let err = crate::common::stderr(&last.unwrap());
    assert!(err.contains("it is kept whole"), "{err}");
    let session = std::fs::read_to_string(env.session_file("keep")).unwrap();
    let saved: serde_yaml::Value = serde_yaml::from_str(&session).unwrap();
    assert_eq!(
        saved["messages"].as_sequence().unwrap().len(),
        6,
        "{session}"
    );

    // A window the history no longer fits: the older messages are set aside, unsent,
    // and the last exchange goes on.
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap().replace(
        "      - name: text-only\n",
        "      - name: text-only\n        max_input_tokens: 900\n",
    );
    env.write_config(&format!("compression_threshold: 300\nmemory: false\n{cfg}"));
    failing(&env);
    let mut last = None;
    for topic in ["first", "middle", "last"] {
        last = Some(
            env.loki()
                .args(["-m", "fake:text-only", "-s", "keep", &long_line(topic)])
                .assert()
                .success(),
        );
    }
    let err = crate::common::stderr(&last.unwrap());
    assert!(err.contains("older ones stay in the session file"), "{err}");
    let session = std::fs::read_to_string(env.session_file("keep")).unwrap();
    let saved: serde_yaml::Value = serde_yaml::from_str(&session).unwrap();
    // The last exchange goes on; the two before it are set aside, nothing is lost.
    assert_eq!(
        saved["messages"].as_sequence().unwrap().len(),
        2,
        "{session}"
    );
    let aside = saved["compressed_messages"].as_sequence().unwrap().len();
    assert_eq!(aside, 4, "{session}");
    for topic in ["first and more", "middle and more", "last and more"] {
        assert!(session.contains(topic), "{topic} lost: {session}");
    }
}

#[test]
fn large_tool_sets_are_loaded_by_group_and_the_session_remembers() {
    let env = TestEnv::new();
    with_config(&env, "enabled_tools: all\nload_tools_after: 8");
    let step = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&step);
    env.server.respond_for("/v1/chat", move |_req| {
        match counter.fetch_add(1, Ordering::SeqCst) {
            0 => openai::tool_call_stream(&[("l1", "load_tools", r#"{"groups":["files"]}"#)]),
            1 => openai::tool_call_stream(&[(
                "w1",
                "fs_write",
                r#"{"path":"out.txt","contents":"written"}"#,
            )]),
            _ => openai::text_stream(&["Done."]),
        }
    });
    env.loki()
        .args(["--yolo", "-s", "tools", "write out.txt"])
        .assert()
        .success();
    let requests = env.server.requests();
    let first = tool_names(&requests[0].json());
    assert!(first.contains(&"load_tools".to_string()), "{first:?}");
    assert!(first.contains(&"fs_cat".to_string()), "{first:?}");
    assert!(!first.contains(&"fs_write".to_string()), "{first:?}");
    let load = requests[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "load_tools")
        .unwrap()["function"]["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        load.contains("files (fs_write, fs_patch, fs_edit, fs_mkdir, fs_rm)"),
        "{load}"
    );
    let second = tool_names(&requests[1].json());
    assert!(second.contains(&"fs_write".to_string()), "{second:?}");
    assert!(
        !second.contains(&"execute_command".to_string()),
        "{second:?}"
    );
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("out.txt")).unwrap(),
        "written"
    );
    // The next run of the session declares the loaded group from the start.
    env.loki().args(["-s", "tools", "again"]).assert().success();
    let next = tool_names(&env.server.last_request().json());
    assert!(next.contains(&"fs_write".to_string()), "{next:?}");

    // An unknown group is an error the model sees.
    let env = TestEnv::new();
    with_config(&env, "enabled_tools: all\nload_tools_after: 8");
    env.server.push(openai::tool_call_stream(&[(
        "l1",
        "load_tools",
        r#"{"groups":["nope"]}"#,
    )]));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().args(["x"]).assert().success();
    let body = env.server.last_request().body_str();
    assert!(body.contains("no tool group `nope`"), "{body}");
}

#[test]
fn the_repl_shows_the_context_and_the_memory_and_goes_off_the_record() {
    let env = TestEnv::new();
    with_config(&env, "enabled_tools: all\nsave_session: false");
    let ws = env.config_dir().join("workspace");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("USER.md"), "The user is called Ada.").unwrap();
    std::fs::write(
        ws.join("MEMORY.md"),
        "## Facts\n\n- the user's cat is called Marmalade\n- the user likes jazz\n",
    )
    .unwrap();
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("mini)> ");
    pty.send(".context\r");
    let shown = pty.expect("history (0 messages)");
    assert!(shown.contains("workspace files"), "{shown}");
    // 14 built-ins, 2 memory tools and the 4 questions of the REPL.
    assert!(shown.contains("tools (20 declared)"), "{shown}");
    pty.expect("mini)> ");
    pty.send(".memory\r");
    let shown = pty.expect("memory_top_k");
    assert!(shown.contains("MEMORY.md holds 2 entries"), "{shown}");
    pty.expect("mini)> ");
    pty.send(".memory search cat\r");
    pty.expect("Marmalade");
    pty.expect("mini)> ");

    // Off the record: nothing typed reaches history.txt, and no writing tools.
    pty.send(".otr\r");
    pty.expect("off the record");
    pty.expect("mini)> ");
    env.server.push(openai::text_stream(&["quietly"]));
    pty.send("a very private question\r");
    pty.expect("quietly");
    pty.expect("mini)> ");
    pty.send(".exit\r");
    pty.exit_code();
    let history = std::fs::read_to_string(env.config_dir().join("history.txt")).unwrap_or_default();
    assert!(history.contains(".memory search cat"), "{history}");
    assert!(!history.contains("very private"), "{history}");
    let names = tool_names(&env.server.last_request().json());
    assert!(
        !names
            .iter()
            .any(|n| n == "fs_write" || n == "memory__remember"),
        "{names:?}"
    );
}

#[test]
fn a_session_is_compacted_at_a_share_of_the_input_window() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap().replace(
        "      - name: text-only\n",
        "      - name: text-only\n        max_input_tokens: 2000\n",
    );
    // A threshold far away: only the window share (70 % of 2000 tokens) can trigger it.
    env.write_config(&format!(
        "compression_threshold: 100000\nmemory: false\n{cfg}"
    ));
    compacting_model(&env, "NONE");
    let mut summaries_after = Vec::new();
    for turn in 0..6 {
        env.loki()
            .args([
                "-m",
                "fake:text-only",
                "-s",
                "window",
                &long_line(&format!("turn {turn}")),
            ])
            .assert()
            .success();
        summaries_after.push(
            env.server
                .requests()
                .iter()
                .filter(|r| is_summary(r))
                .count(),
        );
    }
    // About 250 tokens a turn: past 1400 tokens by the sixth turn, not before the fourth.
    assert_eq!(summaries_after[..3], [0, 0, 0], "{summaries_after:?}");
    assert!(summaries_after[5] >= 1, "{summaries_after:?}");
}

#[test]
fn a_headless_run_reviews_the_memory_flush_over_stream_json() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let env = TestEnv::new();
    with_config(&env, "compression_threshold: 300");
    std::fs::create_dir_all(env.config_dir().join("workspace")).unwrap();
    compacting_model(&env, "- The user's dog is called Rex.");
    let mut child = env
        .loki_std()
        .args([
            "-s",
            "pets",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for topic in ["my dog Rex", "my garden", "my bike"] {
        let line = serde_json::json!({"type": "user", "message": {"role": "user", "content": long_line(topic)}});
        writeln!(stdin, "{line}").unwrap();
    }
    let asked = loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "no approval asked"
        );
        let event: Value = serde_json::from_str(line.trim_end()).unwrap();
        if event["type"] == "tool_call_approval_requested" {
            break event;
        }
    };
    assert_eq!(asked["name"], "memory", "{asked}");
    let preview = asked["preview"].as_str().unwrap_or_default();
    assert!(
        preview.contains("+- The user's dog is called Rex."),
        "{asked}"
    );
    let answer =
        serde_json::json!({"type": "approval", "call_id": asked["call_id"], "decision": "allow"});
    writeln!(stdin, "{answer}").unwrap();
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert!(child.wait().unwrap().success(), "{rest}");
    let text = std::fs::read_to_string(env.config_dir().join("workspace/MEMORY.md")).unwrap();
    assert!(text.contains("- The user's dog is called Rex."), "{text}");
}
