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

/// An MCP setup with the working test server and `mute`, a "server" that never answers.
fn mute_server_env() -> TestEnv {
    mute_server_env_waiting(1)
}

/// A server that never answers, and a turn that waits `wait` seconds for it.
fn mute_server_env_waiting(wait: u64) -> TestEnv {
    crate::suite::mcp::mcp_env(
        serde_json::json!({
            "test": {"type": "stdio", "command": crate::suite::mcp::server_bin()},
            "mute": {"type": "stdio", "command": "sleep", "args": ["25"]}
        }),
        &format!("enabled_mcp_servers: test,mute\nmcp_start_wait: {wait}\n"),
    )
}

#[test]
fn a_server_that_never_answers_does_not_hold_up_the_answer() {
    let env = mute_server_env();
    env.server.push(openai::text_stream(&["Answered."]));
    let started = std::time::Instant::now();
    let out = env.loki().arg("hi").assert().success();
    let took = started.elapsed();
    assert_eq!(crate::common::stdout(&out), "Answered.\n");
    let err = crate::common::stderr(&out);
    assert!(
        err.contains("MCP server `mute` is still starting after 1s"),
        "{err}"
    );
    // It waited its 1 s for `mute`, not the default wait.
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(4),
        "took {took:?}"
    );
    // The ready server's tools were offered.
    let body = env.server.requests()[0].json();
    let tools = body["tools"].to_string();
    assert!(tools.contains("test_"), "{tools}");
}

#[test]
fn the_spinner_and_info_name_servers_still_starting() {
    // Long enough for the spinner to show the label on a loaded machine.
    let env = mute_server_env_waiting(3);
    env.server.push(openai::text_stream(&["Answered."]));
    let mut pty = Pty::spawn(&env, &[], &[]);
    pty.expect("Ctrl-D to quit");
    // The servers start in the background as the REPL opens.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        pty.expect("fake:gpt-4o-mini)");
        pty.send(".info\r");
        let info = pty.expect("log_path");
        let row = info.lines().find(|l| l.contains("mcp:mute")).unwrap_or("");
        // `test` answers at once, but on a loaded machine it may still be starting too;
        // the spinner below must name `mute` alone.
        let test = info.lines().find(|l| l.contains("mcp:test")).unwrap_or("");
        if row.contains("starting") && !test.contains("starting") && !test.is_empty() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{row:?} in {info:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    pty.expect("fake:gpt-4o-mini)");
    pty.send("hi\r");
    pty.expect("Starting MCP servers: mute");
    pty.expect("still starting");
    pty.expect("Answered.");
    pty.expect("fake:gpt-4o-mini)");
    pty.send("\x04");
    pty.read_to_end();
}

#[test]
fn keys_typed_during_an_answer_are_not_echoed_and_enter_submits_them() {
    let env = TestEnv::new();
    env.server.push(
        openai::text_stream(&["First ", "answer ", "done."])
            .delay_headers(Duration::from_millis(1500))
            .frame_delay(Duration::from_millis(300)),
    );
    env.server.push(openai::text_stream(&["Second answer."]));
    let mut pty = Pty::spawn(&env, &[], &[]);
    pty.expect("fake:gpt-4o-mini)");
    pty.send("hi\r");
    pty.expect("Generating");
    // Typed while the spinner runs, Enter included.
    pty.send("typed ahead\r");
    let shown = pty.expect("done.");
    assert!(!shown.contains("typed"), "echoed: {shown:?}");
    pty.expect("Second answer.");
    let second = env.server.requests()[1].json();
    let last = second["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"], "typed ahead", "{second}");
    pty.expect("fake:gpt-4o-mini)");
    // The line typed ahead is in the history after the one typed at the prompt.
    let history = std::fs::read_to_string(env.config_dir().join("history.txt")).unwrap();
    let lines: Vec<&str> = history.lines().collect();
    assert_eq!(lines, ["hi", "typed ahead"], "{history:?}");
    pty.send("\x04");
    pty.read_to_end();
}

/// Issue 26 item 13: narrowing, then widening the terminal while the input line wraps
/// leaves the prompt on screen once (as a terminal that does not reflow shows it).
#[test]
fn widening_with_a_wrapped_input_line_draws_the_prompt_once() {
    let env = TestEnv::new();
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    let mut parser = vt100::Parser::new(24, 80, 1000);
    parser.process(pty.expect("mini)> ").as_bytes());
    let _ = pty.session.get_process_mut().set_window_size(40, 24);
    parser.screen_mut().set_size(24, 40);
    std::thread::sleep(Duration::from_millis(500));
    let typed = "abcdefghij".repeat(6);
    pty.send(&typed);
    parser.process(pty.expect("abcdefghij").as_bytes());
    std::thread::sleep(Duration::from_millis(500));
    let _ = pty.session.get_process_mut().set_window_size(80, 24);
    parser.screen_mut().set_size(24, 80);
    std::thread::sleep(Duration::from_millis(500));
    pty.send("Z");
    parser.process(pty.expect("Z").as_bytes());
    std::thread::sleep(Duration::from_millis(300));
    let screen = parser.screen().contents();
    assert_eq!(screen.matches("mini)> ").count(), 1, "{screen}");
}

/// Rows of `screen` showing the REPL's prompt.
fn prompt_rows(screen: &vt100::Screen) -> Vec<String> {
    let (_, cols) = screen.size();
    screen
        .rows(0, cols)
        .filter(|r| r.contains("> x") || r.trim_end() == ">")
        .collect()
}

#[test]
fn a_wrapped_input_line_is_drawn_once_after_a_resize() {
    let env = TestEnv::new();
    for (wider, cols) in [(true, 120u16), (false, 50u16)] {
        let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
        let mut screen = vt100::Parser::new(24, 80, 0);
        assert!(pty.drive(&mut screen, Duration::from_secs(15), |s| {
            s.contents().contains("for commands")
        }));
        let typed = "x".repeat(100);
        pty.send(&typed);
        assert!(pty.drive(&mut screen, Duration::from_secs(5), |s| {
            s.contents().matches('x').count() >= 100
        }));
        let _ = pty.session.get_process_mut().set_window_size(cols, 24);
        screen.screen_mut().set_size(24, cols);
        pty.drive(&mut screen, Duration::from_millis(800), |_| false);
        pty.send("y");
        assert!(pty.drive(&mut screen, Duration::from_secs(5), |s| {
            s.contents().contains("xy")
        }));
        pty.drive(&mut screen, Duration::from_millis(300), |_| false);
        let rows = prompt_rows(screen.screen());
        assert_eq!(
            rows.len(),
            1,
            "wider: {wider}; the prompt once:\n{}",
            screen.screen().contents()
        );
        pty.send("\x15.exit\r");
        pty.read_to_end();
    }
}
