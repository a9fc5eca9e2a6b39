//! Typed input in the REPL without bracketed paste: long bursts of keys, as a fast
//! typist, xdotool or a terminal without bracketed paste deliver them.

use std::time::Duration;

use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::pty::Pty;

const PROMPT: &str = "fake:gpt-4o-mini)> ";

/// A line of distinct words, `len` bytes long, so a lost or repeated piece shows.
fn long_line(len: usize) -> String {
    let mut line = String::new();
    let mut n = 0;
    while line.len() < len {
        line.push_str(&format!("w{n:04} "));
        n += 1;
    }
    line.truncate(len);
    line.trim_end().to_string()
}

/// Item 6 of issue 14: a line of more than 4 KB that reaches the terminal in ONE
/// write (no bracketed paste) used to stall after 1-2 KB until another key was
/// pressed. Here the line and its Enter go out in one write and nothing follows:
/// the whole line must be submitted, and the line editor must not repaint per key.
#[test]
fn a_long_line_sent_in_one_write_is_submitted_whole() {
    let env = TestEnv::new();
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.session
        .set_expect_timeout(Some(Duration::from_secs(20)));
    pty.expect(PROMPT);

    let line = long_line(5000);
    pty.send(&format!("{line}\r"));
    let echoed = pty.expect("Hello from fake");
    pty.expect(PROMPT);

    let sent = env.server.last_request().json()["messages"][0]["content"]
        .as_str()
        .expect("text content")
        .to_string();
    assert_eq!(sent.len(), line.len(), "the submitted line was cut");
    assert_eq!(sent, line);
    // One paint of the line plus a few repaints of the wrapped rows is a few times its
    // length; a repaint per key (a 5,000-key burst) would be megabytes.
    assert!(
        echoed.len() < 4 * line.len(),
        "{} bytes written to the terminal for a {}-byte line",
        echoed.len(),
        line.len()
    );
}

/// Reads until `text` appears, feeding the output to `screen` and answering the line
/// editor's cursor-position queries with the real position on that screen (the shared
/// helper answers "row 1", which lets the editor wipe the screen from the top).
fn expect_on(pty: &mut Pty, screen: &mut vt100::Parser, text: &str) {
    use expectrl::{Any, Expect};
    const CPR: &str = "\x1b[6n";
    loop {
        let found = pty
            .session
            .expect(Any(vec![CPR, text]))
            .unwrap_or_else(|e| {
                panic!("waiting for {text:?}: {e}\n{}", screen.screen().contents())
            });
        screen.process(found.before());
        let matched = found.get(0).unwrap_or_default().to_vec();
        if matched == CPR.as_bytes() {
            let (row, col) = screen.screen().cursor_position();
            pty.send(&format!("\x1b[{};{}R", row + 1, col + 1));
            continue;
        }
        screen.process(&matched);
        return;
    }
}

/// Item 7 of issue 14: Ctrl-C while the spinner waits for the first token, after keys
/// were typed, stops the turn and leaves no trace of the spinner line (no "Generating",
/// no typed keys, no "^C") on the screen the next prompt is painted on.
#[test]
fn ctrl_c_while_the_spinner_runs_leaves_no_spinner_line() {
    let env = TestEnv::new();
    env.server
        .push(openai::text_stream(&["never shown"]).delay_headers(Duration::from_secs(10)));
    // A shell hands a program a terminal that echoes (with ^C for Ctrl-C); the test
    // harness's terminal does not, so turn echo on as a shell would.
    let script = format!("stty echo echoctl && exec {}", env!("CARGO_BIN_EXE_loki"));
    let mut pty = Pty::spawn_program(&env, "/bin/sh", &["-c", &script]);
    pty.session
        .set_expect_timeout(Some(Duration::from_secs(20)));
    let mut screen = vt100::Parser::new(24, 80, 0);
    expect_on(&mut pty, &mut screen, "fake:gpt-4o-mini)");
    pty.send("hi\r");
    expect_on(&mut pty, &mut screen, "Generating");
    // Keys typed meanwhile, more than fit on the spinner's row, then Ctrl-C. Echoed,
    // they wrapped the spinner's row, and clearing "the line" left the spinner's first
    // row (and the keys) on screen.
    pty.send(&"x".repeat(100));
    std::thread::sleep(Duration::from_millis(400));
    pty.send("\x03");
    expect_on(&mut pty, &mut screen, "fake:gpt-4o-mini)");
    // Let the prompt finish painting.
    std::thread::sleep(Duration::from_millis(500));
    pty.send("\x04");
    expect_on(&mut pty, &mut screen, "\x1b[?2004l");

    let text = screen.screen().contents();
    assert!(
        !text.contains("Generating"),
        "spinner left on screen:\n{text}"
    );
    assert!(
        !text.contains("^C"),
        "Ctrl-C echoed onto the screen:\n{text}"
    );
    assert!(!text.contains("xxxx"), "typed keys echoed:\n{text}");
    assert!(text.contains("(interrupted)"), "{text}");
}
