//! Fixes to the REPL from issue 14: `.set` keys, completion, `.edit config`, history,
//! sessions and prompts, each driven through the real binary in a PTY.

use serde_json::json;

use crate::common::fake_llm::openai;
use crate::common::pty::Pty;
use crate::common::tool_names;
use crate::common::{TestEnv, stdout};

const PROMPT: &str = "fake:gpt-4o-mini)> ";

fn start(env: &TestEnv) -> Pty {
    start_with(env, &[])
}

fn start_with(env: &TestEnv, extra: &[(&str, &str)]) -> Pty {
    let mut vars = vec![("NO_COLOR", "1")];
    vars.extend_from_slice(extra);
    let mut pty = Pty::spawn(env, &[], &vars);
    pty.expect(PROMPT);
    pty
}

/// Submits a line, waits for `until`, then for `prompt`.
fn submit_to(pty: &mut Pty, line: &str, until: &str, prompt: &str) -> String {
    pty.send(line);
    pty.send("\r");
    let mut out = pty.expect(until);
    out.push_str(&pty.expect(prompt));
    out
}

fn submit(pty: &mut Pty, line: &str, until: &str) -> String {
    submit_to(pty, line, until, PROMPT)
}

// ----- item 5: `.set` keys -----

#[test]
fn set_top_p_above_one_is_refused() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    submit(
        &mut pty,
        ".set top_p 1.5",
        "invalid value `1.5` for top_p: expected a number from 0 to 1",
    );
    env.server.push(openai::text_stream(&["ok"]));
    submit(&mut pty, "hi", "ok");
    assert_eq!(env.server.last_request().json().get("top_p"), None);
}

#[test]
fn set_save_session_and_compression_threshold() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    // Outside a session: applies to the sessions of this conversation.
    submit(&mut pty, ".set save_session true", "save_session: true");
    let sprompt = "fake:gpt-4o-mini)work) ";
    submit_to(&mut pty, ".session work", "session: work (new)", sprompt);
    submit_to(
        &mut pty,
        ".set compression_threshold 1234",
        "compression_threshold: 1234 (this session)",
        sprompt,
    );
    env.server.push(openai::text_stream(&["noted"]));
    submit_to(&mut pty, "remember 7", "noted", sprompt);
    // Saved without asking, because save_session is true.
    submit(&mut pty, ".exit session", "saved");
    let file = std::fs::read_to_string(env.session_file("work")).unwrap();
    assert!(file.contains("compression_threshold: 1234"), "{file}");
    submit(
        &mut pty,
        ".set compression_threshold lots",
        "invalid value `lots` for compression_threshold",
    );
}

#[test]
fn set_enabled_mcp_servers_null_restores_the_configured_servers() {
    let bin = super::mcp::server_bin();
    let env = super::mcp::mcp_env(
        json!({
            "test": {"type": "stdio", "command": bin},
            "other": {"type": "stdio", "command": bin},
        }),
        "enabled_mcp_servers: test\n",
    );
    let mut pty = start(&env);
    submit(
        &mut pty,
        ".set enabled_mcp_servers other",
        "enabled_mcp_servers: other",
    );
    submit(
        &mut pty,
        ".set enabled_mcp_servers null",
        "enabled_mcp_servers: test (configured value)",
    );
    env.server.push(openai::text_stream(&["fine"]));
    submit(&mut pty, "hi", "fine");
    let names = tool_names(&env.server.last_request().json());
    assert!(names.iter().any(|n| n.starts_with("test_")), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("other_")), "{names:?}");
}

// ----- item 4: completion of `.set enabled_tools` / `.set enabled_mcp_servers` -----

#[test]
fn set_enabled_tools_completes_names_and_aliases_after_a_comma() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "mapping_tools:\n  readonly_fs: fs_cat,fs_ls\n{cfg}"
    ));
    let mut pty = start(&env);
    pty.send(".set enabled_tools get_cu\t");
    pty.expect("get_current_time");
    pty.send(",reado\t");
    pty.expect("readonly_fs");
    pty.send("\r");
    pty.expect("enabled_tools: get_current_time,readonly_fs (active: ");
    let out = pty.expect(PROMPT);
    assert!(
        // The REPL always adds the user-interaction tools.
        out.starts_with(
            "fs_cat, fs_ls, get_current_time, user__ask, user__confirm, user__input, user__checkbox)"
        ),
        "{out:?}"
    );
}

#[test]
fn set_enabled_mcp_servers_completes_server_names() {
    let bin = super::mcp::server_bin();
    let env = super::mcp::mcp_env(
        json!({
            "test": {"type": "stdio", "command": bin},
            "other": {"type": "stdio", "command": bin},
        }),
        "",
    );
    let mut pty = start(&env);
    pty.send(".set enabled_mcp_servers oth\t");
    pty.expect("other");
    pty.send("\r");
    pty.expect("enabled_mcp_servers: other");
}

// ----- item 3: `.edit config` -----

fn script(env: &TestEnv, name: &str, body: &str) -> String {
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[test]
fn edit_config_applies_a_valid_edit_and_keeps_the_old_config_on_a_bad_one() {
    let env = TestEnv::new();
    // First run: switch the model and set a temperature; second run: break the YAML.
    let count = env.dir.path().join("edits");
    let editor = script(
        &env,
        "fake-editor",
        &format!(
            "if [ -e '{c}' ]; then printf 'model: [broken\\n' >> \"$1\"; else touch '{c}'; \
             sed -i 's/^model: .*/model: fake:text-only\\ntemperature: 0.3/' \"$1\"; fi",
            c = count.display()
        ),
    );
    let mut pty = start_with(&env, &[("EDITOR", &editor)]);
    let new_prompt = "fake:text-only)> ";
    submit_to(&mut pty, ".edit config", "reloaded", new_prompt);
    env.server.push(openai::text_stream(&["one"]));
    submit_to(&mut pty, "hi", "one", new_prompt);
    let body = env.server.last_request().json();
    assert_eq!(body["model"], "text-only");
    assert_eq!(body["temperature"], json!(0.3));

    submit_to(
        &mut pty,
        ".edit config",
        "keeping the previous configuration",
        new_prompt,
    );
    env.server.push(openai::text_stream(&["two"]));
    submit_to(&mut pty, "again", "two", new_prompt);
    let body = env.server.last_request().json();
    assert_eq!(body["model"], "text-only");
    assert_eq!(body["temperature"], json!(0.3));
}

// ----- item 2: history at once, terminal restored on SIGTERM/SIGHUP -----

fn line_mode(pty: &Pty) -> bool {
    let master = pty.session.get_process().get_raw_handle().unwrap();
    let termios = rustix::termios::tcgetattr(&master).unwrap();
    termios
        .local_modes
        .contains(rustix::termios::LocalModes::ICANON)
}

fn kill(pty: &Pty, signal: &str) {
    let pid = pty.session.get_process().pid().as_raw().to_string();
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .unwrap();
    assert!(status.success());
}

fn history_reaches_the_file_at_once_and_signal_restores_terminal(signal: &str, code: i32) {
    let env = TestEnv::new();
    let mut pty = start(&env);
    env.server.push(openai::text_stream(&["noted"]));
    submit(&mut pty, "remember this line", "noted");
    submit(&mut pty, ".info", "keybindings");
    // Still running: both lines are on disk already.
    let path = env.config_dir().join("history.txt");
    let history = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        history.contains("remember this line") && history.contains(".info"),
        "{history:?}"
    );
    crate::common::assert_private(&path);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!line_mode(&pty), "the prompt is in raw mode");
    kill(&pty, signal);
    let out = pty.read_to_end();
    assert_eq!(pty.exit_code(), code, "{out:?}");
    assert!(line_mode(&pty), "{signal} left the terminal in raw mode");
    let history = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        history.matches("remember this line").count(),
        1,
        "{history:?}"
    );
}

#[test]
fn history_is_written_per_line_and_sigterm_restores_the_terminal() {
    history_reaches_the_file_at_once_and_signal_restores_terminal("TERM", 143);
}

#[test]
fn history_is_written_per_line_and_sighup_restores_the_terminal() {
    history_reaches_the_file_at_once_and_signal_restores_terminal("HUP", 129);
}

// ----- item 10: sessions -----

#[test]
fn session_after_some_conversation_offers_to_carry_it() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    env.server.push(openai::text_stream(&["first answer"]));
    submit(&mut pty, "first question", "first answer");
    pty.send(".session work\r");
    pty.expect("Carry the conversation so far (2 messages) into session `work`?");
    pty.send("y");
    let sprompt = "fake:gpt-4o-mini)work) ";
    pty.expect("session: work (new, with the 2 messages of this conversation)");
    pty.expect(sprompt);
    env.server.push(openai::text_stream(&["second answer"]));
    submit_to(&mut pty, "second question", "second answer", sprompt);
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([
            {"role": "user", "content": "first question"},
            {"role": "assistant", "content": "first answer"},
            {"role": "user", "content": "second question"}
        ])
    );
}

#[test]
fn role_in_a_non_empty_session_is_refused_with_a_reason() {
    let env = TestEnv::new();
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(roles.join("pirate.md"), "Talk like a pirate.").unwrap();
    let mut pty = start(&env);
    let sprompt = "fake:gpt-4o-mini)work) ";
    submit_to(&mut pty, ".session work", "session: work (new)", sprompt);
    env.server.push(openai::text_stream(&["hello"]));
    submit_to(&mut pty, "hi", "hello", sprompt);
    submit_to(
        &mut pty,
        ".role pirate",
        "session `work` already has 2 messages: its role cannot change",
        sprompt,
    );
    env.server.push(openai::text_stream(&["again"]));
    submit_to(&mut pty, "more", "again", sprompt);
    let sent = env.server.last_request().json()["messages"].to_string();
    assert!(!sent.contains("pirate"), "{sent}");
}

#[test]
fn compress_session_on_a_short_session_compresses_when_asked() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    let sprompt = "fake:gpt-4o-mini)work) ";
    submit_to(&mut pty, ".session work", "session: work (new)", sprompt);
    env.server.push(openai::text_stream(&["hello"]));
    submit_to(&mut pty, "hi there", "hello", sprompt);
    env.server
        .push(openai::text_json("The user greeted the assistant."));
    submit_to(
        &mut pty,
        ".compress session",
        "compressing the session",
        sprompt,
    );
    env.server.push(openai::text_stream(&["ok"]));
    submit_to(&mut pty, "next", "ok", sprompt);
    let sent = env.server.last_request().json()["messages"].clone();
    assert_eq!(sent[0]["role"], "system", "{sent}");
    assert!(
        sent[0]["content"]
            .as_str()
            .unwrap()
            .contains("The user greeted the assistant."),
        "{sent}"
    );
    assert!(!sent.to_string().contains("hi there"), "{sent}");
}

// ----- item 11: `.file %%`, MCP approval text, one MCP warning -----

#[test]
fn file_percent_percent_attaches_the_last_answer() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    submit(
        &mut pty,
        ".file %% -- translate it",
        "there is none yet in this conversation",
    );
    env.server.push(openai::text_stream(&["The sky is blue."]));
    submit(&mut pty, "colour of the sky?", "The sky is blue.");
    env.server.push(openai::text_stream(&["Il cielo è blu."]));
    submit(&mut pty, ".file %% -- translate it to italian", "Il cielo");
    let body = env.server.last_request().json();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    let content = last["content"].as_str().unwrap();
    assert!(
        content.contains("The sky is blue.") && content.contains("translate it to italian"),
        "{content}"
    );
}

#[test]
fn mcp_not_usable_warning_is_printed_once() {
    let bin = super::mcp::server_bin();
    let env = super::mcp::mcp_env(
        json!({"nokey": {"type": "stdio", "command": bin, "env": {"T": "{{NOT_SET_ANYWHERE}}"}}}),
        "enabled_mcp_servers: nokey\n",
    );
    let mut pty = start(&env);
    let mut out = String::new();
    for (question, answer) in [("one", "first"), ("two", "second"), ("three", "third")] {
        env.server.push(openai::text_stream(&[answer]));
        out.push_str(&submit(&mut pty, question, answer));
    }
    pty.send(".exit\r");
    out.push_str(&pty.read_to_end());
    assert_eq!(out.matches("is not usable").count(), 1, "{out:?}");
}

#[test]
fn mcp_approval_names_the_real_tool() {
    let notes = tempfile::NamedTempFile::new().unwrap();
    let env = super::mcp::mcp_env(
        json!({"test": {"type": "stdio", "command": super::mcp::server_bin(), "env": {"MCP_TEST_NOTES": notes.path().display().to_string()}}}),
        "enabled_mcp_servers: test\nmcp_tool_exposure: meta\n",
    );
    let mut pty = start(&env);
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "mcp__invoke_test",
        r#"{"tool":"note","arguments":{"line":"hello"}}"#,
    )]));
    env.server.push(openai::text_stream(&["Not noted."]));
    pty.send("take a note\r");
    let shown = pty.expect("Run it?");
    assert!(
        shown.contains(
            r#"note wants to call the MCP tool `note` of the server `test` with {"line":"hello"}"#
        ),
        "{shown:?}"
    );
    assert!(!shown.contains("mcp__invoke_test wants"), "{shown:?}");
    // Down twice to "no" (yes, always, no).
    pty.send("\x1b[B\x1b[B\r");
    pty.expect("Not noted.");
    assert_eq!(std::fs::read_to_string(notes.path()).unwrap(), "");
}

// ----- item 9: text prompts edit like the line editor; Ctrl-C at the name asks again -----

#[test]
fn session_name_prompt_handles_ctrl_u_ctrl_w_and_ctrl_c() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    let sprompt = "fake:gpt-4o-mini)temp) ";
    submit_to(&mut pty, ".session", "session: temp (new)", sprompt);
    env.server.push(openai::text_stream(&["hello"]));
    submit_to(&mut pty, "hi", "hello", sprompt);
    pty.send(".exit session\r");
    pty.expect("Save session `temp`?");
    pty.send("y");
    pty.expect("Session name:");
    // Ctrl-C at the name goes back to the question instead of dropping the session.
    pty.send("\x03");
    pty.expect("Save session `temp`?");
    pty.send("y");
    pty.expect("Session name:");
    // Ctrl-W removes the last word, Ctrl-U the rest: only "kept" remains.
    pty.send("junk word\x17");
    std::thread::sleep(std::time::Duration::from_millis(200));
    pty.send("\x15kept\r");
    pty.expect(PROMPT);
    pty.send(".exit\r");
    pty.read_to_end();
    assert!(
        env.session_file("kept").exists(),
        "session not saved as `kept`"
    );
}

#[test]
fn leaving_a_role_brings_back_the_model_and_settings_from_before_it() {
    let env = TestEnv::new();
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(
        roles.join("pricey.md"),
        "---\nmodel: fake:priced\ntemperature: 0.3\n---\nBe expensive.\n",
    )
    .unwrap();
    let mut pty = start(&env);
    submit(&mut pty, ".set temperature 0.7", "");
    submit_to(
        &mut pty,
        ".role pricey",
        "role: pricey",
        "fake:priced)pricey> ",
    );
    submit(&mut pty, ".exit role", "");
    env.server.push(openai::text_stream(&["back"]));
    submit(&mut pty, "hi", "back");
    let sent = env.server.last_request().json();
    assert_eq!(sent["model"], "gpt-4o-mini", "{sent}");
    assert_eq!(sent["temperature"], 0.7, "{sent}");
}

#[test]
fn a_conversation_not_carried_into_a_new_session_is_kept_as_history() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    env.server.push(openai::text_stream(&["first answer"]));
    submit(&mut pty, "first question", "first answer");
    pty.send(".session work\r");
    pty.expect("Carry the conversation so far (2 messages) into session `work`?");
    pty.send("n");
    let sprompt = "fake:gpt-4o-mini)work) ";
    pty.expect("session: work (new)");
    pty.expect(sprompt);
    // What was said before is in the history now, not lost.
    let listed = env.loki().arg("--list-sessions").assert().success();
    assert!(
        stdout(&listed).contains("first-question"),
        "{}",
        stdout(&listed)
    );
    env.server.push(openai::text_stream(&["in work"]));
    submit_to(&mut pty, "second question", "in work", sprompt);
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([{"role": "user", "content": "second question"}])
    );
}
