//! Terminal rendering fixes (issue 14): long paragraphs, resizes, type-ahead during a turn,
//! MCP servers that are slow to start.

use std::time::Duration;

use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::pty::Pty;

/// Everything a terminal of `rows` x `cols` would hold (scrollback, then screen) after
/// interpreting `parser`'s input, with auto-wrapped rows joined.
fn history(parser: &mut vt100::Parser) -> String {
    let screen = parser.screen_mut();
    screen.set_scrollback(usize::MAX);
    let back = screen.scrollback();
    let mut text = String::new();
    let mut add = |row: String, wrapped: bool| {
        text.push_str(&row);
        if !wrapped {
            text.push('\n');
        }
    };
    let (_, cols) = screen.size();
    for k in (1..=back).rev() {
        screen.set_scrollback(k);
        let row = screen.rows(0, cols).next().unwrap_or_default();
        add(row, screen.row_wrapped(0));
    }
    screen.set_scrollback(0);
    let rows: Vec<String> = screen.rows(0, cols).collect();
    for (i, row) in rows.into_iter().enumerate() {
        add(row, screen.row_wrapped(i as u16));
    }
    text
}

/// `n` words `w001 … wNNN` streamed a few words per delta, as one paragraph.
fn paragraph(n: usize) -> Vec<String> {
    let words: Vec<String> = (1..=n).map(|i| format!("w{i:03}")).collect();
    words
        .chunks(3)
        .map(|c| format!("{} ", c.join(" ")))
        .collect()
}

/// Asserts every word `w001 … wNNN` is on the terminal exactly once.
fn assert_each_once(text: &str, n: usize) {
    assert_each_once_from(text, 1, n);
}

/// Asserts no word `w001 … wNNN` is on the terminal twice, and those from `wFROM` on are
/// there once (rows printed before a resize may be cut by it, as a terminal that does not
/// reflow cuts them).
fn assert_each_once_from(text: &str, from: usize, n: usize) {
    for i in 1..=n {
        let word = format!("w{i:03}");
        let count = text.matches(&word).count();
        assert!(count <= 1, "{word} shown {count} times in:\n{text}");
        if i >= from {
            assert_eq!(count, 1, "{word} shown {count} times in:\n{text}");
        }
    }
}

#[test]
fn a_paragraph_taller_than_the_terminal_is_printed_once() {
    let env = TestEnv::new();
    let parts = paragraph(400);
    let mut parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    parts.push("\n\nThe end.\n");
    env.server.push(openai::text_stream(&parts));
    let mut pty = Pty::spawn(&env, &["hi"], &[]);
    let out = pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
    let mut parser = vt100::Parser::new(24, 80, 1000);
    parser.process(out.as_bytes());
    let text = history(&mut parser);
    assert_each_once(&text, 400);
    assert_eq!(text.matches("The end.").count(), 1, "{text}");
}

#[test]
fn narrowing_the_terminal_mid_paragraph_prints_nothing_twice() {
    let env = TestEnv::new();
    let parts = paragraph(150);
    let mut parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    parts.push("\n\nThe end.\n");
    env.server
        .push(openai::text_stream(&parts).frame_delay(Duration::from_millis(25)));
    let mut pty = Pty::spawn(&env, &["hi"], &[]);
    let mut parser = vt100::Parser::new(24, 80, 1000);
    let before = pty.expect("w030");
    parser.process(before.as_bytes());
    let _ = pty.session.get_process_mut().set_window_size(40, 24);
    parser.screen_mut().set_size(24, 40);
    let out = pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
    parser.process(out.as_bytes());
    let text = history(&mut parser);
    assert_each_once_from(&text, 40, 150);
    assert_eq!(text.matches("The end.").count(), 1, "{text}");
}
