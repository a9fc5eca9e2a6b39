//! Shell integration (Alt-e) scripts and completion scripts.

use std::process::Command;

use crate::common::fake_llm::openai;
use crate::common::{LOKI, TestEnv, stdout};

const SHELLS: &[&str] = &["bash", "zsh", "fish", "nushell", "elvish", "powershell"];

fn installed(shell: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {shell}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Syntax-checks `script` with `shell -n` (`.ci/run` installs bash, zsh and fish).
fn check_syntax(shell: &str, script: &str) {
    assert!(
        installed(shell),
        "{shell} is required for this test (Debian package `{shell}`; .ci/run installs it)"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script");
    std::fs::write(&path, script).unwrap();
    let out = Command::new(shell).arg("-n").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{shell} -n failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_shell_gets_an_integration_and_a_completion_script() {
    let env = TestEnv::new();
    for shell in SHELLS {
        let integration = stdout(
            &env.loki()
                .args(["--shell-integration", shell])
                .assert()
                .success(),
        );
        assert!(integration.contains("loki -e"), "{shell}: {integration}");
        let completions = stdout(&env.loki().args(["--completions", shell]).assert().success());
        assert!(
            completions.contains("--model") || completions.contains("model"),
            "{shell}"
        );
        assert!(
            completions.len() > 500,
            "{shell} completion script is suspiciously short"
        );
    }
    let unknown = env.loki().args(["--completions", "tcsh"]).assert().code(2);
    assert!(String::from_utf8_lossy(&unknown.get_output().stderr).contains("tcsh"));
}

#[test]
fn scripts_parse_in_bash_zsh_and_fish() {
    let env = TestEnv::new();
    for shell in ["bash", "zsh", "fish"] {
        let integration = stdout(
            &env.loki()
                .args(["--shell-integration", shell])
                .assert()
                .success(),
        );
        let completions = stdout(&env.loki().args(["--completions", shell]).assert().success());
        check_syntax(shell, &integration);
        check_syntax(shell, &completions);
    }
}

#[test]
fn the_bash_alt_e_function_replaces_the_line_with_the_generated_command() {
    let env = TestEnv::new();
    env.server.push(openai::text_json("du -sh * | sort -h"));
    let bin_dir = std::path::Path::new(LOKI)
        .parent()
        .unwrap()
        .display()
        .to_string();
    // Call the key binding's function the way readline would: with READLINE_LINE set,
    // to a line that starts like a flag (it is the request, not an option).
    let script = format!(
        "export PATH={bin_dir}:$PATH\n\
         eval \"$(loki --shell-integration bash)\" 2>/dev/null\n\
         READLINE_LINE='-n what uses the space here'; READLINE_POINT=0\n\
         _loki_alt_e\n\
         printf '%s|%s' \"$READLINE_LINE\" \"$READLINE_POINT\""
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .env_clear()
        .envs(env.env_pairs())
        .current_dir(env.work_dir())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "du -sh * | sort -h|18"
    );
    assert_eq!(
        env.server.last_request().json()["messages"][1]["content"],
        "-n what uses the space here"
    );
}

/// Presses Tab in bash: registers loki's dynamic completer and calls it the way bash
/// would for `line`; returns the candidates.
fn bash_complete(env: &TestEnv, line: &str) -> Vec<String> {
    let bin_dir = std::path::Path::new(LOKI).parent().unwrap().display();
    let script = format!(
        "export PATH={bin_dir}:$PATH\n\
         source <(COMPLETE=bash loki)\n\
         COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}\n\
         read -ra COMP_WORDS <<< \"$COMP_LINE\"\n\
         [[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')\n\
         COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMP_TYPE=9\n\
         _clap_complete_loki loki \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\""
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .env_clear()
        .envs(env.env_pairs())
        .current_dir(env.work_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn tab_completes_models_roles_and_sessions_from_the_config_dir() {
    let env = TestEnv::new();
    env.loki()
        .args(["-s", "lisbon-trip", "hi"])
        .assert()
        .success();
    std::fs::create_dir_all(env.config_dir().join("roles")).unwrap();
    std::fs::write(
        env.config_dir().join("roles/pirate.md"),
        "Talk like a pirate.",
    )
    .unwrap();

    let models = bash_complete(&env, "loki -m fake:gpt");
    assert!(
        models.contains(&"fake:gpt-4o-mini".to_string()),
        "{models:?}"
    );
    assert!(
        models.iter().all(|m| m.starts_with("fake:gpt")),
        "{models:?}"
    );
    let roles = bash_complete(&env, "loki -r ");
    for role in ["pirate", "shell", "code", "create-title"] {
        assert!(roles.contains(&role.to_string()), "{roles:?}");
    }
    assert_eq!(bash_complete(&env, "loki --session lis"), ["lisbon-trip"]);
    let flags = bash_complete(&env, "loki --list-mo");
    assert_eq!(flags, ["--list-models"]);
    // Agents, built-in ones included, and the named agent's variables.
    let agent_dir = env.config_dir().join("agents/greeter");
    std::fs::create_dir_all(&agent_dir).unwrap();
    std::fs::write(
        agent_dir.join("config.yaml"),
        "instructions: Greet {{username}}.\nvariables:\n  - name: username\n    description: who\n",
    )
    .unwrap();
    let before = crate::common::tree(&env.config_dir());
    let agents = bash_complete(&env, "loki -a ");
    for agent in ["greeter", "explore"] {
        assert!(agents.contains(&agent.to_string()), "{agents:?}");
    }
    assert_eq!(
        bash_complete(&env, "loki -a greeter --agent-variable us"),
        ["username"]
    );
    assert_eq!(
        crate::common::tree(&env.config_dir()),
        before,
        "completing writes nothing"
    );
    assert!(env.server.requests().len() == 1, "and sends nothing");
}
