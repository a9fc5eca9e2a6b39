//! Agents: a directory with instructions, variables and a tools file; the tools run with
//! the agent's variables; the agent sees only its own tools and its `global_tools`; its
//! sessions live under its directory; built-in agents are installed on first run.

use serde_json::Value;

use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::tool_names;

const CONFIG: &str = r#"name: demo
description: A demonstration agent.
instructions: |
  You are DEMO, working for {{user}} in a {{tone}} tone.
  {{__tools__}}
variables:
  - name: user
    description: Who you work for
  - name: tone
    default: calm
global_tools:
  - fs_cat
conversation_starters:
  - Say hello
"#;

const TOOLS: &str = r#"#!/usr/bin/env bash
set -euo pipefail
# @env DEMO_TOKEN=none

# @cmd Say hello to someone
# @option --name! Who to greet
hello() {
    echo "hello $argc_name from $LLM_AGENT_VAR_USER via $LLM_AGENT_FUNC ($LLM_AGENT_NAME)" >> "$LLM_OUTPUT"
}

# @cmd Count to a number
# @option --to <INT> Where to stop
count() {
    seq 1 "${argc_to:-3}" | tr '\n' ' ' >> "$LLM_OUTPUT"
}

_helper() {
    echo private
}
"#;

/// A config that enables `fs_ls` for ordinary conversations, and the `demo` agent.
fn agent_env() -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: fs_ls\n{cfg}"));
    let dir = env.config_dir().join("agents/demo");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.yaml"), CONFIG).unwrap();
    std::fs::write(dir.join("tools.sh"), TOOLS).unwrap();
    std::fs::create_dir_all(env.config_dir().join("agents/.shared")).unwrap();
    std::fs::write(env.config_dir().join("agents/.shared/config.yaml"), "").unwrap();
    env
}

fn system_prompt(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_agent_s_tools_run_with_its_variables_and_nothing_else_is_offered() {
    let env = agent_env();
    env.server.push(openai::tool_call_stream(&[
        ("h", "hello", r#"{"name":"Ada"}"#),
        ("c", "count", r#"{"to":4}"#),
    ]));
    env.server.push(openai::text_stream(&["Greeted."]));
    env.loki()
        .args([
            "-a",
            "demo",
            "--agent-variable",
            "user",
            "Bob",
            "--yolo",
            "greet Ada",
        ])
        .assert()
        .success()
        .stdout(predicates::str::contains("Greeted."));
    let requests = env.server.requests();
    let first = requests[0].json();
    let system = system_prompt(&first);
    assert!(
        system.starts_with("You are DEMO, working for Bob in a calm tone."),
        "{system}"
    );
    assert!(
        system.contains("1. hello: Say hello to someone"),
        "{system}"
    );
    assert!(system.contains("3. fs_cat: "), "{system}");
    let names = tool_names(&first);
    assert_eq!(&names[..3], ["hello", "count", "fs_cat"], "{names:?}");
    assert!(
        !names.iter().any(|n| n == "fs_ls" || n == "_helper"),
        "{names:?}"
    );
    let hello = &first["tools"][0]["function"];
    assert_eq!(hello["parameters"]["required"], serde_json::json!(["name"]));
    let results: Vec<String> = requests[1].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert_eq!(results[0].trim(), "hello Ada from Bob via hello (demo)");
    assert_eq!(results[1].trim(), "1 2 3 4");
}

#[test]
fn missing_variables_are_one_error_naming_them_and_nothing_is_sent() {
    let env = agent_env();
    env.loki()
        .args(["-a", "demo", "hi"])
        .assert()
        .failure()
        .code(1)
        .stderr(predicates::str::contains(
            "agent `demo` needs values for: user (Who you work for)",
        ));
    env.loki()
        .args(["-a", "demo", "--agent-variable", "colour", "red", "hi"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("has no variable `colour`"));
    env.loki()
        .args(["-a", "nope", "hi"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("no agent named `nope`"));
    assert!(env.server.requests().is_empty());
}

#[test]
fn the_environment_overrides_an_agent_s_settings() {
    let env = agent_env();
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .env("DEMO_VARIABLES", r#"[{"name":"user","default":"Cy"}]"#)
        .env("DEMO_MODEL", "fake:text-only")
        .args(["-a", "demo", "hi"])
        .assert()
        .success();
    let body = env.server.requests()[0].json();
    assert_eq!(body["model"], "text-only");
    assert!(system_prompt(&body).contains("working for Cy"), "{body}");
}

#[test]
fn an_agent_s_sessions_live_in_its_directory() {
    let env = agent_env();
    env.server.push(openai::text_stream(&["first answer"]));
    env.server.push(openai::text_stream(&["second answer"]));
    for question in ["first question", "second question"] {
        env.loki()
            .args([
                "-a",
                "demo",
                "--agent-variable",
                "user",
                "Bob",
                "-s",
                "work",
                question,
            ])
            .assert()
            .success();
    }
    let alias = env.config_dir().join("agents/demo/sessions/by-name/work");
    assert!(alias.is_file(), "no session under the agent's directory");
    assert!(!env.config_dir().join("sessions/by-name/work").exists());
    let second = env.server.requests()[1].json();
    let texts: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(texts.contains(&"first answer"), "{texts:?}");
    env.loki()
        .args(["-a", "demo", "--list-sessions"])
        .assert()
        .success()
        .stdout("work\n");
    // `--info` describes the agent's session, not one of the same name outside it.
    let out = env
        .loki()
        .args(["-a", "demo", "-s", "work", "--info"])
        .assert()
        .success();
    let info = crate::common::stdout(&out);
    assert!(
        info.lines()
            .any(|l| l.starts_with("session_messages") && l.trim_end().ends_with('4')),
        "{info}"
    );
}

#[test]
fn an_agent_session_keeps_its_variables_and_a_new_value_replaces_them() {
    let env = agent_env();
    let run = |extra: &[&str], question: &str| {
        env.server.push(openai::text_stream(&["ok"]));
        let mut args = vec!["-a", "demo", "-s", "kept"];
        args.extend_from_slice(extra);
        args.push(question);
        let out = env.loki().args(&args).assert().success();
        let sent = env.server.last_request().json();
        (system_prompt(&sent), crate::common::stderr(&out))
    };
    let (prompt, _) = run(&["--agent-variable", "user", "u1"], "first");
    assert!(prompt.contains("u1"), "{prompt}");
    // Resumed without the flag: the saved value.
    let (prompt, _) = run(&[], "second");
    assert!(prompt.contains("u1"), "{prompt}");
    // A new value replaces it, in the prompt too, and is said.
    let (prompt, err) = run(&["--agent-variable", "user", "u2"], "third");
    assert!(prompt.contains("u2") && !prompt.contains("u1"), "{prompt}");
    assert!(err.contains("`u2` replaces `u1`"), "{err}");
    let (prompt, _) = run(&[], "fourth");
    assert!(prompt.contains("u2"), "{prompt}");
}

#[test]
fn agents_are_listed_and_the_built_ins_are_installed_once() {
    let env = agent_env();
    // A fresh config dir already lists the built-in agents (the listing writes nothing).
    let all = "code-reviewer\ncoder\ndemo\nexplore\nfile-reviewer\noracle\nsisyphus\nsql\n";
    env.loki()
        .arg("--list-agents")
        .assert()
        .success()
        .stdout(all);
    assert!(!env.config_dir().join("agents/explore").exists());
    // The first run that does something installs the built-in agents, keeping an agent
    // the user wrote.
    let coder = env.config_dir().join("agents/coder/config.yaml");
    std::fs::create_dir_all(coder.parent().unwrap()).unwrap();
    std::fs::write(&coder, "name: coder\ninstructions: mine\n").unwrap();
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().arg("hi").assert().success();
    assert_eq!(
        std::fs::read_to_string(&coder).unwrap(),
        "name: coder\ninstructions: mine\n"
    );
    let listed = env.loki().arg("--list-agents").assert().success();
    let out = String::from_utf8_lossy(&listed.get_output().stdout).into_owned();
    assert_eq!(out, all);
    // The user's own `demo` was left whole: no built-in file was added to it.
    assert!(!env.config_dir().join("agents/demo/tools.py").exists());
    let explore_tools = env.config_dir().join("agents/explore/tools.sh");
    assert!(explore_tools.is_file());
}

#[test]
fn the_built_in_explore_agent_runs_its_tools_on_a_fresh_machine() {
    let env = agent_env();
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().arg("install").assert().success();
    std::fs::write(
        env.work_dir().join("needle.txt"),
        "a haystack with a needle\n",
    )
    .unwrap();
    env.server.push(openai::tool_call_stream(&[
        ("s", "search_content", r#"{"pattern":"needle"}"#),
        ("f", "search_files", r#"{"pattern":"*.txt"}"#),
        ("g", "get_structure", "{}"),
    ]));
    env.server.push(openai::text_stream(&[
        "FINDINGS: needle.txt:1 EXPLORE_COMPLETE",
    ]));
    env.loki()
        .args(["-a", "explore", "--yolo", "where is the needle?"])
        .assert()
        .success();
    let requests = env.server.requests();
    let results: Vec<String> = requests.last().unwrap().json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert!(
        results[0].contains("./needle.txt:1:a haystack with a needle"),
        "{results:?}"
    );
    assert!(results[1].contains("./needle.txt"), "{results:?}");
    assert!(results[2].contains("./needle.txt"), "{results:?}");
}

/// Writes agent `name` with `config`.
#[test]
fn an_agent_whose_tools_cannot_be_offered_says_so_when_it_starts() {
    let env = TestEnv::new();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("function_calling_support: false\n{config}"));
    write_agent(
        &env,
        "helper",
        "instructions: You help.\nglobal_tools: [fs_cat, no_such_tool]\n",
    );
    env.server.push(openai::text_stream(&["hello"]));
    let out = env.loki().args(["-a", "helper", "hi"]).assert().success();
    let err = crate::common::stderr(&out);
    assert!(err.contains("function_calling_support is off"), "{err}");
    assert!(
        err.contains("`no_such_tool`") && !err.contains("`fs_cat`"),
        "{err}"
    );
}

#[test]
fn a_mapping_tools_alias_in_global_tools_is_its_tools() {
    let env = TestEnv::new();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "mapping_tools:\n  fs: 'fs_cat,fs_ls'\n  gone: 'no_such_tool'\n{config}"
    ));
    write_agent(
        &env,
        "mapped",
        "instructions: You help.\nglobal_tools: [fs, gone]\n",
    );
    env.server.push(openai::text_stream(&["hello"]));
    let out = env.loki().args(["-a", "mapped", "hi"]).assert().success();
    let err = crate::common::stderr(&out);
    assert!(err.contains("`gone`") && !err.contains("`fs`"), "{err}");
    let sent = env.server.last_request().json();
    let names: Vec<&str> = sent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"fs_cat") && names.contains(&"fs_ls"),
        "{names:?}"
    );
}

fn write_agent(env: &TestEnv, name: &str, config: &str) {
    let dir = env.config_dir().join("agents").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.yaml"), config).unwrap();
}

/// The ids of the agents spawned, from `agent__spawn` results in a request.
fn spawned_ids(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| serde_json::from_str::<Value>(m["content"].as_str()?).ok())
        .filter_map(|v| v["id"].as_str().map(str::to_string))
        .filter(|id| id.starts_with("agent_"))
        .collect()
}

#[test]
fn sub_agents_run_at_the_same_time_and_their_answers_are_collected() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let env = TestEnv::new();
    write_agent(
        &env,
        "boss",
        "instructions: You are BOSS.\ncan_spawn_agents: true\nmax_concurrent_agents: 2\n",
    );
    write_agent(&env, "worker", "instructions: You are WORKER.\n");
    // Each worker answers only once both have asked: run one after the other, the first
    // would wait in vain (and say so).
    let waiting = Arc::new(AtomicUsize::new(0));
    env.server.respond_for("/v1/chat", move |request| {
        let body = request.json();
        let system = body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .cloned()
            .unwrap_or_default();
        if system.contains("WORKER") {
            waiting.fetch_add(1, Ordering::SeqCst);
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while waiting.load(Ordering::SeqCst) < 2 && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            let overlap = if waiting.load(Ordering::SeqCst) >= 2 {
                "together"
            } else {
                "alone"
            };
            let task = last["content"].as_str().unwrap_or_default().to_string();
            return openai::text_stream(&[&format!("{task} done {overlap}")]);
        }
        let ids = spawned_ids(&body);
        let collected = body["messages"].as_array().into_iter().flatten().any(|m| {
            m["role"] == "tool"
                && m["content"]
                    .as_str()
                    .is_some_and(|c| c.contains("completed"))
        });
        if collected {
            openai::text_stream(&["all collected"])
        } else if ids.len() == 2 {
            openai::tool_call_stream(&[
                ("c1", "agent__collect", &format!(r#"{{"id":"{}"}}"#, ids[0])),
                ("c2", "agent__collect", &format!(r#"{{"id":"{}"}}"#, ids[1])),
            ])
        } else {
            openai::tool_call_stream(&[
                (
                    "s1",
                    "agent__spawn",
                    r#"{"agent":"worker","prompt":"task A"}"#,
                ),
                (
                    "s2",
                    "agent__spawn",
                    r#"{"agent":"worker","prompt":"task B"}"#,
                ),
                (
                    "s3",
                    "agent__spawn",
                    r#"{"agent":"worker","prompt":"task C"}"#,
                ),
            ])
        }
    });
    env.loki()
        .args(["-a", "boss", "split the work"])
        .assert()
        .success()
        .stdout(predicates::str::contains("all collected"));
    let requests = env.server.requests();
    let boss: Vec<Value> = requests
        .iter()
        .map(crate::common::fake_llm::Recorded::json)
        .filter(|b| {
            b["messages"][0]["content"]
                .as_str()
                .is_some_and(|s| s.contains("BOSS"))
        })
        .collect();
    let names: Vec<String> = boss[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    assert!(names.contains(&"agent__spawn".to_string()), "{names:?}");
    // The third spawn is over capacity; the two others ran at once.
    let spawns: Vec<Value> = boss[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| serde_json::from_str(m["content"].as_str()?).ok())
        .collect();
    assert_eq!(spawns[0]["status"], "ok", "{spawns:?}");
    assert_eq!(spawns[1]["status"], "ok", "{spawns:?}");
    assert_eq!(spawns[2]["status"], "error", "{spawns:?}");
    assert!(
        spawns[2]["message"]
            .as_str()
            .unwrap()
            .starts_with("At capacity: 2/2"),
        "{spawns:?}"
    );
    let results: Vec<Value> = boss[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| serde_json::from_str(m["content"].as_str()?).ok())
        .filter(|v: &Value| v["status"] == "completed")
        .collect();
    let outputs: Vec<&str> = results
        .iter()
        .filter_map(|r| r["output"].as_str())
        .collect();
    assert_eq!(outputs, ["task A done together", "task B done together"]);
    // The workers saw their own instructions and not the boss's tools.
    let worker = requests
        .iter()
        .map(crate::common::fake_llm::Recorded::json)
        .find(|b| {
            b["messages"][0]["content"]
                .as_str()
                .is_some_and(|s| s.contains("WORKER"))
        })
        .unwrap();
    assert!(
        worker["tools"]
            .as_array()
            .is_none_or(|t| !t.iter().any(|t| t["function"]["name"] == "agent__spawn"))
    );
}

#[test]
fn spawning_past_the_depth_limit_or_an_unknown_agent_is_an_answer_for_the_model() {
    let env = TestEnv::new();
    write_agent(
        &env,
        "solo",
        "instructions: You are SOLO.\ncan_spawn_agents: true\nmax_agent_depth: 0\n",
    );
    write_agent(
        &env,
        "lead",
        "instructions: You are LEAD.\ncan_spawn_agents: true\n",
    );
    env.server.push(openai::tool_call_stream(&[(
        "s",
        "agent__spawn",
        r#"{"agent":"solo","prompt":"x"}"#,
    )]));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().args(["-a", "solo", "go"]).assert().success();
    env.server.push(openai::tool_call_stream(&[
        ("u", "agent__spawn", r#"{"agent":"ghost","prompt":"x"}"#),
        ("c", "agent__collect", r#"{"id":"agent_none"}"#),
    ]));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().args(["-a", "lead", "go"]).assert().success();
    let results: Vec<Value> = env
        .server
        .requests()
        .iter()
        .map(crate::common::fake_llm::Recorded::json)
        .flat_map(|b| b["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| serde_json::from_str(m["content"].as_str()?).ok())
        .collect();
    assert_eq!(results[0]["message"], "Max agent depth exceeded (1/0)");
    assert!(
        results[1]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("cannot start agent `ghost`: no agent named `ghost`")),
        "{results:?}"
    );
    assert_eq!(results[2]["message"], "No agent found with id 'agent_none'");
}

fn continuation_messages(env: &TestEnv) -> Vec<String> {
    let last = env.server.requests().last().unwrap().json();
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .filter(|c| c.starts_with("[SYSTEM REMINDER - TODO CONTINUATION]"))
        .map(str::to_string)
        .collect()
}

#[test]
fn open_todo_items_keep_an_agent_going_up_to_its_limit() {
    let env = TestEnv::new();
    write_agent(
        &env,
        "planner",
        "instructions: You plan.\nauto_continue: true\nmax_auto_continues: 2\n",
    );
    env.server.push(openai::tool_call_stream(&[
        ("i", "todo__init", r#"{"goal":"ship it"}"#),
        ("a", "todo__add", r#"{"task":"write"}"#),
        ("b", "todo__add", r#"{"task":"test"}"#),
    ]));
    env.server.push(openai::text_stream(&["planned"]));
    env.server.push(openai::tool_call_stream(&[(
        "d",
        "todo__done",
        r#"{"id":1}"#,
    )]));
    env.server.push(openai::text_stream(&["wrote it"]));
    env.server.push(openai::text_stream(&["testing next"]));
    env.loki()
        .args(["-a", "planner", "ship it"])
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "📋 Auto-continuing (1/2): 2 incomplete todo(s) remain",
        ))
        .stderr(predicates::str::contains(
            "📋 Auto-continuing (2/2): 1 incomplete todo(s) remain",
        ));
    assert_eq!(env.server.requests().len(), 5, "the limit stops the third");
    let first = env.server.requests()[0].json();
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("## Task tracking"), "{system}");
    let asked = continuation_messages(&env);
    assert_eq!(asked.len(), 2);
    assert!(
        asked[0].ends_with("Goal: ship it\nProgress: 0/2 completed\n  ○ 1. write\n  ○ 2. test"),
        "{}",
        asked[0]
    );
    assert!(
        asked[1].contains("Progress: 1/2 completed\n  ✓ 1. write"),
        "{}",
        asked[1]
    );
}

#[test]
fn an_agent_that_repeats_itself_is_not_asked_again() {
    let env = TestEnv::new();
    write_agent(
        &env,
        "planner",
        "instructions: You plan.\nauto_continue: true\n",
    );
    env.server.push(openai::tool_call_stream(&[(
        "a",
        "todo__add",
        r#"{"task":"write"}"#,
    )]));
    env.server.push(openai::text_stream(&["working on it"]));
    env.server.push(openai::text_stream(&["working on it"]));
    env.loki().args(["-a", "planner", "go"]).assert().success();
    assert_eq!(env.server.requests().len(), 3);
    assert_eq!(continuation_messages(&env).len(), 1);
}

#[test]
fn an_agent_that_closes_items_is_asked_again_even_when_its_words_repeat() {
    let env = TestEnv::new();
    write_agent(
        &env,
        "planner",
        "instructions: You plan.\nauto_continue: true\nmax_auto_continues: 3\n",
    );
    env.server.push(openai::tool_call_stream(&[
        ("a", "todo__add", r#"{"task":"write"}"#),
        ("b", "todo__add", r#"{"task":"test"}"#),
    ]));
    env.server.push(openai::text_stream(&["progress noted"]));
    // Each reminder: one item closed, then the same words.
    for (call, id) in [("d1", 1), ("d2", 2)] {
        env.server.push(openai::tool_call_stream(&[(
            call,
            "todo__done",
            &format!(r#"{{"id":{id}}}"#),
        )]));
        env.server.push(openai::text_stream(&["progress noted"]));
    }
    env.loki()
        .args(["-a", "planner", "go"])
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "📋 Auto-continuing (2/3): 1 incomplete todo(s) remain",
        ));
    assert_eq!(continuation_messages(&env).len(), 2);
}

/// Installs the built-in agents (the first run that answers something does).
fn with_builtins() -> TestEnv {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().arg("install").assert().success();
    env
}

#[test]
fn every_built_in_agent_starts_with_its_own_tools() {
    let env = with_builtins();
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("coder", &[], &["fs_patch", "execute_command"]),
        (
            "explore",
            &[],
            &["get_structure", "search_content", "fs_read"],
        ),
        ("oracle", &[], &["fs_grep", "fs_read"]),
        (
            "sisyphus",
            &[],
            &["todo__add", "agent__spawn", "agent__collect"],
        ),
        (
            "code-reviewer",
            &[],
            &["get_diff", "agent__spawn", "todo__done"],
        ),
        ("file-reviewer", &[], &["get_diff", "fs_read"]),
        (
            "sql",
            &["dsn", "sqlite:test.db"],
            &["list_tables", "run_query"],
        ),
        (
            "demo",
            &["username", "Ada"],
            &["current_time", "add_numbers", "greet"],
        ),
    ];
    for (agent, variables, tools) in cases {
        env.server.push(openai::text_stream(&["ready"]));
        let mut args = vec!["-a", agent];
        for pair in variables.chunks(2) {
            args.extend(["--agent-variable", pair[0], pair[1]]);
        }
        args.push("hello");
        env.loki().args(&args).assert().success();
        let body = env.server.requests().last().unwrap().json();
        let system = system_prompt(&body);
        assert!(!system.contains("{{"), "{agent}: {system}");
        let names = tool_names(&body);
        for tool in *tools {
            assert!(
                names.iter().any(|n| n == tool),
                "{agent} lacks {tool}: {names:?}"
            );
        }
        assert!(
            !names.iter().any(|n| n.starts_with('_')),
            "{agent}: {names:?}"
        );
    }
}

#[test]
fn built_in_tools_run_or_say_what_is_missing() {
    let env = with_builtins();
    // demo: Python tools.
    env.server.push(openai::tool_call_stream(&[
        ("g", "greet", r#"{"name":"Ada","shout":true}"#),
        ("a", "add_numbers", r#"{"numbers":[17,25,100]}"#),
    ]));
    env.server.push(openai::text_stream(&["done"]));
    env.loki()
        .args(["-a", "demo", "--yolo", "hi"])
        .assert()
        .success();
    let body = env.server.requests().last().unwrap().json();
    let results: Vec<String> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert_eq!(results, ["HELLO, ADA!", "142"]);
    // sql: usql is not on this machine's PATH (the test's PATH is the system's).
    let usql_installed = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("usql").is_file()));
    env.server
        .push(openai::tool_call_stream(&[("l", "list_tables", "{}")]));
    env.server.push(openai::text_stream(&["done"]));
    env.loki()
        .args([
            "-a",
            "sql",
            "--agent-variable",
            "dsn",
            "sqlite:x.db",
            "--yolo",
            "tables?",
        ])
        .assert()
        .success();
    let body = env.server.requests().last().unwrap().json();
    let result = body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    if !usql_installed {
        assert!(
            result.contains("needs `usql`, which is not installed"),
            "{result}"
        );
    }
    // code-reviewer: git is needed by the tests' own machine setup anyway.
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(env.work_dir())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(env.work_dir().join("lib.rs"), "fn one() {}\n").unwrap();
    git(&["add", "lib.rs"]);
    git(&["commit", "-q", "-m", "first"]);
    std::fs::write(env.work_dir().join("lib.rs"), "fn one() {}\nfn two() {}\n").unwrap();
    env.server.push(openai::tool_call_stream(&[
        ("d", "get_diff", "{}"),
        ("f", "get_diff", r#"{"file":"lib.rs"}"#),
    ]));
    env.server.push(openai::text_stream(&["reviewed"]));
    env.loki()
        .args(["-a", "code-reviewer", "--yolo", "review"])
        .assert()
        .success();
    let body = env.server.requests().last().unwrap().json();
    let results: Vec<String> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert!(results[0].contains("lib.rs | 1 +"), "{results:?}");
    assert!(results[1].contains("+fn two() {}"), "{results:?}");
}

/// Whether a process running `sleep 43` is alive.
fn sleeper_alive() -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .any(|cmdline| cmdline.windows(9).any(|w| w == b"sleep\x0043\x00"))
}

#[test]
fn ctrl_c_stops_the_whole_tree_and_leaves_no_process() {
    let env = TestEnv::new();
    write_agent(
        &env,
        "boss",
        "instructions: You are BOSS.\ncan_spawn_agents: true\n",
    );
    write_agent(
        &env,
        "worker",
        "instructions: You are WORKER.\nglobal_tools: [execute_command]\n",
    );
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        let system = body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if system.contains("WORKER") {
            return openai::tool_call_stream(&[(
                "x",
                "execute_command",
                r#"{"command":"sleep 43"}"#,
            )]);
        }
        match spawned_ids(&body).first() {
            Some(id) => {
                openai::tool_call_stream(&[("c", "agent__collect", &format!(r#"{{"id":"{id}"}}"#))])
            }
            None => openai::tool_call_stream(&[(
                "s",
                "agent__spawn",
                r#"{"agent":"worker","prompt":"wait"}"#,
            )]),
        }
    });
    assert!(!sleeper_alive(), "a `sleep 43` from elsewhere is running");
    let mut child = env
        .loki_std()
        .args(["-a", "boss", "--yolo", "go"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !sleeper_alive() {
        assert!(
            std::time::Instant::now() < deadline,
            "the worker never ran its command"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let started = std::time::Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let gone = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while sleeper_alive() {
        assert!(
            std::time::Instant::now() < gone,
            "the worker's command outlived loki"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn info_describes_an_agent() {
    let env = agent_env();
    let shown = env.loki().args(["--info", "-a", "demo"]).assert().success();
    let out = String::from_utf8_lossy(&shown.get_output().stdout).into_owned();
    for row in [
        "agent_tools",
        "hello,count",
        "agent_global_tools",
        "fs_cat",
        "agent_variables",
        "user,tone=calm",
    ] {
        assert!(out.contains(row), "{row} missing from:\n{out}");
    }
    env.loki()
        .args(["--info", "-a", "nope"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("no agent named `nope`"));
}

#[test]
fn a_missing_variable_is_asked_on_a_terminal() {
    use crate::common::pty::Pty;
    let env = agent_env();
    env.server.push(openai::text_stream(&["Hi Zed."]));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("> ");
    pty.send(".agent demo\r");
    pty.expect("user (Who you work for)");
    pty.send("Zed\r");
    pty.expect("agent: demo");
    // The prompt names the agent; type only once the line editor is back.
    pty.expect("demo>");
    pty.send("hello\r");
    pty.expect("Hi Zed.");
    pty.send(".exit\r");
    let body = env.server.requests()[0].json();
    assert!(
        system_prompt(&body).contains("working for Zed"),
        "{}",
        system_prompt(&body)
    );
}

#[test]
fn dynamic_instructions_come_from_the_tools_file() {
    let env = TestEnv::new();
    write_agent(
        &env,
        "dyn",
        "dynamic_instructions: true\nvariables:\n  - name: user\n    default: Bob\n",
    );
    std::fs::write(
        env.config_dir().join("agents/dyn/tools.sh"),
        "_instructions() {\n  echo \"Dynamic for $LLM_AGENT_VAR_USER on {{__os__}} in $PWD\" >> \"$LLM_OUTPUT\"\n}\n\n# @cmd Nothing\nnoop() { :; }\n",
    )
    .unwrap();
    write_agent(&env, "pydyn", "dynamic_instructions: true\n");
    std::fs::write(
        env.config_dir().join("agents/pydyn/tools.py"),
        "def _instructions():\n    return 'From Python.'\n\n\ndef ping() -> str:\n    \"\"\"Answer pong.\"\"\"\n    return 'pong'\n",
    )
    .unwrap();
    write_agent(&env, "broken", "dynamic_instructions: true\n");
    std::fs::write(
        env.config_dir().join("agents/broken/tools.sh"),
        "_instructions() { echo 'no' >&2; exit 3; }\n",
    )
    .unwrap();
    env.server.push(openai::text_stream(&["ok"]));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().args(["-a", "dyn", "hi"]).assert().success();
    env.loki().args(["-a", "pydyn", "hi"]).assert().success();
    let requests = env.server.requests();
    let first = system_prompt(&requests[0].json());
    let work = env.work_dir().canonicalize().unwrap();
    assert!(first.starts_with("Dynamic for Bob on "), "{first}");
    assert!(!first.contains("{{"), "{first}");
    assert!(
        first
            .trim_end()
            .ends_with(&format!("in {}", work.display())),
        "{first}"
    );
    assert_eq!(system_prompt(&requests[1].json()).trim(), "From Python.");
    env.loki()
        .args(["-a", "broken", "hi"])
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "broken: _instructions: exit status: 3 no",
        ));
}

#[test]
fn build_tools_checks_an_agent_s_tools() {
    let env = agent_env();
    let built = env
        .loki()
        .args(["--build-tools", "-a", "demo"])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&built.get_output().stdout).into_owned();
    assert!(
        out.contains("\"name\": \"hello\"") && out.contains("\"name\": \"count\""),
        "{out}"
    );
    assert!(
        String::from_utf8_lossy(&built.get_output().stderr)
            .contains("2 tool(s) of its own and 1 global tool(s) for agent `demo`")
    );
    write_agent(&env, "odd", "global_tools: [nope.sh]\n");
    env.loki()
        .args(["--build-tools", "-a", "odd"])
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "global tool `nope.sh` of agent `odd` does not exist",
        ));
    std::fs::write(
        env.config_dir().join("agents/odd/tools.sh"),
        "# @cmd\nbroken() { :; }\n",
    )
    .unwrap();
    env.loki()
        .args(["--build-tools", "-a", "odd"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("has no description after `@cmd`"));
}

#[test]
fn the_configured_agent_session_opens_in_the_agent_s_directory() {
    let env = agent_env();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("agent_session: daily\n{cfg}"));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .args(["-a", "demo", "--agent-variable", "user", "Bob", "hi"])
        .assert()
        .success();
    assert!(
        env.config_dir()
            .join("agents/demo/sessions/by-name/daily")
            .is_file()
    );
}

#[test]
fn an_agent_s_documents_become_its_knowledge_base() {
    use crate::common::fake_llm::embeddings;
    let env = TestEnv::new();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    let config = config.replacen(
        "    models:\n",
        "    models:\n      - name: emb\n        type: embedding\n",
        1,
    );
    env.write_config(&format!("rag_embedding_model: fake:emb\n{config}"));
    embeddings::install(&env.server);
    write_agent(
        &env,
        "kb",
        "instructions: You answer from notes.\ndocuments:\n  - notes.md\n",
    );
    std::fs::write(
        env.config_dir().join("agents/kb/notes.md"),
        "The launch code word is PELICAN.\n",
    )
    .unwrap();
    // Nobody can be asked: the error names the flag, and nothing is sent.
    env.loki()
        .args(["-a", "kb", "what is the code word?"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("--build-agent-rag"));
    assert!(env.server.requests().is_empty());
    env.server.push(openai::text_stream(&["PELICAN"]));
    env.loki()
        .args(["-a", "kb", "--build-agent-rag", "what is the code word?"])
        .assert()
        .success()
        .stdout(predicates::str::contains("PELICAN"))
        .stderr(predicates::str::contains(
            "building the knowledge base of agent `kb` from 1 document(s)",
        ));
    let chat = |env: &TestEnv| -> Vec<Value> {
        env.server
            .requests()
            .iter()
            .filter(|r| r.path_only() == "/v1/chat/completions")
            .map(crate::common::fake_llm::Recorded::json)
            .collect()
    };
    let sent = chat(&env).last().unwrap().to_string();
    assert!(sent.contains("The launch code word is PELICAN."), "{sent}");
    assert!(env.config_dir().join("rags/agent-kb.yaml").exists());
    // Built once: the next run searches it without being asked.
    env.server.push(openai::text_stream(&["still PELICAN"]));
    env.loki()
        .args(["-a", "kb", "the code word again?"])
        .assert()
        .success();
    let sent = chat(&env).last().unwrap().to_string();
    assert!(sent.contains("The launch code word is PELICAN."), "{sent}");
}

#[test]
fn auto_continue_keeps_a_one_shot_run_going_without_an_agent() {
    let env = TestEnv::new();
    env.server.push(openai::tool_call_stream(&[
        ("i", "todo__init", r#"{"goal":"tidy"}"#),
        ("a", "todo__add", r#"{"task":"sweep"}"#),
    ]));
    env.server.push(openai::text_stream(&["started"]));
    env.server.push(openai::tool_call_stream(&[(
        "d",
        "todo__done",
        r#"{"id":1}"#,
    )]));
    env.server.push(openai::text_stream(&["all swept"]));
    env.loki()
        .args(["--auto-continue", "tidy up"])
        .assert()
        .success()
        .stdout(predicates::str::contains("all swept"))
        .stderr(predicates::str::contains(
            "📋 Auto-continuing (1/10): 1 incomplete todo(s) remain",
        ));
    assert_eq!(
        env.server.requests().len(),
        4,
        "stops once the list is done"
    );
    let first = env.server.requests()[0].json();
    assert!(tool_names(&first).contains(&"todo__add".to_string()));
    // Without the flag there is no list.
    env.server.push(openai::text_stream(&["plain"]));
    env.loki().args(["tidy up"]).assert().success();
    let plain = env.server.requests().last().unwrap().json();
    assert!(!tool_names(&plain).iter().any(|t| t.starts_with("todo__")));
}

#[test]
fn an_agent_s_typescript_tools_are_offered() {
    let env = TestEnv::new();
    write_agent(&env, "ts", "instructions: You are TS.\n");
    std::fs::write(
        env.config_dir().join("agents/ts/tools.ts"),
        "/**\n * Add two numbers.\n * @param a - The first\n */\nexport function add(a: number, b: number = 1): string {\n  return String(a + b);\n}\n\nfunction helper(): void {}\n",
    )
    .unwrap();
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().args(["-a", "ts", "add"]).assert().success();
    let body = env.server.requests()[0].json();
    let tools = body["tools"].as_array().unwrap();
    let add = tools
        .iter()
        .find(|t| t["function"]["name"] == "add")
        .expect("add offered");
    assert_eq!(add["function"]["description"], "Add two numbers.");
    assert_eq!(
        add["function"]["parameters"]["required"],
        serde_json::json!(["a"])
    );
    assert!(!tool_names(&body).contains(&"helper".to_string()));
}

#[test]
fn an_agent_s_compression_threshold_applies_and_its_todo_list_survives_compression() {
    let env = TestEnv::new();
    write_agent(
        &env,
        "planner",
        "instructions: You plan.\ncompression_threshold: 300\nauto_continue: true\nmax_auto_continues: 0\n",
    );
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        if body.get("stream") != Some(&Value::Bool(true)) {
            return openai::text_json("They planned a release.");
        }
        let has_results = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "tool");
        if has_results {
            openai::text_stream(&[&"A long plan. ".repeat(150)])
        } else {
            openai::tool_call_stream(&[
                ("i", "todo__init", r#"{"goal":"release 2.0"}"#),
                ("a", "todo__add", r#"{"task":"tag the build"}"#),
            ])
        }
    });
    env.loki()
        .args(["-a", "planner", "-s", "work", "plan the release"])
        .assert()
        .success();
    let summaries = env
        .server
        .requests()
        .iter()
        .map(crate::common::fake_llm::Recorded::json)
        .filter(|b| b.get("stream") != Some(&Value::Bool(true)))
        .count();
    assert_eq!(summaries, 1, "the agent's threshold (300) was passed");
    env.loki()
        .args(["-a", "planner", "-s", "work", "what next?"])
        .assert()
        .success();
    let last = env.server.requests().last().unwrap().json();
    let history = last["messages"].to_string();
    assert!(history.contains("They planned a release."), "{history}");
    assert!(
        history.contains("The todo list so far:\\nGoal: release 2.0\\nProgress: 0/1 completed\\n  ○ 1. tag the build"),
        "{history}"
    );
}

#[test]
fn starters_are_listed_and_sent_and_macros_can_use_agents() {
    use crate::common::pty::Pty;
    let env = agent_env();
    env.server
        .push(openai::text_stream(&["Hello from the starter."]));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("> ");
    pty.send(".agent demo user=Zed\r");
    pty.expect("demo>");
    pty.send(".starter\r");
    pty.expect("1. Say hello");
    pty.expect("demo>");
    pty.send(".starter 1\r");
    pty.expect("Hello from the starter.");
    pty.expect("demo>");
    pty.send(".exit\r");
    pty.read_to_end();
    let sent = env.server.requests()[0].json();
    let last = sent["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"], "Say hello");
    // A macro step can activate an agent; the next step talks to it.
    std::fs::create_dir_all(env.config_dir().join("macros")).unwrap();
    std::fs::write(
        env.config_dir().join("macros/greet.yaml"),
        "steps:\n  - .agent demo user=Ann\n  - say hi\n",
    )
    .unwrap();
    env.server.push(openai::text_stream(&["Hi Ann."]));
    env.loki()
        .args(["--macro", "greet"])
        .assert()
        .success()
        .stdout(predicates::str::contains("Hi Ann."));
    let body = env.server.requests().last().unwrap().json();
    assert!(system_prompt(&body).contains("working for Ann"));
}

/// Confined (the default sandbox), an agent's `tools.sh` runs from a private copy, since
/// loki's config directory is on the deny list: what lies beside it (a sourced helper, a
/// data file) is copied with it, and its sessions and config are not.
#[test]
fn a_confined_agent_tool_finds_the_helpers_beside_it() {
    let env = TestEnv::new();
    let dir = env.config_dir().join("agents/helped");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::create_dir_all(dir.join("sessions")).unwrap();
    std::fs::write(dir.join("config.yaml"), "instructions: Help.\n").unwrap();
    std::fs::write(dir.join("sessions/old.yaml"), "messages: []\n").unwrap();
    std::fs::write(dir.join("data/greeting.txt"), "Howdy").unwrap();
    std::fs::write(
        dir.join("lib.sh"),
        "greet() { echo \"$(cat \"$HERE/data/greeting.txt\"), $1\"; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tools.sh"),
        "#!/usr/bin/env bash\nset -euo pipefail\nHERE=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\nsource \"$HERE/lib.sh\"\n\n# @cmd Greet someone\n# @option --name! Who\nhello() {\n    greet \"$argc_name\" >> \"$LLM_OUTPUT\"\n    ls -a \"$HERE\" | tr '\\n' ' ' >> \"$LLM_OUTPUT\"\n}\n",
    )
    .unwrap();
    env.server.push(openai::tool_call_stream(&[(
        "h",
        "hello",
        r#"{"name":"Ada"}"#,
    )]));
    env.server.push(openai::text_stream(&["Done."]));
    env.loki()
        .args([
            "-a",
            "helped",
            "--sandbox",
            "workspace-write",
            "--yolo",
            "greet Ada",
        ])
        .assert()
        .success();
    let result = env.server.requests()[1].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_default();
    assert!(result.starts_with("Howdy, Ada"), "{result}");
    assert!(
        result.contains("lib.sh") && result.contains("data"),
        "{result}"
    );
    assert!(
        !result.contains("sessions") && !result.contains("config.yaml"),
        "{result}"
    );
}
