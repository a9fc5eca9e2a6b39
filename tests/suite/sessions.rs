//! Sessions: conversations that persist across invocations and REPL turns.

use serde_json::json;

use crate::common::fake_llm::openai;
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr, stdout};

fn session_file(env: &TestEnv, name: &str) -> std::path::PathBuf {
    env.session_file(name)
}

#[test]
fn a_named_session_carries_the_conversation_across_invocations() {
    let env = TestEnv::new();
    env.server
        .push(openai::text_stream(&["Nice to meet you, Ada."]));
    env.server.push(openai::text_stream(&["Your name is Ada."]));
    env.loki()
        .args(["-s", "intro", "-m", "fake:text-only", "my name is Ada"])
        .assert()
        .success();
    let file = std::fs::read_to_string(session_file(&env, "intro")).unwrap();
    assert!(
        file.contains("model: fake:text-only") && file.contains("Nice to meet you, Ada."),
        "{file}"
    );
    crate::common::assert_private(&session_file(&env, "intro"));

    let out = env
        .loki()
        .args(["-s", "intro", "what is my name?"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "Your name is Ada.\n");
    let body = env.server.last_request().json();
    assert_eq!(body["model"], "text-only", "the session keeps its model");
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "my name is Ada"},
            {"role": "assistant", "content": "Nice to meet you, Ada."},
            {"role": "user", "content": "what is my name?"}
        ])
    );
    let out = env.loki().arg("--list-sessions").assert().success();
    assert_eq!(stdout(&out), "intro\n");
}

#[test]
fn empty_session_clears_the_history() {
    let env = TestEnv::new();
    env.loki().args(["-s", "s1", "first"]).assert().success();
    env.loki()
        .args(["-s", "s1", "--empty-session", "again"])
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([{"role": "user", "content": "again"}])
    );
    let out = env.loki().args(["--empty-session", "x"]).assert().code(2);
    assert!(
        stderr(&out).contains("were not provided: --session"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn empty_session_keeps_the_file_in_a_dry_run_and_when_the_turn_fails() {
    let env = TestEnv::new();
    env.loki().args(["-s", "keep", "one"]).assert().success();
    let before = std::fs::read_to_string(session_file(&env, "keep")).unwrap();
    // A dry run contacts nobody and keeps nothing, not even the emptying.
    env.loki()
        .args(["-s", "keep", "--empty-session", "--dry-run", "preview"])
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(session_file(&env, "keep")).unwrap(),
        before
    );
    // A turn that fails before any text arrives leaves the file as it was, emptied or not.
    env.server
        .set_default(openai::error(500, "boom", "server_error"));
    env.loki()
        .args(["-s", "keep", "--empty-session", "two"])
        .assert()
        .code(1);
    assert_eq!(
        std::fs::read_to_string(session_file(&env, "keep")).unwrap(),
        before
    );
}

#[test]
fn a_model_asked_for_wins_over_a_role_whose_model_is_not_configured() {
    let env = TestEnv::new();
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(
        roles.join("elsewhere.md"),
        "---\nmodel: nosuch:m\n---\nBe brief.\n",
    )
    .unwrap();
    env.server.push(openai::text_stream(&["short"]));
    let out = env
        .loki()
        .args(["-r", "elsewhere", "-m", "fake:gpt-4o-mini", "hi"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "short\n");
    let sent = env.server.last_request().json();
    assert_eq!(sent["messages"][0]["content"], "Be brief.", "{sent}");
    // Without `-m` the role's model is the one asked for: its error says why.
    let out = env.loki().args(["-r", "elsewhere", "hi"]).assert().code(1);
    assert!(stderr(&out).contains("nosuch"), "{}", stderr(&out));
}

#[test]
fn code_with_a_dry_run_prints_the_request_not_a_code_block_of_it() {
    let env = TestEnv::new();
    let out = env
        .loki()
        .args(["-c", "--dry-run", "fib in python"])
        .assert()
        .success();
    assert!(stdout(&out).contains("fib in python"), "{}", stdout(&out));
    assert!(env.server.requests().is_empty());
}

#[test]
fn temp_sessions_and_save_session_false_are_not_written() {
    let env = TestEnv::new();
    env.loki().args(["-s", "--", "hello"]).assert().success();
    assert!(
        !env.config_dir().join("sessions").exists(),
        "nothing written"
    );
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("save_session: false\n{cfg}"));
    env.loki()
        .args(["-s", "kept-out", "hello"])
        .assert()
        .success();
    assert!(!session_file(&env, "kept-out").exists());
    env.loki()
        .args(["-s", "kept-out", "--save-session", "hello"])
        .assert()
        .success();
    assert!(session_file(&env, "kept-out").exists());
}

#[test]
fn a_corrupt_session_file_is_reported_and_never_overwritten() {
    let env = TestEnv::new();
    let path = env.config_dir().join("sessions/broken.yaml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let original = "messages: [\n  - role: user\n    content: unterminated\n";
    std::fs::write(&path, original).unwrap();
    let out = env.loki().args(["-s", "broken", "hi"]).assert().code(1);
    let err = stderr(&out);
    assert!(
        err.contains("broken.yaml:") && err.contains("not changed"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    assert!(env.server.requests().is_empty());
}

#[test]
fn a_failed_turn_leaves_the_session_file_as_it_was() {
    let env = TestEnv::new();
    env.loki().args(["-s", "steady", "one"]).assert().success();
    let before = std::fs::read_to_string(session_file(&env, "steady")).unwrap();
    env.server
        .set_default(openai::error(500, "boom", "server_error"));
    env.loki().args(["-s", "steady", "two"]).assert().code(1);
    assert_eq!(
        std::fs::read_to_string(session_file(&env, "steady")).unwrap(),
        before
    );
}

#[test]
fn invalid_session_names_are_refused() {
    let env = TestEnv::new();
    let out = env.loki().args(["-s", "../escape", "hi"]).assert().code(1);
    assert!(
        stderr(&out).contains("invalid session name"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn repl_sessions_open_save_and_resume() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("save_session: true\n{cfg}"));
    env.server.push(openai::text_stream(&["noted"]));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("fake:gpt-4o-mini)> ");
    pty.send(".session notes\r");
    pty.expect("session: notes (new)");
    pty.expect("fake:gpt-4o-mini)notes) ");
    pty.send("remember 42\r");
    pty.expect("noted");
    pty.expect("notes) ");
    pty.send(".info session\r");
    pty.expect("remember 42");
    // Exact o200k count of both messages, plus 4 per message.
    pty.expect("13 tokens (exact)");
    pty.expect("notes) ");
    pty.send(".exit session\r");
    pty.expect("saved");
    pty.expect("fake:gpt-4o-mini)> ");
    pty.send(".exit\r");
    pty.read_to_end();
    let file = std::fs::read_to_string(session_file(&env, "notes")).unwrap();
    assert!(
        file.contains("remember 42") && file.contains("noted"),
        "{file}"
    );

    // Resumed from the command line.
    env.loki()
        .args(["-s", "notes", "what number?"])
        .assert()
        .success();
    let messages = env.server.last_request().json()["messages"].clone();
    assert_eq!(messages[0]["content"], "remember 42");
    assert_eq!(messages[2]["content"], "what number?");
}

#[test]
fn save_true_appends_one_shot_exchanges_to_messages_md() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("save: true\n{cfg}"));
    env.loki().args(["remember", "this"]).assert().success();
    let log = env.dir.path().join("cache/loki/messages.md");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("# CHAT: remember this ["), "{text}");
    assert!(
        text.contains("\nremember this\n--------\nHello from fake\n--------\n"),
        "{text}"
    );
    // Session exchanges go to the session, not to messages.md.
    env.loki()
        .args(["-s", "s", "in a session"])
        .assert()
        .success();
    assert!(
        !std::fs::read_to_string(&log)
            .unwrap()
            .contains("in a session")
    );
}

#[test]
fn cmd_prelude_opens_a_session_and_role() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("cmd_prelude: 'daily:summarize'\n{cfg}"));
    env.loki().arg("first").assert().success();
    assert_eq!(
        env.server.last_request().json()["messages"][0]["role"],
        "system"
    );
    assert!(session_file(&env, "daily").exists());
    env.loki().arg("second").assert().success();
    let messages = env.server.last_request().json()["messages"].clone();
    assert_eq!(messages[1]["content"], "first");
    // An explicit role on the command line skips the prelude.
    env.loki()
        .args(["--prompt", "p", "third"])
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().json()["messages"][0]["content"],
        "p"
    );
    env.write_config(&format!("cmd_prelude: 'nonsense'\n{cfg}"));
    let out = env.loki().arg("x").assert().code(1);
    assert!(
        stderr(&out).contains("invalid prelude `nonsense`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn long_sessions_are_compressed_with_the_summarization_prompt() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "compression_threshold: 200\nsummarization_prompt: 'Summarise, please.'\n{cfg}"
    ));
    let long = "lorem ipsum dolor sit amet ".repeat(20);
    for i in 0..2 {
        env.server.push_for(
            "/v1/chat",
            openai::text_stream(&[&format!("answer {i} {long}")]),
        );
        env.loki()
            .args(["-s", "big", &format!("question {i}")])
            .assert()
            .success();
    }
    // Four messages of ~150 tokens each: the threshold is passed, but four messages are
    // the recent tail that is always kept. The third exchange makes six: compressed.
    assert!(
        !std::fs::read_to_string(session_file(&env, "big"))
            .unwrap()
            .contains("compressed_messages")
    );
    env.server
        .push_for("/v1/chat", openai::text_stream(&["answer 2"]));
    env.server
        .push_for("/v1/chat", openai::text_json("They discussed lorem ipsum."));
    let out = env
        .loki()
        .args(["-s", "big", "question 2"])
        .assert()
        .success();
    assert!(
        stderr(&out).contains("compressing the session"),
        "{}",
        stderr(&out)
    );
    let requests = env.server.requests();
    let summary_request = requests.last().unwrap().json();
    let messages = summary_request["messages"].as_array().unwrap().clone();
    assert_eq!(messages.last().unwrap()["content"], "Summarise, please.");
    assert_eq!(summary_request.get("stream"), None);

    let file = std::fs::read_to_string(session_file(&env, "big")).unwrap();
    assert!(file.contains("compressed_messages:"), "{file}");
    assert!(
        file.contains(
            "This is a summary of the chat history as a recap: They discussed lorem ipsum."
        ),
        "{file}"
    );

    // The next turn sends the summary plus the recent tail, not the old messages.
    env.server
        .push_for("/v1/chat", openai::text_stream(&["ok"]));
    env.loki()
        .args(["-s", "big", "question 4"])
        .assert()
        .success();
    let sent = env.server.last_request().json()["messages"].clone();
    assert_eq!(sent[0]["role"], "system");
    assert!(!sent.to_string().contains("question 0"), "{sent}");
    assert!(
        sent.to_string().contains("question 2"),
        "the recent tail is kept: {sent}"
    );
}

#[test]
fn loki_session_files_are_adopted_and_left_in_place() {
    let env = TestEnv::new();
    let legacy = "model: fake:text-only\nmessages:\n- role: user\n  content: my name is Ada\n- role: assistant\n  content: Hi Ada.\n";
    let path = env.config_dir().join("sessions/old.yaml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, legacy).unwrap();
    let out = env.loki().arg("--list-sessions").assert().success();
    assert_eq!(stdout(&out), "old\n");

    env.server.push(openai::text_stream(&["Ada."]));
    env.loki()
        .args(["-s", "old", "my name?"])
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().json()["messages"][1]["content"],
        "Hi Ada."
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), legacy);
    let state = std::fs::read_to_string(env.session_file("old")).unwrap();
    assert!(
        state.contains("my name?") && state.contains("Ada."),
        "{state}"
    );
    let out = env.loki().arg("--list-sessions").assert().success();
    assert_eq!(stdout(&out), "old\n", "listed once");

    // The id works wherever a name does.
    let id = std::fs::read_to_string(env.config_dir().join("sessions/by-name/old")).unwrap();
    env.loki()
        .args(["-s", id.trim(), "again"])
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().json()["messages"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn saved_temporary_sessions_are_named_by_the_create_title_role() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("save_session: true\n{cfg}"));
    env.server.push(openai::text_stream(&["Use `rustup`."]));
    env.server
        .push(openai::text_stream(&["\"Installing Rust: the easy way.\""]));
    env.loki()
        .args(["-s", "--", "how do I install rust?"])
        .assert()
        .success();
    let title_request = env.server.last_request().json();
    assert!(
        title_request["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("title"),
        "{title_request}"
    );
    assert_eq!(
        title_request["messages"][1]["content"],
        "how do I install rust?"
    );
    let out = env.loki().arg("--list-sessions").assert().success();
    let listed = stdout(&out);
    let name = listed.trim();
    assert!(
        name.starts_with("_/20") && name.ends_with("-installing-rust-the-easy-way"),
        "{listed}"
    );
    let state = std::fs::read_to_string(env.session_file(name)).unwrap();
    assert!(state.contains("Use `rustup`."), "{state}");

    // Without save_session the temporary session is only kept on request.
    env.write_config(&cfg);
    env.server.push(openai::text_stream(&["Sure."]));
    env.server
        .set_default(openai::error(500, "no titles today", "server_error"));
    let out = env
        .loki()
        .args(["-s", "--save-session", "--", "another"])
        .assert()
        .success();
    assert!(
        stderr(&out).contains("could not name the session"),
        "{}",
        stderr(&out)
    );
    let out = env.loki().arg("--list-sessions").assert().success();
    assert_eq!(stdout(&out).lines().count(), 2, "{}", stdout(&out));
}

#[test]
fn sessions_keep_token_usage_and_cost() {
    let env = TestEnv::new();
    env.server
        .push(openai::text_stream_with_usage(&["One."], 1000, 500));
    env.server
        .push(openai::text_stream_with_usage(&["Two."], 3000, 250));
    for prompt in ["first", "second"] {
        env.loki()
            .args(["-s", "costly", "-m", "fake:priced", prompt])
            .assert()
            .success();
    }
    let file = std::fs::read_to_string(session_file(&env, "costly")).unwrap();
    let session: serde_yaml::Value = serde_yaml::from_str(&file).unwrap();
    let usage = &session["usage"];
    assert_eq!(usage["turns"].as_u64(), Some(2), "{file}");
    assert_eq!(usage["input_tokens"].as_u64(), Some(4000));
    assert_eq!(usage["output_tokens"].as_u64(), Some(750));
    // 4000 × $2/M + 750 × $8/M
    let cost = usage["cost"].as_f64().unwrap();
    assert!((cost - 0.014).abs() < 1e-9, "{cost}");
}

/// `-C` continues the newest session started in this directory (not a newer one started
/// elsewhere); `--search-sessions` finds a session by a word in it; `--export-session`
/// writes one as Markdown or JSON; `.sessions search` does the search in the REPL.
#[test]
fn continue_here_search_and_export() {
    let env = TestEnv::new();
    env.server.respond_for("/v1/chat", |_| {
        crate::common::fake_llm::openai::text_stream(&["noted"])
    });
    let elsewhere = env.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    env.loki()
        .args(["-s", "alpha", "hello about zebras"])
        .assert()
        .success();
    env.loki()
        .current_dir(&elsewhere)
        .args(["-s", "beta", "something else"])
        .assert()
        .success();
    env.loki().args(["-C", "and now?"]).assert().success();
    let sent = env.server.last_request().json().to_string();
    assert!(sent.contains("hello about zebras"), "{sent}");
    assert!(!sent.contains("something else"), "{sent}");
    let empty = env.root().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = env
        .loki()
        .current_dir(&empty)
        .args(["-C", "hi"])
        .assert()
        .failure();
    assert!(
        stderr(&out).contains("no session was started in"),
        "{}",
        stderr(&out)
    );

    let out = env
        .loki()
        .args(["--search-sessions", "ZEBRA"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "alpha: hello about zebras\n");

    let md = stdout(
        &env.loki()
            .args(["--export-session", "alpha"])
            .assert()
            .success(),
    );
    assert!(md.starts_with("# Session alpha"), "{md}");
    assert!(
        md.contains("## User\n\nhello about zebras") && md.contains("## Assistant\n\nnoted"),
        "{md}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(
        &env.loki()
            .args(["--export-session", "alpha", "--format", "json"])
            .assert()
            .success(),
    ))
    .unwrap();
    assert_eq!(json["messages"][0]["content"], "hello about zebras");
    let out = env
        .loki()
        .args(["--export-session", "nope"])
        .assert()
        .failure();
    assert!(
        stderr(&out).contains("no session `nope`"),
        "{}",
        stderr(&out)
    );

    let mut pty = crate::common::pty::Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("mini)> ");
    pty.send(".sessions search zebra\r");
    pty.expect("alpha: hello about zebras");
    pty.expect("mini)> ");
    pty.send(".exit\r");
    pty.read_to_end();
}
