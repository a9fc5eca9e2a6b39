//! Off the record (`--otr`): nothing is written — no session, no `messages.md`, no
//! history line, no log — and tools that write or run commands are not offered.

use crate::common::TestEnv;
use crate::common::fake_llm::openai;

fn recording_env() -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "save: true\nsave_session: true\ncmd_prelude: session:work\nrepl_prelude: session:work\nenabled_tools: all\n{cfg}"
    ));
    // First run: the built-ins are installed, the prelude's session written.
    env.server.push(openai::text_stream(&["warm"]));
    env.loki().args(["warm up"]).assert().success();
    env
}

#[test]
fn a_one_shot_run_off_the_record_writes_nothing_and_offers_no_writing_tools() {
    let env = recording_env();
    let before = crate::common::tree(env.root());
    env.server.push(openai::text_stream(&["secret answer"]));
    env.loki()
        .args(["--otr", "my secret question"])
        .assert()
        .success()
        .stdout(predicates::str::contains("secret answer"));
    assert_eq!(crate::common::tree(env.root()), before, "nothing written");
    let sent = env.server.requests().last().unwrap().json();
    let tools: Vec<String> = sent["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    assert!(tools.iter().any(|t| t == "fs_read"), "{tools:?}");
    assert!(
        !tools
            .iter()
            .any(|t| t == "fs_write" || t == "execute_command" || t == "fs_rm"),
        "{tools:?}"
    );
    env.loki()
        .args(["--otr", "-s", "work", "x"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--otr"));
}

#[test]
fn the_repl_off_the_record_keeps_no_history_and_refuses_sessions() {
    use crate::common::pty::Pty;
    let env = recording_env();
    let before = crate::common::tree(env.root());
    env.server.push(openai::text_stream(&["whispered"]));
    let mut pty = Pty::spawn(&env, &["--otr"], &[("NO_COLOR", "1")]);
    pty.expect("> ");
    pty.send("tell me quietly\r");
    pty.expect("whispered");
    pty.expect("> ");
    pty.send(".session work\r");
    pty.expect("off the record (--otr): sessions are not opened or saved");
    pty.expect("> ");
    pty.send(".set save true\r");
    pty.expect("messages.md is not written");
    pty.expect("> ");
    pty.send(".exit\r");
    pty.read_to_end();
    assert_eq!(crate::common::tree(env.root()), before, "nothing written");
}
