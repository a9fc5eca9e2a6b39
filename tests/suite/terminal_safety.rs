//! Terminal integrity: text from a model, a tool, a file or a server never reaches the
//! terminal as control sequences (clipboard writes, titles, screen clears, hyperlinks,
//! line overwrites), and what is shown for approval is exactly what runs. Piped answers
//! keep their bytes.

use crate::common::fake_llm::openai;
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr, stdout};

/// An answer that tries everything: an OSC 52 clipboard write, an OSC 0 title, a screen
/// clear and cursor home, an OSC 8 hyperlink, C1 controls, a BEL and a carriage return
/// that would overwrite the line.
const HOSTILE: &[&str] = &[
    "Copy \x1b]52;c;",
    "ZWNobyBodA==\x07 done. \x1b]0;pwned\x07",
    "\x1b[2J\x1b[H see ",
    "\x1b]8;;https://evil.example/\x07docs\x1b]8;;\x07",
    " \u{9d}0;c1title\u{9c} \u{9b}2J safe\rSAFE\n",
];

/// The raw sequences none of which may reach the terminal.
const RAW: &[&str] = &[
    "\x1b]52", "\x1b]0;", "\x1b[2J", "\x1b[H", "\x1b]8;", "\x07", "\u{9b}", "\u{9c}", "\u{9d}",
    "\rSAFE",
];

/// How they must appear instead.
const SHOWN: &[&str] = &[
    r"\x1b]52;c;ZWNobyBodA==\x07 done. \x1b]0;pwned\x07",
    r"\x1b[2J\x1b[H see \x1b]8;;https://evil.example/\x07docs\x1b]8;;\x07",
    r"\u{9d}0;c1title\u{9c} \u{9b}2J safe\rSAFE",
];

fn hostile_text() -> String {
    HOSTILE.concat()
}

fn assert_neutralised(screen: &str, what: &str) {
    for raw in RAW {
        assert!(
            !screen.contains(raw),
            "{what}: {raw:?} reached the terminal: {screen:?}"
        );
    }
    for shown in SHOWN {
        assert!(
            screen.contains(shown),
            "{what}: expected {shown:?} on screen: {screen:?}"
        );
    }
}

/// One-shot on a terminal with `args`/`env`; returns everything written to it.
fn run_on_pty(env: &TestEnv, args: &[&str], extra_env: &[(&str, &str)]) -> String {
    let mut pty = Pty::spawn(env, args, extra_env);
    let screen = pty.read_to_end();
    assert_eq!(pty.exit_code(), 0, "{screen:?}");
    screen
}

#[test]
fn streamed_answers_cannot_drive_the_terminal() {
    // Highlighting on (markdown renderer), NO_COLOR, and `highlight: false`.
    for (extra_env, config) in [
        (&[][..], ""),
        (&[("NO_COLOR", "1")][..], ""),
        (&[][..], "highlight: false\n"),
    ] {
        let env = TestEnv::new();
        if !config.is_empty() {
            let cfg = std::fs::read_to_string(env.config_path()).unwrap();
            env.write_config(&format!("{config}{cfg}"));
        }
        env.server.push(openai::text_stream(HOSTILE));
        let screen = run_on_pty(&env, &["hi"], extra_env);
        assert_neutralised(&screen, &format!("stream {extra_env:?} {config:?}"));
    }
}

#[test]
fn whole_answers_and_code_only_cannot_drive_the_terminal() {
    for args in [&["-S", "hi"][..], &["-c", "hi"][..]] {
        for extra_env in [&[][..], &[("NO_COLOR", "1")][..]] {
            let env = TestEnv::new();
            env.server.push(openai::text_json(&hostile_text()));
            let screen = run_on_pty(&env, args, extra_env);
            assert_neutralised(&screen, &format!("{args:?} {extra_env:?}"));
        }
    }
}

#[test]
fn reasoning_cannot_drive_the_terminal() {
    let env = TestEnv::new();
    env.server
        .push(openai::reasoning_stream(HOSTILE, &["fine"]));
    let screen = run_on_pty(&env, &["hi"], &[]);
    assert_neutralised(&screen, "reasoning");
    assert!(screen.contains("fine"));
}

#[test]
fn a_crlf_split_across_reads_is_still_a_line_ending() {
    let env = TestEnv::new();
    env.server
        .push(openai::text_stream(&["one\r", "\ntwo\r\n", "three"]));
    let screen = run_on_pty(&env, &["hi"], &[("NO_COLOR", "1")]);
    // The terminal turns each `\n` into `\r\n` on the way (onlcr).
    assert!(screen.contains("one\r\r\ntwo\r\r\nthree"), "{screen:?}");
    assert!(!screen.contains(r"\r"), "{screen:?}");
}

#[test]
fn piped_answers_keep_their_bytes() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(HOSTILE));
    let out = env.loki().arg("hi").assert().success();
    assert_eq!(out.get_output().stdout, hostile_text().as_bytes());

    env.server.push(openai::text_json(&hostile_text()));
    let out = env.loki().args(["-c", "hi"]).assert().success();
    let code = hostile_text();
    assert_eq!(stdout(&out), format!("{}\n", code.trim()));

    // The shell integrations read `-e` output from a pipe: the command, byte for byte.
    env.server
        .push(openai::text_json("touch X; \r\x1b[2Kls -la"));
    let out = env.loki().args(["-e", "list"]).assert().success();
    assert_eq!(stdout(&out), "touch X; \r\x1b[2Kls -la\n");
}

#[test]
fn the_execute_menu_shows_the_command_that_runs() {
    let env = TestEnv::new();
    env.server
        .push(openai::text_json("touch X; \r\x1b[2Kls -la"));
    let mut pty = Pty::spawn(
        &env,
        &["-e", "list files"],
        &[("NO_COLOR", "1"), ("SHELL", "/bin/sh")],
    );
    let shown = pty.expect("execute");
    assert!(
        shown.contains(r"touch X; \r\x1b[2Kls -la"),
        "the hidden part must be visible: {shown:?}"
    );
    assert!(!shown.contains("\x1b[2K"), "{shown:?}");
    assert!(shown.contains("part of what runs"), "{shown:?}");
    pty.send("\r");
    pty.read_to_end();
    // What ran is what was shown: `touch X` included.
    assert!(env.work_dir().join("X").exists());
}

#[test]
fn execute_escapes_bidi_overrides_in_the_menu() {
    let env = TestEnv::new();
    env.server
        .push(openai::text_json("rm -f \u{202e}txt.hs\u{202c} notes"));
    let mut pty = Pty::spawn(&env, &["-e", "tidy"], &[("NO_COLOR", "1")]);
    let shown = pty.expect("execute");
    assert!(
        shown.contains(r"rm -f \u{202e}txt.hs\u{202c} notes"),
        "{shown:?}"
    );
    pty.send("\x1b[A\r"); // quit
    pty.read_to_end();
}

fn tools_env() -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: all\n{cfg}"));
    env
}

#[test]
fn tool_names_and_arguments_are_escaped_in_tool_lines() {
    let env = tools_env();
    env.write("notes.txt", "alpha\n");
    env.server.push(openai::tool_call_stream(&[
        (
            "c1",
            "fs_read",
            "{\"path\":\"notes.txt\\u001b]52;c;aGk=\\u0007\\r\\u001b[2Kok\"}",
        ),
        ("c2", "evil\x1b]0;pwned\x07\u{9b}2J", "{}"),
    ]));
    // On a terminal… (an unknown tool fails a one-shot run, naming it — escaped too)
    let mut pty = Pty::spawn(&env, &["read it"], &[]);
    let screen = pty.read_to_end();
    assert_eq!(pty.exit_code(), 1, "{screen:?}");
    // …and into a pipe: stderr carries messages, not data, so it is always escaped.
    env.server.push(openai::tool_call_stream(&[(
        "c3",
        "evil\x1b]0;pwned\x07",
        "{\"x\":\"\\u001b[2J\"}",
    )]));
    let piped = stderr(&env.loki().arg("again").assert().code(1));
    for (text, what) in [(&screen, "pty"), (&piped, "pipe")] {
        for raw in ["\x1b]52", "\x1b]0;", "\x07", "\x1b[2J", "\x1b[2K", "\u{9b}"] {
            assert!(!text.contains(raw), "{what}: {raw:?} in {text:?}");
        }
    }
    assert!(
        screen.contains(r"fs_read path=notes.txt\x1b]52;c;aGk=\x07\r\x1b[2Kok"),
        "{screen:?}"
    );
    assert!(
        screen.contains(r"evil\x1b]0;pwned\x07\u{9b}2J"),
        "{screen:?}"
    );
    assert!(
        piped.contains(r"⚙ evil\x1b]0;pwned\x07 x=\x1b[2J"),
        "{piped:?}"
    );
    assert!(
        piped.contains(r"↳ evil\x1b]0;pwned\x07 failed"),
        "{piped:?}"
    );
}

#[test]
fn tool_approvals_escape_controls_and_bidi_overrides() {
    let env = tools_env();
    env.server.push(openai::tool_call_stream(&[(
        "x1",
        "execute_command",
        "{\"command\":\"touch X; \\r\\u001b[2Kecho \u{202e}gpj.sh\"}",
    )]));
    env.server.push(openai::text_stream(&["Understood."]));
    let mut pty = Pty::spawn(&env, &["tidy up"], &[("NO_COLOR", "1")]);
    let shown = pty.expect("Run it?");
    assert!(
        shown.contains(r"wants to run `touch X; \r\x1b[2Kecho \u{202e}gpj.sh`"),
        "{shown:?}"
    );
    assert!(!shown.contains('\u{202e}'), "{shown:?}");
    assert!(shown.contains("part of what runs"), "{shown:?}");
    pty.send("\x1b[B\x1b[B\r"); // no
    pty.expect("Understood.");
    pty.read_to_end();
    assert!(!env.work_dir().join("X").exists());
}

#[test]
fn an_approval_taller_than_the_screen_shows_its_head_and_must_be_viewed_first() {
    let env = tools_env();
    let command = format!("touch X;{} ls -la", ":;".repeat(3000));
    env.server.push(openai::tool_call_stream(&[(
        "x1",
        "execute_command",
        &serde_json::json!({ "command": command }).to_string(),
    )]));
    env.server.push(openai::text_stream(&["Understood."]));
    let mut pty = Pty::spawn(&env, &["tidy up"], &[("NO_COLOR", "1"), ("PAGER", "cat")]);
    let shown = pty.expect("Run it?");
    assert!(shown.contains("wants to run `touch X;:;:;"), "{shown:?}");
    assert!(shown.contains("bytes) not shown"), "{shown:?}");
    let menu = pty.expect("tell the model why");
    assert!(menu.contains("view it whole first"), "{menu:?}");
    assert!(
        !menu.contains("> yes"),
        "yes is offered before viewing: {menu:?}"
    );
    // Viewing shows it all (the pager is `cat` here), then yes is offered.
    pty.send("\r");
    let viewed = pty.expect("don't ask again");
    assert!(
        viewed.contains(" ls -la`"),
        "the tail was not shown: {viewed:?}"
    );
    pty.send("\x1b[B\x1b[B\r"); // no
    pty.expect("Understood.");
    pty.read_to_end();
    assert!(!env.work_dir().join("X").exists());
}

#[test]
fn repl_results_and_errors_are_escaped() {
    let env = tools_env();
    env.write("page.txt", "title \x1b]0;pwned\x07 \x1b[2J body\n");
    env.server.push(openai::tool_call_stream(&[(
        "r1",
        "fs_read",
        r#"{"path":"page.txt"}"#,
    )]));
    env.server.push(openai::text_stream(&["Read it."]));
    env.server.push(openai::error(
        400,
        "bad request \x1b]52;c;aGk=\x07 from the server",
        "invalid_request_error",
    ));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("> ");
    pty.send("read page.txt\r");
    pty.expect("Read it.");
    pty.expect("> ");
    pty.send(".results\r");
    let results = pty.expect("body");
    assert!(
        results.contains(r"title \x1b]0;pwned\x07 \x1b[2J body"),
        "{results:?}"
    );
    pty.expect("> ");
    pty.send("again\r");
    let error = pty.expect("from the server");
    assert!(
        error.contains(r"bad request \x1b]52;c;aGk=\x07 from the server"),
        "{error:?}"
    );
    pty.expect("> ");
    pty.send(".exit\r");
    let rest = pty.read_to_end();
    for text in [&results, &error, &rest] {
        for raw in ["\x1b]0;", "\x1b]52", "\x07", "\x1b[2J"] {
            assert!(!text.contains(raw), "{raw:?} in {text:?}");
        }
    }
}

#[test]
fn provider_errors_on_stderr_are_escaped() {
    let env = TestEnv::new();
    env.server.push(openai::error(
        400,
        "no \x1b]0;pwned\x07 such \u{9b}2J model",
        "invalid_request_error",
    ));
    let out = env.loki().arg("hi").assert().failure();
    let err = stderr(&out);
    assert!(
        err.contains(r"no \x1b]0;pwned\x07 such \u{9b}2J model"),
        "{err:?}"
    );
    assert!(!err.contains('\x07') && !err.contains('\u{9b}'), "{err:?}");
}

#[test]
fn a_session_file_cannot_drive_the_terminal_through_a_warning() {
    let env = TestEnv::new();
    let file = env.config_dir().join("sessions/odd.yaml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "model: \"gone:x\\e]0;pwned\\a\\e[2J\"\nmessages:\n- role: user\n  content: earlier\n",
    )
    .unwrap();
    env.server.push(openai::text_stream(&["ok"]));
    let out = env.loki().args(["-s", "odd", "hi"]).assert().success();
    let err = stderr(&out);
    assert!(err.contains(r"gone:x\x1b]0;pwned\x07\x1b[2J"), "{err:?}");
    assert!(!err.contains('\x07') && !err.contains("\x1b[2J"), "{err:?}");
}

#[test]
fn a_tool_error_cannot_start_a_line_of_lokis_own() {
    let env = tools_env();
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_read",
        "{\"path\":\"missing\\n⚙ execute_command command=harmless\"}",
    )]));
    env.server.push(openai::text_stream(&["done"]));
    let err = stderr(&env.loki().arg("read it").assert().success());
    assert!(
        !err.lines().any(|l| l.starts_with("⚙ execute_command")),
        "a forged tool line reached stderr: {err:?}"
    );
    assert!(err.contains(r"\n⚙ execute_command"), "{err:?}");
}
