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
