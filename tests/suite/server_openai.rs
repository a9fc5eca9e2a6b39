//! The OpenAI surface clients use, beyond a plain chat: `models.retrieve`, and the
//! request fields that shape the answer (`max_tokens`, `stop`, `seed`,
//! `response_format`, `tool_choice`, `n`), carried to each provider in its own terms.

use serde_json::{Value, json};

use super::server::Served;
use crate::common::TestEnv;
use crate::common::fake_llm::{anthropic, openai};

const OPEN: &str = "api:\n  auth:\n    mode: Disabled";

fn weather_tool() -> Value {
    json!([{"type": "function", "function": {"name": "weather", "description": "Weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])
}

#[test]
fn a_model_is_retrieved_by_id_and_an_unknown_one_is_a_404_in_openai_s_shape() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    let listed = served.get("/v1/models").json();
    let first = listed["data"][0]["id"].as_str().unwrap().to_string();
    let one = served.get(&format!("/v1/models/{first}"));
    assert_eq!(one.status, 200, "{}", one.body);
    assert_eq!(one.json()["id"], first.as_str());
    assert_eq!(one.json()["object"], "model");
    let missing = served.get("/v1/models/nobody:nothing");
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"]["code"], "model_not_found");
}

#[test]
fn answer_controls_reach_an_openai_compatible_provider_as_sent() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    env.server
        .push(openai::text_stream(&["{\"city\":\"Oslo\"}"]));
    let answer = served.post(
        "/v1/chat/completions",
        json!({
            "model": "fake:gpt-4o-mini",
            "messages": [{"role": "user", "content": "where?"}],
            "max_completion_tokens": 64,
            "stop": ["END"],
            "seed": 7,
            "response_format": {"type": "json_schema", "json_schema": {
                "name": "place", "strict": true,
                "schema": {"type": "object", "properties": {"city": {"type": "string"}}}}},
            "tools": weather_tool(),
            "tool_choice": {"type": "function", "function": {"name": "weather"}},
        }),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let sent = env.server.requests()[0].json();
    assert_eq!(sent["max_tokens"], 64, "{sent}");
    assert_eq!(sent["stop"], json!(["END"]));
    assert_eq!(sent["seed"], 7);
    assert_eq!(sent["response_format"]["type"], "json_schema");
    assert_eq!(sent["response_format"]["json_schema"]["name"], "place");
    assert_eq!(sent["response_format"]["json_schema"]["strict"], true);
    assert_eq!(sent["tool_choice"]["function"]["name"], "weather");
    // `n` other than 1 is refused, naming it; a malformed `stop` too.
    for (field, value) in [("n", json!(2)), ("stop", json!(3))] {
        let mut body = json!({"model": "fake:gpt-4o-mini",
            "messages": [{"role": "user", "content": "hi"}]});
        body[field] = value;
        let refused = served.post("/v1/chat/completions", body);
        assert_eq!(refused.status, 400, "{}", refused.body);
        let message = refused.json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(message.contains(&format!("`{field}`")), "{message}");
    }
    assert_eq!(env.server.requests().len(), 1, "refusals reach no model");
}

#[test]
fn answer_controls_reach_claude_in_its_own_terms() {
    let env = TestEnv::new();
    env.write_config(&format!(
        "model: claude:claude-sonnet-4-5\nclients:\n  - type: claude\n    api_base: {}\n    api_key: sk-ant-test\n    models:\n      - name: claude-sonnet-4-5\n        supports_function_calling: true\n        max_output_tokens: 1024\n",
        env.server.base_url()
    ));
    let served = Served::start(&env, OPEN);
    env.server.push(anthropic::text_stream(&["{}"]));
    let answer = served.post(
        "/v1/chat/completions",
        json!({
            "model": "claude:claude-sonnet-4-5",
            "messages": [{"role": "user", "content": "json please"}],
            "stop": "STOP",
            "response_format": {"type": "json_object"},
            "tools": weather_tool(),
            "tool_choice": "required",
        }),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let sent = env.server.requests()[0].json();
    assert_eq!(sent["stop_sequences"], json!(["STOP"]), "{sent}");
    assert_eq!(sent["tool_choice"], json!({"type": "any"}));
    let system = sent["system"].to_string();
    assert!(system.contains("JSON object"), "{system}");
}

/// Runs `tests/data/openai_client.py` against `served`: what the SDK returned.
fn python_sdk(served: &Served, scenario: &str) -> Value {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openai_client.py");
    let out = std::process::Command::new("timeout")
        .arg("120")
        .arg("python3")
        .arg(script)
        .arg(format!("http://{}/v1", served.addr))
        .arg(scenario)
        .output()
        .expect("python3 runs (the OpenAI SDK is installed by .ci/run)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn the_official_python_sdk_retrieves_models_completes_legacy_prompts_and_shapes_answers() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    env.server.push(openai::text_stream(&["hi ", "there"]));
    env.server.push(openai::text_stream(&["one ", "two"]));
    env.server.push(openai::text_stream(&["{\"ok\":true}"]));
    let got = python_sdk(&served, "surface");
    assert_eq!(got["retrieved"], "fake:gpt-4o-mini", "{got}");
    assert_eq!(got["missing"], 404, "{got}");
    assert_eq!(got["completion"], "hi there", "{got}");
    assert_eq!(got["completion_object"], "text_completion", "{got}");
    assert_eq!(got["completion_stream"], "one two", "{got}");
    assert_eq!(got["chat"], "{\"ok\":true}", "{got}");
    assert!(
        got["n"].as_str().unwrap_or_default().contains("`n`"),
        "{got}"
    );
    let sent = env.server.requests();
    assert_eq!(sent.len(), 3, "n=2 reaches no model");
    assert_eq!(sent[0].json()["messages"][0]["content"], "Say hi");
    assert_eq!(sent[0].json()["max_tokens"], 20);
    let chat = sent[2].json();
    assert_eq!(chat["response_format"]["type"], "json_object", "{chat}");
    assert_eq!(chat["stop"], json!(["END"]));
    assert_eq!(chat["seed"], 3);
}

#[test]
fn the_responses_api_answers_continues_calls_functions_and_streams_for_the_python_sdk() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    env.server.push(openai::text_stream(&["hi"]));
    env.server.push(openai::text_stream(&["hi again"]));
    env.server.push(openai::tool_call_stream(&[(
        "call_w",
        "weather",
        r#"{"city":"Oslo"}"#,
    )]));
    env.server.push(openai::text_stream(&["it is sunny"]));
    env.server.push(openai::text_stream(&["str", "eam"]));
    let got = python_sdk(&served, "responses");
    assert_eq!(got["first"], "hi", "{got}");
    assert!(
        got["first_id"].as_str().unwrap().starts_with("resp_"),
        "{got}"
    );
    assert_eq!(got["second"], "hi again", "{got}");
    assert_eq!(got["call"]["name"], "weather", "{got}");
    assert_eq!(got["call"]["arguments"], r#"{"city":"Oslo"}"#, "{got}");
    assert_eq!(got["answered"], "it is sunny", "{got}");
    assert_eq!(got["streamed"], "stream", "{got}");
    assert_eq!(got["streamed_final"], "stream", "{got}");
    let kinds: Vec<&str> = got["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(kinds.first(), Some(&"response.created"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"response.completed"), "{kinds:?}");
    assert_eq!(got["unknown_previous"], 404, "{got}");
    let sent = env.server.requests();
    assert_eq!(sent.len(), 5);
    // The instructions are the system message; the second call carries the first exchange.
    let first = sent[0].json()["messages"].to_string();
    assert!(first.contains("Be brief."), "{first}");
    let second = sent[1].json()["messages"].to_string();
    assert!(
        second.contains("Say hi") && second.contains("\"hi\"") && second.contains("And again?"),
        "{second}"
    );
    // The function's output goes back as a tool result after the model's call.
    let fourth = sent[3].json();
    let messages = fourth["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "tool", "{fourth}");
    assert_eq!(last["tool_call_id"], "call_w");
    assert!(last["content"].to_string().contains("sunny"));
    assert_eq!(
        messages[messages.len() - 2]["tool_calls"][0]["id"],
        "call_w",
        "{fourth}"
    );
}

#[test]
fn a_knowledge_base_is_rebuilt_over_http_and_metrics_count_routes_and_mcp_servers() {
    let env = TestEnv::bare();
    env.write_config(&format!(
        "model: fake:gpt-4o-mini\nrag_embedding_model: fake:emb\nclients:\n  - type: openai-compatible\n    name: fake\n    api_base: {}\n    api_key: test-key\n    models:\n      - name: gpt-4o-mini\n      - name: emb\n        type: embedding\n",
        env.server.base_url()
    ));
    crate::common::fake_llm::embeddings::install(&env.server);
    env.write("docs/a.md", "# A\n\nLlamas live in the Andes.\n");
    env.loki()
        .args(["--rag", "kb", "--rag-docs", "docs"])
        .assert()
        .success();
    env.write("docs/b.md", "# B\n\nAlpacas are smaller than llamas.\n");
    let served = Served::start(&env, OPEN);
    let rebuilt = served.post("/v1/rags/kb/rebuild", json!({}));
    assert_eq!(rebuilt.status, 200, "{}", rebuilt.body);
    assert_eq!(rebuilt.json()["files"], 2, "{}", rebuilt.body);
    assert!(
        rebuilt.json()["added"].as_u64().unwrap() >= 1,
        "{}",
        rebuilt.body
    );
    assert_eq!(served.post("/v1/rags/nope/rebuild", json!({})).status, 404);
    for id in ["a", "b"] {
        assert_eq!(served.get(&format!("/v1/sessions/{id}")).status, 404);
    }
    let metrics = served.get("/metrics").body;
    for line in [
        "loki_route_requests_total{route=\"/v1/rags/{name}/rebuild\",status=\"2xx\"} 1",
        "loki_route_requests_total{route=\"/v1/sessions/{id}\",status=\"4xx\"} 2",
        "loki_mcp_servers_started_total 0",
        "loki_mcp_servers_reused_total 0",
    ] {
        assert!(metrics.contains(line), "{line}\n{metrics}");
    }
}

#[test]
fn instructions_hold_for_one_response_and_are_not_carried_by_previous_response_id() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    env.server.push(openai::text_stream(&["hi"]));
    env.server.push(openai::text_stream(&["hi again"]));
    let first = served.post(
        "/v1/responses",
        json!({"model": "fake:gpt-4o-mini", "input": "Say hi",
               "instructions": "Answer in French."}),
    );
    assert_eq!(first.status, 200, "{}", first.body);
    let second = served.post(
        "/v1/responses",
        json!({"model": "fake:gpt-4o-mini", "input": "And again?",
               "previous_response_id": first.json()["id"]}),
    );
    assert_eq!(second.status, 200, "{}", second.body);
    let sent = env.server.requests();
    assert!(
        sent[0].json()["messages"]
            .to_string()
            .contains("Answer in French.")
    );
    let continued = sent[1].json()["messages"].to_string();
    assert!(continued.contains("Say hi"), "{continued}");
    assert!(!continued.contains("Answer in French."), "{continued}");
}

#[test]
fn codex_style_tools_are_flattened_built_ins_dropped_with_warnings_and_reasoning_answered() {
    let env = TestEnv::new();
    let served = Served::start(&env, OPEN);
    let tools = json!([
        {"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
        {"type": "namespace", "name": "multi_agent_v1", "description": "Agents",
         "tools": [{"type": "function", "name": "spawn_agent", "description": "Spawn one",
                    "parameters": {"type": "object"}}]},
        {"type": "web_search", "external_web_access": false}]);
    let call = json!({"tool_calls": [{"index": 0, "id": "call_s", "type": "function",
        "function": {"name": "multi_agent_v1__spawn_agent", "arguments": "{}"}}]});
    let thinking = json!({"reasoning_content": "Delegate."});
    for stream in [false, true] {
        env.server.push(openai::stream_from_deltas(
            &[thinking.clone(), call.clone()],
            "tool_calls",
            5,
            2,
        ));
        let reply = served.post(
            "/v1/responses",
            json!({"model": "fake:gpt-4o-mini", "input": "Spawn a helper", "tools": tools,
                   "stream": stream}),
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        let response = if stream {
            let last = reply
                .body
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap_or_default()
                .to_string();
            let event: Value = serde_json::from_str(&last).unwrap();
            assert_eq!(event["type"], "response.completed", "{}", reply.body);
            assert!(
                reply.body.contains("response.reasoning_text.delta"),
                "{}",
                reply.body
            );
            event["response"].clone()
        } else {
            reply.json()
        };
        let output = &response["output"];
        assert_eq!(output[0]["type"], "reasoning", "{response}");
        assert_eq!(output[0]["content"][0]["text"], "Delegate.", "{response}");
        assert_eq!(output[1]["type"], "function_call", "{response}");
        assert_eq!(output[1]["name"], "spawn_agent", "{response}");
        assert_eq!(output[1]["namespace"], "multi_agent_v1", "{response}");
        let warnings = response["warnings"].to_string();
        assert!(warnings.contains("web_search"), "{response}");
    }
    let sent = env.server.requests()[0].json();
    let names: Vec<&Value> = sent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["function"]["name"])
        .collect();
    assert_eq!(
        names,
        ["exec_command", "multi_agent_v1__spawn_agent"],
        "{sent}"
    );
    // The client sends the reasoning and the namespaced call back: both are taken.
    env.server.push(openai::text_stream(&["spawned"]));
    let reply = served.post(
        "/v1/responses",
        json!({"model": "fake:gpt-4o-mini", "tools": tools, "input": [
            {"type": "message", "role": "user", "content": "Spawn a helper"},
            {"type": "reasoning", "summary": [],
             "content": [{"type": "reasoning_text", "text": "Delegate."}]},
            {"type": "function_call", "namespace": "multi_agent_v1", "name": "spawn_agent",
             "call_id": "call_s", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_s", "output": "agent-1"}]}),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let sent = env.server.last_request().json();
    let messages = sent["messages"].to_string();
    assert!(
        messages.contains("multi_agent_v1__spawn_agent"),
        "{messages}"
    );
    assert!(messages.contains("agent-1"), "{messages}");
}

#[test]
fn embeddings_answer_base64_when_asked_as_the_sdks_do_by_default() {
    let env = TestEnv::bare();
    env.write_config(&format!(
        "model: fake:gpt-4o-mini\nclients:\n  - type: openai-compatible\n    name: fake\n    api_base: {}\n    api_key: test-key\n    models:\n      - name: gpt-4o-mini\n      - name: emb\n        type: embedding\n",
        env.server.base_url()
    ));
    crate::common::fake_llm::embeddings::install(&env.server);
    let served = Served::start(&env, OPEN);
    let want: Vec<f64> = crate::common::fake_llm::embeddings::vector_for("llamas live high")
        .into_iter()
        .map(f64::from)
        .collect();
    let got = python_sdk(&served, "embeddings");
    assert_eq!(got["default"], json!(want), "{got}");
    assert_eq!(got["float"], json!(want), "{got}");
    let odd = served.post(
        "/v1/embeddings",
        json!({"model": "fake:emb", "input": "x", "encoding_format": "hex"}),
    );
    assert_eq!(odd.status, 400, "{}", odd.body);
}
