//! Losing work: Esc at "Save session?", SIGTERM/SIGHUP during a turn, concurrent writers of
//! one session, and a session whose model is gone (issue 12, items 13 and 14).

use std::io::Read;
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::common::fake_llm::{Reply, openai};
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr};

const PROMPT: &str = "fake:gpt-4o-mini)> ";

/// A 60-word answer, one word every 100 ms.
fn slow_answer() -> Reply {
    let parts: Vec<String> = (0..60).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    openai::text_stream(&refs).frame_delay(Duration::from_millis(100))
}

fn kill(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn session_text(env: &TestEnv, name: &str) -> String {
    let path = env.session_file(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Reads the child's stdout until `text` has arrived; returns what was read.
fn read_until(child: &mut Child, text: &str) -> String {
    let out = child.stdout.as_mut().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains(text) {
        let n = out.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "stdout closed before {text:?}: {:?}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

/// Whether the pseudo-terminal is in line (canonical) mode, as a shell expects it.
fn line_mode(pty: &Pty) -> bool {
    let master = pty.session.get_process().get_raw_handle().unwrap();
    let termios = rustix::termios::tcgetattr(&master).unwrap();
    termios
        .local_modes
        .contains(rustix::termios::LocalModes::ICANON)
}

#[test]
fn esc_at_save_session_goes_back_without_losing_the_session() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["noted"]));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(PROMPT);
    pty.send(".session notes\r");
    pty.expect("session: notes (new)");
    pty.expect("notes) ");
    pty.send("remember 42\r");
    pty.expect("noted");
    pty.expect("notes) ");

    // `.exit session`, then Esc: back at the prompt, still in the session.
    pty.send(".exit session\r");
    pty.expect("Save session `notes`?");
    pty.send("\x1b");
    pty.expect("still in session `notes`");
    pty.expect("notes) ");
    // Ctrl-D asks too, and Esc goes back again.
    pty.send("\x04");
    pty.expect("Save session `notes`?");
    pty.send("\x1b");
    pty.expect("still in session `notes`");
    pty.expect("notes) ");
    assert!(!env.session_file("notes").exists(), "nothing decided yet");

    // The conversation is intact: the next question carries it.
    pty.send("and now?\r");
    pty.expect("Hello from fake");
    pty.expect("notes) ");
    let messages = env.server.last_request().json()["messages"].clone();
    assert_eq!(messages[0]["content"], "remember 42");
    assert_eq!(messages[1]["content"], "noted");

    pty.send(".exit\r");
    pty.expect("Save session `notes`?");
    pty.send("y");
    pty.expect("saved the session");
    pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
    let file = session_text(&env, "notes");
    assert!(
        file.contains("remember 42") && file.contains("and now?"),
        "{file}"
    );
}

#[test]
fn esc_at_the_name_of_a_temporary_session_asks_again() {
    let env = TestEnv::new();
    let mut pty = Pty::spawn(&env, &["-s"], &[("NO_COLOR", "1")]);
    pty.expect("temp) ");
    pty.send("hello\r");
    pty.expect("Hello from fake");
    pty.expect("temp) ");
    pty.send(".exit session\r");
    pty.expect("Save session `temp`?");
    pty.send("y");
    pty.expect("Session name:");
    pty.send("\x1b");
    // Back to the question, not a silent discard.
    pty.expect("Save session `temp`?");
    pty.send("y");
    pty.expect("Session name:");
    pty.send("kept\r");
    pty.expect("saved the session");
    pty.expect(PROMPT);
    assert!(session_text(&env, "kept").contains("hello"));
}

fn one_shot_signal_keeps_the_partial_turn(signal: &str, code: i32) {
    let env = TestEnv::new();
    env.server.push(slow_answer());
    let mut child = env
        .loki_std()
        .args(["-s", "work", "talk slowly"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    read_until(&mut child, "w2 ");
    kill(child.id(), signal);
    let output = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{signal}: {err}");
    assert!(err.contains("(interrupted)"), "{err}");
    let file = session_text(&env, "work");
    assert!(
        file.contains("talk slowly") && file.contains("w0 w1 w2"),
        "{file}"
    );
    assert!(!file.contains("w59"), "the stream was not stopped: {file}");
    assert!(file.contains("interrupted"), "marked interrupted: {file}");
}

#[test]
fn sigterm_during_a_one_shot_turn_saves_the_partial_answer() {
    one_shot_signal_keeps_the_partial_turn("TERM", 143);
}

#[test]
fn sighup_during_a_one_shot_turn_saves_the_partial_answer() {
    one_shot_signal_keeps_the_partial_turn("HUP", 129);
}

fn repl_signal_mid_stream_keeps_the_partial_turn(signal: &str, code: i32) {
    let env = TestEnv::new();
    env.server.push(slow_answer());
    let mut pty = Pty::spawn(&env, &["-s", "work"], &[("NO_COLOR", "1")]);
    pty.expect("work) ");
    pty.send("talk slowly\r");
    pty.expect("w2 ");
    kill(pty.session.get_process().pid().as_raw() as u32, signal);
    let out = pty.read_to_end();
    assert!(!out.contains("w59"), "{out:?}");
    assert_eq!(pty.exit_code(), code, "{signal}: {out:?}");
    let file = session_text(&env, "work");
    assert!(
        file.contains("talk slowly") && file.contains("w0 w1 w2"),
        "{file}"
    );
}

#[test]
fn sigterm_during_a_repl_turn_saves_the_partial_answer() {
    repl_signal_mid_stream_keeps_the_partial_turn("TERM", 143);
}

#[test]
fn sighup_during_a_repl_turn_saves_the_partial_answer() {
    repl_signal_mid_stream_keeps_the_partial_turn("HUP", 129);
}

#[test]
fn sigterm_at_the_repl_prompt_saves_and_restores_the_terminal() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["noted"]));
    let mut pty = Pty::spawn(&env, &["-s", "work"], &[("NO_COLOR", "1")]);
    pty.expect("work) ");
    pty.send("remember 42\r");
    pty.expect("noted");
    pty.expect("work) ");
    // The line editor has the terminal in raw mode now.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!line_mode(&pty), "the prompt is in raw mode");
    kill(pty.session.get_process().pid().as_raw() as u32, "TERM");
    let out = pty.read_to_end();
    assert_eq!(pty.exit_code(), 143, "{out:?}");
    assert!(out.contains("saved the session"), "{out:?}");
    assert!(line_mode(&pty), "the terminal was left in raw mode");
    let file = session_text(&env, "work");
    assert!(
        file.contains("remember 42") && file.contains("noted"),
        "{file}"
    );
}

#[test]
fn concurrent_one_shot_runs_on_one_session_keep_both_exchanges() {
    let env = TestEnv::new();
    env.loki()
        .args(["-s", "shared", "first"])
        .assert()
        .success();
    // A's answer is slow, so B starts while A is still streaming.
    env.server.push(
        openai::text_stream(&["slow ", "answer ", "A"]).frame_delay(Duration::from_millis(800)),
    );
    env.server.push(openai::text_stream(&["answer B"]));
    let spawn = |question: &str| {
        env.loki_std()
            .args(["-s", "shared", question])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let a = spawn("question A");
    env.server.wait_for_requests(2, Duration::from_secs(20));
    let b = spawn("question B");
    let a = a.wait_with_output().unwrap();
    let b = b.wait_with_output().unwrap();
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    assert_eq!(String::from_utf8_lossy(&a.stdout), "slow answer A\n");
    assert_eq!(String::from_utf8_lossy(&b.stdout), "answer B\n");
    assert!(
        String::from_utf8_lossy(&b.stderr).contains("waiting for another loki process"),
        "{}",
        String::from_utf8_lossy(&b.stderr)
    );

    // B waited for A and started from A's saved exchange.
    let requests = env.server.requests();
    assert_eq!(requests.len(), 3);
    let contents: Vec<String> = requests[2].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        contents,
        [
            "first",
            "Hello from fake",
            "question A",
            "slow answer A",
            "question B"
        ]
    );
    let file = session_text(&env, "shared");
    for text in [
        "first",
        "question A",
        "slow answer A",
        "question B",
        "answer B",
    ] {
        assert!(file.contains(text), "{text} lost: {file}");
    }
}

#[test]
fn a_run_waiting_for_a_busy_session_stops_at_once_on_sigterm() {
    let env = TestEnv::new();
    env.server.push(slow_answer());
    let spawn = |question: &str| {
        env.loki_std()
            .args(["-s", "busy", question])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut a = spawn("question A");
    read_until(&mut a, "w1 ");
    let mut b = spawn("question B");
    let mut waiting = Vec::new();
    let mut buf = [0u8; 256];
    let err = b.stderr.as_mut().unwrap();
    while !String::from_utf8_lossy(&waiting).contains("waiting for another loki process") {
        let n = err.read(&mut buf).unwrap();
        assert!(n > 0, "{:?}", String::from_utf8_lossy(&waiting));
        waiting.extend_from_slice(&buf[..n]);
    }
    let started = std::time::Instant::now();
    kill(b.id(), "TERM");
    let status = b.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(a.try_wait().unwrap().is_none(), "A is still answering");
    let a = a.wait_with_output().unwrap();
    assert!(a.status.success());
    let file = session_text(&env, "busy");
    assert!(
        file.contains("w59") && !file.contains("question B"),
        "{file}"
    );
    assert_eq!(env.server.requests().len(), 1);
}

#[test]
fn a_repl_turn_picks_up_what_a_one_shot_run_saved_meanwhile() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["repl answer 1"]));
    env.server.push(openai::text_stream(&["cli answer"]));
    env.server.push(openai::text_stream(&["repl answer 2"]));
    let mut pty = Pty::spawn(&env, &["-s", "both"], &[("NO_COLOR", "1")]);
    pty.expect("both) ");
    pty.send("repl question 1\r");
    pty.expect("repl answer 1");
    pty.expect("both) ");
    // The REPL has not written the session yet; a one-shot run writes it.
    env.loki()
        .args(["-s", "both", "cli question"])
        .assert()
        .success();
    pty.send("repl question 2\r");
    pty.expect("repl answer 2");
    pty.expect("both) ");
    let contents: Vec<String> = env.server.last_request().json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        contents,
        [
            "cli question",
            "cli answer",
            "repl question 1",
            "repl answer 1",
            "repl question 2"
        ]
    );
    pty.send(".exit\r");
    pty.expect("Save session `both`?");
    pty.send("y");
    pty.read_to_end();
    let file = session_text(&env, "both");
    for text in ["cli answer", "repl answer 1", "repl answer 2"] {
        assert!(file.contains(text), "{text} lost: {file}");
    }
}

#[test]
fn a_session_whose_model_is_gone_warns_and_keeps_its_model() {
    let env = TestEnv::new();
    let legacy = env.config_dir().join("sessions/old.yaml");
    std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
    std::fs::write(
        &legacy,
        "model: gone:retired-model\nmessages:\n- role: user\n  content: earlier\n- role: assistant\n  content: before\n",
    )
    .unwrap();
    let out = env
        .loki()
        .args(["-s", "old", "next question"])
        .assert()
        .success();
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains("`gone:retired-model`") && warnings[0].contains("`fake:gpt-4o-mini`"),
        "{err}"
    );
    assert_eq!(env.server.last_request().json()["model"], "gpt-4o-mini");
    let file = session_text(&env, "old");
    assert!(
        file.contains("model: gone:retired-model") && file.contains("next question"),
        "{file}"
    );

    // Choosing a model explicitly replaces it, without a warning.
    let out = env
        .loki()
        .args(["-s", "old", "-m", "fake:text-only", "again"])
        .assert()
        .success();
    assert!(!stderr(&out).contains("warning:"), "{}", stderr(&out));
    assert!(session_text(&env, "old").contains("model: fake:text-only"));
}

/// `.edit session` holds no lock while the editor is open: a run that writes the session
/// meanwhile goes ahead, and the edit that started before it is refused (kept aside)
/// instead of overwriting what the run wrote.
#[test]
fn a_run_during_edit_session_is_not_overwritten_by_the_edit() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["repl answer"]));
    env.server.push(openai::text_stream(&["cli answer"]));
    let marker = env.root().join("editor-open");
    let editor = env.root().join("slow-editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nbuf=$(cat \"$1\")\ntouch \"$MARKER\"\nsleep 3\nprintf '%s\\n' \"$buf\" > \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (editor, marker_s) = (
        editor.to_string_lossy().into_owned(),
        marker.to_string_lossy().into_owned(),
    );
    let mut pty = Pty::spawn(
        &env,
        &["-s", "ed"],
        &[
            ("NO_COLOR", "1"),
            ("EDITOR", editor.as_str()),
            ("VISUAL", editor.as_str()),
            ("MARKER", marker_s.as_str()),
        ],
    );
    pty.expect("ed) ");
    pty.send("repl question\r");
    pty.expect("repl answer");
    pty.expect("ed) ");
    pty.send(".edit session\r");
    let start = std::time::Instant::now();
    while !marker.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the editor never ran"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    env.loki()
        .args(["-s", "ed", "cli question"])
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    // The run did not wait for the editor (it sleeps 3 s after the marker).
    assert!(start.elapsed() < Duration::from_secs(20));
    pty.expect("changed while it was being edited");
    pty.expect("your edit is kept in");
    let file = session_text(&env, "ed");
    for text in ["repl answer", "cli question", "cli answer"] {
        assert!(file.contains(text), "{text} lost: {file}");
    }
}
