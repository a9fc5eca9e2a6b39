//! Checkpoints and rewind through the real binary: the `checkpoint_created` event, `-s
//! NAME --rewind` restoring files and cutting the session, a file changed by hand after
//! the turn refused by name, a sub-agent's edit undone with its parent's turn, and
//! `.rewind` in the REPL.

use serde_json::{Value, json};

use crate::common::fake_llm::{Recorded, Reply, openai};
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr, stdout};

pub(super) fn env_with_tools() -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: fs_write,fs_edit,fs_rm\n{cfg}"));
    env
}

pub(super) fn last_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rfind(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn call(calls: &[(&str, &str, Value)]) -> Reply {
    let owned: Vec<(String, String, String)> = calls
        .iter()
        .map(|(id, name, args)| ((*id).to_string(), (*name).to_string(), args.to_string()))
        .collect();
    let borrowed: Vec<(&str, &str, &str)> = owned
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    openai::tool_call_stream(&borrowed)
}

pub(super) fn route(request: &Recorded) -> Reply {
    let body = request.json();
    if body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"] == "tool")
    {
        return openai::text_stream(&["done"]);
    }
    let last = last_user(&body);
    if last.contains("create a") {
        call(&[(
            "c1",
            "fs_write",
            json!({"path": "a.txt", "contents": "v1\n"}),
        )])
    } else if last.contains("change a and add b") {
        call(&[
            (
                "c2",
                "fs_edit",
                json!({"path": "a.txt", "old_string": "v1", "new_string": "v2"}),
            ),
            (
                "c3",
                "fs_write",
                json!({"path": "b.txt", "contents": "new\n"}),
            ),
        ])
    } else {
        openai::text_stream(&["nothing to do"])
    }
}

fn session(env: &TestEnv) -> String {
    std::fs::read_to_string(env.session_file("work")).unwrap()
}

#[test]
fn rewind_restores_files_and_cuts_the_session_unless_a_file_changed_since() {
    let env = env_with_tools();
    env.server.respond_for("/v1/chat", route);
    let a = env.work_dir().join("a.txt");
    let b = env.work_dir().join("b.txt");
    env.loki()
        .args(["-s", "work", "--yolo", "create a"])
        .assert()
        .success();
    let out = env
        .loki()
        .args([
            "-s",
            "work",
            "--yolo",
            "--output-format",
            "stream-json",
            "change a and add b",
        ])
        .assert()
        .success();
    let events: Vec<Value> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let created = events
        .iter()
        .find(|e| e["type"] == "checkpoint_created")
        .unwrap_or_else(|| panic!("no checkpoint_created: {events:#?}"));
    assert_eq!(created["turn"], 2, "{created}");
    let files: Vec<&str> = created["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        files.iter().any(|f| f.ends_with("a.txt")) && files.iter().any(|f| f.ends_with("b.txt")),
        "{files:?}"
    );
    let order: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    let at = |kind: &str| order.iter().position(|k| *k == kind).unwrap();
    assert!(at("checkpoint_created") < at("turn_finished"), "{order:?}");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "v2\n");
    assert!(session(&env).contains("change a and add b"));

    // Undo the last turn: a.txt is v1 again, b.txt is gone, the session forgets it.
    let out = env
        .loki()
        .args(["-s", "work", "--rewind"])
        .assert()
        .success();
    let said = stdout(&out);
    assert!(
        said.contains("restored") && said.contains("a.txt"),
        "{said}"
    );
    assert!(said.contains("removed") && said.contains("b.txt"), "{said}");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "v1\n");
    assert!(!b.exists());
    let text = session(&env);
    assert!(!text.contains("change a and add b"), "{text}");
    assert!(text.contains("create a"), "{text}");

    // Again, but a.txt is changed by hand afterwards: refused, named, nothing touched.
    env.loki()
        .args(["-s", "work", "--yolo", "change a and add b"])
        .assert()
        .success();
    std::fs::write(&a, "by hand\n").unwrap();
    let out = env
        .loki()
        .args(["-s", "work", "--rewind"])
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(
        err.contains("changed since") && err.contains("a.txt"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "by hand\n");
    assert!(b.exists());
    assert!(session(&env).contains("change a and add b"));

    // Two turns back from the start: nothing left, and the files are as before turn 1.
    std::fs::write(&a, "v2\n").unwrap();
    env.loki()
        .args(["-s", "work", "--rewind", "2"])
        .assert()
        .success();
    assert!(!a.exists() && !b.exists());
    let out = env
        .loki()
        .args(["-s", "work", "--rewind"])
        .assert()
        .failure();
    assert!(
        stderr(&out).contains("no turn to rewind"),
        "{}",
        stderr(&out)
    );
}

/// A rewound file gets its permissions back; a rewind cut short (loki killed after it
/// wrote itself down and restored one file of two) is finished by the next `--rewind`,
/// which says so; pruned content stops a rewind before it touches anything.
#[test]
fn a_rewind_keeps_modes_and_an_interrupted_one_is_finished_by_the_next() {
    use std::os::unix::fs::PermissionsExt;
    let env = env_with_tools();
    env.server.respond_for("/v1/chat", route);
    let a = env.write("a.txt", "v1\n");
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o600)).unwrap();
    let b = env.work_dir().join("b.txt");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    env.loki()
        .args(["-s", "work", "--yolo", "change a and add b"])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "v2\n");
    env.loki()
        .args(["-s", "work", "--rewind"])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "v1\n");
    assert_eq!(mode(&a), 0o600, "the mode came back");
    assert!(!b.exists());

    // Again, then write down the rewind as loki does before it starts, and do half of
    // it by hand: a.txt back, b.txt still there, the session not cut.
    env.loki()
        .args(["-s", "work", "--yolo", "change a and add b"])
        .assert()
        .success();
    let journals = env.root().join("cache/loki/checkpoints/journals");
    let journal = std::fs::read_dir(&journals)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a session journal");
    let records: Vec<Value> = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = records.last().unwrap().clone();
    let pending = journal.with_extension("rewind.json");
    std::fs::write(
        &pending,
        json!({"undone": [last], "remaining": records[..records.len() - 1], "files": true, "conversation": true}).to_string(),
    )
    .unwrap();
    std::fs::write(&a, "v1\n").unwrap();
    assert!(b.exists() && session(&env).contains("change a and add b"));
    let out = env
        .loki()
        .args(["-s", "work", "--rewind"])
        .assert()
        .success();
    let said = stdout(&out);
    assert!(said.contains("interrupted rewind"), "{said}");
    assert!(!b.exists(), "{said}");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "v1\n");
    assert_eq!(mode(&a), 0o600);
    assert!(!session(&env).contains("change a and add b"));
    assert!(!pending.exists(), "the rewind was crossed out");

    // Content pruned since: the rewind refuses before touching anything.
    env.loki()
        .args(["-s", "work", "--yolo", "change a and add b"])
        .assert()
        .success();
    let objects = env.root().join("cache/loki/checkpoints/objects");
    for object in std::fs::read_dir(&objects).unwrap().flatten() {
        std::fs::remove_file(object.path()).unwrap();
    }
    let out = env
        .loki()
        .args(["-s", "work", "--rewind"])
        .assert()
        .failure();
    assert!(stderr(&out).contains("no longer kept"), "{}", stderr(&out));
    assert!(b.exists(), "nothing was changed");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "v2\n");
}

#[test]
fn a_sub_agent_s_edit_is_undone_with_its_parent_s_turn() {
    let env = env_with_tools();
    for (name, config) in [
        (
            "boss",
            "instructions: You are BOSS.\ncan_spawn_agents: true\n",
        ),
        (
            "worker",
            "instructions: You are WORKER.\nglobal_tools:\n  - fs_write\n",
        ),
    ] {
        let dir = env.config_dir().join("agents").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.yaml"), config).unwrap();
    }
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        let results: Vec<String> = body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .filter_map(|m| m["content"].as_str().map(str::to_string))
            .collect();
        if system.contains("WORKER") {
            return match results.len() {
                0 => call(&[(
                    "w1",
                    "fs_write",
                    json!({"path": "w.txt", "contents": "from the worker\n"}),
                )]),
                _ => openai::text_stream(&["written"]),
            };
        }
        match results.len() {
            0 => call(&[(
                "s1",
                "agent__spawn",
                json!({"agent": "worker", "prompt": "write it"}),
            )]),
            1 => {
                let spawned: Value = serde_json::from_str(&results[0]).unwrap_or_default();
                call(&[("s2", "agent__collect", json!({"id": spawned["id"]}))])
            }
            _ => openai::text_stream(&["the worker wrote it"]),
        }
    });
    env.loki()
        .args(["-s", "work", "--yolo", "-a", "boss", "go"])
        .assert()
        .success();
    let w = env.work_dir().join("w.txt");
    assert!(w.exists());
    let out = env
        .loki()
        .args(["-s", "work", "-a", "boss", "--rewind"])
        .assert()
        .success();
    assert!(stdout(&out).contains("w.txt"), "{}", stdout(&out));
    assert!(!w.exists());
}

#[test]
fn the_repl_lists_turns_and_rewinds_the_chosen_one() {
    let env = env_with_tools();
    env.server.respond_for("/v1/chat", route);
    let mut pty = Pty::spawn(&env, &["--yolo"], &[("NO_COLOR", "1")]);
    pty.expect("mini)> ");
    pty.send("create a\r");
    pty.expect("done");
    pty.expect("mini)> ");
    pty.send("change a and add b\r");
    pty.expect("done");
    pty.expect("mini)> ");
    pty.send(".rewind\r");
    pty.expect("not tracked");
    pty.expect("turn 2: change a and add b  (2 files)");
    // Newest first: move down to turn 1, then files and conversation.
    pty.send("\x1b[B");
    pty.send("\r");
    pty.expect("Restore:");
    pty.send("\r");
    pty.expect("back to before turn 1");
    assert!(!env.work_dir().join("a.txt").exists());
    assert!(!env.work_dir().join("b.txt").exists());
    pty.expect("mini)> ");
    pty.send(".exit\r");
    pty.read_to_end();
}
