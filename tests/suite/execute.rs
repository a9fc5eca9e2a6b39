//! `-e`: natural language to a shell command, with the menu on a terminal.

use crate::common::fake_llm::openai;
use crate::common::pty::Pty;
use crate::common::{TestEnv, stdout};

#[test]
fn without_a_terminal_only_the_command_is_printed() {
    let env = TestEnv::new();
    env.server
        .push(openai::text_json("```bash\nfind . -size +10M\n```"));
    let out = env
        .loki()
        .env("SHELL", "/bin/zsh")
        .args(["-e", "files over 10 MB"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "find . -size +10M\n");
    let body = env.server.last_request().json();
    assert!(body.get("stream").is_none(), "-e does not stream");
    let system = body["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(
        system.contains("zsh") && system.contains(std::env::consts::OS),
        "{system}"
    );
    assert_eq!(body["messages"][1]["content"], "files over 10 MB");
}

#[test]
fn dry_run_shows_the_request() {
    let env = TestEnv::new();
    let out = env
        .loki()
        .args(["-e", "--dry-run", "list files"])
        .assert()
        .success();
    assert!(stdout(&out).contains("--- system ---") && stdout(&out).contains("list files"));
    assert!(env.server.requests().is_empty());
}

#[test]
fn the_menu_executes_the_command_and_records_it_in_history() {
    let env = TestEnv::new();
    env.server.push(openai::text_json("echo loki-ran-this"));
    let home = env.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut pty = Pty::spawn(
        &env,
        &["-e", "say hi"],
        &[("NO_COLOR", "1"), ("SHELL", "/bin/bash")],
    );
    pty.expect("echo loki-ran-this");
    pty.expect("execute");
    pty.send("\r");
    let out = pty.read_to_end();
    assert!(out.contains("loki-ran-this\r\n"), "{out:?}");
    assert_eq!(pty.exit_code(), 0);
    let history = std::fs::read_to_string(home.join(".bash_history")).unwrap();
    assert_eq!(history, "echo loki-ran-this\n");
}

#[test]
fn a_command_taller_than_the_screen_runs_only_after_it_was_viewed_whole() {
    let env = TestEnv::new();
    let command = format!("touch X\n{}ls -la", ":\n".repeat(80));
    env.server.push(openai::text_json(&command));
    let mut pty = Pty::spawn(
        &env,
        &["-e", "tidy up"],
        &[("NO_COLOR", "1"), ("SHELL", "/bin/bash"), ("PAGER", "cat")],
    );
    let shown = pty.expect("view it whole before it can run");
    assert!(shown.contains("touch X"), "{shown:?}");
    assert!(shown.contains("more lines"), "{shown:?}");
    pty.expect("view");
    // `e` is not in the menu until the command was viewed whole.
    pty.send("e");
    pty.send("v");
    let viewed = pty.expect("ls -la");
    assert!(viewed.contains("touch X"), "{viewed:?}");
    pty.expect("execute");
    assert!(
        !env.work_dir().join("X").exists(),
        "ran before it was viewed"
    );
    pty.send("e");
    pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
    assert!(env.work_dir().join("X").exists());
}

#[test]
fn revise_regenerates_in_the_same_conversation_and_quit_leaves() {
    let env = TestEnv::new();
    env.server.push(openai::text_json("ls"));
    env.server.push(openai::text_json("ls -la"));
    let mut pty = Pty::spawn(&env, &["-e", "list files"], &[("NO_COLOR", "1")]);
    pty.expect("execute");
    pty.send("\x1b[B\r"); // down to "revise"
    pty.expect("What should change?");
    pty.send("include hidden files\r");
    pty.expect("ls -la");
    let messages = env.server.last_request().json()["messages"].clone();
    assert_eq!(messages[1]["content"], "list files");
    assert_eq!(messages[2]["content"], "ls");
    assert_eq!(messages[3]["content"], "include hidden files");
    pty.expect("quit");
    pty.send("\x1b[A\r"); // up wraps to "quit"
    pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
}

#[test]
fn files_and_sessions_feed_the_request() {
    let env = TestEnv::new();
    env.write("errors.log", "disk full on /var");
    env.server.push(openai::text_json("df -h /var"));
    let out = env
        .loki()
        .args([
            "-e",
            "-s",
            "ops",
            "-f",
            "errors.log",
            "check the disk this log is about",
        ])
        .assert()
        .success();
    assert_eq!(stdout(&out), "df -h /var\n");
    let user = env.server.last_request().json()["messages"][1]["content"].to_string();
    assert!(
        user.contains("disk full on /var") && user.contains("check the disk"),
        "{user}"
    );
    let session = std::fs::read_to_string(env.session_file("ops")).unwrap();
    assert!(session.contains("df -h /var"), "{session}");
}

#[test]
fn describe_explains_with_the_chosen_model() {
    let env = TestEnv::new();
    env.server.push(openai::text_json("du -sh ."));
    env.server.push(openai::text_stream(&[
        "Shows the total size of this directory.",
    ]));
    let mut pty = Pty::spawn(
        &env,
        &["-m", "fake:text-only", "-e", "size of this dir"],
        &[("NO_COLOR", "1")],
    );
    pty.expect("execute");
    pty.send("\x1b[B\x1b[B\r"); // down to "describe"
    pty.expect("total size of this directory");
    let body = env.server.last_request().json();
    assert_eq!(body["model"], "text-only");
    assert_eq!(body["messages"][1]["content"], "du -sh .");
    pty.expect("quit");
    pty.send("\x1b[A\r");
    pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
}
