//! Delegation from the main chat: the `task` tool a conversation with tools is offered
//! (Claude Code's `Task`), its built-in sub-agent types (`explore` on the small model with
//! the reading tools, `plan`, `general` with the parent's tools) and the user's agents,
//! children running in parallel, the child's answer as the tool result, `delegation:
//! false`, and the parent's permission rules holding in the child.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::fake_llm::{Recorded, Reply, openai};
use crate::common::tool_names;
use crate::common::{TestEnv, default_config, stdout};

/// The standard config with tools on, a second model `small` that can call tools, and
/// `extra` settings.
fn env_with(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    let config = default_config(&env.server.base_url()).replace(
        "      - name: text-only\n",
        "      - name: text-only\n      - name: small\n        supports_function_calling: true\n",
    );
    env.write_config(&format!("enabled_tools: all\n{extra}{config}"));
    env
}

/// Who a request is from, by its system prompt: `explore`, `plan`, `general`,
/// `reviewer` (a user's agent) or `main`.
fn who(body: &Value) -> &'static str {
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    if system.contains("read-only search agent") {
        "explore"
    } else if system.contains("planning agent") {
        "plan"
    } else if system.contains("sub-agent working for another agent") {
        "general"
    } else if system.contains("You are REVIEWER") {
        "reviewer"
    } else {
        "main"
    }
}

/// The tool results of a request, in order.
fn results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn task(id: &str, kind: &str, prompt: &str) -> (String, String, String) {
    let args = json!({"description": "a task", "prompt": prompt, "subagent_type": kind});
    (id.to_string(), "task".to_string(), args.to_string())
}

fn calls(calls: &[(String, String, String)]) -> Reply {
    let borrowed: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    openai::tool_call_stream(&borrowed)
}

fn requests_of(env: &TestEnv, whom: &str) -> Vec<Value> {
    env.server
        .requests()
        .iter()
        .map(Recorded::json)
        .filter(|b| who(b) == whom)
        .collect()
}

#[test]
fn the_main_chat_delegates_to_an_explore_child_that_only_reads_and_its_answer_returns() {
    let env = env_with("small_model: fake:small\n");
    env.write("notes.txt", "the secret is 42\n");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        match (who(&body), results(&body).first()) {
            ("explore", None) => calls(&[(
                "r1".into(),
                "fs_read".into(),
                json!({"path": "notes.txt"}).to_string(),
            )]),
            ("explore", Some(read)) => openai::text_stream(&[&format!("found: {}", read.trim())]),
            ("main", None) => calls(&[task("t1", "explore", "What is the secret in notes.txt?")]),
            (_, Some(answer)) => openai::text_stream(&[&format!("main heard <{answer}>")]),
            (_, None) => openai::text_stream(&["unexpected"]),
        }
    });
    let out = env
        .loki()
        .args(["--output-format", "stream-json", "find the secret"])
        .assert()
        .success();
    let main = requests_of(&env, "main");
    assert!(tool_names(&main[0]).contains(&"task".to_string()));
    let explore = requests_of(&env, "explore");
    assert_eq!(explore.len(), 2, "{explore:#?}");
    assert_eq!(explore[0]["model"], "small", "explore runs on small_model");
    let declared = tool_names(&explore[0]);
    assert!(declared.contains(&"fs_read".to_string()), "{declared:?}");
    for name in &declared {
        let reads = [
            "fs_read",
            "fs_cat",
            "fs_ls",
            "fs_glob",
            "fs_grep",
            "fetch_url",
            "web_search",
        ]
        .contains(&name.as_str());
        assert!(
            reads || name.starts_with("user__"),
            "explore declares {name}: {declared:?}"
        );
    }
    // The child's final answer is the tool result, as text.
    let heard = results(&main[1]);
    assert!(heard[0].starts_with("found: "), "{heard:?}");
    assert!(heard[0].contains("the secret is 42"), "{heard:?}");
    // The child shows in the tree: started and finished under the main conversation.
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let root = events[0]["conversation"].clone();
    let started = events
        .iter()
        .find(|e| e["type"] == "agent_started")
        .expect("agent_started");
    assert_eq!(started["parent"], root);
    assert_eq!(started["agent"], "explore");
    let finished = events
        .iter()
        .find(|e| e["type"] == "agent_finished")
        .expect("agent_finished");
    assert_eq!(finished["status"], "completed");
    assert!(
        stdout(&out).contains("main heard <found: "),
        "{}",
        stdout(&out)
    );
}

#[test]
fn two_task_calls_in_one_round_run_at_the_same_time() {
    let env = env_with("");
    // Each child answers only once both have asked: one after the other, the first would
    // wait in vain (and say so).
    let waiting = Arc::new(AtomicUsize::new(0));
    env.server.respond_for("/v1/chat", move |request| {
        let body = request.json();
        let kind = who(&body);
        if kind != "main" {
            waiting.fetch_add(1, Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(10);
            while waiting.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            let overlap = if waiting.load(Ordering::SeqCst) >= 2 {
                "together"
            } else {
                "alone"
            };
            return openai::text_stream(&[&format!("{kind} done {overlap}")]);
        }
        let heard = results(&body);
        if heard.is_empty() {
            calls(&[
                task("t1", "explore", "look around"),
                task("t2", "plan", "plan the change"),
            ])
        } else {
            openai::text_stream(&[&format!("all heard: {}", heard.join(" | "))])
        }
    });
    let out = env.loki().arg("split the work").assert().success();
    let text = stdout(&out);
    assert!(
        text.contains("all heard: explore done together | plan done together"),
        "{text}"
    );
}

#[test]
fn delegation_false_offers_no_task_from_the_config_or_its_variable() {
    let env = env_with("delegation: false\n");
    env.server.push(openai::text_stream(&["no delegation"]));
    env.loki().arg("hi").assert().success();
    let first = env.server.requests()[0].json();
    let declared = tool_names(&first);
    assert!(declared.contains(&"fs_read".to_string()), "{declared:?}");
    assert!(!declared.contains(&"task".to_string()), "{declared:?}");

    let env = env_with("");
    env.server.push(openai::text_stream(&["no delegation"]));
    env.loki()
        .env("LOKI_DELEGATION", "false")
        .arg("hi")
        .assert()
        .success();
    let declared = tool_names(&env.server.requests()[0].json());
    assert!(!declared.contains(&"task".to_string()), "{declared:?}");
    // And a chat without tools has nothing to delegate.
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["no tools"]));
    env.loki().arg("hi").assert().success();
    let declared = tool_names(&env.server.requests()[0].json());
    assert!(declared.is_empty(), "{declared:?}");
}

#[test]
fn a_general_child_keeps_the_parents_deny_rule_and_does_not_delegate_further() {
    let env = env_with("permissions:\n  deny: [\"fs_write(secret.txt)\"]\n");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        match (who(&body), results(&body)) {
            ("general", heard) if heard.is_empty() => calls(&[
                (
                    "w1".into(),
                    "fs_write".into(),
                    json!({"path": "secret.txt", "contents": "x"}).to_string(),
                ),
                (
                    "w2".into(),
                    "fs_write".into(),
                    json!({"path": "ok.txt", "contents": "y"}).to_string(),
                ),
            ]),
            ("general", heard) => {
                openai::text_stream(&[&format!("child saw: {}", heard.join(" | "))])
            }
            (_, heard) if heard.is_empty() => calls(&[task("t1", "general", "write the files")]),
            (_, heard) => openai::text_stream(&[&format!("main heard <{}>", heard[0])]),
        }
    });
    let out = env.loki().args(["--yolo", "write them"]).assert().success();
    let text = stdout(&out);
    assert!(
        env.work_dir().join("ok.txt").exists(),
        "the child could write: {text}"
    );
    assert!(!env.work_dir().join("secret.txt").exists(), "{text}");
    assert!(
        text.contains("fs_write(secret.txt)"),
        "the refusal names the rule: {text}"
    );
    let general = requests_of(&env, "general");
    let declared = tool_names(&general[0]);
    assert!(declared.contains(&"fs_write".to_string()), "{declared:?}");
    assert!(!declared.contains(&"task".to_string()), "{declared:?}");
}

#[test]
fn a_users_claude_agent_is_a_subagent_type() {
    let env = env_with("");
    let agents = env.root().join("home").join(".claude").join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews\n---\nYou are REVIEWER.\n",
    )
    .unwrap();
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        match (who(&body), results(&body).first()) {
            ("reviewer", _) => openai::text_stream(&["looks fine"]),
            (_, None) => calls(&[task("t1", "reviewer", "review it")]),
            (_, Some(answer)) => openai::text_stream(&[&format!("main heard <{answer}>")]),
        }
    });
    let out = env.loki().arg("review").assert().success();
    assert!(
        stdout(&out).contains("main heard <looks fine>"),
        "{}",
        stdout(&out)
    );
    assert_eq!(requests_of(&env, "reviewer").len(), 1);
}
