//! Roles from the command line: front matter, prompt shapes, built-ins, listing.

use serde_json::json;

use crate::common::{TestEnv, stderr, stdout};

fn write_role(env: &TestEnv, name: &str, text: &str) {
    let dir = env.config_dir().join("roles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.md")), text).unwrap();
}

#[test]
fn role_front_matter_sets_model_and_sampling() {
    let env = TestEnv::new();
    write_role(
        &env,
        "terse",
        "---\nmodel: fake:text-only\ntemperature: 0.1\ntop_p: 0.5\n---\nAnswer in five words.\n",
    );
    env.loki()
        .args(["-r", "terse", "why is the sky blue"])
        .assert()
        .success();
    let body = env.server.last_request().json();
    assert_eq!(body["model"], "text-only");
    assert_eq!(body["temperature"], json!(0.1));
    assert_eq!(body["top_p"], json!(0.5));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "Answer in five words."},
            {"role": "user", "content": "why is the sky blue"}
        ])
    );
    // -m still wins over the role's model.
    env.loki()
        .args(["-r", "terse", "-m", "fake:gpt-4o-mini", "x"])
        .assert()
        .success();
    assert_eq!(env.server.last_request().json()["model"], "gpt-4o-mini");
}

#[test]
fn embedded_and_few_shot_roles() {
    let env = TestEnv::new();
    write_role(
        &env,
        "toml",
        "---\nprompt: convert __INPUT__ to TOML\n---\n",
    );
    env.loki()
        .args(["-r", "toml", r#"{"a":1}"#])
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([{"role": "user", "content": "convert {\"a\":1} to TOML"}])
    );

    write_role(
        &env,
        "shots",
        "Be exact.\n### INPUT:\n2+2\n### OUTPUT:\n4\n### INPUT:\n3+3\n### OUTPUT:\n6\n",
    );
    env.loki().args(["-r", "shots", "5+5"]).assert().success();
    assert_eq!(
        env.server.last_request().json()["messages"],
        json!([
            {"role": "system", "content": "Be exact."},
            {"role": "user", "content": "2+2"},
            {"role": "assistant", "content": "4"},
            {"role": "user", "content": "3+3"},
            {"role": "assistant", "content": "6"},
            {"role": "user", "content": "5+5"}
        ])
    );
}

#[test]
fn special_variables_are_filled_in() {
    let env = TestEnv::new();
    write_role(
        &env,
        "where",
        "You run on {{__os__}} ({{__arch__}}) using {{__shell__}}; unknown {{x}} stays.\n",
    );
    env.loki()
        .env("SHELL", "/usr/bin/fish")
        .args(["-r", "where", "hi"])
        .assert()
        .success();
    let system = env.server.last_request().json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains(std::env::consts::OS) && system.contains("fish"),
        "{system}"
    );
    assert!(system.contains("{{x}}"), "{system}");
}

#[test]
fn builtins_are_installed_listed_and_overridable() {
    let env = TestEnv::new();
    let out = env.loki().arg("--list-roles").assert().success();
    let names = stdout(&out);
    for builtin in [
        "code",
        "create-title",
        "explain-shell",
        "shell",
        "commit-message",
    ] {
        assert!(names.lines().any(|l| l == builtin), "{names}");
    }
    assert!(
        !env.config_dir().join("roles").exists(),
        "listing writes nothing"
    );
    env.loki().arg("first run").assert().success();
    assert!(
        env.config_dir().join("roles/shell.md").exists(),
        "built-ins installed on first run"
    );
    write_role(&env, "code", "My own code role.\n");
    env.loki().args(["-c", "x"]).assert().success();
    assert_eq!(
        env.server.last_request().json()["messages"][0],
        json!({"role": "system", "content": "My own code role."})
    );
}

#[test]
fn unknown_role_and_broken_front_matter_are_clear_errors() {
    let env = TestEnv::new();
    let out = env.loki().args(["-r", "ghost", "hi"]).assert().code(1);
    assert!(
        stderr(&out).contains("unknown role `ghost`"),
        "{}",
        stderr(&out)
    );
    write_role(&env, "broken", "---\nmodel: [oops\n---\nx\n");
    let out = env.loki().args(["-r", "broken", "hi"]).assert().code(1);
    assert!(
        stderr(&out).contains("broken.md: invalid front matter"),
        "{}",
        stderr(&out)
    );
    assert!(env.server.requests().is_empty());
}

#[test]
fn prompt_flag_beats_role_flag() {
    let env = TestEnv::new();
    write_role(&env, "r", "From the role.\n");
    env.loki()
        .args(["-r", "r", "--prompt", "From the flag.", "hi"])
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().json()["messages"][0]["content"],
        "From the flag."
    );
}
