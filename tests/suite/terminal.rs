//! Behaviour that only exists on a terminal: rendering, colours, spinner, first-run setup.

use std::time::Duration;

use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::pty::Pty;

const MARKDOWN: &[&str] = &[
    "# Title\n\nSome **bo",
    "ld** and `code`.\n\n",
    "```rust\nfn main() {\n",
    "    println!(\"hi\");\n}\n```\n",
    "- item one\n- item two\n",
];

#[test]
fn answers_are_rendered_as_markdown_with_highlighted_code() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(MARKDOWN));
    let mut pty = Pty::spawn(&env, &["hi"], &[]);
    let screen = pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
    assert!(screen.contains("\x1b["), "expected colours: {screen:?}");
    assert!(
        screen.contains("38;2;"),
        "expected 24-bit code colours: {screen:?}"
    );
    assert!(screen.contains("Title") && screen.contains("item two"));
    assert!(
        !screen.contains("**bold**"),
        "emphasis markers are hidden: {screen:?}"
    );
    assert!(!screen.contains("\x1b[6n"), "never query the terminal");
}

#[test]
fn no_color_on_a_terminal_prints_plain_text() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(MARKDOWN));
    let mut pty = Pty::spawn(&env, &["hi"], &[("NO_COLOR", "1")]);
    let screen = pty.read_to_end();
    assert!(!screen.contains('\x1b'), "{screen:?}");
    assert!(screen.contains("**bold**"));
}

#[test]
fn a_spinner_shows_while_waiting_and_is_cleared() {
    let env = TestEnv::new();
    env.server
        .push(openai::text_stream(&["late answer"]).delay_headers(Duration::from_millis(600)));
    let mut pty = Pty::spawn(&env, &["hi"], &[]);
    let screen = pty.read_to_end();
    let spin = screen.find("Generating").expect("spinner shown");
    let answer = screen.find("late answer").expect("answer shown");
    assert!(spin < answer);
    // The spinner line is erased before the answer is written.
    assert!(screen[spin..answer].contains("\r\x1b[K"), "{screen:?}");
}

#[test]
fn reasoning_is_dimmed_on_a_terminal() {
    let env = TestEnv::new();
    env.server
        .push(openai::reasoning_stream(&["pondering"], &["done"]));
    let mut pty = Pty::spawn(&env, &["hi"], &[]);
    let screen = pty.read_to_end();
    assert!(screen.contains("\x1b[2;3mpondering"), "{screen:?}");
    assert!(!screen.contains("<think>"));
}

#[test]
fn first_run_wizard_writes_a_private_config_and_answers() {
    let env = TestEnv::bare();
    env.server.push(openai::text_stream(&["configured!"]));
    let base = env.server.base_url();
    let mut pty = Pty::spawn(&env, &["hi"], &[("OPENAI_API_BASE", &base)]);
    pty.expect("Which provider");
    pty.send("\r"); // openai is first
    pty.expect("API key");
    pty.send("sk-wizard\r");
    pty.expect("Default model");
    pty.send("\r");
    pty.expect("encrypted vault");
    pty.send("n\r");
    let screen = pty.read_to_end();
    assert!(screen.contains("configured!"), "{screen:?}");
    assert_eq!(pty.exit_code(), 0);

    let config = std::fs::read_to_string(env.config_path()).unwrap();
    assert!(config.contains("model: openai:gpt-4.1-mini"), "{config}");
    assert!(config.contains("api_key: sk-wizard"), "{config}");
    crate::common::assert_private(&env.config_path());
    let req = env.server.last_request();
    assert_eq!(req.header("authorization"), Some("Bearer sk-wizard"));
}
