//! Issue 54, item 1: history by default. Every conversation is kept as an autonamed
//! session (`_/<timestamp>-<first words>`) unless off the record or `save_session:
//! false`; `-C` continues the latest of this directory; `--resume` picks one; agents'
//! sessions are listed, searched and continued too; the history is bounded, oldest
//! autonamed first.

use crate::common::fake_llm::openai;
use crate::common::{TestEnv, default_config, stderr, stdout};

/// An environment on the standard config with `extra` top-level keys in front, whose
/// model always answers `noted`.
fn env_with(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write_config(&format!(
        "{extra}{}",
        default_config(&env.server.base_url())
    ));
    env.server
        .respond_for("/v1/chat", |_| openai::text_stream(&["noted"]));
    env
}

/// `--list-sessions`, one name a line.
fn listed(env: &TestEnv) -> Vec<String> {
    let out = env.loki().arg("--list-sessions").assert().success();
    stdout(&out).lines().map(str::to_string).collect()
}

/// Every file under the sessions directory.
fn session_files(env: &TestEnv) -> Vec<String> {
    crate::common::tree(&env.config_dir().join("sessions"))
        .into_iter()
        .map(|(path, _)| path)
        .collect()
}

#[test]
fn a_plain_run_is_kept_and_continued_in_its_directory_only() {
    let env = env_with("");
    env.loki().arg("what about zebras").assert().success();
    let names = listed(&env);
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(
        names[0].starts_with("_/") && names[0].ends_with("-what-about-zebras"),
        "{names:?}"
    );

    env.loki().args(["-C", "again"]).assert().success();
    let sent = env.server.last_request().json().to_string();
    assert!(
        sent.contains("what about zebras") && sent.contains("noted"),
        "{sent}"
    );
    // Continuing appends to the same session rather than starting another.
    assert_eq!(listed(&env), names);

    let elsewhere = env.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let out = env
        .loki()
        .current_dir(&elsewhere)
        .args(["-C", "hi"])
        .assert()
        .failure();
    assert!(
        stderr(&out).contains("no session was started in"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn off_the_record_and_save_session_false_keep_nothing() {
    let env = env_with("");
    env.loki()
        .args(["--otr", "secret plans"])
        .assert()
        .success();
    assert!(listed(&env).is_empty(), "{:?}", session_files(&env));

    let env = env_with("save_session: false\n");
    env.loki().arg("secret plans").assert().success();
    assert!(listed(&env).is_empty(), "{:?}", session_files(&env));

    // `history: false` is Loki's behaviour: only named sessions are kept.
    let env = env_with("");
    env.loki()
        .env("LOKI_HISTORY", "false")
        .arg("secret plans")
        .assert()
        .success();
    env.loki()
        .env("LOKI_HISTORY", "false")
        .args(["-s", "named", "kept"])
        .assert()
        .success();
    assert_eq!(listed(&env), ["named"]);
}

#[test]
fn the_bound_deletes_the_oldest_unnamed_sessions_and_keeps_named_ones() {
    let env = env_with("history_max_sessions: 2\n");
    env.loki().args(["-s", "keep", "first"]).assert().success();
    for prompt in ["one", "two", "three"] {
        env.loki().arg(prompt).assert().success();
        // Distinct modification times, so "oldest" is well defined.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let names = listed(&env);
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.contains(&"keep".to_string()), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with("-three")), "{names:?}");

    // From the environment too; a named session is never deleted, even over the bound.
    env.loki()
        .env("LOKI_HISTORY_MAX_SESSIONS", "1")
        .arg("four")
        .assert()
        .success();
    assert_eq!(listed(&env), ["keep"]);
}

#[test]
fn agent_sessions_are_listed_searched_exported_and_continued() {
    let env = env_with("");
    let dir = env.config_dir().join("agents/scribe");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.yaml"),
        "name: scribe\ndescription: Takes notes.\ninstructions: You take notes.\n",
    )
    .unwrap();
    env.loki()
        .args(["-a", "scribe", "note the giraffes"])
        .assert()
        .success();

    let names = listed(&env);
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].starts_with("scribe:_/"), "{names:?}");
    let own = stdout(
        &env.loki()
            .args(["-a", "scribe", "--list-sessions"])
            .assert()
            .success(),
    );
    assert!(
        own.starts_with("_/") && own.contains("note-the-giraffes"),
        "{own}"
    );

    let found = stdout(
        &env.loki()
            .args(["--search-sessions", "GIRAFFE"])
            .assert()
            .success(),
    );
    assert_eq!(found, format!("{}: note the giraffes\n", names[0]));
    let md = stdout(
        &env.loki()
            .args(["--export-session", &names[0]])
            .assert()
            .success(),
    );
    assert!(md.contains("note the giraffes"), "{md}");

    // `-C` finds it without `-a` and continues it with its agent.
    env.loki().args(["-C", "and the zebras"]).assert().success();
    let sent = env.server.last_request().json().to_string();
    assert!(
        sent.contains("You take notes") && sent.contains("note the giraffes"),
        "{sent}"
    );
}

#[test]
fn resume_picks_a_conversation_in_a_terminal_and_asks_for_a_name_without_one() {
    let env = env_with("");
    env.loki().arg("hello from the picker").assert().success();

    let out = env.loki().arg("--resume").assert().failure();
    assert!(stderr(&out).contains("--resume NAME"), "{}", stderr(&out));

    let mut pty = crate::common::pty::Pty::spawn(&env, &["--resume"], &[("NO_COLOR", "1")]);
    pty.expect("Resume which conversation?");
    pty.expect("hello from the picker");
    pty.send("\r");
    pty.expect("Ctrl-D to quit");
    pty.send("and then?\r");
    pty.expect("noted");
    pty.send(".exit\r");
    pty.read_to_end();
    let sent = env.server.last_request().json().to_string();
    assert!(
        sent.contains("hello from the picker") && sent.contains("and then?"),
        "{sent}"
    );
}
