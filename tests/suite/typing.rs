//! Typed input in the REPL without bracketed paste: long bursts of keys, as a fast
//! typist, xdotool or a terminal without bracketed paste deliver them.

use std::time::Duration;

use crate::common::TestEnv;
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
