//! A repository set up for Claude Code works in loki: `.claude/settings.json` hooks and
//! permission rules, `.mcp.json` servers, `.claude/commands` and `.claude/skills` — and
//! what can run code needs trust (asked once on a terminal and remembered,
//! `--trust-project` without one), while deny rules always apply and a skill that links
//! out of the project is skipped.

use serde_json::json;

use crate::common::fake_llm::{Recorded, Reply, openai};
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr, stdout};

fn env_with_project() -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command\n{cfg}"));
    let claude = env.work_dir().join(".claude");
    std::fs::create_dir_all(claude.join("commands")).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        json!({
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo 'blocked by the project hook' >&2; exit 2"}]}]},
            "permissions": {"deny": ["Bash(rm:*)"]},
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        claude.join("commands/greet.md"),
        "---\ndescription: Greet someone\nargument-hint: NAME\n---\nSay hello to $ARGUMENTS, warmly.\n",
    )
    .unwrap();
    env
}

fn route(request: &Recorded) -> Reply {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if let Some(last) = messages.last().filter(|m| m["role"] == "tool") {
        return openai::text_stream(&[&format!(
            "tool: {}",
            last["content"].as_str().unwrap_or_default()
        )]);
    }
    let text = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    if let Some(command) = text.strip_prefix("run ") {
        return openai::tool_call_stream(&[(
            "c",
            "execute_command",
            &json!({"command": command}).to_string(),
        )]);
    }
    openai::text_stream(&["ok"])
}

#[test]
fn hooks_need_trust_and_deny_rules_always_apply() {
    let env = env_with_project();
    env.server.respond_for("/v1/chat", route);
    // Not trusted (no terminal to ask on): the hook does not run, the deny rule does.
    let out = env
        .loki()
        .args(["--yolo", "run touch made"])
        .assert()
        .success();
    assert!(stderr(&out).contains("not trusted"), "{}", stderr(&out));
    assert!(env.work_dir().join("made").exists());
    let out = env
        .loki()
        .args(["--yolo", "run rm made"])
        .assert()
        .success();
    assert!(stdout(&out).contains("Bash(rm:*)"), "{}", stdout(&out));
    assert!(env.work_dir().join("made").exists());
    // Trusted: the project's hook blocks the command.
    let out = env
        .loki()
        .args(["--yolo", "--trust-project", "run touch other"])
        .assert()
        .success();
    assert!(
        stdout(&out).contains("blocked by the project hook"),
        "{}",
        stdout(&out)
    );
    assert!(!env.work_dir().join("other").exists());
}

#[test]
fn claude_commands_skills_and_mcp_json() {
    let env = env_with_project();
    env.server.respond_for("/v1/chat", route);
    env.loki().arg("/greet Ada").assert().success();
    let sent = env.server.last_request().json();
    let user = sent["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert_eq!(user, "Say hello to Ada, warmly.", "{sent}");

    let skills = env.work_dir().join(".claude/skills/release");
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::write(
        skills.join("SKILL.md"),
        "---\ndescription: How to cut a release\n---\nSteps.\n",
    )
    .unwrap();
    let secret = env.root().join("secret.md");
    std::fs::write(&secret, "---\ndescription: the secret\n---\nTOP SECRET\n").unwrap();
    let leaky = env.work_dir().join(".claude/skills/leaky");
    std::fs::create_dir_all(&leaky).unwrap();
    std::os::unix::fs::symlink(&secret, leaky.join("SKILL.md")).unwrap();
    env.loki().arg("hello").assert().success();
    let sent = env.server.last_request().json().to_string();
    assert!(sent.contains("How to cut a release"), "{sent}");
    assert!(
        !sent.contains("the secret"),
        "a skill linking out of the project is skipped"
    );

    std::fs::write(
        env.work_dir().join(".mcp.json"),
        json!({"mcpServers": {"proj": {"command": super::mcp::server_bin(), "env": {"SECRET_TOKEN": "x"}}}}).to_string(),
    )
    .unwrap();
    env.loki().arg("hello").assert().success();
    let tools = env.server.last_request().json()["tools"].to_string();
    assert!(!tools.contains("proj_echo"), "untrusted: not started");
    env.loki()
        .args(["--trust-project", "hello"])
        .assert()
        .success();
    let tools = env.server.last_request().json()["tools"].to_string();
    assert!(tools.contains("proj_echo"), "{tools}");
}

/// A question longer than the terminal is wide wraps; answered, it is written once with
/// its answer, not again below its first rows.
#[test]
fn a_wrapped_trust_question_is_shown_once_with_its_answer() {
    let env = env_with_project();
    env.server.respond_for("/v1/chat", route);
    // 80 columns (the pseudo-terminal's size): the question takes two rows or more.
    let mut pty = Pty::spawn(&env, &["-p", "hello"], &[("NO_COLOR", "1")]);
    let asked = pty.expect("Trust this project?");
    pty.send("n");
    let rest = pty.read_to_end();
    let mut parser = vt100::Parser::new(24, 80, 200);
    parser.process(asked.as_bytes());
    parser.process(rest.as_bytes());
    let screen = parser.screen().contents();
    assert_eq!(
        screen.matches("has project settings").count(),
        1,
        "{screen}"
    );
    assert!(screen.contains("Trust this project? no"), "{screen}");
}

#[test]
fn the_terminal_asks_once_and_remembers() {
    let env = env_with_project();
    env.server.respond_for("/v1/chat", route);
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("Trust this project?");
    pty.send("y");
    pty.expect("mini)> ");
    pty.send(".exit\r");
    pty.read_to_end();
    let remembered =
        std::fs::read_to_string(env.config_dir().join("trusted-projects.yaml")).unwrap();
    assert!(remembered.contains(": true"), "{remembered}");
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    let start = pty.expect("mini)> ");
    assert!(!start.contains("Trust this project"), "{start}");
    pty.send(".exit\r");
    pty.read_to_end();
}

#[test]
fn claude_agents_of_a_trusted_project() {
    let env = env_with_project();
    env.server.respond_for("/v1/chat", route);
    let agents = env.work_dir().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\nmodel: sonnet\n---\nYou are REVIEWER. Point out bugs.\n",
    )
    .unwrap();
    let out = env
        .loki()
        .args(["-a", "reviewer", "check it"])
        .assert()
        .failure();
    assert!(stderr(&out).contains("reviewer"), "{}", stderr(&out));
    env.loki()
        .args(["--trust-project", "-a", "reviewer", "check it"])
        .assert()
        .success();
    let sent = env.server.last_request().json();
    assert!(
        sent["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("You are REVIEWER"),
        "{sent}"
    );
    let tools: Vec<&str> = sent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    for tool in ["fs_cat", "fs_read", "fs_grep"] {
        assert!(tools.contains(&tool), "{tools:?}");
    }
    assert!(!tools.contains(&"execute_command"), "{tools:?}");
}
