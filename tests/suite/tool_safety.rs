//! What a hostile model can make tools do: delete the working tree, race a symlink to
//! write outside it, read loki's own credentials from a command's environment, kill a
//! script with a flood of output, or hang a call with a background child.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::tools::{tool_results, tools_env, write_tool};
use crate::common::fake_llm::openai;
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr};

/// The content of the tool result with id `id` in the last request.
fn result_of(env: &TestEnv, id: &str) -> String {
    tool_results(&env.server.last_request().json())
        .into_iter()
        .find(|(call, _)| call == id)
        .map(|(_, content)| content)
        .unwrap_or_else(|| panic!("no result for {id}"))
}

#[test]
fn fs_rm_never_deletes_the_working_tree() {
    let env = tools_env("auto_approve_tools: [fs_rm]\n");
    env.write(".git/HEAD", "ref: refs/heads/main\n");
    env.write("sub/a.txt", "a");
    env.write("sub/b/c.txt", "c");
    env.write("keep.txt", "k");
    env.write("old.txt", "o");
    let absolute = env.work_dir().canonicalize().unwrap().display().to_string();
    let absolute = json!({ "path": absolute }).to_string();
    env.server.push(openai::tool_call_stream(&[
        ("r1", "fs_rm", r#"{"path":""}"#),
        ("r2", "fs_rm", r#"{"path":"."}"#),
        ("r3", "fs_rm", r#"{"path":"sub/.."}"#),
        ("r4", "fs_rm", &absolute),
        ("r5", "fs_rm", r#"{"path":".."}"#),
        // A directory with contents: auto-approval does not cover it, and without a
        // terminal to ask on it is refused.
        ("r6", "fs_rm", r#"{"path":"sub"}"#),
        // A plain file: auto-approved.
        ("r7", "fs_rm", r#"{"path":"old.txt"}"#),
    ]));
    env.server.push(openai::text_stream(&["Cleaned up."]));
    env.loki().arg("clean up").assert().success();
    let work = env.work_dir();
    assert!(work.join(".git/HEAD").exists(), "the tree was deleted");
    assert!(work.join("sub/b/c.txt").exists());
    assert!(work.join("keep.txt").exists());
    assert!(!work.join("old.txt").exists(), "a plain delete still works");
    for id in ["r1", "r2", "r3", "r4", "r5"] {
        let result = result_of(&env, id);
        assert!(
            result.contains("is the working directory or contains it"),
            "{id}: {result}"
        );
    }
    assert!(result_of(&env, "r6").contains("declined"));
    assert!(result_of(&env, "r7").contains("deleted old.txt"));
}

#[test]
fn yolo_deletes_directories_but_never_the_tree() {
    let env = tools_env("");
    env.write(".git/HEAD", "ref: refs/heads/main\n");
    env.write("build/out/x.o", "x");
    env.server.push(openai::tool_call_stream(&[
        ("r1", "fs_rm", r#"{"path":"build/.."}"#),
        ("r2", "fs_rm", r#"{"path":"build"}"#),
    ]));
    env.server.push(openai::text_stream(&["Done."]));
    env.loki().args(["--yolo", "clean"]).assert().success();
    assert!(env.work_dir().join(".git/HEAD").exists());
    assert!(!env.work_dir().join("build").exists());
    assert!(result_of(&env, "r1").contains("is the working directory or contains it"));
    assert!(result_of(&env, "r2").contains("deleted build"));
}

#[test]
fn a_recursive_delete_shows_what_goes_and_is_never_covered_by_always() {
    let env = tools_env("");
    env.write("a.txt", "a");
    env.write("sub/x.txt", "x");
    env.write("sub/deep/y.txt", "y");
    env.server.push(openai::tool_call_stream(&[(
        "d1",
        "fs_rm",
        r#"{"path":"a.txt"}"#,
    )]));
    env.server.push(openai::tool_call_stream(&[(
        "d2",
        "fs_rm",
        r#"{"path":"sub"}"#,
    )]));
    env.server.push(openai::text_stream(&["Deleted."]));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("> ");
    pty.send("clean up\r");
    pty.expect("wants to delete a.txt");
    pty.expect("Run it?");
    pty.send("\x1b[B\r"); // yes, and don't ask again
    pty.expect("sub/deep/y.txt");
    pty.expect(
        "wants to delete the directory sub and everything in it: 2 files and 1 directory \
         (sub/deep/, sub/deep/y.txt, sub/x.txt)",
    );
    pty.expect("Run it?");
    // The second option is "no" here: "don't ask again" is not offered.
    pty.send("\x1b[B\r");
    pty.expect("Deleted.");
    pty.expect("> ");
    pty.send(".exit\r");
    pty.read_to_end();
    assert!(!env.work_dir().join("a.txt").exists());
    assert!(env.work_dir().join("sub/deep/y.txt").exists());
    assert!(result_of(&env, "d2").contains("declined"));
}

/// Swaps `dir` and `link` (a symlink out of the tree) back and forth until `stop`.
#[cfg(target_os = "linux")]
fn keep_swapping(dir: &Path, link: &Path, stop: &AtomicBool) -> usize {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    let mut swaps = 0;
    while !stop.load(Ordering::Relaxed) {
        renameat_with(CWD, dir, CWD, link, RenameFlags::EXCHANGE).expect("RENAME_EXCHANGE");
        swaps += 1;
        std::thread::yield_now();
    }
    // Leave the real directory in place.
    if std::fs::symlink_metadata(dir)
        .unwrap()
        .file_type()
        .is_symlink()
    {
        renameat_with(CWD, dir, CWD, link, RenameFlags::EXCHANGE).unwrap();
    }
    swaps
}

#[cfg(target_os = "linux")]
#[test]
fn writes_never_land_outside_while_a_directory_is_swapped_for_a_symlink() {
    let env = tools_env(
        "auto_approve_tools: [fs_write, fs_patch, fs_mkdir, fs_rm]\nmax_tool_rounds: 12\n",
    );
    let outside = env.root().join("outside");
    let dir = env.work_dir().join("d");
    let link = env.work_dir().join("d.swap");
    std::fs::create_dir(&outside).unwrap();
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    // ~1,000 calls: at the escape rate seen before the fix (7 in ~900) the old code
    // would pass this test with a probability well under 0.1%.
    const ROUNDS: usize = 10;
    const CALLS: usize = 100;
    let diff = "--- a/p\n+++ b/p\n@@ -1 +1 @@\n-one\n+two\n";
    for round in 0..ROUNDS {
        let mut calls: Vec<(String, &str, String)> = Vec::new();
        for i in 0..CALLS {
            let name = format!("{round}_{i}");
            let call = match i % 5 {
                0 => {
                    // Present on both sides: only the inside one may go.
                    std::fs::write(dir.join(format!("rm{name}")), "in").unwrap();
                    std::fs::write(outside.join(format!("rm{name}")), "out").unwrap();
                    ("fs_rm", json!({"path": format!("d/rm{name}")}))
                }
                1 => {
                    std::fs::write(dir.join(format!("p{name}")), "one\n").unwrap();
                    std::fs::write(outside.join(format!("p{name}")), "one\n").unwrap();
                    (
                        "fs_patch",
                        json!({"path": format!("d/p{name}"), "contents": diff}),
                    )
                }
                2 => ("fs_mkdir", json!({"path": format!("d/m{name}/n")})),
                3 => (
                    "fs_write",
                    json!({"path": format!("d/new{name}/w.txt"), "contents": "w"}),
                ),
                _ => (
                    "fs_write",
                    json!({"path": format!("d/w{name}.txt"), "contents": "w"}),
                ),
            };
            calls.push((format!("c{name}"), call.0, call.1.to_string()));
        }
        let calls: Vec<(&str, &str, &str)> = calls
            .iter()
            .map(|(id, tool, args)| (id.as_str(), *tool, args.as_str()))
            .collect();
        env.server.push(openai::tool_call_stream(&calls));
    }
    env.server.push(openai::text_stream(&["Wrote everything."]));
    let before = crate::common::tree(&outside);
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (dir, stop) = (dir.clone(), Arc::clone(&stop));
        std::thread::spawn(move || keep_swapping(&dir, &link, &stop))
    };
    let out = env.loki().arg("write the files").assert().success();
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 100, "the directory was swapped only {swaps} times");
    assert_eq!(
        crate::common::tree(&outside),
        before,
        "something landed outside the tree: {}",
        stderr(&out)
    );
    let dirs_outside = walkdir::WalkDir::new(&outside)
        .min_depth(1)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_dir())
        .count();
    assert_eq!(dirs_outside, 0, "a directory was created outside the tree");
    // The race did not simply stop every call: some went through inside.
    let written = walkdir::WalkDir::new(&dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('w'))
        .count();
    assert!(written > 0, "no write succeeded");
}

#[test]
fn tools_do_not_inherit_lokis_credentials() {
    let env = TestEnv::new();
    let base = env.server.base_url();
    env.write_config(&format!(
        r#"model: fake:gpt-4o-mini
enabled_tools: all
tool_env_passthrough: [AWS_SESSION_TOKEN]
clients:
  - type: openai-compatible
    name: fake
    api_base: {base}
    api_key: '{{{{LOKI_TEST_TOKEN}}}}'
    models:
      - name: gpt-4o-mini
        supports_function_calling: true
  - type: claude
  - type: bedrock
    region: us-east-1
"#
    ));
    write_tool(
        &env,
        "show_env.sh",
        "# @describe Print the environment.\n# @env ANTHROPIC_API_KEY The key this tool needs\nmain() { env >> \"$LLM_OUTPUT\"; }\n",
    );
    env.server.push(openai::tool_call_stream(&[
        ("x", "execute_command", r#"{"command":"env"}"#),
        ("s", "show_env", "{}"),
    ]));
    env.server.push(openai::text_stream(&["Seen."]));
    env.loki()
        .env("LOKI_TEST_TOKEN", "tok-placeholder-1111")
        .env("FAKE_API_KEY", "tok-fake-env-3333")
        .env("ANTHROPIC_API_KEY", "tok-anthropic-2222")
        .env("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
        .env("AWS_SECRET_ACCESS_KEY", "tok-aws-secret-4444")
        .env("AWS_SESSION_TOKEN", "tok-aws-session-5555")
        .env("HARMLESS_SETTING", "plain-value-6666")
        .args(["--yolo", "show me your environment"])
        .assert()
        .success();
    // The key still reaches the provider: the client's own FAKE_API_KEY, which overrides
    // the file's api_key as in Loki.
    assert_eq!(
        env.server.requests()[0].header("authorization"),
        Some("Bearer tok-fake-env-3333")
    );
    let command = result_of(&env, "x");
    let script = result_of(&env, "s");
    for secret in ["1111", "3333", "4444"] {
        assert!(!command.contains(secret), "execute_command saw {secret}");
        assert!(!script.contains(secret), "the script saw {secret}");
    }
    assert!(
        !command.contains("2222"),
        "execute_command saw the Anthropic key"
    );
    // The tool declaring it gets the key; the model sees it redacted in the tool output.
    assert!(
        script.contains("ANTHROPIC_API_KEY=«secret:") && !script.contains("2222"),
        "declared with @env: {script}"
    );
    // Passed through (tool_env_passthrough), and, being a known secret, redacted in what
    // the model is sent.
    for visible in ["plain-value-6666", "AWS_SESSION_TOKEN=«secret:"] {
        assert!(command.contains(visible), "{visible} missing: {command}");
        assert!(script.contains(visible), "{visible} missing: {script}");
    }
}

#[test]
fn floods_of_output_are_cut_not_killed() {
    let env = tools_env("");
    write_tool(
        &env,
        "flood.sh",
        "# @describe Write a lot.\nmain() { head -c 100000000 /dev/zero | tr '\\0' x; }\n",
    );
    write_tool(
        &env,
        "private.sh",
        "# @describe Show the output file's mode.\nmain() { ls -l \"$LLM_OUTPUT\" | cut -c1-10 >> \"$LLM_OUTPUT\"; }\n",
    );
    env.server.push(openai::tool_call_stream(&[
        ("f", "flood", "{}"),
        (
            "x",
            "execute_command",
            r#"{"command":"head -c 20000000 /dev/zero | tr '\\0' y; echo; echo finished"}"#,
        ),
        ("p", "private", "{}"),
    ]));
    env.server.push(openai::text_stream(&["Done."]));
    env.loki().args(["--yolo", "flood"]).assert().success();
    let flood = result_of(&env, "f");
    assert!(
        flood.starts_with("[stdout: 100000000 bytes written, only the first 8388608 kept]\nxxxx"),
        "{}",
        &flood[..flood.len().min(200)]
    );
    assert!(
        flood.contains("[output truncated"),
        "cut to max_tool_output"
    );
    let command = result_of(&env, "x");
    assert!(
        command.starts_with("[stdout: 20000010 bytes written, only the first 8388608 kept]\nyyyy"),
        "{}",
        &command[..command.len().min(200)]
    );
    // LLM_OUTPUT is private to the user.
    assert_eq!(result_of(&env, "p").trim(), "-rw-------");
}

#[test]
fn background_children_do_not_hold_up_a_call_and_stop_with_the_turn() {
    let env = tools_env("tool_timeout: 15\n");
    write_tool(
        &env,
        "spawner.sh",
        "# @describe Start something in the background.\nmain() { (sleep 3; touch script-late) & echo 'script started' >> \"$LLM_OUTPUT\"; }\n",
    );
    env.server.push(openai::tool_call_stream(&[
        (
            "x",
            "execute_command",
            r#"{"command":"(sleep 3; touch late) & echo started"}"#,
        ),
        ("s", "spawner", "{}"),
        (
            "k",
            "execute_command",
            r#"{"command":"setsid sh -c 'sleep 2; touch kept' </dev/null >/dev/null 2>&1 & sleep 0.5; echo detached"}"#,
        ),
    ]));
    env.server.push(openai::text_stream(&["Started."]));
    let started = Instant::now();
    // Unconfined: in a sandbox, what a command leaves running ends with it (sandbox.rs).
    env.loki()
        .args(["--sandbox", "danger-full-access", "--yolo", "start it"])
        .assert()
        .success();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "the calls took {took:?}");
    let command = result_of(&env, "x");
    assert!(command.contains("started"), "{command}");
    assert!(
        command.contains("still running in the background") && command.contains("sleep 3"),
        "{command}"
    );
    let script = result_of(&env, "s");
    assert!(script.contains("script started"), "{script}");
    assert!(
        script.contains("still running in the background"),
        "{script}"
    );
    let detached = result_of(&env, "k");
    assert!(detached.contains("detached"), "{detached}");
    assert!(
        !detached.contains("still running"),
        "a setsid job left the group: {detached}"
    );
    std::thread::sleep(Duration::from_millis(4500));
    let work = env.work_dir();
    assert!(
        !work.join("late").exists(),
        "the background child survived the turn"
    );
    assert!(
        !work.join("script-late").exists(),
        "the script's child survived the turn"
    );
    assert!(work.join("kept").exists(), "the setsid job was killed");
}

/// The approval preview of `fs_write` reads what it would overwrite: a FIFO (or a device)
/// named by the model must not hang it.
#[test]
fn the_write_preview_does_not_read_a_fifo() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: all\n{cfg}"));
    let fifo = env.work_dir().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo (coreutils) is needed for this test");
    assert!(made.success());
    env.server.push(openai::tool_call_stream(&[(
        "w1",
        "fs_write",
        "{\"path\":\"pipe\",\"contents\":\"x\"}",
    )]));
    env.server.push(openai::text_stream(&["Understood."]));
    let mut pty = Pty::spawn(&env, &["write it"], &[("NO_COLOR", "1")]);
    let shown = pty.expect("Run it?");
    assert!(
        shown.contains("existing content not shown: not a regular file"),
        "{shown:?}"
    );
    pty.send("\x1b[B\x1b[B\r"); // no
    pty.expect("Understood.");
    pty.read_to_end();
}
