//! `loki --acp` driven by the ACP TypeScript SDK's client (`@agentclientprotocol/sdk`,
//! pinned in `tests/clients`; `tests/data/acp_ts_client.mjs`), its input kept open as an
//! editor keeps it: initialize, a session started with the SDK's session helper (whose
//! queue must see `available_commands_update`), a prompt streamed as message chunks, a
//! command and a file write allowed through `session/request_permission` (the write's
//! last update carrying its diff), a plan from the todo tools, and a cancel.

use std::process::Command;

use serde_json::Value;

use super::acp::{last_user, plan_route, route};
use crate::common::fake_llm::{Recorded, Reply};
use crate::common::{LOKI, TestEnv, clients};

/// The Python suite's model, with its todo-list steps.
fn editor_route(request: &Recorded) -> Reply {
    let last = last_user(&request.json());
    if last.contains("make a plan") || last.contains("Goal: ship it") {
        plan_route(request)
    } else {
        route(request)
    }
}

fn run_client(env: &TestEnv) -> Value {
    clients::npm_package("@agentclientprotocol/sdk");
    let loki_env: serde_json::Map<String, Value> = env
        .env_pairs()
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/acp_ts_client.mjs");
    // Bounded: a stall fails the test instead of hanging the suite.
    let output = Command::new("timeout")
        .args(["120", "node", script])
        .arg(LOKI)
        .arg(env.work_dir())
        .arg(clients::dir())
        .env("LOKI_TEST_ENV", Value::Object(loki_env).to_string())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the ACP TypeScript client failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no report ({e}): {stdout}"));
    assert!(report["error"].is_null(), "{}", report["error"]);
    report
}

fn of_kind<'a>(turn: &'a Value, kind: &str) -> Vec<&'a Value> {
    turn["updates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

fn chunks(turn: &Value) -> String {
    of_kind(turn, "agent_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

#[test]
fn the_typescript_sdk_client_drives_a_session_end_to_end() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command,fs_write\n{cfg}"));
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(roles.join("pirate.md"), "Talk like a pirate.").unwrap();
    std::fs::write(env.work_dir().join("notes.md"), "old notes\n").unwrap();
    env.server.respond_for("/v1/chat", editor_route);
    let report = run_client(&env);

    assert_eq!(report["initialize"]["protocolVersion"], 1, "{report:#}");
    assert!(
        report["sessionId"]
            .as_str()
            .is_some_and(|s| s.starts_with("acp-"))
    );
    // The session's queue sees the commands it offers.
    let first = &report["first"];
    assert_eq!(
        first["sessionUpdate"], "available_commands_update",
        "{first}"
    );
    assert!(
        first["availableCommands"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["name"] == "pirate")),
        "{first}"
    );

    assert_eq!(report["hello"]["stop"], "end_turn", "{}", report["hello"]);
    assert_eq!(chunks(&report["hello"]), "hello back");

    // A command asks first; allowed, it runs.
    let permissions = report["permissions"].as_array().expect("permissions");
    assert_eq!(permissions.len(), 2, "{permissions:#?}");
    assert_eq!(permissions[0]["toolCall"]["toolCallId"], "m1");
    assert_eq!(report["command"]["stop"], "end_turn");
    assert!(
        of_kind(&report["command"], "tool_call_update")
            .iter()
            .any(|u| u["toolCallId"] == "m1" && u["status"] == "completed"),
        "{}",
        report["command"]
    );
    assert!(env.work_dir().join("made").exists());

    // The write, allowed: its last update still shows the diff.
    assert_eq!(permissions[1]["toolCall"]["toolCallId"], "w1");
    let done = of_kind(&report["write"], "tool_call_update");
    let last = done
        .iter()
        .rev()
        .find(|u| u["toolCallId"] == "w1" && u["status"] == "completed")
        .unwrap_or_else(|| panic!("no completed write: {}", report["write"]));
    assert_eq!(last["content"][0]["type"], "diff", "{last}");
    assert_eq!(last["content"][0]["oldText"], "old notes\n");
    assert_eq!(last["content"][0]["newText"], "new notes\n");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("notes.md")).unwrap(),
        "new notes\n"
    );

    // The todo list as the plan, never an empty one.
    let plans = of_kind(&report["plan"], "plan");
    assert!(!plans.is_empty(), "{}", report["plan"]);
    assert!(
        plans
            .iter()
            .all(|p| p["entries"].as_array().is_some_and(|e| !e.is_empty())),
        "{plans:?}"
    );
    let final_plan = plans
        .last()
        .map(|p| p["entries"].clone())
        .unwrap_or_default();
    assert_eq!(final_plan[1]["content"], "test", "{final_plan}");
    assert_eq!(final_plan[1]["status"], "completed", "{final_plan}");

    // Cancelled once the first words came: what came is kept.
    assert_eq!(report["slow"]["stop"], "cancelled", "{}", report["slow"]);
    assert!(chunks(&report["slow"]).starts_with("slow start"));
    assert_eq!(report["exit"], 0, "{report:#}");
}
