//! Starting without a config file: keys in the environment, local servers, LOKI_PLATFORM.

use crate::common::fake_llm::openai;
use crate::common::{TestEnv, stdout};

#[test]
fn an_openai_key_in_the_environment_is_enough() {
    let env = TestEnv::bare();
    env.server.push(openai::text_stream(&["zero config"]));
    let out = env
        .loki()
        .env("OPENAI_API_KEY", "sk-env")
        .env("OPENAI_API_BASE", env.server.base_url())
        .arg("hi")
        .assert()
        .success();
    assert_eq!(stdout(&out), "zero config\n");
    let req = env.server.last_request();
    assert_eq!(req.header("authorization"), Some("Bearer sk-env"));
    assert_eq!(req.json()["model"], "gpt-4.1-mini");
    assert!(!env.config_path().exists(), "zero-config writes nothing");
}

#[test]
fn a_local_ollama_is_found_and_its_first_chat_model_used() {
    let env = TestEnv::bare();
    env.server.push_for(
        "/v1/models",
        openai::models_list(&["nomic-embed-text", "llama3.2:latest"]),
    );
    env.server
        .push_for("/v1/chat", openai::text_stream(&["local answer"]));
    let out = env
        .loki()
        .env("OLLAMA_API_BASE", env.server.base_url())
        .arg("hi")
        .assert()
        .success();
    assert_eq!(stdout(&out), "local answer\n");
    let req = env.server.last_request();
    assert_eq!(req.json()["model"], "llama3.2:latest");
    assert_eq!(
        req.header("authorization"),
        None,
        "local servers get no key"
    );
}

#[test]
fn list_models_shows_what_a_found_local_server_serves() {
    let env = TestEnv::bare();
    for _ in 0..2 {
        env.server.push_for(
            "/v1/models",
            openai::models_list(&["nomic-embed-text", "llama3.2:latest", "qwen3:8b"]),
        );
    }
    let listed = |args: &[&str]| {
        let out = env
            .loki()
            .env("OLLAMA_API_BASE", env.server.base_url())
            .args(args)
            .assert()
            .success();
        stdout(&out)
    };
    assert_eq!(
        listed(&["--list-models"]),
        "ollama:llama3.2:latest\nollama:qwen3:8b\n"
    );
    assert_eq!(
        listed(&["--list-models=embedding"]),
        "ollama:nomic-embed-text\n"
    );
}

#[test]
fn loki_platform_selects_vendor_and_model() {
    let env = TestEnv::bare();
    env.loki()
        .env("LOKI_PLATFORM", "deepseek:deepseek-reasoner")
        .env("DEEPSEEK_API_KEY", "dk")
        .env("DEEPSEEK_API_BASE", env.server.base_url())
        .arg("hi")
        .assert()
        .success();
    let req = env.server.last_request();
    assert_eq!(req.json()["model"], "deepseek-reasoner");
    assert_eq!(req.header("authorization"), Some("Bearer dk"));
}

#[test]
fn info_shows_the_output_cap_each_request_carries() {
    let env = TestEnv::new();
    let out = env.loki().arg("--info").assert().success();
    let info = stdout(&out);
    let row = |info: &str| {
        info.lines()
            .find(|l| l.starts_with("max_tokens_sent"))
            .unwrap_or_else(|| panic!("{info}"))
            .to_string()
    };
    // The fake server is on 127.0.0.1: a local server, which always gets a limit.
    assert!(
        row(&info).contains("4096 (always sent to a local server"),
        "{info}"
    );
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&config.replace(
        "      - name: text-only\n",
        "      - name: text-only\n        max_output_tokens: 2048\n        require_max_tokens: true\n",
    ));
    let out = env
        .loki()
        .args(["-m", "fake:text-only", "--info"])
        .assert()
        .success();
    assert!(row(&stdout(&out)).contains("2048 (always sent"));
}

#[test]
fn info_works_without_any_configuration() {
    let env = TestEnv::bare();
    let out = env.loki().arg("--info").assert().success();
    let info = stdout(&out);
    assert!(
        info.contains("config_source                 none"),
        "{info}"
    );
}

#[test]
fn loki_overrides_apply_without_a_config_file() {
    let env = TestEnv::bare();
    env.loki()
        .env("OPENAI_API_KEY", "sk-env")
        .env("OPENAI_API_BASE", env.server.base_url())
        .env("LOKI_MODEL", "openai:gpt-4o")
        .env("LOKI_STREAM", "false")
        .env("LOKI_TEMPERATURE", "0.7")
        .arg("hi")
        .assert()
        .success();
    let body = env.server.last_request().json();
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(body["temperature"], serde_json::json!(0.7));
    assert!(body.get("stream").is_none());
}
