//! Native provider clients against the fake server speaking their wire formats.

use serde_json::json;

use crate::common::fake_llm::{BodyMode, Frame, Reply, anthropic, bedrock, cohere, gemini, openai};
use crate::common::pty::Pty;
use crate::common::{TestEnv, stderr, stdout};

fn claude_env(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write_config(&format!(
        "model: claude:claude-sonnet-4-5\n{extra}clients:\n  - type: claude\n    api_base: {}\n    api_key: sk-ant-test\n    models:\n      - name: claude-sonnet-4-5\n        supports_function_calling: true\n        max_output_tokens: 1024\n    extra:\n      retry_base_delay_ms: 10\n",
        env.server.base_url()
    ));
    env
}

#[test]
fn claude_streams_with_its_own_headers_and_body() {
    let env = claude_env("");
    env.server
        .push(anthropic::text_stream(&["Hello", ", Ada."]));
    let out = env
        .loki()
        .args(["--prompt", "Be brief.", "hi"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "Hello, Ada.\n");
    let request = env.server.last_request();
    assert_eq!(request.path_only(), "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert!(request.header("authorization").is_none());
    let body = request.json();
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["max_tokens"], 1024);
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"][0]["text"], "Be brief.");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}])
    );
}

#[test]
fn claude_tool_use_round_trips() {
    let env = claude_env("enabled_tools: fs_read\n");
    env.write("a.txt", "alpha");
    env.server.push(anthropic::tool_use_stream(&[(
        "toolu_01",
        "fs_read",
        r#"{"path":"a.txt"}"#,
    )]));
    env.server.push(anthropic::text_stream(&["It says alpha."]));
    let out = env.loki().arg("what is in a.txt?").assert().success();
    assert_eq!(stdout(&out), "Let me check.\nIt says alpha.\n");
    let first = env.server.requests()[0].json();
    assert_eq!(first["tools"][0]["name"], "fs_read");
    assert!(first["tools"][0]["input_schema"]["properties"]["path"].is_object());
    let messages = env.server.last_request().json()["messages"].clone();
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_01", "name": "fs_read", "input": {"path": "a.txt"}}
        ]})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "     1\talpha\n", "cache_control": {"type": "ephemeral"}}
        ]})
    );
}

#[test]
fn claude_errors_are_one_line_and_keep_the_partial_answer() {
    let env = claude_env("");
    env.server.push(anthropic::error_mid_stream("Partial answ"));
    let out = env.loki().arg("hi").assert().code(1);
    assert_eq!(stdout(&out), "Partial answ\n");
    assert!(
        stderr(&out).contains("overloaded_error: Overloaded"),
        "{}",
        stderr(&out)
    );

    env.server
        .push(anthropic::error(529, "overloaded_error", "Overloaded"));
    env.server.push(anthropic::text_stream(&["Recovered."]));
    let out = env.loki().arg("again").assert().success();
    assert_eq!(stdout(&out), "Recovered.\n");

    env.server.set_default(anthropic::error(
        401,
        "authentication_error",
        "invalid x-api-key",
    ));
    let out = env.loki().arg("x").assert().code(1);
    let err = stderr(&out);
    assert!(
        err.contains("401") && err.contains("invalid x-api-key"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

fn gemini_env(extra: &str, model_extra: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write_config(&format!(
        "model: gemini:gemini-2.5-flash\n{extra}clients:\n  - type: gemini\n    api_base: {}/v1beta\n    api_key: AIza-test\n    models:\n      - name: gemini-2.5-flash\n        supports_function_calling: true\n{model_extra}    extra:\n      retry_base_delay_ms: 10\n",
        env.server.root_url()
    ));
    env
}

#[test]
fn gemini_streams_over_sse_with_system_instruction() {
    let env = gemini_env("", "");
    env.server.push(gemini::text_stream(&["Hello", ", Ada."]));
    let out = env
        .loki()
        .args(["--prompt", "Be brief.", "hi"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "Hello, Ada.\n");
    let request = env.server.last_request();
    assert_eq!(
        request.path_only(),
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    );
    assert_eq!(request.query(), Some("alt=sse"));
    assert_eq!(request.header("x-goog-api-key"), Some("AIza-test"));
    assert!(request.header("authorization").is_none());
    let body = request.json();
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "Be brief."}]})
    );
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [{"text": "hi"}]}])
    );
}

#[test]
fn gemini_function_calls_round_trip_with_their_signature() {
    let env = gemini_env("enabled_tools: fs_read\n", "");
    env.write("a.txt", "alpha");
    env.server.push(gemini::function_call_stream(&[(
        "fs_read",
        r#"{"path":"a.txt"}"#,
    )]));
    env.server.push(gemini::text_stream(&["It says alpha."]));
    let out = env.loki().arg("what is in a.txt?").assert().success();
    assert!(
        stdout(&out).ends_with("It says alpha.\n"),
        "{}",
        stdout(&out)
    );
    let first = env.server.requests()[0].json();
    let decl = &first["tools"][0]["functionDeclarations"];
    assert!(
        decl.as_array()
            .unwrap()
            .iter()
            .any(|d| d["name"] == "fs_read" && d["parameters"]["properties"]["path"].is_object()),
        "{decl}"
    );
    let contents = env.server.last_request().json()["contents"].clone();
    let call = &contents[1]["parts"][0];
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(call["functionCall"]["name"], "fs_read");
    assert_eq!(call["functionCall"]["args"], json!({"path": "a.txt"}));
    assert!(call["thoughtSignature"].is_string(), "{call}");
    let result = &contents[2]["parts"][0]["functionResponse"];
    assert_eq!(contents[2]["role"], "user");
    assert_eq!(result["name"], "fs_read");
    assert!(
        result["response"]["content"]
            .as_str()
            .unwrap()
            .contains("alpha"),
        "{result}"
    );
}

#[test]
fn gemini_errors_blocks_and_whole_responses() {
    let env = gemini_env("", "        no_stream: true\n");
    env.server.push(gemini::text_json("Whole answer."));
    let out = env.loki().arg("hi").assert().success();
    assert_eq!(stdout(&out), "Whole answer.\n");
    assert_eq!(
        env.server.last_request().path_only(),
        "/v1beta/models/gemini-2.5-flash:generateContent"
    );

    let env = gemini_env("", "");
    env.server.set_default(gemini::error(
        400,
        "API key not valid. Please pass a valid API key.",
    ));
    let out = env.loki().arg("x").assert().code(1);
    let err = stderr(&out);
    assert!(
        err.contains("400") && err.contains("API key not valid"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    let env = gemini_env("", "");
    env.server.push(gemini::blocked());
    let out = env.loki().arg("x").assert().code(1);
    assert!(
        stderr(&out).contains("blocked (SAFETY)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn patches_shape_the_request_per_model_client_and_env() {
    let env = gemini_env(
        "",
        "        patch:\n          body:\n            generationConfig:\n              topK: 5\n",
    );
    // A client patch (first matching regex wins) and a model patch, merged in order.
    let config = std::fs::read_to_string(env.config_path()).unwrap().replace(
        "    extra:\n",
        "    patch:\n      chat_completions:\n        'gemini-2\\..*':\n          body:\n            safetySettings:\n              - category: HARM_CATEGORY_HARASSMENT\n                threshold: BLOCK_NONE\n          headers:\n            X-Tenant: t1\n        '.*':\n          body:\n            never: true\n    extra:\n",
    );
    env.write_config(&config);
    env.server.push(gemini::text_stream(&["ok"]));
    env.loki().arg("hi").assert().success();
    let request = env.server.last_request();
    let body = request.json();
    assert_eq!(body["generationConfig"]["topK"], 5);
    assert_eq!(body["safetySettings"][0]["threshold"], "BLOCK_NONE");
    assert!(body.get("never").is_none());
    assert_eq!(request.header("x-tenant"), Some("t1"));

    // LOKI_PATCH_<CLIENT>_CHAT_COMPLETIONS replaces the client's section.
    env.server.push(gemini::text_stream(&["ok"]));
    env.loki()
        .env(
            "LOKI_PATCH_GEMINI_CHAT_COMPLETIONS",
            r#"{".*":{"body":{"fromEnv":1}}}"#,
        )
        .arg("hi")
        .assert()
        .success();
    let body = env.server.last_request().json();
    assert_eq!(body["fromEnv"], 1);
    assert!(body.get("safetySettings").is_none());

    // A broken patch names itself and the variable.
    let out = env
        .loki()
        .env("LOKI_PATCH_GEMINI_CHAT_COMPLETIONS", "{oops")
        .arg("hi")
        .assert()
        .code(1);
    assert!(
        stderr(&out).contains("LOKI_PATCH_GEMINI_CHAT_COMPLETIONS"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn azure_openai_addresses_deployments_with_api_version_and_key_header() {
    let env = TestEnv::new();
    env.write_config(&format!(
        "model: azure:my-gpt\nclients:\n  - type: azure-openai\n    name: azure\n    api_base: {}\n    api_key: az-key\n    models:\n      - name: my-gpt\n",
        env.server.root_url()
    ));
    env.server.push(openai::text_stream(&["Hi from Azure."]));
    let out = env.loki().arg("hi").assert().success();
    assert_eq!(stdout(&out), "Hi from Azure.\n");
    let request = env.server.last_request();
    assert_eq!(
        request.path_only(),
        "/openai/deployments/my-gpt/chat/completions"
    );
    assert_eq!(request.query(), Some("api-version=2024-12-01-preview"));
    assert_eq!(request.header("api-key"), Some("az-key"));
    assert!(request.header("authorization").is_none());

    // Without api_base the client says what to set.
    env.write_config(
        "model: azure:my-gpt\nclients:\n  - type: azure-openai\n    name: azure\n    api_key: k\n",
    );
    let out = env.loki().arg("hi").assert().code(1);
    assert!(stderr(&out).contains("AZURE_API_BASE"), "{}", stderr(&out));
}

fn cohere_env(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write_config(&format!(
        "model: cohere:command-a-03-2025\n{extra}clients:\n  - type: cohere\n    api_base: {}/v2\n    models:\n      - name: command-a-03-2025\n        supports_function_calling: true\n",
        env.server.root_url()
    ));
    env
}

#[test]
fn cohere_streams_text_and_tool_calls_with_billed_usage() {
    let env = cohere_env("enabled_tools: fs_read\n");
    env.write("a.txt", "alpha");
    env.server.push(cohere::tool_call_stream(&[(
        "fs_read_1",
        "fs_read",
        r#"{"path":"a.txt"}"#,
    )]));
    env.server
        .push(cohere::text_stream(&["It says ", "alpha."]));
    let out = env
        .loki()
        .env("COHERE_API_KEY", "co-key")
        .args(["--prompt", "Be brief.", "what is in a.txt?"])
        .assert()
        .success();
    assert!(
        stdout(&out).ends_with("It says alpha.\n"),
        "{}",
        stdout(&out)
    );
    let first = env.server.requests()[0].clone();
    assert_eq!(first.path_only(), "/v2/chat");
    assert_eq!(first.header("authorization"), Some("Bearer co-key"));
    let body = first.json();
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
    assert_eq!(body["tools"][0]["function"]["name"], "fs_read");
    let messages = env.server.last_request().json()["messages"].clone();
    let assistant = &messages[2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["tool_calls"][0]["id"], "fs_read_1");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        r#"{"path":"a.txt"}"#
    );
    assert!(assistant.get("content").is_none(), "{assistant}");
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "fs_read_1");

    // Missing key: the conventional variable is named.
    let out = env.loki().arg("hi").assert().code(1);
    assert!(stderr(&out).contains("COHERE_API_KEY"), "{}", stderr(&out));
}

fn bedrock_env(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write_config(&format!(
        "model: bedrock:anthropic.claude-sonnet-4-5-v1:0\n{extra}clients:\n  - type: bedrock\n    api_base: {}\n    region: eu-west-1\n    access_key_id: AKIDTEST\n    secret_access_key: secret\n    models:\n      - name: anthropic.claude-sonnet-4-5-v1:0\n        supports_function_calling: true\n        max_output_tokens: 512\n",
        env.server.root_url()
    ));
    env
}

#[test]
fn bedrock_converse_stream_is_signed_and_decoded() {
    let env = bedrock_env("");
    env.server.push(bedrock::reasoning_then_text(
        "Thinking it over.",
        "Hello from Bedrock.",
    ));
    let out = env
        .loki()
        .args(["--prompt", "Be brief.", "hi"])
        .assert()
        .success();
    assert!(
        stdout(&out).ends_with("Hello from Bedrock.\n"),
        "{}",
        stdout(&out)
    );
    let request = env.server.last_request();
    assert_eq!(
        request.path_only(),
        "/model/anthropic.claude-sonnet-4-5-v1%3A0/converse-stream"
    );
    let auth = request.header("authorization").unwrap();
    assert!(
        auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDTEST/")
            && auth.contains("/eu-west-1/bedrock/aws4_request")
            && auth.contains("SignedHeaders=host;x-amz-date"),
        "{auth}"
    );
    assert!(request.header("x-amz-date").is_some());
    let body = request.json();
    assert_eq!(body["system"], json!([{"text": "Be brief."}]));
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"text": "hi"}]}])
    );
    assert_eq!(body["inferenceConfig"]["maxTokens"], 512);
}

#[test]
fn bedrock_tool_use_and_exceptions() {
    let env = bedrock_env("enabled_tools: fs_read\n");
    env.write("a.txt", "alpha");
    env.server.push(bedrock::tool_use_stream(&[(
        "tooluse_1",
        "fs_read",
        r#"{"path":"a.txt"}"#,
    )]));
    env.server.push(bedrock::text_stream(&["It says alpha."]));
    let out = env.loki().arg("what is in a.txt?").assert().success();
    assert!(
        stdout(&out).ends_with("It says alpha.\n"),
        "{}",
        stdout(&out)
    );
    let first = env.server.requests()[0].json();
    assert_eq!(
        first["toolConfig"]["tools"][0]["toolSpec"]["name"],
        "fs_read"
    );
    assert!(first["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"].is_object());
    let messages = env.server.last_request().json()["messages"].clone();
    assert_eq!(
        messages[1]["content"][1],
        json!({"toolUse": {"toolUseId": "tooluse_1", "name": "fs_read", "input": {"path": "a.txt"}}})
    );
    assert_eq!(
        messages[2]["content"][0]["toolResult"]["toolUseId"],
        "tooluse_1"
    );

    // An exception mid-stream keeps the partial answer and names the exception.
    env.server.push(bedrock::exception_mid_stream(
        "Partial",
        "throttlingException",
        "Too many requests",
    ));
    let out = env.loki().arg("again").assert().code(1);
    assert_eq!(stdout(&out), "Partial\n");
    assert!(
        stderr(&out).contains("throttlingException: Too many requests"),
        "{}",
        stderr(&out)
    );

    // REST errors and missing credentials are one line.
    env.server.set_default(bedrock::error(
        400,
        "The provided model identifier is invalid.",
    ));
    let out = env.loki().arg("x").assert().code(1);
    assert!(
        stderr(&out).contains("model identifier is invalid"),
        "{}",
        stderr(&out)
    );
    env.write_config("model: bedrock:m\nclients:\n  - type: bedrock\n");
    let out = env.loki().arg("x").assert().code(1);
    assert!(
        stderr(&out).contains("AWS_ACCESS_KEY_ID"),
        "{}",
        stderr(&out)
    );
}

fn vertex_env() -> TestEnv {
    let env = TestEnv::new();
    let key = include_str!("../data/test_service_account_key.pem");
    let credentials = json!({
        "type": "service_account",
        "project_id": "proj-1",
        "client_email": "loki@proj-1.iam.gserviceaccount.com",
        "private_key": key,
        "token_uri": format!("{}/token", env.server.root_url()),
    });
    let sa = env.write("sa.json", credentials.to_string());
    env.write_config(&format!(
        "model: vertex:gemini-2.5-flash\nclients:\n  - type: vertexai\n    name: vertex\n    api_base: {}\n    project_id: proj-1\n    location: us-east5\n    adc_file: {}\n    models:\n      - name: gemini-2.5-flash\n      - name: claude-sonnet-4-5@20250929\n        max_output_tokens: 256\n",
        env.server.root_url(),
        sa.display()
    ));
    env
}

#[test]
fn vertex_signs_a_jwt_and_routes_by_publisher() {
    let env = vertex_env();
    env.server.push_for(
        "/token",
        Reply::json(
            200,
            json!({"access_token": "ya29.test", "expires_in": 3599, "token_type": "Bearer"}),
        ),
    );
    env.server.push(gemini::text_stream(&["From Gemini."]));
    env.server.push(anthropic::text_stream(&["From Claude."]));
    let out = env.loki().arg("hi").assert().success();
    assert_eq!(stdout(&out), "From Gemini.\n");
    let requests = env.server.requests();
    let token = &requests[0];
    assert_eq!(token.path_only(), "/token");
    let form = token.body_str();
    assert!(
        form.contains("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer")
            && form.contains("assertion=eyJ"),
        "{form}"
    );
    let chat = &requests[1];
    assert_eq!(
        chat.path_only(),
        "/v1/projects/proj-1/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    );
    assert_eq!(chat.header("authorization"), Some("Bearer ya29.test"));

    // Claude on Vertex: rawPredict with the Messages body, no model field.
    env.server.push_for(
        "/token",
        Reply::json(200, json!({"access_token": "ya29.two", "expires_in": 3599})),
    );
    let out = env
        .loki()
        .args(["-m", "vertex:claude-sonnet-4-5@20250929", "hi"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "From Claude.\n");
    let chat = env.server.last_request();
    assert_eq!(
        chat.path_only(),
        "/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
    );
    let body = chat.json();
    assert_eq!(body["anthropic_version"], "vertex-2023-10-16");
    assert!(body.get("model").is_none());
    assert_eq!(body["max_tokens"], 256);

    // A failing token exchange is one clear line.
    env.server.push_for(
        "/token",
        Reply::json(
            400,
            json!({"error": "invalid_grant", "error_description": "Invalid JWT Signature."}),
        ),
    );
    let out = env.loki().arg("hi").assert().code(1);
    let err = stderr(&out);
    assert!(err.contains("token request failed (HTTP 400)"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn sync_models_writes_a_versioned_override_and_fails_cleanly_offline() {
    let env = TestEnv::new();
    env.write_config(&format!(
        "sync_models_url: {}/models.yaml\nclients:\n  - type: openai-compatible\n    name: deepseek\n    api_key: k\n",
        env.server.root_url()
    ));
    env.server.push_for(
        "/models.yaml",
        Reply::raw(
            200,
            "text/plain",
            "- provider: deepseek\n  models:\n    - name: deepseek-v9\n      max_input_tokens: 1000000\n",
        ),
    );
    let out = env.loki().arg("--sync-models").assert().success();
    let err = stderr(&out);
    assert!(
        err.contains("✓ Fetched '") && err.contains("✓ Updated '"),
        "{err}"
    );
    let file = std::fs::read_to_string(env.config_dir().join("models-override.yaml")).unwrap();
    assert!(
        file.contains(&format!("version: {}", env!("CARGO_PKG_VERSION"))),
        "{file}"
    );
    let out = env.loki().arg("--list-models").assert().success();
    assert_eq!(stdout(&out), "deepseek:deepseek-v9\n");

    // Not a catalogue, or unreachable: an error, and the override is untouched.
    env.server.push_for(
        "/models.yaml",
        Reply::raw(200, "text/html", "<html>nope</html>"),
    );
    let out = env.loki().arg("--sync-models").assert().code(1);
    assert!(
        stderr(&out).contains("not a model catalogue"),
        "{}",
        stderr(&out)
    );
    env.write_config(
        "sync_models_url: http://127.0.0.1:9/models.yaml\nclients:\n  - type: openai-compatible\n    name: deepseek\n    api_key: k\n",
    );
    let out = env.loki().arg("--sync-models").assert().code(1);
    let err = stderr(&out);
    assert!(
        err.contains("cannot fetch") && err.contains("bundled catalogue stays in use"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(env.config_dir().join("models-override.yaml")).unwrap(),
        file
    );
}

fn ndjson(lines: &[serde_json::Value]) -> Reply {
    let base = Reply::raw(200, "application/x-ndjson", Vec::new()).mode(BodyMode::Chunked);
    Reply {
        frames: lines
            .iter()
            .map(|l| Frame::new(format!("{l}\n").into_bytes()))
            .collect(),
        ..base
    }
}

#[test]
fn ollama_native_chat_streams_ndjson_with_tools_and_options() {
    let env = TestEnv::new();
    env.write_config(&format!(
        "model: ollama:qwen3:8b\nenabled_tools: fs_read\ntemperature: 0.2\nclients:\n  - type: ollama\n    api_base: {}\n    models:\n      - name: qwen3:8b\n        supports_function_calling: true\n",
        env.server.root_url()
    ));
    env.write("a.txt", "alpha");
    env.server.push(ndjson(&[
        json!({"model": "qwen3:8b", "message": {"role": "assistant", "content": "", "thinking": "Reading."}, "done": false}),
        json!({"model": "qwen3:8b", "message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "fs_read", "arguments": {"path": "a.txt"}}}]}, "done": false}),
        json!({"model": "qwen3:8b", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 20, "eval_count": 5}),
    ]));
    env.server.push(ndjson(&[
        json!({"message": {"role": "assistant", "content": "It says "}, "done": false}),
        json!({"message": {"role": "assistant", "content": "alpha."}, "done": false}),
        json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 30, "eval_count": 3}),
    ]));
    let out = env.loki().arg("what is in a.txt?").assert().success();
    assert!(
        stdout(&out).ends_with("It says alpha.\n"),
        "{}",
        stdout(&out)
    );
    let first = env.server.requests()[0].clone();
    assert_eq!(first.path_only(), "/api/chat");
    let body = first.json();
    assert_eq!(body["model"], "qwen3:8b");
    assert_eq!(body["stream"], true);
    assert_eq!(body["options"]["temperature"], 0.2);
    assert_eq!(body["tools"][0]["function"]["name"], "fs_read");
    let messages = env.server.last_request().json()["messages"].clone();
    assert_eq!(
        messages[1]["tool_calls"][0],
        json!({"function": {"name": "fs_read", "arguments": {"path": "a.txt"}}})
    );
    assert_eq!(messages[2]["role"], "tool");

    // Ollama's error line (an unknown model) is one clear line.
    env.server.push(Reply::json(
        404,
        json!({"error": "model \"nope\" not found, try pulling it first"}),
    ));
    let out = env
        .loki()
        .args(["-m", "ollama:nope", "hi"])
        .assert()
        .code(1);
    assert!(
        stderr(&out).contains("try pulling it first"),
        "{}",
        stderr(&out)
    );
}

fn llama_env(model_file: &str) -> (TestEnv, std::path::PathBuf) {
    let env = TestEnv::new();
    let gguf = env.write(model_file, "GGUF");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fake-llama-server.py");
    env.write_config(&format!(
        "model: local\nclients:\n  - type: llama-server\n    name: local\n    server_path: {}\n    model_path: {}\n    context_size: 4096\n    gpu_layers: 99\n    server_args: [--threads, '2']\n",
        script.display(),
        gguf.display()
    ));
    let log = env.work_dir().join("llama.log");
    (env, log)
}

#[test]
fn llama_server_is_started_once_reused_and_stopped_on_exit() {
    let (env, log) = llama_env("tiny-model.gguf");
    let log_var = log.display().to_string();
    let mut pty = Pty::spawn(
        &env,
        &[],
        &[("NO_COLOR", "1"), ("FAKE_LLAMA_LOG", &log_var)],
    );
    pty.expect("local:tiny-model)> ");
    pty.send("hello\r");
    pty.expect("Hello from llama (turn 1)");
    pty.expect("local:tiny-model)> ");
    pty.send("again\r");
    pty.expect("Hello from llama (turn 2)");
    pty.expect("local:tiny-model)> ");
    let started = std::fs::read_to_string(&log).unwrap();
    assert_eq!(started.lines().count(), 1, "{started}");
    let line = started.lines().next().unwrap();
    for flag in [
        "\"--ctx-size\", \"4096\"",
        "\"--n-gpu-layers\", \"99\"",
        "\"--threads\", \"2\"",
        "tiny-model.gguf",
    ] {
        assert!(line.contains(flag), "{line}");
    }
    let pid = line.split_whitespace().nth(1).unwrap().to_string();
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
    // The server is gone once loki has exited.
    let alive = || std::path::Path::new(&format!("/proc/{pid}")).exists();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!alive(), "llama-server {pid} still running");
}

#[test]
fn llama_server_that_fails_to_load_reports_its_reason() {
    let (env, log) = llama_env("broken.gguf");
    let out = env
        .loki()
        .env("FAKE_LLAMA_LOG", &log)
        .arg("hi")
        .assert()
        .code(1);
    let err = stderr(&out);
    assert!(
        err.contains("llama-server exited during startup") && err.contains("invalid magic"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn claude_extended_thinking_is_configured_by_patch_and_signed_thinking_returns_with_tools() {
    let env = claude_env("enabled_tools: fs_read\n");
    let cfg = std::fs::read_to_string(env.config_path()).unwrap().replace(
        "        max_output_tokens: 1024\n",
        "        max_output_tokens: 16000\n        patch:\n          body:\n            thinking:\n              type: enabled\n              budget_tokens: 2048\n",
    );
    env.write_config(&cfg);
    env.write("a.txt", "alpha");
    let ev = |v: serde_json::Value| anthropic::event(&v);
    env.server.push(Reply::sse(vec![
        ev(json!({"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}})),
        ev(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}})),
        ev(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "I should read it."}})),
        ev(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAh=="}})),
        ev(json!({"type": "content_block_stop", "index": 0})),
        ev(json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_7", "name": "fs_read", "input": {}}})),
        ev(json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\":\"a.txt\"}"}})),
        ev(json!({"type": "content_block_stop", "index": 1})),
        ev(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}})),
        ev(json!({"type": "message_stop"})),
    ]));
    env.server.push(anthropic::text_stream(&["It says alpha."]));
    let out = env.loki().arg("what is in a.txt?").assert().success();
    assert!(
        stdout(&out).ends_with("It says alpha.\n"),
        "{}",
        stdout(&out)
    );
    let first = env.server.requests()[0].json();
    assert_eq!(
        first["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(first["max_tokens"], 16000);
    let assistant = env.server.last_request().json()["messages"][1].clone();
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "I should read it.", "signature": "EqQBCgIYAh=="})
    );
    assert_eq!(assistant["content"][1]["type"], "tool_use");
}

/// A server that sends tool calls without ids (Gemini, many OpenAI-compatible ones) gets
/// ids made by loki that do not repeat from one turn (or conversation) to the next:
/// editors merge calls that share an id into one card, and histories (Codex, the SDKs)
/// would hold two calls under one id. Within a call the id holds: the assistant's call
/// and the tool result that answers it carry the same one.
#[test]
fn tool_calls_without_ids_get_ids_unique_across_turns() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: fs_read\n{cfg}"));
    env.write("a.txt", "alpha");
    for _ in 0..2 {
        env.server.push(openai::tool_call_stream(&[(
            "",
            "fs_read",
            r#"{"path":"a.txt"}"#,
        )]));
        env.server.push(openai::text_stream(&["It says alpha."]));
        env.loki()
            .args(["-s", "ids", "what is in a.txt?"])
            .assert()
            .success();
    }
    let messages = env.server.last_request().json()["messages"].clone();
    let messages = messages.as_array().expect("messages");
    let calls: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .filter_map(|c| c["id"].as_str())
        .collect();
    let answered: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(calls.len(), 2, "{messages:#?}");
    assert_ne!(calls[0], calls[1], "{messages:#?}");
    assert_eq!(calls, answered, "{messages:#?}");
    assert!(calls.iter().all(|id| !id.is_empty()), "{calls:?}");
}
