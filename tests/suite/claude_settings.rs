//! Claude Code settings copied as they are, through the real binary: every hook event
//! Claude documents is kept (an inactive one never drops the file's `PreToolUse` guard),
//! `SessionEnd` runs at the end, `WebFetch(domain:…)` rules match the fetched host, the
//! user's `~/.claude/settings.json` and `~/.claude/commands` apply, `settings.local.json`
//! wins over `settings.json`, `defaultMode` and `additionalDirectories` work, a command's
//! front matter sets its turn's model and allowed tools, and `--info` says what was read
//! from where.

use serde_json::{Value, json};

use crate::common::fake_llm::{Recorded, Reply, openai};
use crate::common::{TestEnv, stderr, stdout};

fn env_with(tools: &str) -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: {tools}\n{cfg}"));
    env
}

fn write_json(path: std::path::PathBuf, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value.to_string()).unwrap();
}

fn home(env: &TestEnv) -> std::path::PathBuf {
    env.root().join("home")
}

fn last_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rfind(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// `run X`, `write X`, `fetch URL`: one call; after a tool, its result echoed.
fn route(request: &Recorded) -> Reply {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if let Some(last) = messages.last().filter(|m| m["role"] == "tool") {
        return openai::text_stream(&[&format!(
            "result: {}",
            last["content"].as_str().unwrap_or_default()
        )]);
    }
    let last = last_user(&body);
    let call =
        |name: &str, args: Value| openai::tool_call_stream(&[("c1", name, &args.to_string())]);
    match last.split_once(' ') {
        Some(("run", command)) => call("execute_command", json!({ "command": command })),
        Some(("write", path)) => call("fs_write", json!({"path": path, "contents": "x\n"})),
        Some(("fetch", url)) => call("fetch_url", json!({ "url": url })),
        _ => openai::text_stream(&[&format!("answer to: {last}")]),
    }
}

/// A project file with a `SessionEnd` hook, an inactive `SubagentStart` one and a
/// `PreToolUse` guard: the guard still blocks, `SessionEnd` runs, `--info` lists them.
#[test]
fn an_event_loki_does_not_run_keeps_the_guard_of_the_same_file() {
    let env = env_with("execute_command");
    env.server.respond_for("/v1/chat", route);
    let guard = "cat > guard-input.json; if grep -q forbidden guard-input.json; then echo 'no forbidden commands' >&2; exit 2; fi";
    write_json(
        env.work_dir().join(".claude/settings.json"),
        &json!({"hooks": {
            "SessionEnd": [{"hooks": [{"type": "command", "command": "cat > session-end.json"}]}],
            "SubagentStart": [{"hooks": [{"type": "command", "command": "touch started"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": guard}]}],
        }}),
    );
    let out = env
        .loki()
        .args(["--trust-project", "--yolo", "run echo forbidden > made"])
        .assert()
        .success();
    assert!(!env.work_dir().join("made").exists(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("no forbidden commands"),
        "{}",
        stdout(&out)
    );
    let end: Value = serde_json::from_str(
        &std::fs::read_to_string(env.work_dir().join("session-end.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(end["hook_event_name"], "SessionEnd", "{end}");
    let out = env.loki().arg("--info").assert().success();
    let info = stdout(&out);
    assert!(info.contains("claude:project"), "{info}");
    assert!(
        info.contains("PreToolUse 1, SessionEnd 1, SubagentStart 1 (inactive)"),
        "{info}"
    );
}

/// A hook kind loki does not run (`prompt`, with no `command`) is a warning: the file's
/// deny rules still apply.
#[test]
fn a_claude_only_hook_kind_keeps_the_deny_rules_of_its_file() {
    let env = env_with("execute_command");
    env.server.respond_for("/v1/chat", route);
    std::fs::write(env.work_dir().join("victim"), "x").unwrap();
    write_json(
        env.work_dir().join(".claude/settings.json"),
        &json!({
            "permissions": {"deny": ["Bash(rm:*)"]},
            "hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "check it"}]}]},
        }),
    );
    let out = env
        .loki()
        .args(["--trust-project", "--yolo", "run rm -f victim"])
        .assert()
        .success();
    assert!(env.work_dir().join("victim").exists(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("`prompt` hook is Claude Code's own"),
        "{}",
        stderr(&out)
    );
}

/// A copied file's rule naming a tool loki does not have (an MCP server set up only
/// for Claude Code) is a warning naming the file; its other rules apply.
#[test]
fn a_settings_rule_naming_an_unknown_tool_is_a_warning_and_the_rest_apply() {
    let env = env_with("execute_command");
    env.server.respond_for("/v1/chat", route);
    std::fs::write(env.work_dir().join("victim"), "x").unwrap();
    write_json(
        env.work_dir().join(".claude/settings.json"),
        &json!({"permissions": {"deny": ["mcp__github__delete_repo", "Agent", "Bash(rm:*)"]}}),
    );
    let out = env
        .loki()
        .args(["--trust-project", "--yolo", "run rm -f victim"])
        .assert()
        .success();
    assert!(env.work_dir().join("victim").exists(), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("mcp__github__delete_repo") && err.contains(".claude/settings.json"),
        "{err}"
    );
    assert!(!err.contains("`Agent`"), "{err}");
    // In loki's own configuration the same mistake still stops it, naming the rule.
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("permissions:\n  deny: [execute_comand]\n{cfg}"));
    let out = env.loki().arg("hi").assert().code(1);
    assert!(stderr(&out).contains("execute_comand"), "{}", stderr(&out));
}

/// `WebFetch(domain:…)` in the user's `~/.claude/settings.json`: a fetch of that host
/// (or one below it) is refused, even with --yolo; another host is not.
#[test]
fn a_user_domain_rule_refuses_fetches_of_that_host_only() {
    let env = env_with("fetch_url");
    env.server.respond_for("/v1/chat", route);
    write_json(
        home(&env).join(".claude/settings.json"),
        &json!({"permissions": {"deny": ["WebFetch(domain:example.com)"]}}),
    );
    for url in ["https://example.com/page", "https://docs.example.com/"] {
        let out = env
            .loki()
            .args(["--yolo", &format!("fetch {url}")])
            .assert()
            .success();
        assert!(
            stdout(&out).contains("WebFetch(domain:example.com)"),
            "{url}: {}",
            stdout(&out)
        );
        assert!(
            stdout(&out).contains("user settings file"),
            "{}",
            stdout(&out)
        );
    }
    // Another host is not covered (nothing listens there: the fetch itself fails).
    let out = env
        .loki()
        .args(["--yolo", "fetch http://127.0.0.1:9/x"])
        .assert()
        .success();
    assert!(
        !stdout(&out).contains("WebFetch(domain:example.com)"),
        "{}",
        stdout(&out)
    );
    let out = env.loki().arg("--info").assert().success();
    assert!(stdout(&out).contains("claude:user"), "{}", stdout(&out));
}

/// `defaultMode` of `settings.local.json` wins over `settings.json`'s: `acceptEdits`
/// writes without asking; `additionalDirectories` lets a write outside the tree.
#[test]
fn local_settings_win_and_set_the_mode_and_more_directories() {
    let env = env_with("fs_write");
    env.server.respond_for("/v1/chat", route);
    let shared = env.work_dir().parent().unwrap().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    write_json(
        env.work_dir().join(".claude/settings.json"),
        &json!({"permissions": {"defaultMode": "plan"}}),
    );
    write_json(
        env.work_dir().join(".claude/settings.local.json"),
        &json!({"permissions": {"defaultMode": "acceptEdits", "additionalDirectories": ["../shared"]}}),
    );
    let out = env
        .loki()
        .args(["--trust-project", "write a.txt"])
        .assert()
        .success();
    assert!(env.work_dir().join("a.txt").exists(), "{}", stdout(&out));
    let out = env
        .loki()
        .args(["--trust-project", "write ../shared/b.txt"])
        .assert()
        .success();
    assert!(shared.join("b.txt").exists(), "{}", stdout(&out));
    // Outside both, a write is still asked about (and headless, refused).
    let out = env
        .loki()
        .args(["--trust-project", "write ../elsewhere.txt"])
        .assert()
        .success();
    assert!(
        !env.work_dir()
            .parent()
            .unwrap()
            .join("elsewhere.txt")
            .exists(),
        "{}",
        stdout(&out)
    );
    let out = env.loki().args(["--info"]).assert().success();
    let info = stdout(&out);
    assert!(info.contains("claude:local"), "{info}");
    assert!(info.contains("defaultMode acceptEdits"), "{info}");
}

/// A command of `~/.claude/commands`: its `model` runs its turn, its `allowed-tools`
/// let the calls they cover run unasked, its `argument-hint` is listed.
#[test]
fn command_front_matter_sets_the_turn_s_model_and_allowed_tools() {
    let env = env_with("execute_command");
    env.server.respond_for("/v1/chat", route);
    let commands = home(&env).join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("cheap.md"),
        "---\ndescription: Ask the cheap model\nmodel: fake:priced\nargument-hint: QUESTION\n---\nAnswer briefly: $ARGUMENTS\n",
    )
    .unwrap();
    std::fs::write(
        commands.join("make.md"),
        "---\ndescription: Make a file\nallowed-tools: Bash(touch:*)\n---\nrun touch $ARGUMENTS\n",
    )
    .unwrap();
    env.loki().arg("/cheap why").assert().success();
    let body = env.server.requests()[0].json();
    assert_eq!(body["model"], "priced", "{body}");
    assert_eq!(last_user(&body), "Answer briefly: why");

    let out = env.loki().arg("/make made").assert().success();
    assert!(env.work_dir().join("made").exists(), "{}", stdout(&out));
    // Without the command, the same call is asked about (headless: refused).
    let out = env.loki().arg("run touch other").assert().success();
    assert!(!env.work_dir().join("other").exists(), "{}", stdout(&out));
    let bodies = env.server.requests();
    assert!(
        bodies
            .iter()
            .all(|r| r.json()["model"] != "priced" || last_user(&r.json()).starts_with("Answer")),
        "only the command's turn used its model"
    );

    let out = env.loki().arg("--list-skills").assert().success();
    assert!(
        stdout(&out).contains("QUESTION — Ask the cheap model"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// A project's command (`.claude/commands`) loosens approvals with `allowed-tools` only
/// once the project is trusted, as its settings' allow rules do: a repository cannot make
/// its own commands run unasked.
#[test]
fn a_project_command_s_allowed_tools_need_the_project_s_trust() {
    let env = env_with("execute_command");
    env.server.respond_for("/v1/chat", route);
    let commands = env.work_dir().join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("make.md"),
        "---\nallowed-tools: Bash(touch:*)\n---\nrun touch $ARGUMENTS\n",
    )
    .unwrap();
    let out = env.loki().arg("/make planted").assert().success();
    assert!(!env.work_dir().join("planted").exists(), "{}", stdout(&out));
    assert!(
        stderr(&out)
            .contains("the command's allowed-tools are not used: the project is not trusted"),
        "{}",
        stderr(&out)
    );
    let out = env
        .loki()
        .args(["--trust-project", "/make trusted"])
        .assert()
        .success();
    assert!(env.work_dir().join("trusted").exists(), "{}", stderr(&out));
}

/// `--info` shows what a run would use: the mode and sandbox of the flags, and a project's
/// `defaultMode: plan` and deny rules (which need no trust).
#[test]
fn info_shows_the_flags_and_the_project_s_mode_and_rules_in_force() {
    let env = TestEnv::new();
    let info = |args: &[&str]| stdout(&env.loki().args(args).arg("--info").assert().success());
    let shown = info(&["--permission-mode", "acceptEdits", "--sandbox", "read-only"]);
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("permission_mode") && l.ends_with("accept-edits")),
        "{shown}"
    );
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("sandbox") && l.contains("read-only")),
        "{shown}"
    );
    env.write(
        ".claude/settings.local.json",
        r#"{"permissions":{"defaultMode":"plan","deny":["Bash(rm:*)"]}}"#,
    );
    let shown = info(&[]);
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("permission_mode") && l.ends_with("plan")),
        "{shown}"
    );
    assert!(shown.contains("Bash(rm:*)"), "{shown}");
}
