//! Images: Ctrl-V (and `.paste`) attaches the clipboard's image to the next prompt in the
//! REPL; `fs_read` of an image gives a vision model the image and a model without vision
//! a note; images already in a conversation are never sent to a model without vision
//! (left out with a note, counted in `.info`).

use serde_json::Value;

use crate::common::fake_llm::openai;
use crate::common::pty::Pty;
use crate::common::{TestEnv, default_config, stderr, stdout};

/// A PNG's signature and header: `width`×`height`, as a screenshot tool writes it (the
/// pixels do not matter here).
fn png(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    bytes.extend_from_slice(&width.to_be_bytes());
    bytes.extend_from_slice(&height.to_be_bytes());
    bytes.extend_from_slice(b"\x08\x06\0\0\0\x1f\x15\xc4\x89");
    bytes
}

/// The test config with every tool on and a model `blind` that calls tools but has no
/// vision (`gpt-4o-mini` has both).
fn images_env() -> TestEnv {
    let env = TestEnv::new();
    let config = default_config(&env.server.base_url()).replace(
        "      - name: text-only\n",
        "      - name: blind\n        supports_function_calling: true\n      - name: text-only\n",
    );
    // Sessions are saved on leaving without a question (the REPL tests leave with `.exit`).
    env.write_config(&format!("enabled_tools: all\nsave_session: true\n{config}"));
    env
}

/// The `image_url` URLs of a request's messages.
fn image_urls(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|p| p["type"] == "image_url")
        .filter_map(|p| p["image_url"]["url"].as_str().map(str::to_string))
        .collect()
}

/// A directory holding one executable script `name` with `body`, for PATH.
fn fake_tool(env: &TestEnv, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = env.root().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin.display().to_string()
}

fn path_with(dir: &str) -> String {
    format!("{dir}:{}", std::env::var("PATH").unwrap_or_default())
}

#[test]
fn ctrl_v_pastes_the_clipboard_image_into_the_next_prompt() {
    let env = images_env();
    let shot = env.root().join("clipboard.png");
    std::fs::write(&shot, png(3, 2)).unwrap();
    // xclip as a screenshot tool leaves it: the clipboard as image/png on stdout.
    let bin = fake_tool(
        &env,
        "xclip",
        &format!(
            "case \"$*\" in *image/png*) cat '{}';; *) exit 1;; esac",
            shot.display()
        ),
    );
    env.server
        .push(openai::text_stream(&["A tiny screenshot."]));
    let path = path_with(&bin);
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1"), ("PATH", &path)]);
    pty.expect(")> ");
    pty.send("\x16");
    let note = pty.expect("[image attached: 33 bytes");
    assert!(!note.contains("error"), "{note:?}");
    pty.send("what is this?\r");
    pty.expect("A tiny screenshot.");
    let body = env.server.last_request().json();
    let urls = image_urls(&body);
    assert_eq!(urls.len(), 1, "{body}");
    assert!(
        urls[0].starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{urls:?}"
    );
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["text"], "what is this?", "{last}");
    // The image went with that prompt only.
    env.server.push(openai::text_stream(&["Nothing new."]));
    pty.expect(")> ");
    pty.send("and now?\r");
    pty.expect("Nothing new.");
    let body = env.server.last_request().json();
    assert_eq!(
        image_urls(&body).len(),
        1,
        "only the earlier one, in the history"
    );
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}

#[test]
fn paste_without_a_clipboard_tool_or_an_image_says_so_in_one_line() {
    let env = images_env();
    let empty = env.root().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let empty = empty.display().to_string();
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1"), ("PATH", &empty)]);
    pty.expect(")> ");
    pty.send(".paste\r");
    pty.expect("[nothing pasted: no clipboard tool to read images with");
    // Stopped rather than left: with no PATH at all, leaving waits on something else.
    let _ = pty.session.get_process_mut().exit(true);

    // A clipboard holding text only: the tool fails for image/png.
    let bin = fake_tool(
        &env,
        "wl-paste",
        "echo 'No suitable type of content copied' >&2; exit 1",
    );
    let path = path_with(&bin);
    env.server.push(openai::text_stream(&["Plain answer."]));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1"), ("PATH", &path)]);
    pty.expect(")> ");
    pty.send("\x16");
    pty.expect("[nothing pasted: the clipboard holds no image");
    // Typed once the line editor is back: keys sent while it handles Ctrl-V can be lost.
    pty.expect(")> ");
    pty.send("hello\r");
    pty.expect("Plain answer.");
    assert!(image_urls(&env.server.last_request().json()).is_empty());
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
}

#[test]
fn fs_read_of_a_png_gives_a_vision_model_the_image() {
    let env = images_env();
    env.write("shots/screen.png", png(640, 480));
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_read",
        r#"{"path":"shots/screen.png"}"#,
    )]));
    env.server.push(openai::text_stream(&["I see the screen."]));
    let out = env
        .loki()
        .arg("look at shots/screen.png")
        .assert()
        .success();
    assert_eq!(stdout(&out), "I see the screen.\n");
    let body = env.server.last_request().json();
    let results = super::tools::tool_results(&body);
    assert_eq!(
        results[0].1,
        "screen.png: PNG image, 640×480, 33 bytes; the image follows the tool results"
    );
    let urls = image_urls(&body);
    assert_eq!(urls.len(), 1, "{body}");
    assert!(urls[0].starts_with("data:image/png;base64,"), "{urls:?}");
    // The image comes after the tool result, in a user message.
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][1]["type"], "image_url");
}

#[test]
fn fs_read_of_a_png_tells_a_model_without_vision_it_cannot_see_it() {
    let env = images_env();
    env.write("screen.png", png(8, 4));
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "fs_read",
        r#"{"path":"screen.png"}"#,
    )]));
    env.server.push(openai::text_stream(&["I cannot see it."]));
    env.loki()
        .args(["-m", "fake:blind", "look at screen.png"])
        .assert()
        .success();
    let body = env.server.last_request().json();
    let results = super::tools::tool_results(&body);
    assert_eq!(
        results[0].1,
        "screen.png: PNG image, 8×4, 33 bytes; this model cannot see images"
    );
    assert!(image_urls(&body).is_empty(), "{body}");
}

#[test]
fn a_session_with_an_image_continued_with_a_blind_model_sends_no_image() {
    let env = images_env();
    env.write("shot.png", png(2, 2));
    env.server.push(openai::text_stream(&["A small square."]));
    env.loki()
        .args(["-s", "shots", "-f", "shot.png", "what is this?"])
        .assert()
        .success();
    assert_eq!(image_urls(&env.server.last_request().json()).len(), 1);

    env.server.push(openai::text_stream(&["Text only here."]));
    let out = env
        .loki()
        .args(["-s", "shots", "-m", "fake:blind", "and the colour?"])
        .assert()
        .success();
    let body = env.server.last_request().json();
    assert!(image_urls(&body).is_empty(), "{body}");
    let sent = body.to_string();
    assert!(sent.contains("what is this?"), "{sent}");
    assert!(
        sent.contains("not sent: this model cannot see images"),
        "{sent}"
    );
    let err = stderr(&out);
    assert_eq!(
        err.matches("1 image(s) in the conversation not sent")
            .count(),
        1,
        "{err}"
    );

    // `.info` counts what each request leaves out.
    let mut pty = Pty::spawn(
        &env,
        &["-s", "shots", "-m", "fake:blind"],
        &[("NO_COLOR", "1")],
    );
    pty.expect("shots) ");
    pty.send(".info\r");
    pty.expect("1 in the history, 1 dropped");
    pty.expect("shots) ");
    pty.send(".exit\r");
    pty.read_to_end();
}
