//! Agents: a directory with instructions, variables and a tools file; the tools run with
//! the agent's variables; the agent sees only its own tools and its `global_tools`; its
//! sessions live under its directory; built-in agents are installed on first run.

use serde_json::Value;

use crate::common::TestEnv;
use crate::common::fake_llm::openai;

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

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
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
}

#[test]
fn agents_are_listed_and_the_built_ins_are_installed_once() {
    let env = agent_env();
    env.loki()
        .arg("--list-agents")
        .assert()
        .success()
        .stdout("demo\n");
    // The first run that does something installs the built-in agents, keeping a file the
    // user wrote.
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
    assert_eq!(out, "coder\ndemo\nexplore\noracle\n");
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
