//! `loki --acp` driven by the official ACP Python SDK as an editor would drive it
//! (`tests/data/acp_client.py`): initialize, a new session, prompts answered as message
//! chunks, a command approved and a file write rejected through
//! `session/request_permission`, a slow answer stopped by `session/cancel`, and the
//! session loaded again in a new process with its conversation replayed.

use std::process::Command;

use serde_json::Value;

use crate::common::fake_llm::{Recorded, Reply, openai};
use crate::common::{LOKI, TestEnv};

/// The SDK is a test dependency: `.ci/run` installs it; a machine without it fails here
/// with the command that installs it.
fn sdk_present() {
    let found = Command::new("python3")
        .args(["-c", "import acp"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "the ACP Python SDK is missing: pip install agent-client-protocol (.ci/run does)"
    );
}

pub(super) fn last_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

pub(super) fn route(request: &Recorded) -> Reply {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let after_tool = messages.last().is_some_and(|m| m["role"] == "tool");
    let last = last_user(&body);
    if after_tool {
        let result = messages
            .last()
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        return openai::text_stream(&[&format!(
            "after the tool: {}",
            &result[..result.len().min(60)]
        )]);
    }
    if last.contains("ask the editor's server") {
        return openai::tool_call_stream(&[(
            "e1",
            "editor_env_value",
            r#"{"name":"SECRET_TOKEN"}"#,
        )]);
    }
    if last.contains("read the notes") {
        return openai::tool_call_stream(&[("r1", "fs_cat", r#"{"path":"notes.md"}"#)]);
    }
    if last.contains("make a file") {
        openai::tool_call_stream(&[("m1", "execute_command", r#"{"command":"touch made"}"#)])
    } else if last.contains("write the notes") {
        openai::tool_call_stream(&[(
            "w1",
            "fs_write",
            r#"{"path":"notes.md","contents":"new notes\n"}"#,
        )])
    } else if last.contains("a slow one") {
        openai::text_stream(&["slow start", " and more"]).hang_after(2)
    } else if last.contains("what came first") {
        let first = messages
            .iter()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        openai::text_stream(&[&format!("first: {first}")])
    } else {
        openai::text_stream(&["hello back"])
    }
}

fn client(env: &TestEnv, args: &[&str]) -> Value {
    let loki_env: serde_json::Map<String, Value> = env
        .env_pairs()
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/acp_client.py");
    // Bounded: a stall fails the test instead of hanging the suite.
    let output = Command::new("timeout")
        .args(["120", "python3", script])
        .arg(LOKI)
        .arg(env.work_dir())
        .args(args)
        .env("LOKI_TEST_ENV", Value::Object(loki_env).to_string())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the ACP client failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no report ({e}): {stdout}"))
}

fn texts(updates: &Value, kind: &str) -> String {
    updates
        .as_array()
        .into_iter()
        .flatten()
        .filter(|u| u["sessionUpdate"] == kind)
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

fn of_kind<'a>(updates: &'a Value, kind: &str) -> Vec<&'a Value> {
    updates
        .as_array()
        .into_iter()
        .flatten()
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

#[test]
fn an_editor_prompts_approves_rejects_cancels_and_loads_the_session_again() {
    sdk_present();
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command,fs_write\n{cfg}"));
    std::fs::write(env.work_dir().join("notes.md"), "old notes\n").unwrap();
    env.server.respond_for("/v1/chat", route);

    let report = client(&env, &["work"]);
    let init = &report["initialize"];
    assert_eq!(init["protocolVersion"], 1, "{init}");
    assert_eq!(init["agentCapabilities"]["loadSession"], true, "{init}");
    let sid = report["new"]["sessionId"]
        .as_str()
        .expect("a session id")
        .to_string();
    assert_eq!(report["new"]["modes"]["currentModeId"], "default");

    // A plain prompt streams message chunks and ends the turn.
    assert_eq!(report["hello"]["stop"], "end_turn");
    assert_eq!(
        texts(&report["hello"]["updates"], "agent_message_chunk"),
        "hello back"
    );

    // A command asks first; allowed once, it runs and is reported completed.
    let permissions = report["permissions"].as_array().expect("permissions");
    assert_eq!(permissions.len(), 2, "{permissions:#?}");
    let asked = &permissions[0];
    assert_eq!(asked["tool_call"]["toolCallId"], "m1");
    assert_eq!(asked["tool_call"]["kind"], "execute");
    assert!(
        asked["tool_call"]["title"]
            .as_str()
            .unwrap()
            .contains("touch made"),
        "{asked}"
    );
    let options: Vec<&str> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        options.contains(&"allow_once") && options.contains(&"reject_once"),
        "{options:?}"
    );
    let command = &report["command"]["updates"];
    let started = of_kind(command, "tool_call");
    assert_eq!(started.len(), 1, "{command:#}");
    assert_eq!(started[0]["toolCallId"], "m1");
    let done = of_kind(command, "tool_call_update");
    assert!(
        done.iter().any(|u| u["status"] == "completed"),
        "{command:#}"
    );
    assert!(env.work_dir().join("made").exists());
    assert_eq!(report["command"]["stop"], "end_turn");

    // A write is shown as a diff against the file; rejected, nothing is written.
    let write = &report["write"]["updates"];
    let call = of_kind(write, "tool_call");
    assert_eq!(call.len(), 1, "{write:#}");
    let diff = &call[0]["content"][0];
    assert_eq!(diff["type"], "diff", "{diff}");
    assert_eq!(diff["oldText"], "old notes\n");
    assert_eq!(diff["newText"], "new notes\n");
    assert_eq!(permissions[1]["tool_call"]["toolCallId"], "w1");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("notes.md")).unwrap(),
        "old notes\n"
    );
    assert!(
        of_kind(write, "tool_call_update")
            .iter()
            .any(|u| u["status"] == "failed"),
        "{write:#}"
    );

    // session/cancel stops the slow answer: what came is kept, the turn says cancelled.
    assert_eq!(report["slow"]["stop"], "cancelled", "{}", report["slow"]);
    assert!(
        texts(&report["slow"]["updates"], "agent_message_chunk").starts_with("slow start"),
        "{}",
        report["slow"]
    );
    assert_eq!(report["exit"], 0);

    // The session is a loki session: a new editor process loads it, sees the
    // conversation replayed, and goes on with its history.
    let loaded = client(&env, &["load", &sid]);
    let replayed = &loaded["replayed"];
    assert!(
        texts(replayed, "user_message_chunk").contains("hello there"),
        "{replayed:#}"
    );
    assert!(
        texts(replayed, "agent_message_chunk").contains("hello back"),
        "{replayed:#}"
    );
    assert_eq!(
        texts(&loaded["again"]["updates"], "agent_message_chunk"),
        "first: hello there"
    );
    assert!(
        loaded["unknown"]
            .as_str()
            .is_some_and(|e| e.contains("no-such-session")),
        "{}",
        loaded["unknown"]
    );
}

/// Whatever an editor sends, each request gets one answer: a line that is not JSON is a
/// parse error, an unknown method "method not found", a prompt for a session that does
/// not exist or a relative `cwd` "invalid params"; the connection goes on, and loki
/// exits 0 when stdin ends. Nothing but JSON-RPC reaches stdout.
#[test]
fn bad_requests_get_json_rpc_errors_and_the_connection_goes_on() {
    use std::io::{BufRead, BufReader, Write};
    let env = TestEnv::new();
    let mut child = env
        .loki_std()
        .arg("--acp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |line: &str| -> Value {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        stdout.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("not JSON ({e}): {answer}"))
    };
    let parse = ask("this is not json");
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    let unknown = ask(r#"{"jsonrpc":"2.0","id":1,"method":"no/such","params":{}}"#);
    assert_eq!(unknown["id"], 1);
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let prompt = ask(
        r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}"#,
    );
    assert_eq!(prompt["error"]["code"], -32602, "{prompt}");
    let relative = ask(
        r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}"#,
    );
    assert_eq!(relative["error"]["code"], -32602, "{relative}");
    assert!(
        relative["error"]["message"]
            .as_str()
            .unwrap()
            .contains("relative/dir")
    );
    let init =
        ask(r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":7}}"#);
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// An editor that offers `fs/*` is where files are read and written: the model sees the
/// unsaved buffer, not the disk, and an approved write goes to the editor (which saves as
/// it does), leaving the disk to it.
#[test]
fn file_tools_use_the_editor_s_buffers_when_it_offers_them() {
    sdk_present();
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: fs_cat,fs_write\n{cfg}"));
    std::fs::write(env.work_dir().join("notes.md"), "old notes on disk\n").unwrap();
    env.server.respond_for("/v1/chat", route);
    let report = client(&env, &["buffers"]);
    let notes = env.work_dir().join("notes.md").display().to_string();
    assert_eq!(report["reads"][0], notes.as_str(), "{report:#}");
    let sent = env
        .server
        .requests()
        .iter()
        .map(|r| r.json().to_string())
        .find(|body| body.contains("\"tool\""))
        .expect("a tool result was sent");
    assert!(sent.contains("unsaved buffer text"), "{sent}");
    assert!(!sent.contains("old notes on disk"), "{sent}");
    assert_eq!(report["writes"][0]["path"], notes.as_str(), "{report:#}");
    assert_eq!(report["writes"][0]["content"], "new notes\n");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("notes.md")).unwrap(),
        "old notes on disk\n"
    );
    assert_eq!(report["write"]["stop"], "end_turn");
}

/// The MCP servers an editor lists in `session/new` are started for that session and
/// their tools offered to the model, with the environment the editor gave them.
#[test]
fn the_editor_s_mcp_servers_serve_the_session() {
    sdk_present();
    let env = TestEnv::new();
    env.server.respond_for("/v1/chat", route);
    let server = super::mcp::server_bin();
    let report = client(&env, &["mcp", &server]);
    assert_eq!(report["ask"]["stop"], "end_turn", "{}", report["ask"]);
    let first = &env.server.requests()[0].json();
    let names: Vec<&str> = first["tools"]
        .as_array()
        .expect("tools offered")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(names.contains(&"editor_env_value"), "{names:?}");
    assert_eq!(
        super::mcp::tool_result(&env.server.last_request().json()),
        "from-the-editor"
    );
    assert!(
        texts(&report["ask"]["updates"], "agent_message_chunk").contains("from-the-editor"),
        "{}",
        report["ask"]
    );
}

/// A file the editor links by a `file:` URI is attached under its decoded name, as the
/// one file it names: `my%20notes.txt` is `my notes.txt`, and `%5Bid%5D.tsx` is the
/// route file `[id].tsx`, not a glob matching `i.tsx` or `d.tsx`.
#[test]
fn a_linked_file_s_uri_is_percent_decoded() {
    sdk_present();
    let env = TestEnv::new();
    env.write("my notes.txt", "the linked notes\n");
    env.write("pages/[id].tsx", "export default function Page() {}\n");
    env.write("pages/d.tsx", "not this one\n");
    env.server.respond_for("/v1/chat", route);
    let report = client(&env, &["link"]);
    assert_eq!(report["link"]["stop"], "end_turn", "{}", report["link"]);
    let sent = env.server.last_request().json().to_string();
    assert!(sent.contains("the linked notes"), "{sent}");
    assert!(sent.contains("function Page"), "{sent}");
    assert!(!sent.contains("not this one"), "{sent}");
}

/// An approved write keeps its diff to the end: the editor replaces a call's content
/// with each update's, and the final `tool_call_update` must not swap the diff for the
/// tool's one-line result.
#[test]
fn an_approved_edit_keeps_its_diff_in_the_final_update() {
    sdk_present();
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: fs_write\n{cfg}"));
    std::fs::write(env.work_dir().join("notes.md"), "old notes\n").unwrap();
    env.server.respond_for("/v1/chat", route);
    let report = client(&env, &["edit"]);
    let updates = &report["write"]["updates"];
    let done = of_kind(updates, "tool_call_update");
    let last = done
        .iter()
        .rev()
        .find(|u| u["status"] == "completed")
        .unwrap_or_else(|| panic!("no completed update: {updates:#}"));
    let diff = &last["content"][0];
    assert_eq!(diff["type"], "diff", "{last:#}");
    assert_eq!(diff["oldText"], "old notes\n", "{last:#}");
    assert_eq!(diff["newText"], "new notes\n", "{last:#}");
    assert_eq!(last["content"][1]["type"], "content", "{last:#}");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("notes.md")).unwrap(),
        "new notes\n"
    );
}

/// The roles offered as `/` commands work in a session that already has messages, as
/// `.role NAME text` does in the REPL: one message with the role, the history kept, the
/// session's own role back afterwards.
#[test]
fn a_role_command_works_once_the_session_has_messages() {
    sdk_present();
    let env = TestEnv::new();
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(roles.join("pirate.md"), "Talk like a pirate.").unwrap();
    env.server.respond_for("/v1/chat", |request: &Recorded| {
        if request.json()["messages"]
            .to_string()
            .contains("Talk like a pirate")
        {
            openai::text_stream(&["arr, hi"])
        } else {
            route(request)
        }
    });
    let report = client(&env, &["role"]);
    let offered = of_kind(&report["offered"], "available_commands_update");
    assert!(
        offered
            .iter()
            .flat_map(|u| u["availableCommands"].as_array().into_iter().flatten())
            .any(|c| c["name"] == "pirate"),
        "{}",
        report["offered"]
    );
    assert_eq!(report["role"]["stop"], "end_turn", "{}", report["role"]);
    assert_eq!(
        texts(&report["role"]["updates"], "agent_message_chunk"),
        "arr, hi"
    );
    let requests = env.server.requests();
    let pirate = requests[1].json();
    assert_eq!(last_user(&pirate), "say hi", "{pirate}");
    assert!(pirate.to_string().contains("hello there"), "{pirate}");
    let after = requests[2].json();
    assert_eq!(last_user(&after), "hello again");
    assert!(!after.to_string().contains("pirate"), "{after}");
    assert_eq!(
        texts(&report["after"]["updates"], "agent_message_chunk"),
        "hello back"
    );
}

/// A model that keeps a todo list: one todo call a step (`todo__list` among them), the
/// last item done only after loki's reminder that it is open, then `todo__clear`.
pub(super) fn plan_route(request: &Recorded) -> Reply {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let from = messages
        .iter()
        .rposition(|m| m["role"] == "user")
        .unwrap_or_default();
    let user = messages
        .get(from)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let step = messages[from..]
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    let call = |id: &str, name: &str, args: &str| openai::tool_call_stream(&[(id, name, args)]);
    if user.contains("make a plan") {
        match step {
            0 => call("t1", "todo__init", r#"{"goal":"ship it"}"#),
            1 => call("t2", "todo__add", r#"{"task":"write"}"#),
            2 => call("t3", "todo__add", r#"{"task":"test"}"#),
            3 => call("t4", "todo__done", r#"{"id":1}"#),
            4 => call("t5", "todo__list", "{}"),
            _ => openai::text_stream(&["planned"]),
        }
    } else if user.contains("Goal: ship it") {
        // The reminder loki sends while an item is open.
        match step {
            0 => call("t6", "todo__done", r#"{"id":2}"#),
            _ => openai::text_stream(&["all done"]),
        }
    } else if user.contains("clear the plan") {
        match step {
            0 => call("t7", "todo__clear", "{}"),
            _ => openai::text_stream(&["cleared"]),
        }
    } else {
        openai::text_stream(&["hello back"])
    }
}

/// An ACP session has the todo tools, and `plan` updates carry the real list: one each
/// time it changed (not after `todo__list`, not an empty one that would clear the
/// editor's plan before any was sent), and an empty one only when the list was cleared.
#[test]
fn todo_tools_drive_the_editor_s_plan() {
    sdk_present();
    let env = TestEnv::new();
    env.server.respond_for("/v1/chat", plan_route);
    let report = client(&env, &["plan"]);
    let first = env.server.requests()[0].json();
    let names: Vec<&str> = first["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"todo__add") && names.contains(&"todo__done"),
        "{names:?}"
    );
    assert_eq!(report["plan"]["stop"], "end_turn", "{}", report["plan"]);
    let plans: Vec<Vec<(String, String)>> = of_kind(&report["plan"]["updates"], "plan")
        .iter()
        .map(|p| {
            p["entries"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| {
                    let text = |key: &str| e[key].as_str().unwrap_or_default().to_string();
                    (text("content"), text("status"))
                })
                .collect()
        })
        .collect();
    let entry = |c: &str, s: &str| (c.to_string(), s.to_string());
    assert_eq!(
        plans,
        vec![
            vec![entry("write", "pending")],
            vec![entry("write", "pending"), entry("test", "pending")],
            vec![entry("write", "completed"), entry("test", "pending")],
            vec![entry("write", "completed"), entry("test", "completed")],
        ],
        "{}",
        report["plan"]
    );
    assert!(
        texts(&report["plan"]["updates"], "agent_message_chunk").contains("all done"),
        "{}",
        report["plan"]
    );
    assert!(of_kind(&report["hello"]["updates"], "plan").is_empty());
    let cleared = of_kind(&report["clear"]["updates"], "plan");
    assert_eq!(cleared.len(), 1, "{}", report["clear"]);
    assert_eq!(cleared[0]["entries"], serde_json::json!([]));
}

/// `available_commands_update` names the session the `session/new` answer announces, so
/// it comes after that answer: an editor (the TypeScript SDK) routes a session's updates
/// only once it knows the session, and drops what came before.
#[test]
fn available_commands_follow_the_session_new_answer() {
    use std::io::{BufRead, BufReader, Write};
    let env = TestEnv::new();
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(roles.join("pirate.md"), "Talk like a pirate.").unwrap();
    let mut child = env
        .loki_std()
        .arg("--acp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut next = || -> Value {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    };
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1}}}}"#
    )
    .unwrap();
    assert_eq!(next()["id"], 1);
    let new = serde_json::json!({
        "jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": env.work_dir(), "mcpServers": []},
    });
    writeln!(stdin, "{new}").unwrap();
    stdin.flush().unwrap();
    let answer = next();
    assert_eq!(
        answer["id"], 2,
        "a message came before the answer: {answer}"
    );
    let sid = answer["result"]["sessionId"].clone();
    let update = next();
    assert_eq!(update["method"], "session/update", "{update}");
    assert_eq!(update["params"]["sessionId"], sid, "{update}");
    let commands = &update["params"]["update"];
    assert_eq!(commands["sessionUpdate"], "available_commands_update");
    assert!(
        commands["availableCommands"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["name"] == "pirate")),
        "{commands}"
    );
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
