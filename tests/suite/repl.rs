//! The REPL, driven through a pseudo-terminal against the fake provider.

use std::time::Duration;

use serde_json::json;

use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::pty::Pty;

const PROMPT: &str = "fake:gpt-4o-mini)> ";

fn start(env: &TestEnv) -> Pty {
    let mut pty = Pty::spawn(env, &[], &[("NO_COLOR", "1")]);
    let banner = pty.expect(PROMPT);
    assert!(
        banner.contains("fake:gpt-4o-mini") && banner.contains(".help"),
        "{banner:?}"
    );
    pty
}

fn send_line(pty: &mut Pty, line: &str) {
    pty.send(line);
    pty.send("\r");
}

/// Submits a line, waits for `until` in the output, then for the next prompt. (The line
/// editor repaints the prompt while typing, so the prompt alone is no sign of progress.)
fn submit(pty: &mut Pty, line: &str, until: &str) -> String {
    submit_to(pty, line, until, PROMPT)
}

/// [`submit`] with a different prompt to wait for.
fn submit_to(pty: &mut Pty, line: &str, until: &str, prompt: &str) -> String {
    send_line(pty, line);
    let mut out = pty.expect(until);
    out.push_str(&pty.expect(prompt));
    out
}

#[test]
fn banner_help_question_and_exit() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["Four", "."]));
    let mut pty = start(&env);
    let help = submit(&mut pty, ".help", "Ctrl-D or .exit");
    assert!(
        help.contains(".model") && help.contains(".regenerate") && help.contains(":::"),
        "{help:?}"
    );

    submit(&mut pty, "what is 2+2?", "Four.");
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([{"role": "user", "content": "what is 2+2?"}])
    );
    send_line(&mut pty, ".exit");
    pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
}

#[test]
fn conversation_is_kept_between_turns_and_can_be_emptied() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["first answer"]));
    env.server.push(openai::text_stream(&["second answer"]));
    env.server.push(openai::text_stream(&["fresh"]));
    let mut pty = start(&env);
    submit(&mut pty, "one", "first answer");
    submit(&mut pty, "two", "second answer");
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": "first answer"},
            {"role": "user", "content": "two"}
        ])
    );
    submit(&mut pty, ".empty session", "conversation cleared");
    submit(&mut pty, "three", "fresh");
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([{"role": "user", "content": "three"}])
    );
}

#[test]
fn model_switch_changes_the_request_and_the_prompt() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    send_line(&mut pty, ".model fake:text-only");
    pty.expect("model: fake:text-only");
    pty.expect("fake:text-only)> ");
    send_line(&mut pty, "hi");
    pty.expect("Hello from fake");
    pty.expect("fake:text-only)> ");
    assert_eq!(env.server.last_request().json()["model"], "text-only");
    send_line(&mut pty, ".model nope:x");
    pty.expect("unknown client `nope`");
}

#[test]
fn set_stream_false_sends_a_plain_request_and_bad_values_are_refused() {
    let env = TestEnv::new();
    env.server.push(openai::text_json("whole"));
    let mut pty = start(&env);
    submit(&mut pty, ".set stream false", "stream: false");
    submit(&mut pty, "hi", "whole");
    assert!(env.server.last_request().json().get("stream").is_none());

    submit(
        &mut pty,
        ".set temperature hot",
        "invalid value `hot` for temperature",
    );
    submit(&mut pty, ".set temperature 0.4", "temperature: 0.4");
    submit(&mut pty, "again", "Hello from fake");
    assert_eq!(env.server.last_request().json()["temperature"], json!(0.4));
}

#[test]
fn ctrl_c_cancels_a_slow_answer_and_the_next_question_works() {
    let env = TestEnv::new();
    let parts: Vec<String> = (0..40).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    env.server
        .push(openai::text_stream(&refs).frame_delay(Duration::from_millis(100)));
    env.server.push(openai::text_stream(&["next works"]));
    let mut pty = start(&env);
    send_line(&mut pty, "talk slowly");
    pty.expect("w2 ");
    pty.send("\x03");
    let out = pty.expect("(interrupted)");
    assert!(!out.contains("w39"), "{out:?}");
    pty.expect(PROMPT);
    submit(&mut pty, "and now?", "next works");
    let messages = env.server.last_request().json()["messages"].clone();
    assert_eq!(messages[0]["content"], "talk slowly");
    assert!(
        messages[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("w0 w1 w2"),
        "partial kept: {messages}"
    );
    assert_eq!(messages[2]["content"], "and now?");
}

#[test]
fn ctrl_c_at_the_prompt_explains_how_to_quit_and_ctrl_d_quits() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    pty.send("\x03");
    pty.expect("Ctrl-D");
    pty.expect(PROMPT);
    pty.send("\x04");
    pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
}

#[test]
fn tab_completes_dot_commands() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    // A unique prefix completes; the completed command runs.
    pty.send(".regen\t");
    pty.expect(".regenerate");
    pty.send("\r");
    pty.expect("no answer to regenerate yet");
}

#[test]
fn triple_colon_multiline_input() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    pty.send(":::\r");
    pty.send("line one\r");
    pty.send("line two\r");
    pty.send(":::\r");
    pty.expect("Hello from fake");
    assert_eq!(
        env.server.last_request().json()["messages"][0]["content"],
        "line one\nline two"
    );
}

#[test]
fn continue_and_regenerate_send_the_right_messages() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["Once upon"]));
    env.server.push(openai::text_stream(&[" a time"]));
    env.server.push(openai::text_stream(&["Another tale"]));
    env.server.push(openai::text_stream(&["ok"]));
    let mut pty = start(&env);
    submit(&mut pty, "tell a story", "Once upon");
    submit(&mut pty, ".continue", " a time");
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([
            {"role": "user", "content": "tell a story"},
            {"role": "assistant", "content": "Once upon"}
        ])
    );

    submit(&mut pty, ".regenerate", "Another tale");
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([{"role": "user", "content": "tell a story"}])
    );

    submit(&mut pty, "next", "ok");
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([
            {"role": "user", "content": "tell a story"},
            {"role": "assistant", "content": "Another tale"},
            {"role": "user", "content": "next"}
        ])
    );
}

#[test]
fn errors_keep_the_repl_alive() {
    let env = TestEnv::new();
    env.server.push(openai::error(401, "bad key", "auth"));
    env.server.push(openai::text_stream(&["recovered"]));
    let mut pty = start(&env);
    submit(&mut pty, "hi", "rejected the credentials (HTTP 401)");
    submit(&mut pty, ".frobnicate", "unknown command");
    submit(
        &mut pty,
        ".agent no-such-agent",
        "no agent named `no-such-agent`",
    );
    submit(&mut pty, ".clear todo", "no agent is active");
    // A role that does not exist is offered to be written; declined, it is unknown.
    pty.send(".role no-such-role\r");
    pty.expect("Create it in the editor?");
    // One key answers (an Enter after it would be type-ahead: an empty line).
    pty.send("n");
    pty.expect("unknown role `no-such-role`");
    pty.expect("> ");
    submit(&mut pty, "hi again", "recovered");
}

#[test]
fn prompt_and_file_commands() {
    let env = TestEnv::new();
    env.write("notes.txt", "remember the milk\n");
    let mut pty = start(&env);
    send_line(&mut pty, ".prompt be brief");
    pty.expect("role: temp");
    pty.expect("fake:gpt-4o-mini)temp> ");
    send_line(&mut pty, ".file notes.txt -- what do I need?");
    pty.expect("Hello from fake");
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "what do I need?\n\n============ FILE: notes.txt ============\nremember the milk"}
        ])
    );
}

#[test]
fn custom_prompt_template() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "left_prompt: '[{{model_name}}{{?stream  streaming}}] '\n{cfg}"
    ));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("[gpt-4o-mini streaming] ");
}

#[test]
fn piped_stdin_without_arguments_is_a_prompt_not_a_repl() {
    let env = TestEnv::new();
    let out = env.loki().write_stdin("from a pipe").assert().success();
    assert_eq!(crate::common::stdout(&out), "Hello from fake\n");
}

/// Writes an executable script into the test's bin dir and returns that dir.
fn script(env: &TestEnv, name: &str, body: &str) -> std::path::PathBuf {
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

#[test]
fn copy_hands_the_last_answer_to_the_clipboard_tool() {
    let env = TestEnv::new();
    let clip = env.dir.path().join("clipboard.txt");
    let bin = script(&env, "xclip", &format!("cat > '{}'", clip.display()));
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    env.server.push(openai::text_stream(&["copy me"]));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1"), ("PATH", &path)]);
    pty.expect(PROMPT);
    submit(&mut pty, ".copy", "no answer to copy yet");
    submit(&mut pty, "say it", "copy me");
    submit(&mut pty, ".copy", "copied the last answer (xclip)");
    assert_eq!(std::fs::read_to_string(&clip).unwrap(), "copy me");
}

#[test]
fn copy_without_any_clipboard_says_so() {
    let env = TestEnv::new();
    let bin = script(&env, "true-only", "true");
    let mut pty = Pty::spawn(
        &env,
        &[],
        &[("NO_COLOR", "1"), ("PATH", &bin.display().to_string())],
    );
    pty.expect(PROMPT);
    submit(&mut pty, "hi", "Hello from fake");
    submit(&mut pty, ".copy", "no clipboard is available here");
}

#[test]
fn edit_config_opens_the_editor_and_reloads() {
    let env = TestEnv::new();
    // The "editor" switches the default model in the file it is given.
    let bin = script(
        &env,
        "fake-editor",
        "sed -i 's/^model: .*/model: fake:text-only/' \"$1\"",
    );
    let editor = bin.join("fake-editor").display().to_string();
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1"), ("EDITOR", &editor)]);
    pty.expect(PROMPT);
    submit_to(&mut pty, ".edit config", "reloaded", "fake:text-only)> ");
    submit_to(&mut pty, ".info", "keybindings", "fake:text-only)> ");
    // The new default model answers the next turn (the prompt shows it).
    submit_to(&mut pty, "hi", "Hello from fake", "fake:text-only)> ");
    assert_eq!(env.server.last_request().json()["model"], "text-only");
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    assert!(cfg.contains("model: fake:text-only"));
}

#[test]
fn info_and_vi_keybindings() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("keybindings: vi\n{cfg}"));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(PROMPT);
    let info = submit(&mut pty, ".info", "log_path");
    assert!(
        info.contains("keybindings                   vi"),
        "{info:?}"
    );
    assert!(
        info.contains("model                         fake:gpt-4o-mini"),
        "{info:?}"
    );
    assert!(
        info.contains("usage                         none yet"),
        "{info:?}"
    );
    env.server
        .push(openai::text_stream_with_usage(&["Priced."], 2000, 100));
    let priced = "fake:priced)> ";
    submit_to(&mut pty, ".model fake:priced", "model: fake:priced", priced);
    submit_to(&mut pty, "hi", "Priced.", priced);
    let info = submit_to(&mut pty, ".info", "log_path", priced);
    assert!(
        info.contains("usage                         2000 in / 100 out, $0.0048 over 1 turn"),
        "{info:?}"
    );
}

#[test]
fn history_persists_between_runs() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    submit(&mut pty, "remember this line", "Hello from fake");
    send_line(&mut pty, ".exit");
    pty.read_to_end();
    let history = std::fs::read_to_string(env.config_dir().join("history.txt")).unwrap();
    assert!(history.contains("remember this line"), "{history}");
    crate::common::assert_private(&env.config_dir().join("history.txt"));
}

#[test]
fn alt_enter_ctrl_j_and_bracketed_paste_make_multi_line_messages() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    pty.send("first");
    pty.send("\x1b\r"); // Alt-Enter
    pty.send("second");
    pty.send("\n"); // Ctrl-J
    pty.send("third\r");
    pty.expect("Hello from fake");
    pty.expect(PROMPT);
    assert_eq!(
        env.server.last_request().json()["messages"][0]["content"],
        "first\nsecond\nthird"
    );

    pty.send("\x1b[200~pasted one\npasted two\x1b[201~");
    pty.send("\r");
    pty.expect("Hello from fake");
    pty.expect(PROMPT);
    let messages = env.server.last_request().json()["messages"].clone();
    assert_eq!(messages[2]["content"], "pasted one\npasted two");
}

#[test]
fn ctrl_o_edits_the_message_in_the_editor() {
    let env = TestEnv::new();
    let bin = script(
        &env,
        "fake-editor",
        "printf 'written in the editor' > \"$1\"",
    );
    let editor = bin.join("fake-editor").display().to_string();
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1"), ("EDITOR", &editor)]);
    pty.expect(PROMPT);
    pty.send("draft");
    pty.send("\x0f"); // Ctrl-O
    pty.expect("written in the editor");
    pty.send("\r");
    pty.expect("Hello from fake");
    assert_eq!(
        env.server.last_request().json()["messages"][0]["content"],
        "written in the editor"
    );
}

#[test]
fn ctrl_o_with_an_editor_that_cannot_run_says_so_and_keeps_the_line() {
    let env = TestEnv::new();
    let mut pty = Pty::spawn(
        &env,
        &[],
        &[("NO_COLOR", "1"), ("EDITOR", "/nonexistent/editor")],
    );
    pty.expect(PROMPT);
    pty.send("kept line");
    pty.send("\x0f"); // Ctrl-O
    pty.expect("could not run the editor `/nonexistent/editor`");
    // The REPL is still there with the line as typed.
    pty.send("\r");
    pty.expect("Hello from fake");
    assert_eq!(
        env.server.last_request().json()["messages"][0]["content"],
        "kept line"
    );
}

#[test]
fn roles_in_the_repl() {
    let env = TestEnv::new();
    env.write_config(&std::fs::read_to_string(env.config_path()).unwrap());
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(
        roles.join("pirate.md"),
        "---\nmodel: fake:text-only\ntemperature: 0.9\n---\nTalk like a pirate.\n",
    )
    .unwrap();
    let mut pty = start(&env);
    send_line(&mut pty, ".role pirate");
    pty.expect("role: pirate");
    pty.expect("fake:text-only)pirate> ");
    let pirate = "fake:text-only)pirate> ";
    submit_to(&mut pty, "ahoy?", "Hello from fake", pirate);
    let body = env.server.last_request().json();
    assert_eq!(body["model"], "text-only");
    assert_eq!(body["temperature"], json!(0.9));
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Talk like a pirate."})
    );
    let info = submit_to(&mut pty, ".info role", "Talk like a pirate.", pirate);
    assert!(info.contains("temperature: 0.9"), "{info:?}");
    send_line(&mut pty, ".exit role");
    pty.expect("role: none");
    // The role's model was the role's: leaving it brings back the conversation's.
    pty.expect(PROMPT);
    submit_to(
        &mut pty,
        ".model fake:gpt-4o-mini",
        "model: fake:gpt-4o-mini",
        PROMPT,
    );
    // One message with a role leaves the conversation's role unchanged.
    submit(&mut pty, ".role pirate just this once", "Hello from fake");
    assert_eq!(
        env.server.last_request().json()["messages"][0]["role"],
        "system"
    );
    submit(&mut pty, "plain again", "Hello from fake");
    let body = env.server.last_request().json();
    assert_eq!(body["messages"][0]["role"], "user");
}

#[test]
fn save_edit_and_delete_roles_and_sessions() {
    let env = TestEnv::new();
    // The editor appends a line to whatever file it is given: a comment to a role, a
    // setting to a session (whose YAML is data: comments are not kept).
    let bin = script(
        &env,
        "fake-editor",
        "case \"$1\" in *.yaml) printf 'temperature: 0.25\\n' >> \"$1\";; \
         *) printf '# Edited by hand.\\n' >> \"$1\";; esac",
    );
    let editor = bin.join("fake-editor").display().to_string();
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1"), ("EDITOR", &editor)]);
    pty.expect(PROMPT);
    let roles = env.config_dir().join("roles");

    send_line(&mut pty, ".prompt Be nice.");
    pty.expect("role: temp");
    pty.expect("temp> ");
    send_line(&mut pty, ".save role nice");
    pty.expect("saved");
    pty.expect("nice> ");
    assert_eq!(
        std::fs::read_to_string(roles.join("nice.md")).unwrap(),
        "Be nice.\n"
    );
    send_line(&mut pty, ".edit role");
    pty.expect("role: nice");
    pty.expect("nice> ");
    send_line(&mut pty, "hi");
    pty.expect("Hello from fake");
    pty.expect("nice> ");
    assert_eq!(
        env.server.last_request().json()["messages"][0]["content"],
        "Be nice.\n# Edited by hand."
    );
    send_line(&mut pty, ".exit role");
    pty.expect(PROMPT);
    submit(&mut pty, ".delete role nice", "deleted");
    assert!(!roles.join("nice.md").exists());

    send_line(&mut pty, ".session notes");
    // The conversation so far is offered to the new session: not this time.
    pty.expect("Carry the conversation so far (2 messages) into session `notes`?");
    pty.send("n");
    pty.expect("session: notes (new)");
    pty.expect("notes) ");
    send_line(&mut pty, ".edit session");
    pty.expect("reloaded the session");
    pty.expect("notes) ");
    let file = env.session_file("notes");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("temperature: 0.25")
    );
    send_line(&mut pty, ".exit session");
    pty.expect(PROMPT);
    submit(&mut pty, ".delete session notes", "deleted session notes");
    assert!(!file.exists());
}
